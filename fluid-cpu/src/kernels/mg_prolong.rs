//! `mg_prolong`: add the coarser level's correction to a level's `p`, interpolated bilinearly
//! between cell centres: a fine cell takes 9/16 of its parent, 3/16 of each of the two coarse
//! cells beside the parent on its side, 1/16 of the diagonal one (walls: the parent again;
//! periodic axes wrap).

use swirly_core::grid::uniforms::MgParams;

use super::common::{Around, G, for_each_row, split_around};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

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

/// The correction at fine cell `(i, j)`, reading the coarse `p` through `coarse(k)` (its
/// `k`-th value).
#[inline(always)]
fn correction_with(g: &G, params: &MgParams, coarse: impl Fn(usize) -> f32, i: usize, j: usize) -> f32 {
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let (ci, cj) = (i / 2, j / 2);
    let (ci2, cj2) = (beside(i, ci, cnx, g.px), beside(j, cj, cny, g.py));
    let e = |x: usize, y: usize| coarse(y * cnx + x);
    0.75 * (0.75 * e(ci, cj) + 0.25 * e(ci2, cj)) + 0.25 * (0.75 * e(ci, cj2) + 0.25 * e(ci2, cj2))
}

/// The correction at fine cell `(i, j)`.
#[inline(always)]
pub fn correction(g: &G, params: &MgParams, read: &Around<'_>, i: usize, j: usize) -> f32 {
    correction_with(g, params, |k| read.get(params.cp as usize + k), i, j)
}

/// `p += P e` over the level: [`add`] with the coarse `p` as a slice (it lies outside the
/// written range), or cell by cell through [`Around::get`] when it overlaps that range.
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (out, read) = split_around(mg, params.p as usize, nx * ny);
    match read.slice(params.cp as usize, (params.cnx * params.cny) as usize) {
        Some(cp) => add(g, params, cp, out),
        None => for_each_row(
            out,
            nx,
            #[inline(always)]
            |j, row| {
                for (i, x) in row.iter_mut().enumerate() {
                    *x += correction(g, params, &read, i, j);
                }
            },
        ),
    }
}

/// `out += P e` for a level's iterate `out`, with the coarser level's `p` as the slice `cp`
/// (`params` gives both levels' sizes; its offsets are not used). Inner columns `1..nx − 1` go
/// in pairs: fine columns `2m + 1` and `2m + 2` share the coarse columns `m` and `m + 1`
/// (parent and the one beside, in turn), so a row needs no division or wall test there;
/// [`correction`] is the reference (tested bit for bit).
pub fn add(g: &G, params: &MgParams, cp: &[f32], out: &mut [f32]) {
    for_each_row(
        out,
        params.nx as usize,
        #[inline(always)]
        |j, row| add_row(g, params, cp, j, row),
    );
}

/// [`add`] along fine row `j`.
#[inline(always)]
pub fn add_row(g: &G, params: &MgParams, cp: &[f32], j: usize, row: &mut [f32]) {
    let nx = params.nx as usize;
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let slow = |i: usize| correction_with(g, params, |k| cp[k], i, j);
    let pairs = nx.saturating_sub(2) / 2;
    if pairs == 0 {
        for (i, x) in row.iter_mut().enumerate() {
            *x += slow(i);
        }
        return;
    }
    let cj = j / 2;
    let (a, b) = (&cp[cj * cnx..][..cnx], &cp[beside(j, cj, cny, g.py) * cnx..][..cnx]);
    row[0] += slow(0);
    for (m, x) in row[1..1 + 2 * pairs].chunks_exact_mut(2).enumerate() {
        // Fine 2m + 1: parent m, beside m + 1; fine 2m + 2: parent m + 1, beside m.
        x[0] += 0.75 * (0.75 * a[m] + 0.25 * a[m + 1]) + 0.25 * (0.75 * b[m] + 0.25 * b[m + 1]);
        x[1] += 0.75 * (0.75 * a[m + 1] + 0.25 * a[m]) + 0.25 * (0.75 * b[m + 1] + 0.25 * b[m]);
    }
    for (i, x) in row.iter_mut().enumerate().skip(1 + 2 * pairs) {
        *x += slow(i);
    }
}

/// The table's entry: a dispatch of `mg_prolong` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    run(c.g, &p, s.w("mg"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, Grid};

    #[test]
    fn slices_equal_the_cell_function() {
        for (nx, ny, bd) in [
            (13u32, 9u32, Boundary::Wall),
            (12, 11, Boundary::Periodic),
            (40, 31, Boundary::Wall),
            (3, 4, Boundary::Wall),
            (2, 5, Boundary::Periodic),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bd, bd).expect("grid");
            let g = G::new(&grid.uniform());
            let (cnx, cny) = (nx.div_ceil(2), ny.div_ceil(2));
            let (f, c) = ((nx * ny) as usize, (cnx * cny) as usize);
            let mut rng = swirly_core::scene::SplitMix64(6);
            let data: Vec<f32> = (0..f + c).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
            let params = MgParams { nx, ny, p: 0, cnx, cny, cp: f as u32, ..MgParams::default() };
            let mut mg = data.clone();
            run(&g, &params, &mut mg);
            let mut copy = data.clone();
            let (_, read) = split_around(&mut copy, 0, f);
            for j in 0..ny as usize {
                for i in 0..nx as usize {
                    let want = data[j * nx as usize + i] + correction(&g, &params, &read, i, j);
                    assert_eq!(mg[j * nx as usize + i].to_bits(), want.to_bits(), "({i}, {j}) {bd:?}");
                }
            }
        }
    }
}
