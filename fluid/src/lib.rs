//! # swirly
//!
//! Real-time 2D fluids for games and visual effects (smoke, fire, ink and particle liquids),
//! on the CPU (rayon) or the GPU. This is the crate integrators depend on:
//!
//! ```
//! use swirly::{Simulation, Scene, Splat, Falloff, FieldId};
//!
//! # fn main() -> swirly::Result<()> {
//! let scene = Scene::preset("smoke")?;
//! let mut sim = Simulation::new(scene, swirly::backend("cpu")?)?;
//! sim.splat(Splat { center: [0.3, 0.2], radius: 0.05, falloff: Falloff::Gaussian,
//!                   velocity: [1.0, 0.0], density: 1.0, ..Splat::default() })?;
//! for _ in 0..60 {
//!     sim.step(1.0 / 60.0)?;
//! }
//! // Tune while it runs: from the next step on, with the state kept.
//! let mut params = sim.scene().params.clone();
//! params.vorticity = 12.0;
//! sim.set_params(params)?;
//! sim.step(1.0 / 60.0)?;
//! let density = sim.field(FieldId::Density)?; // [ny, nx], row 0 at the bottom
//! let here = sim.sample(FieldId::Density, &[[0.4, 0.5]])?; // at world positions
//! sim.reset()?; // back to the scene's initial state
//! # let _ = (density, here); Ok(()) }
//! ```
//!
//! ## Features
//!
//! Backends are Cargo features; enable any set of them, and pick one at run time with
//! [`backend()`]:
//!
//! | feature | backend | needs |
//! |---|---|---|
//! | `cpu` (default) | `CpuBackend`: every kernel on rayon's threads | nothing |
//! | `wgpu` | `WgpuBackend`: WGSL compute on Vulkan, Metal or DX12 | a GPU driver wgpu can use |
//! | `vulkan` | `VulkanBackend`: raw Vulkan (ash) on SPIR-V from the same WGSL | a Vulkan 1.2 driver |
//!
//! ```toml
//! swirly = { version = "0.1", features = ["wgpu"] }
//! ```
//!
//! The engine itself
//! (models, schedules, [`Simulation`]) lives in `swirly-core`; this crate gathers it with the
//! backends of the build.
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]

// What a user writes: the simulation, its scene and inputs, what it returns.
pub use swirly_core::frame::solid::{Motion, Obstacle, Pose, Shape};
pub use swirly_core::model::{FieldInfo, FieldName};
pub use swirly_core::params::{
    ActiveFields, Advection, AdvectionScheme, Backtrace, Boundaries, Buoyancy, Dissipation, Interpolation, Precision,
    Pressure, PressureSolver, Profile, SideSpec, SideType, Slip,
};
pub use swirly_core::render::{Blend, Layer, Look, Picture, RenderField, RenderSpec};
pub use swirly_core::replay::{Input, InputLog};
pub use swirly_core::splat::MAX_SPLATS;
pub use swirly_core::{
    Boundary, Diagnostics, Error, Falloff, FieldId, KernelTiming, MemoryReport, PendingField, PendingSample, Result,
    Scene, SimParams, Simulation, Splat,
};
pub use swirly_core::{checkpoint, wait};

/// What a scene file holds besides its parameters, and the rules a scene is checked by: the
/// `[grid]`, `[initial]`, `[[obstacles]]`, `[[splats]]` and `[particles]` tables, the presets,
/// `key=value` overrides (the CLI's `--set`, a wedge's keys) and scene names.
pub mod scene {
    pub use swirly_core::particles::spec::{Bounds, Container, Fill, Lattice, ParticleSpec};
    pub use swirly_core::scene::{
        GridSpec, Initial, InitialVelocity, MAX_NAME_BYTES, MAX_OBSTACLES, MAX_SCENE_BYTES, ObstacleSpec, PRESETS,
        ShapeKind, SplatSpec, check_name, parse_override,
    };
}

/// Storage under a memory budget: the plan of what a scene needs on a backend, and what its
/// `[storage]` policy makes of it ([`storage::plan`]).
pub mod storage {
    pub use swirly_core::sim::{Fitted, plan};
    pub use swirly_core::storage::*;
}

