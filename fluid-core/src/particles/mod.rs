//! The particle liquid: Clavet, Beaudoin & Poulin's double density relaxation (SCA 2005), in a
//! form every backend runs the same way.
//!
//! A substep is the paper's: gravity and the viscosity impulses change each velocity, the
//! particles advance (their old positions kept), double density relaxation displaces them,
//! collisions keep them in their container, and the velocity is the position change over dt.
//! Two choices make it deterministic on every backend and independent of thread order:
//!
//! - **Neighbours by a stable counting sort.** Each substep starts by sorting the particles by
//!   the cell of a hash whose cells are the interaction radius wide: counts per cell, their
//!   prefix sum, a scatter, then each cell's run put back in index order (on a GPU the
//!   scatter's atomics leave a run in any order; sorting each run makes the sort stable). The
//!   particles' data is then gathered in that order, so neighbours sit together in memory and a
//!   particle's neighbours are the runs of the 3 × 3 cells about its cell (a row of three cells
//!   is one run).
//! - **Gather form.** Each particle sums its own change from pairwise terms that are equal and
//!   opposite for the two of a pair (the viscosity impulse, the relaxation displacement with
//!   both particles' pressures), and writes only its own: momentum is conserved to rounding and
//!   no write depends on the order of threads (the paper's loop is Gauss–Seidel; this is
//!   Jacobi).
//!
//! With `[particles.springs]` a substep also adjusts and applies the paper's viscoelastic
//! springs after the advance (section 5): lists kept by stable particle id, a spring proposed
//! by each end and kept only when both proposed it, so both hold it alike. Obstacles collide
//! after the container, and stickiness pulls particles toward both.
//!
//! The neighbour cells of a substep are those of its start: a pair closing from two cells
//! apart to within the radius in one substep interacts from the next one, when its weight
//! `1 − r/h` is still near zero.

pub mod kernels;
pub mod model;
pub mod spec;

use bytemuck::{Pod, Zeroable};

use swirly_ir::kernel::ParamsBlock;

/// Bytes each particle takes on a device: position, velocity and their partners, the
/// relaxed positions, the pressures (eight bytes each) and three `u32` of the sort.
pub const BYTES_PER_PARTICLE: u64 = 6 * 8 + 3 * 4;

/// Threads of a particle kernel's workgroup (and elements per thread of the prefix sum: 4).
pub const WORKGROUP: u32 = 256;

/// Elements one workgroup of the prefix sum scans.
pub const SCAN_BLOCK: u32 = 4 * WORKGROUP;

