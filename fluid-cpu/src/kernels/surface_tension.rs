//! `surface_tension`: on one u-face and one v-face the velocity gains `dt·σ·κ·∂ρ/∂n`, with the
//! curvature κ and the density's gradient across the face from its two cells. Past a wall the
//! edge cell repeats, so faces on the box's edge get nothing; periodic axes wrap.

use swirly_core::grid::uniforms::TensionParams;

use super::common::{G, clamp_or_wrap, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The cells either side of face `k` along an axis of `n` cells (faces `0..=n`).
#[inline(always)]
pub fn sides_of(k: usize, n: usize, periodic: bool) -> (usize, usize) {
    (clamp_or_wrap(k, -1, n, periodic), clamp_or_wrap(k, 0, n, periodic))
}

/// The force's increment between cells `a` and `b` (flat indices), `k = dt·σ/h²`.
#[inline(always)]
fn increment(k: f32, density: &[f32], curvature: &[f32], a: usize, b: usize) -> f32 {
    let kappa = 0.5 * (curvature[a] + curvature[b]);
    k * kappa * (density[b] - density[a])
}

/// Add the force to `u` and `v`.
pub fn run(g: &G, p: &TensionParams, dt: f32, (density, curvature): (&[f32], &[f32]), u: &mut [f32], v: &mut [f32]) {
    let k = dt * p.strength * g.inv_h * g.inv_h;
    for_each_row(
        u,
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                let (a, b) = sides_of(i, g.nx, g.px);
                *x += increment(k, density, curvature, g.c(a, j), g.c(b, j));
            }
        },
    );
    for_each_row(
        v,
        g.nx,
        #[inline(always)]
        |j, row| {
            let (a, b) = sides_of(j, g.ny, g.py);
            for (i, x) in row.iter_mut().enumerate() {
                *x += increment(k, density, curvature, g.c(i, a), g.c(i, b));
            }
        },
    );
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: TensionParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, (s.r("density"), s.r("kappa_h")), s.w("u"), s.w("v"));
}
