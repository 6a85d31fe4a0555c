//! The backend on an application's Vulkan device: the public API's two `unsafe fn`s, whose
//! callers vouch for handles the backend cannot check.

use ash::vk;
use swirly_ir::{Error, Result, wait};

use super::context::Context;
use super::instance::Instance;
use crate::backend::{RawDevice, VulkanBackend};
use crate::{setup_lock, summarize, with_family};

impl VulkanBackend {
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
            physical_device,
            device,
            queue_family: family,
            queue_index,
            share_with,
            timeline_semaphores,
        } = raw;
        let instance = Instance::borrowed(instance);
        // The caller guarantees a valid physical device of this instance.
        let physical = instance.physical_device(physical_device);
        let summary = summarize(&physical.props);
        let families = &physical.families;
        if physical.props.api_version < vk::API_VERSION_1_1 {
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
        if timeline_semaphores && physical.props.api_version < vk::API_VERSION_1_2 {
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
        // SAFETY: the caller's contract above: the device is of this physical device and
        // instance, has the queue (its index checked against the family's count) and the
        // timeline feature if asked, and outlives the backend; the context does not own it.
        let ctx = unsafe {
            Context::assemble(instance, &physical, device, family, queue_index, false, share, timeline_semaphores, None)
        }?;
        VulkanBackend::build(ctx, summary, spin)
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
    /// next submission has finished (e.g. until [`swirly_ir::Backend::finish`] returns or the
    /// backend is dropped).
    pub unsafe fn wait_before_next(&mut self, semaphore: vk::Semaphore, value: u64) -> Result<()> {
        if !self.context().has_timeline() {
            return Err(Error::Unsupported {
                what: "wait_before_next".into(),
                by: "a backend without timeline semaphores (RawDevice::timeline_semaphores)".into(),
            });
        }
        if semaphore == vk::Semaphore::null() {
            return Err(Error::invalid("semaphore", "VK_NULL_HANDLE", "a timeline semaphore of the device"));
        }
        self.context().push_wait(semaphore, value);
        Ok(())
    }
}

impl Context {
    /// Make a deliberately invalid call (a buffer of size zero) for the validation layer to
    /// report, and destroy whatever the driver made anyway.
    #[cfg(test)]
    pub(crate) fn provoke_validation_error(&self) {
        let info = vk::BufferCreateInfo::default().size(0).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: the device is live; the create info is deliberately invalid (size zero) for
        // the layer to report, and a buffer the driver makes anyway is destroyed at once.
        unsafe {
            if let Ok(buffer) = self.device.create_buffer(&info, None) {
                self.device.destroy_buffer(buffer, None);
            }
        }
    }
}
