//! `jacobi`: one invocation performs one weighted-Jacobi sweep of the pressure Poisson equation
//! `∇²p = ∇·u / dt` at one cell. In matrix form `A p = b` with `(A p)_c = n_c p_c − Σ p_nbr`
//! over the `n_c` neighbours that are not walls (walls are Neumann: `∂p/∂n = 0`) and
//! `b = −h² ∇·u / dt`; the sweep is `p ← p + ω ((Σ p_nbr + b) / n_c − p)`.
//!
//! Results below `f32::MIN_POSITIVE` in magnitude (subnormal numbers) are stored as zero, as a
//! processor in flush-to-zero mode would store them. The front of a solve that spreads from a
//! local source into a field of zeros is made of such numbers, and on x86 every arithmetic
//! operation that reads or makes one takes a microcode assist of about a hundred cycles: at
//! 1024² they made the first steps' sweeps about twice as slow (doc/PERFORMANCE.md). The values
//! change by less than 1.2e-38; GPUs commonly flush the same way (Vulkan leaves it to the
//! driver unless a shader asks to preserve them).

use swirly_core::grid::uniforms::JacobiParams;

use super::common::{Cross, G, cross, flush_subnormal, for_each_row, inner, next, prev};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Sum of the existing neighbours' pressure and their count, for cell `(i, j)`.
#[inline(always)]
pub fn neighbours(g: &G, p: &[f32], i: usize, j: usize) -> (f32, f32) {
    let (nx, ny) = (g.nx, g.ny);
    if i > 0 && i + 1 < nx && j > 0 && j + 1 < ny {
        let c = g.c(i, j);
        return (p[c - 1] + p[c + 1] + p[c - nx] + p[c + nx], 4.0);
    }
    let mut sum = 0.0f32;
    let mut n = 0.0f32;
    if let Some(il) = prev(i, nx, g.px) {
        sum += p[g.c(il, j)];
        n += 1.0;
    }
    if let Some(ir) = next(i, nx, g.px) {
        sum += p[g.c(ir, j)];
        n += 1.0;
    }
    if let Some(jd) = prev(j, ny, g.py) {
        sum += p[g.c(i, jd)];
        n += 1.0;
    }
    if let Some(ju) = next(j, ny, g.py) {
        sum += p[g.c(i, ju)];
        n += 1.0;
    }
    (sum, n)
}

/// New pressure at cell `(i, j)`. `scale = −h² / dt` turns divergence into `b`.
#[inline(always)]
pub fn jacobi_cell(g: &G, omega: f32, scale: f32, p: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    let c = g.c(i, j);
    let (sum, n) = neighbours(g, p, i, j);
    if n == 0.0 {
        return p[c];
    }
    jacobi_general(omega, scale, p[c], sum, div[c], n)
}

/// One sweep from `p` into `out`.
pub fn run(g: &G, params: &JacobiParams, dt: f32, p: &[f32], div: &[f32], out: &mut [f32]) {
    let scale = -g.h * g.h / dt;
    let omega = params.omega;
    if params.zero_initial != 0 {
        // From p = 0 the neighbour sum vanishes: p ← ω b / n_c.
        for_each_row(
            out,
            g.nx,
            #[inline(always)]
            |j, row| {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = cold_start_cell(g, omega, scale, div, i, j);
                }
            },
        );
        return;
    }
    let nx = g.nx;
    for_each_row(
        out,
        nx,
        #[inline(always)]
        |j, row| {
            if nx < 3 {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = jacobi_cell(g, omega, scale, p, div, i, j);
                }
                return;
            }
            // The edge cells apart, the rest the same formula over neighbouring slices (which the
            // compiler vectorises).
            let d = inner(div, nx, j);
            if j > 0 && j + 1 < g.ny {
                (row[0], row[nx - 1]) = edge_columns(g, omega, scale, p, div, j);
                let mid = &mut row[1..nx - 1];
                let Cross { centre, left, right, down, up } = cross(p, nx, j);
                for k in 0..mid.len() {
                    mid[k] = jacobi_interior(omega, scale, centre[k], left[k] + right[k] + down[k] + up[k], d[k]);
                }
                return;
            }
            // The first and the last row: a neighbour below or above is missing (a wall) or
            // wraps (periodic), and `neighbours` sums from zero in its order.
            row[0] = jacobi_cell(g, omega, scale, p, div, 0, j);
            row[nx - 1] = jacobi_cell(g, omega, scale, p, div, nx - 1, j);
            let mid = &mut row[1..nx - 1];
            let c = j * nx;
            let (centre, left, right) = (&p[c + 1..c + nx - 1], &p[c..c + nx - 2], &p[c + 2..c + nx]);
            let at = |k: usize| &p[k * nx + 1..(k + 1) * nx - 1];
            let (down, up) = (prev(j, g.ny, g.py).map(at), next(j, g.ny, g.py).map(at));
            let n = 2.0 + f32::from(u8::from(down.is_some())) + f32::from(u8::from(up.is_some()));
            let edge = |k: usize, sum: f32| jacobi_general(omega, scale, centre[k], sum, d[k], n);
            // One loop per case: a `match` on the missing neighbours inside a single loop made the
            // sweep about 4 % slower (it was not taken out of the loop).
            match (down, up) {
                (Some(down), Some(up)) => {
                    for k in 0..mid.len() {
                        mid[k] = edge(k, 0.0 + left[k] + right[k] + down[k] + up[k]);
                    }
                }
                (Some(down), None) => {
                    for k in 0..mid.len() {
                        mid[k] = edge(k, 0.0 + left[k] + right[k] + down[k]);
                    }
                }
                (None, Some(up)) => {
                    for k in 0..mid.len() {
                        mid[k] = edge(k, 0.0 + left[k] + right[k] + up[k]);
                    }
                }
                (None, None) => {
                    for k in 0..mid.len() {
                        mid[k] = edge(k, 0.0 + left[k] + right[k]);
                    }
                }
            }
        },
    );
}

