//! What the topics share: the small presets the whole-step checks run, steps with splats, reads
//! of the state and their bit-for-bit comparison, and single-dispatch schedules.

use fluid::{Backend, FieldId, Grid, GridFields, Scene, Simulation, Splat};
use fluid_core::grid::step::STATE_FIELDS;
use fluid_core::ir::schedule::ParamBlock;
use fluid_core::scene::SplitMix64;
use fluid_core::{Kernel, ResourceId, Schedule};

/// A preset on the small odd grid (45 × 38) the whole-step checks run on.
pub fn small_preset(preset: &str) -> Scene {
    small_preset_with(preset, &[])
}

/// [`small_preset`] with more overrides.
pub fn small_preset_with(preset: &str, extra: &[&str]) -> Scene {
    let ov: Vec<_> =
        ["grid.nx=45", "grid.ny=38"].iter().chain(extra).map(|s| fluid::parse_override(s).expect("override")).collect();
    Scene::preset_with(preset, &ov).expect("preset")
}

/// How many values of `a` and `b` differ in their bits.
pub fn bits_differ(a: &[f32], b: &[f32]) -> usize {
    a.iter().zip(b).filter(|(p, q)| p.to_bits() != q.to_bits()).count()
}

/// The [`STATE_FIELDS`] after `steps` steps of the small `preset` ([`small_preset`]) on
/// `backend`, with a splat before every third step.
pub fn steps_with_splats<B: Backend>(preset: &str, backend: B, steps: usize) -> Vec<Vec<f32>> {
    let scene = small_preset(preset);
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, backend).expect("simulation");
    for k in 0..steps {
        if k % 3 == 0 {
            let x = 0.3 + 0.05 * k as f32;
            let s = Splat { center: [x, 0.4], radius: 0.1, velocity: [0.5, 0.2], density: 1.0, ..Splat::default() };
            sim.splat(carried(&sim, s)).expect("splat");
        }
        sim.step(dt).expect("step");
    }
    read_state(&mut sim)
}

/// The [`STATE_FIELDS`] of `sim` now, each empty where its scene does not carry it.
pub fn read_state<B: Backend>(sim: &mut Simulation<B>) -> Vec<Vec<f32>> {
    let fields = sim.scene().params.fields;
    STATE_FIELDS.iter().map(|&f| if fields.carries(f) { sim.field(f).expect("field") } else { Vec::new() }).collect()
}

/// `s` without the amounts for the fields `sim`'s scene does not carry (which it refuses).
pub(crate) fn carried<B: Backend>(sim: &Simulation<B>, s: Splat) -> Splat {
    s.only_carried(&sim.scene().params.fields)
}

/// A schedule of one dispatch of `kernel` over `extent` invocations.
pub(crate) fn single(
    grid: &Grid,
    kernel: Kernel,
    fields: &[FieldId],
    params: Option<ParamBlock>,
    extent: [u32; 2],
) -> Schedule {
    let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
    let ids: Vec<ResourceId> = fields.iter().map(|f| (*f).into()).collect();
    b.dispatch(kernel, &ids, params, extent);
    b.build()
}

/// Allocate every field of `grid` on `b` and upload `fields`.
pub(crate) fn load<B: Backend>(b: &mut B, grid: &Grid, fields: &[(FieldId, Vec<f32>)]) {
    b.allocate(GridFields::all(grid).resources()).expect("allocate");
    for (f, data) in fields {
        b.upload((*f).into(), data).expect("upload");
    }
}

pub(crate) fn random_field(grid: &Grid, field: FieldId, rng: &mut SplitMix64) -> Vec<f32> {
    let (lo, hi) = match field {
        FieldId::U | FieldId::V | FieldId::UTmp | FieldId::VTmp | FieldId::UTmp2 | FieldId::VTmp2 => (-2.0, 2.0),
        FieldId::Solid => (0.0, 0.0),
        _ => (0.05, 1.0),
    };
    (0..grid.len(field)).map(|_| lo + (hi - lo) * rng.next_f32()).collect()
}
