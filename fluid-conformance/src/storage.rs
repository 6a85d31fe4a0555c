//! The memory budget: a scene over its budget is refused (policy `refuse`) or runs the
//! largest grid that fits (`downscale`), and the backend's own accounting never passes the
//! budget, whatever the simulation does (steps, the most splats a step takes, reads, samples,
//! queued reads, writes, pictures, checkpoints).

use swirly::{Error, FieldId, Simulation, Splat, backend::Backend, scene::PRESETS};
use swirly_core::storage::{BudgetPolicy, Bytes};

use crate::support::{carried, small_preset, small_preset_with};

/// Whether the scene's model runs as its scene says or not at all (no downscaling: the
/// particle liquid), by the capability the budget itself reads.
fn fixed(scene: &swirly::Scene) -> bool {
    matches!(scene.model().expect("a preset's model").fit(), swirly_core::model::Fit::Fixed { .. })
}

/// Everything a simulation does, with the backend's total and its peak since it was made
/// (within operations: staging buffers, buffers made before the old ones go) checked against
/// `budget` after each.
fn workload<B: Backend>(sim: &mut Simulation<B>, budget: u64, what: &str) {
    let check = |sim: &Simulation<B>, after: &str| {
        let m = sim.backend().memory().expect("memory");
        assert!(
            m.total <= budget,
            "{what}: after {after}, the backend holds {} bytes, over the budget of {budget}",
            m.total
        );
        assert!(m.peak >= m.total, "{what}: after {after}, a peak of {} under the {} held", m.peak, m.total);
        assert!(
            m.peak <= budget,
            "{what}: by {after}, the backend held {} bytes at once, over the budget of {budget}",
            m.peak
        );
    };
    check(sim, "allocating");
    let dt = sim.scene().params.dt;
    let (w, h) = (sim.frame().width(), sim.frame().height());
    let splat =
        Splat { center: [0.4 * w, 0.5 * h], radius: 0.1 * h, velocity: [0.3, 0.2], density: 0.5, ..Splat::default() };
    // The particle liquid takes no splats.
    let splats = sim.scene().particles.is_none();
    for _ in 0..3 {
        if splats {
            sim.splat(carried(sim, splat)).expect("splat");
        }
        sim.step(dt).expect("step");
    }
    check(sim, "steps");
    // As many splats as a step takes (the splat buffers at their largest).
    let room = if splats { swirly::MAX_SPLATS - sim.scene().emitters.len() } else { 0 };
    for k in 0..room {
        let s = Splat {
            center: [(k % 97) as f32 / 97.0 * w, 0.5 * h],
            radius: 0.02 * h,
            density: 1e-4,
            dye: [1e-4; 4],
            ..Splat::default()
        };
        sim.splat(carried(sim, s)).expect("splat");
    }
    sim.step(dt).expect("step");
    check(sim, "a step of the most splats");
    sim.checked_diagnostics().expect("diagnostics");
    check(sim, "diagnostics");
    let carried: Vec<FieldId> = FieldId::public().filter(|f| sim.carries(*f) && f.samples()).collect();
    for f in carried {
        sim.field(f).expect("field");
        sim.sample(f, &[[0.5 * w, 0.5 * h]]).expect("sample");
    }
    check(sim, "reads and samples");
    let state = if splats { "u" } else { "positions" };
    let pending = sim.request_field(state).expect("request");
    sim.step(dt).expect("step");
    sim.wait_field(pending).expect("wait");
    check(sim, "a queued read");
    let u = sim.field(state).expect("read");
    sim.set_field(state, &u).expect("set_field");
    check(sim, "a write");
    if sim.scene().check_render().is_ok() {
        sim.render().expect("render");
    }
    sim.save(&mut Vec::new()).expect("save");
    check(sim, "a picture and a checkpoint");
}

