//! The device context: the logical device, its queue, memory allocator and command pools, the
//! record of submissions in flight, and the objects waiting for them before they are destroyed.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, Allocator, AllocatorCreateDesc};
use swirly_ir::{Result, wait};

use super::instance::{Instance, PhysicalDevice};
use crate::{err, setup_lock, vk_err};

/// How long a wait for the GPU may take before it is reported as a failure, not a hang.
const WAIT_NS: u64 = 300 * 1_000_000_000;

/// A Vulkan object to destroy once the submissions that may use it are done.
pub(super) enum Retired {
    Buffer(vk::Buffer, Option<Box<Allocation>>),
    /// A command buffer of pool `.0`.
    CommandBuffer(usize, vk::CommandBuffer),
    Fence(vk::Fence),
    DescriptorPool(vk::DescriptorPool),
    QueryPool(vk::QueryPool),
    Pipeline(vk::Pipeline, vk::PipelineLayout),
    SetLayout(vk::DescriptorSetLayout),
}

/// Submissions and what waits for them. Serials count submissions from 1; 0 is "never used".
#[derive(Default)]
struct Tracker {
    latest: u64,
    /// Submitted and not yet seen complete.
    pending: BTreeSet<u64>,
    /// Objects dropped while a submission up to their tag was pending.
    retired: Vec<(u64, Retired)>,
    /// The value the latest submission signalled on the timeline semaphore.
    timeline_value: u64,
    /// The application's timeline values the next submission waits for.
    waits: Vec<(vk::Semaphore, u64)>,
}

impl Tracker {
    /// Whether every submission up to `tag` is complete.
    fn quiet_through(&self, tag: u64) -> bool {
        self.pending.range(..=tag).next().is_none()
    }
}

/// Limits of the device the backend plans with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) timestamp_period_ns: f64,
    pub(crate) uniform_offset_alignment: u64,
    pub(crate) max_storage_range: u64,
    pub(crate) max_workgroups: [u32; 3],
    /// f16 storage: see [`Context::half`].
    pub(crate) half: Option<bool>,
}

/// A logical device with one queue, and everything made on it through [`super`].
pub(crate) struct Context {
    pub(super) device: ash::Device,
    physical: vk::PhysicalDevice,
    /// Whether the context created the device (else it is an application's, left alone).
    owned: bool,
    queue: Mutex<vk::Queue>,
    allocator: Mutex<Option<Allocator>>,
    /// Command pools: [`super::PoolKind`] indexes them. Recording into a command buffer holds
    /// its pool's lock (Vulkan wants pools externally synchronised).
    pub(super) pools: [Mutex<vk::CommandPool>; 2],
    /// Queue families that share the field buffers; empty: exclusive to `family`.
    pub(super) share: Vec<u32>,
    /// Signalled by every submission with the next value; null without timeline semaphores.
    timeline: vk::Semaphore,
    tracker: Mutex<Tracker>,
    limits: Limits,
    /// The most bytes the allocator has handed out at once.
    peak: AtomicU64,
    /// Declared last: destroyed after the device.
    instance: Instance,
}

