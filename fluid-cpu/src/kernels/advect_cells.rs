//! `advect_cells`: one invocation traces one cell centre back along the velocity and samples
//! density, temperature and dye there, applying each field's dissipation.

use fluid_core::grid::uniforms::{ADVECT_DENSITY, ADVECT_DYE, ADVECT_TEMPERATURE, AdvectParams};

use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use super::avx2::Avx2;

use super::common::{
    G, LANES, backtrace, backtrace_lanes, bilerp_stencils, bilerp_windows, bilerp4, bilerp4_window, rows_mut, stencil,
    stencil_lanes, velocity_at_cells,
};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// Where cell `(i, j)`'s content was `dt` ago, as interpolation stencils.
#[inline(always)]
pub fn cell_source(
    g: &G,
    p: &AdvectParams,
    dt: f32,
    u: &[f32],
    v: &[f32],
    i: usize,
    j: usize,
) -> ((usize, usize, f32), (usize, usize, f32)) {
    let (x, y) = (i as f32 + 0.5, j as f32 + 0.5);
    let (bx, by) = backtrace(g, u, v, p.order, dt * g.inv_h, x, y);
    (stencil(bx - 0.5, g.nx, false, g.px), stencil(by - 0.5, g.ny, false, g.py))
}

/// The cell fields one invocation reads and writes.
pub struct CellFields<'a> {
    /// Density in.
    pub density: &'a [f32],
    /// Temperature in.
    pub temperature: &'a [f32],
    /// Dye in.
    pub dye: &'a [f32],
    /// Density out.
    pub density_out: &'a mut [f32],
    /// Temperature out.
    pub temperature_out: &'a mut [f32],
    /// Dye out.
    pub dye_out: &'a mut [f32],
}

/// Advect the cell fields whose bits are set in `p.fields` (one backtrace per cell serves all).
pub fn run(g: &G, p: &AdvectParams, dt: f32, u: &[f32], v: &[f32], f: CellFields<'_>) {
    let nx = g.nx;
    // A field the scene does not carry is empty, whatever its bit says.
    let (on_d, on_t, on_c) = (
        p.fields & ADVECT_DENSITY != 0 && !f.density_out.is_empty(),
        p.fields & ADVECT_TEMPERATURE != 0 && !f.temperature_out.is_empty(),
        p.fields & ADVECT_DYE != 0 && !f.dye_out.is_empty(),
    );
    let decay_d = (-p.density_dissipation * dt).exp();
    let decay_t = (-p.temperature_dissipation * dt).exp();
    let decay_c = (-p.dye_dissipation * dt).exp();
    let amb = p.ambient_temperature;
    let s = dt * g.inv_h;
    let min_rows = (4096 / nx).max(1);
    let windows = g.wall_windows();
    let arch = crate::simd::arch();
    #[cfg(target_arch = "x86_64")]
    let avx2 = Avx2::get().filter(|_| g.walls_two_wide());
    rows_mut(&mut *f.density_out, nx, g.ny)
        .zip(rows_mut(&mut *f.temperature_out, nx, g.ny))
        .zip(rows_mut(&mut *f.dye_out, 4 * nx, g.ny))
        .with_min_len(min_rows)
        .enumerate()
        .for_each(|(j, ((d_row, t_row), c_row))| {
            crate::simd::vectorized(
                arch,
                #[inline(always)]
                || {
                    let y = j as f32 + 0.5;
                    for c in 0..nx.div_ceil(LANES) {
                        let i0 = c * LANES;
                        // Whole batches in AVX2 vectors: the same arithmetic (see `avx2`).
                        #[cfg(target_arch = "x86_64")]
                        if let Some(a) = avx2
                            && i0 + LANES <= nx
                        {
                            let xs = a.add(a.iota(i0), a.splat(0.5));
                            let k1 = velocity_at_cells(g, u, v, (i0, j), &a.store(xs), y);
                            let k1 = (a.load(k1.0), a.load(k1.1));
                            let (bx, by) = a.backtrace(g, u, v, p.order, s, (xs, a.splat(y)), k1);
                            let sx = a.stencil_axis(a.sub(bx, a.splat(0.5)), g.nx, false, g.px);
                            let sy = a.stencil_axis(a.sub(by, a.splat(0.5)), g.ny, false, g.py);
                            // No closure for the two samples: one that is not inlined is compiled
                            // without the row's target features (doc/ARCHITECTURE.md).
                            if on_d {
                                let d = a.mul(a.sample_cells(g, f.density, sx, sy), a.splat(decay_d));
                                d_row[i0..i0 + LANES].copy_from_slice(&a.store(d));
                            }
                            if on_t {
                                let t = a.sample_cells(g, f.temperature, sx, sy);
                                let t = a.add(a.splat(amb), a.mul(a.sub(t, a.splat(amb)), a.splat(decay_t)));
                                t_row[i0..i0 + LANES].copy_from_slice(&a.store(t));
                            }
                            if on_c {
                                let mut rgba = [0f32; 4 * LANES];
                                a.bilerp4_stencils(g, f.dye, sx, sy, decay_c, &mut rgba);
                                c_row[4 * i0..4 * (i0 + LANES)].copy_from_slice(&rgba);
                            }
                            continue;
                        }
                        // Through i32 (exact: at most 32769 columns): x86 has a vector conversion from i32
                        // to f32, not from usize, which left these eight conversions scalar.
                        let xs: [f32; LANES] = std::array::from_fn(|k| (i0 + k).min(nx - 1) as i32 as f32 + 0.5);
                        let k1 = velocity_at_cells(g, u, v, (i0, j), &xs, y);
                        let (bx, by) = backtrace_lanes(g, u, v, p.order, s, &xs, &[y; LANES], k1);
                        let lanes = LANES.min(nx - i0);
                        let (xi0, xi1, tx) = stencil_lanes(&bx.map(|x| x - 0.5), g.nx, false, g.px);
                        let (yj0, yj1, ty) = stencil_lanes(&by.map(|y| y - 0.5), g.ny, false, g.py);
                        let sx = |k: usize| (xi0[k] as usize, xi1[k] as usize, tx[k]);
                        let sy = |k: usize| (yj0[k] as usize, yj1[k] as usize, ty[k]);
                        // One loop per field, each free of the others' branches. With walls on both
                        // axes every stencil is a 2 × 2 window (see `stencil`), read as one.
                        let sample = |field: &[f32]| -> [f32; LANES] {
                            if windows {
                                bilerp_windows(field, nx, (&xi0, &tx), (&yj0, &ty))
                            } else {
                                bilerp_stencils(field, nx, &(xi0, xi1, tx), &(yj0, yj1, ty))
                            }
                        };
                        if on_d {
                            let d = sample(f.density);
                            for (out, d) in d_row[i0..i0 + lanes].iter_mut().zip(d) {
                                *out = d * decay_d;
                            }
                        }
                        if on_t {
                            let t = sample(f.temperature);
                            for (out, t) in t_row[i0..i0 + lanes].iter_mut().zip(t) {
                                *out = amb + (t - amb) * decay_t;
                            }
                        }
                        if on_c {
                            for (k, out) in c_row[4 * i0..4 * (i0 + lanes)].chunks_exact_mut(4).enumerate() {
                                let rgba = if windows {
                                    bilerp4_window(f.dye, nx, (xi0[k] as usize, tx[k]), (yj0[k] as usize, ty[k]))
                                } else {
                                    bilerp4(f.dye, nx, sx(k), sy(k))
                                };
                                for ch in 0..4 {
                                    out[ch] = rgba[ch] * decay_c;
                                }
                            }
                        }
                    }
                },
            )
        });
    if g.has_inflow() {
        let decay = [decay_d, decay_t, decay_c];
        inflow(g, p, s, (u, v), decay, (on_d, on_t, on_c), f);
    }
}

