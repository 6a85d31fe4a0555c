//! The backend contract beyond the numbers of a step: reductions, waits, samples and queued
//! reads, per-kernel timings, and simulations on several threads at once.

use swirly::{
    Boundary, CpuBackend, FieldId, Scene, Simulation, Splat, backend::Backend, backend::StepInputs, model::Grid,
};
use swirly_core::Schedule;
use swirly_core::grid::step::{self, STATE_FIELDS};
use swirly_core::scene::SplitMix64;

use crate::support::{
    bits_differ, carried, load, random_field, read_state, small_preset, small_preset_with, steps_with_splats,
};

/// Reductions (f32 on the GPU, f64 per row on the CPU): 1e-4 relative.
pub const REDUCTION_TOLERANCE: f64 = 1e-4;

/// The diagnostics reductions (max |div|, ‖residual‖², ‖b‖²) on random fields, from a grid of
/// one partial result per field to one whose dye has more values than the partials' cap
/// (`REDUCE_MAX_PARTIALS` of 1024 values each).
pub fn reduction_parity<B: Backend>(make: impl Fn() -> B) {
    let sizes = [(37u32, 23u32), (300, 211), (520, 509)];
    let (nx, ny) = sizes[sizes.len() - 1];
    assert!(4 * nx * ny > 1024 * swirly_core::ir::uniforms::REDUCE_MAX_PARTIALS, "no grid reaches the partials' cap");
    for (nx, ny) in sizes {
        let grid = Grid::new(nx, ny, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let mut rng = SplitMix64(77);
        let fields: Vec<(FieldId, Vec<f32>)> =
            FieldId::STATE_AND_SCRATCH.iter().map(|f| (*f, random_field(&grid, *f, &mut rng))).collect();
        let inputs = StepInputs { dt: 0.05, ..StepInputs::default() };
        let schedule = step::diagnostics(&grid);
        let mut cpu = CpuBackend::new().expect("cpu backend");
        let mut other = make();
        load(&mut cpu, &grid, &fields);
        load(&mut other, &grid, &fields);
        cpu.run(&schedule, &inputs).expect("cpu run");
        other.run(&schedule, &inputs).expect("run");
        let a = cpu.reductions().expect("cpu reductions");
        let b = other.reductions().expect("reductions");
        assert_eq!(a.len(), b.len());
        for (slot, (x, y)) in a.iter().zip(&b).enumerate() {
            let rel = (x - y).abs() / x.abs().max(1e-30);
            assert!(
                rel < REDUCTION_TOLERANCE,
                "{nx}x{ny}: reduction slot {slot}: cpu {x:.6e}, other {y:.6e} ({rel:.2e})"
            );
        }
    }
}

/// The max |x| reductions never skip a non-finite value: a field with a NaN reduces to NaN,
/// one with an infinity (and no NaN) to +inf, wherever they lie (first, middle or last value,
/// so in the first or last chunk of a GPU's partial sums), and the finite fields stay exact.
pub fn reduction_non_finite<B: Backend>(make: impl Fn() -> B) {
    use swirly_core::grid::step::SLOT_STATE_MAX;
    let grid = Grid::new(300, 211, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
    let mut rng = SplitMix64(78);
    let mut fields: Vec<(FieldId, Vec<f32>)> =
        FieldId::STATE_AND_SCRATCH.iter().map(|f| (*f, random_field(&grid, *f, &mut rng))).collect();
    // Which value of which field goes bad (`at` of the field's length), and the slot's
    // expected result (None: NaN).
    struct Bad {
        field: FieldId,
        at: fn(usize) -> usize,
        value: f32,
        want: Option<f64>,
    }
    let bad = [
        Bad { field: FieldId::U, at: |n| n - 1, value: f32::NAN, want: None },
        Bad { field: FieldId::V, at: |_| 0, value: f32::NEG_INFINITY, want: Some(f64::INFINITY) },
        Bad { field: FieldId::Density, at: |n| n / 2, value: f32::INFINITY, want: Some(f64::INFINITY) },
        Bad { field: FieldId::Temperature, at: |n| n / 3, value: -f32::NAN, want: None },
        Bad { field: FieldId::Dye, at: |n| n - 5, value: f32::NAN, want: None },
    ];
    for b in &bad {
        let data = &mut fields.iter_mut().find(|(f, _)| *f == b.field).expect("field").1;
        let n = data.len();
        data[(b.at)(n)] = b.value;
        if b.field == FieldId::Dye {
            data[n / 7] = f32::INFINITY; // NaN wins over an infinity
        }
    }
    let mut b = make();
    load(&mut b, &grid, &fields);
    b.run(&step::diagnostics(&grid), &StepInputs { dt: 0.05, ..StepInputs::default() }).expect("run");
    let r = b.reductions().expect("reductions");
    for (k, field) in STATE_FIELDS.iter().enumerate() {
        let got = r[SLOT_STATE_MAX + k];
        match bad.iter().find(|b| b.field == *field).map(|b| b.want) {
            Some(None) => assert!(got.is_nan(), "max |{}| = {got}, expected NaN", field.name()),
            Some(Some(want)) => assert_eq!(got, want, "max |{}|", field.name()),
            None => {
                let data = &fields.iter().find(|(f, _)| f == field).expect("field").1;
                let want = data.iter().fold(0.0f32, |m, x| m.max(x.abs()));
                assert_eq!(got, f64::from(want), "max |{}| of a finite field", field.name());
            }
        }
    }
}

/// The spin budget of a backend's waits ([`swirly_core::wait`], `Backend::wait_spin`): a
/// backend that never waits for a device (the CPU's) has none and refuses one by name; a GPU
/// backend's default is zero on a CPU device (lavapipe, whose work runs on the cores a poll
/// would take) and [`swirly_core::wait::DEFAULT_SPIN`] on a hardware GPU, unless
/// `FLUID_GPU_SPIN_US` sets it; a budget past [`swirly_core::wait::MAX_SPIN`] is an error naming
/// it; and polled waits step alike with blocking ones ([`polled_waits_step_alike`]).
pub fn wait_spin_contract<B: Backend>(make: impl Fn() -> B) {
    use std::time::Duration;
    use swirly_core::wait;
    let mut b = make();
    let Some(default) = b.wait_spin() else {
        let e = b.set_wait_spin(Duration::from_millis(1)).expect_err("no device to wait for");
        assert!(e.to_string().contains("wait spin") && e.to_string().contains(b.name()), "{e}");
        return;
    };
    // The GPU backends name their device `… (…, <device type>)`.
    let cpu_device = b.device().ends_with(", Cpu)");
    match wait::spin_from_env().expect("a valid FLUID_GPU_SPIN_US") {
        None => {
            let expected = if cpu_device { Duration::ZERO } else { wait::DEFAULT_SPIN };
            assert_eq!(default, expected, "{}", b.device());
        }
        Some(spin) => assert_eq!(default, spin),
    }
    let e = b.set_wait_spin(wait::MAX_SPIN + Duration::from_micros(1)).expect_err("past the longest budget");
    assert!(e.to_string().contains("wait spin"), "{e}");
    assert_eq!(b.wait_spin(), Some(default), "a refused budget leaves the one before");
    drop(b);
    polled_waits_step_alike(|spin| {
        let mut b = make();
        b.set_wait_spin(spin).expect("spin");
        assert_eq!(b.wait_spin(), Some(spin));
        b
    });
}

/// Waits that poll the device before they block ([`swirly_core::wait`]) change nothing but
/// when the calling thread wakes: `make(spin)` is a GPU backend with that spin budget, and
/// steps with splats, each followed by `finish` and a read of the residual, give the same bits
/// with no polling, with a budget too short for any wait (every one falls back to blocking)
/// and with one long enough for most.
pub fn polled_waits_step_alike<B: Backend>(make: impl Fn(std::time::Duration) -> B) {
    use std::time::Duration;
    let run = |spin: Duration| {
        let scene = small_preset("smoke");
        let dt = scene.params.dt;
        let mut sim = Simulation::new(scene, make(spin)).expect("simulation");
        for k in 0..6 {
            let splat = Splat { center: [0.3 + 0.05 * k as f32, 0.4], radius: 0.1, density: 1.0, ..Splat::default() };
            sim.splat(carried(&sim, splat)).expect("splat");
            sim.step(dt).expect("step");
            sim.backend_mut().finish().expect("finish");
            sim.diagnostics().expect("diagnostics");
        }
        read_state(&mut sim)
    };
    let blocking = run(Duration::ZERO);
    for spin in [Duration::from_micros(1), Duration::from_millis(200)] {
        for (field, (a, b)) in STATE_FIELDS.iter().zip(blocking.iter().zip(&run(spin))) {
            let differ = bits_differ(a, b);
            assert_eq!(differ, 0, "{}: {differ} of {} values differ with a spin of {spin:?}", field.name(), a.len());
        }
    }
}

/// `Simulation::sample`, which reads back only the values its points interpolate
/// (`Backend::download_at`), equals `Grid::sample` on the whole field read back, bit for bit:
/// every public field, on a walled and a periodic grid, at a few points (each backend's own
/// copies) and at thousands (the whole-field path), the box's edges and corners among them. An
/// index past a field is an error naming it.
pub fn samples_equal_whole_field_samples<B: Backend>(make: impl Fn() -> B) {
    for preset in ["smoke", "taylor-green"] {
        // Every field a scene may carry: smoke with dye too.
        let scene = small_preset_with(preset, &["params.fields.dye=true"]);
        let dt = scene.params.dt;
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        for k in 0..4 {
            let splat = Splat {
                center: [0.3 + 0.1 * k as f32, 0.5],
                radius: 0.1,
                velocity: [0.4, 0.3],
                density: 1.0,
                dye: [0.2, 0.5, 0.9, 1.0],
                ..Splat::default()
            };
            sim.splat(carried(&sim, splat)).expect("splat");
            sim.step(dt).expect("step");
        }
        let g = sim.scene().grid().expect("grid");
        let (w, h) = (g.width(), g.height());
        let mut rng = SplitMix64(17);
        let mut few = vec![[0.0, 0.0], [w, h], [w, 0.0], [0.0, h], [0.5 * g.h, 0.5 * g.h], [w * 0.5, h * 0.25]];
        few.extend((0..4).map(|_| [w * rng.next_f32(), h * rng.next_f32()]));
        let many: Vec<[f32; 2]> = (0..3000).map(|_| [w * rng.next_f32(), h * rng.next_f32()]).collect();
        let carried: Vec<FieldId> = FieldId::public().filter(|f| sim.carries(*f) && f.samples()).collect();
        for field in carried {
            let whole = sim.field(field).expect("field");
            for points in [&few[..], &many[..]] {
                let got = sim.sample(field, points).expect("sample");
                let want = g.sample(field, &whole, points).expect("sample of the whole field");
                let differ = bits_differ(&got, &want);
                assert_eq!(got.len(), want.len());
                assert_eq!(
                    differ,
                    0,
                    "{preset}, {}: {differ} of {} samples at {} points differ",
                    field.name(),
                    got.len(),
                    points.len()
                );
            }
        }
        let len = g.len(FieldId::U);
        let e = sim.backend_mut().download_at(FieldId::U.into(), &[0, len]).expect_err("past the field");
        assert!(e.to_string().contains(&format!("u[{len}]")), "{e}");
        assert!(sim.backend_mut().download_at(FieldId::U.into(), &[]).expect("no values").is_empty());
    }
    // Reads past what a GPU backend's kept read-back buffer holds (`Gather::KEPT_BYTES`) take a
    // buffer of their own; the ones before and after, and one of exactly its size, the kept one.
    let mut scene = small_preset("smoke");
    (scene.grid.nx, scene.grid.ny) = (200, 200);
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let len = sim.scene().grid().expect("grid").len(FieldId::Density);
    let data: Vec<f32> = (0..len).map(|k| k as f32 * 0.25).collect();
    sim.set_field(FieldId::Density, &data).expect("density");
    let kept = (swirly_core::backend::Gather::KEPT_BYTES / 4) as usize;
    for (start, n) in [(3, 10), (1000, kept + 600), (5, kept), (7, 3)] {
        // Fewer values than half the field, in one run: copied, not read whole.
        assert!(2 * n < len);
        let indices: Vec<usize> = (start..start + n).rev().collect();
        let got = sim.backend_mut().download_at(FieldId::Density.into(), &indices).expect("values");
        let want: Vec<f32> = indices.iter().map(|&k| data[k]).collect();
        assert_eq!(bits_differ(&got, &want), 0, "{n} values from {start}");
    }
}

/// Samples asked for without waiting (`Simulation::request_sample`, through
/// `Backend::queue_download_at`) give the state as of their request, whatever steps follow:
/// the same bits as `Simulation::sample` at that moment, for a few points (the copied values)
/// and thousands (the whole field), taken by polling or by waiting, many in flight at once and
/// taken out of order; whole fields (`Simulation::request_field`) likewise. Each is handed over once (again is an error), another simulation's
/// backend refuses it, an empty one is there at once, a read larger than the kept read-back
/// buffer comes back whole, reads dropped unread are freed, and a read polled right after it
/// is queued behind steps still running is either not there or right, never early.
pub fn queued_reads_give_the_state_of_their_request<B: Backend>(make: impl Fn() -> B) {
    // Smoke with dye too: reads of four channels per cell.
    let scene = small_preset_with("smoke", &["params.fields.dye=true"]);
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene.clone(), make()).expect("simulation");
    let splat = |k: usize| Splat {
        center: [0.2 + 0.15 * k as f32, 0.4],
        radius: 0.1,
        velocity: [0.5, 0.6],
        density: 1.0,
        temperature: 1.0,
        dye: [0.2, 0.5, 0.9, 1.0],
        ..Splat::default()
    };
    let g = sim.scene().grid().expect("grid");
    let (w, h) = (g.width(), g.height());
    let mut rng = SplitMix64(23);
    let few: Vec<[f32; 2]> = (0..6).map(|_| [w * rng.next_f32(), h * rng.next_f32()]).collect();
    let many: Vec<[f32; 2]> = (0..3000).map(|_| [w * rng.next_f32(), h * rng.next_f32()]).collect();
    let (mut asked, mut want) = (Vec::new(), Vec::new());
    let (mut asked_fields, mut want_fields) = (Vec::new(), Vec::new());
    for k in 0..3 {
        sim.splat(carried(&sim, splat(k))).expect("splat");
        sim.step(dt).expect("step");
        for field in [FieldId::Density, FieldId::U, FieldId::Dye] {
            for points in [&few[..], &many[..]] {
                want.push(sim.sample(field, points).expect("sample"));
                asked.push(sim.request_sample(field, points).expect("request"));
            }
            want_fields.push(sim.field(field).expect("field"));
            asked_fields.push(sim.request_field(field).expect("request"));
        }
    }
    let queued = asked.len() + asked_fields.len();
    assert_eq!(sim.backend().queued_reads(), if sim.backend().name() == "cpu" { 0 } else { queued });
    // Steps after the requests, which change every field sampled.
    for k in 0..3 {
        sim.splat(carried(&sim, splat(k))).expect("splat");
        sim.step(dt).expect("step");
    }
    assert_ne!(sim.sample(FieldId::Density, &few).expect("sample"), want[0], "the steps changed nothing");
    // Taken last first: every other one by polling until it is there, the rest by waiting.
    let mut taken = Vec::new();
    for (n, (mut pending, want)) in asked.into_iter().zip(want).enumerate().rev() {
        let field = pending.field();
        assert!(!pending.is_taken(), "read {n} is not taken before it is handed over");
        let got = if n % 2 == 0 {
            let got = poll_until(&format!("read {n}"), || sim.poll_sample(&mut pending).expect("poll"));
            assert!(pending.is_taken());
            taken.push(pending);
            got
        } else {
            sim.wait_sample(pending).expect("wait")
        };
        let differ = bits_differ(&got, &want);
        assert_eq!((got.len(), differ), (want.len(), 0), "read {n} of {field}: {differ} samples differ");
    }
    // Whole fields, each waited for, the oldest first.
    for (n, (pending, want)) in asked_fields.into_iter().zip(want_fields).enumerate() {
        let field = pending.field();
        let got = sim.wait_field(pending).expect("field");
        let differ = bits_differ(&got, &want);
        assert_eq!((got.len(), differ), (want.len(), 0), "field read {n} ({field}): {differ} values differ");
    }
    assert_eq!(sim.backend().queued_reads(), 0);
    // Handed over once.
    let e = sim.poll_sample(&mut taken[0]).expect_err("taken already").to_string();
    assert!(e.contains("handed over already"), "{e}");
    // Another simulation's backend (of the same kind) does not hold it.
    let mut other = Simulation::new(scene.clone(), make()).expect("simulation");
    let pending = sim.request_sample(FieldId::Density, &few).expect("request");
    match other.wait_sample(pending) {
        // The CPU backend reads at once: its values travel with the request.
        Ok(got) if sim.backend().name() == "cpu" => assert_eq!(got.len(), few.len()),
        Ok(_) => panic!("another backend handed over this read"),
        Err(e) => assert!(e.to_string().contains("no such read"), "{e}"),
    }
    // Nothing asked for: there at once.
    let mut empty = sim.request_sample(FieldId::Density, &[]).expect("request");
    assert_eq!(sim.poll_sample(&mut empty).expect("poll"), Some(Vec::new()));
    // Dropped unread: freed once the device is done with them (at the next read).
    for _ in 0..20 {
        drop(sim.request_sample(FieldId::V, &few).expect("request"));
    }
    sim.backend_mut().finish().expect("finish");
    let pending = sim.request_sample(FieldId::V, &few).expect("request");
    assert!(sim.backend().queued_reads() <= 1, "{} reads held", sim.backend().queued_reads());
    let want = sim.sample(FieldId::V, &few).expect("sample");
    assert_eq!(bits_differ(&sim.wait_sample(pending).expect("wait"), &want), 0);
    assert_eq!(sim.backend().queued_reads(), 0);
    reads_past_the_kept_buffer_and_early(&make, scene, dt);
}

/// Reads larger than the kept read-back buffer come back whole; a read polled at once behind
/// queued steps is not there or right, never early.
fn reads_past_the_kept_buffer_and_early<B: Backend>(make: &impl Fn() -> B, scene: Scene, dt: f32) {
    // Past the kept read-back buffer (`Gather::KEPT_BYTES`).
    let mut big = scene;
    (big.grid.nx, big.grid.ny) = (200, 200);
    let mut sim = Simulation::new(big, make()).expect("simulation");
    let len = sim.scene().grid().expect("grid").len(FieldId::Density);
    let data: Vec<f32> = (0..len).map(|k| k as f32 * 0.5).collect();
    sim.set_field(FieldId::Density, &data).expect("density");
    let kept = (swirly_core::backend::Gather::KEPT_BYTES / 4) as usize;
    let indices: Vec<usize> = (9..9 + kept + 500).rev().collect();
    let read = sim.backend_mut().queue_download_at(FieldId::Density.into(), &indices).expect("queue");
    sim.step(dt).expect("step");
    let got = sim.backend_mut().wait_download(read).expect("values");
    let want: Vec<f32> = indices.iter().map(|&k| data[k]).collect();
    assert_eq!(bits_differ(&got, &want), 0);
    // A whole field past it too, polled.
    let before = sim.field(FieldId::Density).expect("field");
    let mut pending = sim.request_field(FieldId::Density).expect("request");
    assert!(!pending.is_taken(), "a field request is not taken before it is handed over");
    sim.set_field(FieldId::Density, &vec![0.0; len]).expect("density");
    let got = poll_until("the field", || sim.poll_field(&mut pending).expect("poll"));
    assert_eq!(bits_differ(&got, &before), 0);
    assert!(pending.is_taken());
    let e = sim.backend_mut().queue_download_at(FieldId::Density.into(), &[0, len]).expect_err("past the field");
    assert!(e.to_string().contains(&format!("density[{len}]")), "{e}");
    // Polled at once, behind steps still on the device: not there yet, or there with the state
    // they leave; never early with what the read-back buffer held before the copy.
    for _ in 0..3 {
        sim.step(dt).expect("step");
    }
    let mut pending = sim.request_field(FieldId::Density).expect("request");
    let early = sim.poll_field(&mut pending).expect("poll");
    let want = sim.field(FieldId::Density).expect("field");
    assert!(want.iter().any(|x| *x != 0.0), "the emitter left no density");
    let got = match early {
        Some(got) => got,
        None => {
            assert!(!pending.is_taken(), "a read not there yet is not taken");
            poll_until("the field behind queued steps", || sim.poll_field(&mut pending).expect("poll"))
        }
    };
    assert_eq!(bits_differ(&got, &want), 0, "a read polled at once, behind queued steps");
}

/// What `poll` returns once it returns something, polled every millisecond; failing after 60 s.
fn poll_until<T>(what: &str, mut poll: impl FnMut() -> Option<T>) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(got) = poll() {
            return got;
        }
        assert!(start.elapsed().as_secs() < 60, "{what} not there after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Per-kernel timings count every dispatch: three runs of a step give each of its kernels three
/// times its dispatches in the schedule, labelled `fluid.<kernel>`, and nothing else, with
/// finite, non-negative times; taking them starts afresh, and turning timing off makes taking
/// them an error. The diagnostics count their reductions as `reduce`. Steps of four presets and
/// solvers (multigrid with forces; periodic with implicit viscosity; Jacobi sweeps; MGPCG), each
/// with its emitters' splats.
pub fn timings_count_each_kernels_dispatches<B: Backend>(make: impl Fn() -> B) {
    use std::collections::BTreeMap;
    use swirly_core::KernelTiming;
    let cases: [(&str, &[&str]); 4] = [
        ("smoke", &[]),
        ("taylor-green", &[]),
        ("stable-fluid", &[]),
        ("smoke", &["params.pressure.solver=\"mgpcg\""]),
    ];
    const RUNS: u32 = 3;
    // Invocations per label, as timed and as the schedule dispatches them in `runs` runs.
    let counts = |timings: &[KernelTiming]| -> BTreeMap<String, u32> {
        timings.iter().map(|t| (t.label.clone(), t.invocations)).collect()
    };
    let dispatched = |schedule: &Schedule, runs: u32| -> BTreeMap<String, u32> {
        let mut want = BTreeMap::new();
        for d in schedule.dispatches() {
            *want.entry(d.kernel.label()).or_default() += runs;
        }
        want
    };
    for (preset, extra) in cases {
        let ov: Vec<_> = ["grid.nx=45", "grid.ny=38"]
            .iter()
            .chain(extra)
            .map(|s| swirly::scene::parse_override(s).expect("override"))
            .collect();
        let scene = Scene::preset_with(preset, &ov).expect("preset");
        let grid = scene.grid().expect("grid");
        let schedule = step::step(&grid, &scene.params);
        let what = format!("{preset} {extra:?}");
        assert_eq!(schedule.reduction_slots(), 0, "{what}: a step schedule with reductions");
        let dt = scene.params.dt;
        let records = swirly_core::splat::records(&scene.emitter_splats(&grid, dt), &grid).expect("splats");
        let inputs = StepInputs { dt, records, ..StepInputs::default() };
        let mut b = make();
        load(&mut b, &grid, &scene.initial_fields(&grid));
        b.set_timing(true).expect("timing");
        for _ in 0..RUNS {
            b.run(&schedule, &inputs).expect("run");
        }
        let timings = b.take_timings().expect("timings");
        let got = counts(&timings);
        assert_eq!(got.len(), timings.len(), "{what}: a label twice in {timings:?}");
        assert_eq!(got, dispatched(&schedule, RUNS), "{what}: invocations per kernel");
        for t in &timings {
            assert!(t.ms.is_finite() && t.ms >= 0.0, "{what}: {} took {} ms", t.label, t.ms);
        }
        assert!(timings.iter().any(|t| t.ms > 0.0), "{what}: every kernel took no time");
        assert_eq!(b.take_timings().expect("timings"), Vec::new(), "{what}: taken twice");
        b.run(&schedule, &inputs).expect("run");
        let once = counts(&b.take_timings().expect("timings"));
        assert_eq!(once, dispatched(&schedule, 1), "{what}: one run after taking");
        // The diagnostics: their kernels, and every reduction as `reduce`, one pass each on the
        // CPU and two on a GPU (partial sums, then their total).
        let diagnostics = step::diagnostics(&grid);
        b.run(&diagnostics, &inputs).expect("diagnostics");
        let got = counts(&b.take_timings().expect("timings"));
        let reductions =
            diagnostics.ops().iter().filter(|op| matches!(op, swirly_core::Op::Reduce { .. })).count() as u32;
        assert!(reductions > 0, "{what}: diagnostics without reductions");
        let mut want = dispatched(&diagnostics, 1);
        want.insert("fluid.reduce".to_string(), reductions * if b.name() == "cpu" { 1 } else { 2 });
        assert_eq!(got, want, "{what}: the diagnostics' invocations");
        b.set_timing(false).expect("timing off");
        b.run(&schedule, &inputs).expect("run");
        b.take_timings().expect_err("timings taken with timing off");
    }
}

/// Two simulations on two threads at once, each backend made, stepped and dropped on its own
/// thread (an application with two effects, or a tool running scenes side by side): each gives
/// the same bits as the same simulation run alone. The two runs have different lengths, so one
/// thread's teardown overlaps the other's steps, and there are three rounds, so that setups
/// overlap steps and teardowns too.
pub fn concurrent_equals_alone<B: Backend>(make: impl Fn() -> B + Sync) {
    let run = |steps: usize| steps_with_splats("smoke", make(), steps);
    let lengths = [9, 14];
    let alone = lengths.map(run);
    for round in 0..3 {
        let together = std::thread::scope(|s| {
            let handles = lengths.map(|n| s.spawn(move || run(n)));
            handles.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        });
        for (t, (got, want)) in together.iter().zip(&alone).enumerate() {
            for ((field, x), y) in STATE_FIELDS.iter().zip(got).zip(want) {
                let differ = bits_differ(x, y);
                assert_eq!(
                    differ,
                    0,
                    "round {round}, thread {t}: {}: {differ} of {} values differ from the run alone",
                    field.name(),
                    x.len()
                );
            }
        }
    }
}

/// Transient resources that share memory change no result: a multigrid scene (whose
/// diagnostics `scratch` shares the solver's workspace) steps, with diagnostics between the
/// steps, to the same bits on its declared resources as on the same resources each with
/// memory of its own; its memory report counts the shared memory once; and a transient
/// resource cannot be read or written from outside a run.
pub fn transient_sharing_changes_no_result<B: Backend>(make: impl Fn() -> B) {
    use swirly_core::ir::resource::owners;
    use swirly_core::{GridFields, Lifetime};
    for precision in ["double-float", "single"] {
        let scene = small_preset_with(
            "smoke",
            &[
                "params.pressure.solver=multigrid",
                &format!("params.pressure.precision={precision}"),
                "params.pressure.iterations=2",
            ],
        );
        let grid = scene.grid().expect("grid");
        let params = &scene.params;
        let shared = GridFields::declare(&grid, params).resources().to_vec();
        let (scratch, workspace) = (FieldId::Scratch.index(), FieldId::Multigrid.index());
        let own = owners(&shared);
        assert_eq!((own[scratch], own[workspace]), (workspace, workspace), "scratch shares the workspace");
        let apart: Vec<_> = shared
            .iter()
            .map(|r| {
                if r.shares().is_some() {
                    swirly_core::ResourceDesc { lifetime: Lifetime::Scratch, ..r.clone() }
                } else {
                    r.clone()
                }
            })
            .collect();
        let run = |resources: &[swirly_core::ResourceDesc]| {
            let mut b = make();
            b.allocate(resources).expect("allocate");
            let records = swirly_core::splat::records(&scene.initial_splats(&grid), &grid).expect("splats");
            let mut inputs = StepInputs { dt: params.dt, records, ..StepInputs::default() };
            for (field, data) in scene.initial_fields(&grid) {
                b.upload(field.into(), &data).expect("upload");
            }
            b.run(&step::initialize(&grid, params), &inputs).expect("initialize");
            let (stepping, diagnostics) = (step::step(&grid, params), step::diagnostics(&grid));
            let mut reductions = Vec::new();
            for k in 0..6 {
                let splats = if k % 2 == 0 { scene.initial_splats(&grid) } else { Vec::new() };
                inputs.records = swirly_core::splat::records(&splats, &grid).expect("splats");
                b.run(&stepping, &inputs).expect("step");
                b.run(&diagnostics, &inputs).expect("diagnostics");
                reductions.push(b.reductions().expect("reductions"));
            }
            let state: Vec<Vec<f32>> =
                [FieldId::U, FieldId::V, FieldId::Pressure, FieldId::PressureLo, FieldId::Density]
                    .iter()
                    .map(|f| b.download((*f).into()).expect("download"))
                    .collect();
            (b, state, reductions)
        };
        let (mut b, state, reductions) = run(&shared);
        let (c, alone, alone_reductions) = run(&apart);
        for (k, (x, y)) in state.iter().zip(&alone).enumerate() {
            assert_eq!(bits_differ(x, y), 0, "{precision}: state field {k} differs where memory is shared");
        }
        assert_eq!(reductions, alone_reductions, "{precision}: diagnostics differ where memory is shared");
        if let (Ok(m), Ok(n)) = (b.memory(), c.memory()) {
            let bytes = |m: &swirly_core::MemoryReport, i: usize| m.resources[i].1;
            assert_eq!(bytes(&m, scratch), 0, "scratch counts nothing of its own");
            assert!(bytes(&m, workspace) >= shared[workspace].bytes());
            assert!(
                m.total + shared[scratch].bytes() <= n.total,
                "{precision}: shared {} bytes, apart {} bytes",
                m.total,
                n.total
            );
        }
        for e in [
            b.download(FieldId::Scratch.into()).map(|_| ()).expect_err("read"),
            b.upload(FieldId::Multigrid.into(), &vec![0.0; shared[workspace].len as usize]).expect_err("write"),
        ] {
            assert!(e.to_string().contains("transient"), "{e}");
        }
    }
}

/// Every splat of a step applies, up to [`swirly_core::splat::MAX_SPLATS`] (llvmpipe once
/// dropped those past about 21,800): the `splat` kernel with that many splats adds what the
/// CPU backend adds; one more is an error before anything runs, naming the bound.
pub fn every_splat_applies_up_to_the_cap<B: Backend>(make: impl Fn() -> B) {
    use swirly::Falloff;
    use swirly_core::splat::MAX_SPLATS;
    let grid = Grid::new(24, 20, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
    let mut rng = SplitMix64(5);
    let splats: Vec<Splat> = (0..MAX_SPLATS)
        .map(|k| Splat {
            center: [2.4 * rng.next_f32(), 2.0 * rng.next_f32()],
            radius: 0.15,
            falloff: if k % 2 == 0 { Falloff::Linear } else { Falloff::Gaussian },
            velocity: [rng.next_f32() - 0.5, rng.next_f32() - 0.5],
            density: 1e-3,
            temperature: 1e-3,
            dye: [1e-3, 0.0, 2e-3, 1e-3],
            fuel: 0.0,
        })
        .collect();
    let fields = [
        FieldId::U,
        FieldId::V,
        FieldId::Density,
        FieldId::Temperature,
        FieldId::Dye,
        FieldId::UFaces,
        FieldId::VFaces,
    ];
    let dye = swirly_core::grid::uniforms::DyeParams { factor: 1, ..Default::default() };
    let params = Some(swirly_core::ir::schedule::ParamBlock::new(&dye));
    let schedule =
        crate::support::single(&grid, swirly_core::grid::kernels::SPLAT, &fields, params, [grid.nx + 1, grid.ny + 1]);
    let apply = |b: &mut dyn Backend, splats: Vec<Splat>| {
        load_zeros(b, &grid);
        let inputs =
            StepInputs { dt: 0.1, records: swirly_core::splat::records(&splats, &grid)?, ..StepInputs::default() };
        b.run(&schedule, &inputs)?;
        Ok::<_, swirly::Error>(fields.iter().map(|f| b.download((*f).into()).expect("download")).collect::<Vec<_>>())
    };
    let mut cpu = CpuBackend::new().expect("cpu backend");
    let mut other = make();
    let want = apply(&mut cpu, splats.clone()).expect("cpu splats");
    let got = apply(&mut other, splats.clone()).expect("splats");
    // The written fields (the faces' geometry is read only, and absent here).
    for ((f, a), b) in fields.iter().zip(&want).zip(&got).take(5) {
        let scale = a.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert!(scale > 0.01, "{f:?}: the splats add {scale} at most");
        let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
        assert!(worst <= 1e-4 * scale, "{f:?}: {worst} off of {scale}");
    }
    let mut more = splats;
    more.push(more[0]);
    let e = apply(&mut other, more).expect_err("one past the cap").to_string();
    assert!(e.contains(&MAX_SPLATS.to_string()) && e.contains("splats"), "{e}");
    // Records past what a backend's buffer holds are refused by the backend itself.
    let words = vec![0u32; swirly_core::backend::MAX_RECORD_BYTES / 4 + 16];
    let inputs = StepInputs { dt: 0.1, records: swirly_core::Records::of(&words), ..StepInputs::default() };
    load_zeros(&mut other, &grid);
    let e = other.run(&schedule, &inputs).expect_err("records past the buffer").to_string();
    assert!(e.contains(&swirly_core::backend::MAX_RECORD_BYTES.to_string()), "{e}");
}

/// Every field of `grid` allocated on `b`, all zero.
fn load_zeros(b: &mut dyn Backend, grid: &Grid) {
    b.allocate(swirly_core::GridFields::all(grid).resources()).expect("allocate");
    for f in FieldId::STATE_AND_SCRATCH {
        b.upload((*f).into(), &vec![0.0; grid.len(*f)]).expect("zero");
    }
}

/// `params.cfl` splits a step into `⌈dt · max|u| / (cfl · h)⌉` substeps (at most
/// `params.max_substeps`): the same bits as that many steps of `dt / n` taken by hand, the
/// queued splats in the first; without it every step is whole.
pub fn cfl_splits_steps_into_substeps<B: Backend>(make: impl Fn() -> B) {
    let mut scene = small_preset("taylor-green");
    scene.params.dt *= 4.0;
    let dt = scene.params.dt;
    let h = scene.grid().expect("grid").h;
    let splat =
        Splat { center: [0.3, 0.4], radius: 0.2, velocity: [0.5, -0.2], dye: [0.1, 0.2, 0.3, 0.4], ..Splat::default() };
    let mut whole = Simulation::new(scene.clone(), make()).expect("simulation");
    whole.step(dt).expect("step");
    assert_eq!(whole.last_substeps(), 1);
    let mut split = scene.clone();
    split.params.cfl = Some(0.5);
    let mut a = Simulation::new(split.clone(), make()).expect("simulation");
    let mut b = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..3 {
        let speed = a.diagnostics().expect("diagnostics").max_velocity;
        let n = ((f64::from(dt) * speed / (0.5 * f64::from(h))).ceil() as u32).clamp(1, 8);
        assert!(n > 1, "the flow should need substeps: {speed} at dt {dt}, h {h}");
        a.splat(carried(&a, splat)).expect("splat");
        a.step(dt).expect("step");
        assert_eq!(a.last_substeps(), n);
        b.splat(carried(&b, splat)).expect("splat");
        for _ in 0..n {
            b.step(dt / n as f32).expect("step");
        }
    }
    assert_eq!(a.steps(), 3);
    for (field, (x, y)) in STATE_FIELDS.iter().zip(read_state(&mut a).iter().zip(&read_state(&mut b))) {
        assert_eq!(bits_differ(x, y), 0, "{}: substeps differ from steps of dt/n", field.name());
    }
    split.params.max_substeps = 2;
    let mut capped = Simulation::new(split, make()).expect("simulation");
    capped.step(dt).expect("step");
    assert_eq!(capped.last_substeps(), 2, "at most max_substeps");
}
