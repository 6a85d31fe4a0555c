//! Checkpoints: a saved and restored run continues with the bits of one that never stopped
//! (on the backend that saved it), within parity of the CPU on another backend; damaged,
//! truncated and foreign files are refused.

use swirly::{CpuBackend, Error, Scene, Simulation, Splat, backend::Backend};

use crate::presets::check_states;
use crate::support::{bits_differ, carried, read_state, small_preset, small_preset_with};

/// The scenes the checkpoint checks run: seven presets (between them every kind of state:
/// smoke, dye, fuel, obstacles moving on paths and held at temperatures, a finer dye), and
/// smoke under every pressure solver, with viscosity, and with a tolerance that stops the
/// solve early.
fn scenes() -> Vec<Scene> {
    // With fuel, moving obstacles on paths and a finer dye, and obstacles held at temperatures;
    // a finer density last.
    let presets = ["smoke", "ink", "taylor-green", "stable-fluid", "fire", "paddle", "radiator"];
    let mut scenes: Vec<Scene> = presets.map(small_preset).into();
    for extra in [
        &["params.pressure.solver=\"jacobi\""][..],
        &["params.pressure.solver=\"sor\""],
        &["params.pressure.solver=\"mgpcg\""],
        &["params.pressure.solver=\"relaxation\""],
        &["params.pressure.solver=\"poisson-filter\""],
        &["params.viscosity=0.002"],
        &["params.pressure.tolerance=1e-4", "params.pressure.iterations=12"],
    ] {
        scenes.push(small_preset_with("smoke", extra));
    }
    // A finer density, with combustion's soot carried to it.
    scenes.push(small_preset_with("fire", &["grid.density_factor=2"]));
    scenes
}

/// `steps` steps of `sim`, a splat before every third.
fn run<B: Backend>(sim: &mut Simulation<B>, steps: u32) {
    let dt = sim.scene().params.dt;
    let (w, h) = (sim.frame().width(), sim.frame().height());
    for k in 0..steps {
        if k % 3 == 0 {
            let s = Splat {
                center: [(0.3 + 0.05 * k as f32) * w, 0.4 * h],
                radius: 0.1 * h,
                velocity: [0.5, 0.2],
                density: 1.0,
                temperature: 0.5,
                dye: [0.2, 0.5, 0.9, 1.0],
                ..Splat::default()
            };
            sim.splat(carried(sim, s)).expect("splat");
        }
        sim.step(dt).expect("step");
    }
}

/// A checkpoint of `sim` with a splat queued (so the file carries one).
fn save<B: Backend>(sim: &mut Simulation<B>) -> Vec<u8> {
    let h = sim.frame().height();
    let s =
        Splat { center: [0.5 * h, 0.5 * h], radius: 0.08 * h, velocity: [-0.4, 0.3], density: 0.7, ..Splat::default() };
    sim.splat(carried(sim, s)).expect("splat");
    let mut bytes = Vec::new();
    sim.save(&mut bytes).expect("save");
    bytes
}

/// Saved after 7 steps and restored on a new backend of the same kind, 5 more steps give the
/// bits of the run that went on: time, step count and queued splats included.
pub fn continuation_is_exact<B: Backend>(make: impl Fn() -> B) {
    for scene in scenes() {
        let mut a = Simulation::new(scene.clone(), make()).expect("simulation");
        run(&mut a, 7);
        let bytes = save(&mut a);
        let mut b = Simulation::load(bytes.as_slice(), make()).expect("load");
        assert_eq!((b.time(), b.steps()), (a.time(), a.steps()), "time and steps");
        assert_eq!(b.scene(), a.scene(), "the scene");
        run(&mut a, 5);
        run(&mut b, 5);
        let what = format!("{} ({:?})", scene.name, scene.params.pressure.solver);
        for (field, (x, y)) in
            swirly_core::grid::step::STATE_FIELDS.iter().zip(read_state(&mut a).iter().zip(&read_state(&mut b)))
        {
            let differ = bits_differ(x, y);
            assert_eq!(differ, 0, "{what}: {}: {differ} of {} values differ after restoring", field.name(), x.len());
        }
    }
}

/// Saved on the CPU and restored on this backend, 5 more steps stay within the preset parity
/// tolerance of the CPU run that went on.
pub fn restores_a_cpu_checkpoint<B: Backend>(make: impl Fn() -> B) {
    for scene in scenes() {
        let grid = scene.grid().expect("grid");
        let mut cpu = Simulation::new(scene.clone(), CpuBackend::new().expect("cpu")).expect("simulation");
        run(&mut cpu, 7);
        let bytes = save(&mut cpu);
        let mut other = Simulation::load(bytes.as_slice(), make()).expect("load");
        run(&mut cpu, 5);
        run(&mut other, 5);
        check_states(&format!("checkpoint-{}", scene.name), &grid, &mut cpu, &mut other);
    }
}

/// The message of the error loading `bytes` on `backend` gives; it must be a checkpoint error.
fn refusal<B: Backend>(bytes: &[u8], backend: B) -> String {
    match Simulation::load(bytes, backend) {
        Err(e @ Error::Checkpoint { .. }) => e.to_string(),
        Err(e) => panic!("expected a checkpoint error, got {e}"),
        Ok(_) => panic!("a damaged checkpoint was restored"),
    }
}

