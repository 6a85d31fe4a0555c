//! `particle_order`: each hash cell's run of particle indices sorted ascending, which makes the
//! counting sort stable whatever order the scatter left a run in.

use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::HashParams;

use super::common::particles::{words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// Sort the run of each of `cells` cells.
pub fn run(cells: usize, starts: &[u32], order: &mut [u32]) {
    for c in 0..cells {
        let (a, b) = (starts[c] as usize, starts[c + 1] as usize);
        if b > a + 1 {
            order[a..b].sort_unstable();
        }
    }
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: HashParams = d.params().unwrap_or_default();
    let starts = words(s.r("starts"));
    run((p.cells_x * p.cells_y) as usize, starts, words_mut(s.w("order")));
}
