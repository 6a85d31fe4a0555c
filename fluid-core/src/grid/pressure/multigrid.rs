//! The level hierarchy of the geometric multigrid solver and its packed storage.
//!
//! Level 0 is the simulation grid; each coarser level halves both sides (rounding up, so any
//! `nx × ny` works: the last coarse cell of an odd side covers one fine cell) while the shorter
//! side stays at least [`MIN_SIDE`]. Every level solves the same unscaled equation as the
//! Jacobi kernels, `(A p)_c = n_c p_c − Σ p_nbr = b_c` (walls Neumann, periodic axes wrap), with
//! `b_0 = −h² ∇·u / dt` and, on a coarse level, `b` = the sum of the children's residuals (the
//! `h²` of the coarse cell is four fine ones). All levels live in one buffer, the solver's
//! workspace [`crate::grid::FieldId::Multigrid`]: per level `b`, `p`, `tmp` (the ping-pong partner of
//! `p`), `cells` values each, levels in order.

use crate::grid::FieldId::{Divergence, MgFaces, Multigrid, Pressure, PressureLo, UFaces, VFaces};
use crate::grid::builder::Builder;
use crate::grid::kernels::{
    MG_COARSE, MG_LOAD, MG_PROLONG, MG_RESTRICT, MG_SMOOTH, MG_SMOOTH2, MG_SMOOTH2_SOLID, MG_STORE, MG_WEIGHTS,
};
use crate::grid::uniforms::MgParams;

pub(crate) use super::layout::coarse_iterations;
pub use super::layout::{
    COARSE_FLOATS, COARSE_THREADS, Level, MAX_COARSE_ITERATIONS, MIN_SIDE, SMOOTH2_TILE, buffer_len, fits_coarse,
    levels, levels_from,
};

/// `mg_load` mode (in [`MgParams::colour`]): `b = −h² ∇·u / dt` and `p` = the pressure, or zero
/// with `zero_initial` (single precision: the cycles then work on the pressure itself).
pub const LOAD_COPY: u32 = 0;
/// `mg_load` mode: `b` = the residual `−h² ∇·u / dt − A (pressure + pressure_lo)` of the
/// double-float pressure, with `A` applied in difference form (`Σ (p_nbr − p)`, the high and low
/// parts differenced separately, so no rounding of the pressure's magnitude enters); with
/// `zero_initial` the pressure is taken as zero, and set to zero. `p` is left alone (the cycle
/// that follows starts from zero and solves for the correction).
pub const LOAD_RESIDUAL: u32 = 1;
/// `mg_store` mode: `pressure = p`, `pressure_lo = 0`.
pub const STORE_COPY: u32 = 0;
/// `mg_store` mode: `pressure = p`, `pressure_lo` = the `cells` values after `p` (MGPCG's
/// double-float `x`).
pub const STORE_PAIR: u32 = 1;
/// `mg_store` mode: `(pressure, pressure_lo) += p` in double-float arithmetic (a cold start has
/// had `mg_load` zero the pressure first).
pub const STORE_ADD: u32 = 2;

/// One step of a V-cycle, with its kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// An `mg_smooth` colour pass.
    Smooth(MgParams),
    /// `mg_restrict` from a level to the next coarser one.
    Restrict(MgParams),
    /// `mg_prolong` from the next coarser level into a level.
    Prolong(MgParams),
    /// `mg_coarse`: the rest of the cycle, from this level down and back up, in one dispatch
    /// (`colour`: 1 for the symmetric cycle; `zero_initial`: the level starts from zero).
    Coarse(MgParams),
    /// `mg_smooth2`: two red-black iterations in one dispatch, from the iterate at `p` into
    /// `tmp`, leaving `p` as it was. `colour` bit 0: the first pass's colour; `zero_initial`:
    /// the iterate is taken as zero. With the [`SMOOTH2_RESTRICT`] bit of `colour`, the
    /// result's residual is then restricted into the next coarser level (`cnx × cny` at `cb`,
    /// `cp`), as `mg_restrict` does; without it and with `cnx` > 0, that level's correction at
    /// `cp` is first added to the iterate, as `mg_prolong` does. Its four passes are
    /// [`smooth2_passes`].
    Smooth2(MgParams),
}

/// The bit of `colour` that makes a [`Step::Smooth2`] restrict its result's residual.
pub const SMOOTH2_RESTRICT: u32 = 2;

