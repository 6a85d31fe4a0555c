//! The conformance suite on the wgpu backend. Without a GPU adapter every test fails (never
//! skips): install a Vulkan driver, e.g. Mesa's lavapipe (`scripts/test.sh` does).

fn backend() -> fluid_wgpu::WgpuBackend {
    fluid_wgpu::WgpuBackend::new().unwrap_or_else(|e| panic!("the wgpu conformance suite needs an adapter: {e}"))
}

fluid_bench::conformance!(backend());
