//! A scene made to fit its memory budget on a backend: refused, or run on the largest grid of
//! its box that fits (its finer fields coarsened first), as its `[storage]` says.

use crate::model::{Fit, Model};
use crate::scene::Scene;
use crate::storage::{BudgetPolicy, MemoryPlan, check_within};
use swirly_ir::Result;
use swirly_ir::backend::Backend;

/// What `scene` needs on `backend` under its `[storage]` settings, allocating nothing: its
/// plan, and the scene that would run: as it is when it fits (or has no budget); with
/// [`BudgetPolicy::Refuse`], [`swirly_ir::Error::OverBudget`] when it does not; with
/// [`BudgetPolicy::Downscale`], the largest grid of its box and shape that fits (an error when
/// not even a 2-cell-high one does).
pub fn plan(scene: &Scene, backend: &dyn Backend) -> Result<Fitted> {
    fit(scene, backend).map(|(fitted, _)| fitted)
}

/// A scene made to fit its budget on a backend.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// The scene to run: the one given, or its dye or grid downscaled.
    pub scene: Scene,
    /// Its plan.
    pub plan: MemoryPlan,
    /// The grid `[nx, ny]` asked for, when the grid or the dye's factor was downscaled.
    pub downscaled_from: Option<[u32; 2]>,
}

/// A scene's model (what [`crate::sim::Simulation`] runs) and its plan on `backend`.
fn planned(scene: &Scene, backend: &dyn Backend) -> Result<(Box<dyn Model>, MemoryPlan)> {
    let model = scene.model()?;
    let plan = MemoryPlan::new(model.resources(), &model.schedules(), backend);
    Ok((model, plan))
}

/// The width of the grid `m` cells high with the aspect of `nx × ny`.
fn width(nx: u32, ny: u32, m: u32) -> u32 {
    ((f64::from(nx) * f64::from(m) / f64::from(ny)).round() as u32).max(1)
}

/// `scene` with the same box on `nx × ny` cells (the box's height kept, so the width follows
/// within a cell).
fn resized(scene: &Scene, nx: u32, ny: u32) -> Result<Scene> {
    let height = scene.grid()?.height();
    let mut s = scene.clone();
    s.grid.nx = nx;
    s.grid.ny = ny;
    if scene.grid.h.is_some() {
        s.grid.h = Some(height / ny as f32);
    }
    Ok(s)
}

/// [`plan`], with the model of the scene that runs (built once, for the plan and the run).
pub(crate) fn fit(scene: &Scene, backend: &dyn Backend) -> Result<(Fitted, Box<dyn Model>)> {
    let (model, plan) = planned(scene, backend)?;
    let as_is = |model, plan| Ok((Fitted { scene: scene.clone(), plan, downscaled_from: None }, model));
    let Some(budget) = scene.storage.budget else { return as_is(model, plan) };
    let (nx, ny) = (scene.grid.nx, scene.grid.ny);
    if let Fit::Fixed { what, advice } = model.fit() {
        check_within(&plan, budget, || format!("{what} on {}; {advice}", backend.name()))?;
        return as_is(model, plan);
    }
    if scene.storage.policy == BudgetPolicy::Refuse {
        check_within(&plan, budget, || {
            format!(
                "{nx}x{ny} on {}; raise the budget, shrink the grid, or set storage.policy = \"downscale\"",
                backend.name()
            )
        })?;
        return as_is(model, plan);
    }
    if plan.total() <= budget.0 {
        return as_is(model, plan);
    }
    // The finer dye and density give first, the larger factor a step at a time: the first
    // pair with which the whole grid fits.
    let with_factors = |dye: u32, density: u32| {
        let mut s = scene.clone();
        s.grid.dye_factor = dye;
        s.grid.density_factor = density;
        s
    };
    let (mut dye, mut density) = (scene.grid.dye_factor, scene.grid.density_factor);
    while (dye, density) != (1, 1) {
        if dye >= density {
            dye -= 1;
        } else {
            density -= 1;
        }
        let s = with_factors(dye, density);
        let (model, plan) = planned(&s, backend)?;
        if plan.total() <= budget.0 {
            return Ok((Fitted { scene: s, plan, downscaled_from: Some([nx, ny]) }, model));
        }
    }
    // Then the largest height whose grid fits (the plan grows with the grid), the fine fields on it;
    // the width keeps the box's aspect.
    let base = with_factors(1, 1);
    let at = |m: u32| -> Result<(Scene, Box<dyn Model>, MemoryPlan)> {
        let s = resized(&base, width(nx, ny, m), m)?;
        let (model, plan) = planned(&s, backend)?;
        Ok((s, model, plan))
    };
    let fits = |m: u32| at(m).map(|(_, _, p)| p.total() <= budget.0).unwrap_or(false);
    let (mut lo, mut hi) = (2u32, ny);
    if !fits(lo) {
        let (_, _, p) = at(lo)?;
        check_within(&p, budget, || {
            format!("even a {}x{lo} grid of its box does not fit on {}", width(nx, ny, lo), backend.name())
        })?;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (scene, model, plan) = at(lo)?;
    Ok((Fitted { scene, plan, downscaled_from: Some([nx, ny]) }, model))
}