/// For implementors of a backend, and for hosts that share its device: the [`Backend`]
/// trait, the resources and schedules it runs, queued reads, and the checks
/// [`backend()`](crate::backend()) makes.
///
/// [`Backend`]: backend::Backend
pub mod backend {
    pub use swirly_core::backend::available_memory;
    pub use swirly_core::{Backend, PendingRead, ResourceDesc, ResourceId, Schedule, StepInputs};

    use crate::{BACKENDS, Error, Result};

    /// Refuse a backend name that is not one of [`BACKENDS`], naming the known ones.
    pub fn check_backend_name(name: &str) -> Result<()> {
        if BACKENDS.contains(&name) {
            Ok(())
        } else {
            Err(Error::invalid("backend", name, format!("known backends: {}", BACKENDS.join(", "))))
        }
    }
}

/// For implementors of a model: the [`Model`](model::Model) trait, the box every model
/// lives in ([`Frame`](model::Frame), its sides) and the grid model's fields.
pub mod model {
    pub use swirly_core::frame::{Frame, Inflow, Lattice, SamplePlan, Side};
    pub use swirly_core::{Grid, GridFields, Model};
}

/// The IR every model speaks and every backend executes: kernels, resources, schedules, their
/// lowering to GPU work and the uniform blocks.
pub use swirly_core::ir;

#[cfg(feature = "cpu")]
pub use swirly_cpu::CpuBackend;
/// The Vulkan backend's crate: its device and buffer types ([`swirly_vulkan::RawDevice`],
/// [`swirly_vulkan::FieldBuffer`]) and the `ash` it is built on.
#[cfg(feature = "vulkan")]
pub use swirly_vulkan;
#[cfg(feature = "vulkan")]
pub use swirly_vulkan::{DeviceSummary, QueueChoice, VulkanBackend};
/// The wgpu backend's crate, with the `wgpu` it is built on (for
/// [`WgpuBackend::from_device`]).
#[cfg(feature = "wgpu")]
pub use swirly_wgpu;
#[cfg(feature = "wgpu")]
pub use swirly_wgpu::{AdapterSummary, WgpuBackend};

/// Backend names the `fluid` program and [`backend()`] accept.
pub const BACKENDS: &[&str] = &["cpu", "wgpu", "vulkan"];

/// A backend by name, as a trait object: `cpu`, `wgpu` or `vulkan`.
pub fn backend(name: &str) -> Result<Box<dyn backend::Backend>> {
    backend_with_threads(name, 0)
}

/// A backend by name; `threads` sets the CPU backend's worker count (`0`: one per core).
pub fn backend_with_threads(name: &str, threads: usize) -> Result<Box<dyn backend::Backend>> {
    backend::check_backend_name(name)?;
    match name {
        "cpu" => cpu_backend(threads),
        "wgpu" => wgpu_backend(),
        _ => vulkan_backend(),
    }
}

#[cfg(feature = "cpu")]
fn cpu_backend(threads: usize) -> Result<Box<dyn backend::Backend>> {
    Ok(Box::new(CpuBackend::with_threads(threads)?))
}

#[cfg(feature = "wgpu")]
fn wgpu_backend() -> Result<Box<dyn backend::Backend>> {
    Ok(Box::new(WgpuBackend::new()?))
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_backend() -> Result<Box<dyn backend::Backend>> {
    Err(Error::Unsupported { what: "backend `wgpu`".into(), by: "this build (enable the `wgpu` feature)".into() })
}

#[cfg(feature = "vulkan")]
fn vulkan_backend() -> Result<Box<dyn backend::Backend>> {
    Ok(Box::new(VulkanBackend::new()?))
}

#[cfg(not(feature = "vulkan"))]
fn vulkan_backend() -> Result<Box<dyn backend::Backend>> {
    Err(Error::Unsupported { what: "backend `vulkan`".into(), by: "this build (enable the `vulkan` feature)".into() })
}

#[cfg(not(feature = "cpu"))]
fn cpu_backend(_threads: usize) -> Result<Box<dyn backend::Backend>> {
    Err(Error::Unsupported { what: "backend `cpu`".into(), by: "this build (enable the `cpu` feature)".into() })
}
