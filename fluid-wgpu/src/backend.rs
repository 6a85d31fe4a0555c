//! The wgpu implementation of [`fluid_core::Backend`] (feature `backend`, on by default).

use fluid_shaders as shaders;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use fluid_core::backend::{Gather, PendingRead, ReadHandle, ReadPlan, f32s_le, pick};
use fluid_core::schedule::{Access, Op, Params, ShaderEntry};
use fluid_core::uniforms::{REDUCE_MAX_PARTIALS, ReduceParams, SplatGpu};
use fluid_core::wait;
use fluid_core::{Backend, Error, FieldId, Grid, KernelTiming, Result, Schedule, StepInputs, TimestampTimings};

const NAME: &str = "wgpu";
const RESULT_SLOTS: u64 = 16;
/// Bytes bound for a parameter block: the largest block of `fluid_core::uniforms`.
const PARAMS_BINDING: u64 = fluid_core::uniforms::PARAMS_MAX_BYTES;
/// Step submissions that may be in flight, as many as the Vulkan backend's staging slots: a
/// `run` with this many still on the device waits for the oldest. Without the bound a loop that
/// steps faster than the device queues without end: on the H100, reads asked for in such a loop
/// came back 44 steps late (doc/PERFORMANCE.md, "The examples on the H100").
const MAX_IN_FLIGHT: usize = 3;

fn backend_err(message: impl Into<String>) -> Error {
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
}

