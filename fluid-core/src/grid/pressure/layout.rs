//! How the pressure solvers pack their arrays into one workspace ([`crate::grid::FieldId::Multigrid`]),
//! as functions of the grid's size alone: multigrid's level hierarchy, MGPCG's vectors after
//! it, the Poisson filter's taps and arrays, and the tile and workgroup sizes the kernels' data
//! is laid out for. The solvers' files re-export what they use; the grid and its fields read
//! lengths from here without depending on the solvers.

use crate::grid::uniforms::MgParams;

// Multigrid's levels (see `multigrid`).

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
    levels_from(nx, ny, 0)
}

/// The levels from one of `nx × ny` cells whose `b` starts at `offset`, finest first: the tail
/// of [`levels`] from that level on (what `mg_coarse` works through).
pub fn levels_from(nx: u32, ny: u32, offset: u32) -> Vec<Level> {
    // Offsets saturate for grids too large to address (their buffer is refused at allocation).
    let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let mut out = Vec::new();
    let (mut x, mut y, mut offset) = (nx, ny, u64::from(offset));
    loop {
        let cells = u64::from(x) * u64::from(y);
        out.push(Level { nx: x, ny: y, b: sat(offset), p: sat(offset + cells), tmp: sat(offset + 2 * cells) });
        offset += 3 * cells;
        // The next level's shorter side would fall below MIN_SIDE.
        if x.min(y).div_ceil(2) < MIN_SIDE {
            break;
        }
        x = x.div_ceil(2);
        y = y.div_ceil(2);
    }
    out
}

/// Values of the packed levels of an `nx × ny` grid: multigrid's whole workspace.
pub(crate) fn levels_len(nx: u32, ny: u32) -> u64 {
    levels(nx, ny).iter().map(|l| 3 * u64::from(l.nx) * u64::from(l.ny)).sum()
}

/// Length of a workspace that holds every solver's layout (they overlap: a scene runs one
/// solver): MGPCG's levels and vectors, or the Poisson filter's taps and arrays.
pub fn buffer_len(nx: u32, ny: u32) -> usize {
    let len = mgpcg_len(nx, ny).max(filter_len(nx, ny, MAX_RANK));
    usize::try_from(len).unwrap_or(usize::MAX)
}

/// Red-black iterations of the coarsest solve of `level`: enough to cross it a few times.
pub(crate) fn coarse_iterations(level: &Level) -> u32 {
    (2 * level.nx.max(level.ny)).clamp(8, MAX_COARSE_ITERATIONS)
}

/// The part of a V-cycle from the first level whose arrays, with those of every coarser level,
/// fit in this many values (16 KiB) is one `mg_coarse` dispatch (a single workgroup of
/// [`COARSE_THREADS`], holding them in workgroup memory) instead of ten or more dispatches per
/// level: on a GPU a small level costs the fixed latency of its dispatches, not its cells.
pub const COARSE_FLOATS: u32 = 4096;

/// Whether the levels from `first` on (the rest of the hierarchy) fit `mg_coarse`'s
/// [`COARSE_FLOATS`].
pub fn fits_coarse(first: &Level) -> bool {
    let total: u64 = levels_from(first.nx, first.ny, first.b).iter().map(|l| 3 * u64::from(l.cells())).sum();
    total <= u64::from(COARSE_FLOATS)
}

/// Threads of the single `mg_coarse` workgroup.
pub const COARSE_THREADS: u32 = 256;

/// Most cells along each side of the tile one `mg_smooth2` workgroup writes (even, so that a
/// tile holds whole coarse cells); its workgroup loads the tile plus a halo of 5 (one cell per
/// pass and one for the residual) into workgroup memory.
pub const SMOOTH2_TILE: u32 = 22;

// MGPCG's vectors after the levels (see `mgpcg`).

/// Most partial sums of a dot product (the first of its two passes).
pub const MAX_PARTIALS: u32 = 1024;

/// Where MGPCG keeps its vectors, after the levels: the iterate `x` (double-float: its high
/// part, then its low part, `cells` values each), the search direction `d`, `q = A d`, the dot
/// products' partial sums and scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgLayout {
    /// Offset of `x` (the high part; the low part follows).
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
        d: sat(end + 2 * cells),
        q: sat(end + 3 * cells),
        partials: sat(end + 4 * cells),
        scalars: sat(end + 4 * cells + u64::from(MAX_PARTIALS)),
    }
}

/// Values of MGPCG's workspace: the levels and the vectors after them.
pub(crate) fn mgpcg_len(nx: u32, ny: u32) -> u64 {
    u64::from(cg_layout(nx, ny).scalars) + 16
}

// The Poisson filter's taps and arrays (see `poisson_filter`).

/// Largest `k` (sweeps unrolled).
pub const MAX_SWEEPS: u32 = 32;
/// Largest rank.
pub const MAX_RANK: u32 = 4;
/// Taps of one 1D filter at the largest `k`.
pub const MAX_TAPS: u32 = 2 * MAX_SWEEPS + 1;
/// Floats of the taps region: rows and columns of `F` and `G`, [`MAX_RANK`] filters each.
pub const TAPS_LEN: u32 = 4 * MAX_RANK * MAX_TAPS;

/// Offsets inside the taps region (relative to its start) of the four filter banks: each holds
/// [`MAX_RANK`] filters of [`MAX_TAPS`] taps, filter `i` tap `t` (`t = dx + k`) at
/// `bank + i · MAX_TAPS + t`.
pub const F_ROWS: u32 = 0;
/// See [`F_ROWS`].
pub const F_COLS: u32 = MAX_RANK * MAX_TAPS;
/// See [`F_ROWS`].
pub const G_ROWS: u32 = 2 * MAX_RANK * MAX_TAPS;
/// See [`F_ROWS`].
pub const G_COLS: u32 = 3 * MAX_RANK * MAX_TAPS;

/// Offset of the intermediate arrays in the workspace (after the taps).
pub const TMP: u32 = TAPS_LEN;

/// Values of the workspace of an `nx × ny` grid at rank `rank`: the taps, `rank` arrays of the
/// row pass and one of the warm-start part.
pub(crate) fn filter_len(nx: u32, ny: u32, rank: u32) -> u64 {
    u64::from(TAPS_LEN) + u64::from(rank + 1) * u64::from(nx) * u64::from(ny)
}
