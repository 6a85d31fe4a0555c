//! The conformance suite on the raw Vulkan backend, with the wgpu backend's tolerances. Without a
//! Vulkan device every test fails (never skips): install a Vulkan driver, e.g. Mesa's lavapipe
//! (`scripts/test.sh` does). In test builds the Khronos validation layer is on when installed
//! (`scripts/test.sh` installs it), and any validation error fails the test.

fn backend() -> swirly_vulkan::VulkanBackend {
    // One test at a time: see `run_alone`.
    swirly_conformance::run_alone();
    device()
}

/// A backend, without `run_alone`.
fn device() -> swirly_vulkan::VulkanBackend {
    swirly_vulkan::VulkanBackend::new().unwrap_or_else(|e| panic!("the vulkan conformance suite needs a device: {e}"))
}

swirly_conformance::conformance!(backend());

#[test]
fn two_simulations_on_two_threads_step_as_each_does_alone() {
    // This test alone among the suite's (`run_alone` on its own thread), with its two devices
    // made, used and torn down at once on two threads of its own: what CI checks of concurrent
    // use, now that the other tests run one at a time.
    swirly_conformance::run_alone();
    swirly_conformance::api::concurrent_equals_alone(device);
}

#[test]
fn both_queue_families_step_alike() {
    // The compute-only family (the default where a device has one, as the H100 does) and the
    // graphics family run the same recording: the same bits after steps with splats.
    use swirly_vulkan::{QueueChoice, VulkanBackend};
    swirly_conformance::run_alone();
    let name = std::env::var("FLUID_VULKAN_DEVICE").ok();
    let run = |queue: QueueChoice| {
        let backend = VulkanBackend::with_choice(name.as_deref(), queue)
            .unwrap_or_else(|e| panic!("the vulkan conformance suite needs a device: {e}"));
        let summary = backend.device_summary().clone();
        (summary, swirly_conformance::support::steps_with_splats("smoke", backend, 8))
    };
    let (graphics, on_graphics) = run(QueueChoice::Graphics);
    let (compute, on_compute) = run(QueueChoice::Compute);
    assert_eq!(graphics.name, compute.name);
    eprintln!(
        "{}: graphics family {:?}, compute family {:?}",
        graphics.name, graphics.queue_family, compute.queue_family
    );
    // lavapipe and the H100 both have a graphics family with compute.
    assert!(graphics.queue_family.is_some() && !graphics.dedicated_compute, "{graphics:?}");
    assert!(compute.queue_family.is_some(), "{compute:?}");
    for (k, (a, b)) in on_graphics.iter().zip(&on_compute).enumerate() {
        let differ = swirly_conformance::support::bits_differ(a, b);
        assert_eq!(differ, 0, "state field {k}: {differ} of {} values differ between the families", a.len());
    }
}

/// `{:?}` of the backend (what an integrator's logs show) names it and its device.
#[test]
fn debug_names_the_backend_and_its_device() {
    let b = backend();
    let text = format!("{b:?}");
    assert!(text.starts_with("VulkanBackend") && text.contains(&b.device_summary().name), "{text}");
}

/// f16 fields packed two halves a word (`HalfStorage::Packed`, what a device without
/// `shaderFloat16` runs), forced on lavapipe, which has it: whole presets (scalars the kernels
/// write half a word at a time on an odd grid, the fuel, a finer RGBA dye) follow the CPU's f16
/// run within the tolerance the native form meets.
#[test]
fn packed_f16_presets_match_the_cpu_backend() {
    use swirly_vulkan::HalfStorage;
    let packed = || {
        let mut b = backend();
        assert_eq!(b.half_storage(), HalfStorage::Native, "lavapipe has shaderFloat16");
        b.set_half_storage(HalfStorage::Packed).expect("packed");
        assert_eq!(b.half_storage(), HalfStorage::Packed);
        b
    };
    for (preset, extra) in [("smoke", &[][..]), ("fire", &[]), ("paddle", &["grid.dye_factor=2"])] {
        swirly_conformance::half::half_parity(packed, preset, extra);
    }
}
