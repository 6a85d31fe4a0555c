//! The CPU backend gives bit-identical fields for any number of threads.

use swirly::{CpuBackend, FieldId, Scene, Simulation, Splat};

fn run(threads: usize, preset: &str) -> Vec<Vec<u32>> {
    let overrides: Vec<_> = ["grid.nx=72", "grid.ny=56", "params.viscosity=0.001"]
        .iter()
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
    let scene = Scene::preset_with(preset, &overrides).expect("scene");
    let dt = scene.params.dt;
    let backend = CpuBackend::with_threads(threads).expect("backend");
    assert_eq!(backend.threads(), threads);
    let mut sim = Simulation::new(scene, backend).expect("simulation");
    for k in 0..25 {
        if k % 5 == 0 {
            let s = Splat {
                center: [0.3, 0.4],
                radius: 0.1,
                velocity: [0.5, -0.2],
                density: 1.0,
                dye: [0.2, 0.4, 0.6, 1.0],
                ..Splat::default()
            };
            let carried = sim.scene().params.fields;
            if sim.scene().particles.is_none() {
                sim.splat(carried.carried(s)).expect("splat");
            }
        }
        sim.step(dt).expect("step");
    }
    let carried: Vec<FieldId> = FieldId::public().filter(|f| sim.carries(*f)).collect();
    let mut fields: Vec<Vec<u32>> =
        carried.into_iter().map(|f| sim.field(f).expect("field").iter().map(|x| x.to_bits()).collect()).collect();
    let d = sim.diagnostics().expect("diagnostics");
    fields.push(vec![
        d.figure("max_divergence").unwrap_or(f64::NAN).to_bits() as u32,
        d.figure("residual").unwrap_or(f64::NAN).to_bits() as u32,
    ]);
    fields
}

#[test]
fn one_thread_and_many_threads_agree_bit_for_bit() {
    for preset in
        ["smoke", "ink", "obstacles", "paddle", "cavity", "wind-tunnel", "dam-break", "splash", "goo", "faucet"]
    {
        let one = run(1, preset);
        for threads in [2, 3, 8] {
            let many = run(threads, preset);
            for (k, (a, b)) in one.iter().zip(&many).enumerate() {
                let first = a.iter().zip(b).position(|(x, y)| x != y);
                assert!(first.is_none(), "{preset}: field #{k} differs at index {first:?} with {threads} threads");
            }
        }
    }
}
