//! `cg_dot`: a dot product of two level-0 vectors of the packed buffer, in the GPU's two passes
//! and summation order: pass 0 (`flag = 0`): `count` workgroups of 256 lanes each fold one
//! contiguous chunk (lane `t` takes elements `t, t + 256, …`, then a pairwise tree) into
//! `partials[wg]`; pass 1: one workgroup folds the partials the same way into
//! `scalars[slot]`.

use fluid_core::uniforms::CgParams;

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
        for wg in 0..count {
            let (start, end) = (wg * chunk, ((wg + 1) * chunk).min(len));
            let mut lanes = [0.0f32; WG];
            for (t, lane) in lanes.iter_mut().enumerate() {
                let mut k = start + t;
                while k < end {
                    *lane += mg[params.x as usize + k] * mg[params.z as usize + k];
                    k += WG;
                }
            }
            mg[params.partials as usize + wg] = tree(lanes);
        }
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
