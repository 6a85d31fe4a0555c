//! # fluid-wgpu
//!
//! The portable GPU backend (wgpu compute, WGSL) — not implemented yet. Its shaders will live in
//! `shaders/<kernel>.wgsl`, one per [`fluid_core::Kernel`], with the same names as the CPU
//! kernels. Until then [`WgpuBackend::new`] returns [`fluid_core::Error::Unsupported`].

use fluid_core::{Error, Result};

/// The wgpu backend (placeholder until its issue lands).
#[derive(Debug)]
pub struct WgpuBackend(());

impl WgpuBackend {
    /// Always [`Error::Unsupported`] in this version.
    pub fn new() -> Result<WgpuBackend> {
        Err(Error::Unsupported { what: "the wgpu backend".into(), by: "this version of fluid".into() })
    }
}
