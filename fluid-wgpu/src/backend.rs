//! The wgpu implementation of [`fluid_core::Backend`]: the lowered plans of `fluid_core`
//! encoded as compute passes, resources as storage buffers.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use fluid_core::backend::{self, Gather, PendingRead, ReadPlan, ReadQueue, f32s_le, pick, u32s_le};
use fluid_core::grid::uniforms::SplatGpu;
use fluid_core::ir::kernel::Access;
use fluid_core::ir::lower::{Buffer, Plan, PlanCache, Target, lower};
use fluid_core::ir::schedule::RESULT_SLOTS;
use fluid_core::ir::uniforms::{PARAMS_MAX_BYTES, REDUCE_MAX_PARTIALS};
use fluid_core::wait;
use fluid_core::{
    Backend, Error, Kernel, KernelTiming, MemoryReport, ResourceDesc, ResourceId, Result, Schedule, StepInputs,
    TimestampTimings,
};
use fluid_shaders as shaders;

use crate::device::{
    AdapterSummary, NAME, backend_err, copy_runs, instance, map_read, needed_limits, poll, required_limits,
    shader_overrides, summary, uniform_buffer, workgroup_from_env,
};

/// Bytes bound for a parameter block: the largest block of the kernels.
const PARAMS_BINDING: u64 = PARAMS_MAX_BYTES;
/// Step submissions that may be in flight, as many as the Vulkan backend's staging slots: a
/// `run` with this many still on the device waits for the oldest. Without the bound a loop that
/// steps faster than the device queues without end, and reads asked for in such a loop come
/// back many steps late.
const MAX_IN_FLIGHT: usize = 3;

struct Pipeline {
    pipeline: wgpu::ComputePipeline,
    group0: wgpu::BindGroupLayout,
    group1: wgpu::BindGroupLayout,
    has_params: bool,
    has_splats: bool,
}

