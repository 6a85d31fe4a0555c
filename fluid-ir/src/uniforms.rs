//! The blocks every model's kernels share: the step uniform, the reductions' parameters and
//! their two kernels. Each struct is `#[repr(C)]`, [`bytemuck::Pod`], a multiple of 16 bytes,
//! and its WGSL declaration (`fluid-shaders/shaders/shared/params.wgsl`) is generated from it
//! ([`crate::wgsl`]); `swirly-shaders` checks the two by naga reflection.

use bytemuck::{Pod, Zeroable};

use crate::kernel::Access::{Read as R, ReadWrite as RW};
use crate::kernel::{Binding, Domain, Kernel, KernelDesc, ParamsBlock, ParamsDesc, Workgroup};
use crate::schedule::ReduceOp;

crate::wgsl_struct! {
    /// Inputs that change every step (written before each submission, never baked into a recording).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct StepUniform {
        /// Time step in seconds.
        pub dt: f32,
        /// Simulated time at the start of the step.
        pub time: f32,
        /// Number of records in the run's record buffer ([`crate::backend::Records`]).
        pub records: u32,
        /// Step counter.
        pub step: u32,
    }
}

pub use crate::kernel::PARAMS_MAX_BYTES;

/// Reduction operation code of [`ReduceParams::op`]: `max |x|`.
pub const REDUCE_MAX_ABS: u32 = 0;
/// Reduction operation code of [`ReduceParams::op`]: `Σ x²`.
pub const REDUCE_SUM_SQUARES: u32 = 1;

crate::wgsl_struct! {
    /// Parameters of the GPU reduction passes (`reduce_partial`, `reduce_final`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct ReduceParams {
        /// Values to reduce.
        pub len: u32,
        /// [`REDUCE_MAX_ABS`] or [`REDUCE_SUM_SQUARES`].
        pub op: u32,
        /// Result slot.
        pub slot: u32,
        /// Number of partial results (workgroups of the first pass).
        pub partials: u32,
    }
}

impl ParamsBlock for ReduceParams {}

/// Threads of a reduction workgroup (`WG` in reduce.wgsl).
pub const REDUCE_WORKGROUP: u32 = 256;
/// Most partial results of a reduction's first pass: the size of a GPU backend's partials buffer.
pub const REDUCE_MAX_PARTIALS: u32 = 1024;

impl ReduceParams {
    /// Reduce `len` values by `op` into result `slot`: one partial result per four workgroups'
    /// worth of values, at least one, at most [`REDUCE_MAX_PARTIALS`].
    pub fn new(len: u32, op: ReduceOp, slot: usize) -> ReduceParams {
        ReduceParams {
            len,
            op: match op {
                ReduceOp::MaxAbs => REDUCE_MAX_ABS,
                ReduceOp::SumSquares => REDUCE_SUM_SQUARES,
            },
            slot: slot as u32,
            partials: len.div_ceil(REDUCE_WORKGROUP * 4).clamp(1, REDUCE_MAX_PARTIALS),
        }
    }
}

const REDUCE_BINDINGS: &[Binding] =
    &[Binding::f32("data", R), Binding::f32("partials", RW), Binding::f32("results", RW)];

const fn reduce(name: &'static str, doc: &'static str) -> KernelDesc {
    KernelDesc {
        name,
        module: "reduce",
        bindings: REDUCE_BINDINGS,
        params: Some(ParamsDesc::of::<ReduceParams>()),
        records: false,
        domain: Domain::Given,
        workgroup: Workgroup::Covers(REDUCE_WORKGROUP, 1),
        doc,
    }
}

static REDUCE_PARTIAL_DESC: KernelDesc =
    reduce("reduce_partial", "a reduction's first pass: one partial result per workgroup");
static REDUCE_FINAL_DESC: KernelDesc =
    reduce("reduce_final", "a reduction's second pass: the partial results into a result slot");

/// The reduction's first pass (`reduce.wgsl`).
pub const REDUCE_PARTIAL: Kernel = Kernel(&REDUCE_PARTIAL_DESC);
/// The reduction's second pass (`reduce.wgsl`).
pub const REDUCE_FINAL: Kernel = Kernel(&REDUCE_FINAL_DESC);

const _: () = {
    assert!(size_of::<ReduceParams>() == 16);
    assert!(size_of::<StepUniform>() == 16);
};