/// The heaviest inflow side at point `(x, y)` (cell units) and its weight: 0 at the first
/// cell's centre, 1 at the ghost's past the side and beyond.
#[inline(always)]
pub fn inflow_weight(g: &G, x: f32, y: f32) -> (f32, usize) {
    let w = [0.5 - x, x - (g.nx as f32 - 0.5), 0.5 - y, y - (g.ny as f32 - 0.5)];
    let mut best = (0.0f32, 0usize);
    for (k, w) in w.into_iter().enumerate() {
        let wk = w.clamp(0.0, 1.0);
        if g.side_inflow(k) && wk > best.0 {
            best = (wk, k);
        }
    }
    best
}

/// 1 where side `k` carries smoke and dye at `(x, y)`: everywhere, or in its bands (`2n + 1`
/// equal slots along the side, the odd ones bands).
#[inline(always)]
pub fn in_band(g: &G, k: usize, x: f32, y: f32) -> f32 {
    let n = g.side_carry[k][2];
    if n == 0.0 {
        return 1.0;
    }
    let s = (if k < 2 { y / g.ny as f32 } else { x / g.nx as f32 }).clamp(0.0, 1.0);
    let slot = (s * (2.0 * n + 1.0)).floor() as u32;
    if slot & 1 == 1 { 1.0 } else { 0.0 }
}

