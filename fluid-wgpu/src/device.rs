//! The device side of the wgpu backend: the process's instance, adapters and limits, the
//! shaders' workgroup shape and overrides, and the helpers that wait for the device.

use std::sync::OnceLock;
use std::time::Duration;

use shaders::HalfStorage;
use swirly_ir::wait;
use swirly_ir::{Error, Result};
use swirly_shaders as shaders;

pub(crate) const NAME: &str = "wgpu";

pub(crate) fn backend_err(message: impl Into<String>) -> Error {
    Error::Backend { backend: NAME, message: message.into() }
}

/// One adapter as `fluid info` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterSummary {
    /// Adapter name, e.g. `NVIDIA H100 80GB HBM3` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// Graphics API: Vulkan, Metal, Dx12, …
    pub backend: String,
    /// Driver name and version.
    pub driver: String,
    /// Discrete, integrated, virtual, CPU.
    pub device_type: String,
    /// Whether it offers timestamp queries (per-kernel timings).
    pub timestamps: bool,
    /// How fields in f16 storage run on it: natively with `SHADER_F16`, else packed two halves
    /// a word.
    pub half: HalfStorage,
}

/// The 2D workgroup shape: `FLUID_WGPU_WORKGROUP=XxY` (e.g. `32x8`), default 16×16.
pub(crate) fn workgroup_from_env() -> Result<(u32, u32)> {
    let Ok(text) = std::env::var("FLUID_WGPU_WORKGROUP") else {
        return Ok(shaders::WORKGROUP);
    };
    let parsed =
        text.split_once('x').and_then(|(x, y)| Some((x.trim().parse::<u32>().ok()?, y.trim().parse::<u32>().ok()?)));
    match parsed {
        Some((x, y)) if x >= 1 && y >= 1 && x * y <= 256 => Ok((x, y)),
        _ => Err(Error::invalid("FLUID_WGPU_WORKGROUP", text, "expected XxY with X, Y >= 1 and X*Y <= 256, e.g. 32x8")),
    }
}

/// Shader files that replace the built-in ones: `FLUID_WGPU_SHADER_DIR=DIR` makes
/// `DIR/<stem>.wgsl`, where it exists, the text of that kernel's shader file, and
/// `DIR/shared/<name>.wgsl` that of a shared snippet (`common.wgsl` included), so a shader can
/// be changed and measured without rebuilding. Unset: none.
pub(crate) fn shader_overrides() -> Result<shaders::Overrides> {
    let Ok(dir) = std::env::var("FLUID_WGPU_SHADER_DIR") else {
        return Ok(shaders::Overrides::default());
    };
    let read = |path: std::path::PathBuf| match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::invalid("FLUID_WGPU_SHADER_DIR", path.display(), e.to_string())),
    };
    let dir = std::path::Path::new(&dir);
    let mut out = shaders::Overrides::default();
    for (stem, _) in shaders::FILES {
        if let Some(text) = read(dir.join(format!("{stem}.wgsl")))? {
            out.files.insert((*stem).to_string(), text);
        }
    }
    for name in shaders::snippet_names() {
        if let Some(text) = read(dir.join("shared").join(format!("{name}.wgsl")))? {
            out.snippets.insert(name.to_string(), text);
        }
    }
    if out.is_empty() {
        return Err(Error::invalid(
            "FLUID_WGPU_SHADER_DIR",
            dir.display(),
            "holds no <kernel>.wgsl file of a known kernel and no shared/<snippet>.wgsl of a known snippet",
        ));
    }
    Ok(out)
}

/// The process's one wgpu instance, shared by every backend. Creating and dropping an instance
/// per backend loads and unloads the Vulkan driver each time, and NVIDIA's Linux driver leaks
/// static TLS on every load: after a few dozen backends in one process (the conformance suite
/// creates hundreds) `dlopen` failed with "cannot allocate memory in static TLS block" and the
/// process crashed. One instance for the process keeps the driver loaded.
pub(crate) fn instance() -> wgpu::Instance {
    static INSTANCE: OnceLock<wgpu::Instance> = OnceLock::new();
    INSTANCE
        .get_or_init(|| {
            wgpu::Instance::new(wgpu::InstanceDescriptor {
                backends: wgpu::Backends::PRIMARY,
                ..wgpu::InstanceDescriptor::new_without_display_handle()
            })
        })
        .clone()
}

