//! Shared helpers of the CPU kernels: the twin of `fluid-shaders/shaders/shared/`.
//! Index helpers, boundary handling, bilinear sampling and the backtrace.

use fluid_core::grid::uniforms::GridUniform;
use fluid_core::{Boundary, FieldKind};
use rayon::iter::Either;
use rayon::prelude::*;

/// The rows of `width` values of a field a kernel writes row by row, or, for a field the scene
/// does not carry (empty), as many empty rows: zipped with the other fields' rows, it leaves
/// their iteration whole.
pub fn rows_mut(field: &mut [f32], width: usize, rows: usize) -> impl IndexedParallelIterator<Item = &mut [f32]> {
    if field.is_empty() {
        Either::Left((0..rows).into_par_iter().map(|_| <&mut [f32]>::default()))
    } else {
        Either::Right(field.par_chunks_mut(width))
    }
}

/// The grid as kernels use it.
#[derive(Clone, Copy, Debug)]
pub struct G {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// Cell side.
    pub h: f32,
    /// 1 / h.
    pub inv_h: f32,
    /// x wraps.
    pub px: bool,
    /// y wraps.
    pub py: bool,
    /// [`G::wall_windows`], computed once: the AVX2 samples test it for every batch.
    windows: bool,
}

impl G {
    /// From the uniform every kernel receives.
    pub fn new(u: &GridUniform) -> G {
        let (nx, ny) = (u.nx as usize, u.ny as usize);
        let px = Boundary::from_code(u.boundary_x) == Boundary::Periodic;
        let py = Boundary::from_code(u.boundary_y) == Boundary::Periodic;
        G { nx, ny, h: u.h, inv_h: u.inv_h, px, py, windows: !px && !py && nx > 1 && ny > 1 }
    }

    /// Row length of a field kind.
    pub fn cols(&self, kind: FieldKind) -> usize {
        match kind {
            FieldKind::Cell | FieldKind::V => self.nx,
            FieldKind::Dye => 4 * self.nx,
            FieldKind::U => self.nx + 1,
            FieldKind::Levels => self.nx,
        }
    }

    /// Index of cell `(i, j)`.
    #[inline(always)]
    pub fn c(&self, i: usize, j: usize) -> usize {
        j * self.nx + i
    }

    /// Index of u-face `(i, j)`.
    #[inline(always)]
    pub fn u(&self, i: usize, j: usize) -> usize {
        j * (self.nx + 1) + i
    }

    /// Index of v-face `(i, j)`.
    #[inline(always)]
    pub fn v(&self, i: usize, j: usize) -> usize {
        j * self.nx + i
    }

    /// Whether u-face column `i` lies on a wall (its velocity is always zero).
    #[inline(always)]
    pub fn u_on_wall(&self, i: usize) -> bool {
        !self.px && (i == 0 || i == self.nx)
    }

    /// Whether v-face row `j` lies on a wall.
    #[inline(always)]
    pub fn v_on_wall(&self, j: usize) -> bool {
        !self.py && (j == 0 || j == self.ny)
    }

    /// Walls on both axes and at least two cells along each: then every bilinear stencil of
    /// every field is a 2 × 2 window at its first sample (see [`stencil`]).
    #[inline(always)]
    pub fn wall_windows(&self) -> bool {
        self.windows
    }

    /// Every wall axis at least two cells long (periodic axes any length): what the kernels'
    /// AVX2 path needs. A wall axis's stencils are then windows (see [`stencil`]); a periodic
    /// axis's wrap.
    #[inline(always)]
    pub fn walls_two_wide(&self) -> bool {
        (self.px || self.nx > 1) && (self.py || self.ny > 1)
    }

    /// Canonical u-face column: on a periodic axis face `nx` is face `0`.
    #[inline(always)]
    pub fn ui(&self, i: usize) -> usize {
        if self.px && i == self.nx { 0 } else { i }
    }

    /// Canonical v-face row.
    #[inline(always)]
    pub fn vj(&self, j: usize) -> usize {
        if self.py && j == self.ny { 0 } else { j }
    }
}

/// Neighbour `i − 1` of cell column `i` along an axis of `n` cells: wraps when periodic,
/// `None` past a wall.
#[inline(always)]
pub fn prev(i: usize, n: usize, periodic: bool) -> Option<usize> {
    if i > 0 {
        Some(i - 1)
    } else if periodic {
        Some(n - 1)
    } else {
        None
    }
}

/// Neighbour `i + 1` of cell column `i` along an axis of `n` cells.
#[inline(always)]
pub fn next(i: usize, n: usize, periodic: bool) -> Option<usize> {
    if i + 1 < n {
        Some(i + 1)
    } else if periodic {
        Some(0)
    } else {
        None
    }
}

/// `floor(x)` as an integer without a libm call (baseline x86-64 has no rounding
/// instruction). Saturates for huge or NaN inputs (NaN gives 0), which the callers clamp or
/// wrap.
#[inline(always)]
pub fn ifloor(x: f32) -> i32 {
    let t = x as i32;
    // Below `i32::MIN` (−inf included) the conversion saturates and the step back would
    // overflow.
    if (t as f32) > x { t.saturating_sub(1) } else { t }
}

/// `x as i32` for `0 <= x < 2^22` (what a clamped coordinate is), written without the
/// saturating float-to-int conversion, which does not vectorise on x86-64: adding 2^23 rounds
/// `x` to the nearest integer in the low mantissa bits; one step back where that rounded up.
#[inline(always)]
pub fn trunc_small(x: f32) -> i32 {
    const MAGIC: f32 = 8_388_608.0; // 2^23
    let n = (x + MAGIC).to_bits() as i32 - MAGIC.to_bits() as i32;
    if n as f32 > x { n - 1 } else { n }
}

