//! [`VulkanBackend`]: the [`Backend`] over raw Vulkan.

use std::collections::HashMap;
use std::ffi::CString;
use std::time::Duration;

use ash::vk;
use fluid_core::backend::{Gather, PendingRead, ReadHandle, ReadPlan, f32s_le, pick};
use fluid_core::schedule::{Access, Binding, Domain, Op, Params, ShaderEntry};
use fluid_core::uniforms::{REDUCE_MAX_PARTIALS, ReduceParams, SplatGpu, StepUniform};
use fluid_core::wait;
use fluid_core::{Backend, Error, FieldId, Grid, KernelTiming, Result, Schedule, StepInputs, TimestampTimings};
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc};

use crate::{
    DeviceSummary, Instance, NAME, QueueChoice, setup_lock, spirv, summarize, type_rank, vk_err, with_family,
    with_queue,
};

/// Workgroup shape the SPIR-V was generated with (`fluid_shaders::WORKGROUP`).
const WORKGROUP: (u32, u32) = (16, 16);
const RESULT_SLOTS: u64 = 16;
/// Bytes bound for a parameter block: the largest block of `fluid_core::uniforms`.
const PARAMS_BINDING: u64 = fluid_core::uniforms::PARAMS_MAX_BYTES;
/// Submissions that may be in flight; each has its own staging slot for the step inputs.
const RING: usize = 3;
/// Recorded schedules kept. The swaps of a step permute the field-to-buffer assignment with a
/// short period (2 for a plain step, 6 with viscosity: the velocity cycles through three
/// buffers while density ping-pongs), and each assignment needs its own recording of the step and
/// of a diagnostics pass.
const MAX_RECORDINGS: usize = 32;
/// Where the splats start in a staging slot (the step uniform sits at 0).
const SPLATS_OFFSET: u64 = 256;
/// How long a wait for the GPU may take before it is reported as a failure, not a hang.
const WAIT_NS: u64 = 300 * 1_000_000_000;
/// Physical-buffer ids of the reduction buffers (field buffers are `0..FieldId::COUNT`).
const PARTIALS: usize = FieldId::COUNT;
const RESULTS: usize = FieldId::COUNT + 1;

fn err(message: impl Into<String>) -> Error {
    Error::Backend { backend: NAME, message: message.into() }
}

/// A buffer and its memory.
struct Buf {
    buffer: vk::Buffer,
    alloc: Option<Allocation>,
    size: u64,
}

struct Pipeline {
    entry: ShaderEntry,
    set0: vk::DescriptorSetLayout,
    set1: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
}

/// One staging slot of the step-input ring.
struct Slot {
    staging: Buf,
    fence: vk::Fence,
    pending: bool,
    /// Copies this slot's step uniform and splats into the device buffers (pre-recorded).
    upload: vk::CommandBuffer,
}

/// What a queued read submits with, kept for the next one when it is done: on an H100,
/// creating a fence took about 0.3 ms and destroying one with its command buffer 0.25 ms,
/// ten times the rest of a read's cost.
struct ReadSlot {
    /// Unsignalled while the slot is spare.
    fence: vk::Fence,
    /// From `read_pool`, whose command buffers reset when begun again.
    cb: vk::CommandBuffer,
    /// A read-back buffer of [`Gather::KEPT_BYTES`].
    buf: Buf,
}

/// A read `queue_download_at` or `queue_download` submitted: its copy, and what turns the
/// copied values into the ones asked for.
struct QueuedRead {
    handle: ReadHandle,
    slot: ReadSlot,
    /// The read-back buffer of a read larger than the slot's, else `None`.
    big: Option<Buf>,
    plan: ReadPlan,
}

/// Slots of finished queued reads kept for the next ones; more are destroyed.
const SPARE_READS: usize = 4;

