//! A renderer that draws the simulation straight from its GPU buffers. The application opens
//! its own wgpu device, as a game's renderer does, and runs the simulation on it; every frame
//! its own render pass reads the smoke's density buffer in a fragment shader. Nothing is copied
//! back to the CPU to draw it.
//!
//! ```sh
//! cargo run --release -p swirly --features wgpu --example wgpu_draw [-- frames]
//! ```
//!
//! Runs 240 frames by default and writes the last one to `out/examples/wgpu_draw.png`. It then
//! reads the density back with `Simulation::field` and checks that every pixel it drew is the
//! colour that density gives, so it fails if the buffer it drew from was not the current one.
//!
//! Then it has the engine draw its own picture (the scene's look, by the render kernels) and
//! leave it on the device (`Simulation::render_on_device`), copies that buffer's pixels into
//! its own texture with a second pass, and checks them against `Simulation::render`'s bytes.

use std::process::ExitCode;
use swirly::swirly_wgpu::{WgpuBackend, wgpu};
use swirly::{FieldId, Scene, Simulation};

/// The colour of no smoke and of density 1 (and above), linear RGBA.
const BACKGROUND: [f32; 4] = [0.04, 0.05, 0.08, 1.0];
const SMOKE: [f32; 4] = [0.92, 0.93, 0.90, 1.0];

/// The second pass: each pixel the engine's picture word of its place (RGBA8, top row first),
/// written as it is to an `Rgba8Unorm` target.
const COPY_SHADER: &str = r"
@group(0) @binding(0) var<storage, read> picture: array<u32>;
@group(0) @binding(1) var<uniform> width: vec4<u32>;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4<f32>(f32((i << 1u) & 2u) * 2.0 - 1.0, f32(i & 2u) * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs(@builtin(position) pixel: vec4<f32>) -> @location(0) vec4<f32> {
    return unpack4x8unorm(picture[u32(pixel.y) * width.x + u32(pixel.x)]);
}
";

/// The application's shader: one triangle over the target, each pixel the density of its cell.
const SHADER: &str = r"
struct View { nx: u32, ny: u32, background: vec4<f32>, smoke: vec4<f32> }
@group(0) @binding(0) var<storage, read> density: array<f32>;
@group(0) @binding(1) var<uniform> view: View;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4<f32>(f32((i << 1u) & 2u) * 2.0 - 1.0, f32(i & 2u) * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs(@builtin(position) pixel: vec4<f32>) -> @location(0) vec4<f32> {
    // Pixel rows run down the picture; the field's row 0 is the bottom of the box.
    let row = view.ny - 1u - u32(pixel.y);
    let d = clamp(density[row * view.nx + u32(pixel.x)], 0.0, 1.0);
    return mix(view.background, view.smoke, d);
}
";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let frames: u32 = match std::env::args().nth(1) {
        Some(text) => text.parse().map_err(|e| format!("frames: `{text}` is not a count ({e})"))?,
        None => 240,
    };
    if frames == 0 {
        return Err("frames: 0 (run at least one)".into());
    }

    // The application's device, opened its own way.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))?;
    let (device, queue) = pollster::block_on(
        adapter.request_device(&wgpu::DeviceDescriptor { label: Some("application"), ..Default::default() }),
    )?;

    // The simulation on that device.
    let mut sim = Simulation::new(Scene::preset("smoke")?, WgpuBackend::from_device(device.clone(), queue.clone())?)?;
    let (nx, ny) = (sim.frame().nx, sim.frame().ny);
    let dt = sim.scene().params.dt;

    // The application's own resources: a picture to draw into and what its shader reads.
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let picture = texture(&device, nx, ny, format);
    let target = picture.create_view(&wgpu::TextureViewDescriptor::default());
    let mut uniform = Vec::with_capacity(48);
    for word in [nx, ny, 0, 0] {
        uniform.extend_from_slice(&word.to_le_bytes());
    }
    for c in BACKGROUND.iter().chain(&SMOKE) {
        uniform.extend_from_slice(&c.to_le_bytes());
    }
    let view = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("view"),
        size: uniform.len() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&view, 0, &uniform);
    let density_pipeline = pipeline(&device, SHADER, format);

    for _ in 0..frames {
        sim.step(dt)?;
        // Steps swap the fields between buffers: ask for the density's buffer every frame.
        let density = sim.backend().field_buffer(FieldId::Density)?;
        let bindings = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("draw density"),
            layout: &density_pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: density.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: view.as_entire_binding() },
            ],
        });
        // The same queue as the simulation's: this frame's pass sees this frame's step.
        draw(&device, &queue, &density_pipeline, &bindings, &target);
    }

    // Read the last picture back (a real renderer would present it instead) and check it.
    let pixels = read_texture(&device, &queue, &picture)?;
    std::fs::create_dir_all("out/examples")?;
    image::save_buffer("out/examples/wgpu_draw.png", &pixels, nx, ny, image::ExtendedColorType::Rgba8)?;

    // Every pixel against the colour of the density `field` reads back (one unit of rounding).
    let density = sim.field(FieldId::Density)?;
    let mut wrong = 0;
    for (i, got) in pixels.chunks_exact(4).enumerate() {
        let (x, y) = (i % nx as usize, i / nx as usize);
        let d = density[(ny as usize - 1 - y) * nx as usize + x].clamp(0.0, 1.0);
        let want = (0..4).map(|c| (255.0 * (BACKGROUND[c] + d * (SMOKE[c] - BACKGROUND[c]))).round() as i32);
        if want.zip(got).any(|(w, &g)| (w - i32::from(g)).abs() > 1) {
            wrong += 1;
        }
    }
    if wrong > 0 {
        return Err(format!("{wrong} of {} pixels are not the colour of the density read back", nx * ny).into());
    }
    if density.iter().all(|&d| d == 0.0) {
        return Err("the emitter put no density in".into());
    }

    // The engine's own picture, drawn by its render kernels and left on the device.
    let (id, (w, h)) = sim.render_on_device()?.ok_or("the wgpu backend draws the picture itself")?;
    let copy = pipeline(&device, COPY_SHADER, format);
    let width = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("width"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&width, 0, &[w.to_le_bytes(), [0; 4], [0; 4], [0; 4]].concat());
    let engine_picture = texture(&device, w, h, format);
    let bindings = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("copy the engine's picture"),
        layout: &copy.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: sim.backend().field_buffer(id)?.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: width.as_entire_binding() },
        ],
    });
    draw(&device, &queue, &copy, &bindings, &engine_picture.create_view(&Default::default()));
    let drawn = read_texture(&device, &queue, &engine_picture)?;
    if drawn != sim.render()?.rgba {
        return Err("the engine's picture drawn from its buffer is not Simulation::render's".into());
    }
    if drawn.chunks_exact(4).all(|p| p[..3] == [0, 0, 0]) {
        return Err("the engine's picture is blank".into());
    }
    image::save_buffer("out/examples/wgpu_draw_look.png", &drawn, w, h, image::ExtendedColorType::Rgba8)?;
    println!(
        "{frames} frames of {nx}x{ny} drawn from the simulation's buffers on {}; every pixel of the last matches the density read back; the engine's {w}x{h} picture drawn from its buffer equals Simulation::render's; wrote out/examples/wgpu_draw.png and wgpu_draw_look.png",
        adapter.get_info().name
    );
    Ok(())
}

