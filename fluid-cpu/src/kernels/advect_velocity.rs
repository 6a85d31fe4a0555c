//! `advect_velocity`: one invocation computes the semi-Lagrangian value of one u-face and one
//! v-face: trace the face position back along the velocity and sample there.

use swirly_core::grid::uniforms::AdvectParams;

#[cfg(target_arch = "x86_64")]
use super::avx2::Avx2;

use super::common::{
    G, LANES, backtrace, backtrace_lanes, for_each_row, sample_u, sample_u_lanes, sample_v, sample_v_lanes,
    velocity_at_u_faces, velocity_at_v_faces,
};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// New u at face `(i, j)`.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn advect_u_face(g: &G, p: &AdvectParams, dt: f32, decay: f32, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return g.wall_u(i, j);
    }
    let (x, y) = (g.ui(i) as f32, j as f32 + 0.5);
    let (bx, by) = backtrace(g, u, v, p.order, dt * g.inv_h, x, y);
    backflow(g, sample_u(g, u, bx, by) * decay, bx, by)
}

/// A value advected from `(bx, by)`: past an open side it blends toward the ambient fluid at
/// rest, up to wholly one cell out (fluid drawn in through an outflow brings no momentum).
#[inline(always)]
fn backflow(g: &G, val: f32, bx: f32, by: f32) -> f32 {
    let w = g.backflow_weight(bx, by);
    if w > 0.0 { val * (1.0 - w) } else { val }
}

/// New v at face `(i, j)`.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn advect_v_face(g: &G, p: &AdvectParams, dt: f32, decay: f32, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    if g.v_on_wall(j) {
        return g.wall_v(i, j);
    }
    let (x, y) = (i as f32 + 0.5, g.vj(j) as f32);
    let (bx, by) = backtrace(g, u, v, p.order, dt * g.inv_h, x, y);
    backflow(g, sample_v(g, v, bx, by) * decay, bx, by)
}

/// Advect both velocity components into `u_out`, `v_out`. Faces go through
/// [`backtrace_lanes`] [`LANES`] at a time, the first stage from [`velocity_at_u_faces`] /
/// [`velocity_at_v_faces`]; the result equals [`advect_u_face`] / [`advect_v_face`] bit for
/// bit (tested).
pub fn run(g: &G, p: &AdvectParams, dt: f32, u: &[f32], v: &[f32], u_out: &mut [f32], v_out: &mut [f32]) {
    let decay = (-p.velocity_dissipation * dt).exp();
    let s = dt * g.inv_h;
    let open = g.has_open();
    #[cfg(target_arch = "x86_64")]
    let avx2 = Avx2::get().filter(|_| g.walls_two_wide());
    for_each_row(
        u_out,
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            let y = j as f32 + 0.5;
            for (c, chunk) in row.chunks_mut(LANES).enumerate() {
                let i0 = c * LANES;
                // Whole batches in AVX2 vectors: the same arithmetic (see `avx2`). Not the one
                // holding face `nx` of a periodic axis, which is face 0 (`G::ui`), not `x = nx`.
                #[cfg(target_arch = "x86_64")]
                if let Some(a) = avx2
                    && chunk.len() == LANES
                    && !(g.px && i0 + LANES > g.nx)
                {
                    let xs = a.iota(i0);
                    let k1 = velocity_at_u_faces(g, u, v, (i0, j), &a.store(xs), y);
                    let (bx, by) = a.backtrace(g, u, v, p.order, s, (xs, a.splat(y)), (a.load(k1.0), a.load(k1.1)));
                    let val = a.store(a.mul(a.sample_u(g, u, bx, by), a.splat(decay)));
                    let (bx, by) = (a.store(bx), a.store(by));
                    for (k, out) in chunk.iter_mut().enumerate() {
                        *out = if g.u_on_wall(i0 + k) {
                            g.wall_u(i0 + k, j)
                        } else if open {
                            backflow(g, val[k], bx[k], by[k])
                        } else {
                            val[k]
                        };
                    }
                    continue;
                }
                // Through i32 (exact: at most 32769 columns): x86 has a vector conversion from i32
                // to f32, not from usize, which left these eight conversions scalar.
                let xs: [f32; LANES] = std::array::from_fn(|k| g.ui((i0 + k).min(g.nx)) as i32 as f32);
                let k1 = velocity_at_u_faces(g, u, v, (i0, j), &xs, y);
                let (bx, by) = backtrace_lanes(g, u, v, p.order, s, &xs, &[y; LANES], k1);
                let val = sample_u_lanes(g, u, &bx, &by);
                for (k, out) in chunk.iter_mut().enumerate() {
                    *out = if g.u_on_wall(i0 + k) {
                        g.wall_u(i0 + k, j)
                    } else if open {
                        backflow(g, val[k] * decay, bx[k], by[k])
                    } else {
                        val[k] * decay
                    };
                }
            }
        },
    );
    for_each_row(
        v_out,
        g.nx,
        #[inline(always)]
        |j, row| {
            let y = g.vj(j) as f32;
            let wall = g.v_on_wall(j);
            for (c, chunk) in row.chunks_mut(LANES).enumerate() {
                let i0 = c * LANES;
                if wall {
                    for (k, out) in chunk.iter_mut().enumerate() {
                        *out = g.wall_v(i0 + k, j);
                    }
                    continue;
                }
                #[cfg(target_arch = "x86_64")]
                if let Some(a) = avx2
                    && chunk.len() == LANES
                {
                    let xs = a.add(a.iota(i0), a.splat(0.5));
                    let k1 = velocity_at_v_faces(g, u, v, (i0, j), &a.store(xs), y);
                    let (bx, by) = a.backtrace(g, u, v, p.order, s, (xs, a.splat(y)), (a.load(k1.0), a.load(k1.1)));
                    chunk.copy_from_slice(&a.store(a.mul(a.sample_v(g, v, bx, by), a.splat(decay))));
                    if open {
                        let (bx, by) = (a.store(bx), a.store(by));
                        for (k, out) in chunk.iter_mut().enumerate() {
                            *out = backflow(g, *out, bx[k], by[k]);
                        }
                    }
                    continue;
                }
                // Through i32, as above.
                let xs: [f32; LANES] = std::array::from_fn(|k| (i0 + k).min(g.nx - 1) as i32 as f32 + 0.5);
                let k1 = velocity_at_v_faces(g, u, v, (i0, j), &xs, y);
                let (bx, by) = backtrace_lanes(g, u, v, p.order, s, &xs, &[y; LANES], k1);
                let val = sample_v_lanes(g, v, &bx, &by);
                for (k, out) in chunk.iter_mut().enumerate() {
                    *out = if open { backflow(g, val[k] * decay, bx[k], by[k]) } else { val[k] * decay };
                }
            }
        },
    );
}

