//! # swirly-core
//!
//! The solver core of the fluid engine, with no GPU code:
//!
//! - [`ir`] (the `swirly-ir` crate, re-exported): what every model and backend shares: typed
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
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod checkpoint;
pub mod frame;
pub mod grid;
pub(crate) mod image;
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

/// The IR every model speaks and every backend executes (the `swirly-ir` crate).
pub mod ir {
    pub use swirly_ir::{kernel, lower, resource, schedule, uniforms};
}
pub use swirly_ir::{backend, wait};

pub use grid::params;
pub use grid::{Boundary, FieldId, FieldKind, Grid, GridFields};
pub use model::Model;
pub use params::SimParams;
pub use scene::Scene;
pub use sim::{Diagnostics, PendingField, PendingSample, Simulation};
pub use splat::{Falloff, Splat};
pub use swirly_ir::{
    Backend, Dispatch, Error, Format, Kernel, KernelDesc, KernelTiming, Lifetime, MemoryReport, Op, PendingRead,
    Records, ReduceOp, ResourceDesc, ResourceId, Result, Schedule, Shape, StepInputs, TimestampTimings,
};

/// Every kernel a backend must be able to run: every model's, and the reductions.
pub fn kernels() -> Vec<Kernel> {
    let mut all = grid::kernels::ALL.to_vec();
    all.extend_from_slice(particles::kernels::ALL);
    all.extend_from_slice(render::kernels::ALL);
    all.extend(swirly_ir::KERNELS);
    all
}

/// Every block a kernel reads, in the order `shared/params.wgsl` declares them: the frame's
/// uniform, the step's, the splat record, then each model's and the renderer's parameter
/// blocks and the reductions'. `cargo xtask shaders` writes their WGSL from these.
pub fn wgsl_layouts() -> Vec<swirly_ir::wgsl::Layout> {
    use grid::uniforms as g;
    use particles as p;
    use swirly_ir::wgsl::Layout;
    vec![
        Layout::of::<frame::uniform::GridUniform>(),
        Layout::of::<swirly_ir::uniforms::StepUniform>(),
        Layout::of::<frame::uniform::SplatGpu>(),
        Layout::of::<g::AdvectParams>(),
        Layout::of::<g::ChannelParams>(),
        Layout::of::<g::SplatParams>(),
        Layout::of::<g::SharpParams>(),
        Layout::of::<g::DyeParams>(),
        Layout::of::<g::TensionParams>(),
        Layout::of::<g::ForceParams>(),
        Layout::of::<g::BurnParams>(),
        Layout::of::<g::TurbulenceParams>(),
        Layout::of::<g::DiffuseParams>(),
        Layout::of::<g::MgParams>(),
        Layout::of::<g::CgParams>(),
        Layout::of::<g::TapsParams>(),
        Layout::of::<g::FilterParams>(),
        Layout::of::<g::JacobiParams>(),
        Layout::of::<swirly_ir::uniforms::ReduceParams>(),
        Layout::of::<p::HashParams>(),
        Layout::of::<p::ScanParams>(),
        Layout::of::<p::ViscosityParams>(),
        Layout::of::<p::DensityParams>(),
        Layout::of::<p::RelaxParams>(),
        Layout::of::<p::CollideParams>(),
        Layout::of::<p::SpringParams>(),
        Layout::of::<p::EmitParams>(),
        Layout::of::<p::SolidParams>(),
        Layout::of::<p::DrawParams>(),
        Layout::of::<render::kernels::LayerParams>(),
        Layout::of::<render::kernels::FinishParams>(),
    ]
}

/// A constant the kernels share with the Rust that fills their uniforms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WgslConst {
    /// A `u32` code or flag.
    U32(u32),
    /// An `f32`.
    F32(f32),
}