/// The 2D workgroup shape: `FLUID_WGPU_WORKGROUP=XxY` (e.g. `32x8`), default 16×16.
fn workgroup_from_env() -> Result<(u32, u32)> {
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
fn shader_overrides() -> Result<shaders::Overrides> {
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
fn instance() -> wgpu::Instance {
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

fn summary(info: &wgpu::AdapterInfo, features: wgpu::Features) -> AdapterSummary {
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
        device_type: format!("{:?}", info.device_type),
        timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
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

struct Pipeline {
    pipeline: wgpu::ComputePipeline,
    group0: wgpu::BindGroupLayout,
    group1: wgpu::BindGroupLayout,
    has_params: bool,
    has_splats: bool,
}

struct Fields {
    grid: Grid,
    buffers: Vec<wgpu::Buffer>,
    map: [usize; FieldId::COUNT],
}

/// Where a run's per-dispatch parameter blocks live in the params buffer (deduplicated).
#[derive(Default)]
struct ParamTable {
    bytes: Vec<u8>,
    offsets: HashMap<Vec<u8>, u32>,
}

impl ParamTable {
    fn offset(&mut self, block: &[u8], align: usize) -> u32 {
        if let Some(o) = self.offsets.get(block) {
            return *o;
        }
        let o = self.bytes.len();
        self.bytes.extend_from_slice(block);
        self.bytes.resize(o + align, 0);
        self.offsets.insert(block.to_vec(), o as u32);
        o as u32
    }
}

/// The wgpu backend.
pub struct WgpuBackend {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: AdapterSummary,
    timestamps: bool,
    /// The device belongs to the application ([`WgpuBackend::from_device`]).
    shared: bool,
    align: usize,
    max_binding: u64,
    pipelines: HashMap<&'static str, Pipeline>,
    workgroup: (u32, u32),
    grid_buf: wgpu::Buffer,
    step_buf: wgpu::Buffer,
    splat_buf: wgpu::Buffer,
    params_buf: wgpu::Buffer,
    partials_buf: wgpu::Buffer,
    results_buf: wgpu::Buffer,
    results_read: wgpu::Buffer,
    /// The read-back buffer of `download_at` reads up to [`Gather::KEPT_BYTES`], made at the
    /// first and kept.
    gather_read: Option<wgpu::Buffer>,
    /// Reads `queue_download_at` and `queue_download` submitted and nobody has taken yet
    /// (dropped ones are freed once mapped).
    reads: Vec<QueuedRead>,
    /// Read-back buffers of [`Gather::KEPT_BYTES`] from finished queued reads.
    spare_reads: Vec<wgpu::Buffer>,
    written_params: Vec<u8>,
    group0: HashMap<&'static str, wgpu::BindGroup>,
    group1: HashMap<(&'static str, Vec<usize>), wgpu::BindGroup>,
    /// Plans of recent runs: what a schedule binds and dispatches from an assignment of fields
    /// to buffers. Dropped whenever a bind group they hold is.
    plans: Vec<Plan>,
    fields: Option<Fields>,
    reduction_slots: usize,
    timing: Option<TimestampTimings>,
    errors: Arc<Mutex<Vec<String>>>,
    /// How long a wait polls the device before it blocks ([`fluid_core::wait`]).
    spin: Duration,
    /// Step submissions not yet seen done, oldest first, each with the flag its
    /// `on_submitted_work_done` callback sets (at most [`MAX_IN_FLIGHT`]).
    in_flight: VecDeque<(wgpu::SubmissionIndex, Arc<AtomicBool>)>,
}

impl std::fmt::Debug for WgpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuBackend").field("adapter", &self.adapter).finish_non_exhaustive()
    }
}

/// A read `queue_download_at` or `queue_download` submitted: its read-back buffer, being
/// mapped, and what turns the copied values into the ones asked for.
struct QueuedRead {
    handle: ReadHandle,
    buffer: wgpu::Buffer,
    /// Set by the map callback.
    mapped: Arc<OnceLock<std::result::Result<(), wgpu::BufferAsyncError>>>,
    plan: ReadPlan,
}

/// Kept-size read-back buffers of finished queued reads waiting for the next ones; more are
/// dropped.
const SPARE_READS: usize = 4;

/// The limits this backend opens its own device with: WebGPU's defaults with 8 storage buffers
/// per shader stage.
fn required_limits() -> wgpu::Limits {
    wgpu::Limits { max_storage_buffers_per_shader_stage: 8, ..wgpu::Limits::default() }
}

/// What the kernels need of a device they are given: the compute and binding limits they use
/// (WebGPU's defaults for workgroups), nothing about textures or render passes.
fn needed_limits() -> wgpu::Limits {
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

fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false })
}

impl WgpuBackend {
    /// The first high-performance adapter, or the one whose name contains the environment
    /// variable `FLUID_WGPU_ADAPTER` (case-insensitive).
    pub fn new() -> Result<WgpuBackend> {
        let wanted = std::env::var("FLUID_WGPU_ADAPTER").ok();
        WgpuBackend::with_adapter(wanted.as_deref())
    }

    /// The adapter whose name contains `name` (case-insensitive), or the first
    /// high-performance one.
    pub fn with_adapter(name: Option<&str>) -> Result<WgpuBackend> {
        let instance = instance();
        let adapter = match name {
            Some(want) => {
                let all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
                let names: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
                all.into_iter().find(|a| a.get_info().name.to_lowercase().contains(&want.to_lowercase())).ok_or_else(
                    || Error::Unsupported {
                        what: format!("a wgpu adapter named like `{want}`"),
                        by: format!(
                            "this machine (adapters: {})",
                            if names.is_empty() { "none".into() } else { names.join(", ") }
                        ),
                    },
                )?
            }
            None => pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            }))
            .map_err(|e| Error::Unsupported {
                what: "the wgpu backend".into(),
                by: format!(
                    "this machine: no GPU adapter found ({e}); install a Vulkan driver, e.g. Mesa's lavapipe: \
                     apt-get install mesa-vulkan-drivers libvulkan1"
                ),
            })?,
        };
        let info = adapter.get_info();
        let features = adapter.features();
        let timestamps = features.contains(wgpu::Features::TIMESTAMP_QUERY);
        let limits = adapter.limits();
        let required_limits = wgpu::Limits {
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_buffer_size: limits.max_buffer_size,
            // Only for shaders from FLUID_WGPU_SHADER_DIR: ours stay within the default 16 KiB.
            max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
            ..required_limits()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("fluid"),
            required_features: if timestamps { wgpu::Features::TIMESTAMP_QUERY } else { wgpu::Features::empty() },
            required_limits,
            ..Default::default()
        }))
        .map_err(|e| backend_err(format!("cannot open {}: {e}", info.name)))?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&errors);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.to_string());
            }
        }));
        let lost = Arc::clone(&errors);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut v) = lost.lock() {
                v.push(format!("device lost ({reason:?}): {message}"));
            }
        });
        WgpuBackend::build(device, queue, errors, false)
    }

    /// Run on a device the application already has, such as a game renderer's: the fields are
    /// then buffers of that device ([`WgpuBackend::field_buffer`]), which its shaders can read
    /// with no copy back to the CPU. The device needs the compute and binding limits the
    /// kernels use: WebGPU's defaults for compute workgroups, 8 storage buffers per shader
    /// stage (an error names any limit that falls short; textures do not matter); per-kernel
    /// timings need it to have been opened with `Features::TIMESTAMP_QUERY`. The application's
    /// error handler and device-lost callback are left alone: this backend catches the
    /// validation errors of its own calls in error scopes and returns them, and other errors
    /// (out of memory outside `allocate`, a lost device) reach the application's handler.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue) -> Result<WgpuBackend> {
        let have = device.limits();
        let mut short = Vec::new();
        needed_limits().check_limits_with_fail_fn(&have, false, |name, need, got| {
            short.push(format!("{name} (needs {need}, the device has {got})"));
        });
        if !short.is_empty() {
            return Err(Error::Unsupported {
                what: format!("the wgpu backend on this device ({})", device.adapter_info().name),
                by: format!("its limits: {}", short.join(", ")),
            });
        }
        WgpuBackend::build(device, queue, Arc::new(Mutex::new(Vec::new())), true)
    }

    /// The backend on an open device; `shared`: the application owns the device (its error
    /// handlers stay; [`WgpuBackend::open_scope`] catches this backend's errors instead).
    fn build(
        device: wgpu::Device,
        queue: wgpu::Queue,
        errors: Arc<Mutex<Vec<String>>>,
        shared: bool,
    ) -> Result<WgpuBackend> {
        let info = device.adapter_info();
        let features = device.features();
        let timestamps = features.contains(wgpu::Features::TIMESTAMP_QUERY);
        let limits = device.limits();
        let align = limits.min_uniform_buffer_offset_alignment.max(256) as usize;
        let u = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
        let s = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let grid_buf = uniform_buffer(&device, "fluid.grid", 32, u);
        let step_buf = uniform_buffer(&device, "fluid.step", 16, u);
        let splat_buf = uniform_buffer(&device, "fluid.splats", 48 * 16, s);
        let params_buf = uniform_buffer(&device, "fluid.params", (align * 16) as u64, u);
        let partials_buf = uniform_buffer(&device, "fluid.partials", 4 * u64::from(REDUCE_MAX_PARTIALS), s);
        let results_buf = uniform_buffer(&device, "fluid.results", 4 * RESULT_SLOTS, s | wgpu::BufferUsages::COPY_SRC);
        let results_read = uniform_buffer(
            &device,
            "fluid.results_read",
            4 * RESULT_SLOTS,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let mut backend = WgpuBackend {
            device,
            queue,
            adapter: summary(&info, features),
            timestamps,
            shared,
            align,
            max_binding: limits.max_storage_buffer_binding_size.min(limits.max_buffer_size),
            pipelines: HashMap::new(),
            workgroup: workgroup_from_env()?,
            grid_buf,
            step_buf,
            splat_buf,
            params_buf,
            partials_buf,
            results_buf,
            results_read,
            gather_read: None,
            reads: Vec::new(),
            spare_reads: Vec::new(),
            written_params: Vec::new(),
            group0: HashMap::new(),
            group1: HashMap::new(),
            plans: Vec::new(),
            fields: None,
            reduction_slots: 0,
            timing: None,
            errors,
            spin: wait::spin_from_env()?
                .unwrap_or_else(|| wait::default_spin(info.device_type == wgpu::DeviceType::Cpu)),
            in_flight: VecDeque::with_capacity(MAX_IN_FLIGHT + 1),
        };
        backend.scoped("building the pipelines", |b| b.build_pipelines())?;
        Ok(backend)
    }

    /// `f` inside [`WgpuBackend::open_scope`]'s scope, closed by [`WgpuBackend::close_scope`].
    fn scoped<T>(&mut self, what: &str, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let scope = self.open_scope();
        let result = f(self);
        self.close_scope(scope, what, result)
    }

    /// With a shared device: a validation error scope around one of this backend's calls.
    fn open_scope(&self) -> Option<wgpu::ErrorScopeGuard> {
        self.shared.then(|| self.device.push_error_scope(wgpu::ErrorFilter::Validation))
    }

    /// Close [`WgpuBackend::open_scope`]'s scope: the call's own error first, else the scope's.
    fn close_scope<T>(&self, scope: Option<wgpu::ErrorScopeGuard>, what: &str, result: Result<T>) -> Result<T> {
        let caught = scope.and_then(|s| pollster::block_on(s.pop()));
        let value = result?;
        match caught {
            Some(e) => Err(backend_err(format!("{what}: {e}"))),
            None => Ok(value),
        }
    }

    /// The device this backend runs on (its own, or the one given to
    /// [`WgpuBackend::from_device`]).
    pub fn wgpu_device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue this backend submits to.
    pub fn wgpu_queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The buffer that holds `field` now, to draw from on the GPU with no read-back: `f32`
    /// values laid out as [`Backend::download`] returns them (see `fluid_core::grid`), usage
    /// `STORAGE | COPY_SRC | COPY_DST`. Steps ping-pong fields between buffers, so ask again
    /// after every step; work submitted to [`WgpuBackend::wgpu_queue`] after a step sees its
    /// results. Writing to the buffer changes the simulation's state.
    pub fn field_buffer(&self, field: FieldId) -> Result<&wgpu::Buffer> {
        let f = self.fields()?;
        Ok(&f.buffers[f.map[field.index()]])
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    fn check_errors(&self, what: &str) -> Result<()> {
        let mut errors = self.errors.lock().map_err(|_| backend_err("error log poisoned"))?;
        if errors.is_empty() {
            return Ok(());
        }
        let all = errors.drain(..).collect::<Vec<_>>().join("; ");
        Err(backend_err(format!("{what}: {all}")))
    }

    fn build_pipelines(&mut self) -> Result<()> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut modules: HashMap<&str, wgpu::ShaderModule> = HashMap::new();
        let overrides = shader_overrides()?;
        for ShaderEntry { name: entry, file: stem, storage, params: has_params, splats: has_splats } in
            ShaderEntry::all()
        {
            if !modules.contains_key(stem) {
                let src = shaders::overridden_source(stem, &overrides, self.workgroup)
                    .ok_or_else(|| backend_err(format!("no shader {stem}")))?;
                let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&format!("fluid.{stem}")),
                    source: wgpu::ShaderSource::Wgsl(src.into()),
                });
                modules.insert(stem, module);
            }
            let uniform = |binding: u32, dynamic: bool| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: dynamic,
                    min_binding_size: None,
                },
                count: None,
            };
            let storage_entry = |binding: u32, writable: bool| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: !writable },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            };
            let mut g0 = vec![uniform(0, false), uniform(1, false)];
            if has_params {
                g0.push(uniform(2, true));
            }
            if has_splats {
                g0.push(storage_entry(3, false));
            }
            let g1: Vec<_> =
                storage.iter().enumerate().map(|(i, b)| storage_entry(i as u32, b.access != Access::Read)).collect();
            let label = format!("fluid.{entry}");
            let group0 = self
                .device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries: &g0 });
            let group1 = self
                .device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries: &g1 });
            let layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&label),
                bind_group_layouts: &[Some(&group0), Some(&group1)],
                immediate_size: 0,
            });
            let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: Some(&layout),
                module: &modules[stem],
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
            self.pipelines.insert(entry, Pipeline { pipeline, group0, group1, has_params, has_splats });
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(backend_err(format!("shader or pipeline rejected: {e}")));
        }
        Ok(())
    }

    fn fields(&self) -> Result<&Fields> {
        self.fields.as_ref().ok_or(Error::NotAllocated(NAME))
    }

    fn group0(&mut self, entry: &'static str) -> wgpu::BindGroup {
        if let Some(g) = self.group0.get(entry) {
            return g.clone();
        }
        let p = &self.pipelines[entry];
        let mut entries = vec![
            wgpu::BindGroupEntry { binding: 0, resource: self.grid_buf.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: self.step_buf.as_entire_binding() },
        ];
        if p.has_params {
            entries.push(wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &self.params_buf,
                    offset: 0,
                    size: wgpu::BufferSize::new(PARAMS_BINDING),
                }),
            });
        }
        if p.has_splats {
            entries.push(wgpu::BindGroupEntry { binding: 3, resource: self.splat_buf.as_entire_binding() });
        }
        let g = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(entry),
            layout: &p.group0,
            entries: &entries,
        });
        self.group0.insert(entry, g.clone());
        g
    }

    /// Field bind group for `entry` over physical buffers `phys` (`usize::MAX`: partials,
    /// `usize::MAX - 1`: results).
    fn group1(&mut self, entry: &'static str, phys: Vec<usize>) -> Result<wgpu::BindGroup> {
        let key = (entry, phys);
        if let Some(g) = self.group1.get(&key) {
            return Ok(g.clone());
        }
        let fields = self.fields()?;
        let entries: Vec<_> = key
            .1
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let buffer = match b {
                    usize::MAX => &self.partials_buf,
                    x if x == usize::MAX - 1 => &self.results_buf,
                    x => &fields.buffers[x],
                };
                wgpu::BindGroupEntry { binding: i as u32, resource: buffer.as_entire_binding() }
            })
            .collect();
        let g = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(entry),
            layout: &self.pipelines[entry].group1,
            entries: &entries,
        });
        self.group1.insert(key, g.clone());
        Ok(g)
    }

    /// Build the plan of `schedule` from the field assignment `start`.
    fn plan(&mut self, schedule: &Schedule, start: [usize; FieldId::COUNT]) -> Result<Plan> {
        let grid = self.fields()?.grid;
        // Parameter blocks, deduplicated (500 sweeps share one block).
        let mut table = ParamTable::default();
        let align = self.align;
        // Per op: its parameter block's offset, and a reduction's number of partials.
        let mut blocks: Vec<(Option<u32>, Option<u32>)> = Vec::with_capacity(schedule.ops.len());
        for op in &schedule.ops {
            blocks.push(match op {
                Op::Dispatch(d) => (
                    match d.params {
                        Params::None => None,
                        p => Some(table.offset(p.bytes(), align)),
                    },
                    None,
                ),
                Op::Reduce { field, op, slot } => {
                    let p = ReduceParams::new(grid.len(*field) as u32, *op, *slot);
                    (Some(table.offset(bytemuck::bytes_of(&p), align)), Some(p.partials))
                }
                Op::Swap(..) => (None, None),
            });
        }
        // Grown before any bind group is made: growing drops the cached ones.
        self.ensure_capacity(Grown::Params, table.bytes.len().max(align) as u64);

        // Every dispatch with the bindings the renames give at that point.
        let mut map = start;
        let mut recorded: Vec<Recorded> = Vec::new();
        let faces = (grid.nx + 1, grid.ny + 1);
        for (op, (offset, partials)) in schedule.ops.iter().zip(blocks) {
            match op {
                Op::Swap(a, b) => map.swap(a.index(), b.index()),
                Op::Dispatch(d) => {
                    let entry = d.kernel.name();
                    let phys: Vec<usize> = d.fields.iter().map(|f| map[f.index()]).collect();
                    let (w, h) = match (d.extent, d.kernel.domain()) {
                        (Some([x, y]), _) => (x, y),
                        (None, fluid_core::schedule::Domain::Cells) => (grid.nx, grid.ny),
                        (None, fluid_core::schedule::Domain::Faces) => faces,
                    };
                    recorded.push(Recorded {
                        entry,
                        group0: self.group0(entry),
                        offset,
                        group1: self.group1(entry, phys)?,
                        workgroups: {
                            let (gx, gy) = d.kernel.fixed_workgroup().unwrap_or(self.workgroup);
                            (w.div_ceil(gx), h.div_ceil(gy))
                        },
                    });
                }
                Op::Reduce { field, .. } => {
                    let phys = vec![map[field.index()], usize::MAX, usize::MAX - 1];
                    for (entry, groups) in [("reduce_partial", partials.unwrap_or(1)), ("reduce_final", 1)] {
                        recorded.push(Recorded {
                            entry,
                            group0: self.group0(entry),
                            offset,
                            group1: self.group1(entry, phys.clone())?,
                            workgroups: (groups, 1),
                        });
                    }
                }
            }
        }
        Ok(Plan { schedule: schedule.clone(), start, params: table.bytes, recorded, end: map })
    }

    /// Grow a per-step input buffer to hold `needed` bytes (its bind groups, and the plans
    /// holding them, are rebuilt).
    fn ensure_capacity(&mut self, which: Grown, needed: u64) {
        let (buf, usage, label) = match which {
            Grown::Splats => (&mut self.splat_buf, wgpu::BufferUsages::STORAGE, "fluid.splats"),
            Grown::Params => (&mut self.params_buf, wgpu::BufferUsages::UNIFORM, "fluid.params"),
        };
        if buf.size() >= needed {
            return;
        }
        *buf = uniform_buffer(&self.device, label, needed.next_power_of_two(), usage | wgpu::BufferUsages::COPY_DST);
        self.group0.clear();
        self.plans.clear();
        if which == Grown::Params {
            self.written_params.clear();
        }
    }
}

