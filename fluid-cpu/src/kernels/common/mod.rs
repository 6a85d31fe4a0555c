//! Shared helpers of the CPU kernels: the twin of `fluid-shaders/shaders/shared/`.
//! Index helpers, boundary handling, bilinear sampling and the backtrace.

mod double_float;
mod lanes;
pub mod particles;
pub mod sharp;

use rayon::iter::Either;
use rayon::prelude::*;
use swirly_core::Boundary;
use swirly_core::frame::uniform::GridUniform;

pub use double_float::*;
pub use lanes::*;

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
    /// Obstacles, open or inflow sides weigh the faces: the face kernels take their paths in
    /// `kernels::solid`.
    pub solids: bool,
    /// Side codes (left, right, bottom, top; `Side::code`).
    pub sides: [u32; 4],
    /// Side speeds (`Side::speed`).
    pub side_speed: [f32; 4],
    /// What each side carries in: density, temperature, stripes, 0.
    pub side_carry: [[f32; 4]; 4],
    /// The dye each side carries in.
    pub side_dye: [[f32; 4]; 4],
    /// [`G::wall_windows`], computed once: the AVX2 samples test it for every batch.
    windows: bool,
}

impl G {
    /// From the uniform every kernel receives.
    pub fn new(u: &GridUniform) -> G {
        let (nx, ny) = (u.nx as usize, u.ny as usize);
        let px = Boundary::from_code(u.boundary_x) == Boundary::Periodic;
        let py = Boundary::from_code(u.boundary_y) == Boundary::Periodic;
        G {
            nx,
            ny,
            h: u.h,
            inv_h: u.inv_h,
            px,
            py,
            solids: u.solids != 0,
            sides: u.sides,
            side_speed: u.side_speed,
            side_carry: u.side_carry,
            side_dye: u.side_dye,
            windows: !px && !py && nx > 1 && ny > 1,
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

    /// Whether u-face column `i` lies on the box's edge (not along a periodic axis).
    #[inline(always)]
    pub fn u_on_edge(&self, i: usize) -> bool {
        !self.px && (i == 0 || i == self.nx)
    }

    /// Whether v-face row `j` lies on the box's edge.
    #[inline(always)]
    pub fn v_on_edge(&self, j: usize) -> bool {
        !self.py && (j == 0 || j == self.ny)
    }

    /// Whether side `k` (left, right, bottom, top) is open.
    #[inline(always)]
    pub fn side_open(&self, k: usize) -> bool {
        self.sides[k] == SIDE_OPEN
    }

    /// The pressure solve's weight of the box's edge on side `k`: 1 past an open side (zero
    /// pressure there), 0 past a closed one.
    #[inline(always)]
    pub fn edge_weight(&self, k: usize) -> f32 {
        if self.side_open(k) { 1.0 } else { 0.0 }
    }

    /// Whether side `k` is an inflow.
    #[inline(always)]
    pub fn side_inflow(&self, k: usize) -> bool {
        self.sides[k] == SIDE_INFLOW || self.sides[k] == SIDE_INFLOW_PARABOLIC
    }

    /// Whether u-face column `i` lies on a wall: an edge of a closed side (a wall or an
    /// inflow), whose velocity is given ([`G::wall_u`]).
    #[inline(always)]
    pub fn u_on_wall(&self, i: usize) -> bool {
        self.u_on_edge(i) && !self.side_open(if i == 0 { LEFT } else { RIGHT })
    }

    /// Whether v-face row `j` lies on a wall.
    #[inline(always)]
    pub fn v_on_wall(&self, j: usize) -> bool {
        self.v_on_edge(j) && !self.side_open(if j == 0 { BOTTOM } else { TOP })
    }

    /// Inward speed of side `k` at `s` in [0, 1] along it: an inflow's, zero elsewhere.
    #[inline(always)]
    pub fn inflow_speed(&self, k: usize, s: f32) -> f32 {
        match self.sides[k] {
            SIDE_INFLOW => self.side_speed[k],
            SIDE_INFLOW_PARABOLIC => self.side_speed[k] * 4.0 * s * (1.0 - s),
            _ => 0.0,
        }
    }

    /// The velocity of wall u-face `(i, j)`: zero on a wall, the inflow's on an inflow.
    #[inline(always)]
    pub fn wall_u(&self, i: usize, j: usize) -> f32 {
        let s = (j as f32 + 0.5) / self.ny as f32;
        if i == 0 { self.inflow_speed(LEFT, s) } else { -self.inflow_speed(RIGHT, s) }
    }

    /// The velocity of wall v-face `(i, j)`.
    #[inline(always)]
    pub fn wall_v(&self, i: usize, j: usize) -> f32 {
        let s = (i as f32 + 0.5) / self.nx as f32;
        if j == 0 { self.inflow_speed(BOTTOM, s) } else { -self.inflow_speed(TOP, s) }
    }

    /// Whether side `k` fixes the tangential velocity (a no-slip wall, an inflow), and at what.
    #[inline(always)]
    pub fn held_tangent(&self, k: usize) -> Option<f32> {
        match self.sides[k] {
            SIDE_NO_SLIP => Some(self.side_speed[k]),
            _ if self.side_inflow(k) => Some(0.0),
            _ => None,
        }
    }

    /// Whether any side is an inflow.
    pub fn has_inflow(&self) -> bool {
        (0..4).any(|k| self.side_inflow(k))
    }

    /// Whether some side is open.
    #[inline(always)]
    pub fn has_open(&self) -> bool {
        (0..4).any(|k| self.side_open(k))
    }

    /// How far past an open side point `(x, y)` (cell units) lies, up to one cell: the weight
    /// of the ambient fluid at rest beyond it in what a backtrace there carries in (0 inside
    /// the box; twin of `backflow_weight` in velocity.wgsl).
    #[inline(always)]
    pub fn backflow_weight(&self, x: f32, y: f32) -> f32 {
        let past = [-x, x - self.nx as f32, -y, y - self.ny as f32];
        let mut w = 0.0f32;
        for (k, d) in past.into_iter().enumerate() {
            if self.side_open(k) && d > w {
                w = d;
            }
        }
        w.min(1.0)
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

/// Side codes of the grid uniform (`swirly_core::grid::Side::code`).
pub const SIDE_OPEN: u32 = 1;
/// An inflow, uniform.
pub const SIDE_INFLOW: u32 = 3;
/// A no-slip wall.
pub const SIDE_NO_SLIP: u32 = 4;
/// An inflow, parabolic.
pub const SIDE_INFLOW_PARABOLIC: u32 = 5;
/// Index of the left side.
pub const LEFT: usize = 0;
/// The right side.
pub const RIGHT: usize = 1;
/// The bottom side.
pub const BOTTOM: usize = 2;
/// The top side.
pub const TOP: usize = 3;

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

/// Sample `i + d` (`d` is −1, 0 or 1) along an axis of `count` samples: walls repeat the end
/// sample, periodic axes wrap.
#[inline(always)]
pub fn clamp_or_wrap(i: usize, d: isize, count: usize, periodic: bool) -> usize {
    let k = i as isize + d;
    if periodic { k.rem_euclid(count as isize) as usize } else { k.clamp(0, count as isize - 1) as usize }
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

#[cfg(test)]
mod tests;
