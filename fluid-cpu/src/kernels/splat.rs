//! `splat`: one invocation adds every splat of the step to one u-face, one v-face and one cell
//! (density, temperature, dye), weighted by the splat's falloff at that sample's position.
//! Distances wrap on periodic axes. Adding zero is skipped (as the shader skips the write),
//! which keeps `-0.0` as it is. The other channels are `splat_cells`'.
//!
//! The batched [`run`] evaluates the gaussian as the product of its two axis factors,
//! `exp(−dx²/r²) · exp(−dy²/r²)`, each computed once per column or row instead of one `exp`
//! per sample; the cut-off test and the linear falloff use the same `dx² + dy²` as
//! [`splat_weight`]. The product differs from `exp(−(dx² + dy²)/r²)` by a few ulps (tested),
//! as the GPU's `exp` does from libm's.

use swirly_core::frame::uniform::{FALLOFF_GAUSSIAN, SplatGpu};
use swirly_core::grid::uniforms::DyeParams;
use swirly_core::splat::{GAUSSIAN_CUTOFF, splat_weight};

use rayon::prelude::*;

use super::common::{G, for_each_row, for_each_row_scratch, rows_mut};
use super::solid;
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `|d|`, or its minimum image on a periodic axis of length `len`.
#[inline(always)]
fn wrap(d: f32, len: f32, periodic: bool) -> f32 {
    let d = d.abs();
    if periodic { d.min(len - d) } else { d }
}

/// Squared distance from `(x, y)` to the splat centre (minimum image on periodic axes).
#[inline(always)]
pub fn distance2(g: &G, s: &SplatGpu, x: f32, y: f32) -> f32 {
    let dx = wrap(x - s.center[0], g.nx as f32 * g.h, g.px);
    let dy = wrap(y - s.center[1], g.ny as f32 * g.h, g.py);
    dx * dx + dy * dy
}

/// The splats that weigh anything on the row of samples at height `y` (world units), in their
/// order: the others weigh nothing there (`reaches` at the row's distance), so a row adds up
/// only these, to the same sums.
pub fn reaching_row(g: &G, splats: &[SplatGpu], y: f32) -> Vec<SplatGpu> {
    let len = g.ny as f32 * g.h;
    splats
        .iter()
        .filter(|s| {
            let dy = wrap(y - s.center[1], len, g.py);
            reaches(s, dy * dy)
        })
        .copied()
        .collect()
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

/// One splat's squared distances along one axis at a row of sample positions, and its
/// gaussian factor there.
struct Axis {
    /// `d²`, `d` the distance (minimum image on a periodic axis).
    d2: Vec<f32>,
    /// `exp(−d²/r²)` (gaussian splats only).
    e: Vec<f32>,
    /// Whether the splat weighs anything at each sample whatever the other coordinate is
    /// ([`reaches`]), computed once per step instead of once per row.
    hits: Vec<bool>,
    /// The samples `lo..hi` outside which the splat weighs nothing whatever the other
    /// coordinate (see [`reaches`]); the whole axis where those samples are not one run (which
    /// a periodic axis allows).
    reach: (usize, usize),
}

impl Axis {
    fn new(s: &SplatGpu, centre: f32, len: f32, periodic: bool, positions: impl Iterator<Item = f32>) -> Axis {
        let d2: Vec<f32> = positions
            .map(|p| {
                let d = wrap(p - centre, len, periodic);
                d * d
            })
            .collect();
        let r2 = s.radius * s.radius;
        let e =
            if s.falloff == FALLOFF_GAUSSIAN { d2.iter().map(|d2| (-(d2 / r2)).exp()).collect() } else { Vec::new() };
        let hits: Vec<bool> = d2.iter().map(|&d2| reaches(s, d2)).collect();
        let count = hits.iter().filter(|h| **h).count();
        let reach = match (hits.iter().position(|h| *h), hits.iter().rposition(|h| *h)) {
            (Some(lo), Some(hi)) if hi - lo + 1 == count => (lo, hi + 1),
            (None, _) => (0, 0),
            _ => (0, d2.len()),
        };
        Axis { d2, e, hits, reach }
    }
}

/// A splat with its axis factors at the sample positions of the three staggered grids.
struct Prepared<'a> {
    s: &'a SplatGpu,
    /// Columns of u-faces, of cells (and v-faces).
    x_faces: Axis,
    x_cells: Axis,
    /// Rows of cells (and u-faces), of v-faces.
    y_cells: Axis,
    y_faces: Axis,
}

