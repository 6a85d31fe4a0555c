//! `cg_update`: α = (r·z) / (d·q) (zero unless both are positive: with a preconditioner that
//! is not exactly symmetric, `r·z` at the rounding floor can be ≤ 0, and the step is skipped),
//! cut to 12 significant bits; `x += α d` in double-float (the high part at `x`, the low part
//! after it), with the product `α d` exact ([`df_add_product`]); `r −= α q`. An f32 product would round the first update, which is
//! about the size of the whole pressure, and leave the f32 floor in `x` that double-float is
//! there to remove; the short α makes the product exact and is the same α for `x` and `r`.

use fluid_core::uniforms::CgParams;

use super::common::{df_add_product, trunc12};

/// α from the scalars.
pub fn alpha(params: &CgParams, mg: &[f32]) -> f32 {
    let dq = mg[params.scalars as usize + 2];
    let rz = mg[params.scalars as usize + params.slot as usize];
    if dq > 0.0 && rz > 0.0 { trunc12(rz / dq) } else { 0.0 }
}

/// Update `x` and `r` over level 0.
pub fn run(params: &CgParams, mg: &mut [f32]) {
    let a = alpha(params, mg);
    let n = (params.nx * params.ny) as usize;
    let (x, xl) = (params.x as usize, params.x as usize + n);
    for c in 0..n {
        let d = mg[params.d as usize + c];
        let q = mg[params.q as usize + c];
        (mg[x + c], mg[xl + c]) = df_add_product(mg[x + c], mg[xl + c], a, d);
        mg[params.r as usize + c] -= a * q;
    }
}
