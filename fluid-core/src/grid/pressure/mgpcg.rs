//! Conjugate gradients preconditioned by one symmetric multigrid V-cycle from zero (MGPCG),
//! all on the device: the dot products reduce in two passes into scalars the next kernels
//! read, so no iteration waits for the host. `x` is kept in double-float and the recursive
//! residual is recomputed from it every [`CG_RESTART`] iterations.
//!
//! The vectors live in the solver's workspace after the multigrid levels ([`cg_layout`]):
//! `r` is level 0's `b` and `z = M r` level 0's `p`, so the V-cycle preconditions in place.

use crate::grid::FieldId::{Divergence, Multigrid, Pressure, PressureLo, UFaces, VFaces};
use crate::grid::kernels::{CG_APPLY, CG_DIRECTION, CG_DOT, CG_INIT, CG_UPDATE, MG_STORE};
use crate::grid::pressure::multigrid::{self, STORE_PAIR};

pub use super::layout::{CgLayout, MAX_PARTIALS, cg_layout};
use crate::grid::builder::Builder;
use crate::grid::uniforms::{CgParams, MgParams};

/// MGPCG restarts from its double-float iterate every this many iterations: `x` is stored
/// into the pressure and the residual recomputed from it. The recursive residual drifts from the
/// true one by the f32 rounding of its updates; past the point where CG has converged to that
/// drift, further iterations without a restart made the true residual grow again.
pub const CG_RESTART: u32 = 8;

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
            b.run_over(CG_INIT, &[Pressure, PressureLo, Divergence, Multigrid, UFaces, VFaces], Some(&init), whole);
        }
        let first = k % CG_RESTART == 0;
        let slot = k % 2;
        multigrid::push_vcycle(b, &levels, omega, true, true);
        dot(b, top.b, top.p, slot);
        b.run_over(CG_DIRECTION, &[Multigrid], Some(&CgParams { slot, flag: u32::from(first), ..base }), whole);
        b.run_over(CG_APPLY, &[Multigrid, UFaces, VFaces], Some(&base), whole);
        dot(b, l.d, l.q, 2);
        b.run_over(CG_UPDATE, &[Multigrid], Some(&CgParams { slot, ..base }), whole);
    }
    b.run_over(MG_STORE, &[Multigrid, Pressure, PressureLo], Some(&store), whole);
}
