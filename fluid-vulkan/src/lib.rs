//! # fluid-vulkan
//!
//! The raw Vulkan backend of the fluid engine: ash 0.38 over the system's Vulkan loader (opened
//! at run time, so a machine without Vulkan gets an error, not a link failure), memory through
//! gpu-allocator, and the SPIR-V that `cargo xtask shaders` compiles from the very WGSL files the
//! wgpu backend runs (`shaders/gen/<entry>.spv`, committed; 16×16 workgroups, bounds checks
//! `Restrict`, SPIR-V 1.3, no debug info; checked fresh by `cargo xtask shaders --check` and by
//! `spirv-val --target-env vulkan1.1` in CI).
//!
//! What it does differently from wgpu, and why it exists: a schedule is recorded **once** into a
//! command buffer and replayed every step; per-step inputs (dt, splats) are copied from a
//! host-visible ring slot by a small pre-recorded command buffer submitted in front of it;
//! pipeline barriers go only between dispatches that touch the same buffer (read after write,
//! write after read or write). See [`VulkanBackend`].
//!
//! Device choice: the first discrete GPU, else integrated, virtual, CPU; the environment variable
//! `FLUID_VULKAN_DEVICE` picks the device whose name contains it (case-insensitive). Queue: a
//! compute-only family where the device has one, else the first with compute;
//! `FLUID_VULKAN_QUEUE=graphics` takes the graphics family instead (see [`QueueChoice`]).
//! On an application's device: [`VulkanBackend::from_raw`] runs on a renderer's own device and
//! queue ([`RawDevice`]), and [`VulkanBackend::field_buffer`] hands out the buffer behind a field
//! to draw from with no read-back; a renderer on another queue family shares the buffers
//! ([`RawDevice::share_with`]) and orders its work with timeline semaphores
//! ([`VulkanBackend::timeline`], [`VulkanBackend::wait_before_next`]). [`ash`] is re-exported for
//! the handles' types.
//!
//! Validation: the Khronos validation layer is enabled in debug builds when it is installed
//! (Debian: `vulkan-validationlayers`); `FLUID_VULKAN_VALIDATION=1` asks for it in any build (an
//! error when it is missing), `=0` turns it off. Validation errors make the next backend call fail
//! with the layer's message.
//!
//! This is the one crate of the workspace allowed `unsafe`: every call into Vulkan is. Each
//! block says why it is sound in a `// SAFETY:` comment (enforced by
//! `clippy::undocumented_unsafe_blocks`).
#![expect(unsafe_code, reason = "raw Vulkan through ash: every Vulkan call is unsafe")]
#![deny(clippy::undocumented_unsafe_blocks)]

mod backend;
pub mod spirv;

/// The ash this backend is built on: an application that hands the backend its device
/// ([`VulkanBackend::from_raw`]) or uses its buffers needs this version's types.
pub use ash;
pub use backend::{FieldBuffer, RawDevice, VulkanBackend};

use std::cell::Cell;
use std::ffi::{CStr, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use fluid_core::{Error, Result};

const NAME: &str = "vulkan";
const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";
/// The layer's extension that turns on synchronization validation.
const VALIDATION_FEATURES: &CStr = c"VK_EXT_validation_features";

fn vk_err(what: &str, e: vk::Result) -> Error {
    let message = if e == vk::Result::ERROR_DEVICE_LOST {
        format!("{what}: the device was lost ({e})")
    } else {
        format!("{what}: {e}")
    };
    Error::Backend { backend: NAME, message }
}

/// One Vulkan physical device as `fluid info` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSummary {
    /// Device name, e.g. `NVIDIA H100 80GB HBM3` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// Discrete, integrated, virtual, CPU, other.
    pub device_type: String,
    /// Vulkan API version the device supports, `major.minor.patch`.
    pub api_version: String,
    /// Driver version as the vendor encodes it (raw).
    pub driver_version: u32,
    /// Whether compute queues can write timestamps.
    pub timestamps: bool,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    /// The queue family the backend submits to on this device (see [`QueueChoice`]), `None`
    /// when the device has no compute queue.
    pub queue_family: Option<u32>,
    /// Whether that family is compute-only (an "async compute" queue, beside the graphics
    /// queue a renderer uses).
    pub dedicated_compute: bool,
}

