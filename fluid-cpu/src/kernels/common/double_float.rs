//! Double-float arithmetic (a value as an f32 pair, its high part and its rounding error):
//! what the pressure kernels accumulate in, twin of `shared/double_float.wgsl`.

use super::{G, next, prev};

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
