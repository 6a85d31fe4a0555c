//! `splat_cells`: one invocation adds every splat's amounts to one cell of a lattice `factor`
//! times finer than the velocity's (1: the velocity's cells), for the channels the dispatch
//! carries (two scalars, each a splat's density, temperature or fuel, and the dye), weighted
//! by the splat's falloff at the cell's centre (the exact falloff of [`splat_weight`], summed
//! in the splats' order as the shader does). With obstacles a finer lattice's cell is first
//! cleared where its velocity cell is wholly solid, and what a cell receives is scaled by its
//! velocity cell's open part. A cell that receives nothing is left alone (`-0.0` kept).

use swirly_core::frame::uniform::SplatGpu;
use swirly_core::grid::uniforms::{
    AMOUNT_DENSITY, AMOUNT_TEMPERATURE, CHANNEL_Q0, CHANNEL_Q1, CHANNEL_RGBA, SplatParams,
};
use swirly_core::splat::splat_weight;

use rayon::prelude::*;

use super::common::{G, rows_mut};
use super::solid;
use super::splat::{distance2, reaching_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The channels one invocation updates in place (an empty one is a channel not carried).
pub struct Cells<'a> {
    /// The first scalar.
    pub q0: &'a mut [f32],
    /// The second scalar.
    pub q1: &'a mut [f32],
    /// The RGBA channel, four values per cell.
    pub rgba: &'a mut [f32],
}

/// Splat `s`'s amount `which` ([`AMOUNT_DENSITY`] …).
#[inline(always)]
fn amount(s: &SplatGpu, which: u32) -> f32 {
    match which {
        AMOUNT_DENSITY => s.density,
        AMOUNT_TEMPERATURE => s.temperature,
        _ => s.fuel,
    }
}

/// What the splats add to lattice cell `(i, j)`: the two scalars' amounts and the dye.
#[inline(always)]
pub fn splat_cell(g: &G, p: &SplatParams, splats: &[SplatGpu], i: usize, j: usize) -> [f32; 6] {
    let scale = p.factor.max(1) as f32;
    let (x, y) = (((i as f32 + 0.5) / scale) * g.h, ((j as f32 + 0.5) / scale) * g.h);
    let mut add = [0.0f32; 6];
    for s in splats {
        let w = splat_weight(s, distance2(g, s, x, y));
        add[0] += w * amount(s, p.q0_amount);
        add[1] += w * amount(s, p.q1_amount);
        for ch in 0..4 {
            add[2 + ch] += w * s.dye[ch];
        }
    }
    add
}

/// Add `splats` to the channels of `f`; with obstacles (`solids`: `solid`, `u_faces`,
/// `v_faces`) clear the finer lattice's cells of wholly solid cells first and give the others
/// their cell's open part.
pub fn run(g: &G, p: &SplatParams, splats: &[SplatGpu], f: Cells<'_>, solids: Option<(&[f32], &[f32], &[f32])>) {
    let k = p.factor.max(1) as usize;
    let on = [
        p.channels & CHANNEL_Q0 != 0 && !f.q0.is_empty(),
        p.channels & CHANNEL_Q1 != 0 && !f.q1.is_empty(),
        p.channels & CHANNEL_RGBA != 0 && !f.rgba.is_empty(),
    ];
    let any = splats.iter().any(|s| {
        (on[0] && amount(s, p.q0_amount) != 0.0)
            || (on[1] && amount(s, p.q1_amount) != 0.0)
            || (on[2] && s.dye != [0.0; 4])
    });
    // The velocity's cells are cleared inside obstacles by `rasterise_solids`.
    let clear = k > 1 && solids.is_some();
    if !on.iter().any(|o| *o) || !(any || clear) {
        return;
    }
    let (fx, fy) = (g.nx * k, g.ny * k);
    rows_mut(f.q0, fx, fy).zip(rows_mut(f.q1, fx, fy)).zip(rows_mut(f.rgba, 4 * fx, fy)).enumerate().for_each(
        |(j, ((a_row, b_row), c_row))| {
            let near = if any { reaching_row(g, splats, ((j as f32 + 0.5) / k as f32) * g.h) } else { Vec::new() };
            for i in 0..fx {
                let (ci, cj) = (i / k, j / k);
                let mut open = 1.0;
                if let Some((solid, uf, vf)) = solids {
                    if k > 1 && solid[g.c(ci, cj)] == 1.0 {
                        for (on, row) in [(on[0], &mut *a_row), (on[1], &mut *b_row)] {
                            if on {
                                row[i] = 0.0;
                            }
                        }
                        if on[2] {
                            c_row[4 * i..4 * i + 4].fill(0.0);
                        }
                    }
                    open = solid::cell_open(g, uf, vf, ci, cj);
                }
                if !any {
                    continue;
                }
                let add = splat_cell(g, p, &near, i, j).map(|a| a * open);
                for (ch, (on, row)) in [(on[0], &mut *a_row), (on[1], &mut *b_row)].into_iter().enumerate() {
                    if on && add[ch] != 0.0 {
                        row[i] += add[ch];
                    }
                }
                if on[2] && add[2..] != [0.0; 4] {
                    for (x, a) in c_row[4 * i..4 * i + 4].iter_mut().zip(&add[2..]) {
                        *x += a;
                    }
                }
            }
        },
    );
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SplatParams = d.params().unwrap_or_default();
    let cells = Cells { q0: s.w("q0"), q1: s.w("q1"), rgba: s.w("rgba") };
    let solids = c.g.solids.then(|| (s.r("solid"), s.r("u_faces"), s.r("v_faces")));
    run(c.g, &p, c.splats, cells, solids);
}
