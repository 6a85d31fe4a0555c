//! `sharp_cells`: the sharper value of one cell's scalar and dye, written over the
//! semi-Lagrangian one. MacCormack adds half the round trip's error to it; BFECC samples the
//! field corrected by that half error instead; either is clamped to the range of the field at
//! the backtrace's stencil, channel by channel. The cubic scheme samples the field there by
//! monotone cubics. A cell whose point traced back reaches an inflow keeps its blended value.

use swirly_core::grid::uniforms::{SHARP_DYE, SHARP_SCALAR, SharpParams};

use super::advect_channels::inflow_weight;
use super::common::sharp::{Lattice, for_each_traced, sharpen};
use super::common::{G, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Whether a cell whose point traced back lies at `(x, y)` keeps its semi-Lagrangian value
/// (the point reaches an inflow).
#[inline(always)]
pub fn keeps(g: &G, x: f32, y: f32) -> bool {
    g.has_inflow() && inflow_weight(g, x, y).0 > 0.0
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let (g, dt) = (c.g, c.dt);
    let uv = (s.r("u"), s.r("v"));
    let trace = (p.order, dt * g.inv_h);
    let x_of = |i: usize| i as f32 + 0.5;
    if p.fields & SHARP_SCALAR != 0 {
        let (q, back) = (s.r("q"), s.r("q_back"));
        let dis = (p.ambient, (-p.rate * dt).exp());
        for_each_row(
            s.w("q_out"),
            g.nx,
            #[inline(always)]
            |j, row| {
                for_each_traced(g, uv, trace, g.nx, x_of, j as f32 + 0.5, |i, x, y| {
                    if !keeps(g, x, y) {
                        let w = Lattice::Cells.window(g, x, y);
                        row[i] = sharpen(g, &p, Lattice::Cells, (q, back), (1, 0), w, g.c(i, j), row[i], dis);
                    }
                });
            },
        );
    }
    if p.fields & SHARP_DYE != 0 {
        let (q, back) = (s.r("dye"), s.r("dye_back"));
        let dis = (0.0, (-p.dye_rate * dt).exp());
        for_each_row(
            s.w("dye_out"),
            4 * g.nx,
            #[inline(always)]
            |j, row| {
                for_each_traced(g, uv, trace, g.nx, x_of, j as f32 + 0.5, |i, x, y| {
                    if !keeps(g, x, y) {
                        let w = Lattice::Cells.window(g, x, y);
                        for ch in 0..4 {
                            row[4 * i + ch] = sharpen(
                                g,
                                &p,
                                Lattice::Cells,
                                (q, back),
                                (4, ch),
                                w,
                                4 * g.c(i, j),
                                row[4 * i + ch],
                                dis,
                            );
                        }
                    }
                });
            },
        );
    }
}
