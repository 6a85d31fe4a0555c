//! The Vulkan instance: the loader kept loaded, the validation layer and its messenger.

use std::ffi::{CStr, c_void};
use std::sync::{Arc, Mutex};

use ash::vk;
use swirly_ir::{Error, Result};

use crate::{NAME, setup_lock, vk_err};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";
/// The layer's extension that turns on synchronization validation.
const VALIDATION_FEATURES: &CStr = c"VK_EXT_validation_features";

/// Messages of the validation layer: errors fail the next backend call.
type MessageLog = Arc<Mutex<Vec<String>>>;

/// An instance (with its validation messenger, when on) that destroys itself if it made it.
pub(crate) struct Instance {
    /// The loader, kept loaded while the instance lives (`None` for an application's instance:
    /// the application keeps its own loaded).
    entry: Option<ash::Entry>,
    pub(super) instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Kept alive while the messenger may call back with a pointer to it.
    log: MessageLog,
}

/// A physical device as the instance lists it.
pub(crate) struct PhysicalDevice {
    pub(crate) handle: vk::PhysicalDevice,
    pub(crate) props: vk::PhysicalDeviceProperties,
    pub(crate) families: Vec<vk::QueueFamilyProperties>,
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
        // SAFETY: the instance was created by `Instance::new`; every object created from it
        // holds it through its context and is gone; it is destroyed exactly once, here.
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
/// first use and never destroyed. NVIDIA's Linux driver leaks static TLS each time its library
/// is loaded, and a process that made and dropped a few dozen backends could not create an
/// instance any more. Failure to make it is ignored (the backend's own instance reports).
fn keep_driver_loaded() {
    static KEEPER: std::sync::OnceLock<Option<(ash::Entry, ash::Instance)>> = std::sync::OnceLock::new();
    KEEPER.get_or_init(|| {
        // SAFETY: as in `Instance::new`: loading the system's loader runs its initialisers.
        let entry = unsafe { ash::Entry::load() }.ok()?;
        let app = vk::ApplicationInfo::default().application_name(c"fluid").api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: `info` and the app info it points to are valid for the call; no allocator.
        let instance = unsafe { entry.create_instance(&info, None) }.ok()?;
        // Drivers set up their devices (lavapipe its LLVM) on the first enumeration: once, here.
        // SAFETY: `instance` is live; enumerating has no other preconditions.
        let _ = unsafe { instance.enumerate_physical_devices() };
        Some((entry, instance))
    });
}

impl Instance {
    /// A new instance, with the validation layer where [`validation_wanted`] says so and
    /// `with_validation` allows.
    pub(crate) fn new(with_validation: bool) -> Result<Instance> {
        let _setup = setup_lock();
        keep_driver_loaded();
        // SAFETY: loading the system's Vulkan loader runs its initialisers; that is the
        // documented way to use a run-time loaded `libvulkan`.
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
    pub(super) fn borrowed(instance: ash::Instance) -> Instance {
        Instance { entry: None, instance, debug: None, log: Arc::new(Mutex::new(Vec::new())) }
    }

    /// Whether this backend's validation messenger is on.
    pub(crate) fn validation(&self) -> bool {
        self.debug.is_some()
    }

    /// Validation errors since the last call, as one error.
    pub(crate) fn take_errors(&self, what: &str) -> Result<()> {
        let mut log = self.log.lock().map_err(|_| Error::Backend { backend: NAME, message: "log poisoned".into() })?;
        if log.is_empty() {
            return Ok(());
        }
        let all = log.drain(..).collect::<Vec<_>>().join("; ");
        Err(Error::Backend { backend: NAME, message: format!("{what}: validation error: {all}") })
    }

    /// The physical devices, in the loader's order, with their properties and queue families.
    pub(crate) fn physical_devices(&self) -> Result<Vec<PhysicalDevice>> {
        // SAFETY: the instance is live while `self` is.
        let handles = unsafe { self.instance.enumerate_physical_devices() }
            .map_err(|e| vk_err("vkEnumeratePhysicalDevices", e))?;
        Ok(handles.into_iter().map(|handle| self.physical_device(handle)).collect())
    }

    /// The properties and queue families of a physical device this instance listed.
    pub(super) fn physical_device(&self, handle: vk::PhysicalDevice) -> PhysicalDevice {
        // SAFETY: `handle` was returned by this live instance (or, for an application's
        // instance, is its physical device: `from_raw`'s contract).
        let props = unsafe { self.instance.get_physical_device_properties(handle) };
        // SAFETY: as above.
        let families = unsafe { self.instance.get_physical_device_queue_family_properties(handle) };
        PhysicalDevice { handle, props, families }
    }
}
