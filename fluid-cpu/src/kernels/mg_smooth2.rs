//! `mg_smooth2`: two red-black iterations on one multigrid level in one invocation, from the
//! iterate at `p` (plus the next coarser level's correction when `cnx` > 0, as `mg_prolong`
//! adds it) into `tmp`, `p` left as it was; with the `SMOOTH2_RESTRICT` bit of `colour`, then
//! the result's residual restricted into the coarser level instead, as `mg_restrict` does.
//! The four [`super::mg_smooth`] passes of [`swirly_core::grid::pressure::multigrid::smooth2_passes`], one after
//! the other, define the answer. `mg_smooth2_solid`, its twin with obstacles, is those passes
//! through the weighted kernels ([`super::solid::mg_smooth`], [`super::solid::mg_restrict`]).
//!
//! On the GPU a workgroup loads its tile plus a halo of five cells and runs the four passes in
//! workgroup memory. Here a job does the same with a band of rows: over the band and up to five
//! rows on each side (one per pass, one for the residual) it computes the right-hand side and
//! the corrected iterate where the call asks for them, runs the passes through two scratch
//! buffers (pass `k` of 1..=4 over the band and `5 − k` rows beside it, each row by
//! [`mg_smooth::pass_row`]; the first reads an uncorrected iterate where it lies, the last writes
//! the band's own rows straight into `tmp`), and writes only its own rows of `tmp`, `b`, the
//! coarse level and the pressure. The rows beside the band are computed by both jobs that need
//! them, from the same inputs by the same arithmetic, so the result is the same bit for bit for
//! any band height and thread count (tested against the passes through the whole level), and a
//! call is one parallel loop instead of five or six.

use std::ops::Range;

use rayon::prelude::*;
use swirly_core::grid::pressure::multigrid::{
    SMOOTH2_ACCUMULATE, SMOOTH2_LOAD_RESIDUAL, SMOOTH2_RESTRICT, smooth2_passes,
};
use swirly_core::grid::uniforms::MgParams;

use super::common::{G, Rows, df_accumulate, for_each_row};
use super::{mg_load, mg_prolong, mg_restrict, mg_smooth, solid};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The double-float pressure and the divergence, for the level-0 steps of a double-float solve.
pub struct Pressure<'a> {
    /// High part.
    pub hi: &'a mut [f32],
    /// Low part.
    pub lo: &'a mut [f32],
    /// The divergence (the right-hand side).
    pub div: &'a [f32],
    /// The step's dt.
    pub dt: f32,
}

/// Rows a band takes at least (even, so that a band holds whole coarse rows).
const BAND_MIN: usize = 32;
/// Rows computed beside a band: one per pass, one for the residual.
const HALO: usize = 5;
/// Levels of fewer cells run as one band: a parallel loop costs more than it saves there.
const ONE_BAND_CELLS: usize = 8192;

/// The band height on a level of `nx × ny` cells with `threads` threads: two bands per thread
/// where the level is tall enough (so that a thread held up elsewhere leaves the other its
/// second band to take), at least [`BAND_MIN`] rows, even; one band on one thread.
fn band_rows(nx: usize, ny: usize, threads: usize) -> usize {
    if nx * ny <= ONE_BAND_CELLS || threads <= 1 {
        return ny + ny % 2;
    }
    let rows = ny.div_ceil(2 * threads).max(BAND_MIN);
    rows + rows % 2
}

/// Scratch values of one job with bands of `band` rows `nx` wide: two iterates and a
/// right-hand side of `band + 2 HALO` rows, and two residual rows.
fn job_scratch(nx: usize, band: usize) -> usize {
    (3 * (band + 2 * HALO) + 2) * nx
}

/// The scratch [`run`] needs on any level of a grid of `nx × ny` cells with `threads` threads
/// (the backend allocates it with the fields).
pub fn scratch_len(nx: usize, ny: usize, threads: usize) -> usize {
    swirly_core::grid::pressure::multigrid::levels(nx as u32, ny as u32)
        .iter()
        .map(|l| {
            let (x, y) = (l.nx as usize, l.ny as usize);
            let band = band_rows(x, y, threads);
            y.div_ceil(band) * job_scratch(x, band)
        })
        .max()
        .unwrap_or(0)
}

