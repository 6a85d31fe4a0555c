//! The lane helpers of [`common`](super::common) for grids with walls on both axes
//! ([`G::wall_windows`]), written
//! with AVX2 vectors (through `pulp`'s safe wrappers of the intrinsics) instead of arrays.
//!
//! The semi-Lagrangian kernels spend most of their time computing interpolation stencils and
//! bilinear samples at eight backtraced positions at a time. Written over `[f32; 8]` arrays,
//! LLVM vectorises that arithmetic only in part: in the inlined backtrace it left 4-wide pieces,
//! per-lane extractions and scalar selects (doc/PERFORMANCE.md, "The semi-Lagrangian kernels in
//! AVX2 vectors"). Here every step is one instruction on all eight lanes, and the four corners
//! of the eight 2 × 2 windows are read with four loads and four permutes where the windows lie
//! within eight values of each other, which the lanes of a smooth flow mostly do.
//!
//! Every function does exactly the IEEE operations of its `common` twin, in the same order
//! (no fused multiply-add), so the results are the same bits: tested against the one-sample
//! functions ([`stencil`], [`sample_u`], [`sample_v`], [`bilerp4`], [`backtrace`]) below, and
//! through the kernels' own tests against their one-sample functions.
//!
//! [`stencil`]: super::common::stencil
//! [`sample_u`]: super::common::sample_u
//! [`sample_v`]: super::common::sample_v
//! [`bilerp4`]: super::common::bilerp4
//! [`backtrace`]: super::common::backtrace

use std::arch::x86_64::{__m256, __m256i, _CMP_GT_OQ};

use pulp::x86::V3;

use super::common::{G, LANES};

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
        // picks them. Otherwise, or where those values would run past the field, single loads.
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
                let base = self.store_i(base);
                let mut c = [[0f32; LANES]; 4];
                for k in 0..LANES {
                    let w = &data[base[k] as usize..][..stride + 2];
                    (c[0][k], c[1][k], c[2][k], c[3][k]) = (w[0], w[1], w[stride], w[stride + 1]);
                }
                (self.load(c[0]), self.load(c[1]), self.load(c[2]), self.load(c[3]))
            }
        };
        self.lerp(self.lerp(c00, c10, tx), self.lerp(c01, c11, tx), ty)
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

    /// `common::sample_u` at eight positions (cell units).
    #[inline(always)]
    pub fn sample_u(self, g: &G, u: &[f32], x: F8, y: F8) -> F8 {
        let sx = self.stencil(x, g.nx, true);
        let sy = self.stencil(self.sub(y, self.splat(0.5)), g.ny, false);
        self.bilerp_windows(u, g.nx + 1, sx, sy)
    }

    /// `common::sample_v` at eight positions (cell units).
    #[inline(always)]
    pub fn sample_v(self, g: &G, v: &[f32], x: F8, y: F8) -> F8 {
        let sx = self.stencil(self.sub(x, self.splat(0.5)), g.nx, false);
        let sy = self.stencil(y, g.ny, true);
        self.bilerp_windows(v, g.nx, sx, sy)
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
    use fluid_core::{Boundary, FieldId, Grid};

    fn avx2() -> Avx2 {
        // x86-64 machines have had AVX2 since 2013; without it these helpers never run, and this
        // test says so rather than passing without checking anything.
        Avx2::get().expect("this test needs a CPU with AVX2, FMA and the rest of x86-64-v3")
    }

    fn grid(nx: u32, ny: u32) -> (G, Vec<f32>, Vec<f32>) {
        let grid = Grid::new(nx, ny, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let mut rng = fluid_core::scene::SplitMix64(11);
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
        let mut rng = fluid_core::scene::SplitMix64(7);
        xs.extend((0..200).map(|_| (n + 4.0) * rng.next_f32() - 2.0));
        xs.truncate(xs.len() / LANES * LANES);
        xs
    }

    #[test]
    fn the_stencil_is_the_wall_stencil_of_common() {
        let a = avx2();
        for n in [2, 3, 17, 512] {
            for faces in [false, true] {
                for x in awkward(n).chunks_exact(LANES) {
                    let x: [f32; LANES] = x.try_into().expect("eight");
                    let (i0, t) = a.stencil(a.load(x), n, faces);
                    let (i0, t) = (a.store_i(i0), a.store(t));
                    for k in 0..LANES {
                        let (want_i0, want_i1, want_t) = stencil(x[k], n, faces, false);
                        assert_eq!(want_i1, want_i0 + 1, "a window");
                        assert_eq!(
                            (i0[k] as usize, t[k].to_bits()),
                            (want_i0, want_t.to_bits()),
                            "x = {:e}, n = {n}, faces = {faces}",
                            x[k]
                        );
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
        let mut rng = fluid_core::scene::SplitMix64(13);
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

    #[test]
    fn samples_equal_the_one_sample_functions() {
        let a = avx2();
        for (nx, ny) in [(29, 9), (2, 2), (9, 31)] {
            let (g, u, v) = grid(nx, ny);
            for (x, y) in batches(&g) {
                let su = a.store(a.sample_u(&g, &u, a.load(x), a.load(y)));
                let sv = a.store(a.sample_v(&g, &v, a.load(x), a.load(y)));
                for k in 0..LANES {
                    let at = format!("({:e}, {:e}) on {nx} x {ny}", x[k], y[k]);
                    assert_eq!(su[k].to_bits(), sample_u(&g, &u, x[k], y[k]).to_bits(), "u at {at}");
                    assert_eq!(sv[k].to_bits(), sample_v(&g, &v, x[k], y[k]).to_bits(), "v at {at}");
                }
            }
        }
    }

    #[test]
    fn rgba_samples_equal_bilerp4() {
        let a = avx2();
        for (nx, ny) in [(29, 9), (2, 2)] {
            let (g, _, _) = grid(nx, ny);
            let mut rng = fluid_core::scene::SplitMix64(17);
            let dye: Vec<f32> = (0..4 * g.nx * g.ny).map(|_| 8.0 * rng.next_f32() - 4.0).collect();
            for (x, y) in batches(&g) {
                let sx = a.stencil(a.load(x), g.nx, false);
                let sy = a.stencil(a.load(y), g.ny, false);
                let mut out = [0f32; 4 * LANES];
                a.bilerp4_windows(&dye, g.nx, sx, sy, 0.9, &mut out);
                for k in 0..LANES {
                    let want =
                        bilerp4(&dye, g.nx, stencil(x[k], g.nx, false, false), stencil(y[k], g.ny, false, false));
                    let got = &out[4 * k..4 * k + 4];
                    for ch in 0..4 {
                        assert_eq!(
                            got[ch].to_bits(),
                            (want[ch] * 0.9).to_bits(),
                            "channel {ch} at ({:e}, {:e}) on {nx} x {ny}",
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
        let (g, u, v) = grid(29, 9);
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
