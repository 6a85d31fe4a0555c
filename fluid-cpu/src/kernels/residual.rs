//! `residual`: one invocation computes the residual of the pressure equation at one cell, in
//! divergence units: `r = ∇·u* − dt ∇²p` — exactly the divergence the projected velocity keeps.
//! `‖r‖ / ‖∇·u*‖` is the relative residual `‖b − A p‖ / ‖b‖`.

use super::common::{G, for_each_row};
use super::jacobi::neighbours;

/// Residual at cell `(i, j)`; `k = dt / h²`.
#[inline(always)]
pub fn residual_cell(g: &G, k: f32, p: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    let c = g.c(i, j);
    let (sum, n) = neighbours(g, p, i, j);
    div[c] - k * (sum - n * p[c])
}

/// Fill `out` with the residual.
pub fn run(g: &G, dt: f32, p: &[f32], div: &[f32], out: &mut [f32]) {
    let k = dt * g.inv_h * g.inv_h;
    for_each_row(out, g.nx, |j, row| {
        for (i, r) in row.iter_mut().enumerate() {
            *r = residual_cell(g, k, p, div, i, j);
        }
    });
}
