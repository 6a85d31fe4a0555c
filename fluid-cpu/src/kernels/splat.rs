//! `splat`: one invocation adds every splat of the step to one u-face, one v-face and one cell
//! (density, temperature, dye), weighted by the splat's falloff at that sample's position.
//! Distances wrap on periodic axes. Adding zero is skipped (as the shader skips the write),
//! which keeps `-0.0` as it is.

use fluid_core::splat::splat_weight;
use fluid_core::uniforms::SplatGpu;

use rayon::prelude::*;

use super::common::{G, for_each_row};

/// Squared distance from `(x, y)` to the splat centre (minimum image on periodic axes).
#[inline(always)]
pub fn distance2(g: &G, s: &SplatGpu, x: f32, y: f32) -> f32 {
    let wrap = |d: f32, len: f32, periodic: bool| {
        let d = d.abs();
        if periodic { d.min(len - d) } else { d }
    };
    let dx = wrap(x - s.center[0], g.nx as f32 * g.h, g.px);
    let dy = wrap(y - s.center[1], g.ny as f32 * g.h, g.py);
    dx * dx + dy * dy
}

/// Velocity a splat list adds to u-face `(i, j)`.
#[inline(always)]
pub fn splat_u_face(g: &G, splats: &[SplatGpu], i: usize, j: usize) -> f32 {
    let (x, y) = (g.ui(i) as f32 * g.h, (j as f32 + 0.5) * g.h);
    splats.iter().map(|s| splat_weight(s, distance2(g, s, x, y)) * s.velocity[0]).sum()
}

/// Velocity a splat list adds to v-face `(i, j)`.
#[inline(always)]
pub fn splat_v_face(g: &G, splats: &[SplatGpu], i: usize, j: usize) -> f32 {
    let (x, y) = ((i as f32 + 0.5) * g.h, g.vj(j) as f32 * g.h);
    splats.iter().map(|s| splat_weight(s, distance2(g, s, x, y)) * s.velocity[1]).sum()
}

/// `[density, temperature, r, g, b, a]` a splat list adds to cell `(i, j)`.
#[inline(always)]
pub fn splat_cell(g: &G, splats: &[SplatGpu], i: usize, j: usize) -> [f32; 6] {
    let (x, y) = ((i as f32 + 0.5) * g.h, (j as f32 + 0.5) * g.h);
    let mut add = [0.0f32; 6];
    for s in splats {
        let w = splat_weight(s, distance2(g, s, x, y));
        add[0] += w * s.density;
        add[1] += w * s.temperature;
        for ch in 0..4 {
            add[2 + ch] += w * s.dye[ch];
        }
    }
    add
}

/// The fields the splat kernel updates in place.
pub struct SplatFields<'a> {
    /// x-velocity.
    pub u: &'a mut [f32],
    /// y-velocity.
    pub v: &'a mut [f32],
    /// Density.
    pub density: &'a mut [f32],
    /// Temperature.
    pub temperature: &'a mut [f32],
    /// Dye.
    pub dye: &'a mut [f32],
}

/// Add `splats` to every field.
pub fn run(g: &G, splats: &[SplatGpu], f: SplatFields<'_>) {
    if splats.is_empty() {
        return;
    }
    for_each_row(f.u, g.nx + 1, |j, row| {
        for (i, u) in row.iter_mut().enumerate() {
            if !g.u_on_wall(i) {
                let add = splat_u_face(g, splats, i, j);
                if add != 0.0 {
                    *u += add;
                }
            }
        }
    });
    for_each_row(f.v, g.nx, |j, row| {
        for (i, v) in row.iter_mut().enumerate() {
            if !g.v_on_wall(j) {
                let add = splat_v_face(g, splats, i, j);
                if add != 0.0 {
                    *v += add;
                }
            }
        }
    });
    let nx = g.nx;
    f.density
        .par_chunks_mut(nx)
        .zip(f.temperature.par_chunks_mut(nx))
        .zip(f.dye.par_chunks_mut(4 * nx))
        .enumerate()
        .for_each(|(j, ((d_row, t_row), c_row))| {
            for i in 0..nx {
                let add = splat_cell(g, splats, i, j);
                if add[0] != 0.0 {
                    d_row[i] += add[0];
                }
                if add[1] != 0.0 {
                    t_row[i] += add[1];
                }
                if add[2..].iter().any(|x| *x != 0.0) {
                    for ch in 0..4 {
                        c_row[4 * i + ch] += add[2 + ch];
                    }
                }
            }
        });
}
