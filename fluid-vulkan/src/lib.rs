//! # fluid-vulkan
//!
//! The raw Vulkan backend (ash, SPIR-V generated from the WGSL kernels by `cargo xtask shaders`) —
//! not implemented yet. The SPIR-V is already generated and committed: `shaders/gen/<entry>.spv`,
//! one module per entry point of `fluid_wgpu::shaders` (16×16 workgroups, bounds checks
//! `Restrict`, SPIR-V 1.3, no debug info), checked fresh by `cargo xtask shaders --check` and
//! validated by `spirv-val --target-env vulkan1.1` in CI. Until then [`VulkanBackend::new`] returns [`fluid_core::Error::Unsupported`].

use fluid_core::{Error, Result};

/// The Vulkan backend (placeholder until its issue lands).
#[derive(Debug)]
pub struct VulkanBackend(());

impl VulkanBackend {
    /// Always [`Error::Unsupported`] in this version.
    pub fn new() -> Result<VulkanBackend> {
        Err(Error::Unsupported { what: "the vulkan backend".into(), by: "this version of fluid".into() })
    }
}