macro_rules! blocks {
    ($($(#[$m:meta])* $t:ident { $($(#[$fm:meta])* $f:ident : $ty:ty),* $(,)? })*) => {
        $(
            swirly_ir::wgsl_struct! {
                $(#[$m])*
                #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
                pub struct $t { $($(#[$fm])* pub $f: $ty,)* }
            }
            impl ParamsBlock for $t {}
            const _: () = assert!(size_of::<$t>() % 16 == 0 && size_of::<$t>() as u64 <= swirly_ir::kernel::PARAMS_MAX_BYTES);
        )*
    };
}

blocks! {
    /// The sort's kernels: `particle_hash`, `particle_scatter`, `particle_order`, `particle_gather`.
    HashParams {
        /// Live particles.
        count: u32,
        /// Hash cells along x.
        cells_x: u32,
        /// Hash cells along y.
        cells_y: u32,
        /// 1 / the cells' side (world units).
        inv_cell: f32,
    }
    /// The prefix sum (`particle_scan`, `particle_scan_add`).
    ScanParams {
        /// Values to scan.
        len: u32,
        /// Padding.
        _pad0: u32,
        /// Padding.
        _pad1: u32,
        /// Padding.
        _pad2: u32,
    }
    /// Gravity, viscosity impulses and the advance (`particle_forces`).
    ViscosityParams {
        /// Live particles.
        count: u32,
        /// Hash cells along x.
        cells_x: u32,
        /// Hash cells along y.
        cells_y: u32,
        /// The substep's part of the step's dt.
        dt_scale: f32,
        /// 1 / h.
        inv_radius: f32,
        /// h².
        radius_sq: f32,
        /// Linear viscosity σ.
        sigma: f32,
        /// Quadratic viscosity β.
        beta: f32,
        /// Gravity (world units / s²).
        gravity: [f32; 2],
        /// Padding.
        _pad0: u32,
        /// Padding.
        _pad1: u32,
    }
    /// Densities and pressures (`particle_density`).
    DensityParams {
        /// Live particles.
        count: u32,
        /// Hash cells along x.
        cells_x: u32,
        /// Hash cells along y.
        cells_y: u32,
        /// 1 / h.
        inv_radius: f32,
        /// h².
        radius_sq: f32,
        /// ρ0.
        rest_density: f32,
        /// k.
        stiffness: f32,
        /// k_near.
        near_stiffness: f32,
    }
    /// The relaxation displacement (`particle_relax`).
    RelaxParams {
        /// Live particles.
        count: u32,
        /// Hash cells along x.
        cells_x: u32,
        /// Hash cells along y.
        cells_y: u32,
        /// 1 / h.
        inv_radius: f32,
        /// h².
        radius_sq: f32,
        /// The substep's part of the step's dt.
        dt_scale: f32,
        /// Padding.
        _pad0: u32,
        /// Padding.
        _pad1: u32,
    }
    /// The container and the new velocity (`particle_collide`).
    CollideParams {
        /// Live particles.
        count: u32,
        /// [`SHAPE_BOX`] or [`SHAPE_CIRCLE`].
        shape: u32,
        /// The substep's part of the step's dt.
        dt_scale: f32,
        /// Part of the tangential speed lost at the container.
        friction: f32,
        /// Box: lower-left corner; circle: centre.
        lo: [f32; 2],
        /// Box: upper-right corner; circle: `[radius, 0]`.
        hi: [f32; 2],
        /// Speed away from the container a particle touching it gets (world units / s).
        anti_stick: f32,
        /// Stickiness k_stick (1/s²).
        stickiness: f32,
        /// Reach of stickiness (world units).
        stick_distance: f32,
        /// Padding.
        _pad0: u32,
    }
    /// The springs (`particle_spring_propose`, `particle_spring_confirm`,
    /// `particle_spring_apply`).
    SpringParams {
        /// Live particles.
        count: u32,
        /// Hash cells along x.
        cells_x: u32,
        /// Hash cells along y.
        cells_y: u32,
        /// Entries of each particle's list.
        max_springs: u32,
        /// h.
        radius: f32,
        /// h².
        radius_sq: f32,
        /// The substep's part of the step's dt.
        dt_scale: f32,
        /// Yield ratio γ.
        yield_ratio: f32,
        /// Plasticity α (1/s).
        plasticity: f32,
        /// Spring stiffness (1/s²).
        stiffness: f32,
        /// Padding.
        _pad0: u32,
        /// Padding.
        _pad1: u32,
    }
    /// One emitter's particles of a step (`particle_emit`).
    EmitParams {
        /// New particles.
        count: u32,
        /// The slot of the first.
        first: u32,
        /// The emitter's count of the first (from its opening).
        index: u32,
        /// Particles a row.
        per_row: u32,
        /// The nozzle's centre.
        center: [f32; 2],
        /// From one particle of a row to the next.
        across: [f32; 2],
        /// The flow's velocity.
        velocity: [f32; 2],
        /// The emitter's opening time less the step's start (seconds).
        lead: f32,
        /// Seconds between rows.
        interval: f32,
    }
    /// The obstacles as colliders (`particle_solids`).
    SolidParams {
        /// Live particles.
        count: u32,
        /// The substep's end as a part of the step's dt (the obstacles stand there then).
        t_scale: f32,
        /// The substep's part of the step's dt.
        dt_scale: f32,
        /// Part of the tangential speed relative to the solid lost at it.
        friction: f32,
        /// Stickiness k_stick (1/s²).
        stickiness: f32,
        /// Reach of stickiness (world units).
        stick_distance: f32,
        /// Step of the central differences that give a solid's normal (world units).
        eps: f32,
        /// Distance within which an obstacle is measured exactly (its bounding disc's below).
        margin: f32,
    }
    /// The liquid drawn to the picture's cells (`particle_draw`).
    DrawParams {
        /// Live particles.
        count: u32,
        /// Hash cells along x.
        cells_x: u32,
        /// Hash cells along y.
        cells_y: u32,
        /// 1 / the hash cells' side.
        inv_cell: f32,
        /// 1 / the drawing radius.
        inv_radius: f32,
        /// The drawing radius, squared.
        radius_sq: f32,
        /// Factor of the sum of weights (1 / ρ0: about 1 inside the liquid).
        scale: f32,
        /// Padding.
        _pad0: u32,
    }
}

/// An empty entry of a spring list (lists are packed from their start).
pub const NO_SPRING: u32 = u32::MAX;

/// [`CollideParams::shape`] of a box container.
pub const SHAPE_BOX: u32 = 0;
/// [`CollideParams::shape`] of a circle container.
pub const SHAPE_CIRCLE: u32 = 1;
