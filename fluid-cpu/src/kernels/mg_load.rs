//! `mg_load`: level 0 of the multigrid hierarchy from the simulation fields:
//! `b = −h² ∇·u / dt` (the scaling of the Jacobi kernels) and `p` = the previous pressure, or
//! zero for a cold start.

use fluid_core::uniforms::MgParams;
use rayon::prelude::*;

use super::common::G;

/// Fill level 0's `b` and `p` (adjacent in the packed buffer).
pub fn run(g: &G, params: &MgParams, dt: f32, pressure: &[f32], div: &[f32], mg: &mut [f32]) {
    let n = (params.nx * params.ny) as usize;
    let scale = -g.h * g.h / dt;
    let (b, p) = mg[params.b as usize..params.b as usize + 2 * n].split_at_mut(n);
    b.par_iter_mut().zip(div).for_each(|(x, d)| *x = scale * d);
    if params.zero_initial != 0 {
        p.fill(0.0);
    } else {
        p.copy_from_slice(pressure);
    }
}