/// The buffers [`WgpuBackend::ensure_capacity`] grows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grown {
    Splats,
    Params,
}

/// Most plans [`WgpuBackend`] keeps (a step, its diagnostics and the solver's chunks cycle
/// through a few field assignments).
const MAX_PLANS: usize = 16;

/// A schedule's run from one assignment of fields to buffers, built once: its parameter blocks,
/// its dispatches with their bind groups, the assignment it leaves.
struct Plan {
    schedule: Schedule,
    start: [usize; FieldId::COUNT],
    params: Vec<u8>,
    recorded: Vec<Recorded>,
    end: [usize; FieldId::COUNT],
}

/// One recorded dispatch of a run.
struct Recorded {
    entry: &'static str,
    group0: wgpu::BindGroup,
    offset: Option<u32>,
    group1: wgpu::BindGroup,
    workgroups: (u32, u32),
}

impl Backend for WgpuBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn device(&self) -> String {
        format!("{} ({}, {})", self.adapter.name, self.adapter.backend, self.adapter.device_type)
    }

    fn allocate(&mut self, grid: &Grid) -> Result<()> {
        self.scoped("allocate", |b| b.allocate_scoped(grid))
    }

    fn upload(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
        self.scoped("upload", |b| b.upload_scoped(field, data))
    }

    fn download(&mut self, field: FieldId) -> Result<Vec<f32>> {
        self.scoped("download", |b| b.download_scoped(field))
    }

    fn download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<Vec<f32>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        self.scoped("download_at", |b| b.download_at_scoped(field, indices))
    }

    fn queue_download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<PendingRead> {
        self.sweep_reads();
        if indices.is_empty() {
            return Ok(PendingRead::ready(NAME, Vec::new()));
        }
        let len = self.fields()?.grid.len(field);
        let plan = ReadPlan::at(field, len, indices)?;
        self.scoped("queue_download_at", |b| b.queue_read(plan))
    }

    fn queue_download(&mut self, field: FieldId) -> Result<PendingRead> {
        self.sweep_reads();
        let len = self.fields()?.grid.len(field);
        self.scoped("queue_download", |b| b.queue_read(ReadPlan::whole(field, len)))
    }

    fn poll_download(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        if let Some(values) = read.take_ready(NAME)? {
            return Ok(Some(values));
        }
        let k = self.queued_read(read)?;
        poll(&self.device, wgpu::PollType::Poll)?;
        if self.reads[k].mapped.get().is_none() {
            self.sweep_reads();
            return Ok(None);
        }
        read.set_taken();
        self.take_read(k).map(Some)
    }

    fn queued_reads(&self) -> usize {
        self.reads.len()
    }

    fn wait_download(&mut self, mut read: PendingRead) -> Result<Vec<f32>> {
        if let Some(values) = read.take_ready(NAME)? {
            return Ok(values);
        }
        let k = self.queued_read(&read)?;
        let mapped = Arc::clone(&self.reads[k].mapped);
        let device = &self.device;
        let done = wait::poll_for(self.spin, || {
            poll(device, wgpu::PollType::Poll)?;
            Ok(mapped.get().is_some())
        })?;
        if !done {
            poll(device, wgpu::PollType::wait_indefinitely())?;
        }
        read.set_taken();
        self.take_read(k)
    }

    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        self.scoped("run", |b| b.run_scoped(schedule, inputs))
    }

    fn finish(&mut self) -> Result<()> {
        self.scoped("finish", |b| b.finish_scoped())
    }

    fn reductions(&mut self) -> Result<Vec<f64>> {
        if self.reduction_slots == 0 {
            return Ok(Vec::new());
        }
        let n = self.reduction_slots;
        let values = map_read(&self.device, &self.results_read, self.spin, |m| f32s_le(&m[..4 * n]))?;
        Ok(values.into_iter().map(f64::from).collect())
    }

    fn copy_bandwidth(&mut self) -> Result<f64> {
        // A compute-shader copy of 16 bytes per invocation between two large buffers: what a
        // streaming kernel can reach (a transfer-queue copy can be slower on some devices).
        let bytes = (1u64 << 30).min(self.max_binding / 16 * 16);
        let usage = wgpu::BufferUsages::STORAGE;
        let a = uniform_buffer(&self.device, "fluid.bandwidth.a", bytes, usage);
        let b = uniform_buffer(&self.device, "fluid.bandwidth.b", bytes, usage);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("fluid.bandwidth"),
            source: wgpu::ShaderSource::Wgsl(shaders::BANDWIDTH.into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("fluid.bandwidth"),
            layout: None,
            module: &module,
            entry_point: Some("bandwidth"),
            compilation_options: Default::default(),
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        let groups: Vec<wgpu::BindGroup> = [(&a, &b), (&b, &a)]
            .iter()
            .map(|(s, d)| {
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("fluid.bandwidth"),
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: s.as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 1, resource: d.as_entire_binding() },
                    ],
                })
            })
            .collect();
        let invocations = bytes / 16;
        let wg = invocations.div_ceil(256);
        let (gx, gy) = if wg <= 65535 { (wg as u32, 1) } else { (65535u32, wg.div_ceil(65535) as u32) };
        let copies = 20u32;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            self.finish()?;
            let t0 = std::time::Instant::now();
            let mut enc =
                self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("bandwidth") });
            {
                let mut pass =
                    enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
                pass.set_pipeline(&pipeline);
                for k in 0..copies {
                    pass.set_bind_group(0, &groups[(k % 2) as usize], &[]);
                    pass.dispatch_workgroups(gx, gy, 1);
                }
            }
            self.queue.submit([enc.finish()]);
            self.finish()?;
            best = best.min(t0.elapsed().as_secs_f64());
        }
        Ok(2.0 * bytes as f64 * f64::from(copies) / best / 1e9)
    }

    fn set_timing(&mut self, enabled: bool) -> Result<()> {
        if enabled && !self.timestamps {
            return Err(Error::Unsupported {
                what: "per-kernel timings (timestamp queries)".into(),
                by: format!("the adapter {}", self.adapter.name),
            });
        }
        self.timing = enabled.then(TimestampTimings::default);
        Ok(())
    }

    fn take_timings(&mut self) -> Result<Vec<KernelTiming>> {
        Ok(self.timing.as_mut().ok_or_else(|| backend_err("timings were not enabled"))?.take())
    }

    fn wait_spin(&self) -> Option<Duration> {
        Some(self.spin)
    }

    fn set_wait_spin(&mut self, spin: Duration) -> Result<()> {
        self.spin = wait::checked(spin)?;
        Ok(())
    }
}

