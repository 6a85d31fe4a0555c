//! `hold_heat`: the obstacles of the table where they stand at the step's end (`time + dt`);
//! a cell whose centre lies inside one held at a temperature is marked in `held` (1, else 0)
//! and takes that temperature. `diffuse_temperature` keeps those cells and conducts through
//! their faces whole: the solid is a source or sink of heat, not an insulator.

use rayon::prelude::*;
use swirly_core::frame::solid::nearest;

use super::common::G;
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The held temperature at each cell centre (`None` outside every held solid), with the
/// table `rows` at time `t`.
pub fn held_cells(g: &G, rows: &[f32], t: f32) -> Vec<Option<f32>> {
    let Some((grid, obstacles)) = super::rasterise_solids::placed(g, rows, t) else {
        return vec![None; g.nx * g.ny];
    };
    (0..g.nx * g.ny)
        .into_par_iter()
        .map(|c| {
            let p = [((c % g.nx) as f32 + 0.5) * g.h, ((c / g.nx) as f32 + 0.5) * g.h];
            match nearest(&grid, &obstacles, p) {
                (d, Some(o)) if d < 0.0 => o.temperature,
                _ => None,
            }
        })
        .collect()
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, _d: &Dispatch, s: &mut Slots<'_>) {
    let cells = held_cells(c.g, s.r("obstacles"), c.time + c.dt);
    for (x, h) in s.w("temperature").iter_mut().zip(&cells) {
        if let Some(t) = h {
            *x = *t;
        }
    }
    for (m, h) in s.w("held").iter_mut().zip(&cells) {
        *m = if h.is_some() { 1.0 } else { 0.0 };
    }
}
