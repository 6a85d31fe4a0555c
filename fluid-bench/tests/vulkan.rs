//! The conformance suite on the raw Vulkan backend, with the wgpu backend's tolerances. Without a
//! Vulkan device every test fails (never skips): install a Vulkan driver, e.g. Mesa's lavapipe
//! (`scripts/test.sh` does). In test builds the Khronos validation layer is on when installed
//! (`scripts/test.sh` installs it), and any validation error fails the test.

fn backend() -> fluid_vulkan::VulkanBackend {
    // One test at a time: see `run_alone`.
    fluid_bench::run_alone();
    device()
}

/// A backend, without `run_alone`.
fn device() -> fluid_vulkan::VulkanBackend {
    fluid_vulkan::VulkanBackend::new().unwrap_or_else(|e| panic!("the vulkan conformance suite needs a device: {e}"))
}

fluid_bench::conformance!(backend());

#[test]
fn two_simulations_on_two_threads_step_as_each_does_alone() {
    // This test alone among the suite's (`run_alone` on its own thread), with its two devices
    // made, used and torn down at once on two threads of its own: what CI checks of concurrent
    // use, now that the other tests run one at a time.
    fluid_bench::run_alone();
    fluid_bench::parity::concurrent_equals_alone(device);
}