pub(crate) fn summary(info: &wgpu::AdapterInfo, features: wgpu::Features) -> AdapterSummary {
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
        device_type: format!("{:?}", info.device_type),
        timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
        half: if features.contains(wgpu::Features::SHADER_F16) { HalfStorage::Native } else { HalfStorage::Packed },
    }
}

/// Every adapter wgpu sees through its primary APIs (Vulkan, Metal, DX12).
pub fn adapters() -> Vec<AdapterSummary> {
    let instance = instance();
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY))
        .iter()
        .map(|a| summary(&a.get_info(), a.features()))
        .collect()
}

/// The limits this backend opens its own device with: WebGPU's defaults with 8 storage buffers
/// per shader stage.
pub(crate) fn required_limits() -> wgpu::Limits {
    wgpu::Limits { max_storage_buffers_per_shader_stage: 8, ..wgpu::Limits::default() }
}

/// What the kernels need of a device they are given: the compute and binding limits they use
/// (WebGPU's defaults for workgroups), nothing about textures or render passes.
pub(crate) fn needed_limits() -> wgpu::Limits {
    let d = wgpu::Limits::default();
    wgpu::Limits {
        max_bind_groups: 2,
        max_storage_buffers_per_shader_stage: 8,
        max_uniform_buffers_per_shader_stage: 3,
        max_dynamic_uniform_buffers_per_pipeline_layout: 1,
        max_compute_workgroup_storage_size: d.max_compute_workgroup_storage_size,
        max_compute_invocations_per_workgroup: d.max_compute_invocations_per_workgroup,
        max_compute_workgroup_size_x: d.max_compute_workgroup_size_x,
        max_compute_workgroup_size_y: d.max_compute_workgroup_size_y,
        max_compute_workgroup_size_z: 1,
        max_compute_workgroups_per_dimension: d.max_compute_workgroups_per_dimension,
        // `allocate` checks each grid against the device's own buffer and binding sizes.
        max_storage_buffer_binding_size: 16,
        max_buffer_size: 16,
        ..wgpu::Limits::downlevel_webgl2_defaults()
    }
}

pub(crate) fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false })
}

/// Copy `runs` (`(first value, count)` of a field in `src`) into `dst`, packed one after
/// another from its start.
pub(crate) fn copy_runs(
    enc: &mut wgpu::CommandEncoder,
    src: &wgpu::Buffer,
    dst: &wgpu::Buffer,
    runs: &[(usize, usize)],
) {
    let mut at = 0u64;
    for &(start, n) in runs {
        enc.copy_buffer_to_buffer(src, start as u64 * 4, dst, at, n as u64 * 4);
        at += n as u64 * 4;
    }
}

/// `device.poll`, its error as ours.
pub(crate) fn poll(device: &wgpu::Device, how: wgpu::PollType) -> Result<wgpu::PollStatus> {
    device.poll(how).map_err(|e| backend_err(format!("waiting for the GPU failed: {e}")))
}

/// Map a `MAP_READ` buffer, wait for it (polling for up to `spin` first, see
/// [`swirly_ir::wait`]), give its bytes to `read`, unmap. `read` copies out what it needs in
/// one pass: copying the bytes out first and converting them after made whole-field reads
/// several times slower.
pub(crate) fn map_read<T>(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    spin: Duration,
    read: impl FnOnce(&[u8]) -> T,
) -> Result<T> {
    let slice = buffer.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    let mut mapped = None;
    wait::poll_for(spin, || {
        poll(device, wgpu::PollType::Poll)?;
        mapped = rx.try_recv().ok();
        Ok(mapped.is_some())
    })?;
    let mapped = match mapped {
        Some(m) => m,
        None => {
            poll(device, wgpu::PollType::wait_indefinitely())?;
            rx.recv().map_err(|_| backend_err("the map callback never ran"))?
        }
    };
    mapped.map_err(|e| backend_err(format!("cannot read a buffer back: {e}")))?;
    // Unmapped whatever happens: `download_at` uses its buffer again.
    let value = slice.get_mapped_range().map(|view| read(&view));
    buffer.unmap();
    value.map_err(|e| backend_err(format!("cannot read a buffer back: {e}")))
}