/// The pair of iterations on the level `params` names. In a double-float solve, on level 0:
/// with the `SMOOTH2_LOAD_RESIDUAL` bit of `colour` the level's `b` is first computed as the
/// residual of the double-float pressure, as `mg_load` in mode `LOAD_RESIDUAL` does; with the
/// `SMOOTH2_ACCUMULATE` bit the result is also added to the pressure, as `mg_store` in mode
/// `STORE_ADD` does. `scratch` is grown to [`scratch_len`] when shorter (keep it between calls
/// to avoid allocating).
pub fn run(g: &G, params: &MgParams, mg: &mut [f32], mut pressure: Option<Pressure<'_>>, scratch: &mut Vec<f32>) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let band = band_rows(nx, ny, rayon::current_num_threads());
    if !bands(g, params, mg, pressure.as_mut(), scratch, band) {
        whole_level(g, params, mg, pressure, None);
    }
}

/// What a call reads, shared by its jobs.
struct Inputs<'a> {
    g: &'a G,
    params: &'a MgParams,
    passes: [MgParams; 4],
    /// The level's iterate (`None` when the first pass starts from zero).
    p: Option<&'a [f32]>,
    /// The level's right-hand side, or the pressure it is computed from.
    b: Rhs<'a>,
    /// The coarser level's `p`, when its correction is added first.
    coarse: Option<&'a [f32]>,
    restrict: bool,
}

/// Where the right-hand side comes from.
enum Rhs<'a> {
    /// The level's `b`.
    Level(&'a [f32]),
    /// Computed from the double-float pressure (`hi`, `lo`), the divergence and `scale`.
    Pressure { hi: &'a [f32], lo: &'a [f32], div: &'a [f32], scale: f32 },
}

/// What one job writes: its own rows of each output (empty slices for outputs not asked for).
struct Job<'a> {
    /// Its rows of the level.
    rows: Range<usize>,
    tmp: &'a mut [f32],
    /// Its rows of the level's `b`, when computed here.
    b: &'a mut [f32],
    /// Its rows of the coarser level's `b` and `p`, when restricting.
    cb: &'a mut [f32],
    cp: &'a mut [f32],
    /// Its rows of the double-float pressure, when accumulating.
    hi: &'a mut [f32],
    lo: &'a mut [f32],
    scratch: &'a mut [f32],
}

/// Split the first `n` values off `s` (all of them when shorter).
fn split_first<'a>(s: &mut &'a mut [f32], n: usize) -> &'a mut [f32] {
    let n = n.min(s.len());
    let (head, tail) = std::mem::take(s).split_at_mut(n);
    *s = tail;
    head
}

