//! `relax`: one iteration of the MAC seed's relaxation on the velocity. Each cell measures its
//! net inflow over its open (non-wall) faces, `d = (u_left − u_right + v_down − v_up) / n`, and
//! asks each open face to carry `d` more outwards; a face shared by two cells takes the average
//! of their two requests, scaled by ω: `u ← u + ω (d_left − d_right) / 2`. Wall faces keep their
//! (zero) velocity. That correction is the gradient of `P = ω h d / (2 dt)`, which the kernel
//! accumulates into `pressure` (reset on the first iteration), so the residual of the pressure
//! equation measures what is left; in pressure terms the iteration is weighted Jacobi with ω/2.

use fluid_core::uniforms::JacobiParams;

use super::common::{G, for_each_row};
use super::jacobi::neighbour_count;

/// `d` of cell `(i, j)`.
#[inline(always)]
pub fn inflow(g: &G, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    let n = neighbour_count(g, i, j);
    if n == 0.0 {
        return 0.0;
    }
    (u[g.u(i, j)] - u[g.u(i + 1, j)] + v[g.v(i, j)] - v[g.v(i, j + 1)]) / n
}

/// New u at face `(i, j)`.
#[inline(always)]
pub fn relax_u_face(g: &G, omega: f32, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    let old = u[g.u(i, j)];
    if g.u_on_wall(i) {
        return old;
    }
    let right = g.ui(i);
    let left = if right > 0 { right - 1 } else { g.nx - 1 };
    old + omega * (inflow(g, u, v, left, j) - inflow(g, u, v, right, j)) * 0.5
}

/// New v at face `(i, j)`.
#[inline(always)]
pub fn relax_v_face(g: &G, omega: f32, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    let old = v[g.v(i, j)];
    if g.v_on_wall(j) {
        return old;
    }
    let up = g.vj(j);
    let down = if up > 0 { up - 1 } else { g.ny - 1 };
    old + omega * (inflow(g, u, v, i, down) - inflow(g, u, v, i, up)) * 0.5
}

/// One iteration from `u`, `v` into `u_out`, `v_out`, accumulating `pressure`.
pub fn run(
    g: &G,
    params: &JacobiParams,
    dt: f32,
    u: &[f32],
    v: &[f32],
    pressure: &mut [f32],
    u_out: &mut [f32],
    v_out: &mut [f32],
) {
    let omega = params.omega;
    let k = omega * g.h / (2.0 * dt);
    let zero = params.zero_initial != 0;
    for_each_row(
        pressure,
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, p) in row.iter_mut().enumerate() {
                *p = if zero { 0.0 } else { *p } + k * inflow(g, u, v, i, j);
            }
        },
    );
    for_each_row(
        u_out,
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = relax_u_face(g, omega, u, v, i, j);
            }
        },
    );
    for_each_row(
        v_out,
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = relax_v_face(g, omega, u, v, i, j);
            }
        },
    );
}
