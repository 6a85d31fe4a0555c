//! [`VulkanBackend`]: the [`Backend`] over raw Vulkan, in safe code over [`crate::raw`].

mod bandwidth;
mod imp;
mod reads;
mod record;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ash::vk;
use swirly_ir::backend::{self, ReadQueue};
use swirly_ir::lower::PlanCache;
use swirly_ir::schedule::RESULT_SLOTS;
use swirly_ir::uniforms::{PARAMS_MAX_BYTES, REDUCE_MAX_PARTIALS, StepUniform};
use swirly_ir::wait;
use swirly_ir::{Error, ResourceDesc, ResourceId, Result, TimestampTimings};
use swirly_shaders::HalfStorage;

use crate::raw::{self, Buffer, CommandBuffer, Context, Fence, Instance, Location, PoolKind, Recorder};
use crate::{DeviceSummary, QueueChoice, err, setup_lock, summarize, type_rank, with_queue};
use reads::{QueuedRead, ReadSlot};
use record::{KernelPipeline, Recording};

/// Workgroup shape the SPIR-V was generated with (`swirly_shaders::WORKGROUP`).
const WORKGROUP: (u32, u32) = (16, 16);
/// Bytes bound for a parameter block: the largest block of the kernels.
const PARAMS_BINDING: u64 = PARAMS_MAX_BYTES;
/// Submissions that may be in flight; each has its own staging slot for the step inputs.
const RING: usize = 3;
/// Recorded schedules kept. The swaps of a step permute the field-to-buffer assignment with a
/// short period (2 for a plain step, 6 with viscosity), and each assignment needs its own
/// recording of the step and of a diagnostics pass.
const MAX_RECORDINGS: usize = 32;
/// Where the records start in a staging slot (the step uniform sits at 0).
const RECORDS_OFFSET: u64 = 256;

/// An application's Vulkan objects for [`VulkanBackend::from_raw`] (see its safety rules).
#[derive(Clone)]
pub struct RawDevice {
    /// The instance the device was created from.
    pub instance: ash::Instance,
    /// The physical device of the device.
    pub physical_device: vk::PhysicalDevice,
    /// The logical device the backend creates its buffers, pipelines and commands on.
    pub device: ash::Device,
    /// The family of the queue the backend submits to; it must support compute.
    pub queue_family: u32,
    /// Which queue of that family (the device must have been created with it).
    pub queue_index: u32,
    /// Other queue families that use the field buffers, e.g. the renderer's graphics family
    /// while the simulation runs on a compute-only one ("async compute"). The field buffers
    /// are then shared by these families and `queue_family` (`VK_SHARING_MODE_CONCURRENT`), so
    /// no ownership transfer is needed. Empty: exclusive to `queue_family`.
    pub share_with: Vec<u32>,
    /// Whether the device was created with Vulkan 1.2's `timelineSemaphore` feature on. Then
    /// every submission of the backend signals a timeline semaphore
    /// ([`VulkanBackend::timeline`]) and can wait for the application's
    /// ([`VulkanBackend::wait_before_next`]): how work on another queue is ordered with the
    /// simulation's.
    pub timeline_semaphores: bool,
}

impl std::fmt::Debug for RawDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawDevice")
            .field("physical_device", &self.physical_device)
            .field("device", &self.device.handle())
            .field("queue_family", &self.queue_family)
            .field("queue_index", &self.queue_index)
            .field("share_with", &self.share_with)
            .field("timeline_semaphores", &self.timeline_semaphores)
            .finish_non_exhaustive()
    }
}

/// A field's buffer, from [`VulkanBackend::field_buffer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldBuffer {
    /// The buffer; the field's values start at offset 0.
    pub buffer: vk::Buffer,
    /// Bytes of the field's values (4 per value); the buffer may be larger.
    pub bytes: u64,
}

/// One staging slot of the step-input ring.
struct Slot {
    staging: Arc<Buffer>,
    fence: Fence,
    /// Copies this slot's step uniform and records into the device buffers (pre-recorded).
    upload: CommandBuffer,
}

/// The resources held: their descriptions, a buffer each (moved to the resource's index by
/// `allocate`), and the assignment of resources to buffers that swaps change.
#[derive(Default)]
struct Resources {
    descs: Vec<ResourceDesc>,
    buffers: Vec<Arc<Buffer>>,
    map: Vec<usize>,
}