/// `floor(x)` as an integer for `|x| < 2^22`, written so that it vectorises: adding 1.5 · 2^23
/// rounds `x` to the nearest integer in the low mantissa bits (for negative `x` too); one step
/// back where that rounded up. The same as [`ifloor`] in that range.
#[inline(always)]
pub fn floor_small(x: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2^23
    let n = (x + MAGIC).to_bits() as i32 - MAGIC.to_bits() as i32;
    if n as f32 > x { n - 1 } else { n }
}

/// `x`, or zero of its sign where `x` is subnormal (below `f32::MIN_POSITIVE` in magnitude):
/// what a CPU in flush-to-zero mode stores. Through the bits, so that no floating-point
/// operation sees the subnormal (each one would cost a microcode assist on x86), and so that
/// batches of it vectorise.
#[inline(always)]
pub fn flush_subnormal(x: f32) -> f32 {
    let b = x.to_bits();
    f32::from_bits(if b & 0x7f80_0000 == 0 { b & 0x8000_0000 } else { b })
}

/// Clamp to `[lo, hi]`; a NaN maps to `lo` (a blown-up position samples the corner instead of
/// spreading NaN). Written with `max`/`min` so batches of it vectorise.
#[inline(always)]
pub fn clampf(x: f32, lo: f32, hi: f32) -> f32 {
    x.max(lo).min(hi)
}

/// Interpolation stencil `(i0, i1, t)` for coordinate `g` (in sample units) along an axis of
/// `n` cells. `faces`: samples sit at `0..=n` (face-centred) instead of `0..n` (cell-centred).
/// Walls clamp to the first and last sample; periodic axes wrap. On a wall axis with at least
/// two samples `i1 = i0 + 1` always: the last sample is reached with `t = 1` from the one before
/// (so that a bilinear sample reads a fixed 2 × 2 window).
#[inline(always)]
pub fn stencil(g: f32, n: usize, faces: bool, periodic: bool) -> (usize, usize, f32) {
    if periodic {
        let fl = ifloor(g);
        let t = g - fl as f32;
        // `rem_euclid` divides; inside the period it is the identity.
        let i0 = if (0..n as i32).contains(&fl) { fl } else { fl.rem_euclid(n as i32) } as usize;
        let i1 = if faces {
            i0 + 1
        } else if i0 + 1 == n {
            0
        } else {
            i0 + 1
        };
        (i0, i1, t)
    } else {
        let last = if faces { n } else { n - 1 };
        let g = clampf(g, 0.0, last as f32);
        let i0 = trunc_small(g).min(last.max(1) as i32 - 1) as usize;
        let i1 = (i0 + 1).min(last);
        (i0, i1, g - i0 as f32)
    }
}

/// Bilinear sample of channel `ch` of a field with `stride` values per row and `channels`
/// values per sample.
#[inline(always)]
pub fn bilerp(
    data: &[f32],
    stride: usize,
    channels: usize,
    ch: usize,
    x: (usize, usize, f32),
    y: (usize, usize, f32),
) -> f32 {
    let (i0, i1, tx) = x;
    let (j0, j1, ty) = y;
    let (r0, r1) = (&data[j0 * stride..(j0 + 1) * stride], &data[j1 * stride..(j1 + 1) * stride]);
    let (a0, a1) = (i0 * channels + ch, i1 * channels + ch);
    let a = r0[a0] + (r0[a1] - r0[a0]) * tx;
    let b = r1[a0] + (r1[a1] - r1[a0]) * tx;
    a + (b - a) * ty
}

/// [`bilerp`] of all four channels of an RGBA cell field at once (the same arithmetic per
/// channel; the four lanes map onto one SIMD register).
#[inline(always)]
pub fn bilerp4(data: &[f32], nx: usize, x: (usize, usize, f32), y: (usize, usize, f32)) -> [f32; 4] {
    let (i0, i1, tx) = x;
    let (j0, j1, ty) = y;
    let px = |i: usize, j: usize| -> [f32; 4] {
        let o = 4 * (j * nx + i);
        rgba(&data[o..o + 4])
    };
    bilerp_rgba(px(i0, j0), px(i1, j0), px(i0, j1), px(i1, j1), tx, ty)
}

/// The first four values of `p` as one RGBA value (one 16-byte load).
#[inline(always)]
fn rgba(p: &[f32]) -> [f32; 4] {
    let mut c = [0f32; 4];
    c.copy_from_slice(&p[..4]);
    c
}

/// `a + (b − a)·t` per channel, [`bilerp`]'s arithmetic.
#[inline(always)]
fn lerp_rgba(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t, a[3] + (b[3] - a[3]) * t]
}

/// [`bilerp`] of the four channels of the corners `c00, c10, c01, c11`, in its order.
#[inline(always)]
fn bilerp_rgba(c00: [f32; 4], c10: [f32; 4], c01: [f32; 4], c11: [f32; 4], tx: f32, ty: f32) -> [f32; 4] {
    lerp_rgba(lerp_rgba(c00, c10, tx), lerp_rgba(c01, c11, tx), ty)
}

/// [`bilerp4`] at the 2 × 2 window whose first cell is `(i0, j0)` (the wall stencil
/// `(i0, i0 + 1, tx)`, `(j0, j0 + 1, ty)`, see `stencil`): one bounds check.
#[inline(always)]
pub fn bilerp4_window(data: &[f32], nx: usize, (i0, tx): (usize, f32), (j0, ty): (usize, f32)) -> [f32; 4] {
    let w = &data[4 * (j0 * nx + i0)..][..4 * nx + 8];
    bilerp_rgba(rgba(w), rgba(&w[4..]), rgba(&w[4 * nx..]), rgba(&w[4 * nx + 4..]), tx, ty)
}