/// The backend's operations; the `Backend` methods wrap each in [`WgpuBackend::scoped`].
impl WgpuBackend {
    fn allocate_scoped(&mut self, grid: &Grid) -> Result<()> {
        let largest = FieldId::STATE_AND_SCRATCH.iter().map(|f| grid.len(*f) as u64 * 4).max().unwrap_or(0);
        if largest > self.max_binding {
            return Err(Error::OutOfMemory {
                nx: grid.nx,
                ny: grid.ny,
                bytes: grid.bytes(),
                reason: format!(
                    "the largest field needs {largest} bytes but {} binds at most {} bytes per buffer",
                    self.adapter.name, self.max_binding
                ),
            });
        }
        self.fields = None;
        self.group1.clear();
        self.plans.clear();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffers = FieldId::STATE_AND_SCRATCH
            .iter()
            .map(|f| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("fluid.{}", f.name())),
                    size: (grid.len(*f) as u64 * 4).max(16),
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                })
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::OutOfMemory {
                nx: grid.nx,
                ny: grid.ny,
                bytes: grid.bytes(),
                reason: format!("{}: {e}", self.adapter.name),
            });
        }
        self.queue.write_buffer(&self.grid_buf, 0, bytemuck::bytes_of(&grid.uniform()));
        self.fields = Some(Fields { grid: *grid, buffers, map: std::array::from_fn(|i| i) });
        self.check_errors("allocate")
    }

    fn upload_scoped(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
        let f = self.fields()?;
        if data.len() != f.grid.len(field) {
            return Err(Error::FieldLength { field: field.name(), expected: f.grid.len(field), got: data.len() });
        }
        self.queue.write_buffer(&f.buffers[f.map[field.index()]], 0, bytemuck::cast_slice(data));
        Ok(())
    }

    fn download_scoped(&mut self, field: FieldId) -> Result<Vec<f32>> {
        let f = self.fields()?;
        let len = f.grid.len(field);
        let size = (len as u64 * 4).max(16);
        let staging = uniform_buffer(
            &self.device,
            "fluid.download",
            size,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("download") });
        enc.copy_buffer_to_buffer(&f.buffers[f.map[field.index()]], 0, &staging, 0, size);
        self.queue.submit([enc.finish()]);
        let values = map_read(&self.device, &staging, self.spin, |m| f32s_le(&m[..len * 4]))?;
        self.check_errors("download")?;
        Ok(values)
    }

    fn download_at_scoped(&mut self, field: FieldId, indices: &[usize]) -> Result<Vec<f32>> {
        let len = self.fields()?.grid.len(field);
        let Some(gather) = Gather::plan(field, len, indices)? else {
            return pick(field, &self.download_scoped(field)?, indices);
        };
        let size = (gather.unique.len() as u64 * 4).max(16);
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        // A few values (a game's samples every frame) go through the kept buffer; more through
        // one of their own.
        let staging = if size <= Gather::KEPT_BYTES {
            let device = &self.device;
            self.gather_read
                .get_or_insert_with(|| uniform_buffer(device, "fluid.download_at", Gather::KEPT_BYTES, usage))
                .clone()
        } else {
            uniform_buffer(&self.device, "fluid.download_at", size, usage)
        };
        let f = self.fields()?;
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("download_at") });
        copy_runs(&mut enc, &f.buffers[f.map[field.index()]], &staging, &gather.runs);
        self.queue.submit([enc.finish()]);
        let fetched = map_read(&self.device, &staging, self.spin, |m| f32s_le(&m[..gather.unique.len() * 4]))?;
        self.check_errors("download_at")?;
        Ok(gather.scatter(indices, &fetched))
    }

    /// Submit the copy of a queued read (see [`Backend::queue_download_at`]) and map its
    /// buffer once it is done.
    fn queue_read(&mut self, plan: ReadPlan) -> Result<PendingRead> {
        let bytes = plan.bytes();
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let buffer = match self.spare_reads.pop() {
            Some(b) if bytes <= Gather::KEPT_BYTES => b,
            spare => {
                self.spare_reads.extend(spare);
                let size = if bytes <= Gather::KEPT_BYTES { Gather::KEPT_BYTES } else { bytes.max(16) };
                uniform_buffer(&self.device, "fluid.queue_download", size, usage)
            }
        };
        let f = self.fields()?;
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("queue_download") });
        copy_runs(&mut enc, &f.buffers[f.map[plan.field().index()]], &buffer, &plan.runs());
        self.queue.submit([enc.finish()]);
        // Mapped once the copy is done: wgpu orders the map after the submission using the buffer.
        let mapped = Arc::new(OnceLock::new());
        let set = Arc::clone(&mapped);
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = set.set(r);
        });
        self.check_errors("queue_download")?;
        let (read, handle) = PendingRead::queued(NAME);
        self.reads.push(QueuedRead { handle, buffer, mapped, plan });
        Ok(read)
    }

    /// The index of `read` among the queued reads.
    fn queued_read(&self, read: &PendingRead) -> Result<usize> {
        self.reads.iter().position(|r| r.handle.id == read.id()).ok_or_else(|| read.unknown(NAME))
    }

    /// A taken or dropped read's buffer back to the spares (unmapped) when it is of the kept
    /// size and there is room; otherwise dropped.
    fn release_read(&mut self, buffer: wgpu::Buffer, mapped: bool) {
        if mapped {
            buffer.unmap();
        }
        if mapped && buffer.size() == Gather::KEPT_BYTES && self.spare_reads.len() < SPARE_READS {
            self.spare_reads.push(buffer);
        }
    }

    /// Free the reads whose [`PendingRead`] was dropped and whose map is done.
    fn sweep_reads(&mut self) {
        let mut k = 0;
        while k < self.reads.len() {
            if self.reads[k].handle.dropped()
                && let Some(result) = self.reads[k].mapped.get()
            {
                let ok = result.is_ok();
                let r = self.reads.remove(k);
                self.release_read(r.buffer, ok);
            } else {
                k += 1;
            }
        }
    }

    /// The values of queued read `k`, whose map is done; frees it.
    fn take_read(&mut self, k: usize) -> Result<Vec<f32>> {
        let r = self.reads.remove(k);
        let values = match r.mapped.get() {
            Some(Ok(())) => {
                let view = r.buffer.slice(..).get_mapped_range();
                match view.map(|m| f32s_le(&m[..r.plan.bytes() as usize])) {
                    Ok(fetched) => r.plan.finish(fetched),
                    Err(e) => Err(backend_err(format!("cannot read a buffer back: {e}"))),
                }
            }
            Some(Err(e)) => Err(backend_err(format!("cannot read a buffer back: {e}"))),
            None => Err(backend_err("a queued read's buffer was never mapped (the map callback did not run)")),
        };
        let mapped = matches!(r.mapped.get(), Some(Ok(())));
        self.release_read(r.buffer, mapped);
        values
    }

    fn run_scoped(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        let grid = self.fields()?.grid;
        if schedule.grid != grid.uniform() {
            return Err(backend_err("the schedule was built for another grid"));
        }
        // Per-step inputs: one uniform and the splat list, written before the submission.
        self.queue.write_buffer(&self.step_buf, 0, bytemuck::bytes_of(&inputs.uniform()));
        let splats: Vec<SplatGpu> = inputs.gpu_splats(&schedule.grid);
        self.ensure_capacity(Grown::Splats, (splats.len().max(1) * size_of::<SplatGpu>()) as u64);
        if !splats.is_empty() {
            self.queue.write_buffer(&self.splat_buf, 0, bytemuck::cast_slice(&splats));
        }

        let slots = schedule.reduction_slots();
        if slots as u64 > RESULT_SLOTS {
            return Err(backend_err(format!("a schedule may use at most {RESULT_SLOTS} reduction slots")));
        }
        let start = self.fields()?.map;
        let index = match self.plans.iter().position(|p| p.start == start && p.schedule == *schedule) {
            Some(i) => i,
            None => {
                let plan = self.plan(schedule, start)?;
                if self.plans.len() >= MAX_PLANS {
                    self.plans.remove(0);
                }
                self.plans.push(plan);
                self.plans.len() - 1
            }
        };
        if self.plans[index].params != self.written_params {
            self.queue.write_buffer(&self.params_buf, 0, &self.plans[index].params);
            self.written_params.clone_from(&self.plans[index].params);
        }
        let plan = &self.plans[index];
        let (recorded, map) = (&plan.recorded, plan.end);

        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("fluid.step") });
        let timed = self.timing.is_some() && self.timestamps;
        let mut query_sets = Vec::new();
        if timed {
            for chunk in recorded.chunks(2048) {
                let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("fluid.timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * chunk.len() as u32,
                });
                query_sets.push(set);
            }
            for (k, r) in recorded.iter().enumerate() {
                let set = &query_sets[k / 2048];
                let q = 2 * (k % 2048) as u32;
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some(r.entry),
                    timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                        query_set: set,
                        beginning_of_pass_write_index: Some(q),
                        end_of_pass_write_index: Some(q + 1),
                    }),
                });
                encode(&mut pass, &self.pipelines, r);
            }
        } else {
            let mut pass = enc
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("fluid.step"), timestamp_writes: None });
            for r in recorded {
                encode(&mut pass, &self.pipelines, r);
            }
        }
        let mut resolve = Vec::new();
        for (k, set) in query_sets.iter().enumerate() {
            let n = 2 * recorded[k * 2048..].len().min(2048) as u32;
            let size = 8 * u64::from(n);
            let dst = uniform_buffer(
                &self.device,
                "fluid.timestamps.resolve",
                size,
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            );
            let read = uniform_buffer(
                &self.device,
                "fluid.timestamps.read",
                size,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            );
            enc.resolve_query_set(set, 0..n, &dst, 0);
            enc.copy_buffer_to_buffer(&dst, 0, &read, 0, size);
            resolve.push(read);
        }
        if slots > 0 {
            enc.copy_buffer_to_buffer(&self.results_buf, 0, &self.results_read, 0, 4 * RESULT_SLOTS);
        }
        let index = self.queue.submit([enc.finish()]);
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        self.queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        self.in_flight.push_back((index, done));
        // Steps seen done cost nothing; a step that finds the bound full waits for the oldest.
        // The device has the newer steps queued behind it, so blocking at once costs it nothing.
        while self.in_flight.front().is_some_and(|(_, done)| done.load(Ordering::Acquire)) {
            self.in_flight.pop_front();
        }
        if self.in_flight.len() > MAX_IN_FLIGHT
            && let Some((oldest, _)) = self.in_flight.pop_front()
        {
            poll(&self.device, wgpu::PollType::Wait { submission_index: Some(oldest), timeout: None })?;
        }
        if let Some(f) = self.fields.as_mut() {
            f.map = map;
        }
        self.reduction_slots = slots;

        if timed {
            let period = f64::from(self.queue.get_timestamp_period());
            let mut ticks: Vec<u64> = Vec::new();
            for read in &resolve {
                map_read(&self.device, read, self.spin, |m| {
                    ticks.extend(
                        m.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
                    );
                })?;
            }
            if let Some(t) = self.timing.as_mut() {
                t.add(recorded.iter().map(|r| &r.entry), &ticks, period);
            }
        }
        self.check_errors("run")
    }

    fn finish_scoped(&mut self) -> Result<()> {
        let empty = wait::poll_for(self.spin, || Ok(poll(&self.device, wgpu::PollType::Poll)?.is_queue_empty()))?;
        if !empty {
            poll(&self.device, wgpu::PollType::wait_indefinitely())?;
        }
        self.in_flight.clear();
        self.check_errors("finish")
    }
}

