//! The wgpu implementation of [`swirly_ir::Backend`]: the lowered plans of `swirly_ir`
//! encoded as compute passes, resources as storage buffers.

mod plans;
mod reads;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use swirly_ir::backend::{self, PendingRead, ReadPlan, ReadQueue, f32s_le, u32s_le};
use swirly_ir::lower::{self, Buffer, PlanCache, Target};
use swirly_ir::resource;
use swirly_ir::schedule::RESULT_SLOTS;
use swirly_ir::uniforms::REDUCE_MAX_PARTIALS;
use swirly_ir::wait;
use swirly_ir::{
    Backend, Error, KernelTiming, MemoryReport, ResourceDesc, ResourceId, Result, Schedule, StepInputs,
    TimestampTimings,
};
use swirly_shaders as shaders;
pub use swirly_shaders::HalfStorage;

use crate::device::{
    AdapterSummary, NAME, backend_err, instance, map_read, needed_limits, poll, required_limits, summary,
    uniform_buffer, workgroup_from_env,
};
use plans::{Encoded, MAX_PLANS, Pipeline};
use reads::ReadSlot;

/// Step submissions that may be in flight, as many as the Vulkan backend's staging slots: a
/// `run` with this many still on the device waits for the oldest. Without the bound a loop that
/// steps faster than the device queues without end, and reads asked for in such a loop come
/// back many steps late.
const MAX_IN_FLIGHT: usize = 3;

/// The resources held: their descriptions, a buffer each (moved to the resource's index by
/// `allocate`), and the assignment of resources to buffers that swaps change.
#[derive(Default)]
struct Resources {
    descs: Vec<ResourceDesc>,
    buffers: Vec<wgpu::Buffer>,
    map: Vec<usize>,
}

/// Bytes of the record buffer at first (16 records of 64 bytes); more grow it to the next
/// power of two.
const RECORD_BUF_FIRST: u64 = 16 * 64;

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
    /// By kernel, as written, made at first use.
    pipelines: HashMap<&'static str, Pipeline>,
    /// The shader modules made so far, by file.
    modules: HashMap<&'static str, wgpu::ShaderModule>,
    /// Kernel files and snippets that replace the built-in ones (`FLUID_WGPU_SHADER_DIR`).
    overrides: swirly_shaders::Overrides,
    /// By kernel and the slots (a bit each) it stores in `f16`, made at first use.
    variants: HashMap<(&'static str, u32), wgpu::ComputePipeline>,
    /// How those variants hold f16: natively where the adapter has `shader-f16`, else packed.
    half_storage: HalfStorage,
    workgroup: (u32, u32),
    uniform_buf: wgpu::Buffer,
    /// The model uniform written to `uniform_buf` (the last schedule's).
    uniform: Option<[u8; swirly_ir::schedule::UNIFORM_BYTES]>,
    step_buf: wgpu::Buffer,
    record_buf: wgpu::Buffer,
    params_buf: wgpu::Buffer,
    partials_buf: wgpu::Buffer,
    results_buf: wgpu::Buffer,
    results_read: wgpu::Buffer,
    /// The read-back buffer of `download_at` reads up to [`backend::Gather::KEPT_BYTES`], made at the
    /// first and kept.
    gather_read: Option<wgpu::Buffer>,
    /// Reads `queue_download_at` and `queue_download` submitted and nobody has taken yet
    /// (dropped ones are freed once mapped).
    reads: ReadQueue<ReadSlot>,
    /// Read-back buffers of [`backend::Gather::KEPT_BYTES`] from finished queued reads.
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
    /// How long a wait polls the device before it blocks ([`swirly_ir::wait`]).
    spin: Duration,
    /// Step submissions not yet seen done, oldest first, each with the flag its
    /// `on_submitted_work_done` callback sets (at most [`MAX_IN_FLIGHT`]).
    in_flight: VecDeque<(wgpu::SubmissionIndex, Arc<AtomicBool>)>,
    /// The most bytes held at once ([`swirly_ir::MemoryReport::peak`]), noted where buffers
    /// are made.
    peak: u64,
}