/// The sweep at cell `(i, j)` from `p = 0`, where the neighbour sum and the old value vanish:
/// `ω b / n` (0 for a cell with no neighbour), stored as zero where subnormal. Shared with
/// `sor`'s first pass.
#[inline(always)]
pub fn cold_start_cell(g: &G, omega: f32, scale: f32, div: &[f32], i: usize, j: usize) -> f32 {
    let n = neighbour_count(g, i, j);
    if n == 0.0 { 0.0 } else { flush_subnormal(omega * scale * div[g.c(i, j)] / n) }
}

/// The sweep at a cell with four neighbours, from values: the same arithmetic as
/// [`jacobi_cell`] there.
#[inline(always)]
pub fn jacobi_interior(omega: f32, scale: f32, p: f32, sum: f32, div: f32) -> f32 {
    jacobi_general(omega, scale, p, sum, div, 4.0)
}

/// [`jacobi_cell`] at the first and the last cell of row `j`, which has rows below and above
/// and at least three cells, without its branches: `neighbours` sums from zero in the order
/// left, right, down, up over the neighbours that exist, and adding `+0` for the one past a wall
/// changes no such sum (it starts at `+0`, so it is never `−0`).
#[inline(always)]
fn edge_columns(g: &G, omega: f32, scale: f32, p: &[f32], div: &[f32], j: usize) -> (f32, f32) {
    let nx = g.nx;
    let row = &p[j * nx..(j + 1) * nx];
    let (down, up) = (&p[(j - 1) * nx..j * nx], &p[(j + 1) * nx..(j + 2) * nx]);
    let d = &div[j * nx..(j + 1) * nx];
    // The neighbour across the x seam, or `+0` past a wall.
    let across = |k: usize| if g.px { row[k] } else { 0.0 };
    let n = if g.px { 4.0 } else { 3.0 };
    let first = 0.0 + across(nx - 1) + row[1] + down[0] + up[0];
    let last = 0.0 + row[nx - 2] + across(0) + down[nx - 1] + up[nx - 1];
    (
        jacobi_general(omega, scale, row[0], first, d[0], n),
        jacobi_general(omega, scale, row[nx - 1], last, d[nx - 1], n),
    )
}

/// The sweep at a cell with `n > 0` neighbours summing to `sum`, from values: the one place of
/// its arithmetic, which [`jacobi_cell`], [`jacobi_interior`] and the row paths share.
#[inline(always)]
pub fn jacobi_general(omega: f32, scale: f32, p: f32, sum: f32, div: f32, n: f32) -> f32 {
    let pj = (sum + scale * div) / n;
    flush_subnormal(p + omega * (pj - p))
}

/// Number of non-wall neighbours of cell `(i, j)`.
#[inline(always)]
pub fn neighbour_count(g: &G, i: usize, j: usize) -> f32 {
    let side = |k: usize, n: usize, periodic: bool| -> f32 {
        if periodic { 2.0 } else { f32::from(u8::from(k > 0)) + f32::from(u8::from(k + 1 < n)) }
    };
    side(i, g.nx, g.px) + side(j, g.ny, g.py)
}

