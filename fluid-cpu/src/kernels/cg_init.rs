//! `cg_init`: the start of MGPCG: `x` = the previous pressure (or zero) and the residual
//! `r = b − A x` with `b = −h² ∇·u / dt`, into the packed multigrid buffer.

use fluid_core::uniforms::CgParams;

use super::common::G;
use super::jacobi::neighbours;

/// `(x, r)` at cell `(i, j)`.
#[inline(always)]
pub fn cg_init_cell(g: &G, params: &CgParams, scale: f32, p: &[f32], div: &[f32], i: usize, j: usize) -> (f32, f32) {
    let c = g.c(i, j);
    let b = scale * div[c];
    if params.flag != 0 {
        return (0.0, b);
    }
    let (sum, n) = neighbours(g, p, i, j);
    (p[c], b - (n * p[c] - sum))
}

/// Fill `x` and `r`.
pub fn run(g: &G, params: &CgParams, dt: f32, pressure: &[f32], div: &[f32], mg: &mut [f32]) {
    let scale = -g.h * g.h / dt;
    let n = g.nx * g.ny;
    for j in 0..g.ny {
        for i in 0..g.nx {
            let (x, r) = cg_init_cell(g, params, scale, pressure, div, i, j);
            let c = g.c(i, j);
            debug_assert!(c < n);
            mg[params.x as usize + c] = x;
            mg[params.r as usize + c] = r;
        }
    }
}