/// Which queue family the backend submits to: `FLUID_VULKAN_QUEUE=compute` (the default) or
/// `graphics`.
///
/// `Compute` takes a compute-only family where the device has one (NVIDIA and AMD do; it is the
/// queue games use for "async compute", so the simulation can overlap the renderer's graphics
/// work), else the first family with compute. On an H100 it ran the smoke step 2 % faster and the
/// stable-fluid step 3–4 % faster than the graphics family (doc/PERFORMANCE.md). `Graphics` takes
/// the first family with both graphics and compute, else the first with compute.
/// [`VulkanBackend::with_choice`] takes one in code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueueChoice {
    /// A compute-only family where there is one.
    #[default]
    Compute,
    /// A family that also does graphics where there is one.
    Graphics,
}

impl QueueChoice {
    /// `FLUID_VULKAN_QUEUE`: unset, `compute` or `graphics`; anything else is an error naming it.
    pub fn from_env() -> Result<QueueChoice> {
        match std::env::var("FLUID_VULKAN_QUEUE").ok().as_deref() {
            None | Some("compute") => Ok(QueueChoice::Compute),
            Some("graphics") => Ok(QueueChoice::Graphics),
            Some(other) => Err(Error::invalid("FLUID_VULKAN_QUEUE", other, "expected compute or graphics")),
        }
    }

    /// The index of the family to use among `families` (their queue flags, in the driver's
    /// order), or `None` when none has compute.
    pub fn pick(self, families: &[vk::QueueFlags]) -> Option<usize> {
        let compute = |f: &vk::QueueFlags| f.contains(vk::QueueFlags::COMPUTE);
        let preferred = |f: &vk::QueueFlags| match self {
            QueueChoice::Compute => compute(f) && !f.contains(vk::QueueFlags::GRAPHICS),
            QueueChoice::Graphics => compute(f) && f.contains(vk::QueueFlags::GRAPHICS),
        };
        families.iter().position(preferred).or_else(|| families.iter().position(compute))
    }
}

/// One thread at a time creates or destroys instances, devices and pipelines in this process.
/// The Vulkan spec allows doing that concurrently, but the conformance suite on lavapipe (Mesa
/// 22.3, with the validation layer) crashed twice in about a dozen CI runs with a SIGSEGV while
/// two test threads were setting backends up and tearing them down; the crash did not reproduce
/// locally (15 runs of the suite, with and without validation, on 2 and 6 threads), so its cause
/// is not known, and this lock is a precaution. Recording and submitting stay concurrent; setup
/// is rare in an application, but on lavapipe pipeline creation compiles with LLVM, so the
/// suite's 45 tests, which set up a backend each, went from about 50 to 79 s there.
static SETUP: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds [`SETUP`] (so that nested setup, e.g. a backend dropped on an
    /// error path of its own construction, does not wait for itself).
    static SETUP_HELD: Cell<bool> = const { Cell::new(false) };
}

