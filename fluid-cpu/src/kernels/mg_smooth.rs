//! `mg_smooth`: one colour pass of red-black Gauss–Seidel (over-relaxed by ω) on one multigrid
//! level, from the iterate at `p` into `tmp` (the cells of the other colour are copied), as
//! [`super::sor`] does on the grid.

use swirly_core::grid::uniforms::MgParams;

use super::common::{Around, Cross, G, Rows, for_each_row, level_neighbours, next, prev, split_around};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The pass at cell `(i, j)` of the level, reading its iterate and right-hand side through
/// `p(k)` and `b(k)` (their `k`-th values; the iterate is taken as zero when the pass starts
/// from zero).
#[inline(always)]
fn smooth_with(
    g: &G,
    params: &MgParams,
    p: impl Fn(usize) -> f32,
    b: impl Fn(usize) -> f32,
    i: usize,
    j: usize,
) -> f32 {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let c = j * nx + i;
    let zero = params.zero_initial != 0;
    let old = if zero { 0.0 } else { p(c) };
    if ((i + j) & 1) as u32 != params.colour {
        return old;
    }
    let (sum, n) = level_neighbours(|k| if zero { 0.0 } else { p(k) }, nx, ny, g.px, g.py, 0, i, j);
    if n == 0.0 {
        return old;
    }
    let pj = (sum + b(c)) / n;
    old + params.omega * (pj - old)
}

/// The pass at cell `(i, j)` of the level.
#[inline(always)]
pub fn mg_smooth_cell(g: &G, params: &MgParams, read: &Around<'_>, i: usize, j: usize) -> f32 {
    let (po, bo) = (params.p as usize, params.b as usize);
    smooth_with(g, params, |k| read.get(po + k), |k| read.get(bo + k), i, j)
}

/// One colour pass along level row `j` (`rows`: the iterate there and on the rows beside it)
/// with right-hand side row `b`, into `out`: [`mg_smooth_cell`]'s arithmetic. With rows below
/// and above, the inner cells `1..nx − 1` compute the neighbour sum from zero, left, right,
/// down, up for every cell and keep the result on the pass's colour, so that they vectorise;
/// the result is the same bit for bit (tested).
#[inline(always)]
pub fn pass_row(px: bool, colour: u32, omega: f32, j: usize, rows: Rows<'_>, b: &[f32], out: &mut [f32]) {
    let nx = out.len();
    let cell = |i: usize| pass_cell(px, colour, omega, j, &rows, b, i);
    let Some(Cross { centre, left, right, down, up }) = rows.cross() else {
        for (i, x) in out.iter_mut().enumerate() {
            *x = cell(i);
        }
        return;
    };
    out[0] = cell(0);
    out[nx - 1] = cell(nx - 1);
    let rhs = &b[1..nx - 1];
    // Inner cell k is column k + 1: of the pass's colour when (k + 1 + j) & 1 is `colour`;
    // the other colour keeps its value (a select, so that it vectorises).
    let mine = (1 + j + colour as usize) & 1;
    for (k, x) in out[1..nx - 1].iter_mut().enumerate() {
        let old = centre[k];
        let sum = 0.0 + left[k] + right[k] + down[k] + up[k];
        let new = old + omega * ((sum + rhs[k]) / 4.0 - old);
        *x = if k & 1 == mine { new } else { old };
    }
}

/// [`pass_row`]'s arithmetic at one cell `i` of row `j`, through [`Rows::neighbours`]. A
/// function the closure in [`pass_row`] calls, not the closure's body: with the body inline LLVM
/// compiled the closure out of line, where its edge cells took 5 % of a 128² smoke step's
/// instructions (doc/PERFORMANCE.md).
#[inline(always)]
fn pass_cell(px: bool, colour: u32, omega: f32, j: usize, rows: &Rows<'_>, b: &[f32], i: usize) -> f32 {
    let old = rows.row[i];
    if ((i + j) & 1) as u32 != colour {
        return old;
    }
    let (sum, n) = rows.neighbours(i, px);
    if n == 0.0 {
        return old;
    }
    let pj = (sum + b[i]) / n;
    old + omega * (pj - old)
}