/// The call as one parallel loop over bands of `band` rows; `false` (nothing done) when an
/// array it writes overlaps one it reads or another it writes, or when both pressure bits are
/// set (no cycle the schedule emits does that; the right-hand side would be computed from a
/// pressure that the jobs change).
fn bands(
    g: &G,
    params: &MgParams,
    mg: &mut [f32],
    pressure: Option<&mut Pressure<'_>>,
    scratch: &mut Vec<f32>,
    band: usize,
) -> bool {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let cells = nx * ny;
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let restrict = params.colour & SMOOTH2_RESTRICT != 0;
    let load = params.colour & SMOOTH2_LOAD_RESIDUAL != 0 && pressure.is_some();
    let accumulate = params.colour & SMOOTH2_ACCUMULATE != 0 && pressure.is_some();
    let zero = params.zero_initial != 0;
    if load && accumulate {
        return false;
    }
    let at = |start: u32, len: usize| start as usize..start as usize + len;
    let ccells = if restrict { cnx * cny } else { 0 };
    let written = [
        at(params.tmp, cells),
        at(params.b, if load { cells } else { 0 }),
        at(params.cb, ccells),
        at(params.cp, ccells),
    ];
    let Some(([tmp, b_out, cb, cp], rest)) = carve(mg, written) else {
        return false;
    };
    // A first pass from zero ignores the iterate, and so its correction.
    let prolong = prolongs(params) && !zero;
    let p = if zero { None } else { rest.slice(at(params.p, cells)) };
    let coarse = if prolong { rest.slice(at(params.cp, cnx * cny)) } else { None };
    if (!zero && p.is_none()) || (prolong && coarse.is_none()) {
        return false;
    }
    let (mut hi, mut lo, b): (&mut [f32], &mut [f32], _) = match pressure {
        Some(pr) if load => {
            let scale = -g.h * g.h / pr.dt;
            (&mut [], &mut [], Rhs::Pressure { hi: &*pr.hi, lo: &*pr.lo, div: pr.div, scale })
        }
        pr => {
            let Some(b) = rest.slice(at(params.b, cells)) else {
                return false;
            };
            match pr {
                Some(pr) if accumulate => (&mut *pr.hi, &mut *pr.lo, Rhs::Level(b)),
                _ => (&mut [], &mut [], Rhs::Level(b)),
            }
        }
    };
    let inputs = Inputs { g, params, passes: smooth2_passes(params), p, b, coarse, restrict };
    let per_job = job_scratch(nx, band);
    let jobs = ny.div_ceil(band);
    if scratch.len() < jobs * per_job {
        scratch.resize(jobs * per_job, 0.0);
    }
    let (mut tmp, mut b_out, mut cb, mut cp) = (tmp, b_out, cb, cp);
    let mut buf = &mut scratch[..jobs * per_job];
    let mut list = Vec::with_capacity(jobs);
    for k in 0..jobs {
        let rows = k * band..((k + 1) * band).min(ny);
        let own = rows.len() * nx;
        let coarse_own = (rows.end.div_ceil(2) - rows.start / 2) * cnx;
        list.push(Job {
            tmp: split_first(&mut tmp, own),
            b: split_first(&mut b_out, own),
            cb: split_first(&mut cb, coarse_own),
            cp: split_first(&mut cp, coarse_own),
            hi: split_first(&mut hi, own),
            lo: split_first(&mut lo, own),
            scratch: split_first(&mut buf, per_job),
            rows,
        });
    }
    let arch = crate::simd::arch();
    list.into_par_iter().for_each(|job| {
        // `vectorized` calls an `FnMut` (see there), which cannot move `job` out: it takes it.
        let mut job = Some(job);
        crate::simd::vectorized(
            arch,
            #[inline(always)]
            || {
                if let Some(job) = job.take() {
                    run_band(&inputs, job);
                }
            },
        )
    });
    true
}

