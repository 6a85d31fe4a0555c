//! `back_cells`: the backward half of a round trip for one cell: trace its centre forward
//! along the velocity (the backtrace with −dt) and sample the forward-advected scalar and dye
//! there, undoing their dissipation.

use swirly_core::grid::uniforms::{SHARP_DYE, SHARP_SCALAR, SharpParams};

use super::common::sharp::{Lattice, dissipate, for_each_traced};
use super::common::{bilerp, bilerp4, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let (g, dt) = (c.g, c.dt);
    let uv = (s.r("u"), s.r("v"));
    let trace = (p.order, -dt * g.inv_h);
    let x_of = |i: usize| i as f32 + 0.5;
    if p.fields & SHARP_SCALAR != 0 {
        let (hat, undo) = (s.r("hat"), (p.rate * dt).exp());
        for_each_row(
            s.w("q_back"),
            g.nx,
            #[inline(always)]
            |j, row| {
                for_each_traced(g, uv, trace, g.nx, x_of, j as f32 + 0.5, |i, x, y| {
                    let (sx, sy) = Lattice::Cells.window(g, x, y);
                    row[i] = dissipate(bilerp(hat, g.nx, 1, 0, sx, sy), p.ambient, undo);
                });
            },
        );
    }
    if p.fields & SHARP_DYE != 0 {
        let (hat, undo) = (s.r("dye_hat"), (p.dye_rate * dt).exp());
        for_each_row(
            s.w("dye_back"),
            4 * g.nx,
            #[inline(always)]
            |j, row| {
                for_each_traced(g, uv, trace, g.nx, x_of, j as f32 + 0.5, |i, x, y| {
                    let (sx, sy) = Lattice::Cells.window(g, x, y);
                    let rgba = bilerp4(hat, g.nx, sx, sy);
                    for ch in 0..4 {
                        row[4 * i + ch] = rgba[ch] * undo;
                    }
                });
            },
        );
    }
}