/// The codes and flags the kernels compare their uniforms' members with, by their WGSL name:
/// written into `shared/params.wgsl` from the Rust constants that set them, so the two cannot
/// disagree.
pub fn wgsl_constants() -> Vec<(&'static str, WgslConst)> {
    use WgslConst::{F32, U32};
    use frame as f;
    use grid::uniforms as g;
    use render::kernels as r;
    vec![
        ("BOUNDARY_PERIODIC", U32(f::BOUNDARY_PERIODIC)),
        ("SIDE_OPEN", U32(f::SIDE_OPEN)),
        ("SIDE_INFLOW", U32(f::SIDE_INFLOW)),
        ("SIDE_NO_SLIP", U32(f::SIDE_NO_SLIP)),
        ("SIDE_INFLOW_PARABOLIC", U32(f::SIDE_INFLOW_PARABOLIC)),
        ("ADVECT_DENSITY", U32(g::ADVECT_DENSITY)),
        ("ADVECT_TEMPERATURE", U32(g::ADVECT_TEMPERATURE)),
        ("ADVECT_DYE", U32(g::ADVECT_DYE)),
        ("CARRY_FUEL", U32(g::CARRY_FUEL)),
        ("CHANNEL_Q0", U32(g::CHANNEL_Q0)),
        ("CHANNEL_Q1", U32(g::CHANNEL_Q1)),
        ("CHANNEL_RGBA", U32(g::CHANNEL_RGBA)),
        ("AMOUNT_DENSITY", U32(g::AMOUNT_DENSITY)),
        ("AMOUNT_TEMPERATURE", U32(g::AMOUNT_TEMPERATURE)),
        ("AMOUNT_FUEL", U32(g::AMOUNT_FUEL)),
        ("INFLOW_SMOKE", U32(g::INFLOW_SMOKE)),
        ("INFLOW_HEAT", U32(g::INFLOW_HEAT)),
        ("INFLOW_DYE", U32(g::INFLOW_DYE)),
        ("SHARP_MACCORMACK", U32(g::SHARP_MACCORMACK)),
        ("SHARP_BFECC", U32(g::SHARP_BFECC)),
        ("SHARP_CUBIC", U32(g::SHARP_CUBIC)),
        ("SHARP_SCALAR", U32(g::SHARP_SCALAR)),
        ("SHARP_DYE", U32(g::SHARP_DYE)),
        ("TABLE_HEADER", U32(f::solid::TABLE_HEADER as u32)),
        ("SHAPE_BOX", U32(particles::SHAPE_BOX)),
        ("KIND_VALUE", U32(r::KIND_VALUE)),
        ("KIND_ABS", U32(r::KIND_ABS)),
        ("KIND_SIGNED", U32(r::KIND_SIGNED)),
        ("KIND_DYE", U32(r::KIND_DYE)),
        ("KIND_HUE", U32(r::KIND_HUE)),
        ("KIND_SPEED", U32(r::KIND_SPEED)),
        ("FIRST_BACKDROP", U32(r::FIRST_BACKDROP)),
        ("COLOUR_BACKGROUND", U32(r::COLOUR_BACKGROUND as u32)),
        ("COLOUR_OBSTACLE", U32(r::COLOUR_OBSTACLE as u32)),
        ("FALLOFF_GAUSSIAN", U32(f::uniform::FALLOFF_GAUSSIAN)),
        ("FALLOFF_CONSTANT", U32(f::uniform::FALLOFF_CONSTANT)),
        ("GAUSSIAN_CUTOFF", F32(splat::GAUSSIAN_CUTOFF)),
    ]
}

/// The text of `fluid-shaders/shaders/shared/params.wgsl`, which every shader starts with: the
/// WGSL declaration of every block of [`wgsl_layouts`], then the [`wgsl_constants`].
pub fn params_wgsl() -> String {
    let mut out = String::from(
        "// Generated by `cargo xtask shaders` from the Rust definitions of the blocks the kernels\n\
         // read (swirly_core::wgsl_layouts; their docs say what each member means) and of the\n\
         // codes they compare with (swirly_core::wgsl_constants): edit those.\n",
    );
    for layout in wgsl_layouts() {
        out.push('\n');
        out.push_str(&swirly_ir::wgsl::declaration(&layout));
    }
    out.push('\n');
    for (name, value) in wgsl_constants() {
        match value {
            WgslConst::U32(v) => out.push_str(&format!("const {name}: u32 = {v}u;\n")),
            WgslConst::F32(v) => out.push_str(&format!("const {name}: f32 = {v:?};\n")),
        }
    }
    out
}
