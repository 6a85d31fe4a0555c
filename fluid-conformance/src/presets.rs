//! Whole presets on a backend against the CPU backend, with splats, a growing splat buffer and
//! parameters changed mid-run; and a reset against a new simulation.

use swirly::{CpuBackend, FieldId, Simulation, Splat, backend::Backend, model::Grid};
use swirly_core::grid::step::STATE_FIELDS;

use crate::compare::{Tolerance, check};
use crate::support::{bits_differ, carried, preset_splat, small_preset};

/// Whole presets after [`PRESET_STEPS`] steps: 1e-4 relative L2 and 1e-3 max-abs per field.
/// Per-kernel differences of 1e-6..1e-5 compound over the steps (advection feeds on its own
/// output), and vorticity confinement amplifies small differences; 20 steps keep that growth
/// well inside these bounds while a wrong kernel misses them by orders of magnitude.
pub const PRESET_TOLERANCE: Tolerance = Tolerance { max_abs: 1e-3, rel_l2: 1e-4 };

/// Steps of the preset parity runs.
pub const PRESET_STEPS: u32 = 20;

/// A preset on a small odd grid for [`PRESET_STEPS`] steps (its parameters changed after 12), every state field compared with
/// the CPU backend.
pub fn preset_parity<B: Backend>(make: impl Fn() -> B, preset: &str) {
    let scene = small_preset(preset);
    let dt = scene.params.dt;
    let grid = scene.grid().expect("grid");
    let mut cpu = Simulation::new(scene.clone(), CpuBackend::new().expect("cpu backend")).expect("cpu simulation");
    let mut other = Simulation::new(scene, make()).expect("simulation");
    for k in 0..PRESET_STEPS {
        if k % 7 == 0 {
            let s = preset_splat(&grid);
            cpu.splat(carried(&cpu, s)).expect("splat");
            other.splat(carried(&other, s)).expect("splat");
        }
        if k == 10 {
            // More splats in one step than a GPU backend's first splat buffer holds (16): it
            // grows, and every run after must bind the new buffer.
            for m in 0..40 {
                let s = Splat {
                    center: [(0.1 + 0.02 * m as f32) * grid.width(), (0.2 + 0.015 * m as f32) * grid.height()],
                    radius: 0.04 * grid.height(),
                    density: 0.2,
                    velocity: [0.1, 0.2],
                    ..Splat::default()
                };
                cpu.splat(carried(&cpu, s)).expect("splat");
                other.splat(carried(&other, s)).expect("splat");
            }
        }
        if k == 12 {
            // Parameters changed mid-run (`Simulation::set_params`): a new schedule, with
            // viscous diffusion's longer ping-pong cycle, on the state the old one left.
            let mut params = cpu.scene().params.clone();
            params.vorticity += 2.0;
            params.viscosity += 5e-4;
            cpu.set_params(params.clone()).expect("cpu set_params");
            other.set_params(params).expect("set_params");
        }
        cpu.step(dt).expect("cpu step");
        other.step(dt).expect("step");
    }
    check_states(&format!("preset-{preset}"), &grid, &mut cpu, &mut other);
    let (da, db) = (cpu.diagnostics().expect("cpu diagnostics"), other.diagnostics().expect("diagnostics"));
    // Within 1 %, or within f32 rounding of a divergence (16 ulps of max |u| / h) once the
    // solver has driven it down to that floor (multigrid does).
    let u = cpu.field(FieldId::U).expect("u");
    let floor =
        16.0 * f64::from(f32::EPSILON) * u.iter().fold(0.0f64, |m, x| m.max(f64::from(x.abs()))) / f64::from(grid.h);
    let diff =
        (da.figure("max_divergence").unwrap_or(f64::NAN) - db.figure("max_divergence").unwrap_or(f64::NAN)).abs();
    assert!(
        diff < 1e-2 * da.figure("max_divergence").unwrap_or(f64::NAN) || diff < floor,
        "max |div u|: cpu {:.4e}, other {:.4e} (rounding floor {floor:.1e})",
        da.figure("max_divergence").unwrap_or(f64::NAN),
        db.figure("max_divergence").unwrap_or(f64::NAN)
    );
}

/// Every state field of two simulations of one scene within [`PRESET_TOLERANCE`].
pub(crate) fn check_states<B: Backend>(
    name: &str,
    grid: &Grid,
    cpu: &mut Simulation<CpuBackend>,
    other: &mut Simulation<B>,
) {
    let fields = cpu.scene().params.fields;
    for field in STATE_FIELDS.into_iter().filter(|f| fields.carries(*f)) {
        let mut a = cpu.field(field).expect("cpu field");
        let mut b = other.field(field).expect("field");
        if field == FieldId::Pressure {
            // Pressure with walls or periodic axes all round is defined up to a constant (only
            // its gradient acts), and a warm-started solve that stops after a few iterations
            // lets that constant drift with rounding: compare it with each mean removed.
            remove_mean(&mut a);
            remove_mean(&mut b);
        }
        check(name, grid, field, &a, &b, PRESET_TOLERANCE);
    }
}

/// Subtract the mean (in f64) from every value.
fn remove_mean(x: &mut [f32]) {
    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / x.len().max(1) as f64;
    for v in x {
        *v = (f64::from(*v) - mean) as f32;
    }
}

/// `Simulation::reset` after steps with splats, then more steps: the same bits as a new
/// simulation on the same backend (its buffers, its ping-pong assignment and its prepared
/// work all carry over from before the reset).
pub fn reset_equals_new<B: Backend>(make: impl Fn() -> B) {
    let scene = small_preset("smoke");
    let dt = scene.params.dt;
    let splat = Splat { center: [0.3, 0.4], radius: 0.1, velocity: [0.5, 0.2], density: 1.0, ..Splat::default() };
    let mut a = Simulation::new(scene.clone(), make()).expect("simulation");
    // An odd number of steps, so that the reset starts from another buffer assignment.
    for _ in 0..7 {
        a.splat(carried(&a, splat)).expect("splat");
        a.step(dt).expect("step");
    }
    a.splat(carried(&a, splat)).expect("splat");
    a.reset().expect("reset");
    let mut b = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..5 {
        a.step(dt).expect("step");
        b.step(dt).expect("step");
    }
    let fields = b.scene().params.fields;
    for field in STATE_FIELDS.into_iter().filter(|f| fields.carries(*f)) {
        let (x, y) = (a.field(field).expect("field"), b.field(field).expect("field"));
        let differ = bits_differ(&x, &y);
        assert_eq!(differ, 0, "{}: {differ} of {} values differ from a new simulation's", field.name(), x.len());
    }
}