/// The bit of `colour` that makes a post-smoothing [`Step::Smooth2`] on level 0 also add its
/// result to the double-float pressure (`pressure + pressure_lo`), as `mg_store` in mode
/// [`STORE_ADD`] would in a pass of its own: the last step of a double-float V-cycle.
pub const SMOOTH2_ACCUMULATE: u32 = 4;

/// The bit of `colour` that makes a pre-smoothing [`Step::Smooth2`] on level 0 first compute the
/// level's `b` as the residual of the double-float pressure, as `mg_load` in mode
/// [`LOAD_RESIDUAL`] would in a pass of its own (and write it, for the post-smoothing): the first
/// step of a warm double-float V-cycle.
pub const SMOOTH2_LOAD_RESIDUAL: u32 = 8;

/// The four `mg_smooth` passes that a [`Step::Smooth2`] with parameters `p` stands for, taken
/// ping-pong between `p.p` and `p.tmp` (they end in `p.p`; the step moves that to `p.tmp`
/// and leaves `p.p` as it was), after the correction when `p.cnx` > 0.
pub fn smooth2_passes(p: &MgParams) -> [MgParams; 4] {
    let first = p.colour & 1;
    let (a, b) = (p.p, p.tmp);
    [(a, b, first, p.zero_initial), (b, a, 1 - first, 0), (a, b, first, 0), (b, a, 1 - first, 0)]
        .map(|(src, dst, colour, zero_initial)| MgParams { p: src, tmp: dst, colour, zero_initial, ..*p })
}

/// The steps of a V-cycle over `levels` (finest first), down from the first. `symmetric`:
/// post-smoothing in the reverse colour order (black, then red), and the coarsest solve
/// followed by its reverse, so that the cycle is a symmetric operator (the MGPCG
/// preconditioner); `from_zero`: the first level starts from zero. With `coarse`, the cycle
/// from the first level that [`fits_coarse`] on is one [`Step::Coarse`].
///
/// The one description of the cycle: the schedule emits it `dispatched` (the coarse part as
/// one [`Step::Coarse`]; each level's two pre-smoothing iterations and the restriction as one
/// [`Step::Smooth2`], the prolongation and two post-smoothing iterations as another, with the
/// level's iterate in `tmp` between them), and the CPU's
/// `mg_coarse` runs it plain (every pass its own step) to define what the shader must compute.
/// Both forms leave every level's `p` with the same values.
pub fn v_cycle(levels: &[Level], omega: f32, symmetric: bool, from_zero: bool, dispatched: bool) -> Vec<Step> {
    let mut out = Vec::new();
    push_cycle(&mut out, levels, omega, symmetric, from_zero, dispatched);
    out
}

fn push_cycle(out: &mut Vec<Step>, levels: &[Level], omega: f32, symmetric: bool, from_zero: bool, dispatched: bool) {
    let lv = levels[0];
    if dispatched && levels.len() > 1 && !fits_coarse(&lv) {
        // Pre-smoothing p -> tmp and the restriction of its residual in one step; the
        // prolongation into the iterate in tmp and post-smoothing tmp -> p in another.
        let transfer = MgParams { p: lv.tmp, tmp: lv.p, ..lv.transfer(&levels[1]) };
        let zero_initial = u32::from(from_zero);
        let pre = MgParams { p: lv.p, tmp: lv.tmp, colour: SMOOTH2_RESTRICT, zero_initial, omega, ..transfer };
        out.push(Step::Smooth2(pre));
        push_cycle(out, &levels[1..], omega, symmetric, false, dispatched);
        // The prolongation folded into the post-smoothing pair.
        let colour = u32::from(symmetric);
        out.push(Step::Smooth2(MgParams { p: lv.tmp, tmp: lv.p, colour, zero_initial: 0, omega, ..transfer }));
        return;
    }
    if dispatched && fits_coarse(&lv) {
        let p = MgParams { colour: u32::from(symmetric), zero_initial: u32::from(from_zero), omega, ..lv.params() };
        out.push(Step::Coarse(p));
        return;
    }
    if levels.len() == 1 {
        let iterations = coarse_iterations(&lv);
        push_smooth(out, &lv, iterations, omega, false, from_zero);
        if symmetric {
            push_smooth(out, &lv, iterations, omega, true, false);
        }
        return;
    }
    let transfer = lv.transfer(&levels[1]);
    push_smooth(out, &lv, 2, omega, false, from_zero);
    out.push(Step::Restrict(transfer));
    push_cycle(out, &levels[1..], omega, symmetric, false, dispatched);
    out.push(Step::Prolong(transfer));
    push_smooth(out, &lv, 2, omega, symmetric, false);
}

