//! # swirly-ir
//!
//! What every model of the fluid engine speaks and every backend executes, knowing no model:
//!
//! - [`resource`]: typed, named buffers ([`ResourceDesc`]) a model declares and a backend
//!   allocates;
//! - [`kernel`]: kernels described by data ([`KernelDesc`]: bindings, parameter block, domain,
//!   workgroup);
//! - [`schedule`]: the step as data ([`Schedule`]: dispatches, swaps, reductions), built once
//!   and replayed;
//! - [`lower`]: the one lowering of a schedule to GPU work (physical buffers, barriers,
//!   parameter tables), which both GPU backends execute;
//! - [`uniforms`]: the blocks every kernel shares (the step uniform, the reductions);
//! - [`backend`]: the [`Backend`] trait, the per-run inputs ([`StepInputs`], with the model's
//!   records as opaque words) and the read-back logic the backends share;
//! - [`bytes`]: values and their little-endian bytes (`f32`, `f16`, words);
//! - [`wait`]: how a backend waits for its device;
//! - [`wgsl`]: the WGSL declarations of the blocks, made from their Rust definitions;
//! - [`Error`]: the one error type of the engine's libraries.
//!
//! Models (the grid fluid, the particle liquid, the renderer's passes) live in `swirly-core`;
//! the backends depend on this crate alone.
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod backend;
pub mod bytes;
pub mod error;
pub mod format;
pub mod kernel;
pub mod lower;
pub mod resource;
pub mod schedule;
pub mod uniforms;
pub mod wait;
pub mod wgsl;

pub use backend::{Backend, KernelTiming, PendingRead, Records, StepInputs, TimestampTimings};
pub use error::{Error, Result};
pub use kernel::{Kernel, KernelDesc};
pub use resource::{Format, Lifetime, MemoryReport, ResourceDesc, ResourceId, Shape};
pub use schedule::{Dispatch, Op, ReduceOp, Schedule};

/// The reductions' two kernels, which every backend runs whatever the model.
pub const KERNELS: [Kernel; 2] = [uniforms::REDUCE_PARTIAL, uniforms::REDUCE_FINAL];
