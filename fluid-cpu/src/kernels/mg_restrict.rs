//! `mg_restrict`: the residual `r = b − A p` of a level, summed over the (up to four) children
//! of each coarse cell into the coarser level's `b`; the coarser `p` set to zero. Children are
//! summed in the order (0,0), (1,0), (0,1), (1,1).

use swirly_core::grid::uniforms::MgParams;

use super::common::{Around, Cross, G, Rows, for_each_row_scratch, level_neighbours, split_around};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Coarse `b` at coarse cell `(ci, cj)`, reading the level's `p` and `b` through `p(k)` and
/// `b(k)` (their `k`-th values).
#[inline(always)]
fn restrict_with(
    g: &G,
    params: &MgParams,
    p: impl Fn(usize) -> f32,
    b: impl Fn(usize) -> f32,
    ci: usize,
    cj: usize,
) -> f32 {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let mut r = 0.0f32;
    for (a, bb) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let (i, j) = (2 * ci + a, 2 * cj + bb);
        if i < nx && j < ny {
            // The residual of fine cell (i, j).
            let c = j * nx + i;
            let (sum, n) = level_neighbours(&p, nx, ny, g.px, g.py, 0, i, j);
            r += b(c) - (n * p(c) - sum);
        }
    }
    r
}

/// Coarse `b` at coarse cell `(ci, cj)`.
#[inline(always)]
pub fn mg_restrict_cell(g: &G, params: &MgParams, read: &Around<'_>, ci: usize, cj: usize) -> f32 {
    let (po, bo) = (params.p as usize, params.b as usize);
    restrict_with(g, params, |k| read.get(po + k), |k| read.get(bo + k), ci, cj)
}

/// The residual `b − A p` along a level's row (`rows`: the iterate there and on the rows beside
/// it; `b`: the right-hand side row) into `out`, in the arithmetic of [`mg_restrict_cell`]. With rows
/// below and above, the inner cells `1..nx − 1` take the neighbour sum from zero, left, right,
/// down, up and `b − (4 p − sum)` over slices, so that they vectorise (the same bits).
#[inline(always)]
pub fn residual_row(px: bool, rows: Rows<'_>, b: &[f32], out: &mut [f32]) {
    let nx = out.len();
    let cell = |i: usize| residual_cell(px, &rows, b, i);
    let Some(Cross { centre, left, right, down, up }) = rows.cross() else {
        for (i, x) in out.iter_mut().enumerate() {
            *x = cell(i);
        }
        return;
    };
    out[0] = cell(0);
    out[nx - 1] = cell(nx - 1);
    let rhs = &b[1..nx - 1];
    for (k, r) in out[1..nx - 1].iter_mut().enumerate() {
        let sum = 0.0 + left[k] + right[k] + down[k] + up[k];
        *r = rhs[k] - (4.0 * centre[k] - sum);
    }
}

/// [`residual_row`]'s arithmetic at one cell `i`, through [`Rows::neighbours`]. A function the
/// closure calls, not the closure's body: with the body inline LLVM compiled the closure out of
/// line (as `mg_smooth::pass_row`'s, see there).
#[inline(always)]
fn residual_cell(px: bool, rows: &Rows<'_>, b: &[f32], i: usize) -> f32 {
    let (sum, n) = rows.neighbours(i, px);
    b[i] - (n * rows.row[i] - sum)
}

/// A coarse row from the residuals of its children rows (`r1`: `None` when the level has an
/// odd number of rows and this is the last): each coarse cell sums its (up to four) children
/// from zero in the order (0,0), (1,0), (0,1), (1,1), as [`mg_restrict_cell`] does; whole pairs of
/// columns four at a time.
#[inline(always)]
pub fn sum_children(r0: &[f32], r1: Option<&[f32]>, out: &mut [f32]) {
    let nx = r0.len();
    let pairs = nx / 2;
    match r1 {
        Some(r1) => {
            for (x, (d, u)) in out[..pairs].iter_mut().zip(r0.chunks_exact(2).zip(r1.chunks_exact(2))) {
                *x = 0.0 + d[0] + d[1] + u[0] + u[1];
            }
            if nx % 2 == 1 {
                out[pairs] = 0.0 + r0[nx - 1] + r1[nx - 1];
            }
        }
        None => {
            for (x, d) in out[..pairs].iter_mut().zip(r0.chunks_exact(2)) {
                *x = 0.0 + d[0] + d[1];
            }
            if nx % 2 == 1 {
                out[pairs] = 0.0 + r0[nx - 1];
            }
        }
    }
}