/// `iterations` red-black iterations on one level (black first when `reversed`); the iterate
/// ends where it started (ping-pong `p` → `tmp` → `p`). `from_zero`: the first pass takes the
/// iterate as zero.
fn push_smooth(out: &mut Vec<Step>, lv: &Level, iterations: u32, omega: f32, reversed: bool, from_zero: bool) {
    let order = if reversed { [1, 0] } else { [0, 1] };
    for k in 0..iterations {
        for (pass, (src, dst)) in [(lv.p, lv.tmp), (lv.tmp, lv.p)].into_iter().enumerate() {
            out.push(Step::Smooth(MgParams {
                p: src,
                tmp: dst,
                colour: order[pass],
                zero_initial: u32::from(from_zero && k == 0 && pass == 0),
                omega,
                ..lv.params()
            }));
        }
    }
}

/// `cycles` V-cycles. In double-float (`df`) each cycle solves for a correction from zero: its
/// first step computes level 0's `b` as the residual of the double-float pressure and its last
/// step adds the result to the pressure (on a cold start `mg_load` zeroes the pressure and
/// loads `b` first; when the whole cycle is one `mg_coarse`, `mg_load` and `mg_store` do both).
/// In single precision the cycles work on the pressure itself, loaded once and stored once.
pub(crate) fn push(b: &mut Builder, cycles: u32, omega: f32, cold: bool, df: bool) {
    let levels = levels(b.grid().nx, b.grid().ny);
    let top = levels[0];
    let base = top.params();
    let whole = [top.nx, top.ny];
    let (load_fields, store_fields) =
        ([Pressure, PressureLo, Divergence, Multigrid, UFaces, VFaces], [Multigrid, Pressure, PressureLo]);
    if df {
        for k in 0..cycles {
            let first_cold = cold && k == 0;
            // Warm: the residual is computed by the cycle's first step and the correction
            // added by its last. A cold start (which zeroes the pressure) and a cycle that is
            // one `mg_coarse` load and store in passes of their own.
            if !first_cold && push_vcycle_double_float(b, &levels, omega, false, false) {
                continue;
            }
            let load = MgParams { colour: LOAD_RESIDUAL, zero_initial: u32::from(first_cold), ..base };
            b.run_over(MG_LOAD, &load_fields, Some(&load), whole);
            if !push_vcycle_double_float(b, &levels, omega, false, true) {
                push_vcycle(b, &levels, omega, false, true);
                let store = MgParams { colour: STORE_ADD, ..base };
                b.run_over(MG_STORE, &store_fields, Some(&store), whole);
            }
        }
        return;
    }
    let load = MgParams { colour: LOAD_COPY, zero_initial: u32::from(cold), ..base };
    b.run_over(MG_LOAD, &load_fields, Some(&load), whole);
    for _ in 0..cycles {
        push_vcycle(b, &levels, omega, false, false);
    }
    let store = MgParams { colour: STORE_COPY, ..base };
    b.run_over(MG_STORE, &store_fields, Some(&store), whole);
}

/// One V-cycle over `levels` (see [`v_cycle`]). With obstacles every kernel of it weighs the
/// stencil by the levels' faces ([`push_faces`]); the smoothing pairs are `mg_smooth2_solid`.
pub(crate) fn push_vcycle(b: &mut Builder, levels: &[Level], omega: f32, symmetric: bool, from_zero: bool) {
    let mut steps = v_cycle(levels, omega, symmetric, from_zero, true);
    if b.grid().sides.contains(&crate::grid::Side::Open) {
        over_relax_coarsest(&mut steps, levels);
    }
    push_steps(b, steps);
}

/// The bit of a [`Step::Coarse`]'s `colour` that over-relaxes its coarsest level as
/// [`over_relax_coarsest`] does the plain cycle's (bit 0 is the symmetric cycle).
pub const COARSE_OVER_RELAX: u32 = 2;

