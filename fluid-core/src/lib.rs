//! # fluid-core
//!
//! The solver core of the fluid engine, with no GPU code:
//!
//! - [`ir`] (the `fluid-ir` crate, re-exported): what every model and backend shares: typed
//!   resources, kernel descriptors, the step as data ([`Schedule`]) and its one lowering to
//!   GPU work, and [`Backend`], the seam to the machines that run schedules;
//! - [`grid`]: the Eulerian grid model (smoke, ink): its fields, kernels, step and pressure
//!   solvers, one file per method under [`grid::pressure`];
//! - [`particles`]: the particle liquid (Clavet et al. 2005's double density relaxation);
//! - [`Model`]: what a solver family declares; [`Simulation`]: a scene's model on a backend,
//!   stepped, read and checked;
//! - [`params`], [`scene`], [`splat`]: what a user writes; [`render`]: the reference renderer.
//!
//! See `doc/ARCHITECTURE.md` for the map of the whole workspace.

pub mod checkpoint;
pub mod frame;
pub mod grid;
pub mod image;
pub mod model;
pub mod particles;
pub mod render;
pub mod replay;
pub mod scene;
pub mod sim;
pub mod splat;
pub mod storage;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

/// The IR every model speaks and every backend executes (the `fluid-ir` crate).
pub mod ir {
    pub use fluid_ir::{kernel, lower, resource, schedule, uniforms};
}
pub use fluid_ir::{backend, wait};

pub use fluid_ir::{
    Backend, Dispatch, Error, Format, Kernel, KernelDesc, KernelTiming, Lifetime, MemoryReport, Op, PendingRead,
    Records, ReduceOp, ResourceDesc, ResourceId, Result, Schedule, Shape, StepInputs, TimestampTimings,
};
pub use grid::params;
pub use grid::{Boundary, FieldId, FieldKind, Grid, GridFields};
pub use model::Model;
pub use params::SimParams;
pub use scene::Scene;
pub use sim::{Diagnostics, PendingField, PendingSample, Simulation};
pub use splat::{Falloff, Splat};

/// Every kernel a backend must be able to run: every model's, and the reductions.
pub fn kernels() -> Vec<Kernel> {
    let mut all = grid::kernels::ALL.to_vec();
    all.extend_from_slice(particles::kernels::ALL);
    all.extend_from_slice(render::kernels::ALL);
    all.extend(fluid_ir::KERNELS);
    all
}
