//! The backend on an application's own Vulkan device ([`VulkanBackend::from_raw`]): it steps as
//! on its own device, its field buffers hold the fields for the application's commands, and
//! dropping it leaves the application's device and instance alive.
//!
//! The test plays the application with ash directly, so it needs `unsafe` (allowed in this
//! crate only). On a machine without a Vulkan device it fails: install mesa-vulkan-drivers.
#![allow(unsafe_code, reason = "the test plays an application that drives Vulkan through ash")]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use ash::vk;
use swirly_core::{Backend, Boundary, Error, FieldId, Grid, SimParams, Splat, StepInputs};
use swirly_vulkan::{RawDevice, VulkanBackend};

/// An application's Vulkan: an instance (with the validation layer when installed), a device
/// with one queue of a family that has compute, a command pool and a fence.
struct App {
    _entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    family: u32,
    queue: vk::Queue,
    /// With timeline semaphores: a compute-only family's first queue, where the device has one
    /// (for the simulation, beside the renderer's `queue`).
    compute: Option<(u32, vk::Queue)>,
    /// With timeline semaphores: the application's own timeline (its renderer's progress).
    own_timeline: vk::Semaphore,
    pool: vk::CommandPool,
    fence: vk::Fence,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// The validation layer's errors and warnings; kept alive while the messenger may write.
    heard: Arc<Mutex<Vec<String>>>,
}

/// Collects the validation layer's messages into the `Mutex<Vec<String>>` at `user`.
///
/// # Safety
/// Called by the loader with a valid callback-data pointer and the user pointer given at
/// messenger creation (an `Arc`'s contents, alive until the messenger is destroyed).
unsafe extern "system" fn on_message(
    _severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: per the callback's contract `data` is valid for the duration of the call.
    let message = unsafe { (*data).message_as_c_str() }.map(|m| m.to_string_lossy().into_owned()).unwrap_or_default();
    // SAFETY: `user` is the `Arc<Mutex<Vec<String>>>` contents the `App` keeps alive until it
    // destroys the messenger.
    let heard = unsafe { &*(user as *const Mutex<Vec<String>>) };
    heard.lock().expect("lock").push(message);
    vk::FALSE
}

/// One test at a time: each sets up two instances and devices, and lavapipe once crashed with
/// setups on two threads at once (doc/ARCHITECTURE.md, "Setup one thread at a time").
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

impl App {
    /// Vulkan 1.1, one queue of a graphics and compute family.
    fn new() -> App {
        App::make(false)
    }

    /// Vulkan 1.2 with timeline semaphores on, the renderer's queue and, where the device has a
    /// compute-only family, one of its queues for the simulation.
    fn with_timelines() -> App {
        App::make(true)
    }

