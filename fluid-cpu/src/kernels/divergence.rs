//! `divergence`: one invocation computes `∇·u = (u_right − u_left + v_top − v_bottom) / h` of
//! one cell.

use super::common::{G, for_each_row};

/// Divergence of cell `(i, j)`.
#[inline(always)]
pub fn divergence_cell(g: &G, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    (u[g.u(i + 1, j)] - u[g.u(i, j)] + v[g.v(i, j + 1)] - v[g.v(i, j)]) * g.inv_h
}

/// Fill `out` with the divergence.
pub fn run(g: &G, u: &[f32], v: &[f32], out: &mut [f32]) {
    for_each_row(
        out,
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, d) in row.iter_mut().enumerate() {
                *d = divergence_cell(g, u, v, i, j);
            }
        },
    );
}
