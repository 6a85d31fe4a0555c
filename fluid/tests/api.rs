//! The library API refuses bad input with typed errors instead of panicking.

use swirly::{CpuBackend, Error, FieldId, Scene, Simulation, Splat, backend::Backend};

fn small() -> Simulation<CpuBackend> {
    let ov: Vec<_> =
        ["grid.nx=16", "grid.ny=12"].iter().map(|s| swirly::scene::parse_override(s).expect("override")).collect();
    let scene = Scene::preset_with("smoke", &ov).expect("scene");
    Simulation::new(scene, CpuBackend::new().expect("backend")).expect("simulation")
}

#[test]
fn bad_time_steps_are_refused() {
    let mut sim = small();
    for dt in [f32::NAN, f32::INFINITY, 0.0, -0.01] {
        assert!(matches!(sim.step(dt), Err(Error::InvalidValue { .. })), "dt = {dt}");
    }
    sim.step(0.01).expect("a good step still works");
}

#[test]
fn bad_splats_are_refused() {
    let mut sim = small();
    let good = Splat { center: [0.2, 0.2], radius: 0.1, density: 1.0, ..Splat::default() };
    sim.splat(good).expect("good splat");
    for bad in [
        Splat { radius: 0.0, ..good },
        Splat { radius: f32::NAN, ..good },
        Splat { center: [f32::INFINITY, 0.0], ..good },
        Splat { dye: [0.0, f32::NAN, 0.0, 1.0], ..good },
    ] {
        let e = sim.splat(bad).expect_err("refused");
        assert!(matches!(e, Error::InvalidValue { .. }), "{e}");
    }
}

/// A step applies at most `MAX_SPLATS` splats, the scene's emitters counted: one more is
/// refused when it is queued, and the queue steps whole.
#[test]
fn splats_past_the_per_step_bound_are_refused_when_queued() {
    let mut sim = small();
    let emitters = sim.scene().emitters.len();
    let s = Splat { center: [0.2, 0.2], radius: 0.05, density: 1e-4, ..Splat::default() };
    for _ in emitters..swirly::MAX_SPLATS {
        sim.splat(s).expect("within the bound");
    }
    let e = sim.splat(s).expect_err("one past the bound").to_string();
    assert!(e.contains(&swirly::MAX_SPLATS.to_string()) && e.contains("emitters included"), "{e}");
    sim.step(0.01).expect("the full queue steps");
    sim.splat(s).expect("a new step's queue");
}

#[test]
fn fields_of_the_wrong_length_are_refused() {
    let mut sim = small();
    let e = sim.set_field(FieldId::U, &[0.0; 3]).expect_err("wrong length");
    assert!(matches!(e, Error::FieldLength { field: "u", expected: 204, got: 3 }), "{e}");
}

#[test]
fn a_backend_must_be_allocated_first() {
    let mut b = CpuBackend::new().expect("backend");
    assert!(matches!(b.download(FieldId::Density.into()), Err(Error::NotAllocated("cpu"))));
    assert!(matches!(b.upload(FieldId::Density.into(), &[1.0]), Err(Error::NotAllocated("cpu"))));
}

#[test]
fn unknown_backends_are_named() {
    let e = swirly::backend("metal").err().expect("unknown backend");
    assert!(e.to_string().contains("metal") && e.to_string().contains("cpu"), "{e}");
}

#[test]
fn a_schedule_for_another_grid_is_refused() {
    let mut sim = small();
    let other = Scene::preset("smoke").expect("scene");
    let schedule = swirly_core::grid::step::step(&other.grid().expect("grid"), &other.params);
    let e = sim
        .backend_mut()
        .run(&schedule, &swirly::backend::StepInputs { dt: 0.01, ..Default::default() })
        .expect_err("refused");
    assert!(e.to_string().contains("another grid"), "{e}");
}

/// `params.pressure.tolerance` stops a step's solve as soon as the relative residual is
/// reached: multigrid needs a few V-cycles of the 20 allowed, and the residual is at or below
/// the tolerance; a tolerance Jacobi cannot reach in 30 sweeps uses all 30.
#[test]
fn a_pressure_tolerance_stops_the_solve_early() {
    let sim_with = |solver: &str, iterations: u32| {
        let ov: Vec<_> = [
            "grid.nx=48".to_string(),
            "grid.ny=40".to_string(),
            format!("params.pressure.solver={solver}"),
            format!("params.pressure.iterations={iterations}"),
            "params.pressure.tolerance=1e-4".to_string(),
        ]
        .iter()
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
        let scene = Scene::preset_with("smoke", &ov).expect("scene");
        Simulation::new(scene, CpuBackend::new().expect("backend")).expect("simulation")
    };
    let mut mg = sim_with("multigrid", 20);
    for _ in 0..5 {
        mg.step(0.02).expect("step");
        let used = mg.last_iterations();
        assert!((1..=6).contains(&used), "{used} V-cycles");
        let residual = mg.diagnostics().expect("diagnostics").figure("residual").unwrap_or(f64::NAN);
        assert!(residual <= 1e-4, "{residual:.3e} after {used} V-cycles");
    }
    let mut jacobi = sim_with("jacobi", 30);
    jacobi.step(0.02).expect("step");
    assert_eq!(jacobi.last_iterations(), 30);
    assert!(jacobi.diagnostics().expect("diagnostics").figure("residual").unwrap_or(f64::NAN) > 1e-4);
}