fn encode(pass: &mut wgpu::ComputePass<'_>, pipelines: &HashMap<&'static str, Pipeline>, r: &Recorded) {
    pass.set_pipeline(&pipelines[r.entry].pipeline);
    match r.offset {
        Some(o) => pass.set_bind_group(0, &r.group0, &[o]),
        None => pass.set_bind_group(0, &r.group0, &[]),
    }
    pass.set_bind_group(1, &r.group1, &[]);
    pass.dispatch_workgroups(r.workgroups.0, r.workgroups.1, 1);
}

/// Copy `runs` (`(first value, count)` of a field in `src`) into `dst`, packed one after
/// another from its start.
fn copy_runs(enc: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, dst: &wgpu::Buffer, runs: &[(usize, usize)]) {
    let mut at = 0u64;
    for &(start, n) in runs {
        enc.copy_buffer_to_buffer(src, start as u64 * 4, dst, at, n as u64 * 4);
        at += n as u64 * 4;
    }
}

/// `device.poll`, its error as ours.
fn poll(device: &wgpu::Device, how: wgpu::PollType) -> Result<wgpu::PollStatus> {
    device.poll(how).map_err(|e| backend_err(format!("waiting for the GPU failed: {e}")))
}

/// Map a `MAP_READ` buffer, wait for it (polling for up to `spin` first, see
/// [`fluid_core::wait`]), give its bytes to `read`, unmap. `read` copies out what it needs in
/// one pass: a whole-field read used to copy the bytes out first and then convert them, two
/// allocations and copies of the field's size, which took u at 2048² 15–23 ms to read on the
/// H100 host; 3–4.5 ms in one pass, as on Vulkan (doc/PERFORMANCE.md).
fn map_read<T>(
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
