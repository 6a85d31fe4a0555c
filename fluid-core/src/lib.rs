//! # fluid-core
//!
//! The solver core of the fluid engine, with no GPU code: the MAC grid and its fields
//! ([`grid`]), parameters ([`params`]), scenes ([`scene`]), splats ([`splat`]), the step as data
//! ([`schedule`]), the uniform layouts every backend shares ([`uniforms`]), the [`Backend`] trait,
//! and the reference renderer ([`render`]).
//!
//! See `doc/ARCHITECTURE.md` for the map of the whole workspace.

pub mod backend;
mod error;
pub mod grid;
pub mod multigrid;
pub mod params;
pub mod poisson_filter;
pub mod render;
pub mod scene;
pub mod schedule;
pub mod splat;
pub mod uniforms;
pub mod wait;

pub use backend::{Backend, KernelTiming, PendingRead, StepInputs, TimestampTimings};
pub use error::{Error, Result};
pub use grid::{Boundary, FieldId, FieldKind, Grid};
pub use params::SimParams;
pub use scene::Scene;
pub use schedule::{Dispatch, Kernel, Op, Params, ReduceOp, Schedule, ShaderEntry};
pub use splat::{Falloff, Splat};
