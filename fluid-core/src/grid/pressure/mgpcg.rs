//! Conjugate gradients preconditioned by one symmetric multigrid V-cycle from zero (MGPCG),
//! all on the device: the dot products reduce in two passes into scalars the next kernels
//! read, so no iteration waits for the host. `x` is kept in double-float and the recursive
//! residual is recomputed from it every [`CG_RESTART`] iterations.
//!
//! The vectors live in the solver's workspace after the multigrid levels ([`cg_layout`]):
//! `r` is level 0's `b` and `z = M r` level 0's `p`, so the V-cycle preconditions in place.

use crate::grid::FieldId::{Divergence, Multigrid, Pressure, PressureLo};
use crate::grid::kernels::{CG_APPLY, CG_DIRECTION, CG_DOT, CG_INIT, CG_UPDATE, MG_STORE};
use crate::grid::pressure::multigrid::{self, STORE_PAIR};
use crate::grid::step::Builder;
use crate::grid::uniforms::{CgParams, MgParams};

/// MGPCG restarts from its double-float iterate every this many iterations: `x` is stored
/// into the pressure and the residual recomputed from it. The recursive residual drifts from the
/// true one by the f32 rounding of its updates; past the point where CG has converged to that
/// drift, further iterations without a restart made the true residual grow again.
pub const CG_RESTART: u32 = 8;

/// Most partial sums of a dot product (the first of its two passes).
pub const MAX_PARTIALS: u32 = 1024;

/// Where MGPCG keeps its vectors, after the levels: the iterate `x` (double-float: its high
/// part, then its low part, `cells` values each), the search direction `d`, `q = A d`, the dot
/// products' partial sums and scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgLayout {
    /// Offset of `x` (the high part; the low part follows).
    pub x: u32,
    /// Offset of `d`.
    pub d: u32,
    /// Offset of `q`.
    pub q: u32,
    /// Offset of the [`MAX_PARTIALS`] partial sums.
    pub partials: u32,
    /// Offset of the 16 scalars: `r·z` of even and odd iterations (0, 1), `d·q` (2).
    pub scalars: u32,
}

/// The MGPCG vectors of an `nx × ny` grid.
pub fn cg_layout(nx: u32, ny: u32) -> CgLayout {
    let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let end = multigrid::levels_len(nx, ny);
    let cells = u64::from(nx) * u64::from(ny);
    CgLayout {
        x: sat(end),
        d: sat(end + 2 * cells),
        q: sat(end + 3 * cells),
        partials: sat(end + 4 * cells),
        scalars: sat(end + 4 * cells + u64::from(MAX_PARTIALS)),
    }
}

/// Values of MGPCG's workspace: the levels and the vectors after them.
pub fn workspace_len(nx: u32, ny: u32) -> u64 {
    u64::from(cg_layout(nx, ny).scalars) + 16
}

/// The `cg_*` parameters shared by every MGPCG kernel of an `nx × ny` grid: level 0's size, the
/// vectors (`r` and `z` are level 0's `b` and `p`), and the number of partial sums of a dot
/// product (one per 1024 cells, at most [`MAX_PARTIALS`]).
pub fn cg_params(nx: u32, ny: u32) -> CgParams {
    let top = multigrid::levels(nx, ny)[0];
    let l = cg_layout(nx, ny);
    CgParams {
        nx,
        ny,
        x: l.x,
        r: top.b,
        z: top.p,
        d: l.d,
        q: l.q,
        partials: l.partials,
        scalars: l.scalars,
        count: top.cells().div_ceil(256 * 4).clamp(1, MAX_PARTIALS),
        ..CgParams::default()
    }
}

/// `iterations` of MGPCG, in chunks of [`CG_RESTART`] (each starting from the double-float
/// pressure the previous one stored); `cold`: the first starts from zero.
pub(crate) fn push(b: &mut Builder, iterations: u32, omega: f32, cold: bool) {
    let (nx, ny) = (b.grid().nx, b.grid().ny);
    let levels = multigrid::levels(nx, ny);
    let top = levels[0];
    let l = cg_layout(nx, ny);
    let base = cg_params(nx, ny);
    let count = base.count;
    let dot = |b: &mut Builder, a: u32, c: u32, slot: u32| {
        for (flag, extent) in [(0, [count * 256, 1]), (1, [256, 1])] {
            b.run_over(CG_DOT, &[Multigrid], Some(&CgParams { x: a, z: c, slot, flag, ..base }), extent);
        }
    };
    let whole = [top.nx, top.ny];
    let store = MgParams { nx: top.nx, ny: top.ny, p: l.x, colour: STORE_PAIR, ..MgParams::default() };
    for k in 0..iterations {
        if k % CG_RESTART == 0 {
            if k > 0 {
                b.run_over(MG_STORE, &[Multigrid, Pressure, PressureLo], Some(&store), whole);
            }
            let init = CgParams { flag: u32::from(cold && k == 0), ..base };
            b.run_over(CG_INIT, &[Pressure, PressureLo, Divergence, Multigrid], Some(&init), whole);
        }
        let first = k % CG_RESTART == 0;
        let slot = k % 2;
        multigrid::push_vcycle(b, &levels, omega, true, true);
        dot(b, top.b, top.p, slot);
        b.run_over(CG_DIRECTION, &[Multigrid], Some(&CgParams { slot, flag: u32::from(first), ..base }), whole);
        b.run_over(CG_APPLY, &[Multigrid], Some(&base), whole);
        dot(b, l.d, l.q, 2);
        b.run_over(CG_UPDATE, &[Multigrid], Some(&CgParams { slot, ..base }), whole);
    }
    b.run_over(MG_STORE, &[Multigrid, Pressure, PressureLo], Some(&store), whole);
}
