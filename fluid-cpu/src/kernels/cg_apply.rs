//! `cg_apply`: `q = A d` on level 0, the unscaled Poisson operator `n d − Σ d_nbr`.

use fluid_core::uniforms::CgParams;

use super::common::{G, for_each_row, level_neighbours, split_around};

/// Fill `q`.
pub fn run(g: &G, params: &CgParams, mg: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (q, read) = split_around(mg, params.q as usize, nx * ny);
    for_each_row(q, nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            let (sum, n) = level_neighbours(|k| read.get(k), nx, ny, g.px, g.py, params.d as usize, i, j);
            *x = n * read.get(params.d as usize + j * nx + i) - sum;
        }
    });
}