/// u at position `(x, y)` in cell units (world position / h; cell `(i, j)` spans
/// `[i, i + 1] × [j, j + 1]`).
#[inline(always)]
pub fn sample_u(g: &G, u: &[f32], x: f32, y: f32) -> f32 {
    let sx = stencil(x, g.nx, true, g.px);
    let sy = stencil(y - 0.5, g.ny, false, g.py);
    bilerp(u, g.nx + 1, 1, 0, sx, sy)
}

/// v at position `(x, y)` in cell units.
#[inline(always)]
pub fn sample_v(g: &G, v: &[f32], x: f32, y: f32) -> f32 {
    let sx = stencil(x - 0.5, g.nx, false, g.px);
    let sy = stencil(y, g.ny, true, g.py);
    bilerp(v, g.nx, 1, 0, sx, sy)
}

/// Velocity at position `(x, y)` in cell units.
#[inline(always)]
pub fn velocity(g: &G, u: &[f32], v: &[f32], x: f32, y: f32) -> (f32, f32) {
    (sample_u(g, u, x, y), sample_v(g, v, x, y))
}

/// Where the fluid now at `(x, y)` (cell units) was `dt` ago: Euler (1), midpoint (2) or
/// Ralston RK3 (3). `s = dt / h` turns a velocity into cells per step.
#[inline(always)]
pub fn backtrace(g: &G, u: &[f32], v: &[f32], order: u32, s: f32, x: f32, y: f32) -> (f32, f32) {
    let k1 = velocity(g, u, v, x, y);
    match order {
        1 => (x - s * k1.0, y - s * k1.1),
        2 => {
            let k2 = velocity(g, u, v, x - 0.5 * s * k1.0, y - 0.5 * s * k1.1);
            (x - s * k2.0, y - s * k2.1)
        }
        _ => {
            let k2 = velocity(g, u, v, x - 0.5 * s * k1.0, y - 0.5 * s * k1.1);
            let k3 = velocity(g, u, v, x - 0.75 * s * k2.0, y - 0.75 * s * k2.1);
            (
                x - s * (2.0 / 9.0 * k1.0 + 3.0 / 9.0 * k2.0 + 4.0 / 9.0 * k3.0),
                y - s * (2.0 / 9.0 * k1.1 + 3.0 / 9.0 * k2.1 + 4.0 / 9.0 * k3.1),
            )
        }
    }
}

/// Run `cell(i, j) -> value` over every sample of an output field with `cols` values per row,
/// rows in parallel. Each value depends only on its own `(i, j)`, so the result is the same for
/// any number of threads. Rows run through [`crate::simd`]'s dispatch: give `f` the attribute
/// `#[inline(always)]` (as every kernel does), or it runs as baseline code.
pub fn for_each_row(out: &mut [f32], cols: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    let min_rows = (4096 / cols.max(1)).max(1);
    let arch = crate::simd::arch();
    out.par_chunks_mut(cols).with_min_len(min_rows).enumerate().for_each(|(j, row)| {
        crate::simd::vectorized(
            arch,
            #[inline(always)]
            || f(j, row),
        )
    });
}

/// [`for_each_row`] with a scratch slice of `scratch` values for `f`, one per rayon job (its
/// contents on entry are whatever the job's previous row left there).
pub fn for_each_row_scratch(
    out: &mut [f32],
    cols: usize,
    scratch: usize,
    f: impl Fn(usize, &mut [f32], &mut [f32]) + Sync,
) {
    let min_rows = (4096 / cols.max(1)).max(1);
    let arch = crate::simd::arch();
    out.par_chunks_mut(cols).with_min_len(min_rows).enumerate().for_each_init(
        || vec![0f32; scratch],
        |buf, (j, row)| {
            crate::simd::vectorized(
                arch,
                #[inline(always)]
                || f(j, row, buf),
            )
        },
    );
}

/// The inner samples `1..w − 1` of row `j` of a field `w` samples wide (a row with rows above
/// and below) and their four neighbours, as slices of one length: what the row paths of the
/// five-point kernels read.
pub struct Cross<'a> {
    /// The samples themselves.
    pub centre: &'a [f32],
    /// Their left neighbours.
    pub left: &'a [f32],
    /// Their right neighbours.
    pub right: &'a [f32],
    /// Their neighbours below (row `j − 1`).
    pub down: &'a [f32],
    /// Their neighbours above (row `j + 1`).
    pub up: &'a [f32],
}

/// [`Cross`] of row `j` of `f`, `w` samples wide.
#[inline(always)]
pub fn cross(f: &[f32], w: usize, j: usize) -> Cross<'_> {
    let c = j * w;
    Cross {
        centre: &f[c + 1..c + w - 1],
        left: &f[c..c + w - 2],
        right: &f[c + 2..c + w],
        down: &f[c - w + 1..c - 1],
        up: &f[c + w + 1..c + 2 * w - 1],
    }
}

/// One row of a multigrid level with the rows below and above it (`None` past a wall), as the
/// row functions of the smoother and the residual read them: whole level arrays or the band
/// buffers of `mg_smooth2` alike.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    /// Row `j − 1` (row `ny − 1` for row 0 on a periodic axis).
    pub down: Option<&'a [f32]>,
    /// Row `j` itself.
    pub row: &'a [f32],
    /// Row `j + 1`.
    pub up: Option<&'a [f32]>,
}

