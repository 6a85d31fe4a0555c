//! `burn`: combustion at one cell. At or above the ignition temperature a fraction
//! `1 − exp(−rate·dt)` of the fuel burns; each unit burnt adds `heat` to the temperature,
//! `soot` to the density and, where bound, `expansion / dt` to the step's divergence source.

use swirly_core::grid::uniforms::BurnParams;

use rayon::prelude::*;

use super::common::{G, rows_mut};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The fields one invocation reads and writes (`density` and `expansion` empty where absent).
pub struct BurnFields<'a> {
    /// Fuel, burnt in place.
    pub fuel: &'a mut [f32],
    /// Temperature, heated in place.
    pub temperature: &'a mut [f32],
    /// Density, given the soot.
    pub density: &'a mut [f32],
    /// The divergence source, written.
    pub expansion: &'a mut [f32],
}

/// Fuel burnt at a cell holding fuel `f` at temperature `t`; `None` where nothing burns.
#[inline(always)]
pub fn burnt(p: &BurnParams, dt: f32, f: f32, t: f32) -> Option<f32> {
    (t >= p.ignition && f > 0.0).then(|| f * (1.0 - (-p.rate * dt).exp()))
}

/// Burn every cell of `g`.
pub fn run(g: &G, p: &BurnParams, dt: f32, f: BurnFields<'_>) {
    let BurnFields { fuel, temperature, density, expansion } = f;
    let (nx, ny) = (g.nx, g.ny);
    let soot = p.soot != 0.0;
    let expand = p.expansion != 0.0;
    rows_mut(fuel, nx, ny)
        .zip(rows_mut(temperature, nx, ny))
        .zip(rows_mut(density, nx, ny))
        .zip(rows_mut(expansion, nx, ny))
        .for_each(|(((f_row, t_row), d_row), e_row)| {
            for i in 0..f_row.len() {
                let (f, t) = (f_row[i], t_row[i]);
                let b = burnt(p, dt, f, t);
                if let Some(b) = b {
                    f_row[i] = f - b;
                    t_row[i] = t + p.heat * b;
                    if soot && !d_row.is_empty() {
                        d_row[i] += p.soot * b;
                    }
                }
                if expand && !e_row.is_empty() {
                    e_row[i] = p.expansion * b.unwrap_or(0.0) / dt;
                }
            }
        });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: BurnParams = d.params().unwrap_or_default();
    let f = BurnFields {
        fuel: s.w("fuel"),
        temperature: s.w("temperature"),
        density: s.w("density"),
        expansion: s.w("expansion"),
    };
    run(c.g, &p, c.dt, f);
}
