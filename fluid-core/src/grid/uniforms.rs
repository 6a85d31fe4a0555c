//! The grid model's parameter blocks, defined once for every backend.
//!
//! Each struct is defined by [`swirly_ir::wgsl_struct!`] (`#[repr(C)]`, [`bytemuck::Pod`], a
//! multiple of 16 bytes); its WGSL declaration in `fluid-shaders/shaders/shared/params.wgsl` is
//! generated from it (`cargo xtask shaders`), and `swirly-shaders` checks every member's offset
//! there by reflection. GPU backends upload the bytes as they are.

use bytemuck::{Pod, Zeroable};

use swirly_ir::kernel::ParamsBlock;
use swirly_ir::uniforms::PARAMS_MAX_BYTES;

macro_rules! params_blocks {
    ($($t:ident),*) => {
        $(impl ParamsBlock for $t {})*
    };
}

params_blocks!(
    AdvectParams,
    ChannelParams,
    SplatParams,
    DyeParams,
    SharpParams,
    TensionParams,
    ForceParams,
    BurnParams,
    TurbulenceParams,
    DiffuseParams,
    JacobiParams,
    MgParams,
    CgParams,
    TapsParams,
    FilterParams
);

/// Bit of [`AdvectParams::fields`]: the scene carries density on the velocity's cells
/// (`rasterise_solids` clears it inside obstacles).
pub const ADVECT_DENSITY: u32 = 1;
/// Bit of [`AdvectParams::fields`]: the scene carries temperature.
pub const ADVECT_TEMPERATURE: u32 = 2;
/// Bit of [`AdvectParams::fields`]: the scene carries dye on the velocity's cells.
pub const ADVECT_DYE: u32 = 4;
/// Bit of [`AdvectParams::fields`]: the scene carries fuel.
pub const CARRY_FUEL: u32 = 8;

swirly_ir::wgsl_struct! {
    /// Parameters of `advect_velocity` and `rasterise_solids`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct AdvectParams {
        /// Backtrace order: 1 (Euler), 2 (midpoint RK2) or 3 (Ralston RK3).
        pub order: u32,
        /// Which cell fields the scene carries ([`ADVECT_DENSITY`] | …): what
        /// `rasterise_solids` clears inside obstacles.
        pub fields: u32,
        /// Dissipation rate of velocity, 1/s (multiplies by `exp(−rate·dt)`).
        pub velocity_dissipation: f32,
        /// Ambient temperature (what `rasterise_solids` leaves inside obstacles).
        pub ambient_temperature: f32,
    }
}

/// Bit of [`ChannelParams::channels`]: the slots `q0`/`q0_out` hold a field to advect.
pub const CHANNEL_Q0: u32 = 1;
/// Bit of [`ChannelParams::channels`]: the slots `q1`/`q1_out` hold a field.
pub const CHANNEL_Q1: u32 = 2;
/// Bit of [`ChannelParams::channels`]: the slots `rgba`/`rgba_out` hold a field.
pub const CHANNEL_RGBA: u32 = 4;
/// What a channel's ghost past an inflow side holds ([`ChannelParams::q0_inflow`] …): its
/// ambient value (nothing: fuel).
pub const INFLOW_AMBIENT: u32 = 0;
/// The inflow's smoke, in its bands (`side_carry.x`): the density.
pub const INFLOW_SMOKE: u32 = 1;
/// The inflow's temperature (`side_carry.y`).
pub const INFLOW_HEAT: u32 = 2;
/// The inflow's dye, in its bands (`side_dye`): an RGBA channel.
pub const INFLOW_DYE: u32 = 3;

swirly_ir::wgsl_struct! {
    /// Parameters of `advect_channels`: up to two scalar channels and one RGBA channel on one
    /// lattice (`factor` cells per velocity cell along each axis), traced back once per cell.
    /// A channel with dissipation `rate` and value `ambient` maps `x` to
    /// `ambient + (x − ambient)·exp(−rate·dt)`; near an inflow side it blends toward what the
    /// ghost past the side holds (`*_inflow`: [`INFLOW_AMBIENT`] …).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct ChannelParams {
        /// Backtrace order (1–3), as [`AdvectParams::order`].
        pub order: u32,
        /// The lattice's cells per velocity cell along each axis (1: the velocity's cells).
        pub factor: u32,
        /// Which slots hold fields ([`CHANNEL_Q0`] | [`CHANNEL_Q1`] | [`CHANNEL_RGBA`]).
        pub channels: u32,
        /// What `q0`'s ghost past an inflow holds.
        pub q0_inflow: u32,
        /// What `q1`'s ghost past an inflow holds.
        pub q1_inflow: u32,
        /// What `rgba`'s ghost past an inflow holds ([`INFLOW_AMBIENT`] or [`INFLOW_DYE`]).
        pub rgba_inflow: u32,
        /// `q0`'s dissipation rate, 1/s.
        pub q0_rate: f32,
        /// What `q0` relaxes to.
        pub q0_ambient: f32,
        /// `q1`'s dissipation rate, 1/s.
        pub q1_rate: f32,
        /// What `q1` relaxes to.
        pub q1_ambient: f32,
        /// `rgba`'s dissipation rate, 1/s (it relaxes to zero).
        pub rgba_rate: f32,
        /// Padding.
        pub _pad: u32,
    }
}

