//! The scenes the benchmarks run, shared by criterion and (later) `fluid bench`.

use swirly::Scene;

/// The `smoke` preset on an `n × n` grid (a full step: advection of velocity, density and
/// temperature, the emitter, buoyancy, vorticity confinement, projection) with the projection
/// it had when doc/PERFORMANCE.md's CPU table was measured: 60 weighted-Jacobi sweeps (the
/// preset itself now uses multigrid).
pub fn smoke(n: u32) -> Scene {
    let ov: Vec<_> = [
        format!("grid.nx={n}"),
        format!("grid.ny={n}"),
        "params.pressure.solver=jacobi".into(),
        "params.pressure.iterations=60".into(),
    ]
    .iter()
    .map(|s| swirly::scene::parse_override(s).expect("override"))
    .collect();
    Scene::preset_with("smoke", &ov).expect("smoke preset")
}

/// The same work as Taichi 1.7.4's `stable_fluid.py` example step (the `stable-fluid` preset):
/// RK3 semi-Lagrangian advection of velocity and RGB(A) dye, one gaussian impulse (velocity and
/// dye), divergence, `jacobi` Jacobi sweeps, gradient subtraction; no vorticity, no buoyancy,
/// no viscosity. The grid is `n × n` in a unit box with walls.
pub fn stable_fluid(n: u32, jacobi: u32) -> Scene {
    let ov: Vec<_> = [format!("grid.nx={n}"), format!("grid.ny={n}"), format!("params.pressure.iterations={jacobi}")]
        .iter()
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
    Scene::preset_with("stable-fluid", &ov).expect("stable-fluid preset")
}

/// A preset as shipped (its grid, its solver: the multigrid V-cycles of `smoke`, `ink` and
/// `taylor-green`), or resized to `n × n` cells with everything else as shipped.
pub fn preset(name: &str, n: Option<u32>) -> Scene {
    let ov: Vec<_> = n
        .map(|n| [format!("grid.nx={n}"), format!("grid.ny={n}")])
        .iter()
        .flatten()
        .map(|s| swirly::scene::parse_override(s).expect("override"))
        .collect();
    Scene::preset_with(name, &ov).expect("preset")
}
