//! `particle_scan_add`: each value of a block-wise prefix sum plus the scanned totals of the
//! blocks before its own, which makes it the prefix sum of the whole.

use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::{SCAN_BLOCK, ScanParams};

use super::common::particles::{words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// Add `totals[i / SCAN_BLOCK]` to `scanned[i]`.
pub fn run(len: usize, scanned: &mut [u32], totals: &[u32]) {
    let block = SCAN_BLOCK as usize;
    for (s, t) in scanned[..len].chunks_mut(block).zip(totals) {
        s.iter_mut().for_each(|x| *x = x.wrapping_add(*t));
    }
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: ScanParams = d.params().unwrap_or_default();
    let scanned = words_mut(s.w("scanned"));
    run(p.len as usize, scanned, words(s.r("totals")));
}