/// [`SplatParams::q0_amount`] …: the splat's density.
pub const AMOUNT_DENSITY: u32 = 0;
/// The splat's temperature.
pub const AMOUNT_TEMPERATURE: u32 = 1;
/// The splat's fuel.
pub const AMOUNT_FUEL: u32 = 2;

swirly_ir::wgsl_struct! {
    /// Parameters of `splat_cells`: up to two scalar channels and an RGBA one (the dye) on one
    /// lattice (`factor` cells per velocity cell along each axis), each scalar taking one of a
    /// splat's amounts.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct SplatParams {
        /// The lattice's cells per velocity cell along each axis (1: the velocity's cells).
        pub factor: u32,
        /// Which slots hold fields ([`CHANNEL_Q0`] | [`CHANNEL_Q1`] | [`CHANNEL_RGBA`]).
        pub channels: u32,
        /// Which amount `q0` takes ([`AMOUNT_DENSITY`], [`AMOUNT_TEMPERATURE`] or [`AMOUNT_FUEL`]).
        pub q0_amount: u32,
        /// Which amount `q1` takes.
        pub q1_amount: u32,
    }
}

/// [`SharpParams::scheme`]: MacCormack (Selle et al. 2008): the forward value corrected by
/// half the error of a forward-and-back round trip.
pub const SHARP_MACCORMACK: u32 = 1;
/// [`SharpParams::scheme`]: BFECC (Kim et al. 2005): advect the field corrected by half the
/// round trip's error.
pub const SHARP_BFECC: u32 = 2;
/// [`SharpParams::scheme`]: semi-Lagrangian with monotone cubic sampling (Fedkiw et al. 2001).
pub const SHARP_CUBIC: u32 = 3;
/// Bit of [`SharpParams::fields`]: the scalar slot holds a field to advect.
pub const SHARP_SCALAR: u32 = 1;
/// Bit of [`SharpParams::fields`]: the dye slots hold the dye.
pub const SHARP_DYE: u32 = 2;

swirly_ir::wgsl_struct! {
    /// Parameters of the sharper advection passes (`back_velocity`, `back_cells`,
    /// `sharp_velocity`, `sharp_cells`). Dissipation maps a value `x` to
    /// `ambient + (x − ambient)·exp(−rate·dt)`; the backward pass applies its inverse.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct SharpParams {
        /// Backtrace order, as [`AdvectParams::order`].
        pub order: u32,
        /// [`SHARP_MACCORMACK`], [`SHARP_BFECC`] or [`SHARP_CUBIC`].
        pub scheme: u32,
        /// Which slots hold fields ([`SHARP_SCALAR`] | [`SHARP_DYE`]; velocity kernels ignore it).
        pub fields: u32,
        /// Dissipation rate of the scalar (or of the velocity), 1/s.
        pub rate: f32,
        /// What the scalar relaxes to (the ambient temperature; 0 for the others).
        pub ambient: f32,
        /// Dissipation rate of the dye, 1/s.
        pub dye_rate: f32,
        /// Padding.
        pub _pad: [u32; 2],
    }
}

