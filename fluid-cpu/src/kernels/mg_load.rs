//! `mg_load`: level 0 of the multigrid hierarchy from the simulation fields. In
//! [`LOAD_COPY`] mode `b = −h² ∇·u / dt` (the scaling of the Jacobi kernels) and `p` = the
//! previous pressure, or zero for a cold start; in [`LOAD_RESIDUAL`] mode `b` is the residual of
//! the double-float pressure `pressure + pressure_lo` and `p` is left alone (with a cold start
//! `b` is just the scaled divergence, and the pressure is set to zero).

#[cfg(doc)]
use fluid_core::multigrid::LOAD_COPY;
use fluid_core::multigrid::LOAD_RESIDUAL;
use fluid_core::uniforms::MgParams;
use rayon::prelude::*;

use super::common::{G, df_differences, for_each_row};

/// `b` at cell `(i, j)` in [`LOAD_RESIDUAL`] mode: `−h² ∇·u / dt − A (hi + lo)`.
#[inline(always)]
pub fn residual_b(g: &G, scale: f32, hi: &[f32], lo: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    scale * div[g.c(i, j)] + df_differences(g, hi, lo, i, j)
}

/// Fill level 0's `b` (and `p` in copy mode; they are adjacent in the packed buffer).
pub fn run(
    g: &G,
    params: &MgParams,
    dt: f32,
    pressure: &mut [f32],
    pressure_lo: &mut [f32],
    div: &[f32],
    mg: &mut [f32],
) {
    let n = (params.nx * params.ny) as usize;
    let scale = -g.h * g.h / dt;
    let (b, p) = mg[params.b as usize..params.b as usize + 2 * n].split_at_mut(n);
    let cold = params.zero_initial != 0;
    if params.colour == LOAD_RESIDUAL {
        let (hi, lo) = (&*pressure, &*pressure_lo);
        for_each_row(b, g.nx, |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = if cold { scale * div[g.c(i, j)] } else { residual_b(g, scale, hi, lo, div, i, j) };
            }
        });
        if cold {
            pressure.fill(0.0);
            pressure_lo.fill(0.0);
        }
        return;
    }
    b.par_iter_mut().zip(div).for_each(|(x, d)| *x = scale * d);
    if cold {
        p.fill(0.0);
    } else {
        p.copy_from_slice(pressure);
    }
}