/// A solve that the tolerance stops after k iterations is the solve of exactly k iterations:
/// its chunks between residual checks add up to the same sweeps, bit for bit on the CPU. For
/// Jacobi (checked every 10 sweeps) and SOR (every 5), over four steps in lockstep with a
/// simulation without a tolerance whose iteration count is set, before each step, to what the
/// other used; a tolerance (0.3) both solvers reach before their cap of 60.
#[test]
fn a_solve_stopped_by_the_tolerance_is_that_many_iterations() {
    // ω is given: SOR's default depends on the iteration count, which differs here.
    for (solver, omega) in [("jacobi", 0.9), ("sor", 1.6)] {
        let ov: Vec<_> = [
            "grid.nx=48".to_string(),
            "grid.ny=40".to_string(),
            format!("params.pressure.solver={solver}"),
            "params.pressure.iterations=60".to_string(),
            format!("params.pressure.omega={omega}"),
        ]
        .iter()
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
        let scene = Scene::preset_with("smoke", &ov).expect("scene");
        let mut exact = Simulation::new(scene.clone(), CpuBackend::new().expect("cpu")).expect("sim");
        let mut stopped = scene;
        stopped.params.pressure.tolerance = Some(0.3);
        let mut stopped = Simulation::new(stopped, CpuBackend::new().expect("cpu")).expect("sim");
        for step in 0..4 {
            stopped.step(0.02).expect("step");
            let used = stopped.last_iterations();
            eprintln!("{solver}, step {step}: {used} iterations");
            assert!((1..60).contains(&used), "{solver}, step {step}: {used} iterations of 60");
            let mut params = exact.scene().params.clone();
            params.pressure.iterations = used;
            exact.set_params(params).expect("params");
            exact.step(0.02).expect("step");
            for f in [FieldId::U, FieldId::V, FieldId::Pressure, FieldId::Density] {
                assert!(
                    exact.field(f).expect("field") == stopped.field(f).expect("field"),
                    "{solver}, step {step}: {} after a solve stopped at {used} iterations differs from {used} \
                     iterations run straight",
                    f.name()
                );
            }
        }
    }
}

#[test]
fn a_bad_tolerance_is_refused() {
    for bad in ["0.0", "1.5", "nan"] {
        let ov = [swirly::scene::parse_override(&format!("params.pressure.tolerance={bad}")).expect("override")];
        let e = Scene::preset_with("smoke", &ov).expect_err("tolerance").to_string();
        assert!(e.contains("params.pressure.tolerance"), "{e}");
    }
}

#[test]
fn diagnostics_report_the_largest_velocity_and_its_courant_number() {
    let mut sim = small();
    for _ in 0..5 {
        sim.step(0.02).expect("step");
    }
    let d = sim.checked_diagnostics().expect("a sound state");
    let u = sim.field(FieldId::U).expect("u");
    let v = sim.field(FieldId::V).expect("v");
    let largest = u.iter().chain(&v).fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(largest > 0.0, "the plume moves after 5 steps");
    assert_eq!(d.max_velocity, f64::from(largest));
    let h = f64::from(sim.frame().h);
    assert_eq!(d.cfl, f64::from(0.02f32) * d.max_velocity / h, "cfl for h {h}");
    assert!(d.is_finite() && d.non_finite().is_empty(), "{d:?}");
    let density = sim.field(FieldId::Density).expect("density");
    assert_eq!(d.max_of("density"), Some(f64::from(density.iter().fold(0.0f32, |m, x| m.max(x.abs())))));
}

/// Steps `sim` at `dt` until `checked_diagnostics` fails, at most `steps` times: its error.
fn first_error(sim: &mut Simulation<CpuBackend>, dt: f32, steps: u32) -> Option<Error> {
    for _ in 0..steps {
        sim.step(dt).expect("step");
        if let Err(e) = sim.checked_diagnostics() {
            return Some(e);
        }
    }
    None
}

