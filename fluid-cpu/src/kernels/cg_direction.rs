//! `cg_direction`: the new search direction `d = z + β d` with β = (r·z) / (r·z of the previous
//! iteration); `d = z` on the first iteration (`flag = 1`) or when the previous product is zero.

use fluid_core::uniforms::CgParams;

use super::common::split_around;

/// β from the scalars.
pub fn beta(params: &CgParams, scalars: impl Fn(usize) -> f32) -> Option<f32> {
    let old = scalars(params.scalars as usize + (1 - params.slot as usize));
    (params.flag == 0 && old != 0.0).then(|| scalars(params.scalars as usize + params.slot as usize) / old)
}

/// Update `d` over level 0.
pub fn run(params: &CgParams, mg: &mut [f32]) {
    let n = (params.nx * params.ny) as usize;
    let (d, read) = split_around(mg, params.d as usize, n);
    let beta = beta(params, |k| read.get(k));
    for (c, x) in d.iter_mut().enumerate() {
        let z = read.get(params.z as usize + c);
        *x = match beta {
            Some(b) => z + b * *x,
            None => z,
        };
    }
}
