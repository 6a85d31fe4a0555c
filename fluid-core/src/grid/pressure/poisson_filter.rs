//! The separable Poisson filter (Rabbani et al., "Compact Poisson Filters for Fast Fluid
//! Simulation", SIGGRAPH 2022), a separable solver.
//!
//! `k` weighted-Jacobi sweeps of the unscaled Poisson equation `4 p − Σ p_nbr = b` on an
//! unbounded grid are a linear, translation-invariant map: `p_k = F_k ⋆ b + G_k ⋆ p_0`, with
//! `F_k` the response to a unit `b` from zero and `G_k` the response to a unit `p_0` with
//! `b = 0`, both `(2k+1)²` kernels. Each kernel is factored by SVD into rank-1 terms
//! `σ_i u_i v_iᵀ`; keeping `r` of them gives `r` pairs of 1D filters applied as separable
//! convolutions (rows, then columns): `O(r k)` work per cell instead of `O(k)` dependent sweeps.
//! Walls are handled by mirroring the grid, periodic axes by wrapping. The filters are computed
//! here in f64 (nalgebra's SVD) and written into the solver's workspace once by `poisson_taps`
//! (the setup schedule).
//!
//! The workspace ([`crate::grid::FieldId::Multigrid`]): the taps at its start ([`TAPS_LEN`] values),
//! then the `rank` intermediate arrays of the row pass, then the array of the warm-start part.

use nalgebra::DMatrix;

use crate::grid::FieldId::{Divergence, Multigrid, Pressure};
use crate::grid::builder::Builder;
use crate::grid::kernels::{POISSON_COLS, POISSON_ROWS, POISSON_TAPS};
use crate::grid::uniforms::{FilterParams, TapsParams};

pub use super::layout::{F_COLS, F_ROWS, G_COLS, G_ROWS, MAX_RANK, MAX_SWEEPS, MAX_TAPS, TAPS_LEN, TMP};

/// The two kernels of `k` sweeps with weight `omega`, as `(2k+1)²` row-major matrices indexed
/// `[dy + k][dx + k]`: `(F, G)`.
pub fn kernels(k: u32, omega: f64) -> (DMatrix<f64>, DMatrix<f64>) {
    let n = (2 * k + 1) as usize;
    let run = |b: &DMatrix<f64>, p0: &DMatrix<f64>| {
        let mut p = p0.clone();
        for _ in 0..k {
            let mut next = DMatrix::zeros(n, n);
            for y in 0..n {
                for x in 0..n {
                    let at = |xx: isize, yy: isize| {
                        if xx < 0 || yy < 0 || xx >= n as isize || yy >= n as isize {
                            0.0
                        } else {
                            p[(yy as usize, xx as usize)]
                        }
                    };
                    let (xi, yi) = (x as isize, y as isize);
                    let sum = at(xi - 1, yi) + at(xi + 1, yi) + at(xi, yi - 1) + at(xi, yi + 1);
                    next[(y, x)] = p[(y, x)] + omega * ((sum + b[(y, x)]) / 4.0 - p[(y, x)]);
                }
            }
            p = next;
        }
        p
    };
    let mut delta = DMatrix::zeros(n, n);
    delta[(k as usize, k as usize)] = 1.0;
    let zero = DMatrix::zeros(n, n);
    (run(&delta, &zero), run(&zero, &delta))
}

/// One rank-1 term: `(row filter along x, column filter along y)`.
pub type FilterPair = (Vec<f64>, Vec<f64>);

/// Rank-`r` separable factors of a kernel: `r` pairs `(row filter along x, column filter along
/// y)` with `kernel ≈ Σ col ⊗ row`, and the relative Frobenius error of the approximation.
pub fn factor(kernel: &DMatrix<f64>, r: u32) -> (Vec<FilterPair>, f64) {
    let svd = kernel.clone().svd(true, true);
    let (Some(u), Some(vt)) = (svd.u.as_ref(), svd.v_t.as_ref()) else {
        return (Vec::new(), 1.0);
    };
    let mut order: Vec<usize> = (0..svd.singular_values.len()).collect();
    order.sort_by(|a, b| svd.singular_values[*b].total_cmp(&svd.singular_values[*a]));
    let total: f64 = svd.singular_values.iter().map(|s| s * s).sum();
    let mut kept = 0.0;
    let mut pairs = Vec::new();
    for &i in order.iter().take(r as usize) {
        let s = svd.singular_values[i];
        kept += s * s;
        let col: Vec<f64> = u.column(i).iter().map(|x| x * s.sqrt()).collect();
        let row: Vec<f64> = vt.row(i).iter().map(|x| x * s.sqrt()).collect();
        pairs.push((row, col));
    }
    let err = if total > 0.0 { ((total - kept).max(0.0) / total).sqrt() } else { 0.0 };
    (pairs, err)
}

