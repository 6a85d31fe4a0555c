//! The lane helpers of [`common`](super::common) for grids whose wall axes are two cells long
//! or more ([`G::walls_two_wide`]; periodic axes of any length), written with AVX2 vectors
//! (through `pulp`'s safe wrappers of the intrinsics) instead of arrays.
//!
//! The semi-Lagrangian kernels spend most of their time computing interpolation stencils and
//! bilinear samples at eight backtraced positions at a time. Written over `[f32; 8]` arrays,
//! LLVM vectorises that arithmetic only in part: in the inlined backtrace it left 4-wide pieces,
//! per-lane extractions and scalar selects (doc/PERFORMANCE.md, "The semi-Lagrangian kernels in
//! AVX2 vectors"). Here every step is one instruction on all eight lanes, and the four corners
//! of the eight 2 × 2 windows are read with four loads and four permutes where the windows lie
//! within eight values of each other, which the lanes of a smooth flow mostly do. On a periodic
//! axis the stencils wrap: the batches whose stencils are all windows (all but those at the
//! seam) take the same path, the others single loads.
//!
//! Every function does exactly the IEEE operations of its `common` twin, in the same order
//! (no fused multiply-add), so the results are the same bits: tested against the one-sample
//! functions ([`stencil`], [`sample_u`], [`sample_v`], [`bilerp4`], [`backtrace`]) below on wall,
//! periodic and mixed grids, and through the kernels' own tests against their one-sample
//! functions.
//!
//! [`stencil`]: super::common::stencil
//! [`sample_u`]: super::common::sample_u
//! [`sample_v`]: super::common::sample_v
//! [`bilerp4`]: super::common::bilerp4
//! [`backtrace`]: super::common::backtrace

use std::arch::x86_64::{__m256, __m256i, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LT_OQ, _CMP_NEQ_UQ};

use pulp::x86::V3;

use super::common::{G, LANES, bilerp4, stencil};

/// Eight `f32` lanes.
pub type F8 = __m256;
/// Eight `i32` lanes.
pub type I8 = __m256i;

/// The AVX2 instruction set, present: obtained only where the kernels run with it.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(V3);

impl Avx2 {
    /// The token when the kernels run with x86-64-v3 ([`crate::simd`]'s choice), else `None`.
    #[inline(always)]
    pub fn get() -> Option<Avx2> {
        match crate::simd::arch() {
            pulp::Arch::V3(simd) => Some(Avx2(simd)),
            _ => None,
        }
    }

    /// Lanes from an array.
    #[inline(always)]
    pub fn load(self, a: [f32; LANES]) -> F8 {
        pulp::cast(a)
    }

    /// The lanes as an array.
    #[inline(always)]
    pub fn store(self, a: F8) -> [f32; LANES] {
        pulp::cast(a)
    }

    /// Integer lanes as an array.
    #[inline(always)]
    pub fn store_i(self, a: I8) -> [i32; LANES] {
        pulp::cast(a)
    }

    /// `x` in every lane.
    #[inline(always)]
    pub fn splat(self, x: f32) -> F8 {
        self.0.avx._mm256_set1_ps(x)
    }

    #[inline(always)]
    fn splat_i(self, x: i32) -> I8 {
        self.0.avx._mm256_set1_epi32(x)
    }

    /// `a + b`.
    #[inline(always)]
    pub fn add(self, a: F8, b: F8) -> F8 {
        self.0.avx._mm256_add_ps(a, b)
    }

    /// `a − b`.
    #[inline(always)]
    pub fn sub(self, a: F8, b: F8) -> F8 {
        self.0.avx._mm256_sub_ps(a, b)
    }

    /// `a · b`.
    #[inline(always)]
    pub fn mul(self, a: F8, b: F8) -> F8 {
        self.0.avx._mm256_mul_ps(a, b)
    }

    /// `i0, i0 + 1, …, i0 + 7` as `f32` (exact below 2^24).
    #[inline(always)]
    pub fn iota(self, i0: usize) -> F8 {
        let ramp = self.0.avx._mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        self.0.avx._mm256_cvtepi32_ps(self.0.avx2._mm256_add_epi32(self.splat_i(i0 as i32), ramp))
    }

    /// `a + (b − a)·t`, the interpolation of `common::bilerp`.
    #[inline(always)]
    fn lerp(self, a: F8, b: F8, t: F8) -> F8 {
        self.add(a, self.mul(self.sub(b, a), t))
    }