/// Damaged, truncated, foreign and future files are refused, each with a message saying which.
pub fn damaged_files_are_refused<B: Backend>(make: impl Fn() -> B) {
    let mut sim = Simulation::new(small_preset("smoke"), CpuBackend::new().expect("cpu")).expect("simulation");
    run(&mut sim, 3);
    let good = save(&mut sim);
    let expect = |bytes: &[u8], words: &str| {
        let message = refusal(bytes, make());
        assert!(message.contains(words), "`{message}` should say `{words}`");
    };
    // A flipped bit in the payload, in the header, in the checksum.
    for at in [good.len() / 2, 40, good.len() - 3] {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        let message = refusal(&bad, make());
        assert!(message.contains("damaged") || message.contains("header"), "byte {at}: {message}");
    }
    // Cut anywhere: before the header ends, in the payload, before the checksum.
    for len in [0, 5, 12, 30, good.len() / 2, good.len() - 8, good.len() - 1] {
        expect(&good[..len], "truncated");
    }
    let mut longer = good.clone();
    longer.push(0);
    expect(&longer, "follow the checksum");
    let mut foreign = good.clone();
    foreign[..8].copy_from_slice(b"NOTMINE!");
    expect(&foreign, "not a checkpoint");
    let mut future = good.clone();
    let next = swirly_core::checkpoint::VERSION + 1;
    future[8..12].copy_from_slice(&next.to_le_bytes());
    expect(&future, &format!("version {next} is newer"));
    let mut huge = good.clone();
    huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    expect(&huge, "longer than");
    // A header whose resources do not match its scene (with a valid checksum: only the
    // check against the scene catches it).
    let (mut header, _) = swirly_core::checkpoint::read_header(good.as_slice()).expect("header");
    header.resources[0].elements += 1;
    let text = toml::to_string(&header).expect("toml");
    expect(&swirly_core::testing::with_header(&good, &text).expect("a whole file"), "its scene declares");
}

/// A recorded session (splats, steps, a parameter change, a field set, a reset and steps
/// after it), written to TOML, read back and replayed on a new backend, reaches the recorded
/// state bit for bit, and so does one that moves an obstacle; recording cannot start mid-run.
pub fn replay_is_exact<B: Backend>(make: impl Fn() -> B) {
    let scene = small_preset("smoke");
    let mut a = Simulation::new(scene, make()).expect("simulation");
    a.start_recording().expect("record");
    run(&mut a, 4);
    let mut params = a.scene().params.clone();
    params.vorticity += 1.5;
    a.set_params(params).expect("set_params");
    run(&mut a, 3);
    let grid = a.scene().grid().expect("grid");
    let density: Vec<f32> = (0..grid.cells()).map(|k| (k % 7) as f32 * 0.1).collect();
    a.set_field(swirly::FieldId::Density, &density).expect("set_field");
    run(&mut a, 2);
    let middle = read_state(&mut a);
    a.reset().expect("reset");
    run(&mut a, 3);
    let log = a.stop_recording().expect("a log");
    assert!(a.recording().is_none());
    assert_eq!(log.inputs.iter().filter(|i| matches!(i, swirly_core::replay::Input::Step { .. })).count(), 12);
    let text = log.to_toml().expect("toml");
    let read = swirly_core::replay::InputLog::from_toml(&text).expect("read back");
    assert_eq!(read, log, "the log reads back as written");
    let mut b = Simulation::replay(&read, make()).expect("replay");
    assert_eq!((b.steps(), b.time()), (a.steps(), a.time()));
    for (field, (x, y)) in
        swirly_core::grid::step::STATE_FIELDS.iter().zip(read_state(&mut a).iter().zip(&read_state(&mut b)))
    {
        let differ = bits_differ(x, y);
        assert_eq!(differ, 0, "{}: {differ} of {} values differ in the replay", field.name(), x.len());
    }
    // The replay of the log cut before its reset reaches the state before the reset.
    let reset_at = log.inputs.iter().position(|i| matches!(i, swirly_core::replay::Input::Reset)).expect("a reset");
    let cut = swirly_core::replay::InputLog { scene: log.scene.clone(), inputs: log.inputs[..reset_at].to_vec() };
    let mut c = Simulation::replay(&cut, make()).expect("replay");
    for (field, (x, y)) in swirly_core::grid::step::STATE_FIELDS.iter().zip(middle.iter().zip(&read_state(&mut c))) {
        assert_eq!(bits_differ(x, y), 0, "{} before the reset", field.name());
    }
    let err = a.start_recording().expect_err("mid-run");
    assert!(err.to_string().contains("record from a new or reset simulation"), "{err}");

    // Obstacle moves replay too: the obstacles preset, its first solid moved mid-run.
    let mut d = Simulation::new(small_preset("obstacles"), make()).expect("simulation");
    d.start_recording().expect("record");
    run(&mut d, 2);
    let first = d.obstacles()[0].pose;
    let pose =
        swirly::Pose { position: [first.position[0] + 0.05, first.position[1] - 0.03], angle: first.angle + 0.3 };
    d.set_obstacle(0, pose, swirly::Motion { velocity: [0.2, -0.1], angular_velocity: 0.5 }).expect("move");
    run(&mut d, 3);
    let log = d.stop_recording().expect("a log");
    assert!(log.inputs.iter().any(|i| matches!(i, swirly_core::replay::Input::SetObstacle { .. })));
    let read = swirly_core::replay::InputLog::from_toml(&log.to_toml().expect("toml")).expect("read back");
    let mut e = Simulation::replay(&read, make()).expect("replay");
    assert_eq!(e.obstacles(), d.obstacles(), "the obstacles where the run left them");
    for (field, (x, y)) in
        swirly_core::grid::step::STATE_FIELDS.iter().zip(read_state(&mut d).iter().zip(&read_state(&mut e)))
    {
        assert_eq!(bits_differ(x, y), 0, "{} after an obstacle moved", field.name());
    }
}