/// The raw Vulkan backend.
///
/// # How a run executes
/// [`Backend::run`](swirly_ir::Backend::run) looks the schedule up among its recordings by (schedule, current assignment
/// of fields to buffers, timing on/off); a miss lowers it (`swirly_ir::lower`) and records
/// one command buffer for the whole plan (descriptor sets for every distinct binding, the
/// parameter blocks in a buffer of its own, a global memory barrier where the plan has one). A
/// hit replays it. Each submission is `[upload(slot), recording]`: the slot's small command
/// buffer copies dt and the records from host-visible staging into device buffers. Up to three
/// submissions are in flight; nothing waits inside a step. Swaps are renames: they change which
/// recording the next step replays, never the data.
pub struct VulkanBackend {
    summary: DeviceSummary,
    ctx: Arc<Context>,
    kernels: HashMap<&'static str, KernelPipeline>,
    /// Kernels with some binding slots in f16 storage (bit `i`: slot `i`), made at first use.
    variants: std::sync::Mutex<HashMap<(&'static str, u32), Arc<raw::Pipeline>>>,
    /// How those kernels hold f16: natively where the device can, else packed.
    half_storage: HalfStorage,
    timestamps: bool,
    align: u64,
    max_binding: u64,
    uniform_buf: Arc<Buffer>,
    /// The model uniform written to `uniform_buf` (the last schedule's).
    uniform: Option<[u8; swirly_ir::schedule::UNIFORM_BYTES]>,
    step_buf: Arc<Buffer>,
    record_buf: Arc<Buffer>,
    partials: Arc<Buffer>,
    results: Arc<Buffer>,
    results_read: Arc<Buffer>,
    /// The staging buffer of `download_at` reads up to [`backend::Gather::KEPT_BYTES`], made at
    /// the first and kept.
    gather_read: Option<Arc<Buffer>>,
    /// Reads `queue_download_at` and `queue_download` submitted and nobody has taken yet
    /// (dropped ones are freed once their copies are done).
    reads: ReadQueue<QueuedRead>,
    /// Slots of finished queued reads, for the next ones.
    spare_reads: Vec<ReadSlot>,
    record_capacity: usize,
    ring: Vec<Slot>,
    next_slot: usize,
    last_slot: Option<usize>,
    /// The one-off submissions' command buffer and fence (uploads, downloads, fills).
    once: CommandBuffer,
    once_fence: Fence,
    /// How long a wait polls its fence before it blocks ([`swirly_ir::wait`]).
    spin: Duration,
    res: Resources,
    recordings: PlanCache<Recording>,
    reduction_slots: usize,
    timing: Option<TimestampTimings>,
}

impl std::fmt::Debug for VulkanBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanBackend").field("device", &self.summary).finish_non_exhaustive()
    }
}

/// Pick a physical device: the one named by `wanted` (substring, case-insensitive), else the best
/// type; only Vulkan ≥ 1.1 devices with a compute queue count.
fn choose_device(
    inst: &Instance,
    wanted: Option<&str>,
    choice: QueueChoice,
) -> Result<(raw::PhysicalDevice, u32, DeviceSummary)> {
    let mut candidates = Vec::new();
    let mut names = Vec::new();
    for pd in inst.physical_devices()? {
        let summary = summarize(&pd.props);
        names.push(summary.name.clone());
        if pd.props.api_version < vk::API_VERSION_1_1 {
            continue;
        }
        let Some((family, summary)) = with_queue(summary, &pd.families, choice) else {
            continue;
        };
        candidates.push((type_rank(pd.props.device_type), pd, family, summary));
    }
    let listed = if names.is_empty() { "none".to_string() } else { names.join(", ") };
    let chosen = match wanted {
        Some(w) => {
            candidates.into_iter().find(|c| c.3.name.to_lowercase().contains(&w.to_lowercase())).ok_or_else(|| {
                Error::Unsupported {
                    what: format!("a Vulkan device named like `{w}` (FLUID_VULKAN_DEVICE)"),
                    by: format!("this machine (devices: {listed})"),
                }
            })?
        }
        None => candidates.into_iter().min_by_key(|c| c.0).ok_or_else(|| Error::Unsupported {
            what: "the vulkan backend".into(),
            by: format!(
                "this machine: no Vulkan 1.1 device with a compute queue (devices: {listed}); install a Vulkan \
                 driver, e.g. Mesa's lavapipe: apt-get install mesa-vulkan-drivers libvulkan1"
            ),
        })?,
    };
    Ok((chosen.1, chosen.2, chosen.3))
}