    /// The wall stencil `(i0, t)` of `common::stencil` (its `i1` is `i0 + 1`) along an axis
    /// of `n` cells with at least two samples: the coordinate clamped to `[0, last]` (a NaN to
    /// 0, as `clampf`), `i0 = min(trunc_small(x), last − 1)`, `t = x − i0`.
    #[inline(always)]
    pub fn stencil(self, g: F8, n: usize, faces: bool) -> (I8, F8) {
        let (avx, avx2) = (self.0.avx, self.0.avx2);
        let last = if faces { n } else { n - 1 };
        // MAXPS returns its second operand where the first is NaN: the NaN goes to 0.
        let x = avx._mm256_min_ps(avx._mm256_max_ps(g, self.splat(0.0)), self.splat(last as f32));
        // `trunc_small`: adding 2^23 rounds to an integer held in the low mantissa bits; one
        // step back where that rounded up (the compare's mask is −1 there).
        const MAGIC: f32 = 8_388_608.0;
        let n_ = avx2._mm256_sub_epi32(
            avx._mm256_castps_si256(self.add(x, self.splat(MAGIC))),
            self.splat_i(MAGIC.to_bits() as i32),
        );
        let up = avx._mm256_cmp_ps::<_CMP_GT_OQ>(avx._mm256_cvtepi32_ps(n_), x);
        let t = avx2._mm256_add_epi32(n_, avx._mm256_castps_si256(up));
        let i0 = avx2._mm256_min_epi32(t, self.splat_i(last as i32 - 1));
        (i0, self.sub(x, avx._mm256_cvtepi32_ps(i0)))
    }

    /// `common::stencil` along a periodic axis of `n` cells: `(i0, i1, t)`, the floor wrapped
    /// into the period and `i1 = i0 + 1` (0 after the last sample of a cell-centred axis).
    /// Where every lane lies within a period of the domain (`−n ≤ x < 2n`, as in
    /// `common::stencil_lanes`), one wrap by masks; otherwise (far out, infinite, NaN)
    /// `common::stencil` lane by lane.
    #[inline(always)]
    pub fn stencil_periodic(self, g: F8, n: usize, faces: bool) -> (I8, I8, F8) {
        let (avx, avx2) = (self.0.avx, self.0.avx2);
        let nf = n as f32;
        let inside = avx._mm256_and_ps(
            avx._mm256_cmp_ps::<_CMP_GE_OQ>(g, self.splat(-nf)),
            avx._mm256_cmp_ps::<_CMP_LT_OQ>(g, self.splat(2.0 * nf)),
        );
        if avx._mm256_movemask_ps(inside) != 0xff {
            let x = self.store(g);
            let (mut i0, mut i1, mut t) = ([0i32; LANES], [0i32; LANES], [0f32; LANES]);
            for k in 0..LANES {
                let (a, b, w) = stencil(x[k], n, faces, true);
                (i0[k], i1[k], t[k]) = (a as i32, b as i32, w);
            }
            return (pulp::cast(i0), pulp::cast(i1), self.load(t));
        }
        // The floor as an integer, and `t` from that integer converted back, as `stencil` does
        // (so that −0 gives `t = −0`, not `−0 − (−0) = +0`).
        let fl = avx._mm256_cvttps_epi32(avx._mm256_floor_ps(g));
        let t = self.sub(g, avx._mm256_cvtepi32_ps(fl));
        // Below the period add `n`, above it subtract `n` (the compares' masks are −1 there).
        let ni = self.splat_i(n as i32);
        let below = avx2._mm256_cmpgt_epi32(self.splat_i(0), fl);
        let above = avx2._mm256_cmpgt_epi32(fl, self.splat_i(n as i32 - 1));
        let i0 = avx2._mm256_sub_epi32(
            avx2._mm256_add_epi32(fl, avx2._mm256_and_si256(below, ni)),
            avx2._mm256_and_si256(above, ni),
        );
        let i1 = avx2._mm256_add_epi32(i0, self.splat_i(1));
        let i1 = if faces { i1 } else { avx2._mm256_andnot_si256(avx2._mm256_cmpeq_epi32(i1, ni), i1) };
        (i0, i1, t)
    }

