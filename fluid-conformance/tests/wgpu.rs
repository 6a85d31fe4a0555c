//! The conformance suite on the wgpu backend. Without a GPU adapter every test fails (never
//! skips): install a Vulkan driver, e.g. Mesa's lavapipe (`scripts/test.sh` does).

fn backend() -> swirly_wgpu::WgpuBackend {
    swirly_wgpu::WgpuBackend::new().unwrap_or_else(|e| panic!("the wgpu conformance suite needs an adapter: {e}"))
}

swirly_conformance::conformance!(backend());

#[test]
fn two_simulations_on_two_threads_step_as_each_does_alone() {
    swirly_conformance::api::concurrent_equals_alone(backend);
}

/// A device opened the way an application opens its own.
fn application_device(limits: wgpu::Limits) -> (wgpu::Device, wgpu::Queue) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
        .unwrap_or_else(|e| panic!("the wgpu tests need an adapter: {e}"));
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("application"),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("device")
}

fn smoke() -> swirly::Scene {
    swirly_conformance::support::small_preset("smoke")
}

#[test]
fn runs_on_an_application_device_and_hands_out_its_field_buffers() {
    use swirly::{FieldId, Simulation};
    let (device, queue) =
        application_device(wgpu::Limits { max_storage_buffers_per_shader_stage: 8, ..Default::default() });
    // The application's handler stays installed and hears nothing from correct work.
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = std::sync::Arc::clone(&heard);
    device
        .on_uncaptured_error(std::sync::Arc::new(move |e: wgpu::Error| sink.lock().expect("lock").push(e.to_string())));
    let shared = swirly_wgpu::WgpuBackend::from_device(device.clone(), queue.clone()).expect("from_device");
    let mut a = Simulation::new(smoke(), shared).expect("simulation");
    let mut b = Simulation::new(smoke(), backend()).expect("simulation");
    for _ in 0..7 {
        a.step(0.0166667).expect("step");
        b.step(0.0166667).expect("step");
    }
    for field in [FieldId::U, FieldId::V, FieldId::Density, FieldId::Temperature] {
        let (x, y) = (a.field(field).expect("field"), b.field(field).expect("field"));
        assert!(
            x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()),
            "{} differs from the backend's own device",
            field.name()
        );
    }
    // The density buffer, read with the application's own commands, holds what `field` returns.
    let want = a.field(FieldId::Density).expect("density");
    let src = a.backend().field_buffer(FieldId::Density).expect("field buffer");
    let size = 4 * want.len() as u64;
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("application read-back"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    enc.copy_buffer_to_buffer(src, 0, &read, 0, size);
    queue.submit([enc.finish()]);
    read.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    let got: Vec<f32> = bytemuck_free_cast(&read.slice(..).get_mapped_range().expect("mapped"));
    let differ = swirly_conformance::support::bits_differ(&got, &want);
    assert!(got.len() == want.len() && differ == 0, "{differ} of {} values differ from `field`", want.len());
    assert!(want.iter().any(|x| *x != 0.0), "the emitter put no density in");
    assert!(heard.lock().expect("lock").is_empty(), "{:?}", heard.lock());
    // The application's own mistakes still reach its handler, not the backend's.
    let _bad = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("invalid usage"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    assert_eq!(heard.lock().expect("lock").len(), 1, "the application's handler was replaced");
}

fn bytemuck_free_cast(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// A loop that steps faster than the device waits once three steps are in flight, as the
/// Vulkan backend does: when step k returns, step k − 3 has finished. Before each step the
/// application submits a mark (a clear of a small buffer it then maps); after step k, without
/// waiting, the mark before step k − 3 must be done. The grid is one whose step the device
/// takes longer to run than the host to record (1024² on a GPU), so that without the bound the
/// host runs ahead; on lavapipe, whose submissions run one at a time, it never does.
#[test]
fn steps_in_flight_are_bounded() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use swirly::Simulation;
    let (device, queue) = application_device(wgpu::Limits::default());
    let n = if device.adapter_info().device_type == wgpu::DeviceType::Cpu { 64 } else { 1024 };
    let backend = swirly_wgpu::WgpuBackend::from_device(device.clone(), queue.clone()).expect("from_device");
    let ov: Vec<_> = [format!("grid.nx={n}"), format!("grid.ny={n}")]
        .iter()
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
    let scene = swirly::Scene::preset_with("smoke", &ov).expect("scene");
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, backend).expect("simulation");
    swirly::backend::Backend::finish(sim.backend_mut()).expect("finish");
    let mut marks = Vec::new();
    for k in 0..24 {
        let mark = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("mark"),
            size: 4,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        enc.clear_buffer(&mark, 0, None);
        queue.submit([enc.finish()]);
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&done);
        mark.slice(..).map_async(wgpu::MapMode::Read, move |r| flag.store(r.is_ok(), Ordering::SeqCst));
        marks.push((mark, done));
        sim.step(dt).expect("step");
        device.poll(wgpu::PollType::Poll).expect("poll");
        if k >= 3 {
            assert!(marks[k - 3].1.load(Ordering::SeqCst), "after step {k} the mark before step {} is not done", k - 3);
        }
    }
}

#[test]
fn a_device_with_too_few_storage_buffers_is_refused_by_name() {
    let (device, queue) = application_device(wgpu::Limits::downlevel_defaults());
    let e = swirly_wgpu::WgpuBackend::from_device(device, queue).expect_err("4 storage buffers per stage");
    let text = e.to_string();
    assert!(text.contains("max_storage_buffers_per_shader_stage") && text.contains("needs 8"), "{text}");
}

/// `{:?}` of the backend (what an integrator's logs show) names it and its adapter.
#[test]
fn debug_names_the_backend_and_its_adapter() {
    let b = backend();
    let text = format!("{b:?}");
    assert!(text.starts_with("WgpuBackend") && text.contains(&b.adapter().name), "{text}");
}

/// An application's device without `shader-f16` (`application_device` asks for no features):
/// f16 fields are packed two halves a word, and whole presets (scalars written half a word at
/// a time on an odd grid, the fuel, a finer RGBA dye) follow the CPU's f16 run within the
/// tolerance the native form meets. Asking for the native form there is refused.
#[test]
fn packed_f16_on_a_device_without_shader_f16_matches_the_cpu_backend() {
    use swirly_wgpu::{HalfStorage, WgpuBackend};
    let packed = || {
        let (device, queue) = application_device(wgpu::Limits::default());
        assert!(!device.features().contains(wgpu::Features::SHADER_F16));
        let mut b = WgpuBackend::from_device(device, queue).expect("backend");
        assert_eq!(b.half_storage(), HalfStorage::Packed);
        let refused = b.set_half_storage(HalfStorage::Native).expect_err("no shader-f16").to_string();
        assert!(refused.contains("shader-f16"), "{refused}");
        b
    };
    for (preset, extra) in [("smoke", &[][..]), ("fire", &[]), ("paddle", &["grid.dye_factor=2"])] {
        swirly_conformance::half::half_parity(packed, preset, extra);
    }
}