/// With an open side the slowest error is a quarter wave along the box, pinned to zero at
/// that side only; the coarsest level's Gauss–Seidel crossing it takes ~n² iterations where a
/// closed box's takes ~n (its constant mode is no error). Successive over-relaxation at the
/// optimal ω = 2 / (1 + sin(π / 2n)) for that mode crosses it in ~n: without it a 4 × 1
/// channel's V-cycle cut the residual 0.9× instead of 0.1×.
/// A coarse step takes it as [`COARSE_OVER_RELAX`].
pub fn over_relax_coarsest(steps: &mut [Step], levels: &[Level]) {
    let Some(last) = levels.last() else { return };
    let omega = coarsest_omega(last);
    for step in steps {
        match step {
            Step::Smooth(p) if p.b == last.b => p.omega = omega,
            Step::Coarse(p) => p.colour |= COARSE_OVER_RELAX,
            _ => {}
        }
    }
}

/// The over-relaxation of the coarsest level with an open side (twin of `mg_coarse.wgsl`).
pub(crate) fn coarsest_omega(last: &Level) -> f32 {
    let n = last.nx.max(last.ny) as f32;
    2.0 / (1.0 + (std::f32::consts::PI / (2.0 * n)).sin())
}

/// With obstacles, every level's face weights: level 0's from the grid's faces (after the
/// step's rasterisation), each coarser level's the mean of the finer faces it covers.
pub(crate) fn push_faces(b: &mut Builder) {
    let levels = levels(b.grid().nx, b.grid().ny);
    let top = MgParams { colour: 0, ..levels[0].params() };
    b.run_over(MG_WEIGHTS, &[UFaces, VFaces, MgFaces], Some(&top), [top.nx, top.ny]);
    for w in levels.windows(2) {
        let p = MgParams { colour: 1, ..w[0].transfer(&w[1]) };
        b.run_over(MG_WEIGHTS, &[UFaces, VFaces, MgFaces], Some(&p), [p.cnx, p.cny]);
    }
}

/// [`push_vcycle`] of a double-float solve, when level 0 is not part of the coarse step (returns
/// `false` and emits nothing otherwise): level 0's first step (its pre-smoothing pair) computes
/// the level's `b` from the double-float pressure unless `loaded` ([`SMOOTH2_LOAD_RESIDUAL`]),
/// and its last step (the post-smoothing pair) adds the result to the pressure
/// ([`SMOOTH2_ACCUMULATE`]).
fn push_vcycle_double_float(b: &mut Builder, levels: &[Level], omega: f32, symmetric: bool, loaded: bool) -> bool {
    let mut steps = v_cycle(levels, omega, symmetric, true, true);
    let (Some(Step::Smooth2(_)), Some(Step::Smooth2(_))) = (steps.first(), steps.last()) else {
        return false;
    };
    if let Some(Step::Smooth2(p)) = steps.last_mut() {
        p.colour |= SMOOTH2_ACCUMULATE;
    }
    if !loaded && let Some(Step::Smooth2(p)) = steps.first_mut() {
        p.colour |= SMOOTH2_LOAD_RESIDUAL;
    }
    push_steps(b, steps);
    true
}