/// A texture to draw into and read back.
fn texture(device: &wgpu::Device, width: u32, height: u32, format: wgpu::TextureFormat) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("picture"),
        size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

/// A pipeline of one triangle over the target, from a shader's `vs` and `fs`.
fn pipeline(device: &wgpu::Device, shader: &str, format: wgpu::TextureFormat) -> wgpu::RenderPipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(shader.into()),
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// One pass of `pipeline` with `bindings` into `target`, submitted.
fn draw(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pipeline: &wgpu::RenderPipeline,
    bindings: &wgpu::BindGroup,
    target: &wgpu::TextureView,
) {
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("draw"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bindings, &[]);
        pass.draw(0..3, 0..1);
    }
    queue.submit([encoder.finish()]);
}

/// A texture's RGBA8 pixels, rows from the top.
fn read_texture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    picture: &wgpu::Texture,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let (w, h) = (picture.width(), picture.height());
    let row_bytes = 4 * w;
    let padded = row_bytes.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("picture read-back"),
        size: u64::from(padded * h),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read back") });
    encoder.copy_texture_to_buffer(
        picture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(padded), rows_per_image: None },
        },
        picture.size(),
    );
    queue.submit([encoder.finish()]);
    readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let mut pixels = Vec::with_capacity((row_bytes * h) as usize);
    for row in readback.slice(..).get_mapped_range()?.chunks_exact(padded as usize) {
        pixels.extend_from_slice(&row[..row_bytes as usize]);
    }
    Ok(pixels)
}