#[test]
fn a_blown_up_state_is_an_error_not_a_quiet_summary() {
    let mut sim = small();
    let mut u = sim.field(FieldId::U).expect("u");
    u[7] = f32::NAN;
    let e = sim.set_field(FieldId::U, &u).expect_err("set_field refuses a NaN");
    assert!(e.to_string().contains("u[7]") && e.to_string().contains("NaN"), "{e}");
    u[7] = f32::INFINITY;
    assert!(sim.set_field(FieldId::U, &u).is_err(), "and an infinity");
    u[7] = f32::NAN;
    // The backend's upload takes anything: a NaN in the state, as a blow-up would leave it.
    sim.backend_mut().upload(FieldId::U.into(), &u).expect("upload u");
    let d = sim.diagnostics().expect("diagnostics still answer");
    assert!(d.max_velocity.is_nan() && d.cfl.is_nan() && !d.is_finite(), "{d:?}");
    assert!(d.figure("max_divergence").unwrap_or(f64::NAN).is_nan(), "never a quiet 0: {d:?}");
    assert_eq!(d.non_finite(), vec!["u"]);
    match sim.checked_diagnostics() {
        Err(Error::NonFinite { step, fields, .. }) => assert_eq!((step, fields.as_str()), (0, "u")),
        other => panic!("expected NonFinite, got {other:?}"),
    }
    // The cheap check says the same.
    match sim.check_state() {
        Err(Error::NonFinite { step, fields, .. }) => assert_eq!((step, fields.as_str()), (0, "u")),
        other => panic!("expected NonFinite from check_state, got {other:?}"),
    }
    // A time step far too large blows the smoke scene up within a few steps (measured: the
    // first); the error names the velocity.
    let mut sim = small();
    let e = first_error(&mut sim, 1e30, 5).expect("dt = 1e30 blows up");
    assert!(matches!(&e, Error::NonFinite { fields, .. } if fields.contains('u')), "{e}");
    assert!(e.to_string().contains("1e30"), "{e}");
    let d = sim.diagnostics().expect("diagnostics");
    assert!(
        d.figure("residual").unwrap_or(f64::NAN).is_nan() && d.figure("max_divergence").unwrap_or(f64::NAN).is_nan(),
        "the last solve's figures are NaN too: {d:?}"
    );
}

/// A finite state whose fastest face crosses more than the whole grid in a step is no flow:
/// `checked_diagnostics` calls it `RanAway`. Smoke at 16 × 12 and dt = 1 runs away from its
/// third step on (measured: Courant numbers 8.9, 7.5, 12.6, 22, 52, 113, doubling while still
/// finite; the fourth crosses the 16 cells), and the line lies exactly at the grid's larger
/// side.
#[test]
fn a_flow_that_outruns_the_grid_is_an_error() {
    let mut sim = small();
    let cells = sim.frame().nx.max(sim.frame().ny);
    let e = first_error(&mut sim, 1.0, 10).expect("smoke at dt = 1 runs away");
    let d = sim.diagnostics().expect("diagnostics");
    assert!(d.is_finite() && d.cfl > f64::from(cells), "finite, and past the grid: {d:?}");
    match &e {
        Error::RanAway { step, cfl, cells: c, dt } => {
            assert!(*step > 1, "the first steps are sound: {e}");
            assert_eq!((*step, *cfl, *c, *dt), (sim.steps(), d.cfl, cells, 1.0), "{e}");
            let msg = e.to_string();
            assert!(msg.contains("outran the grid") && msg.contains("params.dt"), "{msg}");
        }
        other => panic!("expected RanAway, got {other:?}"),
    }
    let grid = sim.scene().grid().expect("grid");
    let at = |cfl: f64| {
        let mut e = d.clone();
        e.cfl = cfl;
        e.ran_away(&grid)
    };
    assert!(!at(f64::from(cells)) && at(f64::from(cells) * (1.0 + 1e-9)), "the line is nx.max(ny)");
    assert!(!at(f64::NAN), "a NaN state is NonFinite's, not this");
    // The scene's own time step stays well inside.
    let mut sim = small();
    for _ in 0..20 {
        sim.step(0.02).expect("step");
    }
    let d = sim.checked_diagnostics().expect("a sound smoke step");
    assert!(d.cfl < 5.0, "{d:?}");
    sim.check_state().expect("the cheap check agrees");
    // The cheap check calls the runaway state what checked_diagnostics does.
    let mut sim = small();
    let e = first_error(&mut sim, 1.0, 10).expect("runs away");
    match (sim.check_state(), e) {
        (Err(Error::RanAway { step: a, cfl: x, .. }), Error::RanAway { step: b, cfl: y, .. }) => {
            assert_eq!((a, x), (b, y))
        }
        (other, e) => panic!("expected RanAway twice, got {other:?} after {e}"),
    }
}

fn smoke_with(extra: &[&str]) -> Scene {
    let ov: Vec<_> = ["grid.nx=16", "grid.ny=12"]
        .iter()
        .chain(extra)
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
    Scene::preset_with("smoke", &ov).expect("scene")
}

/// Whether the smoke preset carries `f` (it has no dye, and no obstacles).
fn a_carries(f: FieldId) -> bool {
    let obstacles = matches!(f, FieldId::Solid | FieldId::UFaces | FieldId::VFaces);
    smoke_with(&[]).params.fields.carries(f) && !obstacles
}

fn bits(sim: &mut Simulation<CpuBackend>, field: FieldId) -> Vec<u32> {
    sim.field(field).expect("field").iter().map(|x| x.to_bits()).collect()
}

