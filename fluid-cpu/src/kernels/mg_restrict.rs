//! `mg_restrict`: the residual `r = b − A p` of a level, summed over the (up to four) children
//! of each coarse cell into the coarser level's `b`; the coarser `p` set to zero. Children are
//! summed in the order (0,0), (1,0), (0,1), (1,1).

use fluid_core::uniforms::MgParams;

use super::common::{Around, G, for_each_row, level_neighbours, split_around};

/// Residual of fine cell `(i, j)`.
#[inline(always)]
pub fn residual_at(g: &G, params: &MgParams, read: &Around<'_>, i: usize, j: usize) -> f32 {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let c = j * nx + i;
    let (sum, n) = level_neighbours(|k| read.get(k), nx, ny, g.px, g.py, params.p as usize, i, j);
    read.get(params.b as usize + c) - (n * read.get(params.p as usize + c) - sum)
}

/// Coarse `b` at coarse cell `(ci, cj)`.
#[inline(always)]
pub fn mg_restrict_cell(g: &G, params: &MgParams, read: &Around<'_>, ci: usize, cj: usize) -> f32 {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let mut r = 0.0f32;
    for (a, b) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let (i, j) = (2 * ci + a, 2 * cj + b);
        if i < nx && j < ny {
            r += residual_at(g, params, read, i, j);
        }
    }
    r
}

/// Restrict into the coarser level (its `b` and `p` are adjacent in the packed buffer).
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let (out, read) = split_around(mg, params.cb as usize, 2 * cnx * cny);
    let (b, p) = out.split_at_mut(cnx * cny);
    for_each_row(b, cnx, |cj, row| {
        for (ci, x) in row.iter_mut().enumerate() {
            *x = mg_restrict_cell(g, params, &read, ci, cj);
        }
    });
    p.fill(0.0);
}
