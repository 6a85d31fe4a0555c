//! `diffuse_temperature`: one invocation performs one Jacobi sweep of implicit heat diffusion
//! `(I − κ dt ∇²) T = T₀` at one cell: `T ← (T₀ + a Σ w T_nbr) / (1 + a Σ w)`,
//! `a = κ dt / h²`, each neighbour weighted by the open fraction of the face between (1
//! without obstacles): obstacles, walls and open sides insulate, unless a wall is held at a
//! temperature; past an inflow its ghost cell holds the temperature it carries; periodic axes
//! wrap. A `held` cell (inside an obstacle held at a temperature, [`super::hold_heat`]) keeps
//! its temperature, and its faces conduct whole: its neighbours see it as a cell at that
//! temperature.

use swirly_core::grid::uniforms::DiffuseParams;

use super::common::{BOTTOM, G, LEFT, RIGHT, TOP, for_each_row, next, prev};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Where heat flows between cells: `u_faces` and `v_faces` with obstacles, and `held` where
/// some are held at a temperature.
#[derive(Clone, Copy, Default)]
pub struct Conduction<'a> {
    /// Per x-face and y-face: open fraction, solid velocity.
    pub faces: Option<(&'a [f32], &'a [f32])>,
    /// Per cell: 1 inside a held solid, else 0.
    pub held: Option<&'a [f32]>,
}

/// One sweep at cell `(i, j)`.
#[inline(always)]
pub fn diffuse_temperature_cell(
    g: &G,
    a: f32,
    (t0, t): (&[f32], &[f32]),
    k: Conduction<'_>,
    i: usize,
    j: usize,
) -> f32 {
    let c = g.c(i, j);
    let held = |c: usize| k.held.is_some_and(|h| h[c] != 0.0);
    if held(c) {
        return t0[c];
    }
    let uw = |i: usize, j: usize| k.faces.map_or(1.0, |(uf, _)| uf[2 * g.u(i, j)]);
    let vw = |i: usize, j: usize| k.faces.map_or(1.0, |(_, vf)| vf[2 * g.v(i, j)]);
    // A face to a held cell conducts whole.
    let w = |w: f32, nbr: usize| if held(nbr) { 1.0 } else { w };
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    let mut add = |neighbour: Option<(f32, usize)>, side: usize| match neighbour {
        Some((w, k)) => {
            sum += w * t[k];
            n += w;
        }
        // Past an inflow its ghost cell at the temperature it carries; past a wall held at
        // T the ghost 2 T − T_c (the wall face at T); nothing past the others (no flux).
        None if g.side_inflow(side) => {
            sum += g.side_carry[side][1];
            n += 1.0;
        }
        None if g.side_carry[side][3] != 0.0 => {
            sum += 2.0 * g.side_carry[side][1];
            n += 2.0;
        }
        None => {}
    };
    add(prev(i, g.nx, g.px).map(|il| (w(uw(i, j), g.c(il, j)), g.c(il, j))), LEFT);
    add(next(i, g.nx, g.px).map(|ir| (w(uw(i + 1, j), g.c(ir, j)), g.c(ir, j))), RIGHT);
    add(prev(j, g.ny, g.py).map(|jd| (w(vw(i, j), g.c(i, jd)), g.c(i, jd))), BOTTOM);
    add(next(j, g.ny, g.py).map(|ju| (w(vw(i, j + 1), g.c(i, ju)), g.c(i, ju))), TOP);
    (t0[c] + a * sum) / (1.0 + a * n)
}

/// One sweep over every cell into `out`.
pub fn run(g: &G, p: &DiffuseParams, dt: f32, t0: &[f32], t: &[f32], k: Conduction<'_>, out: &mut [f32]) {
    let a = p.viscosity * dt * g.inv_h * g.inv_h;
    for_each_row(out, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = diffuse_temperature_cell(g, a, (t0, t), k, i, j);
        }
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: DiffuseParams = d.params().unwrap_or_default();
    let faces = c.g.solids.then(|| (s.r("u_faces"), s.r("v_faces")));
    let held = (p.held != 0).then(|| s.r("held"));
    run(c.g, &p, c.dt, s.r("t0"), s.r("t"), Conduction { faces, held }, s.w("t_out"));
}