#[test]
fn new_parameters_apply_from_the_next_step_and_the_state_is_kept() {
    let tuned = ["params.vorticity=20", "params.viscosity=0.001", "params.buoyancy.temperature_lift=3"];
    let dt = 0.0166667;
    let mut a = Simulation::new(smoke_with(&[]), CpuBackend::new().expect("backend")).expect("simulation");
    for _ in 0..5 {
        a.step(dt).expect("step");
    }
    // The reference: a simulation built with the tuned scene, handed a's whole state.
    let mut c = Simulation::new(smoke_with(&tuned), CpuBackend::new().expect("backend")).expect("simulation");
    // Every resource both hold (the tuned scene has viscosity, so a second velocity scratch
    // pair of its own), but the transient ones, which hold nothing between steps.
    for f in FieldId::STATE_AND_SCRATCH {
        let (ra, rc) = (&a.model().resources()[f.index()], &c.model().resources()[f.index()]);
        if ra == rc && !ra.is_empty() && ra.shares().is_none() {
            let data = a.backend_mut().download((*f).into()).expect("download");
            c.backend_mut().upload((*f).into(), &data).expect("upload");
        }
    }
    // And one that keeps the old parameters.
    let mut b = Simulation::new(smoke_with(&[]), CpuBackend::new().expect("backend")).expect("simulation");
    for _ in 0..5 {
        b.step(dt).expect("step");
    }
    a.set_params(smoke_with(&tuned).params).expect("set_params");
    assert_eq!(a.scene().params.vorticity, 20.0);
    for _ in 0..5 {
        a.step(dt).expect("step");
        b.step(dt).expect("step");
        c.step(dt).expect("step");
    }
    for f in FieldId::STATE_AND_SCRATCH.iter().filter(|f| f.is_public() && a_carries(**f)) {
        assert!(bits(&mut a, *f) == bits(&mut c, *f), "{} differs from a fresh run of the tuned scene", f.name());
    }
    assert!(bits(&mut a, FieldId::U) != bits(&mut b, FieldId::U), "the new parameters changed nothing");
}

#[test]
fn a_scene_with_another_grid_or_bad_values_is_refused_and_the_simulation_runs_on() {
    let mut sim = small();
    let before = sim.scene().clone();
    for (bad, key) in [
        (smoke_with(&["grid.nx=17"]), "17x12"),
        (smoke_with(&["grid.h=0.5"]), "h 0.5"),
        (smoke_with(&["params.boundary.x=periodic"]), "Periodic"),
    ] {
        let e = sim.set_scene(bad).expect_err("another grid");
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidValue { .. }) && text.contains(key) && text.contains("16x12"), "{text}");
    }
    let mut nan = before.params.clone();
    nan.vorticity = f32::NAN;
    let e = sim.set_params(nan).expect_err("NaN vorticity");
    assert!(e.to_string().contains("vorticity"), "{e}");
    assert_eq!(sim.scene(), &before);
    sim.step(0.01).expect("runs on");
}

#[test]
fn leaving_a_double_float_solver_clears_the_low_part_of_the_pressure() {
    let mut sim = small();
    for _ in 0..5 {
        sim.step(0.0166667).expect("step");
    }
    let lo = sim.backend_mut().download(FieldId::PressureLo.into()).expect("download");
    assert!(lo.iter().any(|x| *x != 0.0), "multigrid wrote no low part to clear");
    let mut params = sim.scene().params.clone();
    params.pressure.solver = swirly::PressureSolver::Jacobi;
    params.pressure.iterations = 40;
    sim.set_params(params).expect("set_params");
    sim.step(0.0166667).expect("step");
    let lo = sim.backend_mut().download(FieldId::PressureLo.into()).expect("download");
    assert!(lo.iter().all(|x| *x == 0.0), "a stale low part is read with Jacobi's pressure");
}

#[test]
fn simulations_are_send_and_sync_and_step_on_another_thread() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Simulation>();
    send_sync::<Simulation<CpuBackend>>();
    #[cfg(feature = "wgpu")]
    send_sync::<Simulation<swirly::WgpuBackend>>();
    #[cfg(feature = "vulkan")]
    send_sync::<Simulation<swirly::VulkanBackend>>();
    let mut sim = Simulation::new(smoke_with(&[]), swirly::backend("cpu").expect("backend")).expect("simulation");
    sim.step(0.01).expect("step here");
    let mut sim = std::thread::spawn(move || {
        sim.step(0.01).expect("step there");
        sim
    })
    .join()
    .expect("worker");
    sim.step(0.01).expect("step here again");
    assert_eq!(sim.steps(), 3);
}

#[test]
fn reset_starts_again_bit_for_bit_like_a_new_simulation() {
    let dt = 0.0166667;
    let splat = Splat { center: [0.3, 0.4], radius: 0.1, velocity: [0.5, 0.2], density: 1.0, ..Splat::default() };
    let mut a = Simulation::new(smoke_with(&[]), CpuBackend::new().expect("backend")).expect("simulation");
    for _ in 0..8 {
        a.splat(splat).expect("splat");
        a.step(dt).expect("step");
    }
    a.splat(splat).expect("a splat queued before the reset is dropped");
    a.reset().expect("reset");
    assert_eq!((a.steps(), a.time()), (0, 0.0));
    let mut b = Simulation::new(smoke_with(&[]), CpuBackend::new().expect("backend")).expect("simulation");
    let carried = |f: &&FieldId| f.is_public() && a_carries(**f);
    for f in FieldId::STATE_AND_SCRATCH.iter().filter(carried) {
        assert!(bits(&mut a, *f) == bits(&mut b, *f), "{} after the reset", f.name());
    }
    for _ in 0..5 {
        a.step(dt).expect("step");
        b.step(dt).expect("step");
    }
    for f in FieldId::STATE_AND_SCRATCH.iter().filter(carried) {
        assert!(bits(&mut a, *f) == bits(&mut b, *f), "{} five steps after the reset", f.name());
    }
}

