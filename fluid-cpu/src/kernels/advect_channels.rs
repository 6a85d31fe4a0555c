//! `advect_channels`: one invocation traces one cell of a lattice `factor` times finer than
//! the velocity's (1: the velocity's cells) back along the velocity and samples there each
//! channel the dispatch carries (two scalars and an RGBA one), each with its dissipation
//! toward its ambient value and what an inflow carries of it.

use swirly_core::grid::uniforms::{
    CHANNEL_Q0, CHANNEL_Q1, CHANNEL_RGBA, ChannelParams, INFLOW_DYE, INFLOW_HEAT, INFLOW_SMOKE,
};

use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use super::avx2::Avx2;

use super::common::{
    G, LANES, backtrace, backtrace_lanes, bilerp, bilerp_stencils, bilerp_windows, bilerp4, bilerp4_window, rows_mut,
    stencil, stencil_lanes, velocity_at_cells,
};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Where cell `(i, j)`'s content was `dt` ago, as interpolation stencils.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn cell_source(
    g: &G,
    order: u32,
    dt: f32,
    u: &[f32],
    v: &[f32],
    i: usize,
    j: usize,
) -> ((usize, usize, f32), (usize, usize, f32)) {
    let (x, y) = (i as f32 + 0.5, j as f32 + 0.5);
    let (bx, by) = backtrace(g, u, v, order, dt * g.inv_h, x, y);
    (stencil(bx - 0.5, g.nx, false, g.px), stencil(by - 0.5, g.ny, false, g.py))
}

/// The channels one invocation reads and writes (an empty pair is a channel not carried).
pub struct Channels<'a> {
    /// The first scalar.
    pub q0: &'a [f32],
    /// The second scalar.
    pub q1: &'a [f32],
    /// The RGBA channel, four values per cell.
    pub rgba: &'a [f32],
    /// The first scalar out.
    pub q0_out: &'a mut [f32],
    /// The second scalar out.
    pub q1_out: &'a mut [f32],
    /// The RGBA channel out.
    pub rgba_out: &'a mut [f32],
}

/// How a scalar channel decays over the step and what an inflow's ghost holds of it.
#[derive(Clone, Copy)]
struct Scalar {
    on: bool,
    decay: f32,
    ambient: f32,
    inflow: u32,
}

impl Scalar {
    /// `x` relaxed toward the ambient value.
    #[inline(always)]
    fn relax(self, x: f32) -> f32 {
        self.ambient + (x - self.ambient) * self.decay
    }

    /// What the ghost past inflow side `k` holds, relaxed as the channel is.
    #[inline(always)]
    fn ghost(self, g: &G, k: usize, band: f32) -> f32 {
        let x = match self.inflow {
            INFLOW_SMOKE => band * g.side_carry[k][0],
            INFLOW_HEAT => g.side_carry[k][1],
            _ => self.ambient,
        };
        self.relax(x)
    }
}

/// The dispatch's channels as the loops read them: the two scalars' and the RGBA one's.
fn scalars(p: &ChannelParams, dt: f32, f: &Channels<'_>) -> ([Scalar; 2], Scalar) {
    // A channel the scene does not carry is empty, whatever its bit says.
    let scalar = |bit: u32, out: &[f32], rate: f32, ambient: f32, inflow: u32| Scalar {
        on: p.channels & bit != 0 && !out.is_empty(),
        decay: (-rate * dt).exp(),
        ambient,
        inflow,
    };
    (
        [
            scalar(CHANNEL_Q0, f.q0_out, p.q0_rate, p.q0_ambient, p.q0_inflow),
            scalar(CHANNEL_Q1, f.q1_out, p.q1_rate, p.q1_ambient, p.q1_inflow),
        ],
        scalar(CHANNEL_RGBA, f.rgba_out, p.rgba_rate, 0.0, p.rgba_inflow),
    )
}