swirly_ir::wgsl_struct! {
    /// How the dye (or a finer density) lives, for `splat`, `coarse_density` and `fine_soot`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct DyeParams {
        /// Backtrace order (1–3), as [`AdvectParams::order`].
        pub order: u32,
        /// The dye's cells per cell along each axis ([`crate::grid::Grid::dye_factor`]): with 1
        /// `splat` adds the dye, above 1 `splat_cells` does on the finer grid.
        pub factor: u32,
        /// The dye's dissipation rate, 1/s.
        pub dissipation: f32,
        /// Padding.
        pub _pad: u32,
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of `surface_tension`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct TensionParams {
        /// σ: the force is `σ κ ∇ρ`.
        pub strength: f32,
        /// Padding.
        pub _pad: [u32; 3],
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of `apply_forces`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct ForceParams {
        /// Gravity (x, y), world units/s².
        pub gravity: [f32; 2],
        /// Downward acceleration per unit density.
        pub density_weight: f32,
        /// Upward acceleration per degree above ambient.
        pub temperature_lift: f32,
        /// Ambient temperature.
        pub ambient_temperature: f32,
        /// Vorticity confinement strength ε.
        pub vorticity: f32,
        /// Largest speed at a face after forces (`clamp_speed`'s limit); only when `clamp_speed` is 1.
        pub max_speed: f32,
        /// 1 when the step limits the speed to `max_speed` (the `clamp_speed` kernel runs).
        pub clamp_speed: u32,
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of `burn` and `expand` (see [`crate::grid::params::Combustion`]).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct BurnParams {
        /// Fraction of the fuel burnt per second above ignition: `1 − exp(−rate·dt)` per step.
        pub rate: f32,
        /// Temperature at and above which fuel burns.
        pub ignition: f32,
        /// Temperature released per unit of fuel burnt.
        pub heat: f32,
        /// Density (smoke) made per unit of fuel burnt.
        pub soot: f32,
        /// Volume made per unit of fuel burnt (a divergence source).
        pub expansion: f32,
        /// Padding.
        pub _pad: [u32; 3],
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of `turbulence` (see [`crate::grid::params::Turbulence`]).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct TurbulenceParams {
        /// Acceleration scale, world units/s².
        pub amplitude: f32,
        /// Lattice units per second along the noise's time axis.
        pub speed: f32,
        /// Lattice cells per world unit along x and y (the first octave).
        pub inv_scale: [f32; 2],
        /// Lattice cells across a periodic axis (the first octave), 0 on the others.
        pub period: [u32; 2],
        /// Octaves, each of twice the frequency and half the weight of the one before.
        pub octaves: u32,
        /// 0: no mask; 1: weighted by the bound cell field.
        pub mask: u32,
        /// Subtracted from the mask field (the ambient temperature for heat).
        pub mask_offset: f32,
        /// The mask field's value (less the offset) at which the force is whole.
        pub mask_full: f32,
        /// Padding.
        pub _pad: [u32; 2],
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of `diffuse_velocity`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct DiffuseParams {
        /// Kinematic viscosity ν, world units²/s.
        pub viscosity: f32,
        /// 1: a face an obstacle closes holds the fluid beside it at the solid's velocity (no
        /// slip); 0: it drops out of its neighbours' sums (free slip).
        pub no_slip: u32,
        /// Heat only: 1 when obstacles hold temperatures (the `held` cells keep theirs and
        /// conduct through every face), 0 when every solid insulates.
        pub held: u32,
        /// Padding.
        pub _pad: u32,
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of the pressure sweeps: `jacobi`, `jacobi_multisweep`, `sor`, `relax`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct JacobiParams {
        /// Relaxation weight ω.
        pub omega: f32,
        /// 1 to treat the source pressure as zero (a cold start).
        pub zero_initial: u32,
        /// `sor` only: the colour this pass updates, 0 (red, `i + j` even) or 1 (black).
        pub colour: u32,
        /// `jacobi_multisweep` only: the sweeps this dispatch performs, 1 ..=
        /// [`MULTISWEEP_MAX`] (more are performed as [`MULTISWEEP_MAX`]); the other kernels
        /// perform one and ignore it.
        pub sweeps: u32,
    }
}

/// The most sweeps one `jacobi_multisweep` dispatch performs: the halo, in cells, that each
/// workgroup loads around its tile (`MS_HALO` in `jacobi_multisweep.wgsl`).
pub const MULTISWEEP_MAX: u32 = 8;

/// The side, in cells, of the square tile one `jacobi_multisweep` workgroup writes (`MS_TILE`
/// in `jacobi_multisweep.wgsl`).
pub const MULTISWEEP_TILE: u32 = 48;

swirly_ir::wgsl_struct! {
    /// Parameters of the multigrid kernels (`mg_*`): one level (`nx`, `ny`, offsets `b`, `p`,
    /// `tmp` in the packed buffer) and, for the transfers, the next coarser one (`cnx`, `cny`, `cb`,
    /// `cp`). See [`crate::grid::pressure::multigrid`].
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct MgParams {
        /// Cells along x of this level.
        pub nx: u32,
        /// Cells along y of this level.
        pub ny: u32,
        /// Offset of this level's `b`.
        pub b: u32,
        /// Offset of the iterate this kernel reads (`mg_smooth`: the source of the pass).
        pub p: u32,
        /// Offset this kernel writes (`mg_smooth`: the destination of the pass).
        pub tmp: u32,
        /// Cells along x of the coarser level.
        pub cnx: u32,
        /// Cells along y of the coarser level.
        pub cny: u32,
        /// Offset of the coarser level's `b`.
        pub cb: u32,
        /// Offset of the coarser level's `p`.
        pub cp: u32,
        /// `mg_smooth`: the colour relaxed, 0 (red, `i + j` even) or 1 (black); `mg_load`,
        /// `mg_store`: the mode ([`crate::grid::pressure::multigrid::LOAD_COPY`] …).
        pub colour: u32,
        /// `mg_load`: 1 for a cold start (the pressure taken as zero; in mode `LOAD_RESIDUAL` also
        /// set to zero); `mg_smooth`: 1 to take the iterate as zero (the first pass of a solve from
        /// zero).
        pub zero_initial: u32,
        /// `mg_smooth`: relaxation weight ω (1: Gauss–Seidel).
        pub omega: f32,
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of the MGPCG kernels (`cg_*`), offsets into the packed multigrid buffer.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct CgParams {
        /// Cells along x (level 0).
        pub nx: u32,
        /// Cells along y (level 0).
        pub ny: u32,
        /// Offset of `x` (`cg_dot`: its first operand).
        pub x: u32,
        /// Offset of the residual `r`.
        pub r: u32,
        /// Offset of `z = M r` (`cg_dot`: its second operand).
        pub z: u32,
        /// Offset of the search direction `d`.
        pub d: u32,
        /// Offset of `q = A d`.
        pub q: u32,
        /// Offset of the partial sums.
        pub partials: u32,
        /// Offset of the scalars.
        pub scalars: u32,
        /// The scalar slot of this iteration's `r·z` (0 or 1; `cg_dot`: the slot written).
        pub slot: u32,
        /// `cg_init`: 1 to start from zero; `cg_dot`: 0 partial pass, 1 final pass;
        /// `cg_direction`: 1 on the first iteration (d = z).
        pub flag: u32,
        /// `cg_dot`: number of partial sums.
        pub count: u32,
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of `poisson_taps`: eight filter taps written at `offset` of the packed buffer.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct TapsParams {
        /// Where the first tap goes.
        pub offset: u32,
        /// How many of the eight taps to write.
        pub count: u32,
        /// Padding (the taps start 16-byte aligned, as WGSL's uniform layout wants).
        pub _pad: [u32; 2],
        /// The taps.
        pub taps: [f32; 8],
    }
}

swirly_ir::wgsl_struct! {
    /// Parameters of `poisson_rows` and `poisson_cols` (see [`crate::grid::pressure::poisson_filter`]).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct FilterParams {
        /// Rank: filters applied.
        pub rank: u32,
        /// Sweeps unrolled: the filters have `2k + 1` taps.
        pub k: u32,
        /// Offset of the filter bank (filter `i`, tap `t` at `bank + i · MAX_TAPS + t`).
        pub bank: u32,
        /// Offset of the `rank` intermediate arrays (rows' output, columns' input).
        pub tmp: u32,
        /// Offset of the array holding the warm-start part.
        pub q: u32,
        /// `poisson_rows`: 0 filters the pressure, 1 filters `b = −h² ∇·u / dt`;
        /// `poisson_cols`: 0 writes `q`, 1 writes the pressure, 2 writes the pressure plus `q`.
        pub mode: u32,
        /// Padding.
        pub _pad: [u32; 2],
    }
}

const _: () = {
    assert!(size_of::<BurnParams>() == 32);
    assert!(size_of::<TurbulenceParams>() == 48);
    assert!(size_of::<AdvectParams>() == 16);
    assert!(size_of::<ChannelParams>() == 48);
    assert!(size_of::<SplatParams>() == 16);
    assert!(size_of::<ForceParams>() == 32);
    assert!(size_of::<DiffuseParams>() == 16);
    assert!(size_of::<DyeParams>() == 16);
    assert!(size_of::<JacobiParams>() == 16);
    assert!(size_of::<MgParams>() as u64 == PARAMS_MAX_BYTES);
    assert!(size_of::<CgParams>() as u64 == PARAMS_MAX_BYTES);
    assert!(size_of::<TapsParams>() as u64 == PARAMS_MAX_BYTES);
    assert!(size_of::<FilterParams>() == 32);
    assert!(size_of::<AdvectParams>() as u64 <= PARAMS_MAX_BYTES);
    assert!(size_of::<ForceParams>() as u64 <= PARAMS_MAX_BYTES);
};
