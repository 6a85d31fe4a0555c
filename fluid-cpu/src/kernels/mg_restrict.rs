//! `mg_restrict`: the residual `r = b − A p` of a level, summed over the (up to four) children
//! of each coarse cell into the coarser level's `b`; the coarser `p` set to zero. Children are
//! summed in the order (0,0), (1,0), (0,1), (1,1).

use fluid_core::uniforms::MgParams;

use super::common::{Around, G, for_each_row, level_neighbours, split_around};

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

/// Restrict into the coarser level (its `b` and `p` are adjacent in the packed buffer). The
/// level's `p` and `b` are read as slices (they lie outside the written range) rather than
/// through [`Around::get`]; [`mg_restrict_cell`] is the reference (tested bit for bit).
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (out, read) = split_around(mg, params.cb as usize, 2 * cnx * cny);
    let (b, p) = out.split_at_mut(cnx * cny);
    let arrays = read.slice(params.p as usize, nx * ny).zip(read.slice(params.b as usize, nx * ny));
    for_each_row(b, cnx, |cj, row| {
        for (ci, x) in row.iter_mut().enumerate() {
            *x = match arrays {
                Some((fp, fb)) => restrict_with(g, params, |k| fp[k], |k| fb[k], ci, cj),
                None => mg_restrict_cell(g, params, &read, ci, cj),
            };
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
        for (nx, ny, bd) in [(13u32, 9u32, Boundary::Wall), (12, 11, Boundary::Periodic)] {
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