impl<'a> Rows<'a> {
    /// Row `j` of a level array `f` of rows `w` wide and `ny` high, with its neighbours.
    #[inline(always)]
    pub fn of(f: &'a [f32], w: usize, ny: usize, py: bool, j: usize) -> Rows<'a> {
        let at = |k: usize| &f[k * w..(k + 1) * w];
        Rows { down: prev(j, ny, py).map(at), row: at(j), up: next(j, ny, py).map(at) }
    }

    /// The inner samples `1..nx − 1` and their four neighbours as slices of one length, when
    /// the row has rows below and above and at least three samples: what the row paths read.
    #[inline(always)]
    pub fn cross(&self) -> Option<Cross<'a>> {
        let nx = self.row.len();
        match (self.down, self.up) {
            (Some(down), Some(up)) if nx >= 3 => Some(Cross {
                centre: &self.row[1..nx - 1],
                left: &self.row[..nx - 2],
                right: &self.row[2..nx],
                down: &down[1..nx - 1],
                up: &up[1..nx - 1],
            }),
            _ => None,
        }
    }

    /// [`level_neighbours`] at column `i`: `(Σ p_nbr, n)` over the neighbours that are not
    /// walls, in the order left, right, down, up.
    #[inline(always)]
    pub fn neighbours(&self, i: usize, px: bool) -> (f32, f32) {
        let nx = self.row.len();
        let mut sum = 0.0f32;
        let mut n = 0.0f32;
        if let Some(il) = prev(i, nx, px) {
            sum += self.row[il];
            n += 1.0;
        }
        if let Some(ir) = next(i, nx, px) {
            sum += self.row[ir];
            n += 1.0;
        }
        if let Some(d) = self.down {
            sum += d[i];
            n += 1.0;
        }
        if let Some(u) = self.up {
            sum += u[i];
            n += 1.0;
        }
        (sum, n)
    }
}

/// The inner samples `1..w − 1` of row `j` of `f`, `w` samples wide.
#[inline(always)]
pub fn inner(f: &[f32], w: usize, j: usize) -> &[f32] {
    &f[j * w + 1..(j + 1) * w - 1]
}

/// Samples processed together by the batched drivers. Backtraces are long dependent chains
/// (position → stencil → loads → position …); interleaving independent samples lets the CPU
/// overlap them. Each lane does exactly the arithmetic of the one-sample functions.
pub const LANES: usize = 8;

/// [`stencil`] of [`LANES`] coordinates: `(i0, i1, t)` per lane. On a wall axis written so
/// that it vectorises; the same arithmetic lane by lane.
#[inline(always)]
pub fn stencil_lanes(
    g: &[f32; LANES],
    n: usize,
    faces: bool,
    periodic: bool,
) -> ([i32; LANES], [i32; LANES], [f32; LANES]) {
    let mut i0 = [0i32; LANES];
    let mut i1 = [0i32; LANES];
    let mut t = [0f32; LANES];
    if periodic {
        let (nf, ni) = (n as f32, n as i32);
        // Coordinates within a period of the domain (n ≤ 2^15, so far below 2^22): the floor by
        // `floor_small` and the wrap by selects, which vectorise; anything else (far out, NaN)
        // one lane at a time.
        if g.iter().all(|&x| x >= -nf && x < 2.0 * nf) {
            for k in 0..LANES {
                let fl = floor_small(g[k]);
                t[k] = g[k] - fl as f32;
                let a = if fl < 0 {
                    fl + ni
                } else if fl >= ni {
                    fl - ni
                } else {
                    fl
                };
                i0[k] = a;
                i1[k] = if !faces && a + 1 == ni { 0 } else { a + 1 };
            }
        } else {
            for k in 0..LANES {
                let (a, b, w) = stencil(g[k], n, faces, true);
                (i0[k], i1[k], t[k]) = (a as i32, b as i32, w);
            }
        }
        return (i0, i1, t);
    }
    let last = if faces { n } else { n - 1 };
    let (lastf, lasti, m) = (last as f32, last as i32, last.max(1) as i32 - 1);
    for k in 0..LANES {
        let x = clampf(g[k], 0.0, lastf);
        let a = trunc_small(x).min(m);
        i0[k] = a;
        i1[k] = (a + 1).min(lasti);
        t[k] = x - a as f32;
    }
    (i0, i1, t)
}

/// Bilinear sample at [`LANES`] coordinates `(gx, gy)` (in sample units) of a field with
/// `stride` values per row, on an axis pair with walls only: stencils for all lanes first
/// (vectorised), then the loads, then the interpolation — the arithmetic of [`stencil`] and
/// [`bilerp`] lane by lane.
#[inline(always)]
fn bilerp_lanes_walls(
    data: &[f32],
    stride: usize,
    (nx, x_faces): (usize, bool),
    (ny, y_faces): (usize, bool),
    gx: &[f32; LANES],
    gy: &[f32; LANES],
) -> [f32; LANES] {
    // With a single sample along an axis (a grid one cell wide) the stencils are not windows.
    if !((x_faces || nx > 1) && (y_faces || ny > 1)) {
        return std::array::from_fn(|k| {
            bilerp(data, stride, 1, 0, stencil(gx[k], nx, x_faces, false), stencil(gy[k], ny, y_faces, false))
        });
    }
    // Phase 1 (vectorised): stencils. Every stencil is the 2 × 2 window at its first sample
    // (see `stencil`).
    let (i0, _, tx) = stencil_lanes(gx, nx, x_faces, false);
    let (j0, _, ty) = stencil_lanes(gy, ny, y_faces, false);
    bilerp_windows(data, stride, (&i0, &tx), (&j0, &ty))
}

