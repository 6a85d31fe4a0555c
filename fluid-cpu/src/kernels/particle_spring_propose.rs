//! `particle_spring_propose`: each particle's springs after the substep's advance (Clavet et
//! al. 2005, algorithm 4), proposed for `particle_spring_confirm`. A held spring whose pair
//! lies within h yields: its rest length L follows the distance r at the plasticity α once r
//! leaves `L (1 ± γ)`; one whose L passes h is dropped. Then each neighbour within h the
//! particle holds none with gets one of rest length h (yielded the same way), in slot order,
//! while its list has room. Lists are kept by stable id, two words an entry: the partner's id
//! and the rest length's bits, packed from the start, [`NO_SPRING`] after.

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::{NO_SPRING, SpringParams};

use super::common::particles::{neighbour_runs, pairs, words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// What the pass reads.
pub struct Inputs<'a> {
    /// Positions, in sorted order.
    pub position: &'a [[f32; 2]],
    /// Each slot's hash cell.
    pub cell: &'a [u32],
    /// Each hash cell's first slot.
    pub starts: &'a [u32],
    /// Each slot's stable id.
    pub ids: &'a [u32],
    /// Each id's slot.
    pub slots: &'a [u32],
    /// The held springs, by id.
    pub springs: &'a [u32],
}

/// The rest length `rest` of a spring whose pair is `r` apart, after a substep of `dt`.
#[inline(always)]
pub fn yielded(p: &SpringParams, rest: f32, r: f32, dt: f32) -> f32 {
    let tolerance = p.yield_ratio * rest;
    if r > rest + tolerance {
        rest + dt * p.plasticity * (r - rest - tolerance)
    } else if r < rest - tolerance {
        rest - dt * p.plasticity * (rest - tolerance - r)
    } else {
        rest
    }
}

/// The proposals of the particle in slot `i` into its list `out` (`2 × max_springs` words).
pub fn propose(p: &SpringParams, dt: f32, s: &Inputs<'_>, i: u32, out: &mut [u32]) {
    let k_max = p.max_springs as usize;
    let base = 2 * s.ids[i as usize] as usize * k_max;
    let held = &s.springs[base..base + 2 * k_max];
    let xi = s.position[i as usize];
    let mut n = 0;
    let put = |out: &mut [u32], n: &mut usize, b: u32, rest: f32| {
        out[2 * *n] = b;
        out[2 * *n + 1] = rest.to_bits();
        *n += 1;
    };
    for e in held.chunks_exact(2) {
        let b = e[0];
        if b == NO_SPRING {
            break;
        }
        let mut rest = f32::from_bits(e[1]);
        let xj = s.position[s.slots[b as usize] as usize];
        let r = [xj[0] - xi[0], xj[1] - xi[1]];
        let d = (r[0] * r[0] + r[1] * r[1]).sqrt();
        if d < p.radius {
            rest = yielded(p, rest, d, dt);
        }
        if rest > p.radius {
            continue;
        }
        put(out, &mut n, b, rest);
    }
    'runs: for (a, end) in neighbour_runs(s.cell[i as usize], p.cells_x, p.cells_y, s.starts) {
        for j in a..end {
            if n == k_max {
                break 'runs;
            }
            if j == i {
                continue;
            }
            let xj = s.position[j as usize];
            let r = [xj[0] - xi[0], xj[1] - xi[1]];
            let d2 = r[0] * r[0] + r[1] * r[1];
            if d2 >= p.radius_sq {
                continue;
            }
            let b = s.ids[j as usize];
            if out[..2 * n].chunks_exact(2).any(|e| e[0] == b) {
                continue;
            }
            put(out, &mut n, b, yielded(p, p.radius, d2.sqrt(), dt));
        }
    }
    for e in out[2 * n..].chunks_exact_mut(2) {
        e[0] = NO_SPRING;
        e[1] = 0;
    }
}

/// Every live particle (each writes its own id's list).
pub fn run(p: &SpringParams, dt: f32, s: &Inputs<'_>, proposals: &mut [u32]) {
    let n = p.count as usize;
    let lists = 2 * p.max_springs as usize;
    // Each id's list by its slot: the slots of ids are a permutation.
    let mut by_id: Vec<(u32, &mut [u32])> =
        proposals[..n * lists].chunks_exact_mut(lists).enumerate().map(|(a, l)| (s.slots[a], l)).collect();
    by_id.par_iter_mut().for_each(|(i, out)| propose(p, dt, s, *i, out));
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SpringParams = d.params().unwrap_or_default();
    let inputs = Inputs {
        position: pairs(s.r("position")),
        cell: words(s.r("cell")),
        starts: words(s.r("starts")),
        ids: words(s.r("ids")),
        slots: words(s.r("slots")),
        springs: words(s.r("springs")),
    };
    run(&p, c.dt * p.dt_scale, &inputs, words_mut(s.w("proposals")));
}