impl Prepared<'_> {
    /// The axes of velocity component `c`'s faces (0: u, on x-faces and cell rows; 1: v).
    fn velocity_axes(&self, c: usize) -> (&Axis, &Axis) {
        if c == 0 { (&self.x_faces, &self.y_cells) } else { (&self.x_cells, &self.y_faces) }
    }

    fn new<'a>(g: &G, s: &'a SplatGpu) -> Prepared<'a> {
        let (lx, ly) = (g.nx as f32 * g.h, g.ny as f32 * g.h);
        let (cx, cy) = (s.center[0], s.center[1]);
        Prepared {
            s,
            x_faces: Axis::new(s, cx, lx, g.px, (0..=g.nx).map(|i| g.ui(i) as f32 * g.h)),
            x_cells: Axis::new(s, cx, lx, g.px, (0..g.nx).map(|i| (i as f32 + 0.5) * g.h)),
            y_cells: Axis::new(s, cy, ly, g.py, (0..g.ny).map(|j| (j as f32 + 0.5) * g.h)),
            y_faces: Axis::new(s, cy, ly, g.py, (0..=g.ny).map(|j| g.vj(j) as f32 * g.h)),
        }
    }
}

/// The weights of splat `s` along row `j` of the grid whose axes are `x` and `y`, into `w`:
/// [`splat_weight`] of `d² = dx² + dy²`, with the gaussian as the product of its axis factors.
/// One pass over the row that vectorises; only the samples in `x.reach` are written.
#[inline(always)]
fn row_weights(s: &SplatGpu, x: &Axis, y: &Axis, j: usize, w: &mut [f32]) {
    let (dy2, r2) = (y.d2[j], s.radius * s.radius);
    let (lo, hi) = x.reach;
    let w = &mut w[lo..hi];
    let xd2 = &x.d2[lo..hi];
    if s.falloff == FALLOFF_GAUSSIAN {
        let (xe, ey) = (&x.e[lo..hi], y.e[j]);
        const CUT2: f32 = GAUSSIAN_CUTOFF * GAUSSIAN_CUTOFF;
        for ((w, &dx2), &ex) in w.iter_mut().zip(xd2).zip(xe) {
            *w = if (dx2 + dy2) / r2 < CUT2 { ex * ey } else { 0.0 };
        }
    } else {
        for (w, &dx2) in w.iter_mut().zip(xd2) {
            *w = splat_weight(s, dx2 + dy2);
        }
    }
}

/// Whether splat `s` weighs anything at a sample `d1²` away along one axis and at no distance
/// along the other. That weight bounds the weights of every sample at the same `d1`: each step
/// of the weight is monotonic in `d²`, rounding included. The samples it misses would add exact
/// zeros, which change no sum.
fn reaches(s: &SplatGpu, d1_2: f32) -> bool {
    if s.falloff == FALLOFF_GAUSSIAN {
        // `splat_weight`'s cut-off test alone: within the cut-off the gaussian is at least
        // exp(−16), never zero (and the `exp` is left for the samples that need it).
        return (d1_2 + 0.0) / (s.radius * s.radius) < GAUSSIAN_CUTOFF * GAUSSIAN_CUTOFF;
    }
    splat_weight(s, d1_2 + 0.0) != 0.0
}

/// Whether a splat can weigh anything on row `j` of axis `y`.
#[inline(always)]
fn row_reaches(y: &Axis, j: usize) -> bool {
    y.hits[j]
}

/// The samples `lo..hi` of a row outside which none of `axes` reaches (`(0, 0)` for none).
#[inline(always)]
fn union_reach<'a>(axes: impl Iterator<Item = &'a Axis>) -> (usize, usize) {
    axes.map(|x| x.reach).filter(|(lo, hi)| lo < hi).fold((usize::MAX, 0), |(a, b), (lo, hi)| (a.min(lo), b.max(hi)))
}

