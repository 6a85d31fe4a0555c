//! `mg_smooth2`: two red-black iterations on one multigrid level in one invocation, from the
//! iterate at `p` (plus the next coarser level's correction when `cnx` > 0, as `mg_prolong`
//! adds it) into `tmp`, `p` left as it was; with the `SMOOTH2_RESTRICT` bit of `colour`, then
//! the result's residual restricted into the coarser level instead, as `mg_restrict` does. On the GPU a workgroup loads its tile plus a
//! halo of four cells and runs the four passes in workgroup memory (the tile must not be
//! written back over `p`, which neighbouring workgroups are still reading); here the four
//! [`super::mg_smooth`] passes of [`fluid_core::multigrid::smooth2_passes`] run one after the
//! other, through `tmp` and two scratch arrays of the level's size, ending in `tmp`, which
//! defines the answer the shader must give.

use fluid_core::multigrid::{SMOOTH2_ACCUMULATE, SMOOTH2_LOAD_RESIDUAL, SMOOTH2_RESTRICT, smooth2_passes};
use fluid_core::uniforms::MgParams;

use super::common::{G, df_accumulate, for_each_row, split_around};
use super::{mg_load, mg_prolong, mg_restrict, mg_smooth};

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

/// The pair of iterations on the level `params` names. In a double-float solve, on level 0:
/// with the `SMOOTH2_LOAD_RESIDUAL` bit of `colour` the level's `b` is first computed as the
/// residual of the double-float pressure, as `mg_load` in mode `LOAD_RESIDUAL` does; with the
/// `SMOOTH2_ACCUMULATE` bit the result is also added to the pressure, as `mg_store` in mode
/// `STORE_ADD` does. `scratch` is grown to two of the level's arrays when shorter (keep it
/// between calls to avoid allocating).
pub fn run(g: &G, params: &MgParams, mg: &mut [f32], pressure: Option<Pressure<'_>>, scratch: &mut Vec<f32>) {
    let cells = (params.nx * params.ny) as usize;
    let tmp = params.tmp as usize;
    if params.colour & SMOOTH2_LOAD_RESIDUAL != 0
        && let Some(pr) = &pressure
    {
        let scale = -g.h * g.h / pr.dt;
        let b = params.b as usize;
        for_each_row(&mut mg[b..b + cells], g.nx, |j, row| {
            mg_load::residual_b_row(g, scale, pr.hi, pr.lo, pr.div, j, row);
        });
    }
    let restrict = params.colour & SMOOTH2_RESTRICT != 0;
    if !passes_in_slices(g, params, mg, scratch) {
        passes_in_buffer(g, params, mg);
    }
    if restrict {
        // The result's residual, into the coarser level.
        mg_restrict::run(g, &MgParams { p: params.tmp, ..*params }, mg);
    }
    if params.colour & SMOOTH2_ACCUMULATE != 0
        && let Some(pr) = pressure
    {
        df_accumulate(pr.hi, pr.lo, &mg[tmp..tmp + cells]);
    }
}

/// Whether the correction (when asked for) is added before the passes.
fn prolongs(params: &MgParams) -> bool {
    params.cnx > 0 && params.colour & SMOOTH2_RESTRICT == 0
}