    /// `common::stencil` along an axis of `n` cells, periodic or a wall (a wall axis needs two
    /// samples or more: then `i1 = i0 + 1`).
    #[inline(always)]
    pub fn stencil_axis(self, g: F8, n: usize, faces: bool, periodic: bool) -> (I8, I8, F8) {
        if periodic {
            return self.stencil_periodic(g, n, faces);
        }
        let (i0, t) = self.stencil(g, n, faces);
        (i0, self.0.avx2._mm256_add_epi32(i0, self.splat_i(1)), t)
    }

    /// Whether all eight stencil pairs are 2 × 2 windows: `i1 = i0 + 1` and `j1 = j0 + 1` (on a
    /// periodic axis all but the ones that wrap).
    #[inline(always)]
    fn all_windows(self, (i0, i1): (I8, I8), (j0, j1): (I8, I8)) -> bool {
        let (avx, avx2) = (self.0.avx, self.0.avx2);
        let one = self.splat_i(1);
        let x = avx2._mm256_cmpeq_epi32(i1, avx2._mm256_add_epi32(i0, one));
        let y = avx2._mm256_cmpeq_epi32(j1, avx2._mm256_add_epi32(j0, one));
        avx._mm256_movemask_ps(avx._mm256_castsi256_ps(avx2._mm256_and_si256(x, y))) == 0xff
    }

    /// `common::bilerp_stencils`: the bilinear sample at eight stencils of any kind (wrapping
    /// ones included) of a field with `stride` values per row. Where all are windows,
    /// [`Avx2::bilerp_windows`]; otherwise four single loads per lane.
    #[inline(always)]
    pub fn bilerp_stencils(
        self,
        data: &[f32],
        stride: usize,
        (i0, i1, tx): (I8, I8, F8),
        (j0, j1, ty): (I8, I8, F8),
    ) -> F8 {
        if self.all_windows((i0, i1), (j0, j1)) {
            return self.bilerp_windows(data, stride, (i0, tx), (j0, ty));
        }
        let (i0, i1, j0, j1) = (self.store_i(i0), self.store_i(i1), self.store_i(j0), self.store_i(j1));
        let mut c = [[0f32; LANES]; 4];
        for k in 0..LANES {
            let (r0, r1) = (j0[k] as usize * stride, j1[k] as usize * stride);
            let (a0, a1) = (i0[k] as usize, i1[k] as usize);
            (c[0][k], c[1][k], c[2][k], c[3][k]) = (data[r0 + a0], data[r0 + a1], data[r1 + a0], data[r1 + a1]);
        }
        let (c00, c10, c01, c11) = (self.load(c[0]), self.load(c[1]), self.load(c[2]), self.load(c[3]));
        self.lerp(self.lerp(c00, c10, tx), self.lerp(c01, c11, tx), ty)
    }

    /// The bilinear sample of a cell field of `g` at eight stencils from
    /// [`Avx2::stencil_axis`]: read as windows with no check where [`G::wall_windows`] (every
    /// stencil is one), else [`Avx2::bilerp_stencils`].
    #[inline(always)]
    pub fn sample_cells(self, g: &G, data: &[f32], sx: (I8, I8, F8), sy: (I8, I8, F8)) -> F8 {
        if g.wall_windows() {
            return self.bilerp_windows(data, g.nx, (sx.0, sx.2), (sy.0, sy.2));
        }
        self.bilerp_stencils(data, g.nx, sx, sy)
    }

    /// `common::bilerp4` at eight stencils from [`Avx2::stencil_axis`] of an RGBA cell field
    /// of `g`, times `decay`, into `out`: [`Avx2::bilerp4_windows`] where
    /// [`G::wall_windows`] or all eight are windows, otherwise `bilerp4` lane by lane.
    #[inline(always)]
    pub fn bilerp4_stencils(
        self,
        g: &G,
        data: &[f32],
        (i0, i1, tx): (I8, I8, F8),
        (j0, j1, ty): (I8, I8, F8),
        decay: f32,
        out: &mut [f32; 4 * LANES],
    ) {
        let nx = g.nx;
        if g.wall_windows() || self.all_windows((i0, i1), (j0, j1)) {
            return self.bilerp4_windows(data, nx, (i0, tx), (j0, ty), decay, out);
        }
        let (i0, i1, tx) = (self.store_i(i0), self.store_i(i1), self.store(tx));
        let (j0, j1, ty) = (self.store_i(j0), self.store_i(j1), self.store(ty));
        for (k, out) in out.chunks_exact_mut(4).enumerate() {
            let rgba =
                bilerp4(data, nx, (i0[k] as usize, i1[k] as usize, tx[k]), (j0[k] as usize, j1[k] as usize, ty[k]));
            for (o, c) in out.iter_mut().zip(rgba) {
                *o = c * decay;
            }
        }
    }

