//! `cg_init`: the start of MGPCG: `x` = the previous double-float pressure (or zero) and the
//! residual `r = b − A x` with `b = −h² ∇·u / dt`, `A` applied in difference form, into the
//! packed multigrid buffer.

use fluid_core::uniforms::CgParams;

use super::common::{G, df_differences};

/// `(x_hi, x_lo, r)` at cell `(i, j)`.
#[inline(always)]
pub fn cg_init_cell(
    g: &G,
    params: &CgParams,
    scale: f32,
    hi: &[f32],
    lo: &[f32],
    div: &[f32],
    i: usize,
    j: usize,
) -> (f32, f32, f32) {
    let c = g.c(i, j);
    let b = scale * div[c];
    if params.flag != 0 {
        return (0.0, 0.0, b);
    }
    (hi[c], lo[c], b + df_differences(g, hi, lo, i, j))
}

/// Fill `x` (both parts) and `r`.
pub fn run(g: &G, params: &CgParams, dt: f32, pressure: &[f32], pressure_lo: &[f32], div: &[f32], mg: &mut [f32]) {
    let scale = -g.h * g.h / dt;
    let n = g.nx * g.ny;
    for j in 0..g.ny {
        for i in 0..g.nx {
            let (x, xl, r) = cg_init_cell(g, params, scale, pressure, pressure_lo, div, i, j);
            let c = g.c(i, j);
            mg[params.x as usize + c] = x;
            mg[params.x as usize + n + c] = xl;
            mg[params.r as usize + c] = r;
        }
    }
}
