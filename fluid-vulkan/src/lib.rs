//! # fluid-vulkan
//!
//! The raw Vulkan backend (ash, SPIR-V generated from the WGSL kernels by `cargo xtask shaders`) —
//! not implemented yet: [`VulkanBackend::new`] returns [`fluid_core::Error::Unsupported`]. The
//! SPIR-V is already generated and committed: `shaders/gen/<entry>.spv`, one module per entry
//! point of `fluid_wgpu::shaders` (16×16 workgroups, bounds checks `Restrict`, SPIR-V 1.3, no
//! debug info), checked fresh by `cargo xtask shaders --check` and validated by
//! `spirv-val --target-env vulkan1.1` in CI.
//!
//! What works today is device discovery ([`physical_devices`]), which `fluid info` shows. The
//! Vulkan loader is opened at run time (`libvulkan.so.1`), so a machine without Vulkan gets an
//! error, not a link failure.
//!
//! This is the one crate of the workspace allowed `unsafe`: every call into Vulkan is. Each
//! block says why it is sound in a `// SAFETY:` comment (enforced by
//! `clippy::undocumented_unsafe_blocks`).
#![expect(unsafe_code, reason = "raw Vulkan through ash: every Vulkan call is unsafe")]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::CStr;

use ash::vk;
use fluid_core::{Error, Result};

fn vk_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Backend { backend: "vulkan", message: format!("{what}: {e}") }
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
}

/// An instance that destroys itself.
struct Instance {
    _entry: ash::Entry,
    instance: ash::Instance,
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: the instance was created by `Instance::new`, no object created from it is
        // alive (only physical-device handles, which need no destruction), and it is destroyed
        // exactly once, here.
        unsafe { self.instance.destroy_instance(None) };
    }
}

impl Instance {
    fn new() -> Result<Instance> {
        // SAFETY: loading the system's Vulkan loader runs its initialisers; that is the
        // documented way to use a run-time loaded `libvulkan`, and no Vulkan object exists yet.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| Error::Unsupported {
            what: "Vulkan".into(),
            by: format!("this machine: the Vulkan loader could not be opened ({e}); install libvulkan1"),
        })?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"fluid")
            .engine_name(c"fluid")
            .api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: `info` and the `app` it points to are valid for the duration of the call; no
        // allocator callbacks are passed.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(|e| vk_err("vkCreateInstance", e))?;
        Ok(Instance { _entry: entry, instance })
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

/// The Vulkan physical devices of this machine, in the loader's order.
pub fn physical_devices() -> Result<Vec<DeviceSummary>> {
    let inst = Instance::new()?;
    // SAFETY: `inst.instance` is a live instance (dropped only at the end of this function).
    let devices =
        unsafe { inst.instance.enumerate_physical_devices() }.map_err(|e| vk_err("vkEnumeratePhysicalDevices", e))?;
    let mut out = Vec::with_capacity(devices.len());
    for pd in devices {
        // SAFETY: `pd` was just returned by this live instance.
        let props = unsafe { inst.instance.get_physical_device_properties(pd) };
        let name = props
            .device_name_as_c_str()
            .map(CStr::to_string_lossy)
            .map(|s| s.into_owned())
            .unwrap_or_else(|_| "(unnamed device)".into());
        let v = props.api_version;
        out.push(DeviceSummary {
            name,
            device_type: device_type(props.device_type).into(),
            api_version: format!(
                "{}.{}.{}",
                vk::api_version_major(v),
                vk::api_version_minor(v),
                vk::api_version_patch(v)
            ),
            driver_version: props.driver_version,
            timestamps: props.limits.timestamp_compute_and_graphics == vk::TRUE,
            timestamp_period_ns: props.limits.timestamp_period,
        });
    }
    Ok(out)
}

/// The Vulkan backend (placeholder until its issue lands).
#[derive(Debug)]
pub struct VulkanBackend(());

impl VulkanBackend {
    /// Always [`Error::Unsupported`] in this version.
    pub fn new() -> Result<VulkanBackend> {
        Err(Error::Unsupported { what: "the vulkan backend".into(), by: "this version of fluid".into() })
    }
}

#[cfg(test)]
mod tests {
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
