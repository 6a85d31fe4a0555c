//! `mg_smooth`: one colour pass of red-black Gauss–Seidel (over-relaxed by ω) on one multigrid
//! level, from the iterate at `p` into `tmp` (the cells of the other colour are copied), as
//! [`super::sor`] does on the grid.

use fluid_core::uniforms::MgParams;

use super::common::{Around, G, for_each_row, level_neighbours, split_around};

/// The pass at cell `(i, j)` of the level.
#[inline(always)]
pub fn mg_smooth_cell(g: &G, params: &MgParams, read: &Around<'_>, i: usize, j: usize) -> f32 {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let c = j * nx + i;
    let zero = params.zero_initial != 0;
    let old = if zero { 0.0 } else { read.get(params.p as usize + c) };
    if ((i + j) & 1) as u32 != params.colour {
        return old;
    }
    let (sum, n) =
        level_neighbours(|k| if zero { 0.0 } else { read.get(k) }, nx, ny, g.px, g.py, params.p as usize, i, j);
    if n == 0.0 {
        return old;
    }
    let pj = (sum + read.get(params.b as usize + c)) / n;
    old + params.omega * (pj - old)
}

/// One pass over the level.
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (out, read) = split_around(mg, params.tmp as usize, nx * ny);
    for_each_row(out, nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = mg_smooth_cell(g, params, &read, i, j);
        }
    });
}