/// One band: the four passes over its rows and the rows beside them (each pass over one row
/// fewer on each side than the one before, the first over [`HALO`] − 1), then its rows of the
/// outputs. The first pass reads the iterate from the level itself, or from scratch when the
/// correction is added to it first (or from a row of zeros); the last writes the band's own rows
/// straight into `tmp` and the rows beside them (which the residual reads) into scratch.
#[inline(always)]
fn run_band(inp: &Inputs<'_>, job: Job<'_>) {
    let (g, params) = (inp.g, inp.params);
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let span = job.rows.len() + 2 * HALO;
    let (s1, rest) = job.scratch.split_at_mut(span * nx);
    let (s2, rest) = rest.split_at_mut(span * nx);
    let (bb, rest) = rest.split_at_mut(span * nx);
    let (r0, r1) = rest[..2 * nx].split_at_mut(nx);
    // Rows are numbered from the band's first minus HALO, unwrapped: row u of the band
    // is level row u mod ny on a periodic axis, and does not exist outside 0..ny past a wall.
    let (start, end) = (job.rows.start as isize, job.rows.end as isize);
    let first = start - HALO as isize;
    let exists = |u: isize| g.py || (0..ny as isize).contains(&u);
    let level = |u: isize| u.rem_euclid(ny as isize) as usize;
    let at = |u: isize| (u - first) as usize * nx..(u - first + 1) as usize * nx;
    let lv = |u: isize| level(u) * nx..(level(u) + 1) * nx;
    let rows_beside = |m: usize| (start - m as isize..end + m as isize).filter(|&u| exists(u));
    let own = |u: isize| (u - start) as usize * nx..(u - start + 1) as usize * nx;
    let is_own = |u: isize| (start..end).contains(&u);
    // The iterate with the correction into s2; the right-hand side, where computed here, into
    // the band's rows of b and into bb beside them.
    for u in rows_beside(HALO) {
        if let (Some(p), Some(cp)) = (inp.p, inp.coarse) {
            let row = &mut s2[at(u)];
            row.copy_from_slice(&p[lv(u)]);
            mg_prolong::add_row(g, params, cp, level(u), row);
        }
        if let Rhs::Pressure { hi, lo, div, scale } = inp.b {
            let out = if is_own(u) { &mut job.b[own(u)] } else { &mut bb[at(u)] };
            mg_load::residual_b_row(g, scale, hi, lo, div, level(u), out);
        }
    }
    let (job_b, bb): (&[f32], &[f32]) = (job.b, bb);
    let b_row = |u: isize| -> &[f32] {
        match inp.b {
            Rhs::Level(b) => &b[lv(u)],
            Rhs::Pressure { .. } if is_own(u) => &job_b[own(u)],
            Rhs::Pressure { .. } => &bb[at(u)],
        }
    };
    let [p1, p2, p3, p4] = &inp.passes;
    // `pass_row` is called directly, not through a closure shared by the four passes: LLVM
    // outlined that closure, compiled without the row's target features (doc/ARCHITECTURE.md),
    // and the passes ran as SSE2 code.
    // Pass 1: the iterate → s1.
    r0.fill(0.0);
    for u in rows_beside(HALO - 1) {
        let rows = match (inp.p, inp.coarse) {
            (None, _) => rows_around(u, exists, |_| &*r0),
            (Some(_), Some(_)) => rows_around(u, exists, |u| &s2[at(u)]),
            (Some(p), None) => rows_around(u, exists, |u| &p[lv(u)]),
        };
        mg_smooth::pass_row(g.px, p1.colour, p1.omega, level(u), rows, b_row(u), &mut s1[at(u)]);
    }
    // Pass 2: s1 → s2; pass 3: s2 → s1.
    for u in rows_beside(HALO - 2) {
        let rows = rows_around(u, exists, |u| &s1[at(u)]);
        mg_smooth::pass_row(g.px, p2.colour, p2.omega, level(u), rows, b_row(u), &mut s2[at(u)]);
    }
    for u in rows_beside(HALO - 3) {
        let rows = rows_around(u, exists, |u| &s2[at(u)]);
        mg_smooth::pass_row(g.px, p3.colour, p3.omega, level(u), rows, b_row(u), &mut s1[at(u)]);
    }
    // Pass 4: s1 → the band's rows of tmp, and s2 beside them.
    for u in rows_beside(HALO - 4) {
        let out = if is_own(u) { &mut job.tmp[own(u)] } else { &mut s2[at(u)] };
        let rows = rows_around(u, exists, |u| &s1[at(u)]);
        mg_smooth::pass_row(g.px, p4.colour, p4.omega, level(u), rows, b_row(u), out);
    }
    let tmp: &[f32] = job.tmp;
    let s2: &[f32] = s2;
    let result = |u: isize| if is_own(u) { &tmp[own(u)] } else { &s2[at(u)] };
    if !job.hi.is_empty() {
        for u in start..end {
            df_accumulate(&mut job.hi[own(u)], &mut job.lo[own(u)], result(u));
        }
    }
    if inp.restrict {
        let cnx = params.cnx as usize;
        let first_coarse = job.rows.start / 2;
        for (n, (cb, cp)) in job.cb.chunks_exact_mut(cnx).zip(job.cp.chunks_exact_mut(cnx)).enumerate() {
            let j = 2 * (first_coarse + n);
            let u = j as isize;
            mg_restrict::residual_row(g.px, rows_around(u, exists, result), b_row(u), r0);
            if j + 1 < ny {
                mg_restrict::residual_row(g.px, rows_around(u + 1, exists, result), b_row(u + 1), r1);
                mg_restrict::sum_children(r0, Some(r1), cb);
            } else {
                mg_restrict::sum_children(r0, None, cb);
            }
            cp.fill(0.0);
        }
    }
}

/// Row `u` from `get` with the rows below and above it, where they `exist`.
#[inline(always)]
fn rows_around<'a>(u: isize, exists: impl Fn(isize) -> bool, get: impl Fn(isize) -> &'a [f32]) -> Rows<'a> {
    Rows { down: exists(u - 1).then(|| get(u - 1)), row: get(u), up: exists(u + 1).then(|| get(u + 1)) }
}

/// Whether the correction (when asked for) is added before the passes.
fn prolongs(params: &MgParams) -> bool {
    params.cnx > 0 && params.colour & SMOOTH2_RESTRICT == 0
}

/// The faces with obstacles: the grid's (`u_faces`, `v_faces`) and the levels' (`mg_faces`).
pub struct Solids<'a> {
    /// The grid's faces, for level 0's right-hand side from the pressure.
    pub grid: (&'a [f32], &'a [f32]),
    /// Every level's face weights.
    pub levels: &'a [f32],
}

