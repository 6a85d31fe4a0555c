//! The scenes the benchmarks run, shared by criterion and (later) `fluid bench`.

use fluid::Scene;

/// The `smoke` preset on an `n × n` grid (a full step: advection of velocity, density and
/// temperature, the emitter, buoyancy, vorticity confinement, projection).
pub fn smoke(n: u32) -> Scene {
    let ov: Vec<_> = [format!("grid.nx={n}"), format!("grid.ny={n}")]
        .iter()
        .map(|s| fluid::parse_override(s).expect("override"))
        .collect();
    Scene::preset_with("smoke", &ov).expect("smoke preset")
}

/// The same work as Taichi 1.7.4's `stable_fluid.py` example step: RK3 semi-Lagrangian
/// advection of velocity and RGB(A) dye, one gaussian impulse (velocity and dye), divergence,
/// `jacobi` weighted-Jacobi sweeps, gradient subtraction; no vorticity, no buoyancy, no
/// viscosity. The grid is `n × n` in a unit box with walls.
pub fn stable_fluid(n: u32, jacobi: u32) -> Scene {
    let text = format!(
        r#"
name = "stable-fluid"
description = "Taichi stable_fluid.py's step, for comparison"
[grid]
nx = {n}
ny = {n}
[params]
dt = 0.03
fields = {{ density = false, temperature = false, dye = true }}
advection = {{ backtrace = "rk3" }}
dissipation = {{ dye = 0.5 }}
pressure = {{ iterations = {jacobi}, omega = 1.0 }}
[[emitters]]
center = [0.5, 0.3]
radius = 0.1
falloff = "gaussian"
velocity = [0.0, 40.0]
dye = [30.0, 10.0, 5.0, 30.0]
[render]
field = "dye"
"#
    );
    Scene::from_toml(&text, "stable-fluid workload").expect("workload scene")
}