    /// The index `j0 · stride + i0` of each window's first sample (in samples, not values).
    #[inline(always)]
    fn window_start(self, stride: usize, i0: I8, j0: I8) -> I8 {
        let avx2 = self.0.avx2;
        avx2._mm256_add_epi32(avx2._mm256_mullo_epi32(j0, self.splat_i(stride as i32)), i0)
    }

    /// `common::bilerp_windows`: the bilinear sample of the 2 × 2 windows at `(i0, j0)` of a
    /// field with `stride` values per row.
    #[inline(always)]
    pub fn bilerp_windows(self, data: &[f32], stride: usize, (i0, tx): (I8, F8), (j0, ty): (I8, F8)) -> F8 {
        let (avx, avx2) = (self.0.avx, self.0.avx2);
        let base = self.window_start(stride, i0, j0);
        // The lowest first corner, and each window's offset from it: where every offset is
        // below eight, each window's corners lie in the eight values from the lowest on (and in
        // the eight one and `stride` and `stride + 1` further), and one permute per corner
        // picks them. Otherwise, or where those values would run past the field, two loads of
        // two values per window (its bottom and its top row).
        let swap_halves = |a: I8| avx2._mm256_permute2x128_si256::<1>(a, a);
        let lo = avx2._mm256_min_epi32(base, swap_halves(base));
        let lo = avx2._mm256_min_epi32(lo, avx2._mm256_shuffle_epi32::<0b01_00_11_10>(lo));
        let lo = avx2._mm256_min_epi32(lo, avx2._mm256_shuffle_epi32::<0b10_11_00_01>(lo));
        let offset = avx2._mm256_sub_epi32(base, lo);
        let far = avx._mm256_movemask_ps(avx._mm256_castsi256_ps(avx2._mm256_cmpgt_epi32(offset, self.splat_i(7))));
        let first = avx2._mm256_cvtsi256_si32(lo) as usize;
        let window = if far == 0 { data.get(first..first + stride + 1 + LANES) } else { None };
        let (c00, c10, c01, c11) = match window {
            Some(w) => {
                let pick = |o: usize| -> F8 {
                    let mut a = [0f32; LANES];
                    a.copy_from_slice(&w[o..o + LANES]);
                    avx2._mm256_permutevar8x32_ps(self.load(a), offset)
                };
                (pick(0), pick(1), pick(stride), pick(stride + 1))
            }
            None => {
                // Each window's two rows as pairs of values, then the first and the second
                // values of the pairs gathered into vectors.
                let base = self.store_i(base);
                let (mut bottom, mut top) = ([[0f32; 2]; LANES], [[0f32; 2]; LANES]);
                for k in 0..LANES {
                    let w = &data[base[k] as usize..][..stride + 2];
                    bottom[k].copy_from_slice(&w[..2]);
                    top[k].copy_from_slice(&w[stride..]);
                }
                let ((c00, c10), (c01, c11)) = (self.unzip(bottom), self.unzip(top));
                (c00, c10, c01, c11)
            }
        };
        self.lerp(self.lerp(c00, c10, tx), self.lerp(c01, c11, tx), ty)
    }

    /// The first and the second values of eight pairs, as two vectors.
    #[inline(always)]
    fn unzip(self, pairs: [[f32; 2]; LANES]) -> (F8, F8) {
        let (avx, avx2) = (self.0.avx, self.0.avx2);
        let [lo, hi]: [[f32; LANES]; 2] = pulp::cast(pairs);
        let (lo, hi) = (self.load(lo), self.load(hi));
        // In each 128-bit half, the first (second) values of two pairs of `lo`, then of two
        // of `hi`: pairs 0, 1, 4, 5 in the low half and 2, 3, 6, 7 in the high one, which a
        // permute of the four 64-bit quarters puts in order.
        let order = |a: F8| avx._mm256_castpd_ps(avx2._mm256_permute4x64_pd::<0b11_01_10_00>(avx._mm256_castps_pd(a)));
        (order(avx._mm256_shuffle_ps::<0b10_00_10_00>(lo, hi)), order(avx._mm256_shuffle_ps::<0b11_01_11_01>(lo, hi)))
    }