/// The call through the whole level, for any layout: the right-hand side, the four passes
/// ping-pong through the packed buffer (`p` → `tmp` → `p` …, after the correction into `p`),
/// the result moved to `tmp` and `p` restored, then the restriction and the sum. With
/// `solids`, through the weighted kernels (the bands do not take that path: it runs only with
/// obstacles, where the weighted passes are plain per-cell code anyway).
fn whole_level(g: &G, params: &MgParams, mg: &mut [f32], pressure: Option<Pressure<'_>>, solids: Option<Solids<'_>>) {
    let cells = (params.nx * params.ny) as usize;
    let (p, tmp) = (params.p as usize, params.tmp as usize);
    if params.colour & SMOOTH2_LOAD_RESIDUAL != 0
        && let Some(pr) = &pressure
    {
        let scale = -g.h * g.h / pr.dt;
        let b = &mut mg[params.b as usize..params.b as usize + cells];
        match &solids {
            Some(s) => solid::mg_load_residual(g, scale, (pr.hi, pr.lo, pr.div), s.grid, b),
            None => for_each_row(
                b,
                g.nx,
                #[inline(always)]
                |j, row| {
                    mg_load::residual_b_row(g, scale, pr.hi, pr.lo, pr.div, j, row);
                },
            ),
        }
    }
    let before = mg[p..p + cells].to_vec();
    if prolongs(params) {
        mg_prolong::run(g, params, mg);
    }
    for pass in smooth2_passes(params) {
        match &solids {
            Some(s) => solid::mg_smooth(g, &pass, mg, s.levels),
            None => mg_smooth::run(g, &pass, mg),
        }
    }
    mg.copy_within(p..p + cells, tmp);
    mg[p..p + cells].copy_from_slice(&before);
    if params.colour & SMOOTH2_RESTRICT != 0 {
        let fine = MgParams { p: params.tmp, ..*params };
        match &solids {
            Some(s) => solid::mg_restrict(g, &fine, mg, s.levels),
            None => mg_restrict::run(g, &fine, mg),
        }
    }
    if params.colour & SMOOTH2_ACCUMULATE != 0
        && let Some(pr) = pressure
    {
        df_accumulate(pr.hi, pr.lo, &mg[tmp..tmp + cells]);
    }
}

/// What is left readable of a buffer with ranges carved out of it.
struct Rest<'a> {
    /// The pieces between the carved ranges, each with its start in the buffer.
    pieces: [(usize, &'a [f32]); 5],
}

impl<'a> Rest<'a> {
    /// The values in `range` as one slice, when it lies within one piece.
    fn slice(&self, range: Range<usize>) -> Option<&'a [f32]> {
        self.pieces.iter().find_map(|&(start, piece)| {
            (range.start >= start && range.end <= start + piece.len())
                .then(|| &piece[range.start - start..range.end - start])
        })
    }
}

/// `buf` with the four ranges `cut` (empty ones allowed) taken out as mutable slices, in the
/// order given, and the rest readable; `None` when two non-empty ranges overlap or one runs
/// past the end.
fn carve(buf: &mut [f32], cut: [Range<usize>; 4]) -> Option<([&mut [f32]; 4], Rest<'_>)> {
    let mut order = [0, 1, 2, 3];
    order.sort_by_key(|&k| (cut[k].start, cut[k].end));
    let mut end = 0;
    for &k in &order {
        if !cut[k].is_empty() && (cut[k].start < end || cut[k].end > buf.len()) {
            return None;
        }
        end = end.max(cut[k].end);
    }
    let mut out: [&mut [f32]; 4] = Default::default();
    let mut pieces: [(usize, &[f32]); 5] = [(0, &[]); 5];
    let (mut rest, mut offset) = (buf, 0);
    for (n, &k) in order.iter().enumerate() {
        if cut[k].is_empty() {
            continue;
        }
        let (before, tail) = std::mem::take(&mut rest).split_at_mut(cut[k].start - offset);
        let (mine, tail) = tail.split_at_mut(cut[k].len());
        pieces[n] = (offset, before);
        out[k] = mine;
        offset = cut[k].end;
        rest = tail;
    }
    pieces[4] = (offset, rest);
    Some((out, Rest { pieces }))
}