    fn make(timelines: bool) -> App {
        // SAFETY: loading the system's Vulkan loader runs its initialisers; nothing else yet.
        let entry = unsafe { ash::Entry::load() }.expect("the Vulkan loader (apt-get install libvulkan1)");
        // SAFETY: enumerating layers has no preconditions.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.expect("layers");
        let validation =
            layers.iter().any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == c"VK_LAYER_KHRONOS_validation"));
        if std::env::var("FLUID_REQUIRE_VALIDATION").as_deref() == Ok("1") {
            assert!(
                validation,
                "the Khronos validation layer is not installed (apt-get install vulkan-validationlayers)"
            );
        }
        let api = if timelines { vk::API_VERSION_1_2 } else { vk::API_VERSION_1_1 };
        let app = vk::ApplicationInfo::default().application_name(c"a game").api_version(api);
        let layer_names = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let extensions = [ash::ext::debug_utils::NAME.as_ptr(), c"VK_EXT_validation_features".as_ptr()];
        // Synchronization validation too, for the barriers of both on the shared queue.
        let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
        let mut info = vk::InstanceCreateInfo::default().application_info(&app);
        if validation {
            info = info.enabled_layer_names(&layer_names).enabled_extension_names(&extensions).push_next(&mut features);
        }
        // SAFETY: `info` and what it points to outlive the call.
        let instance = unsafe { entry.create_instance(&info, None) }.expect("vkCreateInstance");
        let heard = Arc::new(Mutex::new(Vec::new()));
        let debug = validation.then(|| {
            let utils = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION,
                )
                .pfn_user_callback(Some(on_message))
                .user_data(Arc::as_ptr(&heard) as *mut c_void);
            // SAFETY: the instance enabled VK_EXT_debug_utils; `heard` outlives the messenger.
            let messenger = unsafe { utils.create_debug_utils_messenger(&info, None) }.expect("messenger");
            (utils, messenger)
        });
        // A renderer's choice: the first device with a family that does graphics and compute.
        // SAFETY: the instance is live.
        let physicals = unsafe { instance.enumerate_physical_devices() }.expect("devices");
        let (physical, family) = physicals
            .iter()
            .find_map(|&pd| {
                // SAFETY: `pd` belongs to the live instance.
                let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
                let wanted = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
                let family = families.iter().position(|f| f.queue_flags.contains(wanted))?;
                Some((pd, family as u32))
            })
            .expect("a Vulkan device with a graphics and compute queue (apt-get install mesa-vulkan-drivers)");
        // SAFETY: `physical` belongs to the live instance.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let compute_family = families
            .iter()
            .position(|f| {
                f.queue_flags.contains(vk::QueueFlags::COMPUTE) && !f.queue_flags.contains(vk::QueueFlags::GRAPHICS)
            })
            .filter(|_| timelines)
            .map(|i| i as u32);
        let priorities = [1.0f32];
        let queues: Vec<vk::DeviceQueueCreateInfo> = std::iter::once(family)
            .chain(compute_family)
            .map(|f| vk::DeviceQueueCreateInfo::default().queue_family_index(f).queue_priorities(&priorities))
            .collect();
        let mut features = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
        if timelines {
            info = info.push_next(&mut features);
        }
        // SAFETY: `info` and its chain outlive the call; `physical` belongs to the instance.
        let device = unsafe { instance.create_device(physical, &info, None) }.expect("vkCreateDevice");
        // SAFETY: queue 0 of `family` was requested.
        let queue = unsafe { device.get_device_queue(family, 0) };
        // SAFETY: queue 0 of `compute_family` was requested where there is one.
        let compute = compute_family.map(|f| (f, unsafe { device.get_device_queue(f, 0) }));
        let own_timeline = if timelines {
            let mut kind = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
            // SAFETY: the device has timeline semaphores on; the chain outlives the call.
            unsafe { device.create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut kind), None) }
                .expect("timeline semaphore")
        } else {
            vk::Semaphore::null()
        };
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        // SAFETY: the device is live.
        let pool = unsafe { device.create_command_pool(&pool_info, None) }.expect("pool");
        // SAFETY: the device is live.
        let fence = unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }.expect("fence");
        App {
            _entry: entry,
            instance,
            physical,
            device,
            family,
            queue,
            compute,
            own_timeline,
            pool,
            fence,
            debug,
            heard,
        }
    }

    fn raw(&self) -> RawDevice {
        RawDevice {
            instance: self.instance.clone(),
            physical_device: self.physical,
            device: self.device.clone(),
            queue_family: self.family,
            queue_index: 0,
            share_with: Vec::new(),
            timeline_semaphores: false,
        }
    }

    /// A buffer of host-visible, coherent memory with the memory bound.
    fn host_buffer(&self, bytes: u64, usage: vk::BufferUsageFlags) -> (vk::Buffer, vk::DeviceMemory) {
        let info = vk::BufferCreateInfo::default().size(bytes).usage(usage);
        // SAFETY: the device is live; `info` is valid.
        let buffer = unsafe { self.device.create_buffer(&info, None) }.expect("buffer");
        // SAFETY: `buffer` belongs to the device.
        let req = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        // SAFETY: the physical device belongs to the instance.
        let props = unsafe { self.instance.get_physical_device_memory_properties(self.physical) };
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let kind = (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0 && props.memory_types[i as usize].property_flags.contains(wanted)
            })
            .expect("host-visible memory");
        let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(kind);
        // SAFETY: the device is live; the type index is one of its memory types.
        let memory = unsafe { self.device.allocate_memory(&alloc, None) }.expect("memory");
        // SAFETY: the memory is of a type the buffer allows, large enough, and bound once.
        unsafe { self.device.bind_buffer_memory(buffer, memory, 0) }.expect("bind");
        (buffer, memory)
    }

    fn free(&self, (buffer, memory): (vk::Buffer, vk::DeviceMemory)) {
        // SAFETY: nothing pending uses them (every submission is waited for); each freed once.
        unsafe {
            self.device.destroy_buffer(buffer, None);
            self.device.free_memory(memory, None);
        }
    }

    /// Record with `record` into a fresh command buffer, submit it to `queue` and wait.
    fn submit(&self, queue: vk::Queue, record: impl FnOnce(vk::CommandBuffer)) {
        self.submit_timed(queue, &[], None, record);
    }

    /// [`App::submit`], waiting for timeline values first and signalling one after.
    fn submit_timed(
        &self,
        queue: vk::Queue,
        waits: &[(vk::Semaphore, u64)],
        signal: Option<(vk::Semaphore, u64)>,
        record: impl FnOnce(vk::CommandBuffer),
    ) {
        let cb = self.start(queue, waits, signal, record);
        self.finish(cb);
    }

    /// Record with `record` and submit to `queue` (after `waits`, signalling `signal`), without
    /// waiting: [`App::finish`] waits.
    fn start(
        &self,
        queue: vk::Queue,
        waits: &[(vk::Semaphore, u64)],
        signal: Option<(vk::Semaphore, u64)>,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> vk::CommandBuffer {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool belongs to the device.
        let cb = unsafe { self.device.allocate_command_buffers(&info) }.expect("command buffer")[0];
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `cb` is fresh.
        unsafe { self.device.begin_command_buffer(cb, &begin) }.expect("begin");
        record(cb);
        let cbs = [cb];
        let (wait_sems, wait_values): (Vec<_>, Vec<_>) = waits.iter().copied().unzip();
        let (signal_sems, signal_values): (Vec<_>, Vec<_>) = signal.into_iter().unzip();
        let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; wait_sems.len()];
        let mut values = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values)
            .signal_semaphore_values(&signal_values);
        let mut info = vk::SubmitInfo::default().command_buffers(&cbs);
        if !wait_sems.is_empty() || !signal_sems.is_empty() {
            info = info
                .wait_semaphores(&wait_sems)
                .wait_dst_stage_mask(&stages)
                .signal_semaphores(&signal_sems)
                .push_next(&mut values);
        }
        // SAFETY: `cb` is recording, then executable; the queue is not used by another thread
        // (the backend's calls are not running); the fence is unsignalled (`finish` waits for
        // it and resets it before the next submission); the semaphores are timeline semaphores
        // of this device.
        unsafe {
            self.device.end_command_buffer(cb).expect("end");
            self.device.queue_submit(queue, &[info], self.fence).expect("submit");
        }
        cb
    }

    /// Wait for [`App::start`]'s submission of `cb`, then free it.
    fn finish(&self, cb: vk::CommandBuffer) {
        // SAFETY: the fence belongs to `cb`'s submission; after the wait nothing uses `cb`.
        unsafe {
            self.device.wait_for_fences(&[self.fence], true, 60_000_000_000).expect("wait");
            self.device.reset_fences(&[self.fence]).expect("reset");
            self.device.free_command_buffers(self.pool, &[cb]);
        }
    }

    fn barrier(
        &self,
        cb: vk::CommandBuffer,
        src: (vk::PipelineStageFlags, vk::AccessFlags),
        dst: (vk::PipelineStageFlags, vk::AccessFlags),
    ) {
        let barrier = vk::MemoryBarrier::default().src_access_mask(src.1).dst_access_mask(dst.1);
        // SAFETY: `cb` is recording; a global barrier needs no resources.
        unsafe {
            self.device.cmd_pipeline_barrier(cb, src.0, dst.0, vk::DependencyFlags::empty(), &[barrier], &[], &[])
        };
    }

    /// `bytes` of `buffer`, copied by the application's own commands after the simulation's
    /// writes (a barrier from the compute shaders' writes, as `field_buffer` asks).
    fn read(&self, queue: vk::Queue, buffer: vk::Buffer, bytes: u64) -> Vec<f32> {
        self.copy_out(queue, &[], buffer, bytes)
    }

    /// `bytes` of `buffer`, copied on `queue` after `waits` (timeline values). With no waits the
    /// copy starts with a barrier from the compute shaders' writes (the same queue's steps);
    /// with waits the semaphores are the dependency.
    fn copy_out(&self, queue: vk::Queue, waits: &[(vk::Semaphore, u64)], buffer: vk::Buffer, bytes: u64) -> Vec<f32> {
        let host = self.host_buffer(bytes, vk::BufferUsageFlags::TRANSFER_DST);
        self.submit_timed(queue, waits, None, |cb| {
            if waits.is_empty() {
                self.barrier(
                    cb,
                    (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                    (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_READ),
                );
            }
            let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: bytes }];
            // SAFETY: recording; both buffers hold `bytes`.
            unsafe { self.device.cmd_copy_buffer(cb, buffer, host.0, &region) };
            self.barrier(
                cb,
                (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
        });
        // SAFETY: the memory is host-visible, not mapped elsewhere; the copy finished.
        let ptr = unsafe { self.device.map_memory(host.1, 0, bytes, vk::MemoryMapFlags::empty()) }.expect("map");
        // SAFETY: the mapping holds `bytes` bytes, suitably aligned for f32 (maps are aligned to
        // at least 64 bytes), and nothing writes to it while it is read.
        let values = unsafe { std::slice::from_raw_parts(ptr as *const f32, bytes as usize / 4) }.to_vec();
        // SAFETY: mapped above; unmapped once.
        unsafe { self.device.unmap_memory(host.1) };
        self.free(host);
        values
    }

    /// Fill `buffer` with `value` by the application's own commands.
    fn fill(&self, queue: vk::Queue, buffer: vk::Buffer, bytes: u64, value: f32) {
        self.submit(queue, |cb| {
            self.barrier(
                cb,
                (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
            );
            // SAFETY: recording; the range lies inside the buffer, a multiple of 4 bytes.
            unsafe { self.device.cmd_fill_buffer(cb, buffer, 0, bytes, value.to_bits()) };
        });
    }

    /// The validation layer (where installed) reported no error or warning so far.
    fn assert_quiet(&self) {
        let heard = self.heard.lock().expect("lock").clone();
        assert!(heard.is_empty(), "the validation layer reported: {heard:#?}");
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // SAFETY: every submission was waited for; each object is destroyed once, children
        // before the device, the device before the instance.
        unsafe {
            let _ = self.device.device_wait_idle();
            if self.own_timeline != vk::Semaphore::null() {
                self.device.destroy_semaphore(self.own_timeline, None);
            }
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            if let Some((utils, messenger)) = self.debug.take() {
                utils.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

fn grid() -> Grid {
    Grid::new(40, 28, 1.0, Boundary::Wall, Boundary::Wall).expect("grid")
}

/// Steps `k..k + n` of a small smoke-like run: a splat every step, vorticity and viscosity.
fn steps(b: &mut dyn Backend, k: u32, n: u32) {
    let grid = grid();
    let params = SimParams { viscosity: 0.005, vorticity: 0.3, ..SimParams::default() };
    let step = swirly_core::grid::step::step(&grid, &params);
    let splat = Splat {
        center: [14.0 + (k % 7) as f32, 9.0],
        radius: 4.0,
        velocity: [0.5, 3.0],
        density: 1.0,
        temperature: 2.0,
        ..Splat::default()
    };
    for s in k..k + n {
        let inputs = StepInputs {
            dt: 0.05,
            time: 0.05 * s as f32,
            step: s,
            records: swirly_core::splat::records(&[splat], &grid).expect("splats"),
        };
        b.run(&step, &inputs).expect("step");
    }
}

#[test]
fn steps_on_an_application_device_and_hands_out_its_field_buffers() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let app = App::new();
    // SAFETY: the app's objects are valid, made for each other, outlive the backend (dropped
    // below, before `app`); the instance asked for Vulkan 1.1; the device has queue 0 of the
    // family; this thread alone uses the queue, never during a backend call.
    let mut shared = unsafe { VulkanBackend::from_raw(app.raw()) }.expect("from_raw");
    assert_eq!(shared.queue(), app.queue);
    assert_eq!(shared.raw_device().handle(), app.device.handle());
    assert_eq!(shared.device_summary().queue_family, Some(app.family));
    assert!(!shared.validation(), "the application's messenger hears the layer, not the backend");
    let mut own = VulkanBackend::new().expect("the backend's own device");
    let g = grid();
    shared.allocate(swirly_core::GridFields::all(&g).resources()).expect("allocate");
    own.allocate(swirly_core::GridFields::all(&g).resources()).expect("allocate");
    assert!(matches!(shared.field_buffer(FieldId::Density), Ok(b) if b.bytes == g.len(FieldId::Density) as u64 * 4));
    for k in [0, 5, 6] {
        steps(&mut shared, k * 2, if k == 0 { 10 } else { 1 });
        steps(&mut own, k * 2, if k == 0 { 10 } else { 1 });
        // The fields' buffers now (steps ping-pong them), read with the application's own
        // commands on the same queue right after the steps, hold what `download` returns.
        let fields = [FieldId::U, FieldId::V, FieldId::Density, FieldId::Temperature];
        let reads: Vec<Vec<f32>> = fields
            .iter()
            .map(|&field| {
                let buf = shared.field_buffer(field).expect("field buffer");
                app.read(shared.queue(), buf.buffer, buf.bytes)
            })
            .collect();
        for (field, read) in fields.into_iter().zip(reads) {
            let (x, y) =
                (shared.download(field.into()).expect("download"), own.download(field.into()).expect("download"));
            assert!(
                x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{} differs from the backend's own device",
                field.name()
            );
            assert!(
                read.iter().zip(&x).all(|(p, q)| p.to_bits() == q.to_bits()) && read.len() == x.len(),
                "{}: the application read other values than download",
                field.name()
            );
        }
        assert!(
            shared.download(FieldId::Density.into()).expect("density").iter().any(|d| *d > 0.1),
            "the splats never arrived"
        );
    }
    // The application writes into the density buffer right after a step (after a barrier
    // from the step's writes); the simulation sees the write.
    steps(&mut shared, 20, 1);
    let buf = shared.field_buffer(FieldId::Density).expect("field buffer");
    app.fill(shared.queue(), buf.buffer, buf.bytes, 0.25);
    let d = shared.download(FieldId::Density.into()).expect("density");
    assert!(d.iter().all(|x| *x == 0.25), "the application's write did not reach the field");
    steps(&mut shared, 21, 1);
    shared.finish().expect("finish");
    drop(shared);
    drop(own);
    // The device and the instance outlive the backend: the application keeps using them (its
    // `Drop` destroys them; had the backend destroyed them, that would be a second destroy).
    let probe = app.host_buffer(256, vk::BufferUsageFlags::TRANSFER_DST);
    app.submit(app.queue, |cb| {
        // SAFETY: recording; the range lies inside the buffer.
        unsafe { app.device.cmd_fill_buffer(cb, probe.0, 0, 256, 7) };
    });
    app.free(probe);
    app.assert_quiet();
}

#[test]
fn a_queue_the_device_does_not_have_is_refused() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let app = App::new();
    // SAFETY: the instance's physical device is valid.
    let families = unsafe { app.instance.get_physical_device_queue_family_properties(app.physical) };
    let mut raw = app.raw();
    raw.queue_family = families.len() as u32;
    // SAFETY: as in the test above except the family, which `from_raw` checks before using it.
    let e = unsafe { VulkanBackend::from_raw(raw) }.expect_err("a family past the device's");
    assert!(matches!(&e, Error::InvalidValue { key, .. } if key == "queue_family"), "{e}");
    assert!(e.to_string().contains(&format!("{} queue families", families.len())), "{e}");
    let mut raw = app.raw();
    raw.queue_index = families[app.family as usize].queue_count;
    // SAFETY: as above; the index is checked against the family's count before any use.
    let e = unsafe { VulkanBackend::from_raw(raw) }.expect_err("a queue past the family's");
    assert!(matches!(&e, Error::InvalidValue { key, .. } if key == "queue_index"), "{e}");
    // Nothing of the device was touched: the application goes on.
    // SAFETY: no other thread uses the device.
    unsafe { app.device.device_wait_idle() }.expect("the device is alive");
    app.assert_quiet();
}

/// A renderer on its own queue (the graphics family) beside the simulation on a compute-only
/// family where the device has one (the H100; lavapipe has one family, so there both share its
/// queue): the field buffers are shared by both families, and the two order their work with
/// timeline semaphores alone, no barriers.
#[test]
fn a_renderer_on_another_queue_orders_its_work_with_timelines() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let app = App::with_timelines();
    let (family, _) = app.compute.unwrap_or((app.family, app.queue));
    let raw = RawDevice { queue_family: family, share_with: vec![app.family], timeline_semaphores: true, ..app.raw() };
    // SAFETY: as in the first test; the device has queue 0 of `family` and timeline semaphores
    // on (Vulkan 1.2 features at creation).
    let mut b = unsafe { VulkanBackend::from_raw(raw) }.expect("from_raw");
    assert_eq!(b.device_summary().queue_family, Some(family));
    let (semaphore, before) = b.timeline().expect("a timeline");
    let g = grid();
    b.allocate(swirly_core::GridFields::all(&g).resources()).expect("allocate");
    steps(&mut b, 0, 6);
    let (_, after) = b.timeline().expect("a timeline");
    assert!(after >= before + 7, "every submission signals the next value: {before} -> {after}");
    // The renderer reads the fields on its queue after waiting for the latest value, with no
    // barrier: the semaphore wait is the memory dependency.
    let fields = [FieldId::U, FieldId::V, FieldId::Density];
    let reads: Vec<Vec<f32>> = fields
        .iter()
        .map(|&field| {
            let buf = b.field_buffer(field).expect("field buffer");
            app.copy_out(app.queue, &[(semaphore, after)], buf.buffer, buf.bytes)
        })
        .collect();
    for (field, read) in fields.into_iter().zip(reads) {
        let x = b.download(field.into()).expect("download");
        assert!(
            read.len() == x.len() && read.iter().zip(&x).all(|(p, q)| p.to_bits() == q.to_bits()),
            "{}: the renderer's queue read other values than download",
            field.name()
        );
    }
    assert!(b.download(FieldId::Density.into()).expect("density").iter().any(|d| *d > 0.1), "the splats never arrived");
    // The renderer writes the density on its queue after the latest step and signals its
    // timeline (2); the backend's next submission waits for that value. The renderer's work is
    // held back (it waits for value 1, which the host signals 0.2 s later from another thread)
    // while the backend's download is already submitted: only the wait orders the two.
    steps(&mut b, 6, 1);
    let buf = b.field_buffer(FieldId::Density).expect("field buffer");
    let (_, latest) = b.timeline().expect("a timeline");
    let fill = app.start(app.queue, &[(semaphore, latest), (app.own_timeline, 1)], Some((app.own_timeline, 2)), |cb| {
        // SAFETY: recording; the range lies inside the buffer, a multiple of 4 bytes.
        unsafe { app.device.cmd_fill_buffer(cb, buf.buffer, 0, buf.bytes, 0.25f32.to_bits()) };
    });
    // SAFETY: the application's timeline semaphore of this device outlives the backend.
    unsafe { b.wait_before_next(app.own_timeline, 2) }.expect("wait_before_next");
    let d = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let info = vk::SemaphoreSignalInfo::default().semaphore(app.own_timeline).value(1);
            // SAFETY: a timeline semaphore of the device, at value 0; signalling it from the host
            // needs no other synchronisation.
            unsafe { app.device.signal_semaphore(&info) }.expect("vkSignalSemaphore");
        });
        b.download(FieldId::Density.into()).expect("density")
    });
    app.finish(fill);
    assert!(d.iter().all(|x| *x == 0.25), "the download did not wait for the renderer's write");
    steps(&mut b, 7, 1);
    b.finish().expect("finish");
    drop(b);
    app.assert_quiet();
}

/// Timeline waits need timeline semaphores; shared families must exist.
#[test]
fn timelines_and_shared_families_are_checked() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let app = App::new();
    // SAFETY: as in the first test.
    let mut b = unsafe { VulkanBackend::from_raw(app.raw()) }.expect("from_raw");
    assert_eq!(b.timeline(), None);
    // SAFETY: the call fails before it keeps the handle.
    let e = unsafe { b.wait_before_next(vk::Semaphore::null(), 1) }.expect_err("no timelines");
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    drop(b);
    // SAFETY: the instance's physical device is valid.
    let families = unsafe { app.instance.get_physical_device_queue_family_properties(app.physical) }.len() as u32;
    let raw = RawDevice { share_with: vec![app.family, families + 3], ..app.raw() };
    // SAFETY: as in the first test; the shared family is checked before any use.
    let e = unsafe { VulkanBackend::from_raw(raw) }.expect_err("a family past the device's");
    assert!(
        matches!(&e, Error::InvalidValue { key, value, .. } if key == "share_with" && *value == (families + 3).to_string()),
        "{e}"
    );
    app.assert_quiet();
}
