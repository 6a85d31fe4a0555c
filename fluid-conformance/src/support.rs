//! What the topics share: the small presets the whole-step checks run, steps with splats, reads
//! of the state and their bit-for-bit comparison, and single-dispatch schedules.

use swirly::{FieldId, Scene, Simulation, Splat, backend::Backend, model::Grid, model::GridFields};
use swirly_core::grid::step::STATE_FIELDS;
use swirly_core::ir::schedule::ParamBlock;
use swirly_core::scene::SplitMix64;
use swirly_core::{Kernel, ResourceId, Schedule};

/// A preset on the small odd grid (45 × 38) the whole-step checks run on.
pub fn small_preset(preset: &str) -> Scene {
    small_preset_with(preset, &[])
}

/// [`small_preset`] with more overrides.
pub fn small_preset_with(preset: &str, extra: &[&str]) -> Scene {
    let ov: Vec<_> = ["grid.nx=45", "grid.ny=38"]
        .iter()
        .chain(extra)
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
    Scene::preset_with(preset, &ov).expect("preset")
}

/// The gaussian splat of the whole-preset runs: every field's amount, some velocity, placed
/// at (0.4, 0.6) of `grid`'s box.
pub fn preset_splat(grid: &Grid) -> Splat {
    Splat {
        center: [0.4 * grid.width(), 0.6 * grid.height()],
        radius: 0.1 * grid.height(),
        falloff: swirly::Falloff::Gaussian,
        velocity: [0.5, -0.3],
        density: 0.5,
        temperature: 1.0,
        dye: [0.3, 0.6, 0.1, 0.8],
        fuel: 0.5,
    }
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
    sim.carried(s)
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
    load_with_table(b, grid, fields, 0);
}

/// [`load`] with an obstacle table of `rows` rows.
pub(crate) fn load_with_table<B: Backend>(b: &mut B, grid: &Grid, fields: &[(FieldId, Vec<f32>)], rows: usize) {
    let mut resources = GridFields::all(grid).resources().to_vec();
    resources[FieldId::Obstacles.index()].len = rows as u64;
    b.allocate(&resources).expect("allocate");
    for (f, data) in fields {
        if !data.is_empty() {
            b.upload((*f).into(), data).expect("upload");
        }
    }
}

/// The table of one obstacle of each shape, placed by fractions of `grid`'s box, moving and
/// turning: what the parity of `rasterise_solids` rasterises.
pub(crate) fn obstacle_table(grid: &Grid) -> Vec<f32> {
    use swirly_core::frame::solid::{Motion, Obstacle, Pose, Shape, table};
    let (w, h) = (grid.width(), grid.height());
    let s = w.min(h);
    let at = |shape: Shape, x: f32, y: f32, angle: f32, k: f32| Obstacle {
        shape,
        pose: Pose { position: [x * w, y * h], angle },
        motion: Motion { velocity: [0.3 * k, -0.2], angular_velocity: 0.5 - k },
        since: -0.1 * k,
        // Every other shape held at a temperature (a circle and the capsule, the polygon).
        temperature: (k == 1.0 || k == 0.0 || k == 2.0).then_some(1.5 - 0.4 * k),
    };
    let obstacles = [
        at(Shape::Circle { radius: 0.17 * s }, 0.25, 0.3, 0.0, 1.0),
        at(Shape::Rect { half_size: [0.2 * s, 0.07 * s] }, 0.7, 0.25, 0.4, 0.5),
        at(Shape::Capsule { half_length: 0.15 * s, radius: 0.06 * s }, 0.5, 0.75, -0.3, 0.0),
        at(
            Shape::Polygon {
                points: vec![[-0.1 * s, -0.1 * s], [0.15 * s, -0.05 * s], [0.0, 0.0], [0.05 * s, 0.12 * s]],
            },
            0.8,
            0.7,
            0.2,
            2.0,
        ),
        // Across the left edge: wraps on a periodic axis.
        at(Shape::Circle { radius: 0.1 * s }, 0.02, 0.55, 0.0, 0.0),
        // A mask: an L of 7 × 5 pixels, turned and moving.
        at(
            Shape::mask(
                [0.14 * s, 0.1 * s],
                7,
                5,
                &(0..35).map(|k| (k % 7 < 3 && k / 7 > 0) || (k / 7 >= 3 && k % 7 > 0)).collect::<Vec<_>>(),
            ),
            0.45,
            0.45,
            0.6,
            1.5,
        ),
    ];
    table(&obstacles).into_iter().flatten().collect()
}

pub(crate) fn random_field(grid: &Grid, field: FieldId, rng: &mut SplitMix64) -> Vec<f32> {
    let (lo, hi) = match field {
        FieldId::U | FieldId::V | FieldId::UTmp | FieldId::VTmp | FieldId::UTmp2 | FieldId::VTmp2 => (-2.0, 2.0),
        FieldId::Obstacles => return Vec::new(),
        // Cells inside a solid held at a temperature: a fifth of them.
        FieldId::Held => return (0..grid.len(field)).map(|_| f32::from(rng.next_f32() < 0.2)).collect(),
        FieldId::Solid => {
            // Solid fractions: a quarter wholly solid, half wholly fluid, the rest between.
            return (0..grid.len(field))
                .map(|_| {
                    let r = rng.next_f32();
                    if r < 0.25 {
                        1.0
                    } else if r < 0.75 {
                        0.0
                    } else {
                        rng.next_f32()
                    }
                })
                .collect();
        }
        FieldId::UFaces | FieldId::VFaces => {
            // Open fractions: a quarter closed, a quarter open, the rest between; velocities
            // in [-1, 1].
            return (0..grid.len(field) / 2)
                .flat_map(|_| {
                    let r = rng.next_f32();
                    let open = if r < 0.25 {
                        0.0
                    } else if r < 0.5 {
                        1.0
                    } else {
                        rng.next_f32()
                    };
                    [open, 2.0 * rng.next_f32() - 1.0]
                })
                .collect();
        }
        _ => (0.05, 1.0),
    };
    (0..grid.len(field)).map(|_| lo + (hi - lo) * rng.next_f32()).collect()
}
