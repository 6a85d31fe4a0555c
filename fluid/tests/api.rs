//! The library API refuses bad input with typed errors instead of panicking.

use fluid::{Backend, CpuBackend, Error, FieldId, Scene, Simulation, Splat};

fn small() -> Simulation<CpuBackend> {
    let ov: Vec<_> = ["grid.nx=16", "grid.ny=12"].iter().map(|s| fluid::parse_override(s).expect("override")).collect();
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

#[test]
fn fields_of_the_wrong_length_are_refused() {
    let mut sim = small();
    let e = sim.set_field(FieldId::U, &[0.0; 3]).expect_err("wrong length");
    assert!(matches!(e, Error::FieldLength { field: "u", expected: 204, got: 3 }), "{e}");
}

#[test]
fn a_backend_must_be_allocated_first() {
    let mut b = CpuBackend::new().expect("backend");
    assert!(matches!(b.download(FieldId::Density), Err(Error::NotAllocated("cpu"))));
    assert!(matches!(b.upload(FieldId::Density, &[1.0]), Err(Error::NotAllocated("cpu"))));
}

#[test]
fn unknown_backends_are_named() {
    let e = fluid::backend("metal").err().expect("unknown backend");
    assert!(e.to_string().contains("metal") && e.to_string().contains("cpu"), "{e}");
}

#[test]
fn a_schedule_for_another_grid_is_refused() {
    let mut sim = small();
    let other = Scene::preset("smoke").expect("scene");
    let schedule = fluid::Schedule::step(&other.grid().expect("grid"), &other.params);
    let e =
        sim.backend_mut().run(&schedule, &fluid::StepInputs { dt: 0.01, ..Default::default() }).expect_err("refused");
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
        .map(|s| fluid::parse_override(s).expect("override"))
        .collect();
        let scene = Scene::preset_with("smoke", &ov).expect("scene");
        Simulation::new(scene, CpuBackend::new().expect("backend")).expect("simulation")
    };
    let mut mg = sim_with("multigrid", 20);
    for _ in 0..5 {
        mg.step(0.02).expect("step");
        let used = mg.last_iterations();
        assert!((1..=6).contains(&used), "{used} V-cycles");
        let residual = mg.diagnostics().expect("diagnostics").residual;
        assert!(residual <= 1e-4, "{residual:.3e} after {used} V-cycles");
    }
    let mut jacobi = sim_with("jacobi", 30);
    jacobi.step(0.02).expect("step");
    assert_eq!(jacobi.last_iterations(), 30);
    assert!(jacobi.diagnostics().expect("diagnostics").residual > 1e-4);
}

#[test]
fn a_bad_tolerance_is_refused() {
    for bad in ["0.0", "1.5", "nan"] {
        let ov = [fluid::parse_override(&format!("params.pressure.tolerance={bad}")).expect("override")];
        let e = Scene::preset_with("smoke", &ov).expect_err("tolerance").to_string();
        assert!(e.contains("params.pressure.tolerance"), "{e}");
    }
}
