//! `particle_scan`: the exclusive prefix sum of each block of [`SCAN_BLOCK`] values, and each
//! block's total (the shader's workgroup scan; `particle_scan_add` joins the blocks).

use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::{SCAN_BLOCK, ScanParams};

use super::common::particles::{words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// Scan `values[..len]` block by block into `scanned`, the blocks' totals into `totals`.
pub fn run(len: usize, values: &[u32], scanned: &mut [u32], totals: &mut [u32]) {
    let block = SCAN_BLOCK as usize;
    for (b, (v, s)) in values[..len].chunks(block).zip(scanned[..len].chunks_mut(block)).enumerate() {
        let mut sum = 0u32;
        for (x, y) in v.iter().zip(s.iter_mut()) {
            *y = sum;
            sum = sum.wrapping_add(*x);
        }
        totals[b] = sum;
    }
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: ScanParams = d.params().unwrap_or_default();
    let values = words(s.r("values"));
    let scanned = words_mut(s.w("scanned"));
    run(p.len as usize, values, scanned, words_mut(s.w("totals")));
}