/// A schedule recorded into a command buffer for one assignment of fields to buffers.
struct Recording {
    schedule: Schedule,
    start: [usize; FieldId::COUNT],
    end: [usize; FieldId::COUNT],
    timed: bool,
    cb: vk::CommandBuffer,
    pool: vk::DescriptorPool,
    params: Buf,
    /// Timestamp queries: the pool and the entry of each (begin, end) pair.
    queries: Option<(vk::QueryPool, Vec<&'static str>)>,
    slots: usize,
}

struct Fields {
    grid: Grid,
    buffers: Vec<Buf>,
    map: [usize; FieldId::COUNT],
}

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

/// The raw Vulkan backend.
///
/// # How a run executes
/// [`Backend::run`] looks the schedule up among its recordings by (schedule, current assignment
/// of fields to buffers, timing on/off); a miss records one command buffer for the whole
/// schedule (descriptor sets for every distinct binding, parameter blocks in a buffer of its own,
/// a global memory barrier only before a dispatch that reads or writes a buffer an earlier
/// dispatch since the last barrier wrote, or writes one an earlier dispatch read). A hit replays
/// it. Each submission is `[upload(slot), recording]`: the slot's small command buffer copies
/// dt and the splats from host-visible staging into device buffers. Up to three submissions are
/// in flight; nothing waits inside a step. Swaps are renames: they change which recording the
/// next step replays, never the data.
pub struct VulkanBackend {
    summary: DeviceSummary,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    /// Whether the backend created the device (else it is an application's, left alone).
    owned: bool,
    /// The queue families that share the field buffers (`RawDevice::share_with` and the
    /// backend's own); empty: the buffers are exclusive to the backend's family.
    share: Vec<u32>,
    /// Signalled by every submission with the next value ([`VulkanBackend::timeline`]); null
    /// without timeline semaphores.
    timeline: vk::Semaphore,
    /// The value the latest submission signals.
    timeline_value: u64,
    /// Timeline semaphores and values of the application's that the next submission waits for.
    waits: Vec<(vk::Semaphore, u64)>,
    queue: vk::Queue,
    allocator: Option<Allocator>,
    command_pool: vk::CommandPool,
    pipelines: HashMap<&'static str, Pipeline>,
    timestamps: bool,
    timestamp_period_ns: f64,
    align: u64,
    max_binding: u64,
    grid_buf: Buf,
    step_buf: Buf,
    splat_buf: Buf,
    partials: Buf,
    results: Buf,
    results_read: Buf,
    /// The staging buffer of `download_at` reads up to [`Gather::KEPT_BYTES`], made at the
    /// first and kept (null until then).
    gather_read: Buf,
    /// Reads `queue_download_at` and `queue_download` submitted and nobody has taken yet
    /// (dropped ones are freed once their copies are done).
    reads: Vec<QueuedRead>,
    /// Slots of finished queued reads, for the next ones.
    spare_reads: Vec<ReadSlot>,
    /// The command pool of the queued reads' command buffers (individually reset).
    read_pool: vk::CommandPool,
    splat_capacity: usize,
    ring: Vec<Slot>,
    next_slot: usize,
    last_slot: Option<usize>,
    once_fence: vk::Fence,
    /// How long a wait polls its fence before it blocks ([`fluid_core::wait`]).
    spin: Duration,
    fields: Option<Fields>,
    recordings: Vec<Recording>,
    reduction_slots: usize,
    timing: Option<TimestampTimings>,
    /// Declared last: destroyed after every object above (see `Drop`).
    inst: Instance,
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
) -> Result<(vk::PhysicalDevice, u32, DeviceSummary)> {
    // SAFETY: `inst.instance` is live for the duration of this function.
    let devices =
        unsafe { inst.instance.enumerate_physical_devices() }.map_err(|e| vk_err("vkEnumeratePhysicalDevices", e))?;
    let mut candidates = Vec::new();
    let mut names = Vec::new();
    for pd in devices {
        // SAFETY: `pd` was returned by this live instance.
        let props = unsafe { inst.instance.get_physical_device_properties(pd) };
        let summary = summarize(&props);
        names.push(summary.name.clone());
        if props.api_version < vk::API_VERSION_1_1 {
            continue;
        }
        // SAFETY: as above.
        let families = unsafe { inst.instance.get_physical_device_queue_family_properties(pd) };
        let Some((family, summary)) = with_queue(summary, &families, choice) else {
            continue;
        };
        candidates.push((type_rank(props.device_type), pd, family, summary));
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
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
        // SAFETY: `info` and the arrays it points to outlive the call; `physical` is valid.
        let device = unsafe { inst.instance.create_device(physical, &info, None) }
            .map_err(|e| vk_err(&format!("vkCreateDevice on {}", summary.name), e))?;
        // SAFETY: queue 0 of `family` was requested at device creation.
        let queue = unsafe { device.get_device_queue(family, 0) };
        VulkanBackend::build(inst, physical, device, queue, summary, spin, true)
    }

    /// The backend on an application's Vulkan device, to share its GPU memory: a renderer can
    /// draw from the simulation's buffers ([`VulkanBackend::field_buffer`]) with no copy back to
    /// the CPU. The backend submits to `raw.queue_family`'s queue `raw.queue_index`, which must
    /// support compute; submitting the application's work that reads the fields to the same
    /// queue orders it after the steps (see `field_buffer`); work on other queues is ordered
    /// through timeline semaphores, on buffers shared with their families
    /// ([`RawDevice::share_with`], [`RawDevice::timeline_semaphores`]). It enables nothing on
    /// the device: the kernels need Vulkan 1.1 and no feature or extension. Per-kernel timings
    /// need the family's timestamps. Dropping the backend waits for that queue to be idle and
    /// destroys what the backend made, never the device or the instance.
    ///
    /// The application's validation layer and messenger, if it set any up, see the backend's
    /// calls; [`VulkanBackend::validation`] is `false` here, as the backend has no messenger of
    /// its own.
    ///
    /// # Safety
    /// - `raw.instance`, `raw.physical_device` and `raw.device` are valid, the device was
    ///   created from that physical device of that instance, and all of them (and the Vulkan
    ///   loader the instance was loaded from) outlive the backend.
    /// - The instance was created with `apiVersion` 1.1 or later.
    /// - The device was created with at least `raw.queue_index + 1` queues of
    ///   `raw.queue_family`, and with the `timelineSemaphore` feature on if
    ///   `raw.timeline_semaphores` says so.
    /// - That queue is not used by another thread while one of the backend's calls runs
    ///   (Vulkan requires queue submissions to be externally synchronised), nor is the device
    ///   waited idle by another thread then.
    /// - The application does not destroy or free anything the backend made (its buffers
    ///   included) and does not use a field buffer after the backend is dropped.
    pub unsafe fn from_raw(raw: RawDevice) -> Result<VulkanBackend> {
        let spin = wait::spin_from_env()?;
        let _setup = setup_lock();
        let RawDevice {
            instance,
            physical_device: physical,
            device,
            queue_family: family,
            queue_index,
            share_with,
            timeline_semaphores,
        } = raw;
        // SAFETY: the caller guarantees a valid physical device of this instance.
        let props = unsafe { instance.get_physical_device_properties(physical) };
        // SAFETY: as above.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let summary = summarize(&props);
        if props.api_version < vk::API_VERSION_1_1 {
            return Err(Error::Unsupported {
                what: "the vulkan backend".into(),
                by: format!("{} (Vulkan {}; the kernels need 1.1)", summary.name, summary.api_version),
            });
        }
        let Some(f) = usize::try_from(family).ok().and_then(|i| families.get(i)) else {
            return Err(Error::invalid(
                "queue_family",
                family,
                format!("{} has {} queue families", summary.name, families.len()),
            ));
        };
        if !f.queue_flags.contains(vk::QueueFlags::COMPUTE) {
            return Err(Error::invalid(
                "queue_family",
                family,
                format!("that family of {} has no compute ({:?})", summary.name, f.queue_flags),
            ));
        }
        if queue_index >= f.queue_count {
            return Err(Error::invalid(
                "queue_index",
                queue_index,
                format!("queue family {family} of {} has {} queues", summary.name, f.queue_count),
            ));
        }
        if let Some(&other) = share_with.iter().find(|&&x| usize::try_from(x).map_or(true, |i| i >= families.len())) {
            return Err(Error::invalid(
                "share_with",
                other,
                format!("{} has {} queue families", summary.name, families.len()),
            ));
        }
        if timeline_semaphores && props.api_version < vk::API_VERSION_1_2 {
            return Err(Error::Unsupported {
                what: "timeline semaphores".into(),
                by: format!("{} (Vulkan {}; they need 1.2)", summary.name, summary.api_version),
            });
        }
        let mut share: Vec<u32> = std::iter::once(family).chain(share_with).collect();
        share.sort_unstable();
        share.dedup();
        if share.len() == 1 {
            share.clear();
        }
        let summary = with_family(summary, f, family);
        // SAFETY: the caller guarantees the device has this queue (its index is checked against
        // the family's count above, and the caller that the device requested that many).
        let queue = unsafe { device.get_device_queue(family, queue_index) };
        let mut backend =
            VulkanBackend::build(Instance::borrowed(instance), physical, device, queue, summary, spin, false)?;
        backend.share = share;
        if timeline_semaphores {
            let mut kind = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
            // SAFETY: the device is live and has timeline semaphores on (the caller's guarantee);
            // `info` and its chain outlive the call. `Drop` destroys it.
            backend.timeline = unsafe { backend.device.create_semaphore(&info, None) }
                .map_err(|e| vk_err("vkCreateSemaphore (timeline)", e))?;
        }
        Ok(backend)
    }

    /// The backend on an open device; `owned`: the backend created the device and destroys it.
    fn build(
        inst: Instance,
        physical: vk::PhysicalDevice,
        device: ash::Device,
        queue: vk::Queue,
        summary: DeviceSummary,
        spin: Option<Duration>,
        owned: bool,
    ) -> Result<VulkanBackend> {
        let family = summary.queue_family.ok_or_else(|| err("no queue family chosen"))?;
        let spin = spin.unwrap_or_else(|| wait::default_spin(summary.device_type == "Cpu"));
        // SAFETY: `physical` belongs to this live instance.
        let limits = unsafe { inst.instance.get_physical_device_properties(physical) }.limits;
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: inst.instance.clone(),
            device: device.clone(),
            physical_device: physical,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                if owned {
                    // SAFETY: nothing was created from the device yet.
                    unsafe { device.destroy_device(None) };
                }
                return Err(err(format!("gpu-allocator: {e}")));
            }
        };
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        let null = || Buf { buffer: vk::Buffer::null(), alloc: None, size: 0 };
        let mut backend = VulkanBackend {
            summary,
            physical,
            device,
            owned,
            share: Vec::new(),
            timeline: vk::Semaphore::null(),
            timeline_value: 0,
            waits: Vec::new(),
            queue,
            allocator: Some(allocator),
            command_pool: vk::CommandPool::null(),
            pipelines: HashMap::new(),
            timestamps: false,
            timestamp_period_ns: f64::from(limits.timestamp_period),
            align: PARAMS_BINDING.next_multiple_of(limits.min_uniform_buffer_offset_alignment.max(1)),
            max_binding: u64::from(limits.max_storage_buffer_range),
            grid_buf: null(),
            step_buf: null(),
            splat_buf: null(),
            partials: null(),
            results: null(),
            results_read: null(),
            gather_read: null(),
            reads: Vec::new(),
            spare_reads: Vec::new(),
            read_pool: vk::CommandPool::null(),
            splat_capacity: 0,
            ring: Vec::new(),
            next_slot: 0,
            last_slot: None,
            once_fence: vk::Fence::null(),
            spin,
            fields: None,
            recordings: Vec::new(),
            reduction_slots: 0,
            timing: None,
            inst,
        };
        backend.timestamps = backend.summary.timestamps;
        // From here on `Drop` cleans up whatever was created.
        // SAFETY: the device is live; the create info is valid.
        backend.command_pool = unsafe { backend.device.create_command_pool(&pool_info, None) }
            .map_err(|e| vk_err("vkCreateCommandPool", e))?;
        let read_pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: the device is live; the create info is valid.
        backend.read_pool = unsafe { backend.device.create_command_pool(&read_pool_info, None) }
            .map_err(|e| vk_err("vkCreateCommandPool", e))?;
        backend.once_fence = backend.fence()?;
        let uniform = vk::BufferUsageFlags::UNIFORM_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        backend.grid_buf = backend.buffer("fluid.grid", 32, uniform, MemoryLocation::CpuToGpu)?;
        backend.step_buf = backend.buffer("fluid.step", 16, uniform, MemoryLocation::GpuOnly)?;
        backend.partials =
            backend.buffer("fluid.partials", 4 * u64::from(REDUCE_MAX_PARTIALS), storage, MemoryLocation::GpuOnly)?;
        backend.results = backend.buffer(
            "fluid.results",
            4 * RESULT_SLOTS,
            storage | vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::GpuOnly,
        )?;
        backend.results_read = backend.buffer(
            "fluid.results_read",
            4 * RESULT_SLOTS,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        )?;
        backend.build_pipelines()?;
        backend.grow_splats(64)?;
        backend.validated("creating the device")?;
        Ok(backend)
    }

    /// The device in use.
    pub fn device_summary(&self) -> &DeviceSummary {
        &self.summary
    }

    /// Whether the Khronos validation layer is on (through this backend's own messenger; always
    /// `false` on an application's device, see [`VulkanBackend::from_raw`]).
    pub fn validation(&self) -> bool {
        self.inst.validation()
    }

    /// The device this backend runs on (its own, or the one given to
    /// [`VulkanBackend::from_raw`]).
    pub fn raw_device(&self) -> &ash::Device {
        &self.device
    }

    /// The queue this backend submits to. An application that shares it must not submit to it
    /// while one of the backend's calls runs.
    pub fn queue(&self) -> vk::Queue {
        self.queue
    }

    /// The buffer that holds `field` now, to draw from on the GPU with no read-back: `f32`
    /// values laid out as [`Backend::download`] returns them (see `fluid_core::grid`), from
    /// offset 0, `bytes` long; usage `STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST`; exclusive
    /// to [`DeviceSummary::queue_family`], or concurrent with the families of
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
    pub fn field_buffer(&self, field: FieldId) -> Result<FieldBuffer> {
        let f = self.fields()?;
        Ok(FieldBuffer { buffer: f.buffers[f.map[field.index()]].buffer, bytes: f.grid.len(field) as u64 * 4 })
    }

    /// With [`RawDevice::timeline_semaphores`]: the backend's timeline semaphore and the value
    /// its latest submission signals (0 before any). Every submission (steps, uploads, reads)
    /// signals the next value, so work on another queue that waits for this value runs after
    /// everything the backend submitted so far, and sees its writes (a semaphore wait is a full
    /// memory dependency). `None` without timeline semaphores.
    pub fn timeline(&self) -> Option<(vk::Semaphore, u64)> {
        (self.timeline != vk::Semaphore::null()).then_some((self.timeline, self.timeline_value))
    }

    /// With [`RawDevice::timeline_semaphores`]: make the backend's next submission wait until
    /// the application's timeline `semaphore` reaches `value`, e.g. the signal of a renderer's
    /// submission on another queue that reads a field buffer, so that the next step does not
    /// overwrite it meanwhile. Waits asked for before the same submission are all waited for.
    /// An error without timeline semaphores. A wait the application never signals makes the
    /// backend's next wait for the device fail after its deadline (300 s), not hang.
    ///
    /// # Safety
    /// `semaphore` is a timeline semaphore of the backend's device, alive until the backend's
    /// next submission has finished (e.g. until [`Backend::finish`] returns or the backend is
    /// dropped).
    pub unsafe fn wait_before_next(&mut self, semaphore: vk::Semaphore, value: u64) -> Result<()> {
        if self.timeline == vk::Semaphore::null() {
            return Err(Error::Unsupported {
                what: "wait_before_next".into(),
                by: "a backend without timeline semaphores (RawDevice::timeline_semaphores)".into(),
            });
        }
        if semaphore == vk::Semaphore::null() {
            return Err(Error::invalid("semaphore", "VK_NULL_HANDLE", "a timeline semaphore of the device"));
        }
        self.waits.push((semaphore, value));
        Ok(())
    }

    fn validated(&self, what: &str) -> Result<()> {
        self.inst.take_errors(what)
    }

    fn allocator(&mut self) -> Result<&mut Allocator> {
        self.allocator.as_mut().ok_or_else(|| err("the allocator is gone"))
    }

    fn fence(&self) -> Result<vk::Fence> {
        // SAFETY: the device is live; the create info is valid.
        unsafe { self.device.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(|e| vk_err("vkCreateFence", e))
    }

    /// A buffer with memory bound. Host-visible locations come mapped (gpu-allocator picks
    /// coherent memory for them).
    fn buffer(&mut self, name: &str, size: u64, usage: vk::BufferUsageFlags, location: MemoryLocation) -> Result<Buf> {
        self.buffer_shared(name, size, usage, location, false)
    }

    /// [`VulkanBackend::buffer`]; `shared`: used by the queue families of `self.share` too
    /// (the field buffers).
    fn buffer_shared(
        &mut self,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
        shared: bool,
    ) -> Result<Buf> {
        let mut info = vk::BufferCreateInfo::default().size(size.max(16)).usage(usage);
        if shared && !self.share.is_empty() {
            info = info.sharing_mode(vk::SharingMode::CONCURRENT).queue_family_indices(&self.share);
        }
        // SAFETY: the device is live; the create info is valid.
        let buffer = unsafe { self.device.create_buffer(&info, None) }.map_err(|e| vk_err("vkCreateBuffer", e))?;
        // SAFETY: `buffer` was just created from this device.
        let requirements = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        let desc = AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        };
        let alloc = match self.allocator()?.allocate(&desc) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unused and has no memory bound.
                unsafe { self.device.destroy_buffer(buffer, None) };
                return Err(match e {
                    gpu_allocator::AllocationError::OutOfMemory => {
                        err(format!("out of device memory for `{name}` ({size} bytes)"))
                    }
                    e => err(format!("allocating `{name}` ({size} bytes): {e}")),
                });
            }
        };
        // SAFETY: the allocation satisfies `requirements` of this buffer, is not bound to anything
        // else at this range, and outlives the buffer (both are freed together in `free`).
        let bound = unsafe { self.device.bind_buffer_memory(buffer, alloc.memory(), alloc.offset()) };
        let buf = Buf { buffer, alloc: Some(alloc), size: size.max(16) };
        if let Err(e) = bound {
            self.free(buf);
            return Err(vk_err("vkBindBufferMemory", e));
        }
        Ok(buf)
    }

    /// Destroy a buffer and free its memory (the GPU must be done with it).
    fn free(&mut self, mut buf: Buf) {
        if buf.buffer != vk::Buffer::null() {
            // SAFETY: the caller guarantees no pending command uses the buffer; it is destroyed once.
            unsafe { self.device.destroy_buffer(buf.buffer, None) };
        }
        if let (Some(alloc), Some(a)) = (buf.alloc.take(), self.allocator.as_mut()) {
            // Freeing only fails for an allocation of another allocator; nothing to recover.
            let _ = a.free(alloc);
        }
    }

    fn build_pipelines(&mut self) -> Result<()> {
        let missing = spirv::missing();
        if !missing.is_empty() {
            return Err(err(format!("no SPIR-V for {} (run `cargo xtask shaders`)", missing.join(", "))));
        }
        for entry in ShaderEntry::all() {
            let [g0, g1] = set_bindings(&entry).map(|set| {
                set.into_iter()
                    .map(|(i, t)| {
                        vk::DescriptorSetLayoutBinding::default()
                            .binding(i)
                            .descriptor_type(t)
                            .descriptor_count(1)
                            .stage_flags(vk::ShaderStageFlags::COMPUTE)
                    })
                    .collect::<Vec<_>>()
            });
            let set0 = self.set_layout(&g0)?;
            let set1 = match self.set_layout(&g1) {
                Ok(s) => s,
                Err(e) => {
                    // SAFETY: unused layout of this device, destroyed once.
                    unsafe { self.device.destroy_descriptor_set_layout(set0, None) };
                    return Err(e);
                }
            };
            let (layout, pipeline) = match self.compute_pipeline(entry.name, &[set0, set1]) {
                Ok(p) => p,
                Err(e) => {
                    // SAFETY: unused layouts of this device, destroyed once.
                    unsafe {
                        self.device.destroy_descriptor_set_layout(set0, None);
                        self.device.destroy_descriptor_set_layout(set1, None);
                    }
                    return Err(e);
                }
            };
            self.pipelines.insert(entry.name, Pipeline { entry, set0, set1, layout, pipeline });
        }
        Ok(())
    }

    fn set_layout(&self, bindings: &[vk::DescriptorSetLayoutBinding<'_>]) -> Result<vk::DescriptorSetLayout> {
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings);
        // SAFETY: the device is live; `info` points to `bindings`, valid for the call.
        unsafe { self.device.create_descriptor_set_layout(&info, None) }
            .map_err(|e| vk_err("vkCreateDescriptorSetLayout", e))
    }

    /// A compute pipeline of the embedded module `name` over the given set layouts.
    fn compute_pipeline(
        &self,
        name: &str,
        sets: &[vk::DescriptorSetLayout],
    ) -> Result<(vk::PipelineLayout, vk::Pipeline)> {
        let _setup = setup_lock();
        let words = spirv::words(name).ok_or_else(|| err(format!("no SPIR-V module {name}")))?;
        let info = vk::ShaderModuleCreateInfo::default().code(&words);
        // SAFETY: `words` is a complete SPIR-V module generated and validated by xtask.
        let module = unsafe { self.device.create_shader_module(&info, None) }
            .map_err(|e| vk_err(&format!("vkCreateShaderModule {name}"), e))?;
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(sets);
        // SAFETY: the set layouts belong to this device.
        let layout = match unsafe { self.device.create_pipeline_layout(&info, None) } {
            Ok(l) => l,
            Err(e) => {
                // SAFETY: the module is unused, destroyed once.
                unsafe { self.device.destroy_shader_module(module, None) };
                return Err(vk_err("vkCreatePipelineLayout", e));
            }
        };
        let entry = CString::new(name).map_err(|_| err("entry name with a NUL byte"))?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&entry);
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
        // SAFETY: module, layout and entry name are valid for the call.
        let created = unsafe {
            self.device.create_compute_pipelines(vk::PipelineCache::null(), std::slice::from_ref(&info), None)
        };
        // SAFETY: a module may be destroyed once its pipelines are created.
        unsafe { self.device.destroy_shader_module(module, None) };
        match created {
            Ok(p) => Ok((layout, p[0])),
            Err((_, e)) => {
                // SAFETY: the layout is unused, destroyed once.
                unsafe { self.device.destroy_pipeline_layout(layout, None) };
                Err(vk_err(&format!("vkCreateComputePipelines {name}"), e))
            }
        }
    }

    fn command_buffer(&self) -> Result<vk::CommandBuffer> {
        self.command_buffer_from(self.command_pool)
    }

    /// A primary command buffer from `pool`, one of this backend's pools.
    fn command_buffer_from(&self, pool: vk::CommandPool) -> Result<vk::CommandBuffer> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool belongs to this device and is only used from `&mut self` methods.
        let cbs = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(|e| vk_err("vkAllocateCommandBuffers", e))?;
        Ok(cbs[0])
    }

    fn begin(&self, cb: vk::CommandBuffer, flags: vk::CommandBufferUsageFlags) -> Result<()> {
        // SAFETY: `cb` is a command buffer of this device's pools, fresh, or from `read_pool`
        // (whose buffers reset when begun) and neither recording nor pending.
        unsafe { self.device.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default().flags(flags)) }
            .map_err(|e| vk_err("vkBeginCommandBuffer", e))
    }

    fn end(&self, cb: vk::CommandBuffer) -> Result<()> {
        // SAFETY: `cb` is in the recording state.
        unsafe { self.device.end_command_buffer(cb) }.map_err(|e| vk_err("vkEndCommandBuffer", e))
    }

    /// Every earlier command's writes are visible to every later command (the top of each
    /// submission: command buffers get no implicit memory dependency from submission order).
    fn full_barrier(&self, cb: vk::CommandBuffer) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
        // SAFETY: `cb` is recording; a global memory barrier needs no resources.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    fn barrier(
        &self,
        cb: vk::CommandBuffer,
        src: (vk::PipelineStageFlags, vk::AccessFlags),
        dst: (vk::PipelineStageFlags, vk::AccessFlags),
    ) {
        let barrier = vk::MemoryBarrier::default().src_access_mask(src.1).dst_access_mask(dst.1);
        // SAFETY: `cb` is recording; a global memory barrier needs no resources.
        unsafe {
            self.device.cmd_pipeline_barrier(cb, src.0, dst.0, vk::DependencyFlags::empty(), &[barrier], &[], &[])
        };
    }

    /// Wait for a fence with a deadline, so a hung or lost device is an error: polled for up
    /// to the spin budget ([`fluid_core::wait`]), then waited for blocking.
    fn wait(&self, fence: vk::Fence, what: &str) -> Result<()> {
        let signalled = wait::poll_for(self.spin, || {
            // SAFETY: the fence belongs to this device.
            unsafe { self.device.get_fence_status(fence) }.map_err(|e| vk_err(what, e))
        })?;
        if signalled {
            return Ok(());
        }
        // SAFETY: the fence belongs to this device and was submitted.
        match unsafe { self.device.wait_for_fences(&[fence], true, WAIT_NS) } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => {
                Err(err(format!("{what}: the GPU did not finish within {} s", WAIT_NS / 1_000_000_000)))
            }
            Err(e) => Err(vk_err(what, e)),
        }
    }

    /// Record, submit and wait for a one-off command buffer (uploads, downloads, fills).
    fn once(&mut self, what: &str, record: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<()> {
        let cb = self.command_buffer()?;
        let result = (|| {
            // `once_fence` is unsignalled and not in use.
            self.submit_for_host(cb, self.once_fence, what, record)?;
            let waited = self.wait(self.once_fence, what);
            // SAFETY: the fence is not in use by a pending submission after the wait (or the device is lost).
            unsafe { self.device.reset_fences(&[self.once_fence]) }.map_err(|e| vk_err("vkResetFences", e))?;
            waited
        })();
        // SAFETY: the command buffer finished (or the device is lost); it is freed once.
        unsafe { self.device.free_command_buffers(self.command_pool, &[cb]) };
        result?;
        self.validated(what)
    }

    /// Wait for every submission in flight.
    fn wait_all(&mut self) -> Result<()> {
        for k in 0..self.ring.len() {
            if self.ring[k].pending {
                self.wait(self.ring[k].fence, "waiting for the GPU")?;
                self.ring[k].pending = false;
            }
        }
        // Queued reads copy out of the fields: done before a field buffer can go. Their
        // fences stay signalled, so a later poll finds them done.
        for r in &self.reads {
            self.wait(r.slot.fence, "waiting for a queued read")?;
        }
        Ok(())
    }

    /// Submit `cbs` to the queue with `fence`: after the application's timeline values asked
    /// for by [`VulkanBackend::wait_before_next`], and signalling the next value of this
    /// backend's timeline (where it has one). Every submission of the backend goes through here.
    fn submit(&mut self, cbs: &[vk::CommandBuffer], fence: vk::Fence) -> std::result::Result<(), vk::Result> {
        let info = vk::SubmitInfo::default().command_buffers(cbs);
        if self.timeline == vk::Semaphore::null() {
            // SAFETY: the callers' guarantees: the command buffers are executable, what they
            // use is alive, `fence` is unsignalled and not in use; the queue is this backend's
            // during the call.
            return unsafe { self.device.queue_submit(self.queue, &[info], fence) };
        }
        let value = self.timeline_value + 1;
        let wait_semaphores: Vec<vk::Semaphore> = self.waits.iter().map(|w| w.0).collect();
        let wait_values: Vec<u64> = self.waits.iter().map(|w| w.1).collect();
        let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; self.waits.len()];
        let (signal, signal_values) = ([self.timeline], [value]);
        let mut values = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values)
            .signal_semaphore_values(&signal_values);
        let info = info
            .wait_semaphores(&wait_semaphores)
            .wait_dst_stage_mask(&stages)
            .signal_semaphores(&signal)
            .push_next(&mut values);
        // SAFETY: as above; the timeline semaphore is this backend's, its values only grow (one
        // more per submission); the waited semaphores are timeline semaphores of this device
        // that outlive the submission (`wait_before_next`'s contract).
        unsafe { self.device.queue_submit(self.queue, &[info], fence) }?;
        self.timeline_value = value;
        self.waits.clear();
        Ok(())
    }

    /// Record `cb` (a fresh command buffer, or a reset one from `read_pool`) and submit it,
    /// signalling `fence` (unsignalled, not in use) when done: every earlier write visible to
    /// what `record` records, and its writes visible to the host afterwards. What `once` and
    /// the queued reads submit.
    fn submit_for_host(
        &mut self,
        cb: vk::CommandBuffer,
        fence: vk::Fence,
        what: &str,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<()> {
        self.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        self.full_barrier(cb);
        record(&self.device, cb);
        self.barrier(
            cb,
            (vk::PipelineStageFlags::ALL_COMMANDS, vk::AccessFlags::MEMORY_WRITE),
            (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
        );
        self.end(cb)?;
        // `cb` is executable; `fence` is unsignalled and not in use (the caller's guarantee).
        self.submit(&[cb], fence).map_err(|e| vk_err(&format!("{what}: vkQueueSubmit"), e))
    }

    /// A new slot for queued reads.
    fn read_slot(&mut self) -> Result<ReadSlot> {
        let usage = vk::BufferUsageFlags::TRANSFER_DST;
        let buf = self.buffer("fluid.queue_download_at", Gather::KEPT_BYTES, usage, MemoryLocation::GpuToCpu)?;
        let fence = match self.fence() {
            Ok(fence) => fence,
            Err(e) => {
                self.free(buf);
                return Err(e);
            }
        };
        match self.command_buffer_from(self.read_pool) {
            Ok(cb) => Ok(ReadSlot { fence, cb, buf }),
            Err(e) => {
                self.destroy_read_slot(ReadSlot { fence, cb: vk::CommandBuffer::null(), buf });
                Err(e)
            }
        }
    }

    /// Destroy a slot (the device must be done with it).
    fn destroy_read_slot(&mut self, slot: ReadSlot) {
        // SAFETY: the slot's submission finished or never happened (the caller's guarantee);
        // fence and command buffer are destroyed once.
        unsafe {
            self.device.destroy_fence(slot.fence, None);
            if slot.cb != vk::CommandBuffer::null() {
                self.device.free_command_buffers(self.read_pool, &[slot.cb]);
            }
        }
        self.free(slot.buf);
    }

    /// A finished (or never submitted) read's slot back to the spares, its fence unsignalled,
    /// where there is room; its own big buffer freed.
    fn release_read(&mut self, slot: ReadSlot, big: Option<Buf>) {
        if let Some(b) = big {
            self.free(b);
        }
        // SAFETY: the fence's submission finished or never happened.
        let reset = unsafe { self.device.reset_fences(&[slot.fence]) };
        if reset.is_ok() && self.spare_reads.len() < SPARE_READS {
            self.spare_reads.push(slot);
        } else {
            self.destroy_read_slot(slot);
        }
    }

    /// Whether a queued read's copy is done (an error for a lost device).
    fn read_done(&self, k: usize) -> Result<bool> {
        // SAFETY: the fence belongs to this device.
        unsafe { self.device.get_fence_status(self.reads[k].slot.fence) }
            .map_err(|e| vk_err("polling a queued read", e))
    }

    /// Free the reads whose [`PendingRead`] was dropped and whose copy is done.
    fn sweep_reads(&mut self) -> Result<()> {
        let mut k = 0;
        while k < self.reads.len() {
            if self.reads[k].handle.dropped() && self.read_done(k)? {
                let r = self.reads.remove(k);
                self.release_read(r.slot, r.big);
            } else {
                k += 1;
            }
        }
        Ok(())
    }

    /// The values of queued read `k`, whose copy is done; frees it.
    fn take_read(&mut self, k: usize) -> Result<Vec<f32>> {
        let r = self.reads.remove(k);
        let buf = r.big.as_ref().unwrap_or(&r.slot.buf);
        let values = match buf.alloc.as_ref().and_then(|a| a.mapped_slice()) {
            Some(m) => r.plan.finish(f32s_le(&m[..r.plan.bytes() as usize])),
            None => Err(err("a queued read's buffer is not host-visible")),
        };
        self.release_read(r.slot, r.big);
        values
    }

    /// Submit the copy of a queued read (see [`Backend::queue_download_at`]).
    fn queue_read(&mut self, plan: ReadPlan) -> Result<PendingRead> {
        let f = self.fields()?;
        let src = f.buffers[f.map[plan.field().index()]].buffer;
        let regions = copy_regions(&plan.runs());
        let bytes = plan.bytes();
        let slot = match self.spare_reads.pop() {
            Some(slot) => slot,
            None => self.read_slot()?,
        };
        let big = if bytes > Gather::KEPT_BYTES {
            let usage = vk::BufferUsageFlags::TRANSFER_DST;
            match self.buffer("fluid.queue_download", bytes, usage, MemoryLocation::GpuToCpu) {
                Ok(b) => Some(b),
                Err(e) => {
                    self.release_read(slot, None);
                    return Err(e);
                }
            }
        } else {
            None
        };
        let dst = big.as_ref().unwrap_or(&slot.buf).buffer;
        // The slot's fence is unsignalled: new, or reset when its last read was done.
        let submitted = self.submit_for_host(slot.cb, slot.fence, "queue_download", |device, cb| {
            // SAFETY: recording; every region lies inside the field (its indices were checked)
            // and the regions fill the first `bytes` of `dst` without overlapping.
            unsafe { device.cmd_copy_buffer(cb, src, dst, &regions) };
        });
        if let Err(e) = submitted {
            // Not submitted (or the device is lost): nothing of it is in use, but its command
            // buffer may be left recording, so the slot is not reused.
            if let Some(b) = big {
                self.free(b);
            }
            self.destroy_read_slot(slot);
            return Err(e);
        }
        let (read, handle) = PendingRead::queued(NAME);
        self.reads.push(QueuedRead { handle, slot, big, plan });
        self.validated("queue_download")?;
        Ok(read)
    }

    fn queued_read(&self, read: &PendingRead) -> Result<usize> {
        self.reads.iter().position(|r| r.handle.id == read.id()).ok_or_else(|| read.unknown(NAME))
    }

    /// Make room for `count` splats: a bigger device buffer and staging ring, and every recording
    /// (whose descriptors point at the old buffer) dropped.
    fn grow_splats(&mut self, count: usize) -> Result<()> {
        if count <= self.splat_capacity {
            return Ok(());
        }
        let capacity = count.next_power_of_two().max(64);
        self.wait_all()?;
        self.drop_recordings();
        for slot in std::mem::take(&mut self.ring) {
            // SAFETY: the slot's submissions finished (wait_all); fence and command buffer are
            // destroyed once.
            unsafe {
                self.device.destroy_fence(slot.fence, None);
                self.device.free_command_buffers(self.command_pool, &[slot.upload]);
            }
            self.free(slot.staging);
        }
        let old = std::mem::replace(&mut self.splat_buf, Buf { buffer: vk::Buffer::null(), alloc: None, size: 0 });
        self.free(old);
        let bytes = (capacity * size_of::<SplatGpu>()) as u64;
        self.splat_buf = self.buffer(
            "fluid.splats",
            bytes,
            vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuOnly,
        )?;
        self.splat_capacity = capacity;
        for k in 0..RING {
            let staging = self.buffer(
                &format!("fluid.step_inputs.{k}"),
                SPLATS_OFFSET + bytes,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
            )?;
            let fence = self.fence()?;
            let upload = self.command_buffer()?;
            self.ring.push(Slot { staging, fence, pending: false, upload });
            self.begin(upload, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
            self.full_barrier(upload);
            let step = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: size_of::<StepUniform>() as u64 }];
            let splats = [vk::BufferCopy { src_offset: SPLATS_OFFSET, dst_offset: 0, size: bytes }];
            let src = self.ring[k].staging.buffer;
            // SAFETY: recording into `upload`; both copies stay inside their buffers.
            unsafe {
                self.device.cmd_copy_buffer(upload, src, self.step_buf.buffer, &step);
                self.device.cmd_copy_buffer(upload, src, self.splat_buf.buffer, &splats);
            }
            self.barrier(
                upload,
                (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
                (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::UNIFORM_READ | vk::AccessFlags::SHADER_READ),
            );
            self.end(upload)?;
        }
        self.next_slot = 0;
        self.last_slot = None;
        Ok(())
    }

    fn destroy_recording(&mut self, r: Recording) {
        // SAFETY: the caller waited for every submission; each object is destroyed once.
        unsafe {
            self.device.free_command_buffers(self.command_pool, &[r.cb]);
            self.device.destroy_descriptor_pool(r.pool, None);
            if let Some((q, _)) = r.queries {
                self.device.destroy_query_pool(q, None);
            }
        }
        self.free(r.params);
    }

    /// Drop every recording (callers wait for the GPU first).
    fn drop_recordings(&mut self) {
        for r in std::mem::take(&mut self.recordings) {
            self.destroy_recording(r);
        }
    }

    /// Record `schedule` for the field assignment `start`.
    fn record(&mut self, schedule: &Schedule, start: [usize; FieldId::COUNT], timed: bool) -> Result<Recording> {
        let grid = self.fields.as_ref().ok_or(Error::NotAllocated(NAME))?.grid;
        let (plan, map) = plan(schedule, &grid, start);
        let slots = schedule.reduction_slots();
        if slots as u64 > RESULT_SLOTS {
            return Err(err(format!("a schedule may use at most {RESULT_SLOTS} reduction slots")));
        }

        // Parameter blocks, deduplicated, each at an aligned offset.
        let mut bytes: Vec<u8> = Vec::new();
        let mut offsets: HashMap<Vec<u8>, u32> = HashMap::new();
        let mut step_offsets = Vec::with_capacity(plan.len());
        for s in &plan {
            step_offsets.push(s.params.as_ref().map(|p| {
                *offsets.entry(p.clone()).or_insert_with(|| {
                    let o = bytes.len();
                    bytes.extend_from_slice(p);
                    bytes.resize(o + self.align as usize, 0);
                    o as u32
                })
            }));
        }
        bytes.resize(bytes.len().max(self.align as usize), 0);
        let mut params = self.buffer(
            "fluid.params",
            bytes.len() as u64,
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            MemoryLocation::CpuToGpu,
        )?;
        match params.alloc.as_mut().and_then(|a| a.mapped_slice_mut()) {
            Some(m) => m[..bytes.len()].copy_from_slice(&bytes),
            None => {
                self.free(params);
                return Err(err("the parameter buffer is not host-visible"));
            }
        }

        let sets = distinct_sets(&plan);
        let (max_sets, sizes) = pool_sizes(&sets, |e| self.pipelines[e].entry.storage.len());
        let (set0_of, set1_of) = sets;
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(max_sets).pool_sizes(&sizes);
        // SAFETY: the device is live; `info` points to `sizes`, valid for the call.
        let pool = match unsafe { self.device.create_descriptor_pool(&info, None) } {
            Ok(p) => p,
            Err(e) => {
                self.free(params);
                return Err(vk_err("vkCreateDescriptorPool", e));
            }
        };
        let mut rec = Recording {
            schedule: schedule.clone(),
            start,
            end: map,
            timed,
            cb: vk::CommandBuffer::null(),
            pool,
            params,
            queries: None,
            slots,
        };
        match self.fill_recording(
            &mut rec,
            &plan,
            &barriers(&plan, |e| self.pipelines[e].entry.storage),
            &step_offsets,
            &set0_of,
            &set1_of,
        ) {
            Ok(()) => Ok(rec),
            Err(e) => {
                self.destroy_recording(rec);
                Err(e)
            }
        }
    }

    /// Allocate and write the descriptor sets of a recording and record its command buffer.
    fn fill_recording(
        &self,
        rec: &mut Recording,
        plan: &[Step],
        barriers: &[bool],
        offsets: &[Option<u32>],
        set0_of: &HashMap<&'static str, usize>,
        set1_of: &HashMap<(&'static str, Vec<usize>), usize>,
    ) -> Result<()> {
        let fields = self.fields.as_ref().ok_or(Error::NotAllocated(NAME))?;
        let buffer_of = |phys: usize| match phys {
            PARTIALS => (self.partials.buffer, self.partials.size),
            RESULTS => (self.results.buffer, self.results.size),
            k => (fields.buffers[k].buffer, fields.buffers[k].size),
        };
        // Set 0 per entry, set 1 per (entry, buffers).
        let mut order0: Vec<(&'static str, usize)> = set0_of.iter().map(|(e, i)| (*e, *i)).collect();
        order0.sort_by_key(|x| x.1);
        let mut order1: Vec<(&(&'static str, Vec<usize>), usize)> = set1_of.iter().map(|(k, i)| (k, *i)).collect();
        order1.sort_by_key(|x| x.1);
        let layouts: Vec<vk::DescriptorSetLayout> = order0
            .iter()
            .map(|(e, _)| self.pipelines[e].set0)
            .chain(order1.iter().map(|((e, _), _)| self.pipelines[e].set1))
            .collect();
        let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(rec.pool).set_layouts(&layouts);
        let sets = if layouts.is_empty() {
            Vec::new()
        } else {
            // SAFETY: the pool was sized for exactly these sets; the layouts belong to this device.
            unsafe { self.device.allocate_descriptor_sets(&info) }.map_err(|e| vk_err("vkAllocateDescriptorSets", e))?
        };
        let (sets0, sets1) = sets.split_at(order0.len());

        let whole = |buffer: vk::Buffer, range: u64| vk::DescriptorBufferInfo { buffer, offset: 0, range };
        // (set, binding, type, info): infos first, then writes that borrow them.
        let mut infos: Vec<(vk::DescriptorSet, u32, vk::DescriptorType, vk::DescriptorBufferInfo)> = Vec::new();
        for (k, (e, _)) in order0.iter().enumerate() {
            let entry = self.pipelines[e].entry;
            let set = sets0[k];
            infos.push((set, 0, vk::DescriptorType::UNIFORM_BUFFER, whole(self.grid_buf.buffer, 32)));
            infos.push((set, 1, vk::DescriptorType::UNIFORM_BUFFER, whole(self.step_buf.buffer, 16)));
            if entry.params {
                infos.push((
                    set,
                    2,
                    vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC,
                    whole(rec.params.buffer, PARAMS_BINDING),
                ));
            }
            if entry.splats {
                infos.push((
                    set,
                    3,
                    vk::DescriptorType::STORAGE_BUFFER,
                    whole(self.splat_buf.buffer, self.splat_buf.size),
                ));
            }
        }
        for (k, ((_, phys), _)) in order1.iter().enumerate() {
            for (b, p) in phys.iter().enumerate() {
                let (buffer, size) = buffer_of(*p);
                infos.push((sets1[k], b as u32, vk::DescriptorType::STORAGE_BUFFER, whole(buffer, size)));
            }
        }
        let writes: Vec<vk::WriteDescriptorSet<'_>> = infos
            .iter()
            .map(|(set, binding, ty, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(*set)
                    .dst_binding(*binding)
                    .descriptor_type(*ty)
                    .buffer_info(std::slice::from_ref(info))
            })
            .collect();
        // SAFETY: every write names a set of this pool, a binding of its layout, and a live buffer.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };

        rec.cb = self.command_buffer()?;
        let cb = rec.cb;
        if rec.timed {
            let info = vk::QueryPoolCreateInfo::default()
                .query_type(vk::QueryType::TIMESTAMP)
                .query_count(2 * plan.len() as u32);
            // SAFETY: the device is live; the create info is valid.
            let pool =
                unsafe { self.device.create_query_pool(&info, None) }.map_err(|e| vk_err("vkCreateQueryPool", e))?;
            rec.queries = Some((pool, plan.iter().map(|s| s.entry).collect()));
        }
        self.begin(cb, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
        if let Some((pool, _)) = &rec.queries {
            // SAFETY: recording; the range lies inside the pool.
            unsafe { self.device.cmd_reset_query_pool(cb, *pool, 0, 2 * plan.len() as u32) };
        }
        debug_assert_eq!(plan.len(), barriers.len(), "a barrier flag per invocation");
        let mut bound: Option<&'static str> = None;
        for (k, (Step { entry, phys, groups, .. }, barrier)) in plan.iter().zip(barriers).enumerate() {
            let p = &self.pipelines[entry];
            if *barrier {
                self.barrier(
                    cb,
                    (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                    (
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                    ),
                );
            }
            let sets = [sets0[set0_of[entry]], sets1[set1_of[&(*entry, phys.clone())]]];
            let dynamic: Vec<u32> = offsets[k].into_iter().collect();
            // SAFETY: recording; pipeline, layout and sets belong to this device and match the
            // shader's interface (built from the same `ShaderEntry`); the dynamic offset is
            // aligned and leaves `PARAMS_BINDING` bytes inside the parameter buffer.
            unsafe {
                if let Some((pool, _)) = &rec.queries {
                    self.device.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, *pool, 2 * k as u32);
                }
                if bound != Some(*entry) {
                    self.device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, p.pipeline);
                    bound = Some(*entry);
                }
                self.device.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, p.layout, 0, &sets, &dynamic);
                self.device.cmd_dispatch(cb, groups.0, groups.1, 1);
                if let Some((pool, _)) = &rec.queries {
                    self.device.cmd_write_timestamp(
                        cb,
                        vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                        *pool,
                        2 * k as u32 + 1,
                    );
                }
            }
        }
        if rec.slots > 0 {
            self.barrier(
                cb,
                (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_READ),
            );
            let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 4 * RESULT_SLOTS }];
            // SAFETY: recording; the copy stays inside both buffers.
            unsafe { self.device.cmd_copy_buffer(cb, self.results.buffer, self.results_read.buffer, &region) };
            self.barrier(
                cb,
                (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
        }
        self.end(cb)
    }

    fn fields(&self) -> Result<&Fields> {
        self.fields.as_ref().ok_or(Error::NotAllocated(NAME))
    }

    fn free_fields(&mut self) {
        if let Some(f) = self.fields.take() {
            for b in f.buffers {
                self.free(b);
            }
        }
    }
}

/// The bindings of an entry point's two descriptor set layouts, (binding, type): group 0 holds
/// the grid and step uniforms, the parameter block at a dynamic offset where the entry point has
/// one, and the splats where it reads them; group 1 one storage buffer per slot.
fn set_bindings(entry: &ShaderEntry) -> [Vec<(u32, vk::DescriptorType)>; 2] {
    let mut g0 = vec![(0, vk::DescriptorType::UNIFORM_BUFFER), (1, vk::DescriptorType::UNIFORM_BUFFER)];
    if entry.params {
        g0.push((2, vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC));
    }
    if entry.splats {
        g0.push((3, vk::DescriptorType::STORAGE_BUFFER));
    }
    let g1 = (0..entry.storage.len() as u32).map(|i| (i, vk::DescriptorType::STORAGE_BUFFER)).collect();
    [g0, g1]
}

/// Set 0 of each entry point, and set 1 of each (entry point, physical buffers), numbered in
/// order of first use.
type Sets = (HashMap<&'static str, usize>, HashMap<(&'static str, Vec<usize>), usize>);

/// The descriptor sets a recording of `plan` binds.
fn distinct_sets(plan: &[Step]) -> Sets {
    let mut set0_of: HashMap<&'static str, usize> = HashMap::new();
    let mut set1_of: HashMap<(&'static str, Vec<usize>), usize> = HashMap::new();
    for s in plan {
        let n0 = set0_of.len();
        set0_of.entry(s.entry).or_insert(n0);
        let n1 = set1_of.len();
        set1_of.entry((s.entry, s.phys.clone())).or_insert(n1);
    }
    (set0_of, set1_of)
}

/// The descriptor pool of a recording that allocates these sets: (most sets, sizes per type).
/// Each set 0 is counted with every binding group 0 may hold; `storage_of(entry)` gives an entry
/// point's storage slots. Counts are at least 1: Vulkan refuses empty pools (an empty schedule
/// records none).
fn pool_sizes((set0_of, set1_of): &Sets, storage_of: impl Fn(&str) -> usize) -> (u32, [vk::DescriptorPoolSize; 3]) {
    let storage_count: usize = set1_of.keys().map(|(e, p)| p.len().max(storage_of(e))).sum();
    let size = |ty, n: usize| vk::DescriptorPoolSize { ty, descriptor_count: (n as u32).max(1) };
    let sizes = [
        size(vk::DescriptorType::UNIFORM_BUFFER, 2 * set0_of.len()),
        size(vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC, set0_of.len()),
        size(vk::DescriptorType::STORAGE_BUFFER, storage_count + set0_of.len()),
    ];
    (((set0_of.len() + set1_of.len()) as u32).max(1), sizes)
}

/// One GPU invocation of a recording: its entry point, parameter block, physical buffers (field
/// indices, or `PARTIALS`/`RESULTS`) and workgroup counts.
struct Step {
    entry: &'static str,
    params: Option<Vec<u8>>,
    phys: Vec<usize>,
    groups: (u32, u32),
}

/// The invocations of `schedule` on `grid` with the fields in the physical buffers `start`, in
/// order, and the assignment of fields to buffers after its swaps.
fn plan(schedule: &Schedule, grid: &Grid, start: [usize; FieldId::COUNT]) -> (Vec<Step>, [usize; FieldId::COUNT]) {
    let mut map = start;
    let mut plan: Vec<Step> = Vec::new();
    for op in &schedule.ops {
        match op {
            Op::Swap(a, b) => map.swap(a.index(), b.index()),
            Op::Dispatch(d) => {
                let (w, h) = match (d.extent, d.kernel.domain()) {
                    (Some([x, y]), _) => (x, y),
                    (None, Domain::Cells) => (grid.nx, grid.ny),
                    (None, Domain::Faces) => (grid.nx + 1, grid.ny + 1),
                };
                plan.push(Step {
                    entry: d.kernel.name(),
                    params: match d.params {
                        Params::None => None,
                        p => Some(p.bytes().to_vec()),
                    },
                    phys: d.fields.iter().map(|f| map[f.index()]).collect(),
                    groups: {
                        let (gx, gy) = d.kernel.fixed_workgroup().unwrap_or(WORKGROUP);
                        (w.div_ceil(gx), h.div_ceil(gy))
                    },
                });
            }
            Op::Reduce { field, op, slot } => {
                let p = ReduceParams::new(grid.len(*field) as u32, *op, *slot);
                let partials = p.partials;
                let phys = vec![map[field.index()], PARTIALS, RESULTS];
                for (entry, groups) in [("reduce_partial", partials), ("reduce_final", 1)] {
                    plan.push(Step {
                        entry,
                        params: Some(bytemuck::bytes_of(&p).to_vec()),
                        phys: phys.clone(),
                        groups: (groups, 1),
                    });
                }
            }
        }
    }
    (plan, map)
}

/// Which invocations of `plan` need a pipeline barrier before them: those that bind a buffer
/// written since the last barrier, or write one read since it (read after write, write after
/// write, write after read). `storage` gives an entry point's bindings. Nothing else waits, so
/// independent dispatches between two barriers may overlap on the GPU.
fn barriers(plan: &[Step], storage: impl Fn(&str) -> &'static [Binding]) -> Vec<bool> {
    let mut written: Vec<usize> = Vec::new();
    let mut read: Vec<usize> = Vec::new();
    plan.iter()
        .map(|step| {
            let bindings = storage(step.entry);
            let writes = |i: usize| bindings[i].access != Access::Read;
            let hazard =
                step.phys.iter().enumerate().any(|(i, b)| written.contains(b) || (writes(i) && read.contains(b)));
            if hazard {
                written.clear();
                read.clear();
            }
            for (i, b) in step.phys.iter().enumerate() {
                if writes(i) {
                    written.push(*b);
                } else {
                    read.push(*b);
                }
            }
            hazard
        })
        .collect()
}

impl Drop for VulkanBackend {
    fn drop(&mut self) {
        let _setup = setup_lock();
        // SAFETY: the queue is this backend's to use during its calls (an application sharing
        // it does not submit meanwhile, see `from_raw`); on failure (lost device) the objects
        // below may be destroyed anyway. Every submission of the backend went to this queue, so
        // once it is idle nothing below is in use.
        let _ = unsafe { self.device.queue_wait_idle(self.queue) };
        for r in std::mem::take(&mut self.reads) {
            if let Some(b) = r.big {
                self.free(b);
            }
            self.destroy_read_slot(r.slot);
        }
        for slot in std::mem::take(&mut self.spare_reads) {
            self.destroy_read_slot(slot);
        }
        self.drop_recordings();
        self.free_fields();
        for slot in std::mem::take(&mut self.ring) {
            // SAFETY: idle; destroyed once.
            unsafe { self.device.destroy_fence(slot.fence, None) };
            self.free(slot.staging);
        }
        let null = || Buf { buffer: vk::Buffer::null(), alloc: None, size: 0 };
        for b in [
            std::mem::replace(&mut self.grid_buf, null()),
            std::mem::replace(&mut self.step_buf, null()),
            std::mem::replace(&mut self.splat_buf, null()),
            std::mem::replace(&mut self.partials, null()),
            std::mem::replace(&mut self.results, null()),
            std::mem::replace(&mut self.results_read, null()),
            std::mem::replace(&mut self.gather_read, null()),
        ] {
            self.free(b);
        }
        // SAFETY: the device is idle; every object below belongs to it and is destroyed once;
        // the allocator (which holds memory of this device) is dropped before the device.
        unsafe {
            for (_, p) in self.pipelines.drain() {
                self.device.destroy_pipeline(p.pipeline, None);
                self.device.destroy_pipeline_layout(p.layout, None);
                self.device.destroy_descriptor_set_layout(p.set0, None);
                self.device.destroy_descriptor_set_layout(p.set1, None);
            }
            if self.once_fence != vk::Fence::null() {
                self.device.destroy_fence(self.once_fence, None);
            }
            if self.command_pool != vk::CommandPool::null() {
                self.device.destroy_command_pool(self.command_pool, None);
            }
            if self.read_pool != vk::CommandPool::null() {
                self.device.destroy_command_pool(self.read_pool, None);
            }
            if self.timeline != vk::Semaphore::null() {
                self.device.destroy_semaphore(self.timeline, None);
            }
            drop(self.allocator.take());
            if self.owned {
                self.device.destroy_device(None);
            }
        }
        let _ = self.physical;
    }
}

impl Backend for VulkanBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn device(&self) -> String {
        format!("{} (Vulkan {}, {})", self.summary.name, self.summary.api_version, self.summary.device_type)
    }

    fn allocate(&mut self, grid: &Grid) -> Result<()> {
        let largest = FieldId::STATE_AND_SCRATCH.iter().map(|f| grid.len(*f) as u64 * 4).max().unwrap_or(0);
        let oom = |reason: String| Error::OutOfMemory { nx: grid.nx, ny: grid.ny, bytes: grid.bytes(), reason };
        if largest > self.max_binding {
            return Err(oom(format!(
                "the largest field needs {largest} bytes but {} binds at most {} bytes per storage buffer",
                self.summary.name, self.max_binding
            )));
        }
        self.wait_all()?;
        self.drop_recordings();
        self.free_fields();
        let mut buffers = Vec::new();
        for f in FieldId::STATE_AND_SCRATCH {
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::TRANSFER_SRC
                | vk::BufferUsageFlags::TRANSFER_DST;
            let name = format!("fluid.{}", f.name());
            match self.buffer_shared(&name, grid.len(*f) as u64 * 4, usage, MemoryLocation::GpuOnly, true) {
                Ok(b) => buffers.push(b),
                Err(e) => {
                    for b in buffers {
                        self.free(b);
                    }
                    return Err(oom(format!("{}: {e}", self.summary.name)));
                }
            }
        }
        let zero: Vec<(vk::Buffer, u64)> = buffers.iter().map(|b| (b.buffer, b.size)).collect();
        self.fields = Some(Fields { grid: *grid, buffers, map: std::array::from_fn(|i| i) });
        match self.grid_buf.alloc.as_mut().and_then(|a| a.mapped_slice_mut()) {
            Some(m) => m[..32].copy_from_slice(bytemuck::bytes_of(&grid.uniform())),
            None => return Err(err("the grid uniform is not host-visible")),
        }
        self.once("zero-filling the fields", |device, cb| {
            for (b, size) in &zero {
                // SAFETY: recording; the fill covers the whole buffer (size is a multiple of 4).
                unsafe { device.cmd_fill_buffer(cb, *b, 0, *size, 0) };
            }
        })
    }

    fn upload(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
        let f = self.fields()?;
        if data.len() != f.grid.len(field) {
            return Err(Error::FieldLength { field: field.name(), expected: f.grid.len(field), got: data.len() });
        }
        let dst = f.buffers[f.map[field.index()]].buffer;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut staging = self.buffer(
            "fluid.upload",
            bytes.len() as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        let Some(m) = staging.alloc.as_mut().and_then(|a| a.mapped_slice_mut()) else {
            self.free(staging);
            return Err(err("the upload buffer is not host-visible"));
        };
        m[..bytes.len()].copy_from_slice(bytes);
        let (src, size) = (staging.buffer, bytes.len() as u64);
        let result = if size == 0 {
            Ok(())
        } else {
            self.once("upload", |device, cb| {
                // SAFETY: recording; the copy stays inside both buffers.
                unsafe {
                    device.cmd_copy_buffer(cb, src, dst, &[vk::BufferCopy { src_offset: 0, dst_offset: 0, size }])
                };
            })
        };
        self.free(staging);
        result
    }

    fn download(&mut self, field: FieldId) -> Result<Vec<f32>> {
        let f = self.fields()?;
        let len = f.grid.len(field);
        let src = f.buffers[f.map[field.index()]].buffer;
        let size = (len as u64 * 4).max(4);
        let staging =
            self.buffer("fluid.download", size, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)?;
        let dst = staging.buffer;
        let result = self.once("download", |device, cb| {
            // SAFETY: recording; the copy stays inside both buffers.
            unsafe { device.cmd_copy_buffer(cb, src, dst, &[vk::BufferCopy { src_offset: 0, dst_offset: 0, size }]) };
        });
        let out = result.and_then(|()| {
            let m = staging.alloc.as_ref().and_then(|a| a.mapped_slice()).ok_or_else(|| err("not host-visible"))?;
            Ok(f32s_le(&m[..len * 4]))
        });
        self.free(staging);
        out
    }

    fn download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<Vec<f32>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        let f = self.fields()?;
        let len = f.grid.len(field);
        let Some(gather) = Gather::plan(field, len, indices)? else {
            return pick(field, &self.download(field)?, indices);
        };
        let src = f.buffers[f.map[field.index()]].buffer;
        let size = gather.unique.len() as u64 * 4;
        let regions = copy_regions(&gather.runs);
        let usage = vk::BufferUsageFlags::TRANSFER_DST;
        // A few values (a game's samples every frame) go through the kept buffer; more through
        // one of their own.
        let own = if size <= Gather::KEPT_BYTES {
            if self.gather_read.buffer == vk::Buffer::null() {
                self.gather_read =
                    self.buffer("fluid.download_at", Gather::KEPT_BYTES, usage, MemoryLocation::GpuToCpu)?;
            }
            None
        } else {
            Some(self.buffer("fluid.download_at", size, usage, MemoryLocation::GpuToCpu)?)
        };
        let dst = own.as_ref().unwrap_or(&self.gather_read).buffer;
        let result = self.once("download_at", |device, cb| {
            // SAFETY: recording; every region lies inside the field (indices checked above) and
            // the regions fill the first `size` bytes of the staging buffer without overlapping.
            // The kept buffer is not in use: `once` waits for its submission before it returns.
            unsafe { device.cmd_copy_buffer(cb, src, dst, &regions) };
        });
        let out = result.and_then(|()| {
            let staging = own.as_ref().unwrap_or(&self.gather_read);
            let m = staging.alloc.as_ref().and_then(|a| a.mapped_slice()).ok_or_else(|| err("not host-visible"))?;
            Ok(gather.scatter(indices, &f32s_le(&m[..size as usize])))
        });
        if let Some(b) = own {
            self.free(b);
        }
        out
    }

    fn queue_download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<PendingRead> {
        self.sweep_reads()?;
        if indices.is_empty() {
            return Ok(PendingRead::ready(NAME, Vec::new()));
        }
        let len = self.fields()?.grid.len(field);
        self.queue_read(ReadPlan::at(field, len, indices)?)
    }

    fn queue_download(&mut self, field: FieldId) -> Result<PendingRead> {
        self.sweep_reads()?;
        let len = self.fields()?.grid.len(field);
        self.queue_read(ReadPlan::whole(field, len))
    }

    fn poll_download(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        if let Some(values) = read.take_ready(NAME)? {
            return Ok(Some(values));
        }
        let k = self.queued_read(read)?;
        if !self.read_done(k)? {
            self.sweep_reads()?;
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
        self.wait(self.reads[k].slot.fence, "waiting for a queued read")?;
        read.set_taken();
        self.take_read(k)
    }

    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        let f = self.fields()?;
        if schedule.grid != f.grid.uniform() {
            return Err(err("the schedule was built for another grid"));
        }
        let start = f.map;
        self.grow_splats(inputs.splats.len())?;
        let timed = self.timing.is_some();
        let found =
            self.recordings.iter().position(|r| r.timed == timed && r.start == start && r.schedule == *schedule);
        let index = match found {
            Some(i) => i,
            None => {
                if self.recordings.len() >= MAX_RECORDINGS {
                    self.wait_all()?;
                    let oldest = self.recordings.remove(0);
                    self.destroy_recording(oldest);
                }
                let rec = self.record(schedule, start, timed)?;
                self.recordings.push(rec);
                self.recordings.len() - 1
            }
        };

        // This submission's staging slot: wait for its previous use, then write the inputs.
        let k = self.next_slot;
        self.next_slot = (k + 1) % RING;
        if self.ring[k].pending {
            self.wait(self.ring[k].fence, "waiting for a staging slot")?;
            self.ring[k].pending = false;
        }
        let fence = self.ring[k].fence;
        // SAFETY: the fence's last submission finished (or it was never submitted).
        unsafe { self.device.reset_fences(&[fence]) }.map_err(|e| vk_err("vkResetFences", e))?;
        let splats: Vec<SplatGpu> = inputs.gpu_splats(&schedule.grid);
        let m = self.ring[k]
            .staging
            .alloc
            .as_mut()
            .and_then(|a| a.mapped_slice_mut())
            .ok_or_else(|| err("the staging slot is not host-visible"))?;
        m[..size_of::<StepUniform>()].copy_from_slice(bytemuck::bytes_of(&inputs.uniform()));
        let splat_bytes: &[u8] = bytemuck::cast_slice(&splats);
        m[SPLATS_OFFSET as usize..SPLATS_OFFSET as usize + splat_bytes.len()].copy_from_slice(splat_bytes);

        let (cb, end, slots) = {
            let rec = &self.recordings[index];
            (rec.cb, rec.end, rec.slots)
        };
        // Both command buffers are executable and were recorded with SIMULTANEOUS_USE (a replay
        // may still be pending); every resource they use is alive; `fence` is unsignalled.
        self.submit(&[self.ring[k].upload, cb], fence).map_err(|e| vk_err("vkQueueSubmit", e))?;
        self.ring[k].pending = true;
        self.last_slot = Some(k);
        self.reduction_slots = slots;
        if let Some(f) = self.fields.as_mut() {
            f.map = end;
        }

        if timed {
            self.wait(fence, "waiting for timed run")?;
            self.ring[k].pending = false;
            let rec = &self.recordings[index];
            if let Some((pool, entries)) = &rec.queries {
                let mut ticks = vec![0u64; 2 * entries.len()];
                // SAFETY: the submission that wrote these queries finished; the range lies in the pool.
                unsafe {
                    self.device.get_query_pool_results(
                        *pool,
                        0,
                        &mut ticks,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                    )
                }
                .map_err(|e| vk_err("vkGetQueryPoolResults", e))?;
                let period = self.timestamp_period_ns;
                if let Some(t) = self.timing.as_mut() {
                    t.add(entries, &ticks, period);
                }
            }
        }
        self.validated("run")
    }

    fn reductions(&mut self) -> Result<Vec<f64>> {
        if self.reduction_slots == 0 {
            return Ok(Vec::new());
        }
        if let Some(k) = self.last_slot
            && self.ring[k].pending
        {
            self.wait(self.ring[k].fence, "waiting for reductions")?;
            self.ring[k].pending = false;
        }
        let m =
            self.results_read.alloc.as_ref().and_then(|a| a.mapped_slice()).ok_or_else(|| err("not host-visible"))?;
        let values = f32s_le(&m[..4 * self.reduction_slots]);
        Ok(values.iter().map(|x| f64::from(*x)).collect())
    }

    fn finish(&mut self) -> Result<()> {
        self.wait_all()?;
        self.validated("finish")
    }

    fn copy_bandwidth(&mut self) -> Result<f64> {
        self.wait_all()?;
        // The same compute-shader copy as the wgpu backend (16 bytes per invocation).
        let bytes = (1u64 << 30).min(self.max_binding / 16 * 16);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let a = self.buffer("fluid.bandwidth.a", bytes, usage, MemoryLocation::GpuOnly)?;
        let b = match self.buffer("fluid.bandwidth.b", bytes, usage, MemoryLocation::GpuOnly) {
            Ok(b) => b,
            Err(e) => {
                self.free(a);
                return Err(e);
            }
        };
        let result = self.bandwidth_between(&a, &b, bytes);
        self.free(a);
        self.free(b);
        result
    }

    fn set_timing(&mut self, enabled: bool) -> Result<()> {
        if enabled && !self.timestamps {
            return Err(Error::Unsupported {
                what: "per-kernel timings (timestamp queries)".into(),
                by: format!("the device {}", self.summary.name),
            });
        }
        self.timing = enabled.then(TimestampTimings::default);
        Ok(())
    }

    fn take_timings(&mut self) -> Result<Vec<KernelTiming>> {
        Ok(self.timing.as_mut().ok_or_else(|| err("timings were not enabled"))?.take())
    }

    fn wait_spin(&self) -> Option<Duration> {
        Some(self.spin)
    }

    fn set_wait_spin(&mut self, spin: Duration) -> Result<()> {
        self.spin = wait::checked(spin)?;
        Ok(())
    }
}

impl VulkanBackend {
    /// Time 20 alternating compute copies between `a` and `b` (best of three submissions).
    fn bandwidth_between(&mut self, a: &Buf, b: &Buf, bytes: u64) -> Result<f64> {
        let binding = |i: u32| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        };
        let set_layout = self.set_layout(&[binding(0), binding(1)])?;
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 4 }];
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(2).pool_sizes(&sizes);
        // SAFETY: the device is live; `info` is valid for the call.
        let pool = unsafe { self.device.create_descriptor_pool(&info, None) };
        let pipeline = self.compute_pipeline("bandwidth", &[set_layout]);
        let cb = self.command_buffer();
        let result = (|| {
            let pool = pool.map_err(|e| vk_err("vkCreateDescriptorPool", e))?;
            let (layout, pipeline) = *pipeline.as_ref().map_err(|e| err(e.to_string()))?;
            let cb = *cb.as_ref().map_err(|e| err(e.to_string()))?;
            let layouts = [set_layout, set_layout];
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
            // SAFETY: the pool holds two sets of this layout.
            let sets = unsafe { self.device.allocate_descriptor_sets(&info) }
                .map_err(|e| vk_err("vkAllocateDescriptorSets", e))?;
            let infos = [
                vk::DescriptorBufferInfo { buffer: a.buffer, offset: 0, range: bytes },
                vk::DescriptorBufferInfo { buffer: b.buffer, offset: 0, range: bytes },
            ];
            let mut writes = Vec::new();
            for (s, (src, dst)) in [(0, 1), (1, 0)].into_iter().enumerate() {
                for (binding, i) in [(0u32, src), (1u32, dst)] {
                    writes.push(
                        vk::WriteDescriptorSet::default()
                            .dst_set(sets[s])
                            .dst_binding(binding)
                            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                            .buffer_info(std::slice::from_ref(&infos[i])),
                    );
                }
            }
            // SAFETY: sets, bindings and buffers are valid.
            unsafe { self.device.update_descriptor_sets(&writes, &[]) };
            let invocations = bytes / 16;
            let wg = invocations.div_ceil(256);
            let (gx, gy) = if wg <= 65535 { (wg as u32, 1) } else { (65535u32, wg.div_ceil(65535) as u32) };
            let copies = 20u32;
            self.begin(cb, vk::CommandBufferUsageFlags::empty())?;
            // SAFETY: recording with a pipeline and sets of this device.
            unsafe { self.device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline) };
            for k in 0..copies {
                if k > 0 {
                    self.barrier(
                        cb,
                        (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                        (
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                        ),
                    );
                }
                // SAFETY: as above.
                unsafe {
                    self.device.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        layout,
                        0,
                        &[sets[(k % 2) as usize]],
                        &[],
                    );
                    self.device.cmd_dispatch(cb, gx, gy, 1);
                }
            }
            self.end(cb)?;
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let t0 = std::time::Instant::now();
                // `cb` is executable and not pending (each submission is waited for).
                self.submit(&[cb], self.once_fence).map_err(|e| vk_err("vkQueueSubmit", e))?;
                let waited = self.wait(self.once_fence, "bandwidth");
                // SAFETY: the submission finished.
                unsafe { self.device.reset_fences(&[self.once_fence]) }.map_err(|e| vk_err("vkResetFences", e))?;
                waited?;
                best = best.min(t0.elapsed().as_secs_f64());
            }
            Ok(2.0 * bytes as f64 * f64::from(copies) / best / 1e9)
        })();
        // SAFETY: nothing is pending (every submission was waited for, or the device is lost);
        // each object is destroyed once.
        unsafe {
            if let Ok(cb) = cb {
                self.device.free_command_buffers(self.command_pool, &[cb]);
            }
            if let Ok((layout, pipeline)) = pipeline {
                self.device.destroy_pipeline(pipeline, None);
                self.device.destroy_pipeline_layout(layout, None);
            }
            if let Ok(pool) = pool {
                self.device.destroy_descriptor_pool(pool, None);
            }
            self.device.destroy_descriptor_set_layout(set_layout, None);
        }
        result
    }
}

