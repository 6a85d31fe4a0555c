//! `curvature`: the curvature of the density's level sets at one cell, in cell units (κ·h):
//! κ = −∇·n with the unit normal n = ∇ρ/|∇ρ| taken at the cell's four corners, each from the
//! 2 × 2 cells round it. Past a wall the edge cell repeats; periodic axes wrap.

use super::common::{G, clamp_or_wrap, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The unit normal at the corner shared by cells `(a0, b0)`, `(a1, b0)`, `(a0, b1)`,
/// `(a1, b1)`; zero where the density is flat.
#[inline(always)]
fn corner_normal(g: &G, d: &[f32], (a0, a1): (usize, usize), (b0, b1): (usize, usize)) -> [f32; 2] {
    let (d00, d10, d01, d11) = (d[g.c(a0, b0)], d[g.c(a1, b0)], d[g.c(a0, b1)], d[g.c(a1, b1)]);
    let gr = [(d10 + d11) - (d00 + d01), (d01 + d11) - (d00 + d10)];
    let l = (gr[0] * gr[0] + gr[1] * gr[1]).sqrt();
    if l > 1e-12 { [gr[0] / l, gr[1] / l] } else { [0.0, 0.0] }
}

/// κ·h at cell `(i, j)`.
#[inline(always)]
pub fn curvature_cell(g: &G, density: &[f32], i: usize, j: usize) -> f32 {
    let (w, e) = (clamp_or_wrap(i, -1, g.nx, g.px), clamp_or_wrap(i, 1, g.nx, g.px));
    let (s, n) = (clamp_or_wrap(j, -1, g.ny, g.py), clamp_or_wrap(j, 1, g.ny, g.py));
    let ne = corner_normal(g, density, (i, e), (j, n));
    let nw = corner_normal(g, density, (w, i), (j, n));
    let se = corner_normal(g, density, (i, e), (s, j));
    let sw = corner_normal(g, density, (w, i), (s, j));
    -0.5 * ((ne[0] + se[0] - nw[0] - sw[0]) + (ne[1] + nw[1] - se[1] - sw[1]))
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, _d: &Dispatch, s: &mut Slots<'_>) {
    let g = c.g;
    let density = s.r("density");
    for_each_row(
        s.w("kappa_h"),
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = curvature_cell(g, density, i, j);
            }
        },
    );
}
