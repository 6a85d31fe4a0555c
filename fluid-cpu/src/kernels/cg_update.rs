//! `cg_update`: α = (r·z) / (d·q) (zero unless both are positive: with a preconditioner that
//! is not exactly symmetric, `r·z` at the rounding floor can be ≤ 0, and the step is skipped),
//! cut to 12 significant bits; `x += α d` in double-float (the high part at `x`, the low part
//! after it), with the product `α d` exact ([`df_add_product`]); `r −= α q`. An f32 product would round the first update, which is
//! about the size of the whole pressure, and leave the f32 floor in `x` that double-float is
//! there to remove; the short α makes the product exact and is the same α for `x` and `r`.

use swirly_core::grid::uniforms::CgParams;

use rayon::prelude::*;

use super::common::{df_add_product, trunc12};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// α from the scalars.
pub fn alpha(params: &CgParams, mg: &[f32]) -> f32 {
    let dq = mg[params.scalars as usize + 2];
    let rz = mg[params.scalars as usize + params.slot as usize];
    if dq > 0.0 && rz > 0.0 { trunc12(rz / dq) } else { 0.0 }
}

/// Update `x` and `r` over level 0, in parallel blocks of cells that vectorise (each cell's
/// arithmetic is its own, so the blocks change no bit).
pub fn run(params: &CgParams, mg: &mut [f32]) {
    let a = alpha(params, mg);
    let n = (params.nx * params.ny) as usize;
    let at = |o: usize| o..o + n;
    let [x, xl, r, d, q] = mg
        .get_disjoint_mut([
            at(params.x as usize),
            at(params.x as usize + n),
            at(params.r as usize),
            at(params.d as usize),
            at(params.q as usize),
        ])
        .expect("MGPCG's x, r, d and q are disjoint arrays of the packed buffer");
    let (d, q) = (&*d, &*q);
    const BLOCK: usize = 4096;
    let arch = crate::simd::arch();
    x.par_chunks_mut(BLOCK)
        .zip(xl.par_chunks_mut(BLOCK))
        .zip(r.par_chunks_mut(BLOCK))
        .zip(d.par_chunks(BLOCK).zip(q.par_chunks(BLOCK)))
        .for_each(|(((x, xl), r), (d, q))| {
            crate::simd::vectorized(
                arch,
                #[inline(always)]
                || {
                    for c in 0..x.len().min(xl.len()).min(r.len()).min(d.len()).min(q.len()) {
                        (x[c], xl[c]) = df_add_product(x[c], xl[c], a, d[c]);
                        r[c] -= a * q[c];
                    }
                },
            )
        });
}

/// The table's entry: a dispatch of `cg_update` on the CPU.
pub(crate) fn dispatch(_c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: CgParams = d.params().unwrap_or_default();
    run(&p, s.w("mg"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks against the update written cell by cell, with `x` and `r` in either order
    /// and more cells than one block.
    #[test]
    fn blocks_equal_the_cell_by_cell_update() {
        let n = 5000usize;
        for (x, r, d, q) in [(0, 2 * n, 3 * n, 4 * n), (3 * n, 0, n, 2 * n)] {
            let mut rng = swirly_core::scene::SplitMix64(29);
            let mut mg: Vec<f32> = (0..5 * n + 3).map(|_| 4.0 * rng.next_f32() - 2.0).collect();
            let scalars = 5 * n;
            (mg[scalars], mg[scalars + 2]) = (0.7, 1.3);
            let u = |v: usize| v as u32;
            let params = CgParams {
                nx: 100,
                ny: 50,
                x: u(x),
                r: u(r),
                d: u(d),
                q: u(q),
                scalars: u(scalars),
                ..CgParams::default()
            };
            let mut want = mg.clone();
            let a = alpha(&params, &want);
            assert!(a > 0.0);
            for c in 0..n {
                (want[x + c], want[x + n + c]) = df_add_product(want[x + c], want[x + n + c], a, want[d + c]);
                want[r + c] -= a * want[q + c];
            }
            run(&params, &mut mg);
            assert!(mg.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }
}
