//! `back_velocity`: the backward half of a round trip for one u-face and one v-face: trace the
//! face forward along the velocity (the backtrace with −dt) and sample the forward-advected
//! velocity there, undoing its dissipation.

use fluid_core::grid::uniforms::SharpParams;

use super::common::sharp::Lattice;
use super::common::{G, backtrace, bilerp, for_each_row};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// The round trip's u at face `(i, j)`.
#[inline(always)]
pub fn back_u_face(g: &G, p: &SharpParams, dt: f32, (u, v): (&[f32], &[f32]), hat: &[f32], i: usize, j: usize) -> f32 {
    let (bx, by) = backtrace(g, u, v, p.order, -dt * g.inv_h, g.ui(i) as f32, j as f32 + 0.5);
    let (sx, sy) = Lattice::U.window(g, bx, by);
    bilerp(hat, g.nx + 1, 1, 0, sx, sy) * (p.rate * dt).exp()
}

/// The round trip's v at face `(i, j)`.
#[inline(always)]
pub fn back_v_face(g: &G, p: &SharpParams, dt: f32, (u, v): (&[f32], &[f32]), hat: &[f32], i: usize, j: usize) -> f32 {
    let (bx, by) = backtrace(g, u, v, p.order, -dt * g.inv_h, i as f32 + 0.5, g.vj(j) as f32);
    let (sx, sy) = Lattice::V.window(g, bx, by);
    bilerp(hat, g.nx, 1, 0, sx, sy) * (p.rate * dt).exp()
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, mut s: Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let (g, dt) = (c.g, c.dt);
    let uv = (s.r(0), s.r(1));
    let (u_hat, v_hat) = (s.r(2), s.r(3));
    for_each_row(
        s.w(4),
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = back_u_face(g, &p, dt, uv, u_hat, i, j);
            }
        },
    );
    for_each_row(
        s.w(5),
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = back_v_face(g, &p, dt, uv, v_hat, i, j);
            }
        },
    );
}