#[test]
fn sampling_reads_the_field_at_world_positions() {
    let mut sim = small();
    for _ in 0..10 {
        sim.step(0.0166667).expect("step");
    }
    let g = sim.scene().grid().expect("grid");
    // At a cell centre a sample is that cell's value.
    let density = sim.field(FieldId::Density).expect("density");
    let (i, j) = (8usize, 2usize);
    let centre = [(i as f32 + 0.5) * g.h, (j as f32 + 0.5) * g.h];
    let got = sim.sample(FieldId::Density, &[centre, [0.0, 0.0]]).expect("sample");
    assert_eq!(got[0], density[j * g.nx as usize + i]);
    assert!(got[0] > 0.0, "the emitter's density reaches cell ({i}, {j})");
    // Smoke carries no dye: it is not allocated, and asking for it says so.
    let e = sim.sample(FieldId::Dye, &[centre]).expect_err("no dye");
    assert!(e.to_string().contains("params.fields.dye"), "{e}");
    let mut inked = Simulation::new(smoke_with(&["params.fields.dye=true"]), CpuBackend::new().expect("backend"))
        .expect("simulation");
    assert_eq!(inked.sample(FieldId::Dye, &[centre]).expect("dye").len(), 4);
    let e = sim.sample(FieldId::Density, &[[g.width() + 1.0, 0.0]]).expect_err("outside the box");
    assert!(e.to_string().contains("points[0]"), "{e}");
    assert!(sim.sample(FieldId::Multigrid, &[centre]).is_err(), "a private field");
}

#[test]
fn a_boxed_backend_reads_and_sets_its_wait_spin() {
    use std::time::Duration;
    // What `swirly::backend` returns, through `Simulation::backend_mut` as a game would.
    let mut sim = Simulation::new(smoke_with(&[]), swirly::backend("cpu").expect("backend")).expect("simulation");
    assert_eq!(sim.backend().wait_spin(), None, "the CPU backend never waits for a device");
    let e = sim.backend_mut().set_wait_spin(Duration::from_micros(100)).expect_err("no device");
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let gpu: &[&str] = &[
        #[cfg(feature = "wgpu")]
        "wgpu",
        #[cfg(feature = "vulkan")]
        "vulkan",
    ];
    for name in gpu {
        let backend = swirly::backend(name).unwrap_or_else(|e| panic!("{name} needs a device: {e}"));
        let mut sim = Simulation::new(smoke_with(&[]), backend).expect("simulation");
        assert!(sim.backend().wait_spin().is_some(), "{name}");
        sim.backend_mut().set_wait_spin(Duration::from_micros(345)).expect("a budget");
        assert_eq!(sim.backend().wait_spin(), Some(Duration::from_micros(345)), "{name}");
        sim.step(0.01).expect("step");
        sim.backend_mut().finish().expect("finish");
    }
}

#[test]
fn a_boxed_backend_queues_its_reads() {
    // `swirly::backend`'s box forwards the queued reads: on a GPU the request is on the device
    // (counted by `queued_reads`) until it is taken, and its samples are those of its moment.
    let names: &[&str] = &[
        "cpu",
        #[cfg(feature = "wgpu")]
        "wgpu",
        #[cfg(feature = "vulkan")]
        "vulkan",
    ];
    for name in names {
        let backend = swirly::backend(name).unwrap_or_else(|e| panic!("{name} needs a device: {e}"));
        let mut sim = Simulation::new(smoke_with(&[]), backend).expect("simulation");
        sim.splat(Splat { center: [0.5, 0.3], radius: 0.1, density: 1.0, velocity: [0.0, 2.0], ..Splat::default() })
            .expect("splat");
        sim.step(0.01).expect("step");
        let points = [[0.5, 0.3], [0.45, 0.35]];
        let want = sim.sample(FieldId::Density, &points).expect("sample");
        let whole = sim.field(FieldId::Density).expect("field");
        let asked = sim.request_sample(FieldId::Density, &points).expect("request");
        let asked_field = sim.request_field(FieldId::Density).expect("request");
        assert_eq!((asked.field(), asked_field.field()), ("density", "density"));
        assert_eq!(sim.backend().queued_reads(), if *name == "cpu" { 0 } else { 2 }, "{name}");
        sim.step(0.01).expect("step");
        assert_ne!(sim.sample(FieldId::Density, &points).expect("sample"), want, "{name}: the step changed nothing");
        assert_eq!(sim.wait_sample(asked).expect("samples"), want, "{name}");
        assert_eq!(sim.wait_field(asked_field).expect("field"), whole, "{name}");
        assert_eq!(sim.backend().queued_reads(), 0, "{name}");
    }
}