/// [`bilerp`] at [`LANES`] wall stencils `(i0, i0 + 1, tx)`, `(j0, j0 + 1, ty)` of a field with
/// `stride` values per row (the stencils of an axis with two samples or more, see `stencil`):
/// each lane reads the 2 × 2 window at `(i0, j0)`, one bounds check per lane, then all lanes
/// interpolate in `bilerp`'s order.
#[inline(always)]
pub fn bilerp_windows(
    data: &[f32],
    stride: usize,
    (i0, tx): (&[i32; LANES], &[f32; LANES]),
    (j0, ty): (&[i32; LANES], &[f32; LANES]),
) -> [f32; LANES] {
    let stride_i = stride as i32;
    let base: [i32; LANES] = std::array::from_fn(|k| j0[k] * stride_i + i0[k]);
    // The loads, one bounds check per sample.
    let mut c00 = [0f32; LANES];
    let mut c10 = [0f32; LANES];
    let mut c01 = [0f32; LANES];
    let mut c11 = [0f32; LANES];
    for k in 0..LANES {
        let w = &data[base[k] as usize..][..stride + 2];
        (c00[k], c10[k], c01[k], c11[k]) = (w[0], w[1], w[stride], w[stride + 1]);
    }
    // Interpolation (vectorised), in the order `bilerp` uses.
    let mut out = [0f32; LANES];
    for k in 0..LANES {
        let a = c00[k] + (c10[k] - c00[k]) * tx[k];
        let b = c01[k] + (c11[k] - c01[k]) * tx[k];
        out[k] = a + (b - a) * ty[k];
    }
    out
}

/// Velocity at [`LANES`] positions (cell units).
#[inline(always)]
pub fn velocity_lanes(g: &G, u: &[f32], v: &[f32], x: &[f32; LANES], y: &[f32; LANES]) -> ([f32; LANES], [f32; LANES]) {
    (sample_u_lanes(g, u, x, y), sample_v_lanes(g, v, x, y))
}

/// [`bilerp`] at [`LANES`] stencils of any kind (wrapping ones included) of a field with
/// `stride` values per row: four loads per lane, then all lanes interpolate in `bilerp`'s order.
#[inline(always)]
pub fn bilerp_stencils(
    data: &[f32],
    stride: usize,
    (i0, i1, tx): &([i32; LANES], [i32; LANES], [f32; LANES]),
    (j0, j1, ty): &([i32; LANES], [i32; LANES], [f32; LANES]),
) -> [f32; LANES] {
    let mut c = [[0f32; LANES]; 4];
    for k in 0..LANES {
        let (r0, r1) = (j0[k] as usize * stride, j1[k] as usize * stride);
        let (a0, a1) = (i0[k] as usize, i1[k] as usize);
        (c[0][k], c[1][k], c[2][k], c[3][k]) = (data[r0 + a0], data[r0 + a1], data[r1 + a0], data[r1 + a1]);
    }
    std::array::from_fn(|k| {
        let a = c[0][k] + (c[1][k] - c[0][k]) * tx[k];
        let b = c[2][k] + (c[3][k] - c[2][k]) * tx[k];
        a + (b - a) * ty[k]
    })
}

/// [`sample_u`] at [`LANES`] positions.
#[inline(always)]
pub fn sample_u_lanes(g: &G, u: &[f32], x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
    let gy: [f32; LANES] = std::array::from_fn(|k| y[k] - 0.5);
    if g.px || g.py {
        let (sx, sy) = (stencil_lanes(x, g.nx, true, g.px), stencil_lanes(&gy, g.ny, false, g.py));
        return bilerp_stencils(u, g.nx + 1, &sx, &sy);
    }
    bilerp_lanes_walls(u, g.nx + 1, (g.nx, true), (g.ny, false), x, &gy)
}

/// [`sample_v`] at [`LANES`] positions.
#[inline(always)]
pub fn sample_v_lanes(g: &G, v: &[f32], x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
    let gx: [f32; LANES] = std::array::from_fn(|k| x[k] - 0.5);
    if g.px || g.py {
        let (sx, sy) = (stencil_lanes(&gx, g.nx, false, g.px), stencil_lanes(y, g.ny, true, g.py));
        return bilerp_stencils(v, g.nx, &sx, &sy);
    }
    bilerp_lanes_walls(v, g.nx, (g.nx, false), (g.ny, true), &gx, y)
}

/// `a + (b − a)·t` per lane, the arithmetic of [`bilerp`]'s interpolation.
#[inline(always)]
fn lerp_lanes(a: &[f32], b: &[f32], t: f32) -> [f32; LANES] {
    std::array::from_fn(|k| a[k] + (b[k] - a[k]) * t)
}

/// [`bilerp`] with fixed weights of `LANES` consecutive samples of two rows: lane `k`
/// interpolates `r0[k]`, `r0[k + 1]`, `r1[k]`, `r1[k + 1]`.
#[inline(always)]
fn bilerp_rows(r0: &[f32], r1: &[f32], tx: f32, ty: f32) -> [f32; LANES] {
    let (r0, r1) = (&r0[..=LANES], &r1[..=LANES]);
    let a = lerp_lanes(&r0[..LANES], &r0[1..], tx);
    let b = lerp_lanes(&r1[..LANES], &r1[1..], tx);
    lerp_lanes(&a, &b, ty)
}