    /// `common::bilerp4_window` at eight 2 × 2 windows `(i0, j0)` of an RGBA cell field `nx`
    /// cells wide, times `decay`, into `out` (the eight cells' RGBA values): two windows per
    /// vector, each channel with `bilerp4_window`'s arithmetic.
    #[inline(always)]
    pub fn bilerp4_windows(
        self,
        data: &[f32],
        nx: usize,
        (i0, tx): (I8, F8),
        (j0, ty): (I8, F8),
        decay: f32,
        out: &mut [f32; 4 * LANES],
    ) {
        let (avx, avx2) = (self.0.avx, self.0.avx2);
        let first = self.store_i(self.window_start(nx, i0, j0));
        let decay = self.splat(decay);
        for (pair, out) in out.chunks_exact_mut(2 * 4).enumerate() {
            let (k0, k1) = (2 * pair, 2 * pair + 1);
            let w0 = &data[4 * first[k0] as usize..][..4 * nx + 8];
            let w1 = &data[4 * first[k1] as usize..][..4 * nx + 8];
            // The corner at offset `o` of both windows: one RGBA value in each half.
            let corner = |o: usize| -> F8 {
                let mut a = [0f32; LANES];
                a[..4].copy_from_slice(&w0[o..o + 4]);
                a[4..].copy_from_slice(&w1[o..o + 4]);
                self.load(a)
            };
            let (k0, k1) = (k0 as i32, k1 as i32);
            let halves = avx._mm256_setr_epi32(k0, k0, k0, k0, k1, k1, k1, k1);
            let (tx, ty) = (avx2._mm256_permutevar8x32_ps(tx, halves), avx2._mm256_permutevar8x32_ps(ty, halves));
            let value =
                self.lerp(self.lerp(corner(0), corner(4), tx), self.lerp(corner(4 * nx), corner(4 * nx + 4), tx), ty);
            out.copy_from_slice(&self.store(self.mul(value, decay)));
        }
    }

    /// The dye update of `splat` over whole pairs of RGBA cells: where any of a cell's four
    /// sums is not zero (`!=`, so NaN counts), its four values plus the sums, elsewhere its
    /// values as they are; the same as the per-cell loop in `splat`. `px` and `sum` hold the
    /// same number of cells; returns how many it updated (a last odd cell is the caller's).
    /// The results go through `sum` and are copied into `px` whole: blended straight back into
    /// `px`, LLVM stores them with `vmaskmovps`, which AMD's Zen cores run as microcode (the
    /// loop took three times as long on a Zen 3).
    #[inline(always)]
    pub fn add_rgba_where_any(self, px: &mut [f32], sum: &mut [f32]) -> usize {
        let avx = self.0.avx;
        let mut done = 0;
        for (x, s) in px.chunks_exact(2 * 4).zip(sum.chunks_exact_mut(2 * 4)) {
            let (mut xa, mut sa) = ([0f32; LANES], [0f32; LANES]);
            xa.copy_from_slice(x);
            sa.copy_from_slice(s);
            let (xv, sv) = (self.load(xa), self.load(sa));
            let nz = avx._mm256_cmp_ps::<_CMP_NEQ_UQ>(sv, self.splat(0.0));
            // Each lane ORed with the other three of its cell: swap neighbours, then pairs.
            let any = avx._mm256_or_ps(nz, avx._mm256_permute_ps::<0b10_11_00_01>(nz));
            let any = avx._mm256_or_ps(any, avx._mm256_permute_ps::<0b01_00_11_10>(any));
            s.copy_from_slice(&self.store(avx._mm256_blendv_ps(xv, self.add(xv, sv), any)));
            done += 2;
        }
        px[..4 * done].copy_from_slice(&sum[..4 * done]);
        done
    }

    /// `common::sample_u` at eight positions (cell units).
    #[inline(always)]
    pub fn sample_u(self, g: &G, u: &[f32], x: F8, y: F8) -> F8 {
        let gy = self.sub(y, self.splat(0.5));
        if g.wall_windows() {
            return self.bilerp_windows(u, g.nx + 1, self.stencil(x, g.nx, true), self.stencil(gy, g.ny, false));
        }
        let (sx, sy) = (self.stencil_axis(x, g.nx, true, g.px), self.stencil_axis(gy, g.ny, false, g.py));
        self.bilerp_stencils(u, g.nx + 1, sx, sy)
    }

