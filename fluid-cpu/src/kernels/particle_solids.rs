//! `particle_solids`: each particle against the obstacles where they stand at the substep's
//! end. Inside one, it is put onto its outline along the normal (central differences of the
//! signed distance; up to three moves, each along the normal where it stands, near a
//! corner), its velocity follows the move, then relative to the solid's it loses any
//! inward part and the friction's share of the tangential part (Clavet et al. 2005,
//! algorithm 6). Outside but within reach of stickiness, it is pulled toward the solid by
//! `dt k_stick d (1 − d / reach)` (section 5.3). Distances are the host reference's,
//! [`swirly_core::frame::solid::nearest`].

use rayon::prelude::*;
use swirly_core::Grid;
use swirly_core::frame::solid::{Obstacle, nearest};
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::SolidParams;

use super::common::particles::pairs_mut;
use super::rasterise_solids::placed;
use crate::dispatch::{Ctx, Slots};

/// The position and velocity of a particle at `x` moving at `v`, with `obstacles` where they
/// stand.
pub fn collide(
    p: &SolidParams,
    dt: f32,
    grid: &Grid,
    obstacles: &[Obstacle],
    x: [f32; 2],
    v: [f32; 2],
) -> ([f32; 2], [f32; 2]) {
    let (d, Some(o)) = nearest(grid, obstacles, x) else { return (x, v) };
    if !(d < 0.0 || d < p.stick_distance) {
        return (x, v);
    }
    let normal = |x: [f32; 2]| {
        let e = p.eps;
        let gx = o.distance([x[0] + e, x[1]]) - o.distance([x[0] - e, x[1]]);
        let gy = o.distance([x[0], x[1] + e]) - o.distance([x[0], x[1] - e]);
        let g = (gx * gx + gy * gy).sqrt();
        if g > 0.0 { [gx / g, gy / g] } else { [0.0, 1.0] }
    };
    let mut n = normal(x);
    if d < 0.0 {
        // Along the normal, and again (up to three moves) where a corner's normal left it short.
        let (mut x, mut v, mut d) = (x, v, d);
        for pass in 0..3 {
            if d >= 0.0 {
                break;
            }
            if pass > 0 {
                n = normal(x);
            }
            x = [x[0] - d * n[0], x[1] - d * n[1]];
            v = [v[0] - d / dt * n[0], v[1] - d / dt * n[1]];
            d = o.distance(x);
        }
        let vs = o.velocity_at(x);
        let rel = [v[0] - vs[0], v[1] - vs[1]];
        let vn = rel[0] * n[0] + rel[1] * n[1];
        let inward = vn.min(0.0);
        let tangent = [rel[0] - vn * n[0], rel[1] - vn * n[1]];
        let rel = [rel[0] - inward * n[0] - p.friction * tangent[0], rel[1] - inward * n[1] - p.friction * tangent[1]];
        return (x, [vs[0] + rel[0], vs[1] + rel[1]]);
    }
    let pull = dt * p.stickiness * d * (1.0 - d / p.stick_distance);
    (x, [v[0] - pull * n[0], v[1] - pull * n[1]])
}

/// Every live particle, the obstacles of the table `rows` standing where they are at `t`.
pub fn run(
    p: &SolidParams,
    g: &super::common::G,
    dt: f32,
    t: f32,
    rows: &[f32],
    position: &mut [[f32; 2]],
    velocity: &mut [[f32; 2]],
) {
    let Some((grid, obstacles)) = placed(g, rows, t) else { return };
    if obstacles.is_empty() {
        return;
    }
    let n = p.count as usize;
    position[..n].par_iter_mut().zip(&mut velocity[..n]).for_each(|(x, v)| {
        (*x, *v) = collide(p, dt, &grid, &obstacles, *x, *v);
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SolidParams = d.params().unwrap_or_default();
    let rows = s.r("obstacles");
    let position = pairs_mut(s.w("position"));
    let velocity = pairs_mut(s.w("velocity"));
    run(&p, c.g, c.dt * p.dt_scale, c.time + c.dt * p.t_scale, rows, position, velocity);
}
