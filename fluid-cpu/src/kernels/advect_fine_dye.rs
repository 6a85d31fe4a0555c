//! `advect_fine_dye`: the dye on its finer grid (`factor` cells per cell along each axis).
//! One invocation traces one fine cell's centre back along the velocity (in the velocity grid's
//! cell units, as `advect_cells` does) and samples the fine dye there, bilinear on the fine
//! lattice, with the dye's dissipation; near an inflow side it blends toward what the side
//! carries, as `advect_cells` does.

use fluid_core::grid::uniforms::DyeParams;

use super::advect_cells::{in_band, inflow_weight};
use super::common::{G, backtrace, bilerp4, for_each_row, stencil};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// Where a cell of a field `f` times finer than the velocity's came from: fine cell `(i, j)`'s
/// centre traced back along `(u, v)` (`s` = dt / h) in the velocity grid's cell units, and the
/// bilinear stencil there on the fine lattice (also `advect_fine_density`'s).
#[inline(always)]
pub fn fine_trace(g: &G, p: &DyeParams, s: f32, (u, v): (&[f32], &[f32]), i: usize, j: usize) -> FineTrace {
    let f = p.factor.max(1) as usize;
    let scale = f as f32;
    let (x, y) = ((i as f32 + 0.5) / scale, (j as f32 + 0.5) / scale);
    let (bx, by) = backtrace(g, u, v, p.order, s, x, y);
    let sx = stencil(bx * scale - 0.5, g.nx * f, false, g.px);
    let sy = stencil(by * scale - 0.5, g.ny * f, false, g.py);
    FineTrace { at: (bx, by), sx, sy }
}

/// [`fine_trace`]'s answer.
pub struct FineTrace {
    /// The point traced back, in the velocity grid's cell units.
    pub at: (f32, f32),
    /// The stencil along x on the fine lattice.
    pub sx: (usize, usize, f32),
    /// The stencil along y.
    pub sy: (usize, usize, f32),
}

/// The fine dye advected by `(u, v)` over `dt` into `out`.
pub fn run(g: &G, p: &DyeParams, dt: f32, (u, v): (&[f32], &[f32]), dye: &[f32], out: &mut [f32]) {
    let fx = g.nx * p.factor.max(1) as usize;
    let s = dt * g.inv_h;
    let decay = (-p.dissipation * dt).exp();
    let inflow = g.has_inflow();
    for_each_row(out, 4 * fx, |j, row| {
        for (i, px) in row.chunks_exact_mut(4).enumerate() {
            let FineTrace { at: (bx, by), sx, sy } = fine_trace(g, p, s, (u, v), i, j);
            let c = bilerp4(dye, fx, sx, sy).map(|c| c * decay);
            let (w, k) = if inflow { inflow_weight(g, bx, by) } else { (0.0, 0) };
            if w > 0.0 {
                let band = in_band(g, k, bx, by);
                for ch in 0..4 {
                    px[ch] = c[ch] + w * (band * g.side_dye[k][ch] * decay - c[ch]);
                }
            } else {
                px.copy_from_slice(&c);
            }
        }
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DyeParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, (s.r("u"), s.r("v")), s.r("dye"), s.w("dye_out"));
}
