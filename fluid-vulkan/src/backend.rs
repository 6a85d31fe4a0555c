//! [`VulkanBackend`]: the [`Backend`] over raw Vulkan.

use std::collections::HashMap;
use std::ffi::CString;
use std::time::Duration;

use ash::vk;
use fluid_core::backend::{self, Gather, PendingRead, ReadPlan, ReadQueue, f32s_le, pick, u32s_le};
use fluid_core::grid::uniforms::SplatGpu;
use fluid_core::ir::lower::{Buffer, Invocation, Plan, PlanCache, Target, lower};
use fluid_core::ir::schedule::RESULT_SLOTS;
use fluid_core::ir::uniforms::{PARAMS_MAX_BYTES, REDUCE_MAX_PARTIALS, StepUniform};
use fluid_core::wait;
use fluid_core::{
    Backend, Error, Kernel, KernelTiming, MemoryReport, ResourceDesc, ResourceId, Result, Schedule, StepInputs,
    TimestampTimings,
};
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc};

use crate::{
    DeviceSummary, Instance, NAME, QueueChoice, setup_lock, spirv, summarize, type_rank, vk_err, with_family,
    with_queue,
};

/// Workgroup shape the SPIR-V was generated with (`fluid_shaders::WORKGROUP`).
const WORKGROUP: (u32, u32) = (16, 16);
/// Bytes bound for a parameter block: the largest block of the kernels.
const PARAMS_BINDING: u64 = PARAMS_MAX_BYTES;
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
    kernel: Kernel,
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

/// What a queued read keeps: its slot, and the read-back buffer of a read larger than the
/// slot's.
struct QueuedRead {
    slot: ReadSlot,
    big: Option<Buf>,
}

/// Slots of finished queued reads kept for the next ones; more are destroyed.
const SPARE_READS: usize = 4;