/// Every preset: refused one byte under its plan, run at exactly its plan, and downscaled
/// under a budget that holds half its resources beside the working memory, the backend's
/// accounting within the budget throughout. A simulation is refused by the plan
/// (`storage::plan`, what `Simulation::new` checks first: the first preset checks `new`
/// itself), so the backend that was asked runs the scene that fits.
pub fn budget_is_never_exceeded<B: Backend>(make: impl Fn() -> B) {
    for (k, (name, _)) in PRESETS.iter().enumerate() {
        let scene = small_preset(name);
        let backend = make();
        let plan = swirly::storage::plan(&scene, &backend).expect("plan").plan;
        assert!(plan.resources() > 0 && plan.total() >= plan.resources(), "{name}: {plan:?}");

        let mut refused = scene.clone();
        refused.storage.budget = Some(Bytes(plan.total() - 1));
        let outcome = if k == 0 {
            Simulation::new(refused, make()).map(|_| ())
        } else {
            swirly::storage::plan(&refused, &backend).map(|_| ())
        };
        match outcome {
            Err(Error::OverBudget { needed, allowed, detail }) => {
                assert_eq!((needed, allowed), (plan.total(), plan.total() - 1), "{name}");
                assert!(detail.contains("45x38") && detail.contains("downscale"), "{name}: {detail}");
            }
            Err(e) => panic!("{name}: expected OverBudget, got {e}"),
            Ok(_) => panic!("{name}: a scene over its budget ran"),
        }

        let mut exact = scene.clone();
        exact.storage.budget = Some(Bytes(plan.total()));
        let mut sim = Simulation::new(exact, backend).expect("a scene at its budget runs");
        assert_eq!(sim.downscaled_from(), None);
        workload(&mut sim, plan.total(), &format!("{name} at its plan"));
        drop(sim);

        let mut small = scene.clone();
        let budget = plan.total() - plan.resources() / 2;
        small.storage = swirly_core::storage::Storage {
            budget: Some(Bytes(budget)),
            policy: BudgetPolicy::Downscale,
            ..small.storage
        };
        if fixed(&scene) {
            // The particle liquid keeps its particles: refused, saying so.
            match Simulation::new(small, make()) {
                Err(Error::OverBudget { detail, .. }) => {
                    assert!(detail.contains("particles") && detail.contains("not downscaled"), "{name}: {detail}")
                }
                Err(e) => panic!("{name}: expected OverBudget, got {e}"),
                Ok(_) => panic!("{name}: a particle scene over its budget ran"),
            }
            continue;
        }
        let mut sim = Simulation::new(small, make()).expect("a downscaled scene runs");
        assert_eq!(sim.downscaled_from(), Some([45, 38]), "{name}");
        let grid = sim.scene().grid().expect("grid");
        let asked = scene.grid().expect("grid");
        if (grid.nx, grid.ny) == (45, 38) {
            let finer = grid.dye_factor < asked.dye_factor || grid.density_factor < asked.density_factor;
            assert!(finer, "{name}: neither the grid nor its finer fields were downscaled");
        } else {
            let on_grid = grid.dye_factor == 1 && grid.density_factor == 1;
            assert!(grid.nx < 45 && grid.ny < 38 && on_grid, "{name}: {grid:?}");
        }
        assert!((grid.height() - asked.height()).abs() < 1e-5, "{name}: the box's height");
        workload(&mut sim, budget, &format!("{name} downscaled to {}x{}", grid.nx, grid.ny));
    }
    // Stored in f16, every grid preset: refused a byte under its plan, run at it, the
    // backend's accounting within it throughout (a GPU stores 2 bytes a value, the CPU an f32
    // word: each plan counts what its backend holds).
    for (name, _) in PRESETS {
        let scene = small_preset_with(name, &["storage.format=f16"]);
        if fixed(&small_preset(name)) {
            // The particle liquid keeps f32 (its positions need it) and says so.
            let refused = scene.model().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(refused.contains("storage.format"), "{name} in f16: {refused}");
            continue;
        }
        let backend = make();
        let plan = swirly::storage::plan(&scene, &backend).expect("plan").plan;
        let mut refused = scene.clone();
        refused.storage.budget = Some(Bytes(plan.total() - 1));
        assert!(
            matches!(swirly::storage::plan(&refused, &backend), Err(Error::OverBudget { .. })),
            "{name} in f16: a scene over its budget ran"
        );
        let mut exact = scene;
        exact.storage.budget = Some(Bytes(plan.total()));
        let mut sim = Simulation::new(exact, backend).expect("a scene at its budget runs");
        workload(&mut sim, plan.total(), &format!("{name} in f16 at its plan"));
    }
    // A finer dye or density gives first: with a budget that holds the scene with that field
    // on the grid, the whole grid runs so.
    for (name, overrides, dye) in [("paddle", &[][..], true), ("fire", &["grid.density_factor=2"][..], false)] {
        let scene = small_preset_with(name, overrides);
        let mut coarse = scene.clone();
        if dye {
            assert!(scene.grid.dye_factor > 1);
            coarse.grid.dye_factor = 1;
        } else {
            coarse.grid.density_factor = 1;
        }
        let backend = make();
        let need = swirly::storage::plan(&coarse, &backend).expect("plan").plan.total();
        let mut fitted = scene;
        fitted.storage = swirly_core::storage::Storage {
            budget: Some(Bytes(need)),
            policy: BudgetPolicy::Downscale,
            ..fitted.storage
        };
        let mut sim = Simulation::new(fitted, backend).expect("a scene with a coarser field runs");
        assert_eq!(sim.downscaled_from(), Some([45, 38]), "{name}");
        let grid = sim.scene().grid().expect("grid");
        assert_eq!((grid.nx, grid.ny, grid.dye_factor, grid.density_factor), (45, 38, 1, 1), "{name}");
        workload(&mut sim, need, &format!("{name} with its finer field on the grid"));
    }
}