/// Every key of a scene as `--set` writes it (`params.pressure.solver`, `emitters.0.color.2`),
/// tables and arrays as well as their leaves.
fn scene_keys(value: &serde_json::Value, key: &str, keys: &mut Vec<String>) {
    if !key.is_empty() {
        keys.push(key.to_string());
    }
    let join = |k: &str| if key.is_empty() { k.to_string() } else { format!("{key}.{k}") };
    match value {
        serde_json::Value::Object(o) => o.iter().for_each(|(k, v)| scene_keys(v, &join(k), keys)),
        serde_json::Value::Array(a) => {
            a.iter().enumerate().for_each(|(i, v)| scene_keys(v, &join(&i.to_string()), keys))
        }
        _ => {}
    }
}

/// Hostile values on every key of every preset, through the overrides `--set` uses: nothing
/// panics, a refused value's error names the key or the value, and an accepted scene builds a
/// simulation that steps (or stops with an error) on a small grid.
#[test]
fn hostile_overrides_on_every_key_never_panic_and_name_what_they_refuse() {
    const VALUES: &[&str] = &[
        "0",
        "-1",
        "1",
        "0.5",
        "-0.0",
        "3",
        "1e30",
        "-1e30",
        "1e-30",
        "1e-45",
        "nan",
        "inf",
        "-inf",
        "4294967297",
        "9223372036854775807",
        "-9223372036854775808",
        "\"\"",
        "x",
        "true",
        "[]",
        "[1, 2]",
        "[[]]",
        "{}",
        "{a = 1}",
    ];
    // The presets are shared out over the cores (the cases are independent); each thread
    // counts its own.
    let lanes = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    let counts: Vec<[usize; 5]> = std::thread::scope(|s| {
        let handles: Vec<_> =
            (0..lanes).map(|lane| s.spawn(move || hostile_overrides_on(lane, lanes, VALUES))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    let [cases, refused, stepped, large, stopped] =
        counts.iter().fold([0; 5], |a, c| std::array::from_fn(|i| a[i] + c[i]));
    println!(
        "{cases} overrides: {refused} refused, {stepped} ran, {large} built too large to run, {stopped} stopped by other errors"
    );
    assert!(refused > cases / 4 && stepped > cases / 10, "{refused} refused, {stepped} ran of {cases}");
}

/// The hostile overrides of every `lanes`-th preset from `lane` on: how many cases, refused,
/// stepped, built too large to step, and stopped by other errors.
fn hostile_overrides_on(lane: usize, lanes: usize, values: &[&str]) -> [usize; 5] {
    let (mut cases, mut refused, mut stepped, mut large, mut stopped) = (0, 0, 0, 0, 0);
    for (preset, _) in swirly::scene::PRESETS.iter().skip(lane).step_by(lanes) {
        let scene = Scene::preset(preset).expect("preset");
        let mut keys = Vec::new();
        scene_keys(&serde_json::to_value(&scene).expect("scene as JSON"), "", &mut keys);
        for key in &keys {
            for value in values {
                cases += 1;
                let item = format!("{key}={value}");
                let case = std::panic::catch_unwind(|| -> Result<bool, Error> {
                    let mut ov = Vec::new();
                    if !key.starts_with("grid") {
                        ov.push(swirly::scene::parse_override("grid.nx=20")?);
                        ov.push(swirly::scene::parse_override("grid.ny=14")?);
                    }
                    ov.push(swirly::scene::parse_override(&item)?);
                    let scene = Scene::preset_with(preset, &ov)?;
                    // A grid an override made large is refused by the memory check or built;
                    // stepping one of 2^31 cells is beyond a test, so those stop here.
                    if u64::from(scene.grid.nx) * u64::from(scene.grid.ny) > 1 << 16 {
                        return Ok(false);
                    }
                    let mut sim = Simulation::new(scene, CpuBackend::with_threads(1)?)?;
                    let dt = sim.scene().params.dt;
                    for _ in 0..2 {
                        sim.step(dt)?;
                    }
                    sim.render()?;
                    Ok(true)
                });
                match case {
                    Err(_) => panic!("{preset}: `--set {item}` panicked"),
                    Ok(Ok(true)) => stepped += 1,
                    Ok(Ok(false)) => large += 1,
                    Ok(Err(e)) => {
                        let text = e.to_string();
                        // The key as `--set` writes it, or in backticks as errors write it
                        // (`emitters[0].radius`), itself or the table or array that holds it
                        // (`emitters[0].center`: [-1, 0.5] for `emitters.0.center.0=-1`), or
                        // another element of an array that holds it (`render.ramp[1]`: stop
                        // positions must rise, for `render.ramp.0.0=1`).
                        let parts: Vec<&str> = key.split('.').collect();
                        let written = |n: usize| {
                            parts[..n].iter().fold(String::new(), |acc, p| match p.parse::<usize>() {
                                Ok(i) => format!("{acc}[{i}]"),
                                Err(_) if acc.is_empty() => p.to_string(),
                                Err(_) => format!("{acc}.{p}"),
                            })
                        };
                        let named = text.contains(key.as_str())
                            || (1..=parts.len()).any(|n| {
                                text.contains(&format!("`{}`", written(n)))
                                    || text.contains(&format!("`{}`", parts[..n].join(".")))
                                    || (n < parts.len() && text.contains(&format!("`{}[", written(n))))
                            });
                        match e {
                            Error::InvalidValue { .. } | Error::Override { .. } | Error::Scene { .. } => {
                                refused += 1;
                                assert!(named, "{preset}: `--set {item}` refused without naming it: {text}");
                            }
                            _ => stopped += 1,
                        }
                    }
                }
            }
        }
    }
    [cases, refused, stepped, large, stopped]
}

/// The velocity debug view: a block of liquid moving right is drawn red at full value where it
/// covers the picture, and the background shows where there is none; a moving grid's flow is
/// drawn over the whole box.
#[test]
fn the_velocity_view_draws_direction_as_hue() {
    let text = r##"
        [grid]
        nx = 32
        ny = 32
        [params]
        dt = 0.001
        [particles]
        radius = 0.08
        stiffness = 0.0
        near_stiffness = 0.0
        gravity = [0.0, 0.0]
        [[particles.fill]]
        shape = "box"
        min = [0.3, 0.3]
        max = [0.7, 0.7]
        velocity = [1.0, 0.0]
        [render]
        field = "velocity"
        scale = 0.5
        background = "#000000"
    "##;
    let scene = Scene::from_toml(text, "velocity-view").expect("scene");
    let mut sim = Simulation::new(scene, CpuBackend::new().expect("cpu")).expect("simulation");
    sim.step(0.001).expect("step");
    let rgba = sim.render().expect("render").rgba;
    let px = |i: usize, row: usize| &rgba[4 * (row * 32 + i)..4 * (row * 32 + i) + 4];
    assert_eq!(px(16, 16), &[255, 0, 0, 255], "the middle of the block moves right");
    assert_eq!(px(1, 1), &[0, 0, 0, 255], "no liquid in the corner");
    let mut grid = Simulation::new(Scene::preset("taylor-green").expect("preset"), CpuBackend::new().expect("cpu"))
        .expect("simulation");
    let mut scene = grid.scene().clone();
    scene.render.field = swirly::RenderField::Velocity;
    grid.set_scene(scene).expect("scene");
    let rgba = grid.render().expect("render").rgba;
    let coloured = rgba.chunks(4).filter(|p| p[0].max(p[1]).max(p[2]) > 64).count();
    assert!(coloured > rgba.len() / 8, "{coloured} coloured pixels of {}", rgba.len() / 4);
}

/// Layers through the simulation: the speed view puts full white on the fastest cell of a
/// Taylor–Green flow (its scale set to that speed, computed here from `u` and `v`) and black
/// on the slowest; a pressure layer screened over it changes the picture; a particle scene
/// asked for the grid's pressure is refused, naming the key and the field.
#[test]
fn layers_and_debug_views_draw_through_the_simulation() {
    let mut sim = Simulation::new(Scene::preset("taylor-green").expect("preset"), CpuBackend::new().expect("cpu"))
        .expect("simulation");
    sim.step(0.001).expect("step");
    let (nx, ny) = (sim.frame().nx as usize, sim.frame().ny as usize);
    let (u, v) = (sim.field(FieldId::U).expect("u"), sim.field(FieldId::V).expect("v"));
    let speed: Vec<f32> = (0..nx * ny)
        .map(|c| {
            let (i, j) = (c % nx, c / nx);
            let uc = 0.5 * (u[j * (nx + 1) + i] + u[j * (nx + 1) + i + 1]);
            let vc = 0.5 * (v[j * nx + i] + v[(j + 1) * nx + i]);
            uc.hypot(vc)
        })
        .collect();
    let (fast, _) = speed.iter().enumerate().fold((0, 0.0f32), |m, (c, &s)| if s > m.1 { (c, s) } else { m });
    let (slow, _) = speed.iter().enumerate().fold((0, f32::MAX), |m, (c, &s)| if s < m.1 { (c, s) } else { m });
    let mut scene = sim.scene().clone();
    scene.render.layers =
        vec![swirly::Layer { field: swirly::RenderField::Speed, scale: speed[fast], ..Default::default() }];
    sim.set_scene(scene.clone()).expect("scene");
    let rgba = sim.render().expect("render").rgba;
    let px = |rgba: &[u8], c: usize| {
        let row = ny - 1 - c / nx;
        rgba[4 * (row * nx + c % nx)..4 * (row * nx + c % nx) + 4].to_vec()
    };
    assert_eq!(px(&rgba, fast), [255, 255, 255, 255], "the fastest cell");
    assert!(px(&rgba, slow)[0] < 40, "the slowest cell: {:?}", px(&rgba, slow));
    scene.render.layers.push(swirly::Layer {
        field: swirly::RenderField::Pressure,
        blend: swirly::Blend::Screen,
        opacity: 0.5,
        ..Default::default()
    });
    sim.set_scene(scene).expect("scene");
    let both = sim.render().expect("render").rgba;
    assert_eq!(both.len(), rgba.len());
    assert_ne!(both, rgba, "the pressure layer shows");

    let liquid = Scene::preset_with(
        "dam-break",
        &[swirly::scene::parse_override("render.field=\"pressure\"").expect("override")],
    )
    .expect("scene");
    let mut sim = Simulation::new(liquid, CpuBackend::new().expect("cpu")).expect("simulation");
    let e = sim.render().expect_err("a liquid has no pressure field").to_string();
    assert!(e.contains("render.field") && e.contains("pressure") && e.contains("particles"), "{e}");
}

/// `render_on_device` leaves the picture on the backend: its resource holds `render`'s bytes,
/// one word a pixel, at the size it says; a frame the host composes (a liquid's speed view)
/// has none.
#[test]
fn the_picture_stays_on_the_backend_until_read() {
    let mut sim = small();
    sim.splat(Splat { center: [0.3, 0.4], radius: 0.2, density: 1.0, ..Splat::default() }).expect("splat");
    sim.step(0.01).expect("step");
    let (id, (w, h)) = sim.render_on_device().expect("draw").expect("drawn by the kernels");
    assert_eq!((w, h), (16, 12));
    let words = sim.backend_mut().read(id).expect("read");
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(bytes, sim.render().expect("render").rgba);
    assert!(bytes.chunks_exact(4).any(|p| p[0] > 100), "the splat's smoke shows");
    let liquid = Scene::preset_with(
        "dam-break",
        &[swirly::scene::parse_override("render.layers=[{field=\"speed\"}]").expect("override")],
    )
    .expect("scene");
    let mut sim = Simulation::new(liquid, CpuBackend::new().expect("backend")).expect("simulation");
    assert_eq!(sim.render_on_device().expect("draw"), None, "composed on the host");
    assert!(!sim.render().expect("render").rgba.is_empty());
}

/// `small()` after one step, saved, with its header's `key` set to `value` (the checksum
/// made to match).
fn checkpoint_with(key: &str, value: toml::Value) -> Vec<u8> {
    let mut sim = small();
    sim.step(0.01).expect("step");
    let mut file = Vec::new();
    sim.save(&mut file).expect("save");
    let (header, _) = swirly::checkpoint::read_header(file.as_slice()).expect("header");
    let mut table = toml::Table::try_from(&header).expect("table");
    table.insert(key.to_string(), value);
    swirly_core::testing::with_header(&file, &toml::to_string(&table).expect("toml")).expect("rewritten")
}

/// A checkpoint whose checksum matches but whose header holds a time, step count or time
/// step no run reaches is refused, naming the value.
#[test]
fn a_checkpoint_with_impossible_header_values_is_refused() {
    use toml::Value::{Float, Integer};
    let cases = [
        ("time", Float(f64::NAN), "`time` is NaN"),
        ("time", Float(f64::INFINITY), "`time` is inf"),
        ("time", Float(-1.0), "`time` is -1.0"),
        ("steps", Integer(1 << 60), "`steps` is 1152921504606846976"),
        ("last_dt", Float(0.0), "`last_dt` is 0.0"),
        ("last_dt", Float(f64::NAN), "`last_dt` is NaN"),
    ];
    for (key, value, needle) in cases {
        let file = checkpoint_with(key, value.clone());
        let e = Simulation::load(file.as_slice(), CpuBackend::new().expect("cpu")).expect_err(needle);
        assert!(matches!(&e, Error::Checkpoint { problem } if problem.contains(needle)), "{key} = {value}: {e}");
    }
}

/// Steps are counted in 64 bits: a checkpoint at `u32::MAX` steps goes on counting.
#[test]
fn steps_count_past_u32() {
    let file = checkpoint_with("steps", toml::Value::Integer(i64::from(u32::MAX)));
    let mut sim = Simulation::load(file.as_slice(), CpuBackend::new().expect("cpu")).expect("restored");
    assert_eq!(sim.steps(), u64::from(u32::MAX));
    sim.step(0.01).expect("step");
    sim.step(0.01).expect("step");
    assert_eq!(sim.steps(), u64::from(u32::MAX) + 2);
    let mut again = Vec::new();
    sim.save(&mut again).expect("save");
    let (header, _) = swirly::checkpoint::read_header(again.as_slice()).expect("header");
    assert_eq!(header.steps, (1 << 32) + 1);
}

/// A finer dye draws a picture larger than the grid, and the picture says so: `paddle` carries
/// its inks at twice the flow's resolution.
#[test]
fn a_picture_carries_its_own_size() {
    let mut scene = Scene::preset("paddle").expect("preset");
    scene.grid.nx = 48;
    scene.grid.ny = 48;
    let mut sim = Simulation::new(scene, CpuBackend::new().expect("cpu")).expect("simulation");
    let picture = sim.render().expect("render");
    assert_eq!((picture.width, picture.height), (96, 96), "twice the 48² grid");
    assert_eq!((picture.width, picture.height), sim.picture_size());
    assert_eq!(picture.rgba.len(), 4 * 96 * 96);
}