/// A schedule's plan recorded into a command buffer.
struct Recording {
    plan: Plan,
    timed: bool,
    cb: vk::CommandBuffer,
    pool: vk::DescriptorPool,
    params: Buf,
    /// Timestamp queries: the pool and the entry of each (begin, end) pair.
    queries: Option<(vk::QueryPool, Vec<&'static str>)>,
}

/// The resources held: their descriptions, a buffer each (moved to the resource's index by
/// `allocate`), and the assignment of resources to buffers that swaps change.
#[derive(Default)]
struct Resources {
    descs: Vec<ResourceDesc>,
    buffers: Vec<Buf>,
    map: Vec<usize>,
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
    uniform_buf: Buf,
    /// The model uniform written to `uniform_buf` (the last schedule's).
    uniform: Option<[u8; 32]>,
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
    reads: ReadQueue<QueuedRead>,
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
    res: Resources,
    recordings: PlanCache<Recording>,
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
            uniform_buf: null(),
            uniform: None,
            step_buf: null(),
            splat_buf: null(),
            partials: null(),
            results: null(),
            results_read: null(),
            gather_read: null(),
            reads: ReadQueue::new(NAME),
            spare_reads: Vec::new(),
            read_pool: vk::CommandPool::null(),
            splat_capacity: 0,
            ring: Vec::new(),
            next_slot: 0,
            last_slot: None,
            once_fence: vk::Fence::null(),
            spin,
            res: Resources::default(),
            recordings: PlanCache::new(MAX_RECORDINGS),
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
        backend.uniform_buf = backend.buffer("fluid.uniform", 32, uniform, MemoryLocation::CpuToGpu)?;
        backend.step_buf = backend.buffer("fluid.step", 16, uniform, MemoryLocation::GpuOnly)?;
        backend.partials =
            backend.buffer("fluid.partials", 4 * u64::from(REDUCE_MAX_PARTIALS), storage, MemoryLocation::GpuOnly)?;
        backend.results = backend.buffer(
            "fluid.results",
            4 * RESULT_SLOTS as u64,
            storage | vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::GpuOnly,
        )?;
        backend.results_read = backend.buffer(
            "fluid.results_read",
            4 * RESULT_SLOTS as u64,
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

    /// The buffer that holds resource `id` now (a grid field: `FieldId::Density.into()`), to
    /// draw from on the GPU with no read-back: `f32` values laid out as [`Backend::download`]
    /// returns them (see `fluid_core::grid`), from
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
    pub fn field_buffer(&self, id: impl Into<ResourceId>) -> Result<FieldBuffer> {
        let id = id.into();
        let desc = backend::desc(&self.res.descs, id, NAME)?;
        Ok(FieldBuffer { buffer: self.res.buffers[self.res.map[id.index()]].buffer, bytes: desc.bytes() })
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
        for kernel in fluid_core::kernels() {
            let [g0, g1] = set_bindings(kernel).map(|set| {
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
            let (layout, pipeline) = match self.compute_pipeline(kernel.name, &[set0, set1]) {
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
            self.pipelines.insert(kernel.name, Pipeline { kernel, set0, set1, layout, pipeline });
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
        for r in self.reads.slots() {
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
    fn read_done(device: &ash::Device, r: &QueuedRead) -> Result<bool> {
        // SAFETY: the fence belongs to this device.
        unsafe { device.get_fence_status(r.slot.fence) }.map_err(|e| vk_err("polling a queued read", e))
    }

    /// Free the reads whose [`PendingRead`] was dropped and whose copy is done.
    fn sweep_reads(&mut self) -> Result<()> {
        let device = self.device.clone();
        let mut freed = Vec::new();
        self.reads.sweep(|r| VulkanBackend::read_done(&device, r), |r| freed.push(r))?;
        for r in freed {
            self.release_read(r.slot, r.big);
        }
        Ok(())
    }

    /// The values of a queued read whose copy is done.
    fn read_values(r: &QueuedRead, plan: &ReadPlan) -> Result<Vec<f32>> {
        let buf = r.big.as_ref().unwrap_or(&r.slot.buf);
        match buf.alloc.as_ref().and_then(|a| a.mapped_slice()) {
            Some(m) => plan.finish(f32s_le(&m[..plan.bytes() as usize])),
            None => Err(err("a queued read's buffer is not host-visible")),
        }
    }

    /// Submit the copy of a queued read (see [`Backend::queue_download_at`]).
    fn queue_read(&mut self, plan: ReadPlan) -> Result<PendingRead> {
        let src = self.res.buffers[self.res.map[plan.resource().index()]].buffer;
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
        let read = self.reads.push(QueuedRead { slot, big }, plan);
        self.validated("queue_download")?;
        Ok(read)
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
        for r in self.recordings.drain() {
            self.destroy_recording(r);
        }
    }

    /// Record `schedule` from the current assignment of resources to buffers.
    fn record(&mut self, schedule: &Schedule, timed: bool) -> Result<Recording> {
        let target = Target { param_align: self.align as u32, workgroup: WORKGROUP };
        let plan = lower(schedule, &self.res.descs, &self.res.map, &target)?;
        let mut params = self.buffer(
            "fluid.params",
            plan.params.len() as u64,
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            MemoryLocation::CpuToGpu,
        )?;
        match params.alloc.as_mut().and_then(|a| a.mapped_slice_mut()) {
            Some(m) => m[..plan.params.len()].copy_from_slice(&plan.params),
            None => {
                self.free(params);
                return Err(err("the parameter buffer is not host-visible"));
            }
        }
        let sets = distinct_sets(&plan.invocations);
        let (max_sets, sizes) = pool_sizes(&sets, |e| self.pipelines[e].kernel.bindings.len());
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(max_sets).pool_sizes(&sizes);
        // SAFETY: the device is live; `info` points to `sizes`, valid for the call.
        let pool = match unsafe { self.device.create_descriptor_pool(&info, None) } {
            Ok(p) => p,
            Err(e) => {
                self.free(params);
                return Err(vk_err("vkCreateDescriptorPool", e));
            }
        };
        let mut rec = Recording { plan, timed, cb: vk::CommandBuffer::null(), pool, params, queries: None };
        match self.fill_recording(&mut rec, &sets) {
            Ok(()) => Ok(rec),
            Err(e) => {
                self.destroy_recording(rec);
                Err(e)
            }
        }
    }

    /// Allocate and write the descriptor sets of a recording and record its command buffer.
    fn fill_recording(&self, rec: &mut Recording, (set0_of, set1_of): &Sets) -> Result<()> {
        let plan = &rec.plan.invocations;
        let buffer_of = |b: Buffer| match b {
            Buffer::Partials => (self.partials.buffer, self.partials.size),
            Buffer::Results => (self.results.buffer, self.results.size),
            Buffer::Physical(k) => (self.res.buffers[k].buffer, self.res.buffers[k].size),
        };
        // Set 0 per entry, set 1 per (entry, buffers).
        let mut order0: Vec<(&'static str, usize)> = set0_of.iter().map(|(e, i)| (*e, *i)).collect();
        order0.sort_by_key(|x| x.1);
        let mut order1: Vec<(&(&'static str, Vec<Buffer>), usize)> = set1_of.iter().map(|(k, i)| (k, *i)).collect();
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
            let kernel = self.pipelines[e].kernel;
            let set = sets0[k];
            infos.push((set, 0, vk::DescriptorType::UNIFORM_BUFFER, whole(self.uniform_buf.buffer, 32)));
            infos.push((set, 1, vk::DescriptorType::UNIFORM_BUFFER, whole(self.step_buf.buffer, 16)));
            if kernel.params.is_some() {
                infos.push((
                    set,
                    2,
                    vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC,
                    whole(rec.params.buffer, PARAMS_BINDING),
                ));
            }
            if kernel.splats {
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
            rec.queries = Some((pool, plan.iter().map(|s| s.kernel.name).collect()));
        }
        self.begin(cb, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
        if let Some((pool, _)) = &rec.queries {
            // SAFETY: recording; the range lies inside the pool.
            unsafe { self.device.cmd_reset_query_pool(cb, *pool, 0, 2 * plan.len() as u32) };
        }
        let mut bound: Option<&'static str> = None;
        for (k, Invocation { kernel, buffers, workgroups: groups, params: offset, barrier }) in plan.iter().enumerate()
        {
            let entry = &kernel.name;
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
            let sets = [sets0[set0_of[entry]], sets1[set1_of[&(*entry, buffers.clone())]]];
            let dynamic: Vec<u32> = offset.iter().copied().collect();
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
        if rec.plan.reduction_slots > 0 {
            self.barrier(
                cb,
                (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_READ),
            );
            let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 4 * RESULT_SLOTS as u64 }];
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

    /// A whole resource read back, converted from its bytes in one pass by `convert`.
    fn read_whole<T>(&mut self, id: ResourceId, convert: impl FnOnce(&[u8]) -> Vec<T>) -> Result<Vec<T>> {
        let bytes = backend::desc(&self.res.descs, id, NAME)?.bytes();
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let src = self.res.buffers[self.res.map[id.index()]].buffer;
        let staging =
            self.buffer("fluid.download", bytes, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)?;
        let dst = staging.buffer;
        let result = self.once("download", |device, cb| {
            let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: bytes }];
            // SAFETY: recording; the copy stays inside both buffers.
            unsafe { device.cmd_copy_buffer(cb, src, dst, &region) };
        });
        let out = result.and_then(|()| {
            let m = staging.alloc.as_ref().and_then(|a| a.mapped_slice()).ok_or_else(|| err("not host-visible"))?;
            Ok(convert(&m[..bytes as usize]))
        });
        self.free(staging);
        out
    }

    /// Free every resource's buffer (callers wait for the GPU first).
    fn free_resources(&mut self) {
        for b in std::mem::take(&mut self.res).buffers {
            self.free(b);
        }
    }
}

/// The bindings of a kernel's two descriptor set layouts, (binding, type): group 0 holds the
/// model uniform and the step uniform, the parameter block at a dynamic offset where the
/// kernel has one, and the splats where it reads them; group 1 one storage buffer per slot.
fn set_bindings(kernel: Kernel) -> [Vec<(u32, vk::DescriptorType)>; 2] {
    let mut g0 = vec![(0, vk::DescriptorType::UNIFORM_BUFFER), (1, vk::DescriptorType::UNIFORM_BUFFER)];
    if kernel.params.is_some() {
        g0.push((2, vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC));
    }
    if kernel.splats {
        g0.push((3, vk::DescriptorType::STORAGE_BUFFER));
    }
    let g1 = (0..kernel.bindings.len() as u32).map(|i| (i, vk::DescriptorType::STORAGE_BUFFER)).collect();
    [g0, g1]
}

/// Set 0 of each kernel, and set 1 of each (kernel, buffers), numbered in order of first use.
type Sets = (HashMap<&'static str, usize>, HashMap<(&'static str, Vec<Buffer>), usize>);

/// The descriptor sets a recording of `plan` binds.
fn distinct_sets(plan: &[Invocation]) -> Sets {
    let mut set0_of: HashMap<&'static str, usize> = HashMap::new();
    let mut set1_of: HashMap<(&'static str, Vec<Buffer>), usize> = HashMap::new();
    for s in plan {
        let n0 = set0_of.len();
        set0_of.entry(s.kernel.name).or_insert(n0);
        let n1 = set1_of.len();
        set1_of.entry((s.kernel.name, s.buffers.clone())).or_insert(n1);
    }
    (set0_of, set1_of)
}

/// The descriptor pool of a recording that allocates these sets: (most sets, sizes per type).
/// Each set 0 is counted with every binding group 0 may hold; `storage_of(kernel)` gives a
/// kernel's storage slots. Counts are at least 1: Vulkan refuses empty pools (an empty schedule
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

impl Drop for VulkanBackend {
    fn drop(&mut self) {
        let _setup = setup_lock();
        // SAFETY: the queue is this backend's to use during its calls (an application sharing
        // it does not submit meanwhile, see `from_raw`); on failure (lost device) the objects
        // below may be destroyed anyway. Every submission of the backend went to this queue, so
        // once it is idle nothing below is in use.
        let _ = unsafe { self.device.queue_wait_idle(self.queue) };
        for r in self.reads.drain() {
            if let Some(b) = r.big {
                self.free(b);
            }
            self.destroy_read_slot(r.slot);
        }
        for slot in std::mem::take(&mut self.spare_reads) {
            self.destroy_read_slot(slot);
        }
        self.drop_recordings();
        self.free_resources();
        for slot in std::mem::take(&mut self.ring) {
            // SAFETY: idle; destroyed once.
            unsafe { self.device.destroy_fence(slot.fence, None) };
            self.free(slot.staging);
        }
        let null = || Buf { buffer: vk::Buffer::null(), alloc: None, size: 0 };
        for b in [
            std::mem::replace(&mut self.uniform_buf, null()),
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

    fn allocate(&mut self, resources: &[ResourceDesc]) -> Result<()> {
        if let Some(r) = resources.iter().find(|r| r.bytes() > self.max_binding) {
            return Err(Error::OutOfMemory {
                what: format!("resource `{}`", r.name),
                bytes: r.bytes(),
                reason: format!("{} binds at most {} bytes per storage buffer", self.summary.name, self.max_binding),
            });
        }
        let same = |i: usize| self.res.descs.get(i) == Some(&resources[i]);
        let keep: Vec<bool> = (0..resources.len()).map(same).collect();
        self.wait_all()?;
        self.drop_recordings();
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let mut made: Vec<Option<Buf>> = Vec::with_capacity(resources.len());
        for (i, r) in resources.iter().enumerate() {
            if keep[i] {
                made.push(None);
                continue;
            }
            match self.buffer_shared(&format!("fluid.{}", r.name), r.bytes(), usage, MemoryLocation::GpuOnly, true) {
                Ok(b) => made.push(Some(b)),
                Err(e) => {
                    for b in made.into_iter().flatten() {
                        self.free(b);
                    }
                    return Err(Error::OutOfMemory {
                        what: format!("resource `{}`", r.name),
                        bytes: r.bytes(),
                        reason: format!("{}: {e}", self.summary.name),
                    });
                }
            }
        }
        let zero: Vec<(vk::Buffer, u64)> = made.iter().flatten().map(|b| (b.buffer, b.size)).collect();
        // Each resource's buffer at its own index: the one it had (wherever swaps had put it),
        // or its new one; the buffers of resources gone are freed.
        let mut old: Vec<Option<Buf>> = std::mem::take(&mut self.res.buffers).into_iter().map(Some).collect();
        let old_map = std::mem::take(&mut self.res.map);
        let buffers: Vec<Buf> = made
            .into_iter()
            .enumerate()
            .map(|(i, new)| {
                new.or_else(|| old[old_map[i]].take()).unwrap_or(Buf {
                    buffer: vk::Buffer::null(),
                    alloc: None,
                    size: 0,
                })
            })
            .collect();
        for b in old.into_iter().flatten() {
            self.free(b);
        }
        self.res = Resources { descs: resources.to_vec(), buffers, map: (0..resources.len()).collect() };
        if zero.is_empty() {
            return Ok(());
        }
        self.once("zero-filling the new resources", |device, cb| {
            for (b, size) in &zero {
                // SAFETY: recording; the fill covers the whole buffer (size is a multiple of 4).
                unsafe { device.cmd_fill_buffer(cb, *b, 0, *size, 0) };
            }
        })
    }

    fn resources(&self) -> &[ResourceDesc] {
        &self.res.descs
    }

    fn write(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
        backend::desc(&self.res.descs, id, NAME)?.check_bytes(bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        let dst = self.res.buffers[self.res.map[id.index()]].buffer;
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
        let result = self.once("upload", |device, cb| {
            // SAFETY: recording; the copy stays inside both buffers.
            unsafe { device.cmd_copy_buffer(cb, src, dst, &[vk::BufferCopy { src_offset: 0, dst_offset: 0, size }]) };
        });
        self.free(staging);
        result
    }

    fn read(&mut self, id: ResourceId) -> Result<Vec<u32>> {
        self.read_whole(id, u32s_le)
    }

    fn download(&mut self, id: ResourceId) -> Result<Vec<f32>> {
        self.read_whole(id, f32s_le)
    }

    fn download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        let desc = backend::desc(&self.res.descs, id, NAME)?;
        let name = desc.name;
        let Some(gather) = Gather::plan(name, desc.words() as usize, indices)? else {
            return pick(name, &self.download(id)?, indices);
        };
        let src = self.res.buffers[self.res.map[id.index()]].buffer;
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
            // SAFETY: recording; every region lies inside the resource (indices checked above)
            // and the regions fill the first `size` bytes of the staging buffer without
            // overlapping. The kept buffer is not in use: `once` waits for its submission
            // before it returns.
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

    fn queue_download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<PendingRead> {
        self.sweep_reads()?;
        if indices.is_empty() {
            return Ok(PendingRead::ready(NAME, Vec::new()));
        }
        let plan = ReadPlan::at(id, backend::desc(&self.res.descs, id, NAME)?, indices)?;
        self.queue_read(plan)
    }

    fn queue_download(&mut self, id: ResourceId) -> Result<PendingRead> {
        self.sweep_reads()?;
        let plan = ReadPlan::whole(id, backend::desc(&self.res.descs, id, NAME)?);
        self.queue_read(plan)
    }

    fn poll_download(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        let device = self.device.clone();
        let mut freed = None;
        let got = self.reads.poll(
            read,
            |r| VulkanBackend::read_done(&device, r),
            |r, plan| {
                let values = VulkanBackend::read_values(&r, plan);
                freed = Some(r);
                values
            },
        )?;
        if let Some(r) = freed {
            self.release_read(r.slot, r.big);
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
        let mut fence = None;
        let mut reads = std::mem::replace(&mut self.reads, ReadQueue::new(NAME));
        let mut freed = None;
        let values = reads.wait(
            read,
            |r| {
                fence = Some(r.slot.fence);
                self.wait(r.slot.fence, "waiting for a queued read")
            },
            |r, plan| {
                let values = VulkanBackend::read_values(&r, plan);
                freed = Some(r);
                values
            },
        );
        self.reads = reads;
        if let Some(r) = freed {
            self.release_read(r.slot, r.big);
        }
        values
    }

    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        if self.res.descs.is_empty() {
            return Err(Error::NotAllocated(NAME));
        }
        if self.uniform.as_ref() != Some(schedule.uniform()) {
            // The recordings in flight read the uniform buffer: write it once they are done.
            self.wait_all()?;
            match self.uniform_buf.alloc.as_mut().and_then(|a| a.mapped_slice_mut()) {
                Some(m) => m[..32].copy_from_slice(schedule.uniform()),
                None => return Err(err("the uniform buffer is not host-visible")),
            }
            self.uniform = Some(*schedule.uniform());
        }
        self.grow_splats(inputs.splats.len())?;
        let timed = self.timing.is_some();
        let index = match self.recordings.position(schedule.id(), &self.res.map, u32::from(timed)) {
            Some(i) => i,
            None => {
                if self.recordings.is_full() {
                    self.wait_all()?;
                }
                let rec = self.record(schedule, timed)?;
                let start = self.res.map.clone();
                let (i, evicted) = self.recordings.insert(schedule.id(), &start, u32::from(timed), rec);
                if let Some(old) = evicted {
                    self.destroy_recording(old);
                }
                i
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
        let splats: Vec<SplatGpu> = inputs.gpu_splats(schedule.uniform());
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
            let rec = self.recordings.get(index);
            (rec.cb, rec.plan.end.clone(), rec.plan.reduction_slots)
        };
        // Both command buffers are executable and were recorded with SIMULTANEOUS_USE (a replay
        // may still be pending); every resource they use is alive; `fence` is unsignalled.
        self.submit(&[self.ring[k].upload, cb], fence).map_err(|e| vk_err("vkQueueSubmit", e))?;
        self.ring[k].pending = true;
        self.last_slot = Some(k);
        self.reduction_slots = slots;
        self.res.map = end;

        if timed {
            self.wait(fence, "waiting for timed run")?;
            self.ring[k].pending = false;
            let rec = self.recordings.get(index);
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

    fn memory(&self) -> Result<MemoryReport> {
        let resources: Vec<(&'static str, u64)> = self
            .res
            .descs
            .iter()
            .zip(&self.res.map)
            .map(|(r, p)| (r.name, self.res.buffers[*p].alloc.as_ref().map_or(0, |a| a.size())))
            .collect();
        let report = self.allocator.as_ref().map(|a| a.generate_report());
        let (total, reserved) = report.map_or((0, 0), |r| (r.total_allocated_bytes, r.total_capacity_bytes));
        Ok(MemoryReport { resources, total, reserved })
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
    use fluid_core::grid::step;
    use fluid_core::{Boundary, FieldId, Grid, GridFields, SimParams};

    /// With `FLUID_REQUIRE_VALIDATION=1` (set by `scripts/test.sh`), a debug build's backend
    /// must run under the validation layer: a missing layer is a failure, not a skip.
    fn require_validation(b: &VulkanBackend) {
        if std::env::var("FLUID_REQUIRE_VALIDATION").as_deref() == Ok("1") && cfg!(debug_assertions) {
            assert!(b.validation(), "the Khronos validation layer is not on (apt-get install vulkan-validationlayers)");
        }
    }

    /// The plans the backend records for every preset's step, with each pressure solver and
    /// precision, on wall, periodic and mixed grids, with viscosity, and the setup, diagnostics,
    /// curl and residual schedules of each: (what it is, the plan).
    fn every_plan() -> Vec<(String, Vec<Invocation>)> {
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
                    let fields = GridFields::declare(&grid, &params);
                    let start: Vec<usize> = (0..fields.resources().len()).collect();
                    let target = Target { param_align: 64, workgroup: WORKGROUP };
                    for (kind, schedule) in [
                        ("step", step::step(&grid, &params)),
                        ("setup", step::setup(&grid, &params)),
                        ("diagnostics", step::diagnostics(&grid)),
                        ("curl", step::curl(&grid)),
                        ("residual", step::residual(&grid)),
                    ] {
                        let plan = lower(&schedule, fields.resources(), &start, &target).expect("lowered");
                        plans.push((format!("{name}'s {kind}, {solver:?}, {bx:?}/{by:?}"), plan.invocations));
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
                if !entries0.contains(&s.kernel.name) {
                    entries0.push(s.kernel.name);
                    add(&set_bindings(s.kernel)[0]);
                }
                if !entries1.contains(&(s.kernel.name, &s.buffers)) {
                    entries1.push((s.kernel.name, &s.buffers));
                    add(&set_bindings(s.kernel)[1]);
                }
            }
            let bindings =
                |e: &str| fluid_core::kernels().into_iter().find(|k| k.name == e).map_or(0, |k| k.bindings.len());
            let (max_sets, sizes) = pool_sizes(&distinct_sets(&plan), bindings);
            // An empty plan (a setup with nothing to set up) still gets a pool of one set.
            assert_eq!(max_sets, sets.max(1), "{what}: sets");
            for (t, n) in need {
                let have: u32 = sizes.iter().filter(|s| s.ty == t).map(|s| s.descriptor_count).sum();
                assert!(have >= n, "{what}: {have} descriptors of {t:?} in the pool, {n} in its sets");
            }
        }
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
        let resources = GridFields::all(&grid);
        let info = vk::BufferCreateInfo::default().size(0).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: the device is live and idle; the create info is deliberately invalid (size
        // zero) for the layer to report, and a buffer the driver makes anyway is destroyed.
        unsafe {
            if let Ok(buffer) = b.raw_device().create_buffer(&info, None) {
                b.raw_device().destroy_buffer(buffer, None);
            }
        }
        let e = b.allocate(resources.resources()).expect_err("the validation error").to_string();
        assert!(e.contains("validation error") && e.contains("VUID-VkBufferCreateInfo-size-00912"), "{e}");
        b.allocate(&[]).expect("clean again");
        b.allocate(resources.resources()).expect("clean again");
        b.run(&step::diagnostics(&grid), &StepInputs::default()).expect("diagnostics");
        b.finish().expect("finish");
    }

    /// Allocating frees what it no longer holds and keeps what it still does: the allocator
    /// holds the same bytes after a grid's resources are allocated once, twice, and again
    /// after a larger grid's, at least their bytes more than before the first; a Jacobi
    /// scene's resources take the multigrid workspace less than a multigrid scene's, and
    /// switching between the two frees and takes exactly that; a resource kept across an
    /// allocation keeps its values.
    #[test]
    fn allocating_again_frees_what_it_no_longer_holds() {
        use fluid_core::params::PressureSolver;
        let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
        let in_use =
            |b: &VulkanBackend| b.allocator.as_ref().expect("allocator").generate_report().total_allocated_bytes;
        let small = GridFields::all(&Grid::new(33, 20, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid"));
        let large = GridFields::all(&Grid::new(130, 90, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
        let before = in_use(&b);
        b.allocate(small.resources()).expect("allocate");
        let once = in_use(&b);
        assert!(once >= before + small.bytes(), "{before} bytes, then {once} with {} of resources", small.bytes());
        b.allocate(small.resources()).expect("allocate");
        assert_eq!(in_use(&b), once, "allocated twice");
        b.allocate(large.resources()).expect("allocate");
        assert!(in_use(&b) >= before + large.bytes());
        b.allocate(small.resources()).expect("allocate");
        assert_eq!(in_use(&b), once, "after a larger grid");
        b.allocate(&[]).expect("nothing");
        assert_eq!(in_use(&b), before, "everything freed");
        // The solver's workspace comes and goes with the solver; the velocity stays.
        let grid = Grid::new(64, 48, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let params = |solver| {
            let mut p = SimParams::default();
            p.pressure.solver = solver;
            p
        };
        let jacobi = GridFields::declare(&grid, &params(PressureSolver::Jacobi));
        let multigrid = GridFields::declare(&grid, &params(PressureSolver::Multigrid));
        let workspace = multigrid.desc(FieldId::Multigrid).bytes();
        assert!(workspace > 0 && jacobi.desc(FieldId::Multigrid).bytes() == 0);
        b.allocate(jacobi.resources()).expect("jacobi");
        let u: Vec<f32> = (0..grid.len(FieldId::U)).map(|k| k as f32).collect();
        b.upload(FieldId::U.into(), &u).expect("upload");
        let lean = in_use(&b);
        b.allocate(multigrid.resources()).expect("multigrid");
        assert!(in_use(&b) >= lean + workspace, "{} against {lean} + {workspace}", in_use(&b));
        assert_eq!(b.download(FieldId::U.into()).expect("u"), u, "the velocity was kept");
        b.allocate(jacobi.resources()).expect("jacobi again");
        assert_eq!(in_use(&b), lean);
        let report = b.memory().expect("memory");
        assert_eq!(report.resources.len(), jacobi.resources().len());
        assert!(report.total == lean && report.reserved >= report.total, "{report:?}");
    }

    /// A smoke step, replayed, under the validation layer (with synchronization validation):
    /// any validation error fails `run`/`finish`. `FLUID_REQUIRE_VALIDATION=1` (set by
    /// `scripts/test.sh`) makes a missing layer a failure too.
    #[test]
    fn steps_replay_cleanly_under_validation() {
        let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
        require_validation(&b);
        let grid = Grid::new(33, 20, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
        let params = SimParams { viscosity: 0.01, vorticity: 0.3, ..SimParams::default() };
        b.allocate(GridFields::declare(&grid, &params).resources()).expect("allocate");
        let step = step::step(&grid, &params);
        let diagnostics = step::diagnostics(&grid);
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
        assert_eq!(r.len(), step::SLOT_STATE_MAX + step::STATE_FIELDS.len());
        assert!(r.iter().all(|x| x.is_finite()), "{r:?}");
        b.finish().expect("finish");
        let density = b.download(FieldId::Density.into()).expect("download");
        assert!(density.iter().any(|x| *x > 0.0), "the splats never arrived");
        // An empty schedule (e.g. the setup of a solver that needs none) is a valid no-op.
        let empty = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]).build();
        b.run(&empty, &StepInputs::default()).expect("empty schedule");
        b.finish().expect("finish");
    }
}
