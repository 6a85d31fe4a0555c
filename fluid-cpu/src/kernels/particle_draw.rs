//! `particle_draw`: the liquid's smoothed density at a picture cell's centre,
//! `scale · Σ (1 − r / R)²` over the particles within the drawing radius R, found through the
//! sort (`order`) without moving them.

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::DrawParams;

use super::common::G;
use super::common::particles::{cell_of, neighbour_runs, pairs, words};
use crate::dispatch::{Ctx, Slots};

/// The value at picture cell `(i, j)`.
#[inline(always)]
pub fn draw_cell(
    g: &G,
    p: &DrawParams,
    position: &[[f32; 2]],
    order: &[u32],
    starts: &[u32],
    i: usize,
    j: usize,
) -> f32 {
    let x = [(i as f32 + 0.5) * g.h, (j as f32 + 0.5) * g.h];
    let cell = cell_of(x, p.inv_cell, p.cells_x, p.cells_y);
    let mut sum = 0.0f32;
    for (a, b) in neighbour_runs(cell, p.cells_x, p.cells_y, starts) {
        for t in a..b {
            let y = position[order[t as usize] as usize];
            let r = [y[0] - x[0], y[1] - x[1]];
            let d2 = r[0] * r[0] + r[1] * r[1];
            if d2 < p.radius_sq {
                let w = 1.0 - d2.sqrt() * p.inv_radius;
                sum += w * w;
            }
        }
    }
    sum * p.scale
}

/// Every picture cell.
pub fn run(g: &G, p: &DrawParams, position: &[[f32; 2]], order: &[u32], starts: &[u32], out: &mut [f32]) {
    out.par_chunks_mut(g.nx).enumerate().for_each(|(j, row)| {
        for (i, o) in row.iter_mut().enumerate() {
            *o = draw_cell(g, p, position, order, starts, i, j);
        }
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DrawParams = d.params().unwrap_or_default();
    let (position, order, starts) = (pairs(s.r("position")), words(s.r("order")), words(s.r("starts")));
    run(c.g, &p, position, order, starts, s.w("density"));
}