/// The copy regions of `runs` (`(first value, count)` of a field), packed one after another
/// from the start of the destination.
fn copy_regions(runs: &[(usize, usize)]) -> Vec<vk::BufferCopy> {
    let mut at = 0u64;
    runs.iter()
        .map(|&(start, n)| {
            let r = vk::BufferCopy { src_offset: start as u64 * 4, dst_offset: at, size: n as u64 * 4 };
            at += r.size;
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluid_core::{Boundary, SimParams};

    /// With `FLUID_REQUIRE_VALIDATION=1` (set by `scripts/test.sh`), a debug build's backend
    /// must run under the validation layer: a missing layer is a failure, not a skip.
    fn require_validation(b: &VulkanBackend) {
        if std::env::var("FLUID_REQUIRE_VALIDATION").as_deref() == Ok("1") && cfg!(debug_assertions) {
            assert!(b.validation(), "the Khronos validation layer is not on (apt-get install vulkan-validationlayers)");
        }
    }

    /// The shader entry point named `name`.
    fn shader_entry(name: &str) -> ShaderEntry {
        ShaderEntry::all().into_iter().find(|x| x.name == name).expect(name)
    }

    /// The plans the backend records for every preset's step, with each pressure solver and
    /// precision, on wall, periodic and mixed grids, with viscosity, and the setup, diagnostics,
    /// curl and residual schedules of each: (what it is, the plan).
    fn every_plan() -> Vec<(String, Vec<Step>)> {
        use fluid_core::params::{Precision, PressureSolver};
        let solvers = [
            (PressureSolver::Jacobi, None),
            (PressureSolver::JacobiMultisweep, None),
            (PressureSolver::Sor, None),
            (PressureSolver::Relaxation, None),
            (PressureSolver::Multigrid, Some(Precision::DoubleFloat)),
            (PressureSolver::Multigrid, Some(Precision::Single)),
            (PressureSolver::Mgpcg, None),
            (PressureSolver::PoissonFilter, None),
        ];
        let mut plans = Vec::new();
        for name in ["smoke", "ink", "taylor-green", "stable-fluid"] {
            let scene = fluid_core::Scene::preset(name).expect("preset");
            for (bx, by) in [
                (Boundary::Wall, Boundary::Wall),
                (Boundary::Periodic, Boundary::Periodic),
                (Boundary::Wall, Boundary::Periodic),
            ] {
                let grid = Grid::new(37, 22, 0.1, bx, by).expect("grid");
                for (solver, precision) in solvers {
                    let mut params = scene.params.clone();
                    params.boundary.x = bx;
                    params.boundary.y = by;
                    params.pressure.solver = solver;
                    params.pressure.precision = precision;
                    params.pressure.iterations = params.pressure.iterations.min(8);
                    params.viscosity = 0.01;
                    for (kind, schedule) in [
                        ("step", Schedule::step(&grid, &params)),
                        ("setup", Schedule::setup(&grid, &params)),
                        ("diagnostics", Schedule::diagnostics(&grid)),
                        ("curl", Schedule::curl(&grid)),
                        ("residual", Schedule::residual(&grid)),
                    ] {
                        let (plan, _) = plan(&schedule, &grid, std::array::from_fn(|k| k));
                        plans.push((format!("{name}'s {kind}, {solver:?}, {bx:?}/{by:?}"), plan));
                    }
                }
            }
        }
        plans
    }

    /// The descriptor pool of every plan holds the sets the recording allocates: counted from
    /// the set layouts the pipelines are built with (`set_bindings`), one set 0 per entry point
    /// and one set 1 per entry point and physical buffers, the pool has at least as many
    /// descriptors of each type and exactly as many sets (at least one). (Lavapipe does not hold
    /// a recording to its pool's counts; a driver may fail the allocation with
    /// `VK_ERROR_OUT_OF_POOL_MEMORY`.)
    #[test]
    fn descriptor_pools_hold_every_set_of_their_recording() {
        for (what, plan) in every_plan() {
            let mut need: HashMap<vk::DescriptorType, u32> = HashMap::new();
            let mut sets = 0;
            let mut add = |bindings: &[(u32, vk::DescriptorType)]| {
                sets += 1;
                for (_, t) in bindings {
                    *need.entry(*t).or_default() += 1;
                }
            };
            let (mut entries0, mut entries1) = (Vec::new(), Vec::new());
            for s in &plan {
                if !entries0.contains(&s.entry) {
                    entries0.push(s.entry);
                    add(&set_bindings(&shader_entry(s.entry))[0]);
                }
                if !entries1.contains(&(s.entry, &s.phys)) {
                    entries1.push((s.entry, &s.phys));
                    add(&set_bindings(&shader_entry(s.entry))[1]);
                }
            }
            let (max_sets, sizes) = pool_sizes(&distinct_sets(&plan), |e| shader_entry(e).storage.len());
            // An empty plan (a setup with nothing to set up) still gets a pool of one set.
            assert_eq!(max_sets, sets.max(1), "{what}: sets");
            for (t, n) in need {
                let have: u32 = sizes.iter().filter(|s| s.ty == t).map(|s| s.descriptor_count).sum();
                assert!(have >= n, "{what}: {have} descriptors of {t:?} in the pool, {n} in its sets");
            }
        }
    }

    /// Barriers stand exactly where data flows, checked without a device on the schedules the
    /// backend records (every preset's step, with each pressure solver and precision, on wall,
    /// periodic and mixed grids, with viscosity; setup, diagnostics, curl, residual):
    /// - every two invocations that bind the same buffer, one of them writing it, have a barrier
    ///   between them (checked pair by pair over the whole plan, not by the running tracker);
    /// - every barrier is needed: the invocation after it conflicts that way with one since the
    ///   barrier before.
    ///
    /// Lavapipe runs one dispatch after another, so a missing barrier changes no result there
    /// (and Debian's validation layer did not report a removed one); this is the check that
    /// runs in CI.
    #[test]
    fn barriers_stand_exactly_between_dependent_invocations() {
        let storage = |e: &str| shader_entry(e).storage;
        let touches = |step: &Step, buffer: usize| {
            let bindings = storage(step.entry);
            let mut found = (false, false); // (binds it, writes it)
            for (i, b) in step.phys.iter().enumerate() {
                if *b == buffer {
                    found.0 = true;
                    found.1 |= bindings[i].access != Access::Read;
                }
            }
            found
        };
        let conflict = |a: &Step, b: &Step| {
            a.phys.iter().chain(&b.phys).any(|x| {
                let (ta, wa) = touches(a, *x);
                let (tb, wb) = touches(b, *x);
                ta && tb && (wa || wb)
            })
        };
        let (mut plans, mut invocations, mut placed) = (0, 0, 0);
        for (what, plan) in every_plan() {
            let barrier = barriers(&plan, storage);
            plans += 1;
            invocations += plan.len();
            placed += barrier.iter().filter(|b| **b).count();
            for b in 0..plan.len() {
                for a in 0..b {
                    if conflict(&plan[a], &plan[b]) {
                        assert!(
                            barrier[a + 1..=b].iter().any(|x| *x),
                            "{what}: {} ({a}) and {} ({b}) share a buffer one of them writes, with no barrier \
                             between them",
                            plan[a].entry,
                            plan[b].entry
                        );
                    }
                }
                if barrier[b] {
                    let since = barrier[..b].iter().rposition(|x| *x).unwrap_or(0);
                    assert!(
                        (since..b).any(|a| conflict(&plan[a], &plan[b])),
                        "{what}: the barrier before {} ({b}) waits for nothing it reads or writes",
                        plan[b].entry
                    );
                }
            }
        }
        // Not every invocation waits (independent ones share a barrier interval) and not none.
        assert!(placed > 0 && placed < invocations, "{placed} barriers over {invocations} invocations");
        assert!(plans >= 400, "{plans} plans");
    }

    /// A validation error fails the backend's next call, with the layer's message: here a
    /// deliberately invalid call of the test's own on the backend's device (a buffer of size
    /// zero, `VUID-VkBufferCreateInfo-size-00912`), reported by the next `allocate`; the call
    /// after that runs clean again. Debug builds only, where the layer is on when installed
    /// (`FLUID_REQUIRE_VALIDATION=1`, set by `scripts/test.sh`, makes a missing layer a failure).
    #[test]
    fn a_validation_error_fails_the_next_call() {
        let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
        require_validation(&b);
        if !b.validation() {
            return;
        }
        let grid = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let info = vk::BufferCreateInfo::default().size(0).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: the device is live and idle; the create info is deliberately invalid (size
        // zero) for the layer to report, and a buffer the driver makes anyway is destroyed.
        unsafe {
            if let Ok(buffer) = b.raw_device().create_buffer(&info, None) {
                b.raw_device().destroy_buffer(buffer, None);
            }
        }
        let e = b.allocate(&grid).expect_err("the validation error").to_string();
        assert!(e.contains("validation error") && e.contains("VUID-VkBufferCreateInfo-size-00912"), "{e}");
        b.allocate(&grid).expect("clean again");
        b.run(&Schedule::diagnostics(&grid), &StepInputs::default()).expect("diagnostics");
        b.finish().expect("finish");
    }

    /// Allocating again frees the fields of the grid before: the allocator holds the same bytes
    /// after a grid is allocated once, twice, and again after a larger one, and at least the
    /// fields' bytes more than before the first.
    #[test]
    fn allocating_again_frees_the_fields_before() {
        let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
        let in_use =
            |b: &VulkanBackend| b.allocator.as_ref().expect("allocator").generate_report().total_allocated_bytes;
        let small = Grid::new(33, 20, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
        let large = Grid::new(130, 90, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let before = in_use(&b);
        b.allocate(&small).expect("allocate");
        let once = in_use(&b);
        assert!(once >= before + small.bytes(), "{before} bytes, then {once} with {} of fields", small.bytes());
        b.allocate(&small).expect("allocate");
        assert_eq!(in_use(&b), once, "allocated twice");
        b.allocate(&large).expect("allocate");
        assert!(in_use(&b) >= before + large.bytes());
        b.allocate(&small).expect("allocate");
        assert_eq!(in_use(&b), once, "after a larger grid");
    }

    /// A smoke step, replayed, under the validation layer (with synchronization validation):
    /// any validation error fails `run`/`finish`. `FLUID_REQUIRE_VALIDATION=1` (set by
    /// `scripts/test.sh`) makes a missing layer a failure too.
    #[test]
    fn steps_replay_cleanly_under_validation() {
        let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
        require_validation(&b);
        let grid = Grid::new(33, 20, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
        b.allocate(&grid).expect("allocate");
        let params = SimParams { viscosity: 0.01, vorticity: 0.3, ..SimParams::default() };
        let step = Schedule::step(&grid, &params);
        let diagnostics = Schedule::diagnostics(&grid);
        let splat = fluid_core::Splat {
            center: [16.0, 10.0],
            radius: 3.0,
            velocity: [1.0, 2.0],
            density: 1.0,
            ..fluid_core::Splat::default()
        };
        let mut recorded = 0;
        for k in 0..24 {
            let inputs = StepInputs { dt: 0.1, time: 0.1 * k as f32, step: k, splats: vec![splat; k as usize % 5] };
            b.run(&step, &inputs).expect("step");
            b.run(&diagnostics, &StepInputs::default()).expect("diagnostics");
            if k == 11 {
                recorded = b.recordings.len();
            }
        }
        // The field assignment cycles with a short period: after one period every run is a replay.
        assert!(recorded >= 4, "{recorded}");
        assert_eq!(b.recordings.len(), recorded, "steps kept being re-recorded");
        let r = b.reductions().expect("reductions");
        assert_eq!(r.len(), fluid_core::schedule::SLOT_STATE_MAX + fluid_core::schedule::STATE_FIELDS.len());
        assert!(r.iter().all(|x| x.is_finite()), "{r:?}");
        b.finish().expect("finish");
        let density = b.download(FieldId::Density).expect("download");
        assert!(density.iter().any(|x| *x > 0.0), "the splats never arrived");
        // An empty schedule (e.g. the setup of a solver that needs none) is a valid no-op.
        b.run(&Schedule { grid: grid.uniform(), ops: Vec::new() }, &StepInputs::default()).expect("empty schedule");
        b.finish().expect("finish");
    }
}