/// The velocity at the `LANES` u-faces `(i0 .. i0 + LANES, j)`, whose positions (cell units)
/// are `(x[k], y)`: the first stage of their backtrace, [`velocity`] there bit for bit. Those
/// positions are whole or half cells, so every stencil is known; away from the edges the
/// samples are consecutive in memory and the lanes load them as slices instead of gathering.
#[inline(always)]
pub fn velocity_at_u_faces(
    g: &G,
    u: &[f32],
    v: &[f32],
    (i0, j): (usize, usize),
    x: &[f32; LANES],
    y: f32,
) -> ([f32; LANES], [f32; LANES]) {
    if i0 >= 1 && i0 + LANES <= g.nx && j + 1 < g.ny {
        let (su, sv) = (g.nx + 1, g.nx);
        let ku = bilerp_rows(&u[j * su + i0..], &u[(j + 1) * su + i0..], 0.0, 0.0);
        let kv = bilerp_rows(&v[j * sv + i0 - 1..], &v[(j + 1) * sv + i0 - 1..], 0.5, 0.5);
        return (ku, kv);
    }
    velocity_lanes(g, u, v, x, &[y; LANES])
}

/// The velocity at the `LANES` v-faces `(i0 .. i0 + LANES, j)`, as [`velocity_at_u_faces`].
#[inline(always)]
pub fn velocity_at_v_faces(
    g: &G,
    u: &[f32],
    v: &[f32],
    (i0, j): (usize, usize),
    x: &[f32; LANES],
    y: f32,
) -> ([f32; LANES], [f32; LANES]) {
    if i0 + LANES < g.nx && j >= 1 && j < g.ny {
        let (su, sv) = (g.nx + 1, g.nx);
        let ku = bilerp_rows(&u[(j - 1) * su + i0..], &u[j * su + i0..], 0.5, 0.5);
        let kv = bilerp_rows(&v[j * sv + i0..], &v[(j + 1) * sv + i0..], 0.0, 0.0);
        return (ku, kv);
    }
    velocity_lanes(g, u, v, x, &[y; LANES])
}

/// The velocity at the `LANES` cell centres `(i0 .. i0 + LANES, j)`, as
/// [`velocity_at_u_faces`].
#[inline(always)]
pub fn velocity_at_cells(
    g: &G,
    u: &[f32],
    v: &[f32],
    (i0, j): (usize, usize),
    x: &[f32; LANES],
    y: f32,
) -> ([f32; LANES], [f32; LANES]) {
    if i0 + LANES < g.nx && j + 1 < g.ny {
        let (su, sv) = (g.nx + 1, g.nx);
        let ku = bilerp_rows(&u[j * su + i0..], &u[(j + 1) * su + i0..], 0.5, 0.0);
        let kv = bilerp_rows(&v[j * sv + i0..], &v[(j + 1) * sv + i0..], 0.0, 0.5);
        return (ku, kv);
    }
    velocity_lanes(g, u, v, x, &[y; LANES])
}

/// [`backtrace`] for [`LANES`] independent positions `(x, y)` (cell units), stage by stage,
/// given the first stage's velocity `k1` (the velocity at `(x, y)`).
#[inline(always)]
pub fn backtrace_lanes(
    g: &G,
    u: &[f32],
    v: &[f32],
    order: u32,
    s: f32,
    x: &[f32; LANES],
    y: &[f32; LANES],
    k1: ([f32; LANES], [f32; LANES]),
) -> ([f32; LANES], [f32; LANES]) {
    let step = |px: &[f32; LANES], ku: &[f32; LANES], c: f32| -> [f32; LANES] {
        std::array::from_fn(|k| px[k] - c * s * ku[k])
    };
    match order {
        1 => (std::array::from_fn(|k| x[k] - s * k1.0[k]), std::array::from_fn(|k| y[k] - s * k1.1[k])),
        2 => {
            let k2 = velocity_lanes(g, u, v, &step(x, &k1.0, 0.5), &step(y, &k1.1, 0.5));
            (std::array::from_fn(|k| x[k] - s * k2.0[k]), std::array::from_fn(|k| y[k] - s * k2.1[k]))
        }
        _ => {
            let k2 = velocity_lanes(g, u, v, &step(x, &k1.0, 0.5), &step(y, &k1.1, 0.5));
            let k3 = velocity_lanes(g, u, v, &step(x, &k2.0, 0.75), &step(y, &k2.1, 0.75));
            (
                std::array::from_fn(|k| x[k] - s * (2.0 / 9.0 * k1.0[k] + 3.0 / 9.0 * k2.0[k] + 4.0 / 9.0 * k3.0[k])),
                std::array::from_fn(|k| y[k] - s * (2.0 / 9.0 * k1.1[k] + 3.0 / 9.0 * k2.1[k] + 4.0 / 9.0 * k3.1[k])),
            )
        }
    }
}

/// A buffer split around the range a kernel writes: the range itself mutably (returned beside
/// this), the rest for reading. The multigrid kernels read one part of the packed hierarchy and
/// write another.
pub struct Around<'a> {
    head: &'a [f32],
    tail: &'a [f32],
    end: usize,
}

impl Around<'_> {
    /// The value at absolute index `k`, which must lie outside the written range.
    #[inline(always)]
    pub fn get(&self, k: usize) -> f32 {
        if k < self.head.len() { self.head[k] } else { self.tail[k - self.end] }
    }

    /// The values at absolute indices `start .. start + len` as one slice, which they are when
    /// the range lies wholly before or wholly after the written range.
    pub fn slice(&self, start: usize, len: usize) -> Option<&[f32]> {
        if start + len <= self.head.len() {
            Some(&self.head[start..start + len])
        } else if start >= self.end {
            self.tail.get(start - self.end..start - self.end + len)
        } else {
            None
        }
    }
}

/// Split `buf` into `buf[start..start + len]` (mutable) and everything else (readable).
pub fn split_around(buf: &mut [f32], start: usize, len: usize) -> (&mut [f32], Around<'_>) {
    let (head, rest) = buf.split_at_mut(start);
    let (mid, tail) = rest.split_at_mut(len);
    (mid, Around { head, tail, end: start + len })
}