/// Whether `physical` can store `f16` in buffers and compute with it: `Some(io16)` when it
/// has `shaderFloat16` (through `VK_KHR_shader_float16_int8`) and 16-bit storage buffers,
/// `io16` whether it also has 16-bit shader inputs and outputs.
pub(crate) fn half_support(instance: &Instance, physical: &PhysicalDevice) -> Option<bool> {
    // SAFETY: `physical` was listed by this live instance.
    let extensions = unsafe { instance.instance.enumerate_device_extension_properties(physical.handle) }.ok()?;
    let named = |want: &std::ffi::CStr| extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(want));
    if !named(c"VK_KHR_shader_float16_int8") {
        return None;
    }
    let mut storage16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut float16 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut storage16).push_next(&mut float16);
    // SAFETY: `physical` is live; the chain's structs are of Vulkan 1.1 (16-bit storage) and of
    // an extension the device has, and outlive the call.
    unsafe { instance.instance.get_physical_device_features2(physical.handle, &mut features) };
    let has = storage16.storage_buffer16_bit_access == vk::TRUE
        && storage16.uniform_and_storage_buffer16_bit_access == vk::TRUE
        && float16.shader_float16 == vk::TRUE;
    has.then_some(storage16.storage_input_output16 == vk::TRUE)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Context {
    /// A new device on `physical`'s queue family `family` (queue 0), owned by the context.
    pub(crate) fn create(instance: Instance, physical: &PhysicalDevice, family: u32) -> Result<Arc<Context>> {
        let _setup = setup_lock();
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let half = half_support(&instance, physical);
        let extensions = [c"VK_KHR_shader_float16_int8".as_ptr()];
        let mut storage16 = vk::PhysicalDevice16BitStorageFeatures::default();
        let mut float16 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
        let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
        if let Some(io16) = half {
            // f16 storage (`storage.format = "f16"`): the features its kernels' SPIR-V declares.
            storage16 = storage16
                .storage_buffer16_bit_access(true)
                .uniform_and_storage_buffer16_bit_access(true)
                .storage_input_output16(io16);
            float16 = float16.shader_float16(true);
            info = info.enabled_extension_names(&extensions).push_next(&mut storage16).push_next(&mut float16);
        }
        // SAFETY: `info` and the arrays and chain it points to outlive the call; `physical` was
        // listed by this live instance, and the features and extension asked for are those it
        // reported (`half_support`).
        let device = unsafe { instance.instance.create_device(physical.handle, &info, None) }
            .map_err(|e| vk_err("vkCreateDevice", e))?;
        // SAFETY: the device was just made from this physical device of this instance, with
        // queue 0 of `family`; the context owns it.
        unsafe { Context::assemble(instance, physical, device, family, 0, true, Vec::new(), false, half) }
    }

    /// The context over `device`.
    ///
    /// # Safety
    /// `device` was created from `physical` of `instance` with at least `queue_index + 1` queues
    /// of `family` (and with the `timelineSemaphore` feature on if `timeline`); all of them
    /// outlive the context. `owned`: the context may destroy the device when dropped, and
    /// nothing else uses it. Otherwise the application's contract of `from_raw` holds.
    pub(super) unsafe fn assemble(
        instance: Instance,
        physical: &PhysicalDevice,
        device: ash::Device,
        family: u32,
        queue_index: u32,
        owned: bool,
        share: Vec<u32>,
        timeline: bool,
        half: Option<bool>,
    ) -> Result<Arc<Context>> {
        let limits = &physical.props.limits;
        // SAFETY: the caller guarantees the device has this queue.
        let queue = unsafe { device.get_device_queue(family, queue_index) };
        let mut ctx = Context {
            device,
            physical: physical.handle,
            owned,
            queue: Mutex::new(queue),
            allocator: Mutex::new(None),
            pools: [Mutex::new(vk::CommandPool::null()), Mutex::new(vk::CommandPool::null())],
            share,
            timeline: vk::Semaphore::null(),
            tracker: Mutex::new(Tracker::default()),
            peak: AtomicU64::new(0),
            limits: Limits {
                timestamp_period_ns: f64::from(limits.timestamp_period),
                uniform_offset_alignment: limits.min_uniform_buffer_offset_alignment.max(1),
                max_storage_range: u64::from(limits.max_storage_buffer_range),
                max_workgroups: limits.max_compute_work_group_count,
                half,
            },
            instance,
        };
        // From here on `Drop` cleans up whatever was made.
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: ctx.instance.instance.clone(),
            device: ctx.device.clone(),
            physical_device: ctx.physical,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        })
        .map_err(|e| err(format!("gpu-allocator: {e}")))?;
        *lock(&ctx.allocator) = Some(allocator);
        for (k, flags) in [vk::CommandPoolCreateFlags::empty(), vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER]
            .into_iter()
            .enumerate()
        {
            let info = vk::CommandPoolCreateInfo::default().queue_family_index(family).flags(flags);
            // SAFETY: the device is live; the create info is valid.
            *lock(&ctx.pools[k]) =
                unsafe { ctx.device.create_command_pool(&info, None) }.map_err(|e| vk_err("vkCreateCommandPool", e))?;
        }
        if timeline {
            let mut kind = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
            // SAFETY: the device is live and has timeline semaphores on (the caller's
            // guarantee); `info` and its chain outlive the call. `Drop` destroys it.
            ctx.timeline = unsafe { ctx.device.create_semaphore(&info, None) }
                .map_err(|e| vk_err("vkCreateSemaphore (timeline)", e))?;
        }
        Ok(Arc::new(ctx))
    }

    /// Whether the device was made with f16 storage on: `Some(io16)`, where `io16` says
    /// whether 16-bit shader inputs and outputs are on too (else a module must not declare
    /// them).
    pub(crate) fn half(&self) -> Option<bool> {
        self.limits.half
    }

    /// The logical device (an application that shares it calls into it through `ash`).
    pub(crate) fn device(&self) -> &ash::Device {
        &self.device
    }

    /// The queue submissions go to.
    pub(crate) fn queue(&self) -> vk::Queue {
        *lock(&self.queue)
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Whether this backend's validation messenger is on.
    pub(crate) fn validation(&self) -> bool {
        self.instance.validation()
    }

    /// Validation errors since the last call, as one error.
    pub(crate) fn take_errors(&self, what: &str) -> Result<()> {
        self.instance.take_errors(what)
    }

    /// Note the allocator's total after an allocation (the most it has handed out at once).
    pub(super) fn note_peak(&self, allocated: u64) {
        self.peak.fetch_max(allocated, Ordering::Relaxed);
    }

    /// The most bytes the allocator has handed out at once.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Set the peak back to `bytes` (after a measurement whose buffers do not count).
    pub(crate) fn restore_peak(&self, bytes: u64) {
        self.peak.store(bytes, Ordering::Relaxed);
    }

    /// Bytes the allocator has handed out, and the bytes of its memory blocks.
    pub(crate) fn memory(&self) -> (u64, u64) {
        lock(&self.allocator)
            .as_ref()
            .map(|a| a.generate_report())
            .map_or((0, 0), |r| (r.total_allocated_bytes, r.total_capacity_bytes))
    }

    /// The allocator, for buffers.
    pub(super) fn allocator(&self) -> MutexGuard<'_, Option<Allocator>> {
        lock(&self.allocator)
    }

    /// The timeline semaphore and the value of the latest submission; `None` without one.
    pub(crate) fn timeline(&self) -> Option<(vk::Semaphore, u64)> {
        (self.timeline != vk::Semaphore::null()).then(|| (self.timeline, lock(&self.tracker).timeline_value))
    }

    /// Whether the context signals a timeline semaphore.
    pub(crate) fn has_timeline(&self) -> bool {
        self.timeline != vk::Semaphore::null()
    }

    /// Make the next submission wait for the application's timeline `semaphore` to reach
    /// `value` (see [`crate::VulkanBackend::wait_before_next`], whose caller vouches for it).
    pub(super) fn push_wait(&self, semaphore: vk::Semaphore, value: u64) {
        lock(&self.tracker).waits.push((semaphore, value));
    }

    /// Whether submission `serial` (0: none) and every one before it are seen complete.
    pub(crate) fn is_complete(&self, serial: u64) -> bool {
        lock(&self.tracker).quiet_through(serial)
    }

    /// The queue, held: [`super::commands::submit`] holds it while it checks, submits and marks
    /// the command buffers, so no two submissions of one buffer can interleave.
    pub(super) fn lock_queue(&self) -> MutexGuard<'_, vk::Queue> {
        lock(&self.queue)
    }

    /// Submit the command buffers `handles` to the queue (`queue`, held), signalling `fence`
    /// (which must not be pending) and this context's timeline, after the application's
    /// timeline values asked for; the serial of the submission. Every submission goes through
    /// here, from [`super::commands::submit`], which vouches for the command buffers.
    pub(super) fn submit(
        &self,
        queue: &MutexGuard<'_, vk::Queue>,
        what: &str,
        handles: &[vk::CommandBuffer],
        fence: &Fence,
    ) -> Result<u64> {
        if !std::ptr::eq(Arc::as_ptr(&fence.ctx), self) || fence.pending() {
            return Err(err(format!("{what}: the fence is another device's or still pending")));
        }
        let mut t = lock(&self.tracker);
        let serial = t.latest + 1;
        // SAFETY: the fence is this device's and not pending (checked), so no submission uses it.
        unsafe { self.device.reset_fences(&[fence.handle]) }.map_err(|e| vk_err("vkResetFences", e))?;
        let info = vk::SubmitInfo::default().command_buffers(handles);
        let submitted = if self.timeline == vk::Semaphore::null() {
            // SAFETY: every command buffer is this device's, executable and, if pending,
            // recorded for simultaneous use, and everything it uses is alive (`commands::submit`
            // checked it); the fence is unsignalled and not in use; the queue is held.
            unsafe { self.device.queue_submit(**queue, &[info], fence.handle) }
        } else {
            let value = t.timeline_value + 1;
            let wait_semaphores: Vec<vk::Semaphore> = t.waits.iter().map(|w| w.0).collect();
            let wait_values: Vec<u64> = t.waits.iter().map(|w| w.1).collect();
            let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; t.waits.len()];
            let (signal, signal_values) = ([self.timeline], [value]);
            let mut values = vk::TimelineSemaphoreSubmitInfo::default()
                .wait_semaphore_values(&wait_values)
                .signal_semaphore_values(&signal_values);
            let info = info
                .wait_semaphores(&wait_semaphores)
                .wait_dst_stage_mask(&stages)
                .signal_semaphores(&signal)
                .push_next(&mut values);
            // SAFETY: as above; the timeline semaphore is this context's and its values only
            // grow; the waited semaphores are timeline semaphores of this device that outlive
            // the submission (`wait_before_next`'s contract).
            let r = unsafe { self.device.queue_submit(**queue, &[info], fence.handle) };
            if r.is_ok() {
                t.timeline_value = value;
                t.waits.clear();
            }
            r
        };
        submitted.map_err(|e| vk_err(&format!("{what}: vkQueueSubmit"), e))?;
        t.latest = serial;
        t.pending.insert(serial);
        fence.serial.store(serial, Ordering::Release);
        Ok(serial)
    }

    /// Submission `serial` is seen complete, and with it every earlier one (a fence signalled
    /// by `vkQueueSubmit` waits for all commands earlier in submission order): destroy what
    /// waited for them.
    fn complete(&self, serial: u64) {
        let mut t = lock(&self.tracker);
        if t.pending.first().is_none_or(|&first| first > serial) {
            return;
        }
        t.pending = t.pending.split_off(&(serial + 1));
        let retired = std::mem::take(&mut t.retired);
        let (now, later): (Vec<_>, Vec<_>) = retired.into_iter().partition(|(tag, _)| t.quiet_through(*tag));
        t.retired = later;
        drop(t);
        for (_, r) in now {
            self.destroy(r);
        }
    }

    /// Destroy `object` once every submission up to `tag` (the last that may use it) is done.
    pub(super) fn retire(&self, tag: u64, object: Retired) {
        let mut t = lock(&self.tracker);
        if t.quiet_through(tag) {
            drop(t);
            self.destroy(object);
        } else {
            t.retired.push((tag, object));
        }
    }

    /// The serial of the latest submission.
    pub(super) fn latest(&self) -> u64 {
        lock(&self.tracker).latest
    }

    fn destroy(&self, object: Retired) {
        // SAFETY: the object is this device's, destroyed once, and no submission that may use
        // it is pending (`retire`, `complete`) or the queue is idle (`drop`); a command buffer's
        // pool is held while it is freed.
        unsafe {
            match object {
                Retired::Buffer(buffer, alloc) => {
                    self.device.destroy_buffer(buffer, None);
                    if let (Some(alloc), Some(a)) = (alloc, lock(&self.allocator).as_mut()) {
                        // Freeing fails only for another allocator's allocation: nothing to recover.
                        let _ = a.free(*alloc);
                    }
                }
                Retired::CommandBuffer(pool, cb) => {
                    let pool = lock(&self.pools[pool]);
                    self.device.free_command_buffers(*pool, &[cb]);
                }
                Retired::Fence(f) => self.device.destroy_fence(f, None),
                Retired::DescriptorPool(p) => self.device.destroy_descriptor_pool(p, None),
                Retired::QueryPool(q) => self.device.destroy_query_pool(q, None),
                Retired::Pipeline(p, layout) => {
                    self.device.destroy_pipeline(p, None);
                    self.device.destroy_pipeline_layout(layout, None);
                }
                Retired::SetLayout(l) => self.device.destroy_descriptor_set_layout(l, None),
            }
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let _setup = setup_lock();
        // SAFETY: the queue is this context's to use during its calls (an application sharing
        // it does not submit meanwhile, see `from_raw`). Every submission went to it, so once
        // it is idle nothing below is in use; on a lost device they are destroyed anyway.
        let _ = unsafe { self.device.queue_wait_idle(*lock(&self.queue)) };
        let retired = std::mem::take(&mut lock(&self.tracker).retired);
        for (_, r) in retired {
            self.destroy(r);
        }
        // SAFETY: idle; every object made from the device is gone (each holds the context);
        // each is destroyed once; the allocator (memory of this device) goes before the device.
        unsafe {
            for pool in &self.pools {
                let pool = *lock(pool);
                if pool != vk::CommandPool::null() {
                    self.device.destroy_command_pool(pool, None);
                }
            }
            if self.timeline != vk::Semaphore::null() {
                self.device.destroy_semaphore(self.timeline, None);
            }
            drop(lock(&self.allocator).take());
            if self.owned {
                self.device.destroy_device(None);
            }
        }
    }
}