/// The resources held: their descriptions, a buffer each (moved to the resource's index by
/// `allocate`), and the assignment of resources to buffers that swaps change.
#[derive(Default)]
struct Resources {
    descs: Vec<ResourceDesc>,
    buffers: Vec<wgpu::Buffer>,
    map: Vec<usize>,
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
    uniform_buf: wgpu::Buffer,
    /// The model uniform written to `uniform_buf` (the last schedule's).
    uniform: Option<[u8; 32]>,
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
    reads: ReadQueue<ReadSlot>,
    /// Read-back buffers of [`Gather::KEPT_BYTES`] from finished queued reads.
    spare_reads: Vec<wgpu::Buffer>,
    written_params: Vec<u8>,
    group0: HashMap<&'static str, wgpu::BindGroup>,
    group1: HashMap<(&'static str, Vec<Buffer>), wgpu::BindGroup>,
    /// Plans of recent runs with their bind groups, by schedule and starting assignment.
    /// Dropped whenever a bind group they hold is.
    plans: PlanCache<Encoded>,
    res: Resources,
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

/// What a queued read keeps: its read-back buffer, being mapped (the map callback sets the
/// result).
struct ReadSlot {
    buffer: wgpu::Buffer,
    mapped: Arc<OnceLock<std::result::Result<(), wgpu::BufferAsyncError>>>,
}

/// Kept-size read-back buffers of finished queued reads waiting for the next ones; more are
/// dropped.
const SPARE_READS: usize = 4;

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
        let uniform_buf = uniform_buffer(&device, "fluid.uniform", 32, u);
        let step_buf = uniform_buffer(&device, "fluid.step", 16, u);
        let splat_buf = uniform_buffer(&device, "fluid.splats", 48 * 16, s);
        let params_buf = uniform_buffer(&device, "fluid.params", (align * 16) as u64, u);
        let partials_buf = uniform_buffer(&device, "fluid.partials", 4 * u64::from(REDUCE_MAX_PARTIALS), s);
        let results_buf =
            uniform_buffer(&device, "fluid.results", 4 * RESULT_SLOTS as u64, s | wgpu::BufferUsages::COPY_SRC);
        let results_read = uniform_buffer(
            &device,
            "fluid.results_read",
            4 * RESULT_SLOTS as u64,
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
            uniform_buf,
            uniform: None,
            step_buf,
            splat_buf,
            params_buf,
            partials_buf,
            results_buf,
            results_read,
            gather_read: None,
            reads: ReadQueue::new(NAME),
            spare_reads: Vec::new(),
            written_params: Vec::new(),
            group0: HashMap::new(),
            group1: HashMap::new(),
            plans: PlanCache::new(MAX_PLANS),
            res: Resources::default(),
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

    /// The buffer that holds resource `id` now (a grid field: `FieldId::Density.into()`), to
    /// draw from on the GPU with no read-back: `f32` values laid out as [`Backend::download`]
    /// returns them (see `fluid_core::grid`), usage `STORAGE | COPY_SRC | COPY_DST`. Steps
    /// ping-pong fields between buffers, so ask again after every step; work submitted to
    /// [`WgpuBackend::wgpu_queue`] after a step sees its results. Writing to the buffer changes
    /// the simulation's state.
    pub fn field_buffer(&self, id: impl Into<ResourceId>) -> Result<&wgpu::Buffer> {
        let id = id.into();
        backend::desc(&self.res.descs, id, NAME)?;
        Ok(&self.res.buffers[self.res.map[id.index()]])
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
        for kernel in fluid_core::kernels() {
            let (entry, stem, storage) = (kernel.name, kernel.module, kernel.bindings);
            let (has_params, has_splats) = (kernel.params.is_some(), kernel.splats);
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

    fn group0(&mut self, entry: &'static str) -> wgpu::BindGroup {
        if let Some(g) = self.group0.get(entry) {
            return g.clone();
        }
        let p = &self.pipelines[entry];
        let mut entries = vec![
            wgpu::BindGroupEntry { binding: 0, resource: self.uniform_buf.as_entire_binding() },
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

    /// The storage bind group of `entry` over `buffers`.
    fn group1(&mut self, entry: &'static str, buffers: &[Buffer]) -> wgpu::BindGroup {
        if let Some(g) = self.group1.get(&(entry, buffers.to_vec())) {
            return g.clone();
        }
        let entries: Vec<_> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let buffer = match b {
                    Buffer::Partials => &self.partials_buf,
                    Buffer::Results => &self.results_buf,
                    Buffer::Physical(p) => &self.res.buffers[*p],
                };
                wgpu::BindGroupEntry { binding: i as u32, resource: buffer.as_entire_binding() }
            })
            .collect();
        let g = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(entry),
            layout: &self.pipelines[entry].group1,
            entries: &entries,
        });
        self.group1.insert((entry, buffers.to_vec()), g.clone());
        g
    }

    /// Lower `schedule` from the current assignment and make its bind groups.
    fn encode_plan(&mut self, schedule: &Schedule) -> Result<Encoded> {
        let target = Target { param_align: self.align as u32, workgroup: self.workgroup };
        let plan = lower(schedule, &self.res.descs, &self.res.map, &target)?;
        // Grown before any bind group is made: growing drops the cached ones.
        self.ensure_capacity(Grown::Params, plan.params.len() as u64);
        let recorded = plan
            .invocations
            .iter()
            .map(|inv| Recorded {
                kernel: inv.kernel,
                group0: self.group0(inv.kernel.name),
                offset: inv.params,
                group1: self.group1(inv.kernel.name, &inv.buffers),
                workgroups: inv.workgroups,
            })
            .collect();
        Ok(Encoded { recorded, plan })
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
        self.plans.drain();
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
/// through a few assignments of resources to buffers).
const MAX_PLANS: usize = 16;

/// A lowered plan with the bind groups of its invocations.
struct Encoded {
    plan: Plan,
    recorded: Vec<Recorded>,
}

/// One dispatch of a run, with its bind groups.
struct Recorded {
    kernel: Kernel,
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

    fn allocate(&mut self, resources: &[ResourceDesc]) -> Result<()> {
        self.scoped("allocate", |b| b.allocate_scoped(resources))
    }

    fn resources(&self) -> &[ResourceDesc] {
        &self.res.descs
    }

    fn write(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
        self.scoped("write", |b| b.write_scoped(id, bytes))
    }

    fn read(&mut self, id: ResourceId) -> Result<Vec<u32>> {
        self.scoped("read", |b| b.read_scoped(id, u32s_le))
    }

    fn download(&mut self, id: ResourceId) -> Result<Vec<f32>> {
        self.scoped("download", |b| b.read_scoped(id, f32s_le))
    }

    fn download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        self.scoped("download_at", |b| b.download_at_scoped(id, indices))
    }

    fn queue_download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<PendingRead> {
        self.sweep_reads()?;
        if indices.is_empty() {
            return Ok(PendingRead::ready(NAME, Vec::new()));
        }
        let plan = ReadPlan::at(id, backend::desc(&self.res.descs, id, NAME)?, indices)?;
        self.scoped("queue_download_at", |b| b.queue_read(plan))
    }

    fn queue_download(&mut self, id: ResourceId) -> Result<PendingRead> {
        self.sweep_reads()?;
        let plan = ReadPlan::whole(id, backend::desc(&self.res.descs, id, NAME)?);
        self.scoped("queue_download", |b| b.queue_read(plan))
    }

    fn poll_download(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        poll(&self.device, wgpu::PollType::Poll)?;
        let mut freed = None;
        let got = self.reads.poll(
            read,
            |slot| Ok(slot.mapped.get().is_some()),
            |slot, plan| {
                let values = slot_values(&slot, plan);
                freed = Some(slot);
                values
            },
        )?;
        if let Some(slot) = freed {
            self.release_read(slot);
        }
        if got.is_none() {
            self.sweep_reads()?;
        }
        Ok(got)
    }

    fn queued_reads(&self) -> usize {
        self.reads.len()
    }

    fn wait_download(&mut self, read: PendingRead) -> Result<Vec<f32>> {
        let (device, spin) = (&self.device, self.spin);
        let mut freed = None;
        let values = self.reads.wait(
            read,
            |slot| {
                let done = wait::poll_for(spin, || {
                    poll(device, wgpu::PollType::Poll)?;
                    Ok(slot.mapped.get().is_some())
                })?;
                if !done {
                    poll(device, wgpu::PollType::wait_indefinitely())?;
                }
                Ok(())
            },
            |slot, plan| {
                let values = slot_values(&slot, plan);
                freed = Some(slot);
                values
            },
        );
        if let Some(slot) = freed {
            self.release_read(slot);
        }
        values
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

    fn memory(&self) -> Result<MemoryReport> {
        let resources: Vec<(&'static str, u64)> =
            self.res.descs.iter().zip(&self.res.map).map(|(r, p)| (r.name, self.res.buffers[*p].size())).collect();
        let own = [
            &self.uniform_buf,
            &self.step_buf,
            &self.splat_buf,
            &self.params_buf,
            &self.partials_buf,
            &self.results_buf,
            &self.results_read,
        ]
        .iter()
        .map(|b| b.size())
        .sum::<u64>();
        let reads = self.gather_read.iter().chain(&self.spare_reads).map(wgpu::Buffer::size).sum::<u64>();
        let queued = self.reads.slots().map(|s| s.buffer.size()).sum::<u64>();
        let total = resources.iter().map(|r| r.1).sum::<u64>() + own + reads + queued;
        Ok(MemoryReport { resources, total, reserved: total })
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
    fn allocate_scoped(&mut self, resources: &[ResourceDesc]) -> Result<()> {
        if let Some(r) = resources.iter().find(|r| r.bytes() > self.max_binding) {
            return Err(Error::OutOfMemory {
                what: format!("resource `{}`", r.name),
                bytes: r.bytes(),
                reason: format!("{} binds at most {} bytes per buffer", self.adapter.name, self.max_binding),
            });
        }
        let same = |i: usize| self.res.descs.get(i) == Some(&resources[i]);
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let made: Vec<Option<wgpu::Buffer>> = resources
            .iter()
            .enumerate()
            .map(|(i, r)| {
                (!same(i)).then(|| {
                    self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&format!("fluid.{}", r.name)),
                        // An empty resource still binds: a buffer of the smallest size.
                        size: r.bytes().max(16),
                        usage: wgpu::BufferUsages::STORAGE
                            | wgpu::BufferUsages::COPY_DST
                            | wgpu::BufferUsages::COPY_SRC,
                        mapped_at_creation: false,
                    })
                })
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            let bytes = resources.iter().enumerate().filter(|(i, _)| !same(*i)).map(|(_, r)| r.bytes()).sum();
            return Err(Error::OutOfMemory {
                what: format!("{} resources", resources.len()),
                bytes,
                reason: format!("{}: {e}", self.adapter.name),
            });
        }
        // Each resource's buffer at its own index: the one it had (wherever swaps had put it),
        // or its new one. Bind groups and plans name buffers by index: all dropped.
        let old = std::mem::take(&mut self.res);
        let buffers = made
            .into_iter()
            .enumerate()
            .map(|(i, new)| new.unwrap_or_else(|| old.buffers[old.map[i]].clone()))
            .collect();
        self.res = Resources { descs: resources.to_vec(), buffers, map: (0..resources.len()).collect() };
        self.group1.clear();
        self.plans.drain();
        self.check_errors("allocate")
    }

    fn write_scoped(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
        backend::desc(&self.res.descs, id, NAME)?.check_bytes(bytes.len())?;
        if !bytes.is_empty() {
            self.queue.write_buffer(&self.res.buffers[self.res.map[id.index()]], 0, bytes);
        }
        Ok(())
    }

    /// A whole resource read back, converted from its bytes in one pass by `convert`.
    fn read_scoped<T>(&mut self, id: ResourceId, convert: impl FnOnce(&[u8]) -> Vec<T>) -> Result<Vec<T>> {
        let bytes = backend::desc(&self.res.descs, id, NAME)?.bytes();
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = uniform_buffer(
            &self.device,
            "fluid.download",
            bytes,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("download") });
        enc.copy_buffer_to_buffer(&self.res.buffers[self.res.map[id.index()]], 0, &staging, 0, bytes);
        self.queue.submit([enc.finish()]);
        let values = map_read(&self.device, &staging, self.spin, |m| convert(&m[..bytes as usize]))?;
        self.check_errors("download")?;
        Ok(values)
    }

    fn download_at_scoped(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        let desc = backend::desc(&self.res.descs, id, NAME)?;
        let name = desc.name;
        let Some(gather) = Gather::plan(name, desc.words() as usize, indices)? else {
            return pick(name, &self.read_scoped(id, f32s_le)?, indices);
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
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("download_at") });
        copy_runs(&mut enc, &self.res.buffers[self.res.map[id.index()]], &staging, &gather.runs);
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
        let src = &self.res.buffers[self.res.map[plan.resource().index()]];
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("queue_download") });
        copy_runs(&mut enc, src, &buffer, &plan.runs());
        self.queue.submit([enc.finish()]);
        // Mapped once the copy is done: wgpu orders the map after the submission using the buffer.
        let mapped = Arc::new(OnceLock::new());
        let set = Arc::clone(&mapped);
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = set.set(r);
        });
        self.check_errors("queue_download")?;
        Ok(self.reads.push(ReadSlot { buffer, mapped }, plan))
    }

    /// A taken or dropped read's buffer back to the spares (unmapped) when it is of the kept
    /// size and there is room; otherwise dropped.
    fn release_read(&mut self, slot: ReadSlot) {
        let mapped = matches!(slot.mapped.get(), Some(Ok(())));
        if mapped {
            slot.buffer.unmap();
        }
        if mapped && slot.buffer.size() == Gather::KEPT_BYTES && self.spare_reads.len() < SPARE_READS {
            self.spare_reads.push(slot.buffer);
        }
    }

    /// Free the reads whose [`PendingRead`] was dropped and whose map is done.
    fn sweep_reads(&mut self) -> Result<()> {
        let mut freed = Vec::new();
        self.reads.sweep(|slot| Ok(slot.mapped.get().is_some()), |slot| freed.push(slot))?;
        for slot in freed {
            self.release_read(slot);
        }
        Ok(())
    }

    fn run_scoped(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        if self.res.descs.is_empty() {
            return Err(Error::NotAllocated(NAME));
        }
        if self.uniform.as_ref() != Some(schedule.uniform()) {
            // Writes land before the next submission; those before it keep their uniform.
            self.queue.write_buffer(&self.uniform_buf, 0, schedule.uniform());
            self.uniform = Some(*schedule.uniform());
        }
        // Per-step inputs: one uniform and the splat list, written before the submission.
        self.queue.write_buffer(&self.step_buf, 0, bytemuck::bytes_of(&inputs.uniform()));
        let splats: Vec<SplatGpu> = inputs.gpu_splats(schedule.uniform());
        self.ensure_capacity(Grown::Splats, (splats.len().max(1) * size_of::<SplatGpu>()) as u64);
        if !splats.is_empty() {
            self.queue.write_buffer(&self.splat_buf, 0, bytemuck::cast_slice(&splats));
        }

        let pi = match self.plans.position(schedule.id(), &self.res.map, 0) {
            Some(i) => i,
            None => {
                let encoded = self.encode_plan(schedule)?;
                let start = self.res.map.clone();
                self.plans.insert(schedule.id(), &start, 0, encoded).0
            }
        };
        let params = &self.plans.get(pi).plan.params;
        if *params != self.written_params {
            self.queue.write_buffer(&self.params_buf, 0, params);
            self.written_params.clone_from(params);
        }
        let encoded = self.plans.get(pi);
        let (recorded, slots) = (&encoded.recorded, encoded.plan.reduction_slots);

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
                    label: Some(r.kernel.name),
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
            enc.copy_buffer_to_buffer(&self.results_buf, 0, &self.results_read, 0, 4 * RESULT_SLOTS as u64);
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
        self.res.map.clone_from(&self.plans.get(pi).plan.end);
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
            let recorded = &self.plans.get(pi).recorded;
            if let Some(t) = self.timing.as_mut() {
                t.add(recorded.iter().map(|r| &r.kernel.name), &ticks, period);
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
    pass.set_pipeline(&pipelines[r.kernel.name].pipeline);
    match r.offset {
        Some(o) => pass.set_bind_group(0, &r.group0, &[o]),
        None => pass.set_bind_group(0, &r.group0, &[]),
    }
    pass.set_bind_group(1, &r.group1, &[]);
    pass.dispatch_workgroups(r.workgroups.0, r.workgroups.1, 1);
}

/// The values of a queued read whose map is done, from its buffer.
fn slot_values(slot: &ReadSlot, plan: &ReadPlan) -> Result<Vec<f32>> {
    match slot.mapped.get() {
        Some(Ok(())) => {
            let view = slot.buffer.slice(..).get_mapped_range();
            match view.map(|m| f32s_le(&m[..plan.bytes() as usize])) {
                Ok(fetched) => plan.finish(fetched),
                Err(e) => Err(backend_err(format!("cannot read a buffer back: {e}"))),
            }
        }
        Some(Err(e)) => Err(backend_err(format!("cannot read a buffer back: {e}"))),
        None => Err(backend_err("a queued read's buffer was never mapped (the map callback did not run)")),
    }
}