/// Restrict into the coarser level (its `b` and `p` are adjacent in the packed buffer). The
/// level's `p` and `b` are read as slices (they lie outside the written range) rather than
/// through [`Around::get`]: each coarse row computes its children rows' residuals
/// ([`residual_row`]) and sums them ([`sum_children`]); [`mg_restrict_cell`] is the reference
/// (tested bit for bit).
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (out, read) = split_around(mg, params.cb as usize, 2 * cnx * cny);
    let (b, p) = out.split_at_mut(cnx * cny);
    let arrays = read.slice(params.p as usize, nx * ny).zip(read.slice(params.b as usize, nx * ny));
    for_each_row_scratch(
        b,
        cnx,
        2 * nx,
        #[inline(always)]
        |cj, row, scratch| {
            let Some((fp, fb)) = arrays else {
                for (ci, x) in row.iter_mut().enumerate() {
                    *x = mg_restrict_cell(g, params, &read, ci, cj);
                }
                return;
            };
            let (r0, r1) = scratch.split_at_mut(nx);
            let residual = |j: usize, out: &mut [f32]| {
                residual_row(g.px, Rows::of(fp, nx, ny, g.py, j), &fb[j * nx..(j + 1) * nx], out);
            };
            residual(2 * cj, r0);
            if 2 * cj + 1 < ny {
                residual(2 * cj + 1, r1);
                sum_children(r0, Some(r1), row);
            } else {
                sum_children(r0, None, row);
            }
        },
    );
    p.fill(0.0);
}

/// The table's entry: a dispatch of `mg_restrict` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    if c.g.solids {
        let faces = s.r("mg_faces");
        return super::solid::mg_restrict(c.g, &p, s.w("mg"), faces);
    }
    run(c.g, &p, s.w("mg"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, Grid};

    #[test]
    fn slices_equal_the_cell_function() {
        for (nx, ny, bd, by) in [
            (13u32, 9u32, Boundary::Wall, Boundary::Wall),
            (12, 11, Boundary::Periodic, Boundary::Periodic),
            (40, 31, Boundary::Wall, Boundary::Wall),
            (15, 10, Boundary::Wall, Boundary::Periodic),
            (14, 9, Boundary::Periodic, Boundary::Wall),
            (3, 4, Boundary::Wall, Boundary::Wall),
            (4, 6, Boundary::Periodic, Boundary::Periodic),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bd, by).expect("grid");
            let g = G::new(&grid.uniform());
            let (cnx, cny) = (nx.div_ceil(2), ny.div_ceil(2));
            let (f, c) = ((nx * ny) as usize, (cnx * cny) as usize);
            let mut rng = swirly_core::scene::SplitMix64(5);
            let data: Vec<f32> = (0..2 * f + 2 * c).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
            // Fine b, p, then coarse b, p.
            let params = MgParams {
                nx,
                ny,
                b: 0,
                p: f as u32,
                cnx,
                cny,
                cb: 2 * f as u32,
                cp: (2 * f + c) as u32,
                ..MgParams::default()
            };
            let mut mg = data.clone();
            run(&g, &params, &mut mg);
            let mut copy = data.clone();
            let (_, read) = split_around(&mut copy, 2 * f, 2 * c);
            for cj in 0..cny as usize {
                for ci in 0..cnx as usize {
                    let want = mg_restrict_cell(&g, &params, &read, ci, cj);
                    assert_eq!(
                        mg[2 * f + cj * cnx as usize + ci].to_bits(),
                        want.to_bits(),
                        "({ci}, {cj}) {bd:?}/{by:?}"
                    );
                }
            }
        }
    }
}
