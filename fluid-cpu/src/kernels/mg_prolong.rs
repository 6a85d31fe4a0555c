//! `mg_prolong`: add the coarser level's correction to a level's `p`, interpolated bilinearly
//! between cell centres: a fine cell takes 9/16 of its parent, 3/16 of each of the two coarse
//! cells beside the parent on its side, 1/16 of the diagonal one (walls: the parent again;
//! periodic axes wrap).

use fluid_core::uniforms::MgParams;

use super::common::{Around, G, for_each_row, split_around};

/// The coarse neighbour beside parent `c` on the side of fine index `i`, on an axis of `n`
/// coarse cells.
#[inline(always)]
pub fn beside(i: usize, c: usize, n: usize, periodic: bool) -> usize {
    if i.is_multiple_of(2) {
        if c > 0 {
            c - 1
        } else if periodic {
            n - 1
        } else {
            c
        }
    } else if c + 1 < n {
        c + 1
    } else if periodic {
        0
    } else {
        c
    }
}

/// The correction at fine cell `(i, j)`.
#[inline(always)]
pub fn correction(g: &G, params: &MgParams, read: &Around<'_>, i: usize, j: usize) -> f32 {
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let (ci, cj) = (i / 2, j / 2);
    let (ci2, cj2) = (beside(i, ci, cnx, g.px), beside(j, cj, cny, g.py));
    let e = |x: usize, y: usize| read.get(params.cp as usize + y * cnx + x);
    0.75 * (0.75 * e(ci, cj) + 0.25 * e(ci2, cj)) + 0.25 * (0.75 * e(ci, cj2) + 0.25 * e(ci2, cj2))
}

/// `p += P e` over the level.
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (out, read) = split_around(mg, params.p as usize, nx * ny);
    for_each_row(out, nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x += correction(g, params, &read, i, j);
        }
    });
}
