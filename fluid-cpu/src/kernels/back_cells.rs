//! `back_cells`: the backward half of a round trip for one cell: trace its centre forward
//! along the velocity (the backtrace with −dt) and sample the forward-advected scalar and dye
//! there, undoing their dissipation.

use fluid_core::grid::uniforms::{SHARP_DYE, SHARP_SCALAR, SharpParams};

use super::common::sharp::{Axis, Lattice, dissipate};
use super::common::{G, backtrace, bilerp, bilerp4, for_each_row};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// The stencil of the point cell `(i, j)`'s centre reaches in `dt`.
#[inline(always)]
pub fn forward_window(g: &G, p: &SharpParams, dt: f32, (u, v): (&[f32], &[f32]), i: usize, j: usize) -> (Axis, Axis) {
    let (bx, by) = backtrace(g, u, v, p.order, -dt * g.inv_h, i as f32 + 0.5, j as f32 + 0.5);
    Lattice::Cells.window(g, bx, by)
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, mut s: Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let (g, dt) = (c.g, c.dt);
    let uv = (s.r(0), s.r(1));
    if p.fields & SHARP_SCALAR != 0 {
        let (hat, undo) = (s.r(2), (p.rate * dt).exp());
        for_each_row(
            s.w(3),
            g.nx,
            #[inline(always)]
            |j, row| {
                for (i, x) in row.iter_mut().enumerate() {
                    let (sx, sy) = forward_window(g, &p, dt, uv, i, j);
                    *x = dissipate(bilerp(hat, g.nx, 1, 0, sx, sy), p.ambient, undo);
                }
            },
        );
    }
    if p.fields & SHARP_DYE != 0 {
        let (hat, undo) = (s.r(4), (p.dye_rate * dt).exp());
        for_each_row(
            s.w(5),
            4 * g.nx,
            #[inline(always)]
            |j, row| {
                for (i, x) in row.chunks_exact_mut(4).enumerate() {
                    let (sx, sy) = forward_window(g, &p, dt, uv, i, j);
                    let rgba = bilerp4(hat, g.nx, sx, sy);
                    for ch in 0..4 {
                        x[ch] = rgba[ch] * undo;
                    }
                }
            },
        );
    }
}
