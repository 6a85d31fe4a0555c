//! `subtract_gradient`: one invocation makes one u-face and one v-face divergence-free:
//! `u −= dt (p_right − p_left) / h`, with the pressure the double-float `pressure +
//! pressure_lo` (high and low parts differenced separately). Wall faces stay zero.

use super::common::{G, for_each_row};

/// `p[a] − p[b]` of the double-float pressure.
#[inline(always)]
fn diff(hi: &[f32], lo: &[f32], a: usize, b: usize) -> f32 {
    (hi[a] - hi[b]) + (lo[a] - lo[b])
}

/// New u at face `(i, j)`.
#[inline(always)]
pub fn project_u_face(g: &G, k: f32, hi: &[f32], lo: &[f32], u: f32, i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return 0.0;
    }
    let i = g.ui(i);
    let left = if i > 0 { i - 1 } else { g.nx - 1 };
    u - k * diff(hi, lo, g.c(i, j), g.c(left, j))
}

/// New v at face `(i, j)`.
#[inline(always)]
pub fn project_v_face(g: &G, k: f32, hi: &[f32], lo: &[f32], v: f32, i: usize, j: usize) -> f32 {
    if g.v_on_wall(j) {
        return 0.0;
    }
    let j = g.vj(j);
    let down = if j > 0 { j - 1 } else { g.ny - 1 };
    v - k * diff(hi, lo, g.c(i, j), g.c(i, down))
}

/// Subtract `dt ∇p` from `u` and `v` in place.
pub fn run(g: &G, dt: f32, u: &mut [f32], v: &mut [f32], hi: &[f32], lo: &[f32]) {
    let k = dt * g.inv_h;
    for_each_row(
        u,
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = project_u_face(g, k, hi, lo, *x, i, j);
            }
        },
    );
    for_each_row(
        v,
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = project_v_face(g, k, hi, lo, *x, i, j);
            }
        },
    );
}
