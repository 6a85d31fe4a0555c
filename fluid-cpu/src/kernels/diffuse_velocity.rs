//! `diffuse_velocity`: one invocation performs one Jacobi sweep of implicit viscosity
//! `(I − ν dt ∇²) u = u₀` for one u-face and one v-face:
//! `u ← (u₀ + a Σ u_nbr) / (1 + a·n)`, `a = ν dt / h²`, over the `n` neighbours that exist.
//! Wall faces keep their given velocity; past an open side the normal neighbour is absent
//! (zero gradient). Along a free-slip wall or an open side the tangential velocity is free (the
//! missing neighbour mirrors the face itself, so it drops out of both sums); past a no-slip
//! wall or an inflow it is the ghost `2 v_side − v` (`sum += 2 v_side`, `n += 2`).

use swirly_core::grid::uniforms::DiffuseParams;

use super::common::{BOTTOM, Cross, G, LEFT, RIGHT, TOP, cross, for_each_row, inner, next, prev};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// A face's faces field (`u_faces` or `v_faces`) and whether obstacles hold the fluid (no
/// slip); `None` without obstacles.
pub type Closed<'a> = Option<(&'a [f32], bool)>;

/// A neighbour's `(value, count)` in the sums: a face an obstacle closes (never an edge face)
/// is the solid's velocity (no slip) or absent (free slip).
#[inline(always)]
fn term(field: &[f32], closed: Closed<'_>, k: usize, edge: bool) -> (f32, f32) {
    if let Some((faces, no_slip)) = closed
        && !edge
        && faces[2 * k] == 0.0
    {
        return if no_slip { (faces[2 * k + 1], 1.0) } else { (0.0, 0.0) };
    }
    (field[k], 1.0)
}

/// One sweep at u-face `(i, j)`.
#[inline(always)]
pub fn diffuse_u_face(g: &G, a: f32, u0: &[f32], u: &[f32], closed: Closed<'_>, i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return g.wall_u(i, j);
    }
    let i = g.ui(i);
    if let Some((faces, _)) = closed
        && !g.u_on_edge(i)
        && faces[2 * g.u(i, j)] == 0.0
    {
        return faces[2 * g.u(i, j) + 1];
    }
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    let mut add = |(x, k): (f32, f32)| {
        sum += x;
        n += k;
    };
    // x-neighbours are faces; on a periodic axis face 0's left neighbour is face nx − 1.
    if i > 0 || g.px {
        let il = if i > 0 { i - 1 } else { g.nx - 1 };
        add(term(u, closed, g.u(il, j), g.u_on_edge(il)));
    }
    if i < g.nx {
        add(term(u, closed, g.u(i + 1, j), g.u_on_edge(i + 1)));
    }
    for (side, jj) in [(BOTTOM, prev(j, g.ny, g.py)), (TOP, next(j, g.ny, g.py))] {
        if let Some(jj) = jj {
            add(term(u, closed, g.u(i, jj), g.u_on_edge(i)));
        } else if let Some(speed) = g.held_tangent(side) {
            add((2.0 * speed, 2.0));
        }
    }
    (u0[g.u(i, j)] + a * sum) / (1.0 + a * n)
}

/// One sweep at v-face `(i, j)`.
#[inline(always)]
pub fn diffuse_v_face(g: &G, a: f32, v0: &[f32], v: &[f32], closed: Closed<'_>, i: usize, j: usize) -> f32 {
    if g.v_on_wall(j) {
        return g.wall_v(i, j);
    }
    let j = g.vj(j);
    if let Some((faces, _)) = closed
        && !g.v_on_edge(j)
        && faces[2 * g.v(i, j)] == 0.0
    {
        return faces[2 * g.v(i, j) + 1];
    }
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    let mut add = |(x, k): (f32, f32)| {
        sum += x;
        n += k;
    };
    if j > 0 || g.py {
        let jd = if j > 0 { j - 1 } else { g.ny - 1 };
        add(term(v, closed, g.v(i, jd), g.v_on_edge(jd)));
    }
    if j < g.ny {
        add(term(v, closed, g.v(i, j + 1), g.v_on_edge(j + 1)));
    }
    for (side, ii) in [(LEFT, prev(i, g.nx, g.px)), (RIGHT, next(i, g.nx, g.px))] {
        if let Some(ii) = ii {
            add(term(v, closed, g.v(ii, j), g.v_on_edge(j)));
        } else if let Some(speed) = g.held_tangent(side) {
            add((2.0 * speed, 2.0));
        }
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
    (uf, vf): (&[f32], &[f32]),
) {
    let a = p.viscosity * dt * g.inv_h * g.inv_h;
    let (nx, ny) = (g.nx, g.ny);
    // With obstacles every face goes through the face functions (the closed faces' terms).
    let (cu, cv): (Closed<'_>, Closed<'_>) =
        if g.solids { (Some((uf, p.no_slip != 0)), Some((vf, p.no_slip != 0))) } else { (None, None) };
    let denominator = 1.0 + a * 4.0;
    for_each_row(
        u_out,
        nx + 1,
        #[inline(always)]
        |j, row| {
            if g.solids || nx < 2 || j == 0 || j + 1 >= ny {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = diffuse_u_face(g, a, u0, u, cu, i, j);
                }
                return;
            }
            row[0] = diffuse_u_face(g, a, u0, u, None, 0, j);
            row[nx] = diffuse_u_face(g, a, u0, u, None, nx, j);
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
            if g.solids || nx < 3 || j == 0 || j >= ny {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = diffuse_v_face(g, a, v0, v, cv, i, j);
                }
                return;
            }
            row[0] = diffuse_v_face(g, a, v0, v, None, 0, j);
            row[nx - 1] = diffuse_v_face(g, a, v0, v, None, nx - 1, j);
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
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DiffuseParams = d.params().unwrap_or_default();
    let faces = (s.r("u_faces"), s.r("v_faces"));
    run(c.g, &p, c.dt, s.r("u0"), s.r("v0"), s.r("u"), s.r("v"), s.w("u_out"), s.w("v_out"), faces);
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

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
            let mut rng = swirly_core::scene::SplitMix64(8);
            let mut field = |f| (0..grid.len(f)).map(|_| 2.0 * rng.next_f32() - 1.0).collect::<Vec<f32>>();
            let (u0, v0, u, v) = (field(FieldId::U), field(FieldId::V), field(FieldId::U), field(FieldId::V));
            let p = DiffuseParams { viscosity: 0.37, ..DiffuseParams::default() };
            let (mut uo, mut vo) = (vec![0.0; u.len()], vec![0.0; v.len()]);
            run(&g, &p, 0.05, &u0, &v0, &u, &v, &mut uo, &mut vo, (&[], &[]));
            let a = p.viscosity * 0.05 * g.inv_h * g.inv_h;
            let (nx, ny) = (nx as usize, ny as usize);
            for j in 0..ny {
                for i in 0..=nx {
                    let want = diffuse_u_face(&g, a, &u0, &u, None, i, j);
                    assert_eq!(uo[g.u(i, j)].to_bits(), want.to_bits(), "u ({i}, {j}) {nx}x{ny} {bx:?}/{by:?}");
                }
            }
            for j in 0..=ny {
                for i in 0..nx {
                    let want = diffuse_v_face(&g, a, &v0, &v, None, i, j);
                    assert_eq!(vo[g.v(i, j)].to_bits(), want.to_bits(), "v ({i}, {j}) {nx}x{ny} {bx:?}/{by:?}");
                }
            }
        }
    }
}