/// Holds [`SETUP`] until dropped, unless this thread held it already.
pub(crate) struct SetupGuard(Option<MutexGuard<'static, ()>>);

impl Drop for SetupGuard {
    fn drop(&mut self) {
        if self.0.take().is_some() {
            SETUP_HELD.set(false);
        }
    }
}

/// Take [`SETUP`] for this thread (a poisoned lock is taken all the same: it guards no data).
pub(crate) fn setup_lock() -> SetupGuard {
    if SETUP_HELD.get() {
        return SetupGuard(None);
    }
    let guard = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    SETUP_HELD.set(true);
    SetupGuard(Some(guard))
}

/// Messages of the validation layer: errors fail the next backend call.
type MessageLog = Arc<Mutex<Vec<String>>>;

/// An instance (with its validation messenger, when on) that destroys itself if it made it.
struct Instance {
    /// The loader, kept loaded while the instance lives (`None` for an application's instance:
    /// the application keeps its own loaded).
    entry: Option<ash::Entry>,
    instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Kept alive while the messenger may call back with a pointer to it.
    log: MessageLog,
}

impl Drop for Instance {
    fn drop(&mut self) {
        if self.entry.is_none() {
            // An application's instance: it destroys it.
            return;
        }
        let _setup = setup_lock();
        if let Some((utils, messenger)) = self.debug.take() {
            // SAFETY: the messenger was created from this instance and is destroyed once, before it.
            unsafe { utils.destroy_debug_utils_messenger(messenger, None) };
        }
        // SAFETY: the instance was created by `Instance::new`; every object created from it has
        // been destroyed by its owner (which holds the instance and drops it last); it is
        // destroyed exactly once, here.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// Collects the validation layer's errors and warnings.
///
/// # Safety
/// Called by the Vulkan loader with `user` = the `Arc<Mutex<Vec<String>>>` pointer given at
/// messenger creation (alive until the messenger is destroyed) and a valid callback-data pointer.
unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: per the callback's contract `data` is valid for the duration of the call.
    let message = unsafe { (*data).message_as_c_str() }
        .map(|m| m.to_string_lossy().into_owned())
        .unwrap_or_else(|| "(no message)".into());
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        // SAFETY: `user` is the pointer of the `MessageLog` the owning `Instance` keeps alive
        // until the messenger is destroyed.
        let log = unsafe { &*(user as *const Mutex<Vec<String>>) };
        if let Ok(mut v) = log.lock() {
            v.push(message);
        }
    } else {
        eprintln!("vulkan validation: {message}");
    }
    vk::FALSE
}

/// Whether to enable the validation layer: `FLUID_VULKAN_VALIDATION` (0/1), else debug builds
/// when installed.
fn validation_wanted(entry: &ash::Entry) -> Result<bool> {
    // SAFETY: `entry` is a loaded Vulkan entry; enumerating layers has no preconditions.
    let installed = unsafe { entry.enumerate_instance_layer_properties() }
        .map_err(|e| vk_err("vkEnumerateInstanceLayerProperties", e))?
        .iter()
        .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
    match std::env::var("FLUID_VULKAN_VALIDATION").ok().as_deref() {
        Some("1") if !installed => Err(Error::Unsupported {
            what: "FLUID_VULKAN_VALIDATION=1 (the Khronos validation layer)".into(),
            by: "this machine: it is not installed (Debian: apt-get install vulkan-validationlayers)".into(),
        }),
        Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(other) => Err(Error::invalid("FLUID_VULKAN_VALIDATION", other, "expected 0 or 1")),
        None => Ok(cfg!(debug_assertions) && installed),
    }
}

/// Keeps the Vulkan loader and driver loaded for the rest of the process: one instance, made on
/// first use and never destroyed. Without it every backend's instance loads the driver library
/// and destroying it unloads it again, and NVIDIA's Linux driver leaks static TLS on each load:
/// after a few dozen backends in one process `vkCreateInstance` failed ("libnvidia-tls.so:
/// cannot allocate memory in static TLS block", measured on the H100 with the conformance suite,
/// which creates hundreds). Failure to make it is ignored (the backend's own instance reports).
fn keep_driver_loaded() {
    static KEEPER: std::sync::OnceLock<Option<(ash::Entry, ash::Instance)>> = std::sync::OnceLock::new();
    KEEPER.get_or_init(|| {
        // SAFETY: as in `Instance::new`: loading the system's loader runs its initialisers.
        let entry = unsafe { ash::Entry::load() }.ok()?;
        let app = vk::ApplicationInfo::default().application_name(c"fluid").api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: `info` and the app info it points to are valid for the call; no allocator.
        let instance = unsafe { entry.create_instance(&info, None) }.ok()?;
        // Drivers set up their devices (and lavapipe its LLVM) on the first enumeration: once,
        // here, under the setup lock.
        // SAFETY: `instance` is live; enumerating has no other preconditions.
        let _ = unsafe { instance.enumerate_physical_devices() };
        Some((entry, instance))
    });
}

impl Instance {
    fn new(with_validation: bool) -> Result<Instance> {
        let _setup = setup_lock();
        keep_driver_loaded();
        // SAFETY: loading the system's Vulkan loader runs its initialisers; that is the
        // documented way to use a run-time loaded `libvulkan`, and no Vulkan object exists yet.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| Error::Unsupported {
            what: "Vulkan".into(),
            by: format!("this machine: the Vulkan loader could not be opened ({e}); install libvulkan1"),
        })?;
        let validation = with_validation && validation_wanted(&entry)?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"fluid")
            .engine_name(c"fluid")
            .api_version(vk::API_VERSION_1_1);
        let layers = [VALIDATION_LAYER.as_ptr()];
        let extensions = [ash::ext::debug_utils::NAME.as_ptr(), VALIDATION_FEATURES.as_ptr()];
        // Synchronization validation too: it checks the barriers this backend places.
        let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
        let mut info = vk::InstanceCreateInfo::default().application_info(&app);
        if validation {
            info = info.enabled_layer_names(&layers).enabled_extension_names(&extensions).push_next(&mut features);
        }
        // SAFETY: `info` and everything it points to (app info, layer and extension names) are
        // valid for the duration of the call; no allocator callbacks are passed.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(|e| vk_err("vkCreateInstance", e))?;
        let log: MessageLog = Arc::new(Mutex::new(Vec::new()));
        let utils = validation.then(|| ash::ext::debug_utils::Instance::new(&entry, &instance));
        let mut inst = Instance { entry: Some(entry), instance, debug: None, log };
        if let Some(utils) = utils {
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(on_message))
                .user_data(Arc::as_ptr(&inst.log) as *mut c_void);
            // SAFETY: the instance enabled VK_EXT_debug_utils; the user-data pointer stays valid
            // because `inst.log` lives as long as `inst`, which destroys the messenger first.
            let messenger = unsafe { utils.create_debug_utils_messenger(&info, None) }
                .map_err(|e| vk_err("vkCreateDebugUtilsMessengerEXT", e))?;
            inst.debug = Some((utils, messenger));
        }
        Ok(inst)
    }

    /// An application's instance, used and left alone: no validation messenger of this backend
    /// (the application's own sees its messages), never destroyed here.
    fn borrowed(instance: ash::Instance) -> Instance {
        Instance { entry: None, instance, debug: None, log: Arc::new(Mutex::new(Vec::new())) }
    }

    fn validation(&self) -> bool {
        self.debug.is_some()
    }

    /// Validation errors since the last call, as one error.
    fn take_errors(&self, what: &str) -> Result<()> {
        let mut log = self.log.lock().map_err(|_| Error::Backend { backend: NAME, message: "log poisoned".into() })?;
        if log.is_empty() {
            return Ok(());
        }
        let all = log.drain(..).collect::<Vec<_>>().join("; ");
        Err(Error::Backend { backend: NAME, message: format!("{what}: validation error: {all}") })
    }
}