/// The four passes over the level's arrays as slices, iterate → tmp → scratch → scratch → tmp,
/// the iterate at `p` only read; `false` (nothing done) when an array the passes read overlaps
/// `tmp`.
fn passes_in_slices(g: &G, params: &MgParams, mg: &mut [f32], scratch: &mut Vec<f32>) -> bool {
    let cells = (params.nx * params.ny) as usize;
    let passes = smooth2_passes(params);
    if scratch.len() < 2 * cells {
        scratch.resize(2 * cells, 0.0);
    }
    let (s, t) = scratch[..2 * cells].split_at_mut(cells);
    let (out, read) = split_around(mg, params.tmp as usize, cells);
    let coarse = read.slice(params.cp as usize, (params.cnx * params.cny) as usize);
    let (Some(b), Some(iterate)) = (read.slice(params.b as usize, cells), read.slice(params.p as usize, cells)) else {
        return false;
    };
    // A first pass from zero ignores the iterate, and so its correction.
    if passes[0].zero_initial != 0 {
        mg_smooth::pass(g, &passes[0], None, b, out);
    } else if prolongs(params) {
        let Some(cp) = coarse else {
            return false;
        };
        s.copy_from_slice(iterate);
        mg_prolong::add(g, params, cp, s);
        mg_smooth::pass(g, &passes[0], Some(s), b, out);
    } else {
        mg_smooth::pass(g, &passes[0], Some(iterate), b, out);
    }
    mg_smooth::pass(g, &passes[1], Some(out), b, s);
    mg_smooth::pass(g, &passes[2], Some(s), b, t);
    mg_smooth::pass(g, &passes[3], Some(t), b, out);
    true
}

/// The four passes ping-pong through the packed buffer (`p` → `tmp` → `p` …, after the
/// correction into `p`), the result moved to `tmp` and `p` restored: for any layout.
fn passes_in_buffer(g: &G, params: &MgParams, mg: &mut [f32]) {
    let cells = (params.nx * params.ny) as usize;
    let (p, tmp) = (params.p as usize, params.tmp as usize);
    let before = mg[p..p + cells].to_vec();
    if prolongs(params) {
        mg_prolong::run(g, params, mg);
    }
    for pass in smooth2_passes(params) {
        mg_smooth::run(g, &pass, mg);
    }
    mg.copy_within(p..p + cells, tmp);
    mg[p..p + cells].copy_from_slice(&before);
}

#[cfg(test)]
mod tests {
    use fluid_core::grid::{Boundary, Grid};
    use fluid_core::multigrid::{Step, buffer_len, levels, v_cycle};

    use super::super::mg_coarse;
    use super::*;

    fn run_steps(g: &G, steps: &[Step], mg: &mut [f32]) {
        for step in steps {
            match *step {
                Step::Smooth(p) => mg_smooth::run(g, &p, mg),
                Step::Smooth2(p) => run(g, &p, mg, None, &mut Vec::new()),
                Step::Restrict(p) => mg_restrict::run(g, &p, mg),
                Step::Prolong(p) => mg_prolong::run(g, &p, mg),
                Step::Coarse(p) => mg_coarse::run(g, &p, mg),
            }
        }
    }

    /// The passes over slices and the passes through the buffer leave the same buffer, bit for
    /// bit: with and without the correction, from zero, both first colours.
    #[test]
    fn slices_and_buffer_passes_agree() {
        let (nx, ny) = (37u32, 22u32);
        for b in [Boundary::Wall, Boundary::Periodic] {
            let grid = Grid::new(nx, ny, 0.1, b, b).expect("grid");
            let g = G::new(&grid.uniform());
            let levels = levels(nx, ny);
            let mut state = 7u64;
            let start: Vec<f32> = (0..buffer_len(nx, ny))
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
                })
                .collect();
            let transfer = levels[0].transfer(&levels[1]);
            for (colour, zero_initial, cnx) in
                [(0, 0, transfer.cnx), (1, 0, transfer.cnx), (SMOOTH2_RESTRICT, 1, transfer.cnx), (0, 0, 0), (1, 1, 0)]
            {
                let params = MgParams { colour, zero_initial, omega: 1.15, cnx, ..transfer };
                let mut sliced = start.clone();
                assert!(passes_in_slices(&g, &params, &mut sliced, &mut Vec::new()));
                let mut buffered = start.clone();
                passes_in_buffer(&g, &params, &mut buffered);
                let same = sliced.iter().zip(&buffered).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{b:?} colour {colour} zero {zero_initial} cnx {cnx}");
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
