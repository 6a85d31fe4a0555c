//! # fluid-vulkan
//!
//! The raw Vulkan backend (ash, SPIR-V generated from the WGSL kernels by `cargo xtask shaders`) —
//! not implemented yet. Until then [`VulkanBackend::new`] returns [`fluid_core::Error::Unsupported`].

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
