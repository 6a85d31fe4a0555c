//! `particle_hash`: each particle's hash cell into `keys`, and one more in that cell's count
//! (the shader's atomic add; counted here in index order, the same sums).

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::HashParams;

use super::common::particles::{cell_of, pairs, words_mut};
use crate::dispatch::{Ctx, Slots};

/// Hash the first `p.count` particles.
pub fn run(p: &HashParams, position: &[[f32; 2]], keys: &mut [u32], counts: &mut [u32]) {
    let n = p.count as usize;
    keys[..n].par_iter_mut().zip(&position[..n]).for_each(|(k, x)| *k = cell_of(*x, p.inv_cell, p.cells_x, p.cells_y));
    for k in &keys[..n] {
        counts[*k as usize] += 1;
    }
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: HashParams = d.params().unwrap_or_default();
    let position = pairs(s.r("position"));
    let keys = words_mut(s.w("keys"));
    run(&p, position, keys, words_mut(s.w("counts")));
}
