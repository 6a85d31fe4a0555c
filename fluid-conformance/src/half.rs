//! Fields stored in `f16` (`storage.format = "f16"`): what a backend stores is the nearest
//! `f16` of what it is given, whole presets in `f16` follow the CPU backend's `f16` run, and stay
//! near the same preset in `f32`.

use swirly::{CpuBackend, FieldId, Simulation, backend::Backend};
use swirly_core::grid::step::STATE_FIELDS;

use crate::compare::{Tolerance, check, difference};
use crate::support::{carried, preset_splat, small_preset_with};

/// A backend's `f16` run against the CPU's `f16` run after [`HALF_STEPS`] steps. Both round
/// every stored value to `f16`, but a value computed 1 ulp of `f32` apart on each lands on
/// different sides of an `f16` rounding boundary now and then (1 in 2¹³ values): a step of
/// 2⁻¹¹ relative that the steps after carry on. A kernel that read or wrote its `f16` values
/// wrongly misses this by orders of magnitude.
pub const HALF_TOLERANCE: Tolerance = Tolerance { max_abs: 5e-3, rel_l2: 2e-3 };

/// Steps of the `f16` runs.
pub const HALF_STEPS: u32 = 20;

/// `preset` with `extra` overrides and every field it may store in `f16` stored so, on the
/// small odd grid, with splats before every seventh step.
fn run<B: Backend>(backend: B, preset: &str, extra: &[&str], format: &str) -> Simulation<B> {
    let format = format!("storage.format={format}");
    let overrides: Vec<&str> = extra.iter().copied().chain([format.as_str()]).collect();
    let scene = small_preset_with(preset, &overrides);
    let dt = scene.params.dt;
    let grid = scene.grid().expect("grid");
    let mut sim = Simulation::new(scene, backend).expect("simulation");
    for k in 0..HALF_STEPS {
        if k % 7 == 0 {
            let s = preset_splat(&grid);
            sim.splat(carried(&sim, s)).expect("splat");
        }
        sim.step(dt).expect("step");
    }
    sim
}

/// `preset` (with `extra`) in `f16` on the backend against the CPU backend's `f16` run, every
/// state field but the pressure (an `f32` field, which follows the velocity's differences).
pub fn half_parity<B: Backend>(make: impl Fn() -> B, preset: &str, extra: &[&str]) {
    let mut cpu = run(CpuBackend::new().expect("cpu backend"), preset, extra, "f16");
    let mut other = run(make(), preset, extra, "f16");
    let grid = cpu.scene().grid().expect("grid");
    let fields = cpu.scene().params.fields;
    for field in STATE_FIELDS.into_iter().filter(|f| fields.carries(*f) && *f != FieldId::Pressure) {
        let (a, b) = (cpu.field(field).expect("cpu field"), other.field(field).expect("field"));
        check(&format!("f16-{preset}"), &grid, field, &a, &b, HALF_TOLERANCE);
    }
}

/// The smoke in `f16` against the smoke in `f32` on one backend, after [`HALF_STEPS`] steps:
/// the density and velocity within 1 % relative L2 (`f16` keeps 11 bits: 5e-4 relative per
/// rounding).
pub fn half_stays_near_f32<B: Backend>(make: impl Fn() -> B) {
    let mut half = run(make(), "smoke", &[], "f16");
    let mut full = run(make(), "smoke", &[], "f32");
    for field in [FieldId::Density, FieldId::U, FieldId::V] {
        let d = difference(&full.field(field).expect("f32 field"), &half.field(field).expect("f16 field"));
        assert!(d.rel_l2 < 1e-2, "smoke, {} in f16 against f32: relative L2 {:.3e}", field.name(), d.rel_l2);
    }
}

/// A field written to a backend in `f16` reads back as the nearest `f16` of each value (ties
/// to even), an odd count included: what every backend stores.
pub fn half_stores_the_nearest_f16<B: Backend>(make: impl Fn() -> B) {
    let scene = small_preset_with("smoke", &["storage.format=f16"]);
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let n = sim.field(FieldId::Density).expect("density").len();
    assert_eq!(n % 2, 0, "45 × 38 cells");
    // Values on and between f16 steps, ties, tiny and large ones.
    let values: Vec<f32> = (0..n)
        .map(|k| {
            let t = k as f32;
            match k % 5 {
                0 => 1.0 + (k % 2048) as f32 * 2f32.powi(-11),
                1 => 1.0 + 2f32.powi(-11) * (0.5 + (k % 7) as f32),
                2 => (t * 0.731).sin() * 1e-3,
                3 => -(t * 3.7),
                _ => 6.0e4 + t,
            }
        })
        .collect();
    sim.set_field(FieldId::Density, &values).expect("set density");
    let read = sim.field(FieldId::Density).expect("density");
    for (k, (&v, &r)) in values.iter().zip(&read).enumerate() {
        let want = half::f16::from_f32(v).to_f32();
        assert_eq!(r.to_bits(), want.to_bits(), "density[{k}]: {v} stored as {r}, the nearest f16 is {want}");
    }
    // The velocity's x-faces: (45 + 1) × 38, read back whole and at a few faces.
    let u: Vec<f32> = (0..sim.field(FieldId::U).expect("u").len()).map(|k| 0.01 * k as f32 - 3.0).collect();
    sim.set_field(FieldId::U, &u).expect("set u");
    let at = [0, 1, 17, u.len() - 1];
    let sampled = sim.backend_mut().download_at(FieldId::U.into(), &at).expect("download_at");
    for (&k, &r) in at.iter().zip(&sampled) {
        assert_eq!(r, half::f16::from_f32(u[k]).to_f32(), "u[{k}]");
    }
}

/// A checkpoint of the smoke in `f16` restored on the backend continues as the run that never
/// stopped: the same bits on the CPU, within [`HALF_TOLERANCE`] elsewhere; and a checkpoint
/// taken on the CPU restores on the backend.
pub fn half_checkpoint_continues<B: Backend>(make: impl Fn() -> B) {
    let mut sim = run(make(), "smoke", &[], "f16");
    let mut bytes = Vec::new();
    sim.save(&mut bytes).expect("save");
    let mut restored = Simulation::load(&bytes[..], make()).expect("load");
    let mut cpu_saved = Vec::new();
    run(CpuBackend::new().expect("cpu backend"), "smoke", &[], "f16").save(&mut cpu_saved).expect("cpu save");
    let mut from_cpu = Simulation::load(&cpu_saved[..], make()).expect("load a CPU checkpoint");
    let dt = sim.scene().params.dt;
    for _ in 0..5 {
        for s in [&mut sim, &mut restored, &mut from_cpu] {
            s.step(dt).expect("step");
        }
    }
    let grid = sim.scene().grid().expect("grid");
    for field in [FieldId::Density, FieldId::Temperature, FieldId::U, FieldId::V] {
        let (a, b) = (sim.field(field).expect("field"), restored.field(field).expect("restored field"));
        if sim.backend().name() == "cpu" {
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{}: bits differ", field.name());
        } else {
            check("f16-checkpoint", &grid, field, &a, &b, HALF_TOLERANCE);
        }
        check("f16-checkpoint-from-cpu", &grid, field, &a, &from_cpu.field(field).expect("field"), HALF_TOLERANCE);
    }
}
