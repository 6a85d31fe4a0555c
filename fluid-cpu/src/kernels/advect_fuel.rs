//! `advect_fuel`: one invocation traces one cell centre back along the velocity and samples
//! the fuel there, with its dissipation; near an inflow side the ghost past it holds no fuel,
//! so a point traced back within half a cell of the side or beyond blends toward zero.

use fluid_core::grid::uniforms::AdvectParams;

use super::advect_cells::inflow_weight;
use super::common::{G, backtrace, bilerp, for_each_row, stencil};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// The fuel at cell `(i, j)` after the step's advection.
#[inline(always)]
pub fn advect_fuel_cell(
    g: &G,
    p: &AdvectParams,
    dt: f32,
    (u, v): (&[f32], &[f32]),
    fuel: &[f32],
    i: usize,
    j: usize,
) -> f32 {
    let (bx, by) = backtrace(g, u, v, p.order, dt * g.inv_h, i as f32 + 0.5, j as f32 + 0.5);
    let (sx, sy) = (stencil(bx - 0.5, g.nx, false, g.px), stencil(by - 0.5, g.ny, false, g.py));
    let f = bilerp(fuel, g.nx, 1, 0, sx, sy) * (-p.fuel_dissipation * dt).exp();
    if !g.has_inflow() {
        return f;
    }
    let (w, _) = inflow_weight(g, bx, by);
    if w > 0.0 { f - w * f } else { f }
}

/// Advect `fuel` into `out`.
pub fn run(g: &G, p: &AdvectParams, dt: f32, (u, v): (&[f32], &[f32]), fuel: &[f32], out: &mut [f32]) {
    for_each_row(out, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = advect_fuel_cell(g, p, dt, (u, v), fuel, i, j);
        }
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: AdvectParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, (s.r("u"), s.r("v")), s.r("fuel"), s.w("fuel_out"));
}
