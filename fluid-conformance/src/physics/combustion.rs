//! Combustion against its bookkeeping: fuel burns at its rate only where it is hot enough, and
//! what it loses appears as heat and smoke, nothing leaked or made; the expansion of burning
//! gas stays in the projected velocity as its divergence.

use swirly::{FieldId, Simulation, backend::Backend};

use super::test_scene;

/// A box at rest (no forces: nothing moves, so advection leaves every cell as it is) holding
/// fuel everywhere, its left half above the ignition temperature and its right half below.
/// After 25 steps of `dt` the hot fuel is `F₀ exp(−rate t)`, the cold fuel untouched; each
/// cell's density grew by `soot` times what it lost and its temperature by `heat` times it, so
/// that `fuel + density / soot` is conserved cell by cell and in total. With the density twice
/// finer (`grid.density_factor = 2`) each of a cell's four fine cells takes its smoke.
pub fn combustion_conserves_fuel_and_smoke<B: Backend>(make: impl Fn() -> B) {
    for factor in [1, 2] {
        burn_in_a_box(&make, factor);
    }
}

fn burn_in_a_box<B: Backend>(make: impl Fn() -> B, factor: usize) {
    let (nx, ny, dt, rate, heat, soot) = (24u32, 16u32, 0.02f64, 2.0f64, 0.8f64, 0.5f64);
    let mut scene = test_scene(
        "burn",
        nx,
        ny,
        0.05,
        dt,
        &format!(
            "fields = {{ density = true, temperature = true, dye = false, fuel = true }}\n\
             combustion = {{ rate = {rate}, ignition = 0.3, heat = {heat}, soot = {soot} }}\n\
             pressure = {{ solver = \"jacobi\", iterations = 2 }}"
        ),
    );
    scene.grid.density_factor = factor as u32;
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let nxu = nx as usize;
    let cells = (nx * ny) as usize;
    let hot = |c: usize| c % nxu < nxu / 2;
    let fuel0: Vec<f32> = (0..cells).map(|c| 0.5 + 0.02 * (c % 37) as f32).collect();
    let temp0: Vec<f32> = (0..cells).map(|c| if hot(c) { 1.0 } else { 0.2 }).collect();
    sim.set_field(FieldId::Fuel, &fuel0).expect("fuel");
    sim.set_field(FieldId::Temperature, &temp0).expect("temperature");
    let steps = 25;
    for _ in 0..steps {
        sim.step(dt as f32).expect("step");
    }
    let fuel = sim.field(FieldId::Fuel).expect("fuel");
    let density = sim.field(FieldId::Density).expect("density");
    let temp = sim.field(FieldId::Temperature).expect("temperature");
    let left = (-rate * dt * f64::from(steps)).exp();
    let (mut before, mut after) = (0.0f64, 0.0f64);
    assert_eq!(density.len(), cells * factor * factor);
    // Cell c's smoke: its fine cells' mean, each of them checked.
    let smoke = |c: usize, check: &dyn Fn(f64)| {
        let (i, j) = (c % nxu, c / nxu);
        let mut sum = 0.0;
        for b in 0..factor {
            for a in 0..factor {
                let d = f64::from(density[(j * factor + b) * nxu * factor + i * factor + a]);
                check(d);
                sum += d;
            }
        }
        sum / (factor * factor) as f64
    };
    for c in 0..cells {
        let (f0, f, t) = (f64::from(fuel0[c]), f64::from(fuel[c]), f64::from(temp[c]));
        let want = if hot(c) { f0 * left } else { f0 };
        assert!((f - want).abs() < 1e-5 * f0, "cell {c}: fuel {f}, expected {want} (hot: {})", hot(c));
        let burnt = f0 - f;
        let check = |d: f64| {
            assert!(
                (d - soot * burnt).abs() < 1e-5,
                "x{factor}, cell {c}: density {d}, soot x burnt = {}",
                soot * burnt
            )
        };
        let d = smoke(c, &check);
        let t_want = f64::from(temp0[c]) + heat * burnt;
        assert!((t - t_want).abs() < 1e-5, "cell {c}: temperature {t}, expected {t_want}");
        before += f0;
        after += f + d / soot;
    }
    assert!((after / before - 1.0).abs() < 1e-6, "x{factor}: fuel + burnt: {after} of {before}");
    let u = sim.field(FieldId::U).expect("u");
    assert!(u.iter().all(|x| *x == 0.0), "nothing pushes the fluid, yet it moved");
}

/// A burning blob in a box open at the top, at rest: after one step the projected velocity's
/// divergence in each cell is the volume the burning made there per second,
/// `expansion · burnt / dt`, to the solver's tolerance.
pub fn expansion_stays_in_the_velocity<B: Backend>(make: impl Fn() -> B) {
    let (nx, ny, h, dt, expansion) = (32u32, 24u32, 0.05f64, 0.02f64, 0.3f64);
    let scene = test_scene(
        "expand",
        nx,
        ny,
        h,
        dt,
        &format!(
            "fields = {{ density = false, temperature = true, dye = false, fuel = true }}\n\
             combustion = {{ rate = 5.0, ignition = 0.3, heat = 0.5, expansion = {expansion} }}\n\
             boundary = {{ x = \"wall\", y = \"wall\", top = \"open\" }}\n\
             pressure = {{ solver = \"multigrid\", iterations = 12 }}"
        ),
    );
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let nxu = nx as usize;
    let cells = (nx * ny) as usize;
    let r2 = |c: usize| {
        let (x, y) = ((c % nxu) as f64 - 11.5, (c / nxu) as f64 - 9.5);
        (x * x + y * y) / 16.0
    };
    let fuel0: Vec<f32> = (0..cells).map(|c| (2.0 * (-r2(c)).exp()) as f32).collect();
    let temp0: Vec<f32> = (0..cells).map(|c| if r2(c) < 1.0 { 1.0 } else { 0.0 }).collect();
    sim.set_field(FieldId::Fuel, &fuel0).expect("fuel");
    sim.set_field(FieldId::Temperature, &temp0).expect("temperature");
    sim.step(dt as f32).expect("step");
    let grid = sim.scene().grid().expect("grid");
    let fuel = sim.field(FieldId::Fuel).expect("fuel");
    let (u, v) = (sim.field(FieldId::U).expect("u"), sim.field(FieldId::V).expect("v"));
    let div = super::pressure::divergence(&grid, &u, &v);
    let source: Vec<f64> = (0..cells).map(|c| expansion * f64::from(fuel0[c] - fuel[c]) / dt).collect();
    let peak = source.iter().fold(0.0f64, |m, s| m.max(*s));
    assert!(peak > 1.0, "the blob should burn: peak source {peak}");
    let worst = (0..cells).map(|c| (div[c] - source[c]).abs()).fold(0.0f64, f64::max);
    assert!(worst < 1e-3 * peak, "divergence off its source by {worst:.3e} (peak source {peak:.3})");
    // What was made leaves through the open top.
    let made: f64 = source.iter().sum::<f64>() * h * h;
    let out: f64 = (0..nxu).map(|i| f64::from(v[ny as usize * nxu + i])).sum::<f64>() * h;
    assert!((out / made - 1.0).abs() < 1e-3, "outflow {out:.5} of {made:.5} made");
}