/// A fence and the submission it was last given to.
pub(crate) struct Fence {
    ctx: Arc<Context>,
    handle: vk::Fence,
    /// The pending submission (0: none).
    serial: AtomicU64,
}

impl Fence {
    pub(crate) fn new(ctx: &Arc<Context>) -> Result<Fence> {
        // SAFETY: the device is live; the create info is valid.
        let handle = unsafe { ctx.device.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(|e| vk_err("vkCreateFence", e))?;
        Ok(Fence { ctx: ctx.clone(), handle, serial: AtomicU64::new(0) })
    }

    /// Whether a submission with this fence is not yet seen complete.
    pub(crate) fn pending(&self) -> bool {
        !self.ctx.is_complete(self.serial.load(Ordering::Acquire))
    }

    /// Whether its submission is done (or there is none); never waits.
    pub(crate) fn done(&self) -> Result<bool> {
        let serial = self.serial.load(Ordering::Acquire);
        if self.ctx.is_complete(serial) {
            return Ok(true);
        }
        // SAFETY: the fence is this device's.
        let signalled =
            unsafe { self.ctx.device.get_fence_status(self.handle) }.map_err(|e| vk_err("vkGetFenceStatus", e))?;
        if signalled {
            self.finished(serial);
        }
        Ok(signalled)
    }

    /// Wait for its submission with a deadline, so a hung or lost device is an error: polled
    /// for up to `spin` ([`swirly_ir::wait`]), then waited for blocking.
    pub(crate) fn wait(&self, spin: Duration, what: &str) -> Result<()> {
        if self.done()? || wait::poll_for(spin, || self.done().map_err(|e| err(format!("{what}: {e}"))))? {
            return Ok(());
        }
        // SAFETY: the fence is this device's and was submitted.
        match unsafe { self.ctx.device.wait_for_fences(&[self.handle], true, WAIT_NS) } {
            Ok(()) => {
                self.finished(self.serial.load(Ordering::Acquire));
                Ok(())
            }
            Err(vk::Result::TIMEOUT) => {
                Err(err(format!("{what}: the GPU did not finish within {} s", WAIT_NS / 1_000_000_000)))
            }
            Err(e) => Err(vk_err(what, e)),
        }
    }

    fn finished(&self, serial: u64) {
        if serial != 0 && self.serial.compare_exchange(serial, 0, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            self.ctx.complete(serial);
        }
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        let serial = *self.serial.get_mut();
        self.ctx.retire(serial, Retired::Fence(self.handle));
    }
}