/// The dispatches of V-cycle steps.
fn push_steps(b: &mut Builder, steps: Vec<Step>) {
    let smooth2 = if b.grid().solids { MG_SMOOTH2_SOLID } else { MG_SMOOTH2 };
    for step in steps {
        match step {
            Step::Smooth(p) => b.run_over(MG_SMOOTH, &[Multigrid, MgFaces], Some(&p), [p.nx, p.ny]),
            Step::Smooth2(p) => {
                let fields = [Multigrid, Pressure, PressureLo, Divergence, UFaces, VFaces, MgFaces];
                b.run_over(smooth2, &fields, Some(&p), [p.nx, p.ny]);
            }
            Step::Restrict(p) => b.run_over(MG_RESTRICT, &[Multigrid, MgFaces], Some(&p), [p.cnx, p.cny]),
            Step::Prolong(p) => b.run_over(MG_PROLONG, &[Multigrid], Some(&p), [p.nx, p.ny]),
            // One workgroup.
            Step::Coarse(p) => b.run_over(MG_COARSE, &[Multigrid, MgFaces], Some(&p), [COARSE_THREADS, 1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dispatched cycle: per level above the coarse part a pre-smoothing pair that then
    /// restricts (from zero on the first level when asked) and a post-smoothing pair that
    /// first adds the coarse correction (reversed when symmetric), and one coarse step for the
    /// rest of the hierarchy, which
    /// fits its workgroup memory. (That both forms leave the same values is tested in
    /// swirly-cpu, where the kernels are.)
    #[test]
    fn the_dispatched_cycle_pairs_the_smoothing_and_ends_in_one_coarse_step() {
        for (nx, ny) in [(40, 30), (150, 90), (300, 200), (64, 64), (65, 64), (33, 31), (20, 1000)] {
            let levels = levels(nx, ny);
            let above = levels.iter().take_while(|l| !fits_coarse(l)).count();
            for (symmetric, from_zero) in [(false, false), (true, false), (false, true), (true, true)] {
                let plain = v_cycle(&levels, 1.15, symmetric, from_zero, false);
                assert!(plain.iter().all(|s| matches!(s, Step::Smooth(_) | Step::Restrict(_) | Step::Prolong(_))));
                let steps = v_cycle(&levels, 1.15, symmetric, from_zero, true);
                assert_eq!(steps.len(), 2 * above + 1, "{nx}x{ny}");
                for (l, lv) in levels.iter().take(above).enumerate() {
                    let (pre, post) = (steps[l], steps[steps.len() - 1 - l]);
                    let zero = u32::from(from_zero && l == 0);
                    let c = levels[l + 1];
                    assert!(matches!(pre, Step::Smooth2(p)
                        if (p.p, p.tmp, p.colour, p.zero_initial, p.cnx, p.cny, p.cb, p.cp)
                            == (lv.p, lv.tmp, SMOOTH2_RESTRICT, zero, c.nx, c.ny, c.b, c.p)));
                    let colour = u32::from(symmetric);
                    assert!(matches!(post, Step::Smooth2(p)
                        if (p.p, p.tmp, p.colour, p.zero_initial, p.cnx, p.cny, p.cp) == (lv.tmp, lv.p, colour, 0, c.nx, c.ny, c.p)));
                }
                let Step::Coarse(p) = steps[above] else { panic!("{nx}x{ny}: no coarse step in the middle") };
                let tail = levels_from(p.nx, p.ny, p.b);
                assert_eq!(tail[..], levels[above..], "{nx}x{ny}");
                assert!(tail.iter().map(|l| 3 * l.cells()).sum::<u32>() <= COARSE_FLOATS);
                assert_eq!(
                    (p.omega, p.colour, p.zero_initial),
                    (1.15, u32::from(symmetric), u32::from(from_zero && above == 0))
                );
            }
        }
    }

    /// A pair of iterations is four passes alternating colour and buffer, from zero only first.
    #[test]
    fn a_smoothing_pair_is_four_passes() {
        let lv = levels(40, 30)[1];
        let p = MgParams { p: lv.p, tmp: lv.tmp, colour: 1, zero_initial: 1, omega: 1.2, ..lv.params() };
        let passes = smooth2_passes(&p);
        let got: Vec<_> = passes.iter().map(|q| (q.p, q.tmp, q.colour, q.zero_initial)).collect();
        assert_eq!(got, [(lv.p, lv.tmp, 1, 1), (lv.tmp, lv.p, 0, 0), (lv.p, lv.tmp, 1, 0), (lv.tmp, lv.p, 0, 0)]);
        assert!(passes.iter().all(|q| (q.nx, q.ny, q.b, q.omega) == (lv.nx, lv.ny, lv.b, 1.2)));
    }

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
        assert_eq!(u64::from(end), super::super::layout::levels_len(37, 23));
        let cg = super::super::mgpcg::cg_layout(37, 23);
        assert_eq!(cg.x, end);
        let mgpcg = u64::from(end) + 4 * 37 * 23 + u64::from(super::super::mgpcg::MAX_PARTIALS) + 16;
        let filter = u64::from(super::super::poisson_filter::TAPS_LEN) + 5 * 37 * 23;
        assert_eq!(buffer_len(37, 23) as u64, mgpcg.max(filter));
        assert_eq!(levels(4, 100).len(), 1, "a side of 4 cannot halve to 3 or more");
        assert_eq!(levels(1, 1), [Level { nx: 1, ny: 1, b: 0, p: 1, tmp: 2 }]);
    }
}