/// One pass from the level's iterate `p` (`None` when the pass starts from zero) and
/// right-hand side `b` into `out`, all three the level's own arrays (`params` gives the level's
/// size, the colour and ω; its offsets are not used): [`pass_row`] along every row, from zero
/// over a row of zeros (the arithmetic of [`mg_smooth_cell`] from zero, which reads the iterate
/// as zeros too).
pub fn pass(g: &G, params: &MgParams, p: Option<&[f32]>, b: &[f32], out: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (omega, colour) = (params.omega, params.colour);
    // From zero, every row of the iterate is this one.
    let zeros = if p.is_none() { vec![0.0f32; nx] } else { Vec::new() };
    for_each_row(
        out,
        nx,
        #[inline(always)]
        |j, row| {
            let rows = match p {
                Some(p) => Rows::of(p, nx, ny, g.py, j),
                None => Rows {
                    down: prev(j, ny, g.py).map(|_| &zeros[..]),
                    row: &zeros,
                    up: next(j, ny, g.py).map(|_| &zeros[..]),
                },
            };
            pass_row(g.px, colour, omega, j, rows, &b[j * nx..(j + 1) * nx], row);
        },
    );
}

/// One pass over the level, from the iterate at `p` into `tmp` in the packed buffer: [`pass`]
/// over the level's arrays, or cell by cell when they overlap the written range.
pub fn run(g: &G, params: &MgParams, mg: &mut [f32]) {
    let cells = (params.nx * params.ny) as usize;
    let (out, read) = split_around(mg, params.tmp as usize, cells);
    let iterate = read.slice(params.p as usize, cells);
    match read.slice(params.b as usize, cells) {
        Some(b) if params.zero_initial != 0 => pass(g, params, None, b, out),
        Some(b) if iterate.is_some() => pass(g, params, iterate, b, out),
        _ => for_each_row(
            out,
            params.nx as usize,
            #[inline(always)]
            |j, row| {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = mg_smooth_cell(g, params, &read, i, j);
                }
            },
        ),
    }
}

/// The table's entry: a dispatch of `mg_smooth` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    if c.g.solids {
        let faces = s.r("mg_faces");
        return super::solid::mg_smooth(c.g, &p, s.w("mg"), faces);
    }
    run(c.g, &p, s.w("mg"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, Grid};

    /// The row path equals the per-cell function bit for bit, both colours, on wall and
    /// periodic levels, with the level's arrays before and after the written one.
    #[test]
    fn rows_equal_the_cell_function() {
        for (nx, ny, b, by) in [
            (13u32, 9u32, Boundary::Wall, Boundary::Wall),
            (12, 10, Boundary::Periodic, Boundary::Periodic),
            (11, 8, Boundary::Wall, Boundary::Periodic),
            (10, 7, Boundary::Periodic, Boundary::Wall),
            (3, 5, Boundary::Wall, Boundary::Wall),
        ] {
            let grid = Grid::new(nx, ny, 0.1, b, by).expect("grid");
            let g = G::new(&grid.uniform());
            let cells = (nx * ny) as usize;
            let mut rng = swirly_core::scene::SplitMix64(11);
            let data: Vec<f32> = (0..3 * cells).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
            // Layouts: (b, p, tmp) and (tmp, p, b) in the buffer.
            for (bo, po, to) in [(0, cells, 2 * cells), (2 * cells, cells, 0)] {
                for (colour, zero_initial) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let params = MgParams {
                        nx,
                        ny,
                        b: bo as u32,
                        p: po as u32,
                        tmp: to as u32,
                        colour,
                        zero_initial,
                        omega: 1.15,
                        ..MgParams::default()
                    };
                    let mut mg = data.clone();
                    run(&g, &params, &mut mg);
                    let mut copy = data.clone();
                    let (_, read) = split_around(&mut copy, to, cells);
                    for j in 0..ny as usize {
                        for i in 0..nx as usize {
                            let want = mg_smooth_cell(&g, &params, &read, i, j);
                            assert_eq!(
                                mg[to + j * nx as usize + i].to_bits(),
                                want.to_bits(),
                                "({i}, {j}) {b:?}/{by:?} colour {colour} zero {zero_initial}"
                            );
                        }
                    }
                }
            }
        }
    }
}