fn device_type(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "DiscreteGpu",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "IntegratedGpu",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "VirtualGpu",
        vk::PhysicalDeviceType::CPU => "Cpu",
        _ => "Other",
    }
}

/// Preference of a device type when none is named: lower is better.
fn type_rank(t: vk::PhysicalDeviceType) -> u32 {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

fn summarize(props: &vk::PhysicalDeviceProperties) -> DeviceSummary {
    let name = props
        .device_name_as_c_str()
        .map(CStr::to_string_lossy)
        .map(|s| s.into_owned())
        .unwrap_or_else(|_| "(unnamed device)".into());
    let v = props.api_version;
    DeviceSummary {
        name,
        device_type: device_type(props.device_type).into(),
        api_version: format!("{}.{}.{}", vk::api_version_major(v), vk::api_version_minor(v), vk::api_version_patch(v)),
        driver_version: props.driver_version,
        timestamps: props.limits.timestamp_compute_and_graphics == vk::TRUE,
        timestamp_period_ns: props.limits.timestamp_period,
        queue_family: None,
        dedicated_compute: false,
    }
}

/// `summary` completed with the queue family `choice` picks among `families`: whether it can
/// write timestamps, and whether it is compute-only. `None` when no family has compute.
fn with_queue(
    summary: DeviceSummary,
    families: &[vk::QueueFamilyProperties],
    choice: QueueChoice,
) -> Option<(u32, DeviceSummary)> {
    let flags: Vec<vk::QueueFlags> = families.iter().map(|f| f.queue_flags).collect();
    let family = choice.pick(&flags)?;
    let index = u32::try_from(family).ok()?;
    Some((index, with_family(summary, &families[family], index)))
}

/// `summary` completed with queue family `index`, whose properties are `f`: whether it can
/// write timestamps, and whether it is compute-only.
fn with_family(summary: DeviceSummary, f: &vk::QueueFamilyProperties, index: u32) -> DeviceSummary {
    DeviceSummary {
        timestamps: f.timestamp_valid_bits > 0 && summary.timestamp_period_ns > 0.0,
        queue_family: Some(index),
        dedicated_compute: !f.queue_flags.contains(vk::QueueFlags::GRAPHICS),
        ..summary
    }
}

/// The Vulkan physical devices of this machine, in the loader's order, each with the queue
/// family the backend would use (`FLUID_VULKAN_QUEUE`, see [`QueueChoice`]).
pub fn physical_devices() -> Result<Vec<DeviceSummary>> {
    let choice = QueueChoice::from_env()?;
    let _setup = setup_lock();
    let inst = Instance::new(false)?;
    // SAFETY: `inst.instance` is a live instance (dropped only at the end of this function).
    let devices =
        unsafe { inst.instance.enumerate_physical_devices() }.map_err(|e| vk_err("vkEnumeratePhysicalDevices", e))?;
    Ok(devices
        .into_iter()
        .map(|pd| {
            // SAFETY: `pd` was just returned by this live instance.
            let props = unsafe { inst.instance.get_physical_device_properties(pd) };
            // SAFETY: as above.
            let families = unsafe { inst.instance.get_physical_device_queue_family_properties(pd) };
            let summary = summarize(&props);
            with_queue(summary.clone(), &families, choice).map_or(summary, |(_, s)| s)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::QueueChoice;
    use ash::vk::QueueFlags as F;

    /// The families of an NVIDIA H100 as its driver (580) lists them, and lavapipe's one family.
    #[test]
    fn queue_choice_prefers_a_compute_only_family_and_falls_back() {
        let h100 = [
            F::GRAPHICS | F::COMPUTE | F::TRANSFER | F::SPARSE_BINDING,
            F::TRANSFER | F::SPARSE_BINDING,
            F::COMPUTE | F::TRANSFER | F::SPARSE_BINDING,
            F::TRANSFER | F::VIDEO_DECODE_KHR,
        ];
        assert_eq!(QueueChoice::Compute.pick(&h100), Some(2));
        assert_eq!(QueueChoice::Graphics.pick(&h100), Some(0));
        let lavapipe = [F::GRAPHICS | F::COMPUTE | F::TRANSFER];
        assert_eq!(QueueChoice::Compute.pick(&lavapipe), Some(0));
        assert_eq!(QueueChoice::Graphics.pick(&lavapipe), Some(0));
        let compute_only = [F::TRANSFER, F::COMPUTE];
        assert_eq!(QueueChoice::Graphics.pick(&compute_only), Some(1));
        assert_eq!(QueueChoice::Compute.pick(&[F::GRAPHICS, F::TRANSFER]), None);
        assert_eq!(QueueChoice::Graphics.pick(&[]), None);
    }

    /// The test machines (CI: lavapipe) have at least one Vulkan device; without one this fails
    /// rather than skips.
    #[test]
    fn lists_at_least_one_physical_device() {
        let devices = super::physical_devices().expect("the Vulkan loader and a driver (install mesa-vulkan-drivers)");
        assert!(!devices.is_empty(), "no Vulkan physical device");
        for d in &devices {
            assert!(!d.name.is_empty());
            assert!(d.api_version.starts_with("1."), "{d:?}");
        }
    }
}
