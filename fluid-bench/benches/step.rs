//! Criterion benchmarks of whole steps on the CPU backend.
//!
//! `cargo bench -p swirly-bench --bench step` (or `cargo xtask bench`). Figures and the peer
//! comparison are in `doc/PERFORMANCE.md`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use swirly::{CpuBackend, Scene, Simulation};
use swirly_bench::workloads;

fn warm(scene: Scene) -> Simulation<CpuBackend> {
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, CpuBackend::new().expect("cpu backend")).expect("simulation");
    for _ in 0..5 {
        sim.step(dt).expect("step");
    }
    sim
}

fn smoke_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("smoke_step");
    group.sample_size(10);
    for n in [256u32, 512, 1024] {
        let mut sim = warm(workloads::smoke(n));
        let dt = sim.scene().params.dt;
        group.bench_function(BenchmarkId::from_parameter(format!("{n}x{n}")), |b| {
            b.iter(|| sim.step(dt).expect("step"))
        });
    }
    group.finish();
}

fn stable_fluid_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("stable_fluid_step");
    group.sample_size(10);
    for (n, jacobi) in [(256u32, 40u32), (512, 40), (512, 500), (1024, 100)] {
        let mut sim = warm(workloads::stable_fluid(n, jacobi));
        let dt = sim.scene().params.dt;
        group.bench_function(BenchmarkId::from_parameter(format!("{n}x{n}_jacobi{jacobi}")), |b| {
            b.iter(|| sim.step(dt).expect("step"))
        });
    }
    group.finish();
}

/// The presets as shipped (3 double-float multigrid V-cycles per step), and `smoke` at 512²:
/// what a user of the CPU backend runs.
fn preset_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("preset_step");
    group.sample_size(20);
    for (name, n) in [("smoke", None), ("ink", None), ("taylor-green", None), ("smoke", Some(512))] {
        let mut sim = warm(workloads::preset(name, n));
        let dt = sim.scene().params.dt;
        let grid = sim.scene().grid;
        let id = format!("{name}_{}x{}", grid.nx, grid.ny);
        group.bench_function(BenchmarkId::from_parameter(id), |b| b.iter(|| sim.step(dt).expect("step")));
    }
    group.finish();
}

criterion_group!(benches, smoke_step, stable_fluid_step, preset_step);
criterion_main!(benches);
