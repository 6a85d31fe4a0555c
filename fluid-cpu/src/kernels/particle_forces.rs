//! `particle_forces`: gravity and the viscosity impulses (Clavet et al. 2005, algorithm 5) on a
//! particle's velocity, then its advanced position `x + dt v`. A pair approaching at speed
//! `u = (v_i − v_j)·n` (n from i to j) exchanges `I = dt (1 − q)(σ u + β u²) n`, half to each,
//! in opposite directions; each particle sums its own halves from the velocities before the
//! pass, so the pair's halves cancel exactly.

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::ViscosityParams;

use super::common::particles::{direction, neighbour_runs, pairs, pairs_mut, words};
use crate::dispatch::{Ctx, Slots};

/// What the pass reads.
pub struct Inputs<'a> {
    /// Positions, in sorted order.
    pub position: &'a [[f32; 2]],
    /// Velocities.
    pub velocity: &'a [[f32; 2]],
    /// Each slot's hash cell.
    pub cell: &'a [u32],
    /// Each hash cell's first slot.
    pub starts: &'a [u32],
}

/// The advanced position of the particle in slot `i`.
#[inline(always)]
pub fn advanced(p: &ViscosityParams, dt: f32, s: &Inputs<'_>, i: u32) -> [f32; 2] {
    let (xi, vi) = (s.position[i as usize], s.velocity[i as usize]);
    let mut dv = [0.0f32; 2];
    for (a, b) in neighbour_runs(s.cell[i as usize], p.cells_x, p.cells_y, s.starts) {
        for j in a..b {
            if j == i {
                continue;
            }
            let (xj, vj) = (s.position[j as usize], s.velocity[j as usize]);
            let r = [xj[0] - xi[0], xj[1] - xi[1]];
            let d2 = r[0] * r[0] + r[1] * r[1];
            if d2 >= p.radius_sq {
                continue;
            }
            let d = d2.sqrt();
            let n = direction(r, d, i, j);
            let u = (vi[0] - vj[0]) * n[0] + (vi[1] - vj[1]) * n[1];
            if u > 0.0 {
                let a = 1.0 - d * p.inv_radius;
                let half = 0.5 * (dt * a * (p.sigma * u + p.beta * u * u));
                dv[0] -= half * n[0];
                dv[1] -= half * n[1];
            }
        }
    }
    let v = [vi[0] + p.gravity[0] * dt + dv[0], vi[1] + p.gravity[1] * dt + dv[1]];
    [xi[0] + dt * v[0], xi[1] + dt * v[1]]
}

/// Every live particle.
pub fn run(p: &ViscosityParams, dt: f32, s: &Inputs<'_>, out: &mut [[f32; 2]]) {
    out[..p.count as usize].par_iter_mut().enumerate().for_each(|(i, o)| *o = advanced(p, dt, s, i as u32));
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: ViscosityParams = d.params().unwrap_or_default();
    let inputs = Inputs {
        position: pairs(s.r("position")),
        velocity: pairs(s.r("velocity")),
        cell: words(s.r("cell")),
        starts: words(s.r("starts")),
    };
    run(&p, c.dt * p.dt_scale, &inputs, pairs_mut(s.w("advanced")));
}