/// The table's entry: a dispatch of `mg_smooth2` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    let mg = s.w("mg");
    let pressure = Pressure { hi: s.w("pressure"), lo: s.w("pressure_lo"), div: s.r("divergence"), dt: c.dt };
    run(c.g, &p, mg, Some(pressure), c.scratch);
}

/// The table's entry: a dispatch of `mg_smooth2_solid` (with obstacles) on the CPU.
pub(crate) fn dispatch_solid(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    let mg = s.w("mg");
    let pressure = Pressure { hi: s.w("pressure"), lo: s.w("pressure_lo"), div: s.r("divergence"), dt: c.dt };
    let solids = Solids { grid: (s.r("u_faces"), s.r("v_faces")), levels: s.r("mg_faces") };
    whole_level(c.g, &p, mg, Some(pressure), Some(solids));
}

#[cfg(test)]
mod tests {
    use swirly_core::grid::pressure::multigrid::{Step, buffer_len, levels, v_cycle};
    use swirly_core::grid::{Boundary, Grid};

    use super::super::mg_coarse;
    use super::*;

    fn run_steps(g: &G, steps: &[Step], mg: &mut [f32]) {
        for step in steps {
            match *step {
                Step::Smooth(p) => mg_smooth::run(g, &p, mg),
                Step::Smooth2(p) => run(g, &p, mg, None, &mut Vec::new()),
                Step::Restrict(p) => mg_restrict::run(g, &p, mg),
                Step::Prolong(p) => mg_prolong::run(g, &p, mg),
                Step::Coarse(p) => mg_coarse::run(g, &p, mg, &[]),
            }
        }
    }

    /// Random values in [−1, 1).
    fn random(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = swirly_core::scene::SplitMix64(seed);
        (0..n).map(|_| 2.0 * rng.next_f32() - 1.0).collect()
    }

