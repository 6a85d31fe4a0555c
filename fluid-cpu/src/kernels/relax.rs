//! `relax`: one iteration of the per-cell relaxation on the velocity. Each cell measures its
//! net inflow over its open (non-wall) faces, `d = (u_left − u_right + v_down − v_up) / n`, and
//! asks each open face to carry `d` more outwards; a face shared by two cells takes the average
//! of their two requests, scaled by ω: `u ← u + ω (d_left − d_right) / 2`. The box's edge faces
//! keep their velocity (the solver is refused with open or inflow sides). That correction is
//! the gradient of `P = ω h d / (2 dt)`, which the kernel accumulates into `pressure` (reset on
//! the first iteration), so the residual of the pressure equation measures what is left; in
//! pressure terms the iteration is weighted Jacobi with ω/2.

use swirly_core::grid::uniforms::JacobiParams;

use super::common::{G, for_each_row};
use super::jacobi::neighbour_count;
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `d` of cell `(i, j)`.
#[inline(always)]
pub fn inflow(g: &G, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    let n = neighbour_count(g, i, j);
    if n == 0.0 {
        return 0.0;
    }
    (u[g.u(i, j)] - u[g.u(i + 1, j)] + v[g.v(i, j)] - v[g.v(i, j + 1)]) / n
}

/// New u at face `(i, j)`.
#[inline(always)]
pub fn relax_u_face(g: &G, omega: f32, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    let old = u[g.u(i, j)];
    if g.u_on_edge(i) {
        return old;
    }
    let right = g.ui(i);
    let left = if right > 0 { right - 1 } else { g.nx - 1 };
    old + omega * (inflow(g, u, v, left, j) - inflow(g, u, v, right, j)) * 0.5
}

/// New v at face `(i, j)`.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn relax_v_face(g: &G, omega: f32, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    let old = v[g.v(i, j)];
    if g.v_on_edge(j) {
        return old;
    }
    let up = g.vj(j);
    let down = if up > 0 { up - 1 } else { g.ny - 1 };
    old + omega * (inflow(g, u, v, i, down) - inflow(g, u, v, i, up)) * 0.5
}

/// [`inflow`] of every cell of row `j` into `out` (`nx` values). The cells with a neighbour on
/// both sides along x share the row's count of neighbours and take the same arithmetic over
/// row slices, so that it vectorises; the same bits (tested).
#[inline(always)]
pub fn inflow_row(g: &G, u: &[f32], v: &[f32], j: usize, out: &mut [f32]) {
    let nx = g.nx;
    let out = &mut out[..nx];
    if nx < 3 {
        for (i, d) in out.iter_mut().enumerate() {
            *d = inflow(g, u, v, i, j);
        }
        return;
    }
    out[0] = inflow(g, u, v, 0, j);
    out[nx - 1] = inflow(g, u, v, nx - 1, j);
    // `neighbour_count` of the inner cells: two along x, and the row's own count along y.
    let n = neighbour_count(g, 1, j);
    let (ul, ur) = (&u[g.u(1, j)..][..nx - 2], &u[g.u(2, j)..][..nx - 2]);
    let (vd, vu) = (&v[g.v(1, j)..][..nx - 2], &v[g.v(1, j + 1)..][..nx - 2]);
    for (k, d) in out[1..nx - 1].iter_mut().enumerate() {
        *d = (ul[k] - ur[k] + vd[k] - vu[k]) / n;
    }
}