/// Near an inflow side the ghost cell past it holds what the inflow carries: each cell whose
/// point traced back lies within half a cell of the side or beyond blends its advected value
/// toward it (the twin of the blend in `advect_cells.wgsl`, after the same backtrace).
fn inflow(
    g: &G,
    p: &AdvectParams,
    s: f32,
    (u, v): (&[f32], &[f32]),
    [decay_d, decay_t, decay_c]: [f32; 3],
    (on_d, on_t, on_c): (bool, bool, bool),
    f: CellFields<'_>,
) {
    let amb = p.ambient_temperature;
    let nx = g.nx;
    rows_mut(f.density_out, nx, g.ny)
        .zip(rows_mut(f.temperature_out, nx, g.ny))
        .zip(rows_mut(f.dye_out, 4 * nx, g.ny))
        .enumerate()
        .for_each(|(j, ((d_row, t_row), c_row))| {
            for i in 0..nx {
                let (bx, by) = backtrace(g, u, v, p.order, s, i as f32 + 0.5, j as f32 + 0.5);
                let (w, k) = inflow_weight(g, bx, by);
                if w <= 0.0 {
                    continue;
                }
                let band = in_band(g, k, bx, by);
                let carry = g.side_carry[k];
                if on_d {
                    let d = d_row[i];
                    d_row[i] = d + w * (band * carry[0] * decay_d - d);
                }
                if on_t {
                    let t = t_row[i];
                    t_row[i] = t + w * ((amb + (carry[1] - amb) * decay_t) - t);
                }
                if on_c {
                    for (ch, x) in c_row[4 * i..4 * i + 4].iter_mut().enumerate() {
                        let c = *x;
                        *x = c + w * (band * g.side_dye[k][ch] * decay_c - c);
                    }
                }
            }
        });
}

/// The table's entry: a dispatch of `advect_cells` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: AdvectParams = d.params().unwrap_or_default();
    let fields = CellFields {
        density: s.r("density"),
        temperature: s.r("temperature"),
        dye: s.r("dye"),
        density_out: s.w("density_out"),
        temperature_out: s.w("temperature_out"),
        dye_out: s.w("dye_out"),
    };
    run(c.g, &p, c.dt, s.r("u"), s.r("v"), fields);
}

#[cfg(test)]
mod tests {
    use super::super::common::bilerp;
    use super::*;
    use fluid_core::{Boundary, FieldId, Grid};

    #[test]
    fn batched_cells_equal_the_one_cell_function() {
        // Wide enough for whole interior batches of lanes, and edge ones; and one cell wide.
        for (bx, by, nx, ny) in [
            (Boundary::Wall, Boundary::Wall, 27, 7),
            (Boundary::Periodic, Boundary::Periodic, 27, 7),
            (Boundary::Periodic, Boundary::Wall, 27, 7),
            (Boundary::Wall, Boundary::Periodic, 16, 5),
            (Boundary::Periodic, Boundary::Periodic, 2, 3),
            (Boundary::Wall, Boundary::Wall, 1, 6),
            (Boundary::Wall, Boundary::Wall, 12, 1),
        ] {
            let grid = Grid::new(nx as u32, ny as u32, 0.2, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let mut rng = fluid_core::scene::SplitMix64(5);
            let mut rand = |n: usize| -> Vec<f32> { (0..n).map(|_| 4.0 * rng.next_f32() - 2.0).collect() };
            let (u, v) = (rand(grid.len(FieldId::U)), rand(grid.len(FieldId::V)));
            let n = nx * ny;
            let (den, tem, dye) = (rand(n), rand(n), rand(4 * n));
            let p = AdvectParams {
                order: 3,
                fields: ADVECT_DENSITY | ADVECT_TEMPERATURE | ADVECT_DYE,
                density_dissipation: 0.1,
                temperature_dissipation: 0.2,
                dye_dissipation: 0.3,
                ambient_temperature: 0.5,
                ..AdvectParams::default()
            };
            let (mut d_out, mut t_out, mut c_out) = (vec![0.0; n], vec![0.0; n], vec![0.0; 4 * n]);
            let fields = CellFields {
                density: &den,
                temperature: &tem,
                dye: &dye,
                density_out: &mut d_out,
                temperature_out: &mut t_out,
                dye_out: &mut c_out,
            };
            run(&g, &p, 0.1, &u, &v, fields);
            for j in 0..ny {
                for i in 0..nx {
                    let (sx, sy) = cell_source(&g, &p, 0.1, &u, &v, i, j);
                    let c = j * nx + i;
                    let want = bilerp(&den, nx, 1, 0, sx, sy) * (-0.1f32 * 0.1).exp();
                    assert_eq!(d_out[c].to_bits(), want.to_bits(), "density ({i}, {j})");
                    let want = 0.5 + (bilerp(&tem, nx, 1, 0, sx, sy) - 0.5) * (-0.2f32 * 0.1).exp();
                    assert_eq!(t_out[c].to_bits(), want.to_bits(), "temperature ({i}, {j})");
                    for ch in 0..4 {
                        let want = bilerp(&dye, 4 * nx, 4, ch, sx, sy) * (-0.3f32 * 0.1).exp();
                        assert_eq!(c_out[4 * c + ch].to_bits(), want.to_bits(), "dye ({i}, {j})");
                    }
                }
            }
        }
    }
}
