//! The density on its finer grid (`factor` cells per cell along each axis), three kernels
//! (`advect_channels` advects it): `splat_fine_density` (the finer dye's, for one value),
//! `coarse_density` (its mean over each velocity cell, read by the forces and combustion) and
//! `fine_soot` (what combustion added to a velocity cell, added to its fine cells).

use fluid_core::frame::uniform::SplatGpu;
use fluid_core::grid::uniforms::DyeParams;
use fluid_core::splat::splat_weight;

use super::common::{G, for_each_row};
use super::splat::{distance2, reaching_row};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// `splat_fine_density`: with obstacles (`solid`, `u_faces`, `v_faces`) the fine cells of a
/// wholly solid cell are cleared and the others receive their cell's open part; then the
/// splats' density is added (a fine cell that receives nothing is left alone).
pub fn run_splat(
    g: &G,
    p: &DyeParams,
    splats: &[SplatGpu],
    density: &mut [f32],
    solids: Option<(&[f32], &[f32], &[f32])>,
) {
    let f = p.factor.max(1) as usize;
    let any = splats.iter().any(|s| s.density != 0.0);
    if density.is_empty() || (solids.is_none() && !any) {
        return;
    }
    let scale = f as f32;
    for_each_row(density, g.nx * f, |j, row| {
        let near = if any { reaching_row(g, splats, ((j as f32 + 0.5) / scale) * g.h) } else { Vec::new() };
        for (i, x) in row.iter_mut().enumerate() {
            let (ci, cj) = (i / f, j / f);
            let mut open = 1.0;
            if let Some((solid, uf, vf)) = solids {
                if solid[g.c(ci, cj)] == 1.0 {
                    *x = 0.0;
                }
                open = super::solid::cell_open(g, uf, vf, ci, cj);
            }
            if !any {
                continue;
            }
            let (px, py) = (((i as f32 + 0.5) / scale) * g.h, ((j as f32 + 0.5) / scale) * g.h);
            let add: f32 = near.iter().map(|s| splat_weight(s, distance2(g, s, px, py)) * s.density).sum();
            let add = add * open;
            if add != 0.0 {
                *x += add;
            }
        }
    });
}

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

/// The table's entry of `splat_fine_density`.
pub(crate) fn dispatch_splat(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DyeParams = d.params().unwrap_or_default();
    let density = s.w("density");
    let solids = c.g.solids.then(|| (s.r("solid"), s.r("u_faces"), s.r("v_faces")));
    run_splat(c.g, &p, c.splats, density, solids);
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