/// One iteration from `u`, `v` into `u_out`, `v_out`, accumulating `pressure`. Every cell's
/// inflow is computed once, into `scratch` ([`inflow_row`]; grown to one field of cells when
/// shorter), and the pressure and the faces are taken from those rows; the same bits as
/// [`relax_u_face`] and [`relax_v_face`] (tested).
pub fn run(
    g: &G,
    params: &JacobiParams,
    dt: f32,
    u: &[f32],
    v: &[f32],
    pressure: &mut [f32],
    u_out: &mut [f32],
    v_out: &mut [f32],
    scratch: &mut Vec<f32>,
) {
    let omega = params.omega;
    let k = omega * g.h / (2.0 * dt);
    let zero = params.zero_initial != 0;
    let (nx, ny) = (g.nx, g.ny);
    if scratch.len() < nx * ny {
        scratch.resize(nx * ny, 0.0);
    }
    let inflows = &mut scratch[..nx * ny];
    for_each_row(
        inflows,
        nx,
        #[inline(always)]
        |j, row| inflow_row(g, u, v, j, row),
    );
    let inflows = &*inflows;
    let row_of = |j: usize| &inflows[j * nx..(j + 1) * nx];
    for_each_row(
        pressure,
        nx,
        #[inline(always)]
        |j, row| {
            for (p, &d) in row.iter_mut().zip(row_of(j)) {
                *p = if zero { 0.0 } else { *p } + k * d;
            }
        },
    );
    for_each_row(
        u_out,
        nx + 1,
        #[inline(always)]
        |j, row| {
            // Faces 1 ..= nx − 1 lie between cells i − 1 and i; faces 0 and nx are walls or
            // wrap around.
            for i in [0, nx] {
                row[i] = relax_u_face(g, omega, u, v, i, j);
            }
            let (d, old) = (row_of(j), &u[g.u(1, j)..][..nx - 1]);
            for (((x, &o), &left), &right) in row[1..nx].iter_mut().zip(old).zip(d).zip(&d[1..]) {
                *x = o + omega * (left - right) * 0.5;
            }
        },
    );
    for_each_row(
        v_out,
        nx,
        #[inline(always)]
        |j, row| {
            let old = &v[g.v(0, j)..][..nx];
            if g.v_on_edge(j) {
                row.copy_from_slice(old);
                return;
            }
            let up = g.vj(j);
            let down = if up > 0 { up - 1 } else { ny - 1 };
            // Zipped, not indexed: the bounds checks kept an indexed loop scalar.
            for (((x, &o), &below), &above) in row.iter_mut().zip(old).zip(row_of(down)).zip(row_of(up)) {
                *x = o + omega * (below - above) * 0.5;
            }
        },
    );
}

/// The table's entry: a dispatch of `relax` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: JacobiParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, s.r("u"), s.r("v"), s.w("pressure"), s.w("u_out"), s.w("v_out"), c.scratch);
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

    #[test]
    fn batched_rows_equal_the_face_functions() {
        use Boundary::{Periodic, Wall};
        for (nx, ny, bx, by) in [
            (13u32, 9u32, Wall, Wall),
            (12, 11, Periodic, Periodic),
            (10, 7, Periodic, Wall),
            (9, 6, Wall, Periodic),
            (3, 4, Wall, Wall),
            (2, 5, Periodic, Wall),
            (1, 4, Wall, Wall),
            (6, 1, Periodic, Wall),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let mut rng = swirly_core::scene::SplitMix64(21);
            let mut rand = |n: usize| -> Vec<f32> { (0..n).map(|_| 2.0 * rng.next_f32() - 1.0).collect() };
            let (u, v) = (rand(grid.len(FieldId::U)), rand(grid.len(FieldId::V)));
            let p0 = rand(grid.len(FieldId::Pressure));
            for (zero_initial, omega) in [(1, 1.0), (0, 0.7)] {
                let params = JacobiParams { omega, zero_initial, ..JacobiParams::default() };
                let (mut p, mut uo, mut vo) = (p0.clone(), vec![f32::NAN; u.len()], vec![f32::NAN; v.len()]);
                let dt = 0.02;
                run(&g, &params, dt, &u, &v, &mut p, &mut uo, &mut vo, &mut Vec::new());
                let k = omega * g.h / (2.0 * dt);
                let case = format!("{nx}x{ny} {bx:?} {by:?} ω {omega}");
                for j in 0..ny as usize {
                    for i in 0..nx as usize {
                        let start = if zero_initial != 0 { 0.0 } else { p0[g.c(i, j)] };
                        let want = start + k * inflow(&g, &u, &v, i, j);
                        assert_eq!(p[g.c(i, j)].to_bits(), want.to_bits(), "pressure ({i}, {j}) {case}");
                    }
                    for i in 0..=nx as usize {
                        let want = relax_u_face(&g, omega, &u, &v, i, j);
                        assert_eq!(uo[g.u(i, j)].to_bits(), want.to_bits(), "u ({i}, {j}) {case}");
                    }
                }
                for j in 0..=ny as usize {
                    for i in 0..nx as usize {
                        let want = relax_v_face(&g, omega, &u, &v, i, j);
                        assert_eq!(vo[g.v(i, j)].to_bits(), want.to_bits(), "v ({i}, {j}) {case}");
                    }
                }
            }
        }
    }
}
