//! `diffuse_velocity`: one invocation performs one Jacobi sweep of implicit viscosity
//! `(I − ν dt ∇²) u = u₀` for one u-face and one v-face:
//! `u ← (u₀ + a Σ u_nbr) / (1 + a·n)`, `a = ν dt / h²`, over the `n` neighbours that exist.
//! Wall-normal faces stay zero; along a wall the tangential velocity is free-slip (the missing
//! neighbour mirrors the face itself, so it drops out of both sums).

use fluid_core::grid::uniforms::DiffuseParams;

use super::common::{Cross, G, cross, for_each_row, inner, next, prev};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// One sweep at u-face `(i, j)`.
#[inline(always)]
pub fn diffuse_u_face(g: &G, a: f32, u0: &[f32], u: &[f32], i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return 0.0;
    }
    let i = g.ui(i);
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    // x-neighbours are faces; on a periodic axis face 0's left neighbour is face nx − 1.
    let il = if i > 0 { i - 1 } else { g.nx - 1 };
    sum += u[g.u(il, j)] + u[g.u(i + 1, j)];
    n += 2.0;
    for jj in [prev(j, g.ny, g.py), next(j, g.ny, g.py)].into_iter().flatten() {
        sum += u[g.u(i, jj)];
        n += 1.0;
    }
    (u0[g.u(i, j)] + a * sum) / (1.0 + a * n)
}

/// One sweep at v-face `(i, j)`.
#[inline(always)]
pub fn diffuse_v_face(g: &G, a: f32, v0: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    if g.v_on_wall(j) {
        return 0.0;
    }
    let j = g.vj(j);
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    let jd = if j > 0 { j - 1 } else { g.ny - 1 };
    sum += v[g.v(i, jd)] + v[g.v(i, j + 1)];
    n += 2.0;
    for ii in [prev(i, g.nx, g.px), next(i, g.nx, g.px)].into_iter().flatten() {
        sum += v[g.v(ii, j)];
        n += 1.0;
    }
    (v0[g.v(i, j)] + a * sum) / (1.0 + a * n)
}

/// One sweep of both components. Faces whose four neighbours involve no wall and no periodic
/// seam (u: faces `1..nx` of rows `1..ny − 1`; v: faces `1..nx − 1` of rows `1..ny`) take a
/// path over row slices with [`diffuse_u_face`] / [`diffuse_v_face`]'s arithmetic, so that it
/// vectorises; the result is the same bit for bit (tested).
pub fn run(
    g: &G,
    p: &DiffuseParams,
    dt: f32,
    u0: &[f32],
    v0: &[f32],
    u: &[f32],
    v: &[f32],
    u_out: &mut [f32],
    v_out: &mut [f32],
) {
    let a = p.viscosity * dt * g.inv_h * g.inv_h;
    let (nx, ny) = (g.nx, g.ny);
    let denominator = 1.0 + a * 4.0;
    for_each_row(
        u_out,
        nx + 1,
        #[inline(always)]
        |j, row| {
            if nx < 2 || j == 0 || j + 1 >= ny {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = diffuse_u_face(g, a, u0, u, i, j);
                }
                return;
            }
            row[0] = diffuse_u_face(g, a, u0, u, 0, j);
            row[nx] = diffuse_u_face(g, a, u0, u, nx, j);
            // Inner faces 1..nx of the row (nx + 1 wide).
            let Cross { left, right, down, up, .. } = cross(u, nx + 1, j);
            let start = inner(u0, nx + 1, j);
            // Zipped slices, not indices: with indices the bounds checks kept this loop scalar.
            let faces = row[1..nx].iter_mut().zip(left).zip(right).zip(down).zip(up).zip(start);
            for (((((x, l), r), d), u), s) in faces {
                let mut sum = 0.0f32;
                sum += l + r;
                sum += d;
                sum += u;
                *x = (s + a * sum) / denominator;
            }
        },
    );
    for_each_row(
        v_out,
        nx,
        #[inline(always)]
        |j, row| {
            if nx < 3 || j == 0 || j >= ny {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = diffuse_v_face(g, a, v0, v, i, j);
                }
                return;
            }
            row[0] = diffuse_v_face(g, a, v0, v, 0, j);
            row[nx - 1] = diffuse_v_face(g, a, v0, v, nx - 1, j);
            // Inner faces 1..nx − 1 of the row.
            let Cross { left, right, down, up, .. } = cross(v, nx, j);
            let start = inner(v0, nx, j);
            let faces = row[1..nx - 1].iter_mut().zip(left).zip(right).zip(down).zip(up).zip(start);
            for (((((x, l), r), d), u), s) in faces {
                let mut sum = 0.0f32;
                sum += d + u;
                sum += l;
                sum += r;
                *x = (s + a * sum) / denominator;
            }
        },
    );
}

/// The table's entry: a dispatch of `diffuse_velocity` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, mut s: Slots<'_>) {
    let p: DiffuseParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, s.r(0), s.r(1), s.r(2), s.r(3), s.w(4), s.w(5));
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluid_core::{Boundary, FieldId, Grid};

    #[test]
    fn rows_equal_the_face_functions() {
        for (nx, ny, bx, by) in [
            (13u32, 9u32, Boundary::Wall, Boundary::Wall),
            (12, 11, Boundary::Periodic, Boundary::Periodic),
            (10, 7, Boundary::Periodic, Boundary::Wall),
            (9, 8, Boundary::Wall, Boundary::Periodic),
            (2, 5, Boundary::Wall, Boundary::Wall),
            (1, 3, Boundary::Wall, Boundary::Periodic),
        ] {
            let grid = Grid::new(nx, ny, 0.3, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let mut rng = fluid_core::scene::SplitMix64(8);
            let mut field = |f| (0..grid.len(f)).map(|_| 2.0 * rng.next_f32() - 1.0).collect::<Vec<f32>>();
            let (u0, v0, u, v) = (field(FieldId::U), field(FieldId::V), field(FieldId::U), field(FieldId::V));
            let p = DiffuseParams { viscosity: 0.37, ..DiffuseParams::default() };
            let (mut uo, mut vo) = (vec![0.0; u.len()], vec![0.0; v.len()]);
            run(&g, &p, 0.05, &u0, &v0, &u, &v, &mut uo, &mut vo);
            let a = p.viscosity * 0.05 * g.inv_h * g.inv_h;
            let (nx, ny) = (nx as usize, ny as usize);
            for j in 0..ny {
                for i in 0..=nx {
                    let want = diffuse_u_face(&g, a, &u0, &u, i, j);
                    assert_eq!(uo[g.u(i, j)].to_bits(), want.to_bits(), "u ({i}, {j}) {nx}x{ny} {bx:?}/{by:?}");
                }
            }
            for j in 0..=ny {
                for i in 0..nx {
                    let want = diffuse_v_face(&g, a, &v0, &v, i, j);
                    assert_eq!(vo[g.v(i, j)].to_bits(), want.to_bits(), "v ({i}, {j}) {nx}x{ny} {bx:?}/{by:?}");
                }
            }
        }
    }
}
