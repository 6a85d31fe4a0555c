//! `particle_density`: a particle's density `ρ = Σ (1 − q)²` and near-density
//! `ρ_near = Σ (1 − q)³` over its neighbours (`q = r / h < 1`), and from them its pressure
//! `k (ρ − ρ0)` and near-pressure `k_near ρ_near` (Clavet et al. 2005, algorithm 2).

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::DensityParams;

use super::common::particles::{neighbour_runs, pairs, pairs_mut, words};
use crate::dispatch::{Ctx, Slots};

/// The density and near-density of the particle in slot `i`.
#[inline(always)]
pub fn densities(p: &DensityParams, position: &[[f32; 2]], cell: &[u32], starts: &[u32], i: u32) -> [f32; 2] {
    let xi = position[i as usize];
    let (mut rho, mut near) = (0.0f32, 0.0f32);
    for (a, b) in neighbour_runs(cell[i as usize], p.cells_x, p.cells_y, starts) {
        for j in a..b {
            if j == i {
                continue;
            }
            let xj = position[j as usize];
            let r = [xj[0] - xi[0], xj[1] - xi[1]];
            let d2 = r[0] * r[0] + r[1] * r[1];
            if d2 >= p.radius_sq {
                continue;
            }
            let a = 1.0 - d2.sqrt() * p.inv_radius;
            let a2 = a * a;
            rho += a2;
            near += a2 * a;
        }
    }
    [rho, near]
}

/// Every live particle's `[pressure, near-pressure]`.
pub fn run(p: &DensityParams, position: &[[f32; 2]], cell: &[u32], starts: &[u32], out: &mut [[f32; 2]]) {
    out[..p.count as usize].par_iter_mut().enumerate().for_each(|(i, o)| {
        let [rho, near] = densities(p, position, cell, starts, i as u32);
        *o = [p.stiffness * (rho - p.rest_density), p.near_stiffness * near];
    });
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DensityParams = d.params().unwrap_or_default();
    let (position, cell, starts) = (pairs(s.r("position")), words(s.r("cell")), words(s.r("starts")));
    run(&p, position, cell, starts, pairs_mut(s.w("pressure")));
}
