//! `particle_relax`: double density relaxation in gather form. A pair at distance `r < h`
//! pushes each of its particles by `½ dt² ((P_i + P_j)(1 − q) + (P_near,i + P_near,j)(1 − q)²)`
//! along the line between them, away from each other: the paper's two displacements of the pair
//! (algorithm 2, from i's pressures and from j's), half to each particle. Each particle sums
//! its own; the pair's are equal and opposite, so momentum is conserved.

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::RelaxParams;

use super::common::particles::{direction, neighbour_runs, pairs, pairs_mut, words};
use crate::dispatch::{Ctx, Slots};

/// What the pass reads.
pub struct Inputs<'a> {
    /// Positions, in sorted order.
    pub position: &'a [[f32; 2]],
    /// Each particle's pressure and near-pressure.
    pub pressure: &'a [[f32; 2]],
    /// Each slot's hash cell.
    pub cell: &'a [u32],
    /// Each hash cell's first slot.
    pub starts: &'a [u32],
}

/// The relaxed position of the particle in slot `i`.
#[inline(always)]
pub fn relaxed(p: &RelaxParams, dt: f32, s: &Inputs<'_>, i: u32) -> [f32; 2] {
    let (xi, pi) = (s.position[i as usize], s.pressure[i as usize]);
    let half_dt2 = 0.5 * dt * dt;
    let mut dx = [0.0f32; 2];
    for (a, b) in neighbour_runs(s.cell[i as usize], p.cells_x, p.cells_y, s.starts) {
        for j in a..b {
            if j == i {
                continue;
            }
            let (xj, pj) = (s.position[j as usize], s.pressure[j as usize]);
            let r = [xj[0] - xi[0], xj[1] - xi[1]];
            let d2 = r[0] * r[0] + r[1] * r[1];
            if d2 >= p.radius_sq {
                continue;
            }
            let d = d2.sqrt();
            let n = direction(r, d, i, j);
            let a = 1.0 - d * p.inv_radius;
            let push = half_dt2 * ((pi[0] + pj[0]) * a + (pi[1] + pj[1]) * (a * a));
            dx[0] -= push * n[0];
            dx[1] -= push * n[1];
        }
    }
    [xi[0] + dx[0], xi[1] + dx[1]]
}

/// Every live particle.
pub fn run(p: &RelaxParams, dt: f32, s: &Inputs<'_>, out: &mut [[f32; 2]]) {
    out[..p.count as usize].par_iter_mut().enumerate().for_each(|(i, o)| *o = relaxed(p, dt, s, i as u32));
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: RelaxParams = d.params().unwrap_or_default();
    let inputs = Inputs {
        position: pairs(s.r("position")),
        pressure: pairs(s.r("pressure")),
        cell: words(s.r("cell")),
        starts: words(s.r("starts")),
    };
    run(&p, c.dt * p.dt_scale, &inputs, pairs_mut(s.w("relaxed")));
}
