//! # swirly-wgpu
//!
//! The portable GPU backend: every [`swirly_ir::Kernel`] as a wgpu compute shader, one WGSL
//! file per kernel in `swirly-shaders`, with the same name as its `swirly-cpu` twin.
//!
//! One `run` is one command encoder and one submission for the whole schedule, every pressure
//! sweep included; nothing waits inside a step, and fields are read back only when asked for.
//! Ping-pong is a rename of buffers (bind groups are cached per binding set). With timing on,
//! each dispatch gets its own compute pass with timestamp writes, where the adapter has
//! `TIMESTAMP_QUERY`.
//!
//! Bindings: `@group(0)` holds the grid uniform (0), the step uniform (1), the kernel's
//! parameter block (2, a dynamic offset into one buffer) and, for `splat`, the splat list (3);
//! `@group(1)` holds the fields in [`swirly_ir::KernelDesc::bindings`] order.
//!
//! Fields in f16 storage run natively where the adapter has `SHADER_F16`, else packed two
//! halves a word ([`HalfStorage`]); `FLUID_F16=packed` or `native` picks one
//! ([`WgpuBackend::set_half_storage`]).
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backend;
mod device;
pub use backend::*;
pub use device::{AdapterSummary, adapters};
/// The wgpu this backend is built on: an application that hands the backend its device
/// ([`WgpuBackend::from_device`]) or draws from its buffers needs this version's types.
pub use wgpu;
