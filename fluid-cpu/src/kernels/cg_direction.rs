//! `cg_direction`: the new search direction `d = z + β d` with β = (r·z) / (r·z of the previous
//! iteration); `d = z` (a restart along the preconditioned residual) on the first iteration
//! (`flag = 1`) and whenever `r·z` did not fall or is not positive. The V-cycle preconditioner is not exactly
//! symmetric (its restriction is not the transpose of its bilinear prolongation); once the
//! residual reaches its rounding floor, the classical recurrence without that restart lost
//! conjugacy and blew up (measured at 256²: 4e-7 after 6 iterations, 0.1 after 16).

use swirly_core::grid::uniforms::CgParams;

use rayon::prelude::*;

use super::common::split_around;
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// β from the scalars; `None` for `d = z`.
pub fn beta(params: &CgParams, scalars: impl Fn(usize) -> f32) -> Option<f32> {
    let s = params.scalars as usize;
    let old = scalars(s + (1 - params.slot as usize));
    let rz = scalars(s + params.slot as usize);
    // Written so that a NaN restarts too.
    (params.flag == 0 && rz > 0.0 && rz < old).then(|| rz / old)
}

/// Update `d` over level 0.
pub fn run(params: &CgParams, mg: &mut [f32]) {
    let n = (params.nx * params.ny) as usize;
    let (d, read) = split_around(mg, params.d as usize, n);
    let beta = beta(params, |k| read.get(k));
    // `z` lies outside `d`.
    let z = read.slice(params.z as usize, n).expect("z lies outside d");
    let arch = crate::simd::arch();
    d.par_chunks_mut(4096).zip(z.par_chunks(4096)).for_each(|(d, z)| {
        crate::simd::vectorized(
            arch,
            #[inline(always)]
            || match beta {
                Some(b) => d.iter_mut().zip(z).for_each(|(x, &z)| *x = z + b * *x),
                None => d.copy_from_slice(z),
            },
        )
    });
}

/// The table's entry: a dispatch of `cg_direction` on the CPU.
pub(crate) fn dispatch(_c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: CgParams = d.params().unwrap_or_default();
    run(&p, s.w("mg"));
}
