//! `sharp_velocity`: the sharper value of one u-face and one v-face, written over the
//! semi-Lagrangian one. MacCormack adds half the round trip's error to it; BFECC samples the
//! velocity corrected by that half error instead; either is clamped to the range of the
//! velocity at the backtrace's stencil. The cubic scheme samples the velocity there by
//! monotone cubics. Faces on walls, and those traced back past an open side (the backflow
//! blend of `advect_velocity`), keep their value.

use swirly_core::grid::uniforms::SharpParams;

use super::common::for_each_row;
use super::common::sharp::{Lattice, for_each_traced, sharpen};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let g = c.g;
    let uv = (s.r("u"), s.r("v"));
    let (u_back, v_back) = (s.r("u_back"), s.r("v_back"));
    let (trace, decay) = ((p.order, c.dt * g.inv_h), (-p.rate * c.dt).exp());
    for_each_row(
        s.w("u_out"),
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            let x_of = |i: usize| g.ui(i) as f32;
            for_each_traced(g, uv, trace, g.nx + 1, x_of, j as f32 + 0.5, |i, x, y| {
                if !g.u_on_wall(i) && g.backflow_weight(x, y) == 0.0 {
                    let w = Lattice::U.window(g, x, y);
                    row[i] = sharpen(g, &p, Lattice::U, (uv.0, u_back), (1, 0), w, g.u(i, j), row[i], (0.0, decay));
                }
            });
        },
    );
    for_each_row(
        s.w("v_out"),
        g.nx,
        #[inline(always)]
        |j, row| {
            if g.v_on_wall(j) {
                return;
            }
            let x_of = |i: usize| i as f32 + 0.5;
            for_each_traced(g, uv, trace, g.nx, x_of, g.vj(j) as f32, |i, x, y| {
                if g.backflow_weight(x, y) == 0.0 {
                    let w = Lattice::V.window(g, x, y);
                    row[i] = sharpen(g, &p, Lattice::V, (uv.1, v_back), (1, 0), w, g.v(i, j), row[i], (0.0, decay));
                }
            });
        },
    );
}
