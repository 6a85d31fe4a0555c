//! `mg_restrict`: the residual `r = b − A p` of a level, summed over the (up to four) children
//! of each coarse cell into the coarser level's `b`; the coarser `p` set to zero. Children are
//! summed in the order (0,0), (1,0), (0,1), (1,1).

use fluid_core::uniforms::MgParams;

use super::common::{Around, Cross, G, cross, for_each_row_scratch, inner, level_neighbours, split_around};

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

/// The residual of the inner cells `1..nx − 1` of fine row `j` (which has rows above and
/// below) into `out`, in [`restrict_with`]'s arithmetic: the neighbour sum from zero, left,
/// right, down, up, and `b − (4 p − sum)`.
fn residual_row(p: &[f32], b: &[f32], nx: usize, j: usize, out: &mut [f32]) {
    let Cross { centre, left, right, down, up } = cross(p, nx, j);
    let rhs = inner(b, nx, j);
    for (k, r) in out[..nx - 2].iter_mut().enumerate() {
        let sum = 0.0 + left[k] + right[k] + down[k] + up[k];
        *r = rhs[k] - (4.0 * centre[k] - sum);
    }
}

/// Restrict into the coarser level (its `b` and `p` are adjacent in the packed buffer). The
/// level's `p` and `b` are read as slices (they lie outside the written range) rather than
/// through [`Around::get`]. A coarse row whose children rows both have rows above and below
/// computes those rows' inner residuals first (so that it vectorises) and sums them four at a
/// time for the coarse cells whose children are all inner; [`mg_restrict_cell`] is the
/// reference (tested bit for bit).
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (out, read) = split_around(mg, params.cb as usize, 2 * cnx * cny);
    let (b, p) = out.split_at_mut(cnx * cny);
    let arrays = read.slice(params.p as usize, nx * ny).zip(read.slice(params.b as usize, nx * ny));
    // Coarse columns 1..=inner_end have both children in 1..nx − 1.
    let inner_end = nx.saturating_sub(3) / 2;
    for_each_row_scratch(b, cnx, 2 * nx, |cj, row, scratch| {
        let Some((fp, fb)) = arrays else {
            for (ci, x) in row.iter_mut().enumerate() {
                *x = mg_restrict_cell(g, params, &read, ci, cj);
            }
            return;
        };
        let slow = |ci: usize| restrict_with(g, params, |k| fp[k], |k| fb[k], ci, cj);
        if cj == 0 || 2 * cj + 2 >= ny || inner_end == 0 {
            for (ci, x) in row.iter_mut().enumerate() {
                *x = slow(ci);
            }
            return;
        }
        let (r0, r1) = scratch.split_at_mut(nx);
        residual_row(fp, fb, nx, 2 * cj, r0);
        residual_row(fp, fb, nx, 2 * cj + 1, r1);
        row[0] = slow(0);
        // Coarse cell ci's children are fine columns 2ci and 2ci + 1: residuals 2ci − 1, 2ci.
        let (lower, upper) = (&r0[1..2 * inner_end + 1], &r1[1..2 * inner_end + 1]);
        for (x, (d, u)) in row[1..=inner_end].iter_mut().zip(lower.chunks_exact(2).zip(upper.chunks_exact(2))) {
            *x = 0.0 + d[0] + d[1] + u[0] + u[1];
        }
        for (ci, x) in row.iter_mut().enumerate().skip(inner_end + 1) {
            *x = slow(ci);
        }
    });
    p.fill(0.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluid_core::{Boundary, Grid};

    #[test]
    fn slices_equal_the_cell_function() {
        for (nx, ny, bd) in [
            (13u32, 9u32, Boundary::Wall),
            (12, 11, Boundary::Periodic),
            (40, 31, Boundary::Wall),
            (3, 4, Boundary::Wall),
            (4, 6, Boundary::Periodic),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bd, bd).expect("grid");
            let g = G::new(&grid.uniform());
            let (cnx, cny) = (nx.div_ceil(2), ny.div_ceil(2));
            let (f, c) = ((nx * ny) as usize, (cnx * cny) as usize);
            let mut rng = fluid_core::scene::SplitMix64(5);
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
                    assert_eq!(mg[2 * f + cj * cnx as usize + ci].to_bits(), want.to_bits(), "({ci}, {cj}) {bd:?}");
                }
            }
        }
    }
}