/// The taps region for `k` sweeps, weight `omega` and rank `r` (see [`F_ROWS`]), and the
/// relative Frobenius errors of the rank-`r` `F` and `G`.
pub fn taps(k: u32, omega: f32, r: u32) -> (Vec<f32>, f64, f64) {
    let (f, g) = kernels(k, f64::from(omega));
    let (fp, fe) = factor(&f, r);
    let (gp, ge) = factor(&g, r);
    let mut out = vec![0.0f32; TAPS_LEN as usize];
    for (bank, pairs) in [(F_ROWS, &fp), (G_ROWS, &gp)] {
        for (i, (row, col)) in pairs.iter().enumerate() {
            for (t, (a, b)) in row.iter().zip(col).enumerate() {
                let at = i * MAX_TAPS as usize + t;
                out[bank as usize + at] = *a as f32;
                out[(bank + F_COLS) as usize + at] = *b as f32;
            }
        }
    }
    (out, fe, ge)
}

/// Index `i` folded back into `0..n`: mirrored about the walls (`−1 → 0`, `n → n − 1`) or
/// wrapped.
pub fn fold(i: i64, n: i64, periodic: bool) -> usize {
    if periodic {
        return i.rem_euclid(n) as usize;
    }
    let m = i.rem_euclid(2 * n);
    (if m >= n { 2 * n - 1 - m } else { m }) as usize
}

/// The filter: `rank` separable passes reproducing `k` Jacobi sweeps (warm: plus the sweeps'
/// action on the previous pressure). The taps are written by [`push_setup`].
pub(crate) fn push(b: &mut Builder, k: u32, rank: u32, warm: bool) {
    let cells = b.grid().nx * b.grid().ny;
    let base = FilterParams { rank, k, tmp: TMP, q: TMP + rank * cells, ..FilterParams::default() };
    if warm {
        let rows = FilterParams { bank: G_ROWS, mode: 0, ..base };
        b.run(POISSON_ROWS, &[Pressure, Divergence, Multigrid], Some(&rows));
        let cols = FilterParams { bank: G_COLS, mode: 0, ..base };
        b.run(POISSON_COLS, &[Multigrid, Pressure], Some(&cols));
    }
    let rows = FilterParams { bank: F_ROWS, mode: 1, ..base };
    b.run(POISSON_ROWS, &[Pressure, Divergence, Multigrid], Some(&rows));
    let cols = FilterParams { bank: F_COLS, mode: if warm { 2 } else { 1 }, ..base };
    b.run(POISSON_COLS, &[Multigrid, Pressure], Some(&cols));
}

/// The taps of `k` sweeps with weight `omega` at rank `rank`, written into the workspace eight
/// at a time (what the solver needs before its first solve).
pub(crate) fn push_setup(b: &mut Builder, k: u32, omega: f32, rank: u32) {
    let (filters, _, _) = taps(k, omega, rank);
    let used = (2 * k + 1) as usize;
    for bank in 0..4 * MAX_RANK as usize {
        let filter = bank * MAX_TAPS as usize;
        for chunk in (0..used).step_by(8) {
            let count = (used - chunk).min(8);
            let mut t = [0.0f32; 8];
            t[..count].copy_from_slice(&filters[filter + chunk..filter + chunk + count]);
            let p = TapsParams { offset: (filter + chunk) as u32, count: count as u32, _pad: [0; 2], taps: t };
            b.run_over(POISSON_TAPS, &[Multigrid], Some(&p), [1, 1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One sweep from zero is ω b / 4 at the centre; the kernels are 4-fold symmetric; the
    /// rank-r error falls with r (the figures are quoted in doc/PERFORMANCE.md).
    #[test]
    fn kernels_and_their_factors() {
        let (f, _) = kernels(1, 0.9);
        assert!((f[(1, 1)] - 0.225).abs() < 1e-12);
        let (f, g) = kernels(8, 0.9);
        for k in [&f, &g] {
            assert!((k - k.transpose()).norm() < 1e-12);
        }
        let errors: Vec<f64> = (1..=4).map(|r| factor(&f, r).1).collect();
        assert!(errors.windows(2).all(|w| w[1] < w[0]), "{errors:?}");
        assert!(errors[3] < 2e-2, "{errors:?}");
        assert_eq!(fold(-1, 5, false), 0);
        assert_eq!(fold(5, 5, false), 4);
        assert_eq!(fold(-1, 5, true), 4);
        assert_eq!(fold(-7, 5, false), 3);
    }
}