/// The table's entry: a dispatch of `jacobi` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: JacobiParams = d.params().unwrap_or_default();
    if c.g.solids {
        return super::solid::sweep(
            c.g,
            &p,
            c.dt,
            (s.r("pressure"), s.r("divergence")),
            (s.r("u_faces"), s.r("v_faces")),
            None,
            s.w("pressure_out"),
        );
    }
    run(c.g, &p, c.dt, s.r("pressure"), s.r("divergence"), s.w("pressure_out"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

    fn grid(nx: u32, ny: u32, b: Boundary) -> (Grid, G) {
        let grid = Grid::new(nx, ny, 0.1, b, b).expect("grid");
        let g = G::new(&grid.uniform());
        (grid, g)
    }

    #[test]
    fn subnormal_results_are_stored_as_zero_and_the_rest_exactly() {
        let (grid, g) = grid(7, 6, Boundary::Wall);
        let mut p = vec![0.0f32; grid.len(FieldId::Pressure)];
        let div = vec![0.0f32; p.len()];
        // A quarter of 2e-38 is subnormal; a quarter of 8e-38 is not.
        p[g.c(2, 2)] = 2e-38;
        p[g.c(4, 3)] = -8e-38;
        let params = JacobiParams { omega: 1.0, ..JacobiParams::default() };
        let mut out = vec![1.0f32; p.len()];
        run(&g, &params, 0.02, &p, &div, &mut out);
        assert!((2e-38f32 / 4.0).is_subnormal(), "the case needs a subnormal quarter");
        for (i, j) in [(1, 2), (3, 2), (2, 1), (2, 3)] {
            assert_eq!(out[g.c(i, j)].to_bits(), 0, "({i}, {j}): a quarter of 2e-38 is flushed to +0");
        }
        for (i, j) in [(3, 3), (5, 3), (4, 2), (4, 4)] {
            assert_eq!(out[g.c(i, j)], -2e-38, "({i}, {j}): a quarter of -8e-38 is kept");
        }
        assert!(out.iter().all(|x| !x.is_subnormal()));
        // A cold start whose first sweep is subnormal: ω b / n with b = −h² div / dt.
        let tiny = vec![1e-38f32; p.len()];
        let cold = JacobiParams { omega: 1.0, zero_initial: 1, ..JacobiParams::default() };
        run(&g, &cold, 0.02, &p, &tiny, &mut out);
        assert!((-0.1f32 * 0.1 / 0.02 * 1e-38 / 2.0).is_subnormal(), "the case needs subnormal starts");
        assert!(out.iter().all(|x| x.to_bits() == 0x8000_0000), "flushed to −0, the sign kept");
        // SOR shares the cell functions; its cold red pass flushes the same way.
        let red = JacobiParams { omega: 1.0, zero_initial: 1, colour: 0, sweeps: 1 };
        super::super::sor::run(&g, &red, 0.02, &p, &tiny, &mut out);
        assert!(out.iter().all(|x| *x == 0.0), "SOR's cold start: flushed (red) or zero (black)");
    }

    #[test]
    fn the_row_paths_equal_the_cell_function() {
        use Boundary::{Periodic, Wall};
        let cases = [(Wall, Wall), (Periodic, Periodic), (Periodic, Wall), (Wall, Periodic)];
        for (bx, by) in cases {
            for (nx, ny) in [(21, 9), (3, 3), (4, 2), (5, 1), (2, 6), (1, 5)] {
                // A periodic axis needs two cells.
                let Ok(grid) = Grid::new(nx, ny, 0.1, bx, by) else { continue };
                let g = G::new(&grid.uniform());
                let mut rng = swirly_core::scene::SplitMix64(9);
                let n = grid.len(FieldId::Pressure);
                // Values around the subnormal boundary, so that some results are flushed, with
                // zeros of both signs among them (the edge cells and rows sum from `+0`, as
                // `neighbours` does); then values of one magnitude, whose sums round differently
                // in another order than `neighbours`' left, right, down, up.
                let mut tiny = |k: usize| match k % 7 {
                    0 => 0.0,
                    1 => -0.0,
                    _ => (2.0 * rng.next_f32() - 1.0) * 6e-38,
                };
                let p_tiny: Vec<f32> = (0..n).map(&mut tiny).collect();
                let div_tiny: Vec<f32> = (0..n).map(|k| if k % 5 == 0 { -0.0 } else { tiny(k) * 1e-2 }).collect();
                let mut rng = swirly_core::scene::SplitMix64(10);
                // A product, so that the mantissas are full (`next_f32` gives multiples of 2^−24,
                // whose sums are mostly exact in any order).
                let mut unit = || (2.0 * rng.next_f32() - 1.0) * (1.0 + rng.next_f32());
                let p_unit: Vec<f32> = (0..n).map(|_| unit()).collect();
                let div_unit: Vec<f32> = (0..n).map(|_| unit()).collect();
                let sets = [
                    (1.0, &p_tiny, &div_tiny),
                    (0.8, &p_tiny, &div_tiny),
                    (1.0, &p_unit, &div_unit),
                    (0.8, &p_unit, &div_unit),
                ];
                for (set, (omega, p, div)) in sets.into_iter().enumerate() {
                    let params = JacobiParams { omega, ..JacobiParams::default() };
                    let mut out = vec![0.0; n];
                    run(&g, &params, 0.02, p, div, &mut out);
                    let scale = -g.h * g.h / 0.02;
                    let mut flushed = 0;
                    for j in 0..ny as usize {
                        for i in 0..nx as usize {
                            let want = jacobi_cell(&g, omega, scale, p, div, i, j);
                            let at = format!("({i}, {j}) of {nx} × {ny}, {bx:?} × {by:?}, ω {omega}");
                            assert_eq!(out[g.c(i, j)].to_bits(), want.to_bits(), "{at}");
                            flushed += usize::from(want == 0.0);
                        }
                    }
                    assert!(set > 1 || nx * ny < 20 || flushed > 0, "some results were subnormal before the flush");
                }
            }
        }
    }
}
