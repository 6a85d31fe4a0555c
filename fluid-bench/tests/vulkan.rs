//! The conformance suite on the raw Vulkan backend, with the wgpu backend's tolerances. Without a
//! Vulkan device every test fails (never skips): install a Vulkan driver, e.g. Mesa's lavapipe
//! (`scripts/test.sh` does). In test builds the Khronos validation layer is on when installed
//! (`scripts/test.sh` installs it), and any validation error fails the test.

fn backend() -> fluid_vulkan::VulkanBackend {
    // One test at a time: see `run_alone`.
    fluid_bench::run_alone();
    fluid_vulkan::VulkanBackend::new().unwrap_or_else(|e| panic!("the vulkan conformance suite needs a device: {e}"))
}

fluid_bench::conformance!(backend());
