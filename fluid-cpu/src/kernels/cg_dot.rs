//! `cg_dot`: a dot product of two level-0 vectors of the packed buffer, in the GPU's two passes
//! and summation order: pass 0 (`flag = 0`): `count` workgroups of 256 lanes each fold one
//! contiguous chunk (lane `t` takes elements `t, t + 256, …`, then a pairwise tree) into
//! `partials[wg]`; pass 1: one workgroup folds the partials the same way into
//! `scalars[slot]`.

use swirly_core::grid::uniforms::CgParams;

use rayon::prelude::*;

use super::common::split_around;
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

const WG: usize = 256;

/// The GPU's tree: `s = 128, 64, …, 1: lane[t] += lane[t + s]`.
fn tree(mut lanes: [f32; WG]) -> f32 {
    let mut s = WG / 2;
    while s > 0 {
        for t in 0..s {
            lanes[t] += lanes[t + s];
        }
        s /= 2;
    }
    lanes[0]
}

/// One pass.
pub fn run(params: &CgParams, mg: &mut [f32]) {
    let count = params.count as usize;
    if params.flag == 0 {
        let len = (params.nx * params.ny) as usize;
        let chunk = len.div_ceil(count);
        let (partials, read) = split_around(mg, params.partials as usize, count);
        // The operands lie outside the partial sums.
        let operand = |at: u32| read.slice(at as usize, len).expect("cg_dot's operands lie outside its partial sums");
        let (x, z) = (operand(params.x), operand(params.z));
        let arch = crate::simd::arch();
        partials.par_iter_mut().enumerate().for_each(|(wg, out)| {
            crate::simd::vectorized(
                arch,
                #[inline(always)]
                || {
                    let (start, end) = ((wg * chunk).min(len), ((wg + 1) * chunk).min(len));
                    // Lane t sums x·z at start + t, start + t + WG, … in that order, as the
                    // GPU's lanes do; block by block, so that the lanes add together.
                    let mut lanes = [0.0f32; WG];
                    for (xs, zs) in x[start..end].chunks(WG).zip(z[start..end].chunks(WG)) {
                        for ((lane, a), b) in lanes.iter_mut().zip(xs).zip(zs) {
                            *lane += a * b;
                        }
                    }
                    *out = tree(lanes);
                },
            )
        });
    } else {
        let mut lanes = [0.0f32; WG];
        for (t, lane) in lanes.iter_mut().enumerate() {
            let mut k = t;
            while k < count {
                *lane += mg[params.partials as usize + k];
                k += WG;
            }
        }
        mg[params.scalars as usize + params.slot as usize] = tree(lanes);
    }
}

/// The table's entry: a dispatch of `cg_dot` on the CPU.
pub(crate) fn dispatch(_c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: CgParams = d.params().unwrap_or_default();
    run(&p, s.w("mg"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The partial pass against the GPU's lane order written out one product at a time.
    #[test]
    fn partial_sums_follow_the_lanes_order() {
        for (len, count) in [(1000usize, 7usize), (256 * 3 + 5, 3), (10, 16), (70_000, 64)] {
            let mut rng = swirly_core::scene::SplitMix64(23);
            let mut mg: Vec<f32> = (0..2 * len + count).map(|_| 4.0 * rng.next_f32() - 2.0).collect();
            let params = CgParams {
                nx: len as u32,
                ny: 1,
                x: 0,
                z: len as u32,
                partials: 2 * len as u32,
                count: count as u32,
                ..CgParams::default()
            };
            let before = mg.clone();
            run(&params, &mut mg);
            let chunk = len.div_ceil(count);
            for wg in 0..count {
                let (start, end) = ((wg * chunk).min(len), ((wg + 1) * chunk).min(len));
                let mut lanes = [0.0f32; WG];
                for (t, lane) in lanes.iter_mut().enumerate() {
                    let mut k = start + t;
                    while k < end {
                        *lane += before[k] * before[len + k];
                        k += WG;
                    }
                }
                assert_eq!(mg[2 * len + wg].to_bits(), tree(lanes).to_bits(), "len {len} wg {wg}");
            }
            assert_eq!(&mg[..2 * len], &before[..2 * len]);
        }
    }
}