/// Advect the channels whose bits are set in `p.channels` (one backtrace per cell serves all).
pub fn run(g: &G, p: &ChannelParams, dt: f32, u: &[f32], v: &[f32], f: Channels<'_>) {
    if p.factor > 1 {
        return run_fine(g, p, dt, (u, v), f);
    }
    let nx = g.nx;
    let ([a, b], c) = scalars(p, dt, &f);
    let s = dt * g.inv_h;
    let min_rows = (4096 / nx).max(1);
    let windows = g.wall_windows();
    let arch = crate::simd::arch();
    #[cfg(target_arch = "x86_64")]
    let avx2 = Avx2::get().filter(|_| g.walls_two_wide());
    rows_mut(&mut *f.q0_out, nx, g.ny)
        .zip(rows_mut(&mut *f.q1_out, nx, g.ny))
        .zip(rows_mut(&mut *f.rgba_out, 4 * nx, g.ny))
        .with_min_len(min_rows)
        .enumerate()
        .for_each(|(j, ((a_row, b_row), c_row))| {
            crate::simd::vectorized(
                arch,
                #[inline(always)]
                || {
                    let y = j as f32 + 0.5;
                    for k in 0..nx.div_ceil(LANES) {
                        let i0 = k * LANES;
                        // Whole batches in AVX2 vectors: the same arithmetic (see `avx2`).
                        #[cfg(target_arch = "x86_64")]
                        if let Some(x) = avx2
                            && i0 + LANES <= nx
                        {
                            let xs = x.add(x.iota(i0), x.splat(0.5));
                            let k1 = velocity_at_cells(g, u, v, (i0, j), &x.store(xs), y);
                            let k1 = (x.load(k1.0), x.load(k1.1));
                            let (bx, by) = x.backtrace(g, u, v, p.order, s, (xs, x.splat(y)), k1);
                            let sx = x.stencil_axis(x.sub(bx, x.splat(0.5)), g.nx, false, g.px);
                            let sy = x.stencil_axis(x.sub(by, x.splat(0.5)), g.ny, false, g.py);
                            // No closure for the samples: one that is not inlined is compiled
                            // without the row's target features (doc/ARCHITECTURE.md).
                            for (q, field, row) in [(a, f.q0, &mut *a_row), (b, f.q1, &mut *b_row)] {
                                if q.on {
                                    let t = x.sample_cells(g, field, sx, sy);
                                    let t = x
                                        .add(x.splat(q.ambient), x.mul(x.sub(t, x.splat(q.ambient)), x.splat(q.decay)));
                                    row[i0..i0 + LANES].copy_from_slice(&x.store(t));
                                }
                            }
                            if c.on {
                                let mut rgba = [0f32; 4 * LANES];
                                x.bilerp4_stencils(g, f.rgba, sx, sy, c.decay, &mut rgba);
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
                        // One loop per channel, each free of the others' branches. With walls on both
                        // axes every stencil is a 2 × 2 window (see `stencil`), read as one.
                        let sample = |field: &[f32]| -> [f32; LANES] {
                            if windows {
                                bilerp_windows(field, nx, (&xi0, &tx), (&yj0, &ty))
                            } else {
                                bilerp_stencils(field, nx, &(xi0, xi1, tx), &(yj0, yj1, ty))
                            }
                        };
                        for (q, field, row) in [(a, f.q0, &mut *a_row), (b, f.q1, &mut *b_row)] {
                            if q.on {
                                for (out, t) in row[i0..i0 + lanes].iter_mut().zip(sample(field)) {
                                    *out = q.relax(t);
                                }
                            }
                        }
                        if c.on {
                            for (k, out) in c_row[4 * i0..4 * (i0 + lanes)].chunks_exact_mut(4).enumerate() {
                                let rgba = if windows {
                                    bilerp4_window(f.rgba, nx, (xi0[k] as usize, tx[k]), (yj0[k] as usize, ty[k]))
                                } else {
                                    bilerp4(f.rgba, nx, sx(k), sy(k))
                                };
                                for ch in 0..4 {
                                    out[ch] = rgba[ch] * c.decay;
                                }
                            }
                        }
                    }
                },
            )
        });
    if g.has_inflow() {
        inflow(g, p, s, (u, v), ([a, b], c), f);
    }
}

/// Where a cell of a lattice `f` times finer than the velocity's came from: fine cell `(i, j)`'s
/// centre traced back along `(u, v)` (`s` = dt / h) in the velocity grid's cell units, and the
/// bilinear stencil there on the fine lattice.
#[inline(always)]
pub fn fine_trace(g: &G, order: u32, f: usize, s: f32, (u, v): (&[f32], &[f32]), i: usize, j: usize) -> FineTrace {
    let scale = f as f32;
    let (x, y) = ((i as f32 + 0.5) / scale, (j as f32 + 0.5) / scale);
    let (bx, by) = backtrace(g, u, v, order, s, x, y);
    let sx = stencil(bx * scale - 0.5, g.nx * f, false, g.px);
    let sy = stencil(by * scale - 0.5, g.ny * f, false, g.py);
    FineTrace { at: (bx, by), sx, sy }
}

/// [`fine_trace`]'s answer.
pub struct FineTrace {
    /// The point traced back, in the velocity grid's cell units.
    pub at: (f32, f32),
    /// The stencil along x on the fine lattice.
    pub sx: (usize, usize, f32),
    /// The stencil along y.
    pub sy: (usize, usize, f32),
}

/// [`run`] on a finer lattice: one cell at a time, the inflow's blend in the same pass.
fn run_fine(g: &G, p: &ChannelParams, dt: f32, (u, v): (&[f32], &[f32]), f: Channels<'_>) {
    let k = p.factor as usize;
    let (fx, fy) = (g.nx * k, g.ny * k);
    let s = dt * g.inv_h;
    let ([a, b], c) = scalars(p, dt, &f);
    let inflow = g.has_inflow();
    rows_mut(&mut *f.q0_out, fx, fy)
        .zip(rows_mut(&mut *f.q1_out, fx, fy))
        .zip(rows_mut(&mut *f.rgba_out, 4 * fx, fy))
        .enumerate()
        .for_each(|(j, ((a_row, b_row), c_row))| {
            for i in 0..fx {
                let FineTrace { at: (bx, by), sx, sy } = fine_trace(g, p.order, k, s, (u, v), i, j);
                let (w, side) = if inflow { inflow_weight(g, bx, by) } else { (0.0, 0) };
                let band = if w > 0.0 { in_band(g, side, bx, by) } else { 0.0 };
                for (q, field, row) in [(a, f.q0, &mut *a_row), (b, f.q1, &mut *b_row)] {
                    if q.on {
                        let x = q.relax(bilerp(field, fx, 1, 0, sx, sy));
                        row[i] = if w > 0.0 { x + w * (q.ghost(g, side, band) - x) } else { x };
                    }
                }
                if c.on {
                    let px = &mut c_row[4 * i..4 * i + 4];
                    px.copy_from_slice(&bilerp4(f.rgba, fx, sx, sy).map(|x| x * c.decay));
                    if w > 0.0 {
                        blend_dye(g, c, (w, side, band), px);
                    }
                }
            }
        });
}

/// An RGBA cell blended toward what the ghost past inflow side `side` holds (with weight `w`).
#[inline(always)]
fn blend_dye(g: &G, c: Scalar, (w, side, band): (f32, usize, f32), px: &mut [f32]) {
    for (ch, x) in px.iter_mut().enumerate() {
        let ghost = if c.inflow == INFLOW_DYE { band * g.side_dye[side][ch] } else { 0.0 };
        *x += w * (ghost * c.decay - *x);
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
/// toward it (the twin of the blend in `advect_channels.wgsl`, after the same backtrace).
fn inflow(
    g: &G,
    p: &ChannelParams,
    s: f32,
    (u, v): (&[f32], &[f32]),
    ([a, b], c): ([Scalar; 2], Scalar),
    f: Channels<'_>,
) {
    let nx = g.nx;
    rows_mut(f.q0_out, nx, g.ny)
        .zip(rows_mut(f.q1_out, nx, g.ny))
        .zip(rows_mut(f.rgba_out, 4 * nx, g.ny))
        .enumerate()
        .for_each(|(j, ((a_row, b_row), c_row))| {
            for i in 0..nx {
                let (bx, by) = backtrace(g, u, v, p.order, s, i as f32 + 0.5, j as f32 + 0.5);
                let (w, side) = inflow_weight(g, bx, by);
                if w <= 0.0 {
                    continue;
                }
                let band = in_band(g, side, bx, by);
                for (q, row) in [(a, &mut *a_row), (b, &mut *b_row)] {
                    if q.on {
                        let x = row[i];
                        row[i] = x + w * (q.ghost(g, side, band) - x);
                    }
                }
                if c.on {
                    blend_dye(g, c, (w, side, band), &mut c_row[4 * i..4 * i + 4]);
                }
            }
        });
}

/// The table's entry: a dispatch of `advect_channels` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: ChannelParams = d.params().unwrap_or_default();
    let channels = Channels {
        q0: s.r("q0"),
        q1: s.r("q1"),
        rgba: s.r("rgba"),
        q0_out: s.w("q0_out"),
        q1_out: s.w("q1_out"),
        rgba_out: s.w("rgba_out"),
    };
    run(c.g, &p, c.dt, s.r("u"), s.r("v"), channels);
}
#[cfg(test)]
mod tests {
    use super::super::common::bilerp;
    use super::*;
    use swirly_core::grid::Side;
    use swirly_core::{Boundary, FieldId, Grid};

    fn params(factor: u32) -> ChannelParams {
        ChannelParams {
            order: 3,
            factor,
            channels: CHANNEL_Q0 | CHANNEL_Q1 | CHANNEL_RGBA,
            q0_inflow: INFLOW_SMOKE,
            q1_inflow: INFLOW_HEAT,
            rgba_inflow: INFLOW_DYE,
            q0_rate: 0.1,
            q0_ambient: 0.0,
            q1_rate: 0.2,
            q1_ambient: 0.5,
            rgba_rate: 0.3,
            _pad: 0,
        }
    }

    /// Random velocities and channels on `grid`, the channels `factor` times finer.
    fn random(grid: &Grid, factor: usize, seed: u64) -> (Vec<f32>, Vec<f32>, [Vec<f32>; 3]) {
        let mut rng = swirly_core::scene::SplitMix64(seed);
        let mut rand = |n: usize| -> Vec<f32> { (0..n).map(|_| 4.0 * rng.next_f32() - 2.0).collect() };
        let (u, v) = (rand(grid.len(FieldId::U)), rand(grid.len(FieldId::V)));
        let n = grid.nx as usize * grid.ny as usize * factor * factor;
        (u, v, [rand(n), rand(n), rand(4 * n)])
    }

    fn advect(g: &G, p: &ChannelParams, (u, v): (&[f32], &[f32]), q: &[Vec<f32>; 3], fine: bool) -> [Vec<f32>; 3] {
        let mut out = [vec![0.0; q[0].len()], vec![0.0; q[1].len()], vec![0.0; q[2].len()]];
        let [a, b, c] = &mut out;
        let f = Channels { q0: &q[0], q1: &q[1], rgba: &q[2], q0_out: a, q1_out: b, rgba_out: c };
        if fine {
            run_fine(g, p, 0.1, (u, v), f)
        } else {
            run(g, p, 0.1, u, v, f)
        }
        out
    }

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
            let (u, v, q) = random(&grid, 1, 5);
            let p = params(1);
            let [d_out, t_out, c_out] = advect(&g, &p, (&u, &v), &q, false);
            for j in 0..ny {
                for i in 0..nx {
                    let (sx, sy) = cell_source(&g, p.order, 0.1, &u, &v, i, j);
                    let c = j * nx + i;
                    let want = (bilerp(&q[0], nx, 1, 0, sx, sy) - 0.0) * (-0.1f32 * 0.1).exp();
                    assert_eq!(d_out[c].to_bits(), want.to_bits(), "q0 ({i}, {j})");
                    let want = 0.5 + (bilerp(&q[1], nx, 1, 0, sx, sy) - 0.5) * (-0.2f32 * 0.1).exp();
                    assert_eq!(t_out[c].to_bits(), want.to_bits(), "q1 ({i}, {j})");
                    for ch in 0..4 {
                        let want = bilerp(&q[2], 4 * nx, 4, ch, sx, sy) * (-0.3f32 * 0.1).exp();
                        assert_eq!(c_out[4 * c + ch].to_bits(), want.to_bits(), "rgba ({i}, {j})");
                    }
                }
            }
        }
    }

    #[test]
    fn the_lattice_path_at_factor_one_is_the_cells_path() {
        // With an inflow carrying smoke in stripes, heat and dye, so the blend is compared too.
        let inflow = Side::Inflow(swirly_core::grid::Inflow {
            speed: 0.8,
            parabolic: true,
            density: 0.9,
            temperature: 1.5,
            dye: [0.2, 0.4, 0.6, 0.8],
            stripes: 3,
        });
        for sides in [None, Some([inflow, Side::Open, Side::Open, Side::Open])] {
            let grid = Grid::new(27, 9, 0.2, Boundary::Wall, Boundary::Wall).expect("grid");
            let grid = match sides {
                Some(s) => grid.with_sides(s).expect("sides"),
                None => grid,
            };
            let g = G::new(&grid.uniform());
            let (u, v, q) = random(&grid, 1, 9);
            let cells = advect(&g, &params(1), (&u, &v), &q, false);
            let lattice = advect(&g, &params(1), (&u, &v), &q, true);
            for (k, (a, b)) in cells.iter().zip(&lattice).enumerate() {
                let bits = |x: &[f32]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(a), bits(b), "channel {k}, sides {sides:?}");
            }
        }
    }
}