    fn same(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    /// Bands of any height leave the buffer and the pressure bit for bit as the passes through
    /// the whole level do: wall, periodic and mixed levels, odd sizes, levels lower than a
    /// band's halo; with and without the correction, from zero, both first colours, with the
    /// restriction, and with each pressure bit.
    #[test]
    fn bands_compute_the_whole_level_passes() {
        for (nx, ny, bx, by) in [
            (37u32, 22u32, Boundary::Wall, Boundary::Wall),
            (37, 23, Boundary::Periodic, Boundary::Periodic),
            (30, 41, Boundary::Wall, Boundary::Periodic),
            (29, 19, Boundary::Periodic, Boundary::Wall),
            (6, 7, Boundary::Wall, Boundary::Periodic),
            (7, 6, Boundary::Periodic, Boundary::Wall),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let levels = levels(nx, ny);
            let start = random(buffer_len(nx, ny), 7);
            let cells = (nx * ny) as usize;
            let (hi0, lo0, div) =
                (random(cells, 8), random(cells, 9).iter().map(|x| x * 1e-8).collect::<Vec<_>>(), random(cells, 10));
            let transfer = levels[0].transfer(&levels[1]);
            let cases = [
                (0, 0, transfer.cnx),
                (1, 0, transfer.cnx),
                (1, 1, transfer.cnx),
                (SMOOTH2_RESTRICT, 0, transfer.cnx),
                (SMOOTH2_RESTRICT | 1, 1, transfer.cnx),
                (0, 0, 0),
                (1, 1, 0),
                (SMOOTH2_RESTRICT | SMOOTH2_LOAD_RESIDUAL, 0, transfer.cnx),
                (SMOOTH2_LOAD_RESIDUAL | 1, 0, 0),
                (SMOOTH2_ACCUMULATE, 0, transfer.cnx),
                (SMOOTH2_ACCUMULATE | 1, 0, 0),
            ];
            for (colour, zero_initial, cnx) in cases {
                let params = MgParams { colour, zero_initial, omega: 1.15, cnx, ..transfer };
                let mut want = start.clone();
                let (mut want_hi, mut want_lo) = (hi0.clone(), lo0.clone());
                let pr = Pressure { hi: &mut want_hi, lo: &mut want_lo, div: &div, dt: 0.02 };
                whole_level(&g, &params, &mut want, Some(pr), None);
                for band in [2, 4, 6, 10, 32, 64] {
                    let mut got = start.clone();
                    let (mut hi, mut lo) = (hi0.clone(), lo0.clone());
                    let mut pr = Pressure { hi: &mut hi, lo: &mut lo, div: &div, dt: 0.02 };
                    assert!(bands(&g, &params, &mut got, Some(&mut pr), &mut Vec::new(), band));
                    let what =
                        format!("{nx}x{ny} {bx:?}/{by:?} colour {colour} zero {zero_initial} cnx {cnx} band {band}");
                    assert!(same(&got, &want), "buffer: {what}");
                    assert!(same(&hi, &want_hi) && same(&lo, &want_lo), "pressure: {what}");
                }
            }
        }
    }

    /// Calls the bands cannot take: both pressure bits at once go through the whole level;
    /// written arrays that overlap are refused before anything is written.
    #[test]
    fn other_calls_take_the_whole_level() {
        let grid = Grid::new(20, 18, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let g = G::new(&grid.uniform());
        let levels = levels(20, 18);
        let start = random(buffer_len(20, 18), 3);
        let cells = 20 * 18;
        let (hi0, div) = (random(cells, 4), random(cells, 5));
        let base = MgParams { omega: 1.15, ..levels[0].transfer(&levels[1]) };
        let both = MgParams { colour: SMOOTH2_LOAD_RESIDUAL | SMOOTH2_ACCUMULATE, ..base };
        let (mut hi, mut lo) = (hi0.clone(), vec![0.0; cells]);
        let mut mg = start.clone();
        let mut pr = Pressure { hi: &mut hi, lo: &mut lo, div: &div, dt: 0.02 };
        assert!(!bands(&g, &both, &mut mg, Some(&mut pr), &mut Vec::new(), 4));
        assert!(same(&mg, &start) && same(&hi, &hi0), "nothing written");
        let mut via_run = start.clone();
        let pr = Pressure { hi: &mut hi, lo: &mut lo, div: &div, dt: 0.02 };
        run(&g, &both, &mut via_run, Some(pr), &mut Vec::new());
        let (mut want_hi, mut want_lo) = (hi0.clone(), vec![0.0; cells]);
        let mut whole = start.clone();
        let pr = Pressure { hi: &mut want_hi, lo: &mut want_lo, div: &div, dt: 0.02 };
        whole_level(&g, &both, &mut whole, Some(pr), None);
        assert!(same(&via_run, &whole) && same(&hi, &want_hi) && same(&lo, &want_lo));
        // The coarse b written over the end of tmp.
        let overlapping = MgParams { colour: SMOOTH2_RESTRICT, cb: base.tmp + 5, ..base };
        let mut mg = start.clone();
        assert!(!bands(&g, &overlapping, &mut mg, None, &mut Vec::new(), 4));
        assert!(same(&mg, &start), "nothing written");
    }

    /// The scratch the backend allocates is enough for every level, so the kernel never grows it.
    #[test]
    fn scratch_len_covers_every_level() {
        for (nx, ny, threads) in [(192u32, 256u32, 2usize), (512, 512, 16), (37, 700, 3), (1000, 40, 1)] {
            let grid = Grid::new(nx, ny, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
            let g = G::new(&grid.uniform());
            let levels = levels(nx, ny);
            let len = scratch_len(nx as usize, ny as usize, threads);
            let mut mg = random(buffer_len(nx, ny), 1);
            for pair in levels.windows(2) {
                let params = MgParams { omega: 1.15, colour: SMOOTH2_RESTRICT, ..pair[0].transfer(&pair[1]) };
                let band = band_rows(params.nx as usize, params.ny as usize, threads);
                let mut scratch = vec![0.0; len];
                assert!(bands(&g, &params, &mut mg, None, &mut scratch, band));
                assert_eq!(scratch.len(), len, "{nx}x{ny} level {}x{}", params.nx, params.ny);
            }
        }
    }

    /// Round obstacles too: the pairs through the weighted passes leave every level's `p` bit
    /// for bit as the plain weighted cycle does, on faces of random open fractions (some
    /// closed, some open), walls, periodic and open sides.
    #[test]
    fn the_dispatched_cycle_computes_the_plain_one_round_solids() {
        use swirly_core::grid::Side;
        for (nx, ny, bx, by, open) in [
            (150, 90, Boundary::Wall, Boundary::Wall, false),
            (151, 77, Boundary::Periodic, Boundary::Wall, false),
            (97, 130, Boundary::Wall, Boundary::Wall, true),
        ] {
            let grid = Grid { solids: true, ..Grid::new(nx, ny, 0.1, bx, by).expect("grid") };
            let grid = if open {
                let wall = Side::Wall { no_slip: false, speed: 0.0, temperature: None };
                grid.with_sides([wall, Side::Open, wall, Side::Open]).expect("sides")
            } else {
                grid
            };
            let g = G::new(&grid.uniform());
            let levels = levels(nx, ny);
            let fraction = |x: f32| (1.5 * x.abs() - 0.25).clamp(0.0, 1.0);
            let uf: Vec<f32> = random(2 * ((nx + 1) * ny) as usize, 11).into_iter().map(fraction).collect();
            let vf: Vec<f32> = random(2 * (nx * (ny + 1)) as usize, 12).into_iter().map(fraction).collect();
            let mut faces = vec![0.0; 2 * buffer_len(nx, ny) / 3 + 2];
            solid::mg_faces(&g, &MgParams { colour: 0, ..levels[0].params() }, (&uf, &vf), &mut faces);
            for w in levels.windows(2) {
                solid::mg_faces(&g, &MgParams { colour: 1, ..w[0].transfer(&w[1]) }, (&uf, &vf), &mut faces);
            }
            let start = random(buffer_len(nx, ny), 99);
            for (symmetric, from_zero) in [(false, false), (true, true), (false, true)] {
                let mut plain = start.clone();
                for step in v_cycle(&levels, 1.15, symmetric, from_zero, false) {
                    match step {
                        Step::Smooth(p) => solid::mg_smooth(&g, &p, &mut plain, &faces),
                        Step::Restrict(p) => solid::mg_restrict(&g, &p, &mut plain, &faces),
                        Step::Prolong(p) => mg_prolong::run(&g, &p, &mut plain),
                        _ => unreachable!("the plain cycle has no pairs"),
                    }
                }
                let mut dispatched = start.clone();
                for step in v_cycle(&levels, 1.15, symmetric, from_zero, true) {
                    match step {
                        Step::Smooth2(p) => {
                            let solids = Solids { grid: (&uf, &vf), levels: &faces };
                            whole_level(&g, &p, &mut dispatched, None, Some(solids));
                        }
                        Step::Coarse(p) => mg_coarse::run(&g, &p, &mut dispatched, &faces),
                        _ => unreachable!("the dispatched cycle has pairs and a coarse step"),
                    }
                }
                for lv in &levels {
                    let range = lv.p as usize..(lv.p + lv.cells()) as usize;
                    assert!(
                        same(&plain[range.clone()], &dispatched[range]),
                        "{nx}x{ny} {bx:?}/{by:?} open {open}, level {}x{}, symmetric {symmetric}, from zero {from_zero}",
                        lv.nx,
                        lv.ny
                    );
                }
            }
        }
    }

    /// The V-cycle as dispatched (smoothing pairs, the iterate in `tmp` between them, the
    /// coarse part in one step) leaves every level's `p` bit for bit as the plain cycle does.
    #[test]
    fn the_dispatched_cycle_computes_the_plain_one() {
        for (nx, ny, bx, by) in [
            (150, 90, Boundary::Wall, Boundary::Wall),
            (151, 77, Boundary::Periodic, Boundary::Wall),
            (97, 203, Boundary::Periodic, Boundary::Periodic),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let levels = levels(nx, ny);
            let mut state = 99u64;
            let mut rnd = || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            };
            let start: Vec<f32> = (0..buffer_len(nx, ny)).map(|_| rnd()).collect();
            for (symmetric, from_zero) in [(false, false), (true, true), (false, true)] {
                let mut plain = start.clone();
                run_steps(&g, &v_cycle(&levels, 1.15, symmetric, from_zero, false), &mut plain);
                let mut dispatched = start.clone();
                run_steps(&g, &v_cycle(&levels, 1.15, symmetric, from_zero, true), &mut dispatched);
                for lv in &levels {
                    let range = lv.p as usize..(lv.p + lv.cells()) as usize;
                    let same =
                        plain[range.clone()].iter().zip(&dispatched[range]).all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(
                        same,
                        "{nx}x{ny} {bx:?}/{by:?}, level {}x{}, symmetric {symmetric}, from zero {from_zero}",
                        lv.nx, lv.ny
                    );
                }
            }
        }
    }
}
