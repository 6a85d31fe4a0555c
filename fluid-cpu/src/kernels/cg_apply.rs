//! `cg_apply`: `q = A d` on level 0, the unscaled Poisson operator, in difference form:
//! `q = −Σ (d_nbr − d)` over the neighbours that are not walls (left, right, down, up). The
//! differences of a smooth `d` are exact or nearly, so `q` carries no rounding of `d`'s
//! magnitude; the form `n d − Σ d_nbr` would, and CG's recursive residual would drift from the
//! true one by that much (measured: MGPCG stalled near 3e-5 at 256²).

use fluid_core::uniforms::CgParams;

use super::common::{G, for_each_row, neighbour_sum, split_around};

/// Fill `q`.
pub fn run(g: &G, params: &CgParams, mg: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let d0 = params.d as usize;
    let (q, read) = split_around(mg, params.q as usize, nx * ny);
    for_each_row(
        q,
        nx,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                let dc = read.get(d0 + j * nx + i);
                *x = -neighbour_sum(nx, ny, (g.px, g.py), i, j, |k| read.get(d0 + k) - dc);
            }
        },
    );
}
