//! `back_velocity`: the backward half of a round trip for one u-face and one v-face: trace the
//! face forward along the velocity (the backtrace with −dt) and sample the forward-advected
//! velocity there, undoing its dissipation.

use swirly_core::grid::uniforms::SharpParams;

use super::common::sharp::{Lattice, for_each_traced};
use super::common::{G, bilerp, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The round trip's value on `lattice` (u or v) of the advected field `hat` at the point
/// `(x, y)` a face reaches.
#[inline(always)]
pub fn back_face(g: &G, lattice: Lattice, hat: &[f32], undo: f32, x: f32, y: f32) -> f32 {
    let (sx, sy) = lattice.window(g, x, y);
    bilerp(hat, lattice.cols(g), 1, 0, sx, sy) * undo
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let g = c.g;
    let uv = (s.r("u"), s.r("v"));
    let (u_hat, v_hat) = (s.r("u_hat"), s.r("v_hat"));
    let (trace, undo) = ((p.order, -c.dt * g.inv_h), (p.rate * c.dt).exp());
    for_each_row(
        s.w("u_back"),
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            let x_of = |i: usize| g.ui(i) as f32;
            for_each_traced(g, uv, trace, g.nx + 1, x_of, j as f32 + 0.5, |i, x, y| {
                row[i] = back_face(g, Lattice::U, u_hat, undo, x, y);
            });
        },
    );
    for_each_row(
        s.w("v_back"),
        g.nx,
        #[inline(always)]
        |j, row| {
            let x_of = |i: usize| i as f32 + 0.5;
            for_each_traced(g, uv, trace, g.nx, x_of, g.vj(j) as f32, |i, x, y| {
                row[i] = back_face(g, Lattice::V, v_hat, undo, x, y);
            });
        },
    );
}