impl std::fmt::Debug for WgpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuBackend").field("adapter", &self.adapter).finish_non_exhaustive()
    }
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
            // f16 storage where the adapter has it (`storage.format = "f16"`).
            required_features: features & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16),
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
        let uniform_buf = uniform_buffer(&device, "fluid.uniform", swirly_ir::schedule::UNIFORM_BYTES as u64, u);
        let step_buf = uniform_buffer(&device, "fluid.step", 16, u);
        let record_buf = uniform_buffer(&device, "fluid.records", RECORD_BUF_FIRST, s);
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
        let half_storage = if device.features().contains(wgpu::Features::SHADER_F16) {
            HalfStorage::Native
        } else {
            HalfStorage::Packed
        };
        let mut backend = WgpuBackend {
            device,
            queue,
            adapter: AdapterSummary { half: half_storage, ..summary(&info, features) },
            timestamps,
            shared,
            align,
            max_binding: limits.max_storage_buffer_binding_size.min(limits.max_buffer_size),
            pipelines: HashMap::new(),
            modules: HashMap::new(),
            overrides: crate::device::shader_overrides()?,
            variants: HashMap::new(),
            half_storage,
            workgroup: workgroup_from_env()?,
            uniform_buf,
            uniform: None,
            step_buf,
            record_buf,
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
            peak: 0,
        };
        if let Some(storage) =
            HalfStorage::from_env().map_err(|v| Error::invalid("FLUID_F16", v, "expected `packed` or `native`"))?
        {
            backend.set_half_storage(storage)?;
        }
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
    /// returns them (see `swirly_core::grid`), usage `STORAGE | COPY_SRC | COPY_DST`. Steps
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

    /// How kernels hold fields in f16 storage (`storage.format = "f16"`) here: natively
    /// (`shader-f16`) where the adapter has it, else packed two halves a word, which any
    /// adapter runs. The stored bytes are the same either way.
    pub fn half_storage(&self) -> HalfStorage {
        self.half_storage
    }

    /// Hold f16 fields `storage`'s way from the next step on (e.g. packed on an adapter that
    /// could run them natively, to compare the two). `Native` on an adapter without
    /// `shader-f16` is [`Error::Unsupported`].
    pub fn set_half_storage(&mut self, storage: HalfStorage) -> Result<()> {
        if storage == HalfStorage::Native && !self.device.features().contains(wgpu::Features::SHADER_F16) {
            return Err(Error::Unsupported {
                what: "native f16 storage".into(),
                by: format!("{}: it lacks the shader-f16 feature; f16 fields are packed", self.adapter.name),
            });
        }
        if storage != self.half_storage {
            self.plans.drain();
            self.variants.clear();
            self.half_storage = storage;
        }
        Ok(())
    }

    fn check_errors(&self, what: &str) -> Result<()> {
        let mut errors = self.errors.lock().map_err(|_| backend_err("error log poisoned"))?;
        if errors.is_empty() {
            return Ok(());
        }
        let all = errors.drain(..).collect::<Vec<_>>().join("; ");
        Err(backend_err(format!("{what}: {all}")))
    }
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
        let desc = backend::desc(&self.res.descs, id, NAME)?.clone();
        self.scoped("download", |b| b.read_scoped(id, |m| desc.values_le(m)))
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
        self.poll_read(read)
    }

    fn queued_reads(&self) -> usize {
        self.reads.len()
    }

    fn wait_download(&mut self, read: PendingRead) -> Result<Vec<f32>> {
        self.wait_read(read)
    }

    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        inputs.check_records()?;
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

    fn working_memory(&self, resources: &[ResourceDesc], schedules: &[Schedule]) -> u64 {
        let owners = resource::owners(resources);
        // An empty resource still gets a buffer of 16 bytes.
        let rounding: u64 = (resources.iter().enumerate())
            .filter(|(i, r)| owners[*i] == *i && r.bytes() < 16)
            .map(|(_, r)| 16 - r.bytes())
            .sum();
        let target = Target { param_align: self.align as u32, workgroup: self.workgroup };
        let params =
            (self.align as u64 * 16).max(lower::params_bytes(schedules, resources, &target).next_power_of_two());
        let records = RECORD_BUF_FIRST.max(backend::MAX_RECORD_BYTES as u64).next_power_of_two();
        let fixed = swirly_ir::schedule::UNIFORM_BYTES as u64
            + 16
            + 4 * u64::from(REDUCE_MAX_PARTIALS)
            + 2 * 4 * RESULT_SLOTS as u64;
        // The kept read-back buffers, and one whole resource read through its own.
        let reads = (1 + reads::SPARE_READS as u64) * backend::Gather::KEPT_BYTES;
        let largest = resources.iter().map(ResourceDesc::bytes).max().unwrap_or(0);
        rounding + params + records + fixed + reads + largest
    }

    fn memory(&self) -> Result<MemoryReport> {
        let (resources, total) = self.held();
        Ok(MemoryReport { resources, total, reserved: total, peak: self.peak.max(total) })
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
    /// Each resource's bytes (its owner's buffer) and everything held: resources, the
    /// backend's own buffers, kept and queued read-back buffers.
    fn held(&self) -> (Vec<(&'static str, u64)>, u64) {
        let owners = resource::owners(&self.res.descs);
        let resources: Vec<(&'static str, u64)> = (self.res.descs.iter().enumerate())
            .map(|(i, r)| (r.name, if owners[i] == i { self.res.buffers[self.res.map[i]].size() } else { 0 }))
            .collect();
        let own = [
            &self.uniform_buf,
            &self.step_buf,
            &self.record_buf,
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
        (resources, total)
    }

    /// Note a peak: what the backend holds now and `extra` bytes beside it (a buffer made for
    /// one operation, or one made before the one it replaces is dropped).
    pub(super) fn note_peak(&mut self, extra: u64) {
        self.peak = self.peak.max(self.held().1 + extra);
    }

    fn allocate_scoped(&mut self, resources: &[ResourceDesc]) -> Result<()> {
        if let Some(r) = resources.iter().find(|r| r.bytes() > self.max_binding) {
            return Err(Error::OutOfMemory {
                what: format!("resource `{}`", r.name),
                bytes: r.bytes(),
                reason: format!("{} binds at most {} bytes per buffer", self.adapter.name, self.max_binding),
            });
        }
        // Transient resources share their group owner's buffer and keep nothing.
        let owners = resource::owners(resources);
        let same = |i: usize| resources[i].shares().is_none() && self.res.descs.get(i) == Some(&resources[i]);
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let made: Vec<Option<wgpu::Buffer>> = resources
            .iter()
            .enumerate()
            .map(|(i, r)| {
                (owners[i] == i && !same(i)).then(|| {
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
        // The new buffers stand beside the old until these are dropped.
        self.note_peak(made.iter().flatten().map(wgpu::Buffer::size).sum());
        if let Some(e) = pollster::block_on(scope.pop()) {
            let bytes = made.iter().zip(resources).filter(|(m, _)| m.is_some()).map(|(_, r)| r.bytes()).sum();
            return Err(Error::OutOfMemory {
                what: format!("{} resources", resources.len()),
                bytes,
                reason: format!("{}: {e}", self.adapter.name),
            });
        }
        // Each resource's buffer at its own index: the one it had (wherever swaps had put it),
        // or its new one. Bind groups and plans name buffers by index: all dropped.
        let old = std::mem::take(&mut self.res);
        let buffers = (0..resources.len())
            .map(|i| match &made[owners[i]] {
                Some(new) => new.clone(),
                None => old.buffers[old.map[i]].clone(),
            })
            .collect();
        self.res = Resources { descs: resources.to_vec(), buffers, map: owners };
        self.group1.clear();
        self.plans.drain();
        self.check_errors("allocate")
    }

    fn write_scoped(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
        backend::desc(&self.res.descs, id, NAME)?.check_bytes(bytes.len())?;
        if !bytes.is_empty() {
            // wgpu stages the bytes in a buffer of its own until the next submission.
            self.note_peak(bytes.len() as u64);
            self.queue.write_buffer(&self.res.buffers[self.res.map[id.index()]], 0, bytes);
        }
        Ok(())
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