    /// `common::sample_v` at eight positions (cell units).
    #[inline(always)]
    pub fn sample_v(self, g: &G, v: &[f32], x: F8, y: F8) -> F8 {
        let gx = self.sub(x, self.splat(0.5));
        if g.wall_windows() {
            return self.bilerp_windows(v, g.nx, self.stencil(gx, g.nx, false), self.stencil(y, g.ny, true));
        }
        let (sx, sy) = (self.stencil_axis(gx, g.nx, false, g.px), self.stencil_axis(y, g.ny, true, g.py));
        self.bilerp_stencils(v, g.nx, sx, sy)
    }

    /// `common::velocity` at eight positions.
    #[inline(always)]
    pub fn velocity(self, g: &G, u: &[f32], v: &[f32], x: F8, y: F8) -> (F8, F8) {
        (self.sample_u(g, u, x, y), self.sample_v(g, v, x, y))
    }

    /// `common::backtrace` of eight positions, given the velocity `k1` at them.
    #[inline(always)]
    pub fn backtrace(
        self,
        g: &G,
        u: &[f32],
        v: &[f32],
        order: u32,
        s: f32,
        (x, y): (F8, F8),
        k1: (F8, F8),
    ) -> (F8, F8) {
        // `p − c·s·k`, with `c·s` rounded first as in the scalar expression.
        let step = |p: F8, k: F8, c: f32| self.sub(p, self.mul(self.splat(c * s), k));
        match order {
            1 => (step(x, k1.0, 1.0), step(y, k1.1, 1.0)),
            2 => {
                let k2 = self.velocity(g, u, v, step(x, k1.0, 0.5), step(y, k1.1, 0.5));
                (step(x, k2.0, 1.0), step(y, k2.1, 1.0))
            }
            _ => {
                let k2 = self.velocity(g, u, v, step(x, k1.0, 0.5), step(y, k1.1, 0.5));
                let k3 = self.velocity(g, u, v, step(x, k2.0, 0.75), step(y, k2.1, 0.75));
                let blend = |a: F8, b: F8, c: F8| {
                    let ab = self.add(self.mul(self.splat(2.0 / 9.0), a), self.mul(self.splat(3.0 / 9.0), b));
                    self.add(ab, self.mul(self.splat(4.0 / 9.0), c))
                };
                let s = self.splat(s);
                (self.sub(x, self.mul(s, blend(k1.0, k2.0, k3.0))), self.sub(y, self.mul(s, blend(k1.1, k2.1, k3.1))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::{backtrace, bilerp4, sample_u, sample_v, stencil};
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

    fn avx2() -> Avx2 {
        // x86-64 machines have had AVX2 since 2013; without it these helpers never run, and this
        // test says so rather than passing without checking anything.
        Avx2::get().expect("this test needs a CPU with AVX2, FMA and the rest of x86-64-v3")
    }

    fn grid(nx: u32, ny: u32) -> (G, Vec<f32>, Vec<f32>) {
        grid_with(nx, ny, Boundary::Wall, Boundary::Wall)
    }

    fn grid_with(nx: u32, ny: u32, bx: Boundary, by: Boundary) -> (G, Vec<f32>, Vec<f32>) {
        let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
        let mut rng = swirly_core::scene::SplitMix64(11);
        let u = (0..grid.len(FieldId::U)).map(|_| 4.0 * rng.next_f32() - 2.0).collect();
        let v = (0..grid.len(FieldId::V)).map(|_| 4.0 * rng.next_f32() - 2.0).collect();
        (G::new(&grid.uniform()), u, v)
    }

    /// Coordinates that exercise every branch of the wall stencil: inside, on and next to whole
    /// numbers, at and past both ends, far out, infinite and NaN.
    fn awkward(n: usize) -> Vec<f32> {
        let n = n as f32;
        let mut xs = vec![0.0, -0.0, 1.0, 0.5, n - 1.0, n, n + 0.5, -0.5, -1e-7, 1e-7, -3.0, 1e30, -1e30];
        xs.extend([f32::INFINITY, f32::NEG_INFINITY, f32::NAN, n - 1e-6, 1.0 - f32::EPSILON / 2.0]);
        xs.extend([2.0f32.next_down(), 2.0f32.next_up(), (n - 1.0).next_down(), n.next_down(), n.next_up()]);
        let mut rng = swirly_core::scene::SplitMix64(7);
        xs.extend((0..200).map(|_| (n + 4.0) * rng.next_f32() - 2.0));
        xs.truncate(xs.len() / LANES * LANES);
        xs
    }

    /// Coordinates for the periodic stencil: [`awkward`]'s, and the ends of the period and of
    /// the vector path's range (`−n`, `2n`) and just beside them.
    fn awkward_periodic(n: usize) -> Vec<f32> {
        let n = n as f32;
        let mut xs = awkward(n as usize);
        xs.extend([-n, (-n).next_down(), (-n).next_up(), 2.0 * n, (2.0 * n).next_down(), (2.0 * n).next_up()]);
        xs.extend([n - 0.5, -0.5 * n, 1.5 * n, -1.0, -1.0f32.next_up(), 3.0 * n, -2.0 * n, 0.25]);
        let mut rng = swirly_core::scene::SplitMix64(19);
        xs.extend((0..200).map(|_| 3.0 * n * rng.next_f32() - n));
        xs.truncate(xs.len() / LANES * LANES);
        xs
    }

    #[test]
    fn the_stencils_are_the_stencils_of_common() {
        let a = avx2();
        for periodic in [false, true] {
            for n in [2, 3, 17, 512] {
                for faces in [false, true] {
                    let xs = if periodic { awkward_periodic(n) } else { awkward(n) };
                    // Batches mixing lanes of a periodic axis's vector path with far ones (the
                    // lane-by-lane path) too: the same coordinates shifted by half a batch.
                    for x in xs.chunks_exact(LANES).chain(xs[LANES / 2..].chunks_exact(LANES)) {
                        let x: [f32; LANES] = x.try_into().expect("eight");
                        let (i0, i1, t) = a.stencil_axis(a.load(x), n, faces, periodic);
                        let (i0, i1, t) = (a.store_i(i0), a.store_i(i1), a.store(t));
                        for k in 0..LANES {
                            let (w0, w1, wt) = stencil(x[k], n, faces, periodic);
                            if !periodic {
                                assert_eq!(w1, w0 + 1, "a window");
                            }
                            assert_eq!(
                                (i0[k] as usize, i1[k] as usize, t[k].to_bits()),
                                (w0, w1, wt.to_bits()),
                                "x = {:e}, n = {n}, faces = {faces}, periodic = {periodic}",
                                x[k]
                            );
                        }
                    }
                }
            }
        }
    }

    /// Eight positions per batch: close together (the windows' corners fit one permute), spread
    /// over the grid (single loads), and at the far corner (close, but the permute's loads would
    /// run past the field).
    fn batches(g: &G) -> Vec<([f32; LANES], [f32; LANES])> {
        let (nx, ny) = (g.nx as f32, g.ny as f32);
        let mut rng = swirly_core::scene::SplitMix64(13);
        let mut out = vec![];
        for _ in 0..64 {
            let (x0, y0) = ((nx - 6.0) * rng.next_f32(), ny * rng.next_f32());
            out.push((std::array::from_fn(|k| x0 + 0.7 * k as f32), [y0; LANES]));
            out.push((
                std::array::from_fn(|_| (nx + 4.0) * rng.next_f32() - 2.0),
                std::array::from_fn(|_| (ny + 4.0) * rng.next_f32() - 2.0),
            ));
        }
        out.push(([nx + 3.0; LANES], [ny + 3.0; LANES]));
        out.push((std::array::from_fn(|k| nx - 0.25 * k as f32), [ny - 0.5; LANES]));
        out.push((awkward(g.nx)[..LANES].try_into().expect("eight"), awkward(g.ny)[8..16].try_into().expect("eight")));
        out
    }

    /// Grids of every kind the AVX2 path serves: walls, periodic axes (two cells at least),
    /// both mixed, and a periodic axis beside a two-cell wall.
    fn grids() -> Vec<(u32, u32, Boundary, Boundary)> {
        use Boundary::{Periodic as P, Wall as W};
        vec![(29, 9, W, W), (2, 2, W, W), (9, 31, W, W), (29, 9, P, P), (2, 2, P, P), (17, 3, P, W), (2, 23, W, P)]
    }

    #[test]
    fn samples_equal_the_one_sample_functions() {
        let a = avx2();
        for (nx, ny, bx, by) in grids() {
            let (g, u, v) = grid_with(nx, ny, bx, by);
            for (x, y) in batches(&g) {
                let su = a.store(a.sample_u(&g, &u, a.load(x), a.load(y)));
                let sv = a.store(a.sample_v(&g, &v, a.load(x), a.load(y)));
                for k in 0..LANES {
                    let at = format!("({:e}, {:e}) on {nx} x {ny}, {bx:?} x {by:?}", x[k], y[k]);
                    assert_eq!(su[k].to_bits(), sample_u(&g, &u, x[k], y[k]).to_bits(), "u at {at}");
                    assert_eq!(sv[k].to_bits(), sample_v(&g, &v, x[k], y[k]).to_bits(), "v at {at}");
                }
            }
        }
    }

    #[test]
    fn rgba_samples_equal_bilerp4() {
        let a = avx2();
        for (nx, ny, bx, by) in grids() {
            let (g, _, _) = grid_with(nx, ny, bx, by);
            let mut rng = swirly_core::scene::SplitMix64(17);
            let dye: Vec<f32> = (0..4 * g.nx * g.ny).map(|_| 8.0 * rng.next_f32() - 4.0).collect();
            for (x, y) in batches(&g) {
                let sx = a.stencil_axis(a.load(x), g.nx, false, g.px);
                let sy = a.stencil_axis(a.load(y), g.ny, false, g.py);
                let mut out = [0f32; 4 * LANES];
                a.bilerp4_stencils(&g, &dye, sx, sy, 0.9, &mut out);
                for k in 0..LANES {
                    let want = bilerp4(&dye, g.nx, stencil(x[k], g.nx, false, g.px), stencil(y[k], g.ny, false, g.py));
                    let got = &out[4 * k..4 * k + 4];
                    for ch in 0..4 {
                        assert_eq!(
                            got[ch].to_bits(),
                            (want[ch] * 0.9).to_bits(),
                            "channel {ch} at ({:e}, {:e}) on {nx} x {ny}, {bx:?} x {by:?}",
                            x[k],
                            y[k]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn backtraces_equal_the_one_sample_backtrace() {
        let a = avx2();
        for (g, u, v) in [grid(29, 9), grid_with(29, 9, Boundary::Periodic, Boundary::Periodic)] {
            for order in 1..=3 {
                for s in [0.3, 2.5] {
                    for (x, y) in batches(&g) {
                        let k1 = a.velocity(&g, &u, &v, a.load(x), a.load(y));
                        let (bx, by) = a.backtrace(&g, &u, &v, order, s, (a.load(x), a.load(y)), k1);
                        let (bx, by) = (a.store(bx), a.store(by));
                        for k in 0..LANES {
                            let (wx, wy) = backtrace(&g, &u, &v, order, s, x[k], y[k]);
                            assert_eq!(
                                (bx[k].to_bits(), by[k].to_bits()),
                                (wx.to_bits(), wy.to_bits()),
                                "order {order}, s = {s}, from ({:e}, {:e})",
                                x[k],
                                y[k]
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn rgba_adds_equal_the_cell_loop() {
        let a = avx2();
        // Cells of −0 (which adding +0 would turn into +0, so a lane that is added where its
        // cell should be left shows), one of each: every channel alone not zero, all zero, a
        // −0 sum (zero: left alone), NaN sums and values, and an odd last cell (the caller's).
        let sums: Vec<[f32; 4]> = vec![
            [1.5, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [0.0, -2.0, 0.0, 0.0],
            [0.0, 0.0, -0.0, 0.0],
            [0.0, 0.0, 3.0, 0.0],
            [0.0, 0.0, 0.0, 0.25],
            [f32::NAN, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [7.0, 0.0, 0.0, 0.0],
        ];
        let px: Vec<[f32; 4]> = (0..sums.len())
            .map(|k| if k == 7 { [f32::NAN, -0.0, 1.0, -0.0] } else { [-0.0, -0.0, 2.0 * k as f32, -0.0] })
            .collect();
        let (mut x, mut s): (Vec<f32>, Vec<f32>) = (px.concat(), sums.concat());
        let done = a.add_rgba_where_any(&mut x, &mut s);
        assert_eq!(done, 8);
        for (k, (p, sum)) in px.iter().zip(&sums).enumerate() {
            let want: Vec<f32> = if k < done && sum.iter().any(|v| *v != 0.0) {
                p.iter().zip(sum).map(|(p, s)| p + s).collect()
            } else {
                p.to_vec()
            };
            let got = &x[4 * k..4 * k + 4];
            let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(got), bits(&want), "cell {k}: {got:?} against {want:?}");
        }
    }
}