/// Add velocity component `c` (0: u, 1: v) of the splats `prepared` along row `j` of its
/// faces; `scratch` holds two of the row's lengths. `prepared` holds only splats that add to
/// this component: a splat whose amount is ±0 adds terms of ±0 to a sum that starts at +0 and
/// so is never −0, which changes no sum. Faces on a wall get nothing.
#[inline(always)]
fn add_velocity_row(
    prepared: &[&Prepared<'_>],
    c: usize,
    j: usize,
    row: &mut [f32],
    scratch: &mut [f32],
    walls: (bool, bool),
) {
    let on_row = || prepared.iter().filter(|p| row_reaches(p.velocity_axes(c).1, j));
    let (lo, hi) = union_reach(on_row().map(|p| p.velocity_axes(c).0));
    if lo >= hi {
        return;
    }
    let n = row.len();
    let (w, add) = scratch[..2 * n].split_at_mut(n);
    add[lo..hi].fill(0.0);
    for p in on_row() {
        let (x, y) = p.velocity_axes(c);
        row_weights(p.s, x, y, j, w);
        let amount = p.s.velocity[c];
        let (lo, hi) = x.reach;
        for (a, w) in add[lo..hi].iter_mut().zip(&w[lo..hi]) {
            *a += w * amount;
        }
    }
    if walls.0 {
        add[0] = 0.0;
    }
    if walls.1 {
        add[n - 1] = 0.0;
    }
    select_add(&mut row[lo..hi], &mut add[lo..hi]);
}

/// `x + a` where `a` is not zero (`!=`: NaN counts), else `x` as it is (keeping `−0`), for each
/// pair of `xs` and `adds`. A select rather than a branch, so that the loop vectorises; into
/// `adds` and then copied into `xs` whole, because a select stored straight back into `xs`
/// becomes an AVX2 masked store (`vmaskmovps`), which AMD's Zen cores run as microcode: the
/// velocity rows took about twice as long with it on a Zen 3.
#[inline(always)]
fn select_add(xs: &mut [f32], adds: &mut [f32]) {
    for (a, &x) in adds.iter_mut().zip(&*xs) {
        *a = if *a != 0.0 { x + *a } else { x };
    }
    xs.copy_from_slice(adds);
}

/// What splat `s` adds per cell: density, temperature, r, g, b, a.
fn cell_amounts(s: &SplatGpu) -> [f32; 6] {
    [s.density, s.temperature, s.dye[0], s.dye[1], s.dye[2], s.dye[3]]
}

/// Add the density, temperature and dye of every splat along cell row `j`. `add` holds six of
/// the row's lengths: the sums of density and temperature, each a row, then the dye's RGBA
/// sums interleaved as the dye field is, so that the loops vectorise; `w` one. Channels not
/// `used` (no splat adds to them: density and temperature when a scene has only dye) would keep
/// sums of exact zeros, which change nothing: they are skipped. A dye channel that no splat
/// adds to, beside one that a splat does, sums `w · 0 = +0` per splat (the weights are finite
/// and not negative), as the one-sample function's does.
#[inline(always)]
fn add_cell_row(
    prepared: &[Prepared<'_>],
    used: [bool; 6],
    j: usize,
    nx: usize,
    (d_row, t_row, c_row): (&mut [f32], &mut [f32], &mut [f32]),
    w: &mut [f32],
    add: &mut [f32],
) {
    let on_row = || prepared.iter().filter(|p| row_reaches(&p.y_cells, j));
    let (lo, hi) = union_reach(on_row().map(|p| &p.x_cells));
    if lo >= hi {
        return;
    }
    let (scalars, dye) = add.split_at_mut(2 * nx);
    let dye_used = used[2..].iter().any(|u| *u);
    for (sum, _) in scalars.chunks_exact_mut(nx).zip(used).filter(|(_, used)| *used) {
        sum[lo..hi].fill(0.0);
    }
    if dye_used {
        dye[4 * lo..4 * hi].fill(0.0);
    }
    for p in on_row() {
        row_weights(p.s, &p.x_cells, &p.y_cells, j, w);
        let (lo, hi) = p.x_cells.reach;
        let amounts = cell_amounts(p.s);
        for ((sum, amount), _) in scalars.chunks_exact_mut(nx).zip(amounts).zip(used).filter(|(_, used)| *used) {
            for (a, w) in sum[lo..hi].iter_mut().zip(&w[lo..hi]) {
                *a += w * amount;
            }
        }
        if dye_used {
            let rgba = [amounts[2], amounts[3], amounts[4], amounts[5]];
            for (a, &w) in dye[4 * lo..4 * hi].chunks_exact_mut(4).zip(&w[lo..hi]) {
                for (a, amount) in a.iter_mut().zip(rgba) {
                    *a += w * amount;
                }
            }
        }
    }
    for ((field, sum), _) in
        [&mut *d_row, &mut *t_row].into_iter().zip(scalars.chunks_exact_mut(nx)).zip(used).filter(|(_, used)| *used)
    {
        select_add(&mut field[lo..hi], &mut sum[lo..hi]);
    }
    if !dye_used {
        return;
    }
    let (px, sum) = (&mut c_row[4 * lo..4 * hi], &mut dye[4 * lo..4 * hi]);
    // Pairs of cells in AVX2 vectors where the kernels run with it (LLVM leaves this loop
    // scalar, with a branch per cell); the rest cell by cell.
    // A `match`, not a closure: a closure would be compiled without the row's AVX2 features
    // (ARCHITECTURE.md).
    #[cfg(target_arch = "x86_64")]
    let done = match super::avx2::Avx2::get() {
        Some(a) => 4 * a.add_rgba_where_any(px, sum),
        None => 0,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for (px, sum) in px[done..].chunks_exact_mut(4).zip(sum[done..].chunks_exact(4)) {
        if sum.iter().any(|x| *x != 0.0) {
            for (x, s) in px.iter_mut().zip(sum) {
                *x += s;
            }
        }
    }
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
    let prepared: Vec<Prepared<'_>> = splats.iter().map(|s| Prepared::new(g, s)).collect();
    // Per component the splats that add to it; a component none adds to is left alone.
    let adding = |c: usize| -> Vec<&Prepared<'_>> { prepared.iter().filter(|p| p.s.velocity[c] != 0.0).collect() };
    let (to_u, to_v) = (adding(0), adding(1));
    if !to_u.is_empty() {
        let walls = (g.u_on_wall(0), g.u_on_wall(g.nx));
        for_each_row_scratch(
            f.u,
            g.nx + 1,
            2 * (g.nx + 1),
            #[inline(always)]
            |j, row, scratch| add_velocity_row(&to_u, 0, j, row, scratch, walls),
        );
    }
    if !to_v.is_empty() {
        for_each_row_scratch(
            f.v,
            g.nx,
            2 * g.nx,
            #[inline(always)]
            |j, row, scratch| {
                if !g.v_on_wall(j) {
                    add_velocity_row(&to_v, 1, j, row, scratch, (false, false));
                }
            },
        );
    }
    let nx = g.nx;
    // A field the scene does not carry is empty: nothing is added to it.
    let present = [!f.density.is_empty(), !f.temperature.is_empty(), !f.dye.is_empty()];
    let used: [bool; 6] =
        std::array::from_fn(|c| present[c.min(2)] && splats.iter().any(|s| cell_amounts(s)[c] != 0.0));
    if !used.iter().any(|u| *u) {
        return;
    }
    let arch = crate::simd::arch();
    rows_mut(f.density, nx, g.ny)
        .zip(rows_mut(f.temperature, nx, g.ny))
        .zip(rows_mut(f.dye, 4 * nx, g.ny))
        .with_min_len((4096 / nx).max(1))
        .enumerate()
        .for_each_init(
            || (vec![0.0f32; nx], vec![0.0f32; 6 * nx]),
            |(w, add), (j, ((d_row, t_row), c_row))| {
                crate::simd::vectorized(
                    arch,
                    #[inline(always)]
                    || add_cell_row(&prepared, used, j, nx, (&mut *d_row, &mut *t_row, &mut *c_row), w, add),
                )
            },
        );
}

/// [`run`] with obstacles: a face gets its open part of the velocity, a cell its open part
/// of the rest. Samples that receive nothing are left alone.
pub fn run_solid(g: &G, splats: &[SplatGpu], f: SplatFields<'_>, (uf, vf): (&[f32], &[f32])) {
    if splats.is_empty() {
        return;
    }
    for_each_row(f.u, g.nx + 1, |j, row| {
        let near = reaching_row(g, splats, (j as f32 + 0.5) * g.h);
        for (i, x) in row.iter_mut().enumerate() {
            if !g.u_on_wall(i) {
                let add = splat_u_face(g, &near, i, j) * solid::u_open(g, uf, i, j);
                if add != 0.0 {
                    *x += add;
                }
            }
        }
    });
    for_each_row(f.v, g.nx, |j, row| {
        if g.v_on_wall(j) {
            return;
        }
        let near = reaching_row(g, splats, g.vj(j) as f32 * g.h);
        for (i, x) in row.iter_mut().enumerate() {
            let add = splat_v_face(g, &near, i, j) * solid::v_open(g, vf, i, j);
            if add != 0.0 {
                *x += add;
            }
        }
    });
    let nx = g.nx;
    rows_mut(f.density, nx, g.ny)
        .zip(rows_mut(f.temperature, nx, g.ny))
        .zip(rows_mut(f.dye, 4 * nx, g.ny))
        .enumerate()
        .for_each(|(j, ((d_row, t_row), c_row))| {
            let near = reaching_row(g, splats, (j as f32 + 0.5) * g.h);
            for i in 0..nx {
                let open = solid::cell_open(g, uf, vf, i, j);
                let a = splat_cell(g, &near, i, j).map(|x| x * open);
                if !d_row.is_empty() && a[0] != 0.0 {
                    d_row[i] += a[0];
                }
                if !t_row.is_empty() && a[1] != 0.0 {
                    t_row[i] += a[1];
                }
                if !c_row.is_empty() && a[2..].iter().any(|x| *x != 0.0) {
                    for (x, s) in c_row[4 * i..4 * i + 4].iter_mut().zip(&a[2..]) {
                        *x += s;
                    }
                }
            }
        });
}

/// The table's entry: a dispatch of `splat` on the CPU. A finer dye (`factor` above 1) is
/// `splat_cells`'.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DyeParams = d.params().unwrap_or_default();
    let dye = if p.factor > 1 { &mut [][..] } else { s.w("dye") };
    let fields =
        SplatFields { u: s.w("u"), v: s.w("v"), density: s.w("density"), temperature: s.w("temperature"), dye };
    if c.g.solids {
        return run_solid(c.g, c.splats, fields, (s.r("u_faces"), s.r("v_faces")));
    }
    run(c.g, c.splats, fields);
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::frame::uniform::{FALLOFF_CONSTANT, FALLOFF_LINEAR};
    use swirly_core::{Boundary, FieldId, Grid};

    /// `reaches` (which skips the gaussian's `exp`) says exactly whether `splat_weight` is
    /// not zero, on both sides of the cut-off and of the linear radius.
    #[test]
    fn reaches_is_whether_the_weight_is_not_zero() {
        for falloff in [FALLOFF_GAUSSIAN, FALLOFF_LINEAR, FALLOFF_CONSTANT] {
            for radius in [0.1f32, 0.37, 1.0e-20, 3.0] {
                let s = SplatGpu { radius, falloff, ..SplatGpu::default() };
                let reach = match falloff {
                    FALLOFF_GAUSSIAN => GAUSSIAN_CUTOFF * radius,
                    _ => radius,
                };
                let mut d2s: Vec<f32> = vec![0.0, f32::MIN_POSITIVE, f32::INFINITY, f32::NAN];
                for k in -64i32..=64 {
                    let d = reach * (1.0 + k as f32 * 1e-7);
                    d2s.extend([d * d, f32::from_bits((d * d).to_bits() + 1), (0.5 * d) * (0.5 * d)]);
                }
                for d2 in d2s {
                    assert_eq!(
                        reaches(&s, d2),
                        splat_weight(&s, d2 + 0.0) != 0.0,
                        "{falloff} r = {radius}, d² = {d2:e}"
                    );
                }
            }
        }
    }

    /// The batched kernel against the one-sample functions: exactly for the linear falloff;
    /// for the gaussian within `2 (2 + 16)` ulps relative, since a rounding of the argument
    /// `q = d²/r² < 16` (cut-off) is a relative error of `q` ulps in `exp(−q)`; zero exactly
    /// where the one-sample function adds nothing.
    #[test]
    fn batched_splats_match_the_one_sample_functions() {
        for (bx, by) in [(Boundary::Wall, Boundary::Wall), (Boundary::Periodic, Boundary::Periodic)] {
            let (nx, ny) = (37usize, 23usize);
            let grid = Grid::new(nx as u32, ny as u32, 0.05, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let splats = [
                SplatGpu {
                    center: [0.3, 0.2],
                    radius: 0.15,
                    falloff: FALLOFF_GAUSSIAN,
                    velocity: [3.0, -2.0],
                    density: 1.5,
                    temperature: 2.0,
                    dye: [1.0, 0.5, 0.25, 1.0],
                    ..SplatGpu::default()
                },
                SplatGpu {
                    center: [1.7, 1.1],
                    radius: 0.3,
                    falloff: FALLOFF_LINEAR,
                    velocity: [-1.0, 4.0],
                    density: 0.5,
                    temperature: -1.0,
                    dye: [0.0, 1.0, 2.0, 0.5],
                    ..SplatGpu::default()
                },
                // Dye only, then velocity only: the channels no splat adds to are skipped.
                SplatGpu {
                    center: [0.9, 0.6],
                    radius: 0.2,
                    falloff: FALLOFF_GAUSSIAN,
                    velocity: [0.0, 0.0],
                    density: 0.0,
                    temperature: 0.0,
                    dye: [0.0, 0.0, 3.0, 0.0],
                    ..SplatGpu::default()
                },
                SplatGpu {
                    center: [0.5, 0.5],
                    radius: 0.25,
                    falloff: FALLOFF_LINEAR,
                    velocity: [2.0, 1.0],
                    density: 0.0,
                    temperature: 0.0,
                    dye: [0.0; 4],
                    ..SplatGpu::default()
                },
            ];
            for one in [&splats[..1], &splats[1..2], &splats[..2], &splats[2..3], &splats[3..], &splats[1..]] {
                // Cell fields start at −0.0, which adding nothing must keep.
                let mut fields: Vec<Vec<f32>> = [FieldId::U, FieldId::V, FieldId::Density, FieldId::Temperature]
                    .iter()
                    .map(|&f| vec![if matches!(f, FieldId::U | FieldId::V) { 0.0 } else { -0.0 }; grid.len(f)])
                    .collect();
                let mut dye = vec![-0.0; 4 * nx * ny];
                let [u, v, d, t] = &mut fields[..] else { unreachable!() };
                run(&g, one, SplatFields { u, v, density: d, temperature: t, dye: &mut dye });
                let exact = one.iter().all(|s| s.falloff != FALLOFF_GAUSSIAN);
                let check = |got: f32, want: f32, what: &str| {
                    let tol = if exact { 0.0 } else { 2.0 * (2.0 + 16.0) * f32::EPSILON * want.abs() };
                    assert!((got - want).abs() <= tol, "{what}: {got} vs {want}");
                    assert_eq!(got == 0.0, want == 0.0, "{what}: {got} vs {want}");
                };
                let untouched = |got: f32, what: &str| assert_eq!(got.to_bits(), (-0.0f32).to_bits(), "{what}: {got}");
                for j in 0..ny {
                    for i in 0..=nx {
                        let want = if g.u_on_wall(i) { 0.0 } else { splat_u_face(&g, one, i, j) };
                        check(u[g.u(i, j)], want, &format!("u ({i}, {j})"));
                    }
                    for i in 0..nx {
                        let add = splat_cell(&g, one, i, j);
                        for (k, field) in [&*d, &*t].into_iter().enumerate() {
                            let what = format!("{} ({i}, {j})", ["density", "temperature"][k]);
                            check(field[g.c(i, j)], add[k], &what);
                            if add[k] == 0.0 {
                                untouched(field[g.c(i, j)], &what);
                            }
                        }
                        for ch in 0..4 {
                            check(dye[4 * g.c(i, j) + ch], add[2 + ch], &format!("dye ({i}, {j})"));
                            if add[2..].iter().all(|a| *a == 0.0) {
                                untouched(dye[4 * g.c(i, j) + ch], &format!("dye ({i}, {j})"));
                            }
                        }
                    }
                }
                for j in 0..=ny {
                    for i in 0..nx {
                        let want = if g.v_on_wall(j) { 0.0 } else { splat_v_face(&g, one, i, j) };
                        check(v[g.v(i, j)], want, &format!("v ({i}, {j})"));
                    }
                }
            }
        }
    }
}
