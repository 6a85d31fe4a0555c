//! `residual`: one invocation computes the residual of the pressure equation at one cell, in
//! divergence units: `r = ∇·u* − dt ∇²p` — exactly the divergence the projected velocity keeps.
//! `‖r‖ / ‖∇·u*‖` is the relative residual `‖b − A p‖ / ‖b‖`. The pressure is the double-float
//! `pressure + pressure_lo`, differenced as in [`df_differences`], so a residual far below the
//! f32 rounding of the pressure itself can be measured.

use super::common::{G, df_differences, for_each_row};

/// Residual at cell `(i, j)`; `k = dt / h²`.
#[inline(always)]
pub fn residual_cell(g: &G, k: f32, hi: &[f32], lo: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    div[g.c(i, j)] - k * df_differences(g, hi, lo, i, j)
}

/// Fill `out` with the residual.
pub fn run(g: &G, dt: f32, hi: &[f32], lo: &[f32], div: &[f32], out: &mut [f32]) {
    let k = dt * g.inv_h * g.inv_h;
    for_each_row(
        out,
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, r) in row.iter_mut().enumerate() {
                *r = residual_cell(g, k, hi, lo, div, i, j);
            }
        },
    );
}