/// The unscaled Poisson stencil on a multigrid level of `nx × ny` cells whose iterate starts at
/// `p`: `(Σ p_nbr, n)` over the neighbours that are not walls, in the order left, right, down,
/// up (the GPU's order).
#[inline(always)]
pub fn level_neighbours(
    read: impl Fn(usize) -> f32,
    nx: usize,
    ny: usize,
    px: bool,
    py: bool,
    p: usize,
    i: usize,
    j: usize,
) -> (f32, f32) {
    let mut sum = 0.0f32;
    let mut n = 0.0f32;
    if let Some(il) = prev(i, nx, px) {
        sum += read(p + j * nx + il);
        n += 1.0;
    }
    if let Some(ir) = next(i, nx, px) {
        sum += read(p + j * nx + ir);
        n += 1.0;
    }
    if let Some(jd) = prev(j, ny, py) {
        sum += read(p + jd * nx + i);
        n += 1.0;
    }
    if let Some(ju) = next(j, ny, py) {
        sum += read(p + ju * nx + i);
        n += 1.0;
    }
    (sum, n)
}

/// `a + b` exactly, as the rounded sum and its rounding error (Knuth's two-sum: six
/// additions, no branch, any magnitudes).
#[inline(always)]
pub fn two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The double-float `hi + lo` plus `x`, renormalised so that `lo` is at most half an ulp of
/// `hi` (the twin of `df_add` in `shared/pressure.wgsl`).
#[inline(always)]
pub fn df_add(hi: f32, lo: f32, x: f32) -> (f32, f32) {
    let (s, e) = two_sum(hi, x);
    let e = e + lo;
    let h = s + e;
    (h, e - (h - s))
}

/// `hi + lo += x` element by element with [`df_add`] (a correction added to the double-float
/// pressure).
pub fn df_accumulate(hi: &mut [f32], lo: &mut [f32], x: &[f32]) {
    for ((h, l), e) in hi.iter_mut().zip(lo.iter_mut()).zip(x) {
        (*h, *l) = df_add(*h, *l, *e);
    }
}

/// `Σ f(k)` over the flat indices `k` of the neighbours of cell `(i, j)` of an `nx × ny` grid
/// that are not walls, in the order left, right, down, up, from zero.
#[inline(always)]
pub fn neighbour_sum(
    nx: usize,
    ny: usize,
    (px, py): (bool, bool),
    i: usize,
    j: usize,
    f: impl Fn(usize) -> f32,
) -> f32 {
    let mut sum = 0.0f32;
    for k in [
        prev(i, nx, px).map(|il| j * nx + il),
        next(i, nx, px).map(|ir| j * nx + ir),
        prev(j, ny, py).map(|jd| jd * nx + i),
        next(j, ny, py).map(|ju| ju * nx + i),
    ]
    .into_iter()
    .flatten()
    {
        sum += f(k);
    }
    sum
}

/// `Σ (p_nbr − p)` over the neighbours of cell `(i, j)` that are not walls (left, right, down,
/// up), for the double-float pressure `hi + lo`: each difference of high parts and of low parts
/// is taken first (the high parts of neighbours are close, so their difference is exact), so
/// the result carries no rounding of the pressure's magnitude, only of its differences. This is
/// `−(A p)` of the unscaled operator.
#[inline(always)]
pub fn df_differences(g: &G, hi: &[f32], lo: &[f32], i: usize, j: usize) -> f32 {
    let c = g.c(i, j);
    neighbour_sum(g.nx, g.ny, (g.px, g.py), i, j, |k| (hi[k] - hi[c]) + (lo[k] - lo[c]))
}

/// `f(div, D)` along row `j` into `out`, with `D` = [`df_differences`] of each cell (the
/// residual forms of the pressure equation: `f` scales and adds the divergence). Rows with
/// rows below and above take their inner cells, which have all four neighbours, over row
/// slices with [`df_differences`]' arithmetic (the sum from zero of each neighbour's high
/// difference plus its low difference, left, right, down, up), so that they vectorise; the
/// rest call it per cell. The same bits either way.
#[inline(always)]
pub fn df_row(g: &G, (hi, lo, div): (&[f32], &[f32], &[f32]), j: usize, out: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    let nx = g.nx;
    let cell = |i: usize| df_cell(g, (hi, lo, div), j, &f, i);
    if j == 0 || j + 1 >= g.ny || nx < 3 {
        for (i, x) in out.iter_mut().enumerate() {
            *x = cell(i);
        }
        return;
    }
    out[0] = cell(0);
    out[nx - 1] = cell(nx - 1);
    let c = j * nx;
    let at = |s: usize| s..s + nx - 2;
    let (h0, l0) = (&hi[at(c + 1)], &lo[at(c + 1)]);
    let (hw, lw, he, le) = (&hi[at(c)], &lo[at(c)], &hi[at(c + 2)], &lo[at(c + 2)]);
    let (hs, ls, hn, ln) = (&hi[at(c + 1 - nx)], &lo[at(c + 1 - nx)], &hi[at(c + 1 + nx)], &lo[at(c + 1 + nx)]);
    let inner = &mut out[1..nx - 1];
    // Two passes (the sums, then `f`): as one loop LLVM left it scalar.
    for (k, x) in inner.iter_mut().enumerate() {
        let d = |h: &[f32], l: &[f32]| (h[k] - h0[k]) + (l[k] - l0[k]);
        *x = 0.0 + d(hw, lw) + d(he, le) + d(hs, ls) + d(hn, ln);
    }
    for (x, &d) in inner.iter_mut().zip(&div[at(c + 1)]) {
        *x = f(d, *x);
    }
}

