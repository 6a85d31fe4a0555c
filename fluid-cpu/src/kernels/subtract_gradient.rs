//! `subtract_gradient`: one invocation makes one u-face and one v-face divergence-free:
//! `u −= dt (p_right − p_left) / h`, with the pressure the double-float `pressure +
//! pressure_lo` (high and low parts differenced separately). Wall faces stay zero.

use super::common::{G, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `p[a] − p[b]` of the double-float pressure.
#[inline(always)]
fn diff(hi: &[f32], lo: &[f32], a: usize, b: usize) -> f32 {
    (hi[a] - hi[b]) + (lo[a] - lo[b])
}

/// New u at face `(i, j)`.
#[inline(always)]
pub fn project_u_face(g: &G, k: f32, hi: &[f32], lo: &[f32], u: f32, i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return 0.0;
    }
    let i = g.ui(i);
    let left = if i > 0 { i - 1 } else { g.nx - 1 };
    u - k * diff(hi, lo, g.c(i, j), g.c(left, j))
}

/// New v at face `(i, j)`.
#[inline(always)]
pub fn project_v_face(g: &G, k: f32, hi: &[f32], lo: &[f32], v: f32, i: usize, j: usize) -> f32 {
    if g.v_on_wall(j) {
        return 0.0;
    }
    let j = g.vj(j);
    let down = if j > 0 { j - 1 } else { g.ny - 1 };
    v - k * diff(hi, lo, g.c(i, j), g.c(i, down))
}

/// `x[n] −= k · ((hi1[n] − hi0[n]) + (lo1[n] − lo0[n]))` along a run of faces whose two cells'
/// pressures are `hi1[n] + lo1[n]` and `hi0[n] + lo0[n]`: [`project_u_face`]'s arithmetic, over
/// slices so that it vectorises.
#[inline(always)]
fn project_run(x: &mut [f32], k: f32, (hi1, hi0): (&[f32], &[f32]), (lo1, lo0): (&[f32], &[f32])) {
    let n = x.len();
    let (hi1, hi0, lo1, lo0) = (&hi1[..n], &hi0[..n], &lo1[..n], &lo0[..n]);
    for i in 0..n {
        x[i] -= k * ((hi1[i] - hi0[i]) + (lo1[i] - lo0[i]));
    }
}

/// Subtract `dt ∇p` from `u` and `v` in place. Faces between two cells of one row (u) or one
/// column (v) go through `project_run`; the others (walls, periodic seams) through
/// [`project_u_face`] / [`project_v_face`]. The same bits as those functions face by face
/// (tested).
pub fn run(g: &G, dt: f32, u: &mut [f32], v: &mut [f32], hi: &[f32], lo: &[f32]) {
    let (k, nx) = (dt * g.inv_h, g.nx);
    for_each_row(
        u,
        nx + 1,
        #[inline(always)]
        |j, row| {
            let (h, l) = (&hi[j * nx..][..nx], &lo[j * nx..][..nx]);
            project_run(&mut row[1..nx], k, (&h[1..], h), (&l[1..], l));
            row[0] = project_u_face(g, k, hi, lo, row[0], 0, j);
            row[nx] = project_u_face(g, k, hi, lo, row[nx], nx, j);
        },
    );
    for_each_row(
        v,
        nx,
        #[inline(always)]
        |j, row| {
            if j >= 1 && j < g.ny {
                let (h1, h0) = (&hi[j * nx..][..nx], &hi[(j - 1) * nx..][..nx]);
                let (l1, l0) = (&lo[j * nx..][..nx], &lo[(j - 1) * nx..][..nx]);
                project_run(row, k, (h1, h0), (l1, l0));
            } else {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = project_v_face(g, k, hi, lo, *x, i, j);
                }
            }
        },
    );
}

/// The table's entry: a dispatch of `subtract_gradient` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, _d: &Dispatch, s: &mut Slots<'_>) {
    if c.g.solids {
        return super::solid::subtract_gradient(
            c.g,
            c.dt,
            (s.w("u"), s.w("v")),
            (s.r("pressure"), s.r("pressure_lo")),
            (s.r("u_faces"), s.r("v_faces")),
        );
    }
    run(c.g, c.dt, s.w("u"), s.w("v"), s.r("pressure"), s.r("pressure_lo"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

    #[test]
    fn runs_of_faces_equal_the_one_face_functions() {
        for (bx, by, nx, ny) in [
            (Boundary::Wall, Boundary::Wall, 29, 9),
            (Boundary::Periodic, Boundary::Wall, 29, 9),
            (Boundary::Wall, Boundary::Periodic, 29, 9),
            (Boundary::Periodic, Boundary::Periodic, 29, 9),
            (Boundary::Wall, Boundary::Wall, 1, 6),
            (Boundary::Periodic, Boundary::Periodic, 2, 2),
            (Boundary::Wall, Boundary::Wall, 1, 1),
            (Boundary::Wall, Boundary::Wall, 12, 1),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let mut rng = swirly_core::scene::SplitMix64(7);
            let mut field = |id| (0..grid.len(id)).map(|_| 4.0 * rng.next_f32() - 2.0).collect::<Vec<f32>>();
            let (u0, v0, hi) = (field(FieldId::U), field(FieldId::V), field(FieldId::Pressure));
            let lo: Vec<f32> = hi.iter().map(|x| x * 1e-7).collect();
            let (mut u, mut v) = (u0.clone(), v0.clone());
            run(&g, 0.07, &mut u, &mut v, &hi, &lo);
            let k = 0.07 * g.inv_h;
            for j in 0..ny as usize {
                for i in 0..=nx as usize {
                    let want = project_u_face(&g, k, &hi, &lo, u0[g.u(i, j)], i, j);
                    assert_eq!(u[g.u(i, j)].to_bits(), want.to_bits(), "u ({i}, {j}) on {nx}x{ny} {bx:?}/{by:?}");
                }
            }
            for j in 0..=ny as usize {
                for i in 0..nx as usize {
                    let want = project_v_face(&g, k, &hi, &lo, v0[g.v(i, j)], i, j);
                    assert_eq!(v[g.v(i, j)].to_bits(), want.to_bits(), "v ({i}, {j}) on {nx}x{ny} {bx:?}/{by:?}");
                }
            }
        }
    }
}