/// Record into `cb` what `record` records, between a full barrier (every earlier write visible
/// to it) and a barrier that makes its writes visible to the host: what the one-off
/// submissions and the queued reads run.
fn record_for_host(cb: &mut CommandBuffer, record: impl FnOnce(&mut Recorder<'_>) -> Result<()>) -> Result<()> {
    let mut r = cb.begin(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    r.full_barrier();
    record(&mut r)?;
    r.barrier(
        (vk::PipelineStageFlags::ALL_COMMANDS, vk::AccessFlags::MEMORY_WRITE),
        (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
    );
    r.end()
}

/// Bytes of records the step-input buffers hold at first (64 records of 64 bytes); more grow
/// them to the next power of two.
const RECORDS_MIN: usize = 64 * 64;

/// The device buffer of `capacity` bytes of records and the ring of staging slots whose
/// pre-recorded uploads copy the step uniform (into `step_buf`) and the records into it.
fn record_ring(ctx: &Arc<Context>, step_buf: &Arc<Buffer>, capacity: usize) -> Result<(Arc<Buffer>, Vec<Slot>)> {
    let bytes = capacity as u64;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    let record_buf = Arc::new(Buffer::new(ctx, "fluid.records", bytes, usage, Location::Device, false)?);
    let mut ring = Vec::with_capacity(RING);
    for k in 0..RING {
        let staging = Arc::new(Buffer::new(
            ctx,
            &format!("fluid.step_inputs.{k}"),
            RECORDS_OFFSET + bytes,
            vk::BufferUsageFlags::TRANSFER_SRC,
            Location::Upload,
            false,
        )?);
        let mut upload = CommandBuffer::new(ctx, PoolKind::Once)?;
        let mut r = upload.begin(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
        r.full_barrier();
        let step = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: size_of::<StepUniform>() as u64 }];
        let records = [vk::BufferCopy { src_offset: RECORDS_OFFSET, dst_offset: 0, size: bytes }];
        r.copy(&staging, step_buf, &step)?;
        r.copy(&staging, &record_buf, &records)?;
        r.barrier(
            (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
            (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::UNIFORM_READ | vk::AccessFlags::SHADER_READ),
        );
        r.end()?;
        ring.push(Slot { staging, fence: Fence::new(ctx)?, upload });
    }
    Ok((record_buf, ring))
}

impl VulkanBackend {
    /// The first discrete GPU (else integrated, virtual, CPU), or the device whose name contains
    /// the environment variable `FLUID_VULKAN_DEVICE`.
    pub fn new() -> Result<VulkanBackend> {
        let wanted = std::env::var("FLUID_VULKAN_DEVICE").ok();
        VulkanBackend::with_device(wanted.as_deref())
    }

    /// The device whose name contains `name` (case-insensitive), or the best one, on the queue
    /// family `FLUID_VULKAN_QUEUE` picks (see [`QueueChoice`]).
    pub fn with_device(name: Option<&str>) -> Result<VulkanBackend> {
        VulkanBackend::with_choice(name, QueueChoice::from_env()?)
    }

    /// The device whose name contains `name` (case-insensitive), or the best one, on the queue
    /// family `queue` picks there (e.g. the graphics family, to share a game's queue).
    pub fn with_choice(name: Option<&str>, queue: QueueChoice) -> Result<VulkanBackend> {
        let spin = wait::spin_from_env()?;
        let _setup = setup_lock();
        let inst = Instance::new(true)?;
        let (physical, family, summary) = choose_device(&inst, name, queue)?;
        let ctx = Context::create(inst, &physical, family)
            .map_err(|e| err(format!("creating a device on {}: {e}", summary.name)))?;
        VulkanBackend::build(ctx, summary, spin)
    }

    /// The backend on an open device.
    pub(crate) fn build(
        ctx: Arc<Context>,
        mut summary: DeviceSummary,
        spin: Option<Duration>,
    ) -> Result<VulkanBackend> {
        let _setup = setup_lock();
        let spin = spin.unwrap_or_else(|| wait::default_spin(summary.device_type == "Cpu"));
        let limits = ctx.limits();
        let uniform = vk::BufferUsageFlags::UNIFORM_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let buffer = |name: &str, size: u64, usage, location| -> Result<Arc<Buffer>> {
            Ok(Arc::new(Buffer::new(&ctx, name, size, usage, location, false)?))
        };
        let uniform_buf =
            buffer("fluid.uniform", swirly_ir::schedule::UNIFORM_BYTES as u64, uniform, Location::Upload)?;
        let step_buf = buffer("fluid.step", 16, uniform, Location::Device)?;
        let partials = buffer("fluid.partials", 4 * u64::from(REDUCE_MAX_PARTIALS), storage, Location::Device)?;
        let results = buffer(
            "fluid.results",
            4 * RESULT_SLOTS as u64,
            storage | vk::BufferUsageFlags::TRANSFER_SRC,
            Location::Device,
        )?;
        let results_read = buffer(
            "fluid.results_read",
            4 * RESULT_SLOTS as u64,
            vk::BufferUsageFlags::TRANSFER_DST,
            Location::Readback,
        )?;
        let (record_buf, ring) = record_ring(&ctx, &step_buf, RECORDS_MIN)?;
        let half_storage = if ctx.half().is_some() { HalfStorage::Native } else { HalfStorage::Packed };
        summary.half = half_storage;
        let mut backend = VulkanBackend {
            timestamps: summary.timestamps,
            summary,
            kernels: HashMap::new(),
            variants: std::sync::Mutex::new(HashMap::new()),
            half_storage,
            align: PARAMS_BINDING.next_multiple_of(limits.uniform_offset_alignment),
            max_binding: limits.max_storage_range,
            uniform_buf,
            uniform: None,
            step_buf,
            record_buf,
            partials,
            results,
            results_read,
            gather_read: None,
            reads: ReadQueue::new(crate::NAME),
            spare_reads: Vec::new(),
            record_capacity: RECORDS_MIN,
            ring,
            next_slot: 0,
            last_slot: None,
            once: CommandBuffer::new(&ctx, PoolKind::Reusable)?,
            once_fence: Fence::new(&ctx)?,
            spin,
            res: Resources::default(),
            recordings: PlanCache::new(MAX_RECORDINGS),
            reduction_slots: 0,
            timing: None,
            ctx,
        };
        backend.validated("creating the device")?;
        if let Some(storage) =
            HalfStorage::from_env().map_err(|v| Error::invalid("FLUID_F16", v, "expected `packed` or `native`"))?
        {
            backend.set_half_storage(storage)?;
        }
        Ok(backend)
    }

    /// The device in use.
    pub fn device_summary(&self) -> &DeviceSummary {
        &self.summary
    }

    /// Whether the Khronos validation layer is on (through this backend's own messenger; always
    /// `false` on an application's device, see [`VulkanBackend::from_raw`]).
    pub fn validation(&self) -> bool {
        self.ctx.validation()
    }

    /// The device this backend runs on (its own, or the one given to
    /// [`VulkanBackend::from_raw`]).
    pub fn raw_device(&self) -> &ash::Device {
        self.ctx.device()
    }

    /// The queue this backend submits to. An application that shares it must not submit to it
    /// while one of the backend's calls runs.
    pub fn queue(&self) -> vk::Queue {
        self.ctx.queue()
    }

    /// The buffer that holds resource `id` now (a grid field: `FieldId::Density.into()`), to
    /// draw from on the GPU with no read-back: `f32` values laid out as [`Backend::download`](swirly_ir::Backend::download)
    /// returns them (see `swirly_core::grid`), from offset 0, `bytes` long; usage
    /// `STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST`; exclusive to
    /// [`DeviceSummary::queue_family`], or concurrent with the families of
    /// [`RawDevice::share_with`]. Steps ping-pong fields between buffers, so ask again after
    /// every step.
    ///
    /// Work the application submits to [`VulkanBackend::queue`] after a step is ordered after
    /// it; to read the values it needs a barrier in its command buffer from
    /// `COMPUTE_SHADER`/`SHADER_WRITE` to its own stage and access (e.g. `TRANSFER`/
    /// `TRANSFER_READ` to copy the field into an image). Every submission of the backend starts
    /// with a full memory barrier, so its next step waits for what the application submitted
    /// before it, and sees what it wrote: writing to the buffer changes the simulation's state.
    ///
    /// Work on another queue (a renderer's graphics queue beside a compute-only one) needs the
    /// buffers shared with its family ([`RawDevice::share_with`]) and timeline semaphores
    /// ([`RawDevice::timeline_semaphores`]): it waits for [`VulkanBackend::timeline`]'s value
    /// before it reads, and signals one of its own that the backend waits for
    /// ([`VulkanBackend::wait_before_next`]) before the next step writes.
    pub fn field_buffer(&self, id: impl Into<ResourceId>) -> Result<FieldBuffer> {
        let id = id.into();
        let desc = backend::desc(&self.res.descs, id, crate::NAME)?;
        Ok(FieldBuffer { buffer: self.buffer_of(id).handle(), bytes: desc.bytes() })
    }

    /// With [`RawDevice::timeline_semaphores`]: the backend's timeline semaphore and the value
    /// its latest submission signals (0 before any). Every submission (steps, uploads, reads)
    /// signals the next value, so work on another queue that waits for this value runs after
    /// everything the backend submitted so far, and sees its writes (a semaphore wait is a full
    /// memory dependency). `None` without timeline semaphores.
    pub fn timeline(&self) -> Option<(vk::Semaphore, u64)> {
        self.ctx.timeline()
    }

    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The buffer behind resource `id` now (after the swaps so far).
    fn buffer_of(&self, id: ResourceId) -> &Arc<Buffer> {
        &self.res.buffers[self.res.map[id.index()]]
    }

    fn validated(&self, what: &str) -> Result<()> {
        self.ctx.take_errors(what)
    }

    /// Record, submit and wait for a one-off command buffer (uploads, downloads, fills).
    fn once(&mut self, what: &str, record: impl FnOnce(&mut Recorder<'_>) -> Result<()>) -> Result<()> {
        record_for_host(&mut self.once, record)?;
        raw::submit(&self.ctx, what, &[&self.once], &self.once_fence)?;
        self.once_fence.wait(self.spin, what)?;
        self.once.release();
        self.validated(what)
    }

    /// Wait for every submission in flight.
    fn wait_all(&mut self) -> Result<()> {
        for slot in &self.ring {
            slot.fence.wait(self.spin, "waiting for the GPU")?;
        }
        // Queued reads copy out of the fields: done before a field buffer can go. A later
        // poll finds them done.
        for r in self.reads.slots() {
            r.slot.fence.wait(self.spin, "waiting for a queued read")?;
        }
        Ok(())
    }

    /// How kernels hold fields in f16 storage (`storage.format = "f16"`) here: natively
    /// (`shaderFloat16` and 16-bit storage buffers) where the device has them, else packed two
    /// halves a word, which any device runs. The stored bytes are the same either way.
    pub fn half_storage(&self) -> HalfStorage {
        self.half_storage
    }

    /// Hold f16 fields `storage`'s way from the next step on (e.g. packed on a device that
    /// could run them natively, to compare the two). `Native` on a device without
    /// `shaderFloat16` and 16-bit storage buffers is [`Error::Unsupported`].
    pub fn set_half_storage(&mut self, storage: HalfStorage) -> Result<()> {
        if storage == HalfStorage::Native && self.ctx.half().is_none() {
            return Err(Error::Unsupported {
                what: "native f16 storage".into(),
                by: format!(
                    "{}: no shaderFloat16 and 16-bit storage buffers; f16 fields are packed",
                    self.summary.name
                ),
            });
        }
        if storage != self.half_storage {
            self.wait_all()?;
            self.recordings.drain();
            self.variants.lock().unwrap_or_else(|e| e.into_inner()).clear();
            self.half_storage = storage;
        }
        Ok(())
    }

    /// Make room for `bytes` of records: a bigger device buffer and staging ring, and every
    /// recording (whose descriptors point at the old buffer) dropped.
    fn grow_records(&mut self, bytes: usize) -> Result<()> {
        if bytes <= self.record_capacity {
            return Ok(());
        }
        let capacity = bytes.next_power_of_two();
        self.wait_all()?;
        self.recordings.drain();
        self.ring.clear();
        (self.record_buf, self.ring) = record_ring(&self.ctx, &self.step_buf, capacity)?;
        self.record_capacity = capacity;
        self.next_slot = 0;
        self.last_slot = None;
        Ok(())
    }
}
