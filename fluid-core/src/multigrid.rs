//! The level hierarchy of the geometric multigrid solver and its packed storage.
//!
//! Level 0 is the simulation grid; each coarser level halves both sides (rounding up, so any
//! `nx × ny` works: the last coarse cell of an odd side covers one fine cell) while the shorter
//! side stays at least [`MIN_SIDE`]. Every level solves the same unscaled equation as the
//! Jacobi kernels, `(A p)_c = n_c p_c − Σ p_nbr = b_c` (walls Neumann, periodic axes wrap), with
//! `b_0 = −h² ∇·u / dt` and, on a coarse level, `b` = the sum of the children's residuals (the
//! `h²` of the coarse cell is four fine ones). All levels live in one buffer,
//! [`crate::FieldId::Multigrid`]: per level `b`, `p`, `tmp` (the ping-pong partner of `p`),
//! `cells` values each, levels in order.

use crate::uniforms::{CgParams, MgParams};

/// Levels stop coarsening when halving would bring the shorter side below this.
pub const MIN_SIDE: u32 = 3;

/// Most red-black iterations of the coarsest solve.
pub const MAX_COARSE_ITERATIONS: u32 = 64;

/// One level of the hierarchy: its size and where its arrays start in the packed buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Cells along x.
    pub nx: u32,
    /// Cells along y.
    pub ny: u32,
    /// Offset of the right-hand side `b`.
    pub b: u32,
    /// Offset of the iterate `p`.
    pub p: u32,
    /// Offset of `p`'s ping-pong partner.
    pub tmp: u32,
}

impl Level {
    /// Number of cells.
    pub fn cells(&self) -> u32 {
        self.nx * self.ny
    }

    /// The `mg_*` parameters of a kernel on this level (its size and arrays; the rest zero).
    pub fn params(&self) -> MgParams {
        MgParams { nx: self.nx, ny: self.ny, b: self.b, p: self.p, tmp: self.tmp, ..MgParams::default() }
    }

    /// The parameters of a transfer between this level and the next coarser one.
    pub fn transfer(&self, coarse: &Level) -> MgParams {
        MgParams { cnx: coarse.nx, cny: coarse.ny, cb: coarse.b, cp: coarse.p, ..self.params() }
    }
}

/// The levels of an `nx × ny` grid, finest first.
pub fn levels(nx: u32, ny: u32) -> Vec<Level> {
    // Offsets saturate for grids too large to address (their buffer is refused at allocation).
    let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let mut out = Vec::new();
    let (mut x, mut y, mut offset) = (nx, ny, 0u64);
    loop {
        let cells = u64::from(x) * u64::from(y);
        out.push(Level { nx: x, ny: y, b: sat(offset), p: sat(offset + cells), tmp: sat(offset + 2 * cells) });
        offset += 3 * cells;
        if x.min(y).div_ceil(2) < MIN_SIDE || x.min(y) < 2 * MIN_SIDE - 1 {
            break;
        }
        x = x.div_ceil(2);
        y = y.div_ceil(2);
    }
    out
}

/// Most partial sums of a dot product (the first of its two passes).
pub const MAX_PARTIALS: u32 = 1024;

/// Where MGPCG keeps its vectors, after the levels: the iterate `x`, the search direction `d`,
/// `q = A d`, the dot products' partial sums and scalars (`r` is level 0's `b`, `z = M r` level
/// 0's `p`, so the V-cycle preconditions in place).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgLayout {
    /// Offset of `x`.
    pub x: u32,
    /// Offset of `d`.
    pub d: u32,
    /// Offset of `q`.
    pub q: u32,
    /// Offset of the [`MAX_PARTIALS`] partial sums.
    pub partials: u32,
    /// Offset of the 16 scalars: `r·z` of even and odd iterations (0, 1), `d·q` (2).
    pub scalars: u32,
}

/// The MGPCG vectors of an `nx × ny` grid.
pub fn cg_layout(nx: u32, ny: u32) -> CgLayout {
    let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let end = levels_len(nx, ny);
    let cells = u64::from(nx) * u64::from(ny);
    CgLayout {
        x: sat(end),
        d: sat(end + cells),
        q: sat(end + 2 * cells),
        partials: sat(end + 3 * cells),
        scalars: sat(end + 3 * cells + u64::from(MAX_PARTIALS)),
    }
}

fn levels_len(nx: u32, ny: u32) -> u64 {
    levels(nx, ny).iter().map(|l| 3 * u64::from(l.nx) * u64::from(l.ny)).sum()
}

/// Offset of the Poisson filter's taps ([`crate::poisson_filter`]), after the MGPCG scalars.
pub fn taps_offset(nx: u32, ny: u32) -> u32 {
    cg_layout(nx, ny).scalars.saturating_add(16)
}

/// The `cg_*` parameters shared by every MGPCG kernel of an `nx × ny` grid: level 0's size, the
/// vectors (`r` and `z` are level 0's `b` and `p`), and the number of partial sums of a dot
/// product (one per 1024 cells, at most [`MAX_PARTIALS`]).
pub fn cg_params(nx: u32, ny: u32) -> CgParams {
    let top = levels(nx, ny)[0];
    let l = cg_layout(nx, ny);
    CgParams {
        nx,
        ny,
        x: l.x,
        r: top.b,
        z: top.p,
        d: l.d,
        q: l.q,
        partials: l.partials,
        scalars: l.scalars,
        count: top.cells().div_ceil(256 * 4).clamp(1, MAX_PARTIALS),
        ..CgParams::default()
    }
}

/// Length of the packed buffer of an `nx × ny` grid: the levels, the MGPCG vectors, the
/// Poisson filter's taps.
pub fn buffer_len(nx: u32, ny: u32) -> usize {
    let len = levels_len(nx, ny)
        + 3 * u64::from(nx) * u64::from(ny)
        + u64::from(MAX_PARTIALS)
        + 16
        + u64::from(crate::poisson_filter::TAPS_LEN);
    usize::try_from(len).unwrap_or(usize::MAX)
}

/// Red-black iterations of the coarsest solve of `level`: enough to cross it a few times.
pub fn coarse_iterations(level: &Level) -> u32 {
    (2 * level.nx.max(level.ny)).clamp(8, MAX_COARSE_ITERATIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_halve_any_size_and_pack_without_overlap() {
        let l = levels(1024, 1024);
        assert_eq!(l.iter().map(|l| l.nx).collect::<Vec<_>>(), [1024, 512, 256, 128, 64, 32, 16, 8, 4]);
        let l = levels(37, 23);
        assert_eq!(l.iter().map(|l| (l.nx, l.ny)).collect::<Vec<_>>(), [(37, 23), (19, 12), (10, 6), (5, 3)]);
        let mut end = 0;
        for lv in &l {
            assert_eq!(lv.b, end);
            assert_eq!(lv.p, lv.b + lv.cells());
            assert_eq!(lv.tmp, lv.p + lv.cells());
            end = lv.tmp + lv.cells();
        }
        let cg = cg_layout(37, 23);
        assert_eq!(cg.x, end);
        assert_eq!(
            buffer_len(37, 23),
            (end + 3 * 37 * 23 + MAX_PARTIALS + 16 + crate::poisson_filter::TAPS_LEN) as usize
        );
        assert_eq!(levels(4, 100).len(), 1, "a side of 4 cannot halve to 3 or more");
        assert_eq!(levels(1, 1), [Level { nx: 1, ny: 1, b: 0, p: 1, tmp: 2 }]);
    }
}
