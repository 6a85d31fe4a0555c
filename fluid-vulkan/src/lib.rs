//! # swirly-vulkan
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
//! Fields in f16 storage run natively where the device has `shaderFloat16` and 16-bit storage
//! buffers, else packed two halves a word ([`HalfStorage`]); `FLUID_F16=packed` or `native`
//! picks one ([`VulkanBackend::set_half_storage`]).
//!
//! Validation: the Khronos validation layer is enabled in debug builds when it is installed
//! (Debian: `vulkan-validationlayers`); `FLUID_VULKAN_VALIDATION=1` asks for it in any build (an
//! error when it is missing), `=0` turns it off. Validation errors make the next backend call fail
//! with the layer's message.
//!
//! This is the one crate of the workspace allowed `unsafe`, and only in its `raw` module:
//! owning types for the Vulkan objects (device context, buffer, pipeline, command buffer,
//! fence) that free themselves and check what Vulkan leaves undefined; the backend is safe code
//! over them. Each `unsafe` block says why it is sound in a `// SAFETY:` comment (enforced by
//! `clippy::undocumented_unsafe_blocks`).
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::undocumented_unsafe_blocks)]

mod backend;
#[expect(unsafe_code, reason = "raw Vulkan through ash: every Vulkan call is unsafe")]
mod raw;
pub mod spirv;

/// The ash this backend is built on: an application that hands the backend its device
/// ([`VulkanBackend::from_raw`]) or uses its buffers needs this version's types.
pub use ash;
pub use backend::{FieldBuffer, RawDevice, VulkanBackend};
pub use swirly_shaders::HalfStorage;

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::{Mutex, MutexGuard};

use ash::vk;
use swirly_ir::{Error, Result};

const NAME: &str = "vulkan";

fn err(message: impl Into<String>) -> Error {
    Error::Backend { backend: NAME, message: message.into() }
}

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
    /// How fields in f16 storage run on it: natively with `shaderFloat16` and 16-bit storage
    /// buffers, else packed two halves a word.
    pub half: HalfStorage,
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
        half: HalfStorage::Packed,
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
    let inst = raw::Instance::new(false)?;
    Ok(inst
        .physical_devices()?
        .into_iter()
        .map(|pd| {
            let mut summary = summarize(&pd.props);
            if raw::half_support(&inst, &pd).is_some() {
                summary.half = HalfStorage::Native;
            }
            with_queue(summary.clone(), &pd.families, choice).map_or(summary, |(_, s)| s)
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
