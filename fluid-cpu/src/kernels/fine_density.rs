//! The density on its finer grid (`factor` cells per cell along each axis), two kernels
//! (`advect_channels` and `splat_cells` advect it and add the splats to it): `coarse_density`
//! (its mean over each velocity cell, read by the forces and combustion) and `fine_soot` (what
//! combustion added to a velocity cell, added to its fine cells).

use swirly_core::grid::uniforms::DyeParams;

use super::common::{G, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `coarse_density`: the mean of each velocity cell's fine cells into `coarse` and `mean`.
pub fn run_coarse(g: &G, p: &DyeParams, density: &[f32], coarse: &mut [f32], mean: &mut [f32]) {
    let f = p.factor.max(1) as usize;
    let fx = g.nx * f;
    let area = (f * f) as f32;
    for_each_row(coarse, g.nx, |j, row| {
        for (i, c) in row.iter_mut().enumerate() {
            let mut sum = 0.0f32;
            for b in 0..f {
                let start = (j * f + b) * fx + i * f;
                for x in &density[start..start + f] {
                    sum += x;
                }
            }
            *c = sum / area;
        }
    });
    mean.copy_from_slice(coarse);
}

/// `fine_soot`: `coarse − mean` of each velocity cell added to its fine cells.
pub fn run_soot(g: &G, p: &DyeParams, density: &mut [f32], coarse: &[f32], mean: &[f32]) {
    let f = p.factor.max(1) as usize;
    for_each_row(density, g.nx * f, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            let c = g.c(i / f, j / f);
            let add = coarse[c] - mean[c];
            if add != 0.0 {
                *x += add;
            }
        }
    });
}

/// The table's entry of `coarse_density`.
pub(crate) fn dispatch_coarse(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DyeParams = d.params().unwrap_or_default();
    run_coarse(c.g, &p, s.r("density"), s.w("density_coarse"), s.w("mean"));
}

/// The table's entry of `fine_soot`.
pub(crate) fn dispatch_soot(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DyeParams = d.params().unwrap_or_default();
    run_soot(c.g, &p, s.w("density"), s.r("density_coarse"), s.r("mean"));
}