/// [`df_row`]'s arithmetic at one cell `i` (a function its closure calls; see
/// `mg_smooth::pass_cell`).
#[inline(always)]
fn df_cell(g: &G, (hi, lo, div): (&[f32], &[f32], &[f32]), j: usize, f: &impl Fn(f32, f32) -> f32, i: usize) -> f32 {
    f(div[g.c(i, j)], df_differences(g, hi, lo, i, j))
}

/// `x` with its 12 lowest mantissa bits cleared: 12 significant bits, so the product of two
/// such values is exact in f32. Bit masking, not arithmetic, so a GPU compiler cannot fuse it
/// into something else (twin of `trunc12` in `shared/pressure.wgsl`).
#[inline(always)]
pub fn trunc12(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0xFFFF_F000)
}

/// `(hi, lo) + a d` exactly up to the double-float's own rounding, for `a` with 12 significant
/// bits ([`trunc12`]): `d` is split into two 12-bit halves, whose products with `a` are exact.
#[inline(always)]
pub fn df_add_product(hi: f32, lo: f32, a: f32, d: f32) -> (f32, f32) {
    let d_hi = trunc12(d);
    let (h, l) = df_add(hi, lo, a * d_hi);
    df_add(h, l, a * (d - d_hi))
}

#[cfg(test)]
mod tests {
    #[test]
    fn flush_subnormal_zeroes_subnormals_only() {
        for x in [
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1.0,
            -3.5e-20,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
        ] {
            assert_eq!(flush_subnormal(x).to_bits(), x.to_bits(), "{x:e} is kept");
        }
        assert!(flush_subnormal(f32::NAN).is_nan());
        for x in [f32::MIN_POSITIVE / 2.0, f32::from_bits(1), 1e-40] {
            assert_eq!(flush_subnormal(x).to_bits(), 0, "{x:e} becomes +0");
            assert_eq!(flush_subnormal(-x).to_bits(), 0x8000_0000, "{:e} becomes −0", -x);
        }
    }

    use super::*;

    #[test]
    fn wall_stencils_are_windows_at_their_first_sample() {
        // Cells: the last cell is reached from the one before with t = 1; clamped beyond.
        assert_eq!(stencil(2.25, 4, false, false), (2, 3, 0.25));
        assert_eq!(stencil(3.0, 4, false, false), (2, 3, 1.0));
        assert_eq!(stencil(7.5, 4, false, false), (2, 3, 1.0));
        assert_eq!(stencil(-1.0, 4, false, false), (0, 1, 0.0));
        assert_eq!(stencil(f32::NAN, 4, false, false), (0, 1, 0.0));
        // Faces: samples 0..=n.
        assert_eq!(stencil(4.0, 4, true, false), (3, 4, 1.0));
        assert_eq!(stencil(0.5, 4, true, false), (0, 1, 0.5));
        // One cell: a single sample.
        assert_eq!(stencil(0.7, 1, false, false), (0, 0, 0.0));
        // Periodic axes wrap.
        assert_eq!(stencil(3.5, 4, false, true), (3, 0, 0.5));
        assert_eq!(stencil(-0.5, 4, false, true), (3, 0, 0.5));
        // The lanes agree with the one-sample function, periodic lanes in and beyond the
        // vectorised range too.
        let periodic = [
            [-1.0, 0.0, 0.5, 1.0, 2.75, 3.0, 3.5, 7.99],
            [-4.0, -3.999, -0.0, 3.9999998, 4.0, 5.5, -2.5e-8, 7.9999995],
            [-4.5, 0.0, 0.5, 1.0, 2.75, 3.0, 3.5, 9.0],
            [1.0e9, -3.0e7, 0.25, 1.0, 2.0, f32::NAN, 3.5, 2.0],
        ];
        for g in periodic {
            for faces in [false, true] {
                let (i0, i1, t) = stencil_lanes(&g, 4, faces, true);
                for k in 0..LANES {
                    let (a, b, w) = stencil(g[k], 4, faces, true);
                    assert_eq!(
                        (i0[k] as usize, i1[k] as usize, t[k].to_bits()),
                        (a, b, w.to_bits()),
                        "{faces} {}",
                        g[k]
                    );
                }
            }
        }
        for x in [-4194303.5f32, -1.5, -1.0, -0.7, -1.0e-30, 0.0, 0.3, 1.0, 2.5, 4194303.5, 100.99999] {
            assert_eq!(floor_small(x), ifloor(x), "{x}");
        }
        // A blown-up position on a periodic axis: the floor saturates (it used to overflow
        // below i32::MIN, a panic in debug builds), and the stencil still lies in the field.
        for (x, fl) in [(f32::NEG_INFINITY, i32::MIN), (-1e30, i32::MIN), (f32::INFINITY, i32::MAX), (f32::NAN, 0)] {
            assert_eq!(ifloor(x), fl, "{x}");
            for (n, faces) in [(2, false), (2, true), (7, false), (7, true)] {
                let (i0, i1, _) = stencil(x, n, faces, true);
                assert!(i0 < n && i1 <= n && (faces || i1 < n), "{x} on {n} samples ({faces}): {i0}, {i1}");
            }
        }
        let g = [-1.0, 0.0, 0.5, 1.0, 2.75, 3.0, 3.5, f32::NAN];
        for (n, faces) in [(4, false), (4, true), (1, false), (1, true)] {
            let (i0, i1, t) = stencil_lanes(&g, n, faces, false);
            for k in 0..LANES {
                let (a, b, w) = stencil(g[k], n, faces, false);
                assert_eq!(
                    (i0[k] as usize, i1[k] as usize, t[k].to_bits()),
                    (a, b, w.to_bits()),
                    "{n} {faces} {}",
                    g[k]
                );
            }
        }
    }
}