/// The table's entry: a dispatch of `advect_velocity` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: AdvectParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, s.r("u"), s.r("v"), s.w("u_out"), s.w("v_out"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::grid::Side;
    use swirly_core::{Boundary, Grid};

    /// u = 1 everywhere drawn in through an open left side, a step of half a cell: the faces
    /// traced half a cell past the side keep half their speed (the ambient fluid beyond is at
    /// rest), those traced inside all of it; the right wall's faces hold zero.
    #[test]
    fn backflow_through_an_open_side_brings_no_momentum() {
        let wall = Side::of(Boundary::Wall);
        let grid = Grid::new(8, 4, 0.25, Boundary::Wall, Boundary::Wall).expect("grid");
        let grid = grid.with_sides([Side::Open, wall, wall, wall]).expect("sides");
        let g = G::new(&grid.uniform());
        let (u, v) = (vec![1.0; 9 * 4], vec![0.0; 8 * 5]);
        for order in 1..=3 {
            let p = AdvectParams { order, ..AdvectParams::default() };
            let (mut uo, mut vo) = (vec![9.0; u.len()], vec![9.0; v.len()]);
            run(&g, &p, 0.125, &u, &v, &mut uo, &mut vo);
            for row in uo.chunks(9) {
                assert_eq!(row, &[0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0], "order {order}");
            }
            assert!(vo.iter().all(|x| *x == 0.0), "order {order}: {vo:?}");
        }
    }

    #[test]
    fn batched_faces_equal_the_one_face_functions() {
        // Wide enough for whole interior batches of lanes, and edge ones; and one cell wide.
        for (bx, by, nx, ny) in [
            (Boundary::Wall, Boundary::Wall, 29, 9),
            (Boundary::Periodic, Boundary::Wall, 29, 9),
            (Boundary::Periodic, Boundary::Periodic, 29, 9),
            // u rows of 32 faces: the last whole batch holds face `nx`, which is face 0.
            (Boundary::Periodic, Boundary::Wall, 31, 9),
            (Boundary::Wall, Boundary::Periodic, 17, 12),
            (Boundary::Periodic, Boundary::Periodic, 2, 2),
            (Boundary::Wall, Boundary::Wall, 1, 6),
            (Boundary::Wall, Boundary::Wall, 12, 1),
            // Open sides (the backflow blend): bx Open stands for left, right and top open.
            (Boundary::Open, Boundary::Wall, 29, 9),
            (Boundary::Open, Boundary::Wall, 2, 3),
        ] {
            let base = if bx == Boundary::Open { Boundary::Wall } else { bx };
            let mut grid = Grid::new(nx, ny, 0.1, base, by).expect("grid");
            if bx == Boundary::Open {
                let wall = Side::of(Boundary::Wall);
                grid = grid.with_sides([Side::Open, Side::Open, wall, Side::Open]).expect("sides");
            }
            let g = G::new(&grid.uniform());
            let mut rng = swirly_core::scene::SplitMix64(3);
            let u: Vec<f32> = (0..grid.len(swirly_core::FieldId::U)).map(|_| 4.0 * rng.next_f32() - 2.0).collect();
            let v: Vec<f32> = (0..grid.len(swirly_core::FieldId::V)).map(|_| 4.0 * rng.next_f32() - 2.0).collect();
            for order in 1..=3 {
                let p = AdvectParams { order, velocity_dissipation: 0.3, ..AdvectParams::default() };
                let (mut uo, mut vo) = (vec![0.0; u.len()], vec![0.0; v.len()]);
                run(&g, &p, 0.07, &u, &v, &mut uo, &mut vo);
                let decay = (-0.3f32 * 0.07).exp();
                for j in 0..ny as usize {
                    for i in 0..=nx as usize {
                        assert_eq!(uo[g.u(i, j)].to_bits(), advect_u_face(&g, &p, 0.07, decay, &u, &v, i, j).to_bits());
                    }
                }
                for j in 0..=ny as usize {
                    for i in 0..nx as usize {
                        assert_eq!(vo[g.v(i, j)].to_bits(), advect_v_face(&g, &p, 0.07, decay, &u, &v, i, j).to_bits());
                    }
                }
            }
        }
    }
}
