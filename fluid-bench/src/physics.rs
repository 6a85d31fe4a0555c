//! Physics checks against analytic answers, generic over the backend.
//!
//! Each function panics with a message that names the figure and its tolerance when the
//! backend fails the check; [`crate::conformance!`] turns them into `#[test]`s.

use fluid::{Backend, FieldId, Grid, GridFields, Scene, Simulation, StepInputs};
use fluid_core::grid::kernels;
use fluid_core::grid::step::{self, SLOT_MAX_DIVERGENCE};
use fluid_core::ir::schedule::ParamBlock;

/// Kinetic energy `½ Σ (u² + v²) h²` over the distinct faces.
pub fn kinetic_energy(grid: &Grid, u: &[f32], v: &[f32]) -> f64 {
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let mut e = 0.0f64;
    for j in 0..ny {
        for i in 0..nx {
            e += f64::from(u[j * (nx + 1) + i]).powi(2) + f64::from(v[j * nx + i]).powi(2);
        }
    }
    // Wall faces (i = nx, j = ny) are zero; on periodic axes they repeat faces 0.
    0.5 * e * f64::from(grid.h).powi(2)
}

/// A scene of `nx × ny` cells of size `h` stepping by `dt`, with more `[params]` lines.
fn test_scene(name: &str, nx: u32, ny: u32, h: f64, dt: f64, params: &str) -> Scene {
    let text = format!("name = \"{name}\"\n[grid]\nnx = {nx}\nny = {ny}\nh = {h}\n[params]\ndt = {dt}\n{params}\n");
    Scene::from_toml(&text, name).expect("valid scene")
}

/// Whether sample `c` of the face field `field` is the copy of face 0 that a periodic axis
/// keeps as u-face `nx` (or v-face `ny`): sums over the faces count it once by leaving it out.
fn periodic_copy(grid: &Grid, field: FieldId, c: usize) -> bool {
    let nx = grid.nx as usize;
    match field {
        FieldId::U => grid.boundary_x == fluid::Boundary::Periodic && c % (nx + 1) == nx,
        FieldId::V => grid.boundary_y == fluid::Boundary::Periodic && c / nx == grid.ny as usize,
        _ => false,
    }
}

/// World position of sample `c` of a face field: u-face `(i, j)` at `(i h, (j + ½) h)`, v-face
/// `(i, j)` at `((i + ½) h, j h)`.
fn face_position(grid: &Grid, field: FieldId, c: usize) -> [f64; 2] {
    let (nx, h) = (grid.nx as usize, f64::from(grid.h));
    match field {
        FieldId::U => [(c % (nx + 1)) as f64 * h, ((c / (nx + 1)) as f64 + 0.5) * h],
        FieldId::V => [((c % nx) as f64 + 0.5) * h, (c / nx) as f64 * h],
        other => panic!("{} is not a face field", other.name()),
    }
}

fn taylor_green_scene(nx: u32, ny: u32, h: f64, nu: f64, dt: f64, amplitude: f64) -> Scene {
    let params = format!(
        "viscosity = {nu}\n\
         viscosity_iterations = 30\n\
         fields = {{ density = false, temperature = false, dye = false }}\n\
         boundary = {{ x = \"periodic\", y = \"periodic\" }}\n\
         advection = {{ backtrace = \"rk3\" }}\n\
         pressure = {{ iterations = 40, omega = 0.9 }}\n\
         [initial.velocity]\n\
         kind = \"taylor-green\"\n\
         amplitude = {amplitude}"
    );
    test_scene("taylor-green-test", nx, ny, h, dt, &params)
}

/// Run a Taylor–Green vortex and compare its kinetic energy with `exp(−2ν(kx²+ky²)t)` every
/// 25 steps; returns the largest relative error.
///
/// Tolerance 1 %, from the error budget: the discrete Laplacian's eigenvalue differs from
/// `k²` by `(kh)²/12` (< 0.1 % at these sizes); backward-Euler viscosity by `(νk²dt)²/2`
/// per step (< 0.05 % over the run); bilinear semi-Lagrangian advection adds a numerical
/// viscosity of about `A·h/2`, kept below 1 % of ν by the small amplitude `A`. A wrong
/// viscosity scale, a wrong aspect ratio or a lossy projection misses by 10 % or more.
pub fn taylor_green_decay<B: Backend>(backend: B, nx: u32, ny: u32, h: f64, nu: f64) -> f64 {
    use std::f64::consts::TAU;
    let dt = 0.02;
    let amplitude = 2e-3;
    let scene = taylor_green_scene(nx, ny, h, nu, dt, amplitude);
    let mut sim = Simulation::new(scene, backend).expect("simulation");
    let grid = *sim.grid();
    let kx = TAU / (f64::from(nx) * h);
    let ky = TAU / (f64::from(ny) * h);
    let rate = 2.0 * nu * (kx * kx + ky * ky);
    let e0 = kinetic_energy(&grid, &sim.field(FieldId::U).expect("u"), &sim.field(FieldId::V).expect("v"));
    assert!(e0 > 0.0);
    let mut worst = 0.0f64;
    for k in 1..=100u32 {
        sim.step(dt as f32).expect("step");
        if k % 25 == 0 {
            let e = kinetic_energy(&grid, &sim.field(FieldId::U).expect("u"), &sim.field(FieldId::V).expect("v"));
            let expected = (-rate * f64::from(k) * dt).exp();
            let err = (e / e0 / expected - 1.0).abs();
            worst = worst.max(err);
            assert!(
                err < 0.01,
                "{nx}x{ny}, h={h}, nu={nu}: E/E0 = {:.5} at t = {:.2}, expected exp(-{rate:.4} t) = {expected:.5} \
                 (relative error {err:.2e} > 1e-2)",
                e / e0,
                f64::from(k) * dt
            );
        }
    }
    worst
}

/// Square periodic box of side 2π, k = 1: energy decays as `exp(−4νt)`.
pub fn taylor_green_square<B: Backend>(make: impl Fn() -> B) {
    taylor_green_decay(make(), 64, 64, std::f64::consts::TAU / 64.0, 0.05);
}

/// A 48 × 32 box of cell 0.1: `kx ≠ ky`, so an aspect-ratio mistake shows in the rate.
pub fn taylor_green_non_square<B: Backend>(make: impl Fn() -> B) {
    taylor_green_decay(make(), 48, 32, 0.1, 0.02);
}

/// Divergence `(u_{i+1} − u_i + v_{j+1} − v_j)/h` in f64.
fn divergence(grid: &Grid, u: &[f32], v: &[f32]) -> Vec<f64> {
    let (nx, ny, h) = (grid.nx as usize, grid.ny as usize, f64::from(grid.h));
    let mut d = vec![0.0; nx * ny];
    for j in 0..ny {
        for i in 0..nx {
            d[j * nx + i] = (f64::from(u[j * (nx + 1) + i + 1]) - f64::from(u[j * (nx + 1) + i])
                + f64::from(v[(j + 1) * nx + i])
                - f64::from(v[j * nx + i]))
                / h;
        }
    }
    d
}

/// Neighbours of cell `(i, j)`: walls drop out, periodic axes wrap.
fn neighbours(grid: &Grid, i: usize, j: usize) -> Vec<usize> {
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let (px, py) = (grid.boundary_x == fluid::Boundary::Periodic, grid.boundary_y == fluid::Boundary::Periodic);
    let mut n = Vec::with_capacity(4);
    if i > 0 {
        n.push(j * nx + i - 1);
    } else if px {
        n.push(j * nx + nx - 1);
    }
    if i + 1 < nx {
        n.push(j * nx + i + 1);
    } else if px {
        n.push(j * nx);
    }
    if j > 0 {
        n.push((j - 1) * nx + i);
    } else if py {
        n.push((ny - 1) * nx + i);
    }
    if j + 1 < ny {
        n.push((j + 1) * nx + i);
    } else if py {
        n.push(i);
    }
    n
}

/// What `sweeps` weighted-Jacobi sweeps from p = 0 leave of the divergence `r0`: the residual
/// obeys `r ← r − ω A D⁻¹ r` (A the 5-point Neumann/periodic Laplacian matrix, D its diagonal),
/// and the projected velocity's divergence is that residual. Computed independently of the
/// kernels, in f64.
pub fn predicted_divergence(grid: &Grid, r0: &[f64], omega: f64, sweeps: u32) -> Vec<f64> {
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let nbrs: Vec<Vec<usize>> = (0..nx * ny).map(|c| neighbours(grid, c % nx, c / nx)).collect();
    let mut r = r0.to_vec();
    for _ in 0..sweeps {
        let scaled: Vec<f64> = r.iter().zip(&nbrs).map(|(x, n)| x / n.len() as f64).collect();
        r = (0..nx * ny)
            .map(|c| {
                let a_dinv_r = scaled[c] * nbrs[c].len() as f64 - nbrs[c].iter().map(|&n| scaled[n]).sum::<f64>();
                r[c] - omega * a_dinv_r
            })
            .collect();
    }
    r
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// Upload a velocity, project it with `sweeps` cold-started weighted-Jacobi sweeps, and return
/// the backend's max |∇·u| before and after.
fn project<B: Backend>(b: B, grid: &Grid, u: &[f32], v: &[f32], omega: f32, sweeps: u32) -> (f64, f64) {
    project_with(b, grid, u, v, Some(omega), sweeps, fluid_core::params::PressureSolver::Jacobi)
}

fn project_with<B: Backend>(
    b: B,
    grid: &Grid,
    u: &[f32],
    v: &[f32],
    omega: Option<f32>,
    sweeps: u32,
    solver: fluid_core::params::PressureSolver,
) -> (f64, f64) {
    let mut b = with_velocity(b, grid, u, v);
    let params = cold_projection(grid, solver, sweeps, omega);
    let inputs = StepInputs { dt: 0.05, ..StepInputs::default() };
    let diag = step::diagnostics(grid);
    b.run(&diag, &inputs).expect("diagnostics");
    let before = b.reductions().expect("reductions")[SLOT_MAX_DIVERGENCE];
    b.run(&step::setup(grid, &params), &inputs).expect("setup");
    b.run(&step::projection(grid, &params), &inputs).expect("projection");
    b.run(&diag, &inputs).expect("diagnostics");
    let after = b.reductions().expect("reductions")[SLOT_MAX_DIVERGENCE];
    (before, after)
}

/// Random velocity in a walled, odd, non-square box: after N sweeps max |∇·u| must equal what
/// the Jacobi residual recurrence predicts, within 1e-3 relative (f32 rounding).
pub fn projection_random_field<B: Backend>(make: impl Fn() -> B) {
    let grid = Grid::new(33, 21, 0.05, fluid::Boundary::Wall, fluid::Boundary::Wall).expect("grid");
    let mut rng = fluid_core::scene::SplitMix64(7);
    let (nx, ny) = (33usize, 21usize);
    let mut u: Vec<f32> = (0..grid.len(FieldId::U)).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
    let mut v: Vec<f32> = (0..grid.len(FieldId::V)).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
    for j in 0..ny {
        u[j * (nx + 1)] = 0.0;
        u[j * (nx + 1) + nx] = 0.0;
    }
    for i in 0..nx {
        v[i] = 0.0;
        v[ny * nx + i] = 0.0;
    }
    let r0 = divergence(&grid, &u, &v);
    for (omega, sweeps) in [(0.9f32, 1u32), (0.9, 10), (0.8, 60), (1.0, 25)] {
        let (before, after) = project(make(), &grid, &u, &v, omega, sweeps);
        let predicted = max_abs(&predicted_divergence(&grid, &r0, f64::from(omega), sweeps));
        assert!((before / max_abs(&r0) - 1.0).abs() < 1e-5, "initial divergence {before} vs {}", max_abs(&r0));
        let err = (after / predicted - 1.0).abs();
        assert!(
            err < 1e-3,
            "omega {omega}, {sweeps} sweeps: max|div| {before:.4e} -> {after:.4e}, predicted {predicted:.4e} \
             (relative error {err:.2e} > 1e-3)"
        );
        assert!(after < before, "projection must reduce the divergence");
    }
}

/// What `iterations` red-black SOR iterations from p = 0 leave of the divergence `r0`, computed
/// independently of the kernels in f64: relax `A p = b` (`b = −h² r0 / dt`) cell by cell, red
/// cells (`i + j` even) then black, in place; the projected divergence is `r0 + dt A p / h²`.
/// Valid for grids where every neighbour of a cell has the other colour (walls, or periodic
/// axes of even length).
pub fn predicted_divergence_sor(grid: &Grid, r0: &[f64], omega: f64, iterations: u32) -> Vec<f64> {
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let (h, dt) = (f64::from(grid.h), 0.05f64);
    let nbrs: Vec<Vec<usize>> = (0..nx * ny).map(|c| neighbours(grid, c % nx, c / nx)).collect();
    let b: Vec<f64> = r0.iter().map(|d| -h * h * d / dt).collect();
    let mut p = vec![0.0f64; nx * ny];
    for _ in 0..iterations {
        for colour in [0, 1] {
            for c in (0..nx * ny).filter(|c| (c % nx + c / nx) % 2 == colour) {
                let n = nbrs[c].len() as f64;
                let pj = (nbrs[c].iter().map(|&k| p[k]).sum::<f64>() + b[c]) / n;
                p[c] += omega * (pj - p[c]);
            }
        }
    }
    (0..nx * ny)
        .map(|c| {
            let ap = nbrs[c].len() as f64 * p[c] - nbrs[c].iter().map(|&k| p[k]).sum::<f64>();
            r0[c] + dt * ap / (h * h)
        })
        .collect()
}

/// Red-black SOR on the random field of [`projection_random_field`]: max |∇·u| after N
/// iterations equals the independent f64 red-black SOR's within 1e-3 relative, and with the
/// default (optimal) ω, 60 iterations (120 passes) leave at least 10× less divergence than 120
/// weighted-Jacobi sweeps (the same number of dispatches) and under 1e-3 of the initial one
/// (measured on the CPU: 2.3e-4 against Jacobi's 2.9e-3).
pub fn projection_sor<B: Backend>(make: impl Fn() -> B) {
    let grid = Grid::new(33, 21, 0.05, fluid::Boundary::Wall, fluid::Boundary::Wall).expect("grid");
    let (u, v) = random_wall_velocity(&grid, 11);
    let r0 = divergence(&grid, &u, &v);
    let sor = fluid_core::params::PressureSolver::Sor;
    for (omega, iterations) in [(1.0f32, 1u32), (1.0, 8), (1.6, 5), (1.6, 20)] {
        let (before, after) = project_with(make(), &grid, &u, &v, Some(omega), iterations, sor);
        let predicted = max_abs(&predicted_divergence_sor(&grid, &r0, f64::from(omega), iterations));
        let err = (after / predicted - 1.0).abs();
        assert!(
            err < 1e-3,
            "SOR omega {omega}, {iterations} iterations: max|div| {before:.4e} -> {after:.4e}, predicted \
             {predicted:.4e} (relative error {err:.2e} > 1e-3)"
        );
    }
    let (before, sor_after) = project_with(make(), &grid, &u, &v, None, 60, sor);
    let (_, jacobi_after) = project(make(), &grid, &u, &v, 0.9, 120);
    let omega = fluid_core::params::Pressure { solver: sor, iterations: 60, ..Default::default() }.omega_for(33);
    let predicted = max_abs(&predicted_divergence_sor(&grid, &r0, f64::from(omega), 60));
    assert!((sor_after / predicted - 1.0).abs() < 1e-3, "optimal SOR: {sor_after:.4e} vs predicted {predicted:.4e}");
    assert!(
        sor_after * 10.0 < jacobi_after && sor_after < 1e-3 * before,
        "optimal SOR, 60 iterations: {before:.3e} -> {sor_after:.3e}; Jacobi, 120 sweeps: -> {jacobi_after:.3e}"
    );
}

/// Relative residual ‖b − A p‖ / ‖b‖ after projecting a random velocity with `cycles`
/// cold-started V-cycles.
pub fn multigrid_residual<B: Backend>(b: B, grid: &Grid, cycles: u32, seed: u64) -> f64 {
    solver_residual(b, grid, fluid_core::params::PressureSolver::Multigrid, cycles, seed)
}

/// Relative residual after projecting a random velocity with `iterations` cold-started
/// iterations of `solver`.
pub fn solver_residual<B: Backend>(
    b: B,
    grid: &Grid,
    solver: fluid_core::params::PressureSolver,
    iterations: u32,
    seed: u64,
) -> f64 {
    let (u, v) = random_wall_velocity(grid, seed);
    let mut b = with_velocity(b, grid, &u, &v);
    projected_residual(&mut b, grid, &cold_projection(grid, solver, iterations, None))
}

/// Project `b`'s velocity with `params` (dt 0.05) and return the relative residual the
/// diagnostics then report.
fn projected_residual<B: Backend>(b: &mut B, grid: &Grid, params: &fluid::SimParams) -> f64 {
    let inputs = StepInputs { dt: 0.05, ..StepInputs::default() };
    b.run(&step::projection(grid, params), &inputs).expect("projection");
    b.run(&step::diagnostics(grid), &inputs).expect("diagnostics");
    relative_residual(&b.reductions().expect("reductions"))
}

/// Multigrid reduces the residual by about 10× per V-cycle whatever the grid: walls and
/// periodic, square, odd and non-square. Measured per-cycle factors are printed; the bound is
/// 0.2 per cycle (averaged over cycles 1..4).
pub fn multigrid_convergence<B: Backend>(make: impl Fn() -> B) {
    for (nx, ny, bx, by) in SOLVER_GRIDS {
        let grid = Grid::new(nx, ny, 1.0 / ny as f32, bx, by).expect("grid");
        let r: Vec<f64> = (0..=4).map(|k| multigrid_residual(make(), &grid, k, 5)).collect();
        let factor = (r[4] / r[0]).powf(0.25);
        let shown: Vec<String> = r.iter().map(|x| format!("{x:.3e}")).collect();
        eprintln!("multigrid {nx}x{ny} {bx:?}/{by:?}: residuals {shown:?}, factor per V-cycle {factor:.3}");
        assert!(factor < 0.2, "{nx}x{ny} {bx:?}/{by:?}: residuals {shown:?}, {factor:.3} per V-cycle");
    }
}

/// The MAC seed's relaxation is weighted Jacobi with ω/2 acting on the velocity: after N
/// iterations max |∇·u| equals the Jacobi residual recurrence with ω/2 (within 1e-3), and the
/// residual the engine reports from the accumulated pressure equals ‖∇·u_after‖ / ‖∇·u_before‖
/// computed from the velocity itself, in a second projection asked to warm-start as well.
pub fn projection_relaxation<B: Backend>(make: impl Fn() -> B) {
    let grid = Grid::new(33, 21, 0.05, fluid::Boundary::Wall, fluid::Boundary::Wall).expect("grid");
    let (u, v) = random_wall_velocity(&grid, 13);
    let r0 = divergence(&grid, &u, &v);
    let relaxation = fluid_core::params::PressureSolver::Relaxation;
    for (omega, iterations) in [(1.0f32, 1u32), (1.0, 20), (1.6, 15)] {
        let (before, after) = project_with(make(), &grid, &u, &v, Some(omega), iterations, relaxation);
        let predicted = max_abs(&predicted_divergence(&grid, &r0, 0.5 * f64::from(omega), iterations));
        let err = (after / predicted - 1.0).abs();
        assert!(
            err < 1e-3,
            "relaxation omega {omega}, {iterations} iterations: max|div| {before:.4e} -> {after:.4e}, predicted \
             {predicted:.4e} (relative error {err:.2e})"
        );
    }
    // The reported residual against the velocity's own divergence.
    let mut b = with_velocity(make(), &grid, &u, &v);
    let params = cold_projection(&grid, relaxation, 12, None);
    let reported = projected_residual(&mut b, &grid, &params);
    let after =
        divergence(&grid, &b.download(FieldId::U.into()).expect("u"), &b.download(FieldId::V.into()).expect("v"));
    let norm = |x: &[f64]| x.iter().map(|d| d * d).sum::<f64>().sqrt();
    let measured = norm(&after) / norm(&r0);
    assert!((reported / measured - 1.0).abs() < 1e-3, "reported residual {reported:.5e}, measured {measured:.5e}");
    // Again on the same velocity with a warm start asked for, as scenes ask by default: the
    // relaxation's pressure starts from zero all the same, so the report still matches.
    b.upload(FieldId::U.into(), &u).expect("upload u");
    b.upload(FieldId::V.into(), &v).expect("upload v");
    let mut warm = params;
    warm.pressure.warm_start = true;
    let again = projected_residual(&mut b, &grid, &warm);
    assert!((again / measured - 1.0).abs() < 1e-3, "warm start asked: reported {again:.5e}, measured {measured:.5e}");
}

/// MGPCG on walled, periodic, odd and non-square grids: below 1e-4 after 4 iterations and 1e-5
/// after 5 (measured on the CPU: 8.9e-8..2.0e-6); within 5× of as many plain V-cycles (measured
/// 0.2–1.0×), and below them on the grid where they slow down (33 × 40, periodic × wall: 2.0e-6
/// against 1.1e-5); and still below 1e-5 after 24 iterations, far past convergence (the
/// classical β without `cg_direction`'s restart, with this not-quite-symmetric V-cycle, blew up
/// there: 0.1 after 16 iterations at 256²).
///
/// Solves continue from the pressure they are given: after 9 iterations (one past the restart
/// every [`fluid_core::grid::pressure::mgpcg::CG_RESTART`] = 8, whose ninth starts from the pressure the
/// first eight stored) and after one warm-started iteration from the pressure of 8 cold ones on
/// the same velocity, the residual is below 1e-5 too, and below a tenth of one cold
/// iteration's; started from zero instead, each would be one iteration's.
pub fn mgpcg_convergence<B: Backend>(make: impl Fn() -> B) {
    use fluid_core::params::PressureSolver::{Mgpcg, Multigrid};
    for (nx, ny, bx, by) in SOLVER_GRIDS {
        let grid = Grid::new(nx, ny, 1.0 / ny as f32, bx, by).expect("grid");
        let cg: Vec<f64> = (1..=5).map(|k| solver_residual(make(), &grid, Mgpcg, k, 5)).collect();
        let mg = solver_residual(make(), &grid, Multigrid, 5, 5);
        let long = solver_residual(make(), &grid, Mgpcg, 24, 5);
        let shown: Vec<String> = cg.iter().map(|x| format!("{x:.2e}")).collect();
        eprintln!("mgpcg {nx}x{ny} {bx:?}/{by:?}: residuals {shown:?}, x24 {long:.2e}; multigrid x5 {mg:.2e}");
        let case = format!("{nx}x{ny} {bx:?}/{by:?}: MGPCG {shown:?}, x24 {long:.2e}, multigrid x5 {mg:.2e}");
        assert!(cg[3] < 1e-4 && cg[4] < 1e-5, "{case}");
        assert!(cg[4] < 5.0 * mg, "{case}");
        if mg > 5e-6 {
            assert!(cg[4] < mg, "{case}");
        }
        assert!(long < 1e-5, "{case}");
        let nine = solver_residual(make(), &grid, Mgpcg, 9, 5);
        let warm = {
            let (u, v) = random_wall_velocity(&grid, 5);
            let mut b = with_velocity(make(), &grid, &u, &v);
            let inputs = StepInputs { dt: 0.05, ..StepInputs::default() };
            let cold = step::projection(&grid, &cold_projection(&grid, Mgpcg, 8, None));
            b.run(&cold, &inputs).expect("cold projection");
            b.upload(FieldId::U.into(), &u).expect("upload u");
            b.upload(FieldId::V.into(), &v).expect("upload v");
            let mut params = cold_projection(&grid, Mgpcg, 1, None);
            params.pressure.warm_start = true;
            projected_residual(&mut b, &grid, &params)
        };
        eprintln!("  x9 {nine:.2e}, one warm-started iteration {warm:.2e}");
        for (what, r) in [("9 iterations", nine), ("one warm-started iteration", warm)] {
            assert!(r < 1e-5 && r < 0.1 * cg[0], "{case}: {what} {r:.2e}");
        }
    }
}

/// MGPCG follows the preconditioned conjugate-gradient recurrence, read from its own vectors.
///
/// Cold solves of K − 1 and K iterations (K = 2..7, inside one restart period) on a 37 × 23
/// walled grid and a 32 × 24 periodic one; the packed buffer after each holds the residual `r`,
/// the preconditioned residual `z = M⁻¹ r` (level 0's `b` and `p`), the direction `d`, `q = A d`
/// and the scalars `r·z` (by iteration parity) and `d·q`. With those of K − 1 marked ₀, the
/// K-th iteration must have made, computed here in f64:
/// - `ρ = r₀·z` in its parity's slot, the other slot still holding `ρ₀`;
/// - `d = z + (ρ/ρ₀) d₀`, or `d = z` where `ρ` did not fall (the documented restart);
/// - `d·q` in its slot, and `r = r₀ − α q` with `α = ρ / d·q` (in f32, cut to 12 significant
///   bits as `cg_update` documents).
///
/// Tolerances are f32 rounding of sums over the grid: 1e-4 relative on the scalars, 1e-4 of
/// the vector's largest value on `d` and `r`. It pins the bookkeeping that the convergence
/// checks only bound: a β from the wrong slot still converges, 1.5–3× slower.
pub fn mgpcg_recurrence<B: Backend>(make: impl Fn() -> B) {
    use fluid::Boundary::{Periodic, Wall};
    use fluid_core::params::PressureSolver::Mgpcg;
    let mut recurrences = 0;
    for (nx, ny, bx, by) in [(37u32, 23u32, Wall, Wall), (32, 24, Periodic, Periodic)] {
        let grid = Grid::new(nx, ny, 1.0 / ny as f32, bx, by).expect("grid");
        let (u, v) = random_wall_velocity(&grid, 9);
        let inputs = StepInputs { dt: 0.05, ..StepInputs::default() };
        let state = |k: u32| {
            let mut b = with_velocity(make(), &grid, &u, &v);
            let params = cold_projection(&grid, Mgpcg, k, None);
            b.run(&step::setup(&grid, &params), &inputs).expect("setup");
            b.run(&step::projection(&grid, &params), &inputs).expect("projection");
            b.download(FieldId::Multigrid.into()).expect("multigrid buffer")
        };
        let top = fluid_core::grid::pressure::multigrid::levels(nx, ny)[0];
        let l = fluid_core::grid::pressure::mgpcg::cg_layout(nx, ny);
        let n = (nx * ny) as usize;
        let vector = |mg: &[f32], at: u32| -> Vec<f64> {
            mg[at as usize..at as usize + n].iter().map(|x| f64::from(*x)).collect()
        };
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let scalar = |mg: &[f32], k: u32| f64::from(mg[(l.scalars + k) as usize]);
        let close = |what: &str, got: f64, want: f64| {
            assert!(
                (got - want).abs() <= 1e-4 * want.abs(),
                "{nx}x{ny}, {what}: {got:.6e}, the recurrence gives {want:.6e}"
            );
        };
        let near = |what: &str, got: &[f64], want: &[f64]| {
            let scale = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for (c, (g, w)) in got.iter().zip(want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-4 * scale,
                    "{nx}x{ny}, {what} at cell {c}: {g:.6e}, the recurrence gives {w:.6e} (largest {scale:.3e})"
                );
            }
        };
        let mut before = state(1);
        for k in 2..=7u32 {
            let after = state(k);
            let what = |x: &str| format!("iteration {k}, {x}");
            let (slot, old) = ((k - 1) % 2, k % 2);
            let (r0, d0) = (vector(&before, top.b), vector(&before, l.d));
            let (r, z, d, q) = (vector(&after, top.b), vector(&after, top.p), vector(&after, l.d), vector(&after, l.q));
            let rho0 = scalar(&before, old);
            let rho = dot(&r0, &z);
            close(&what("r·z"), scalar(&after, slot), rho);
            close(&what("the previous r·z, kept"), scalar(&after, old), rho0);
            let beta = if rho > 0.0 && rho < rho0 { rho / rho0 } else { 0.0 };
            recurrences += usize::from(beta > 0.0);
            let want: Vec<f64> = z.iter().zip(&d0).map(|(z, d)| z + beta * d).collect();
            near(&what("d"), &d, &want);
            let dq = dot(&d, &q);
            close(&what("d·q"), scalar(&after, 2), dq);
            // α from the stored f32 scalars, cut to 12 significant bits as documented (so that
            // α d is exact in the double-float update); none where either is not positive.
            let (rho32, dq32) = (scalar(&after, slot) as f32, scalar(&after, 2) as f32);
            let alpha = if rho32 > 0.0 && dq32 > 0.0 {
                let a = f64::from(rho32 / dq32);
                let unit = 2f64.powf(a.log2().floor() - 11.0);
                (a / unit).floor() * unit
            } else {
                0.0
            };
            let want: Vec<f64> = r0.iter().zip(&q).map(|(r, q)| r - alpha * q).collect();
            near(&what("r"), &r, &want);
            before = after;
        }
    }
    assert!(recurrences >= 6, "only {recurrences} iterations took the recurrence rather than a restart");
}

/// The double-float pressure: at 256², on the divergence of a large-scale flow plus 10 % noise
/// (the solver benchmark's kind of problem: the pressure is large against its Laplacian, as a
/// simulation's is), multigrid in double-float reaches 1e-6 in 6 V-cycles and MGPCG in 8
/// iterations, where single-precision multigrid stalls above 2e-6 (the f32 rounding of the
/// pressure itself).
pub fn double_float_pressure<B: Backend>(make: impl Fn() -> B) {
    use fluid_core::params::{Precision, PressureSolver};
    let grid = Grid::new(256, 256, 1.0 / 256.0, fluid::Boundary::Wall, fluid::Boundary::Wall).expect("grid");
    let (mut u, mut v) = random_wall_velocity(&grid, 5);
    let n = grid.nx as usize;
    let pi = std::f32::consts::PI;
    for (k, x) in u.iter_mut().enumerate() {
        let (i, j) = ((k % (n + 1)) as f32 / n as f32, ((k / (n + 1)) as f32 + 0.5) / n as f32);
        *x = if k % (n + 1) == 0 || k % (n + 1) == n { 0.0 } else { (pi * i).sin() * (2.0 * pi * j).cos() + 0.1 * *x };
    }
    for (k, x) in v.iter_mut().enumerate() {
        let (i, j) = (((k % n) as f32 + 0.5) / n as f32, (k / n) as f32 / n as f32);
        *x = if k < n || k >= n * n { 0.0 } else { (3.0 * pi * i).cos() * (pi * j).sin() + 0.1 * *x };
    }
    let solve = |solver: PressureSolver, iterations: u32, precision: Option<Precision>| {
        let mut b = with_velocity(make(), &grid, &u, &v);
        let mut params = cold_projection(&grid, solver, iterations, None);
        params.pressure.precision = precision;
        projected_residual(&mut b, &grid, &params)
    };
    let single = solve(PressureSolver::Multigrid, 12, Some(Precision::Single));
    let double = solve(PressureSolver::Multigrid, 6, None);
    let cg = solve(PressureSolver::Mgpcg, 8, None);
    eprintln!("256x256: multigrid single x12 {single:.2e}, double-float x6 {double:.2e}; mgpcg x8 {cg:.2e}");
    assert!(single > 2e-6, "single-precision multigrid went below its f32 floor: {single:.2e}");
    assert!(double < 1e-6, "double-float multigrid, 6 V-cycles: {double:.2e}");
    assert!(cg < 1e-6, "MGPCG, 8 iterations: {cg:.2e}");
}

/// The Poisson filter against the Jacobi sweeps it unrolls, on a periodic grid (where wrapping is
/// exact): `k = 16`, ω = 0.9, cold and warm-started. Rank 4 matches 16 true sweeps to 1e-3
/// relative L2 (measured ≈ 2e-4; the SVD truncation error of F is 1.7e-4); rank 1 is far worse
/// (≈ 0.1). On a walled grid (mirroring) it removes divergence about as well as the sweeps.
pub fn poisson_filter_vs_jacobi<B: Backend>(make: impl Fn() -> B) {
    use fluid_core::params::{Pressure, PressureSolver};
    let grid = Grid::new(64, 48, 1.0 / 48.0, fluid::Boundary::Periodic, fluid::Boundary::Periodic).expect("grid");
    let mut rng = fluid_core::scene::SplitMix64(21);
    let div: Vec<f32> = (0..grid.cells()).map(|_| rng.next_f32() - 0.5).collect();
    let p0: Vec<f32> = (0..grid.cells()).map(|_| 0.01 * (rng.next_f32() - 0.5)).collect();
    let inputs = StepInputs { dt: 0.05, ..StepInputs::default() };
    let solve = |solver: PressureSolver, rank: u32, warm: bool| {
        let mut b = make();
        b.allocate(GridFields::all(&grid).resources()).expect("allocate");
        b.upload(FieldId::Divergence.into(), &div).expect("upload");
        b.upload(FieldId::Pressure.into(), &p0).expect("upload");
        let mut params = fluid::SimParams::default();
        params.boundary.x = grid.boundary_x;
        params.boundary.y = grid.boundary_y;
        params.pressure =
            Pressure { solver, iterations: 16, omega: Some(0.9), rank, warm_start: warm, ..Default::default() };
        b.run(&step::setup(&grid, &params), &inputs).expect("setup");
        b.run(&step::solve(&grid, &params.pressure, 16, warm), &inputs).expect("solve");
        b.download(FieldId::Pressure.into()).expect("pressure")
    };
    let rel = |a: &[f32], b: &[f32]| {
        let d: f64 = a.iter().zip(b).map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2)).sum();
        let n: f64 = b.iter().map(|y| f64::from(*y).powi(2)).sum();
        (d / n).sqrt()
    };
    for warm in [false, true] {
        let jacobi = solve(PressureSolver::Jacobi, 4, warm);
        let r4 = rel(&solve(PressureSolver::PoissonFilter, 4, warm), &jacobi);
        let r1 = rel(&solve(PressureSolver::PoissonFilter, 1, warm), &jacobi);
        eprintln!("poisson filter k=16 warm={warm}: rank 4 {r4:.2e}, rank 1 {r1:.2e} (relative L2 vs 16 sweeps)");
        assert!(r4 < 1e-3 && r1 > 10.0 * r4, "warm={warm}: rank 4 {r4:.2e}, rank 1 {r1:.2e}");
    }
    let walled = Grid::new(40, 30, 1.0 / 30.0, fluid::Boundary::Wall, fluid::Boundary::Wall).expect("grid");
    let (u, v) = random_wall_velocity(&walled, 3);
    let (before, filtered) = project_with(make(), &walled, &u, &v, None, 16, PressureSolver::PoissonFilter);
    let (_, swept) = project_with(make(), &walled, &u, &v, None, 16, PressureSolver::Jacobi);
    eprintln!("walls: max|div| {before:.3e} -> filter {filtered:.3e}, 16 sweeps {swept:.3e}");
    assert!(filtered < 0.5 * before && filtered < 2.0 * swept, "{before:.3e} -> {filtered:.3e} (sweeps {swept:.3e})");
}

/// `b` with `grid` allocated and the velocity `(u, v)` uploaded.
fn with_velocity<B: Backend>(mut b: B, grid: &Grid, u: &[f32], v: &[f32]) -> B {
    b.allocate(GridFields::all(grid).resources()).expect("allocate");
    b.upload(FieldId::U.into(), u).expect("upload u");
    b.upload(FieldId::V.into(), v).expect("upload v");
    b
}

/// Parameters of a projection from zero pressure with `iterations` of `solver` on `grid`'s
/// boundaries (`omega: None`: the solver's default).
fn cold_projection(
    grid: &Grid,
    solver: fluid_core::params::PressureSolver,
    iterations: u32,
    omega: Option<f32>,
) -> fluid::SimParams {
    let mut params = fluid::SimParams::default();
    params.boundary.x = grid.boundary_x;
    params.boundary.y = grid.boundary_y;
    params.pressure.iterations = iterations;
    params.pressure.omega = omega;
    params.pressure.warm_start = false;
    params.pressure.solver = solver;
    params
}

/// ‖b − A p‖ / ‖b‖ from the reductions of [`Schedule::diagnostics`].
fn relative_residual(r: &[f64]) -> f64 {
    (r[step::SLOT_RESIDUAL_SQ] / r[step::SLOT_RHS_SQ]).sqrt()
}

/// The grids of the multigrid and MGPCG convergence tests: walled, periodic and mixed; square,
/// odd and non-square.
const SOLVER_GRIDS: [(u32, u32, fluid::Boundary, fluid::Boundary); 5] = {
    use fluid::Boundary::{Periodic, Wall};
    [
        (64, 64, Wall, Wall),
        (128, 96, Wall, Wall),
        (37, 23, Wall, Wall),
        (64, 48, Periodic, Periodic),
        (33, 40, Periodic, Wall),
    ]
};

/// A random velocity with zero normal velocity on the walls.
fn random_wall_velocity(grid: &Grid, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = fluid_core::scene::SplitMix64(seed);
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let mut u: Vec<f32> = (0..grid.len(FieldId::U)).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
    let mut v: Vec<f32> = (0..grid.len(FieldId::V)).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
    for j in 0..ny {
        u[j * (nx + 1)] = 0.0;
        u[j * (nx + 1) + nx] = 0.0;
    }
    for i in 0..nx {
        v[i] = 0.0;
        v[ny * nx + i] = 0.0;
    }
    (u, v)
}

/// Velocity `u = ∇φ` for a potential `φ(i, j)` on cell centres (periodic grid).
fn gradient_of(grid: &Grid, phi: impl Fn(usize, usize) -> f64) -> (Vec<f32>, Vec<f32>) {
    let (nx, ny, h) = (grid.nx as usize, grid.ny as usize, f64::from(grid.h));
    let mut u = vec![0.0f32; grid.len(FieldId::U)];
    let mut v = vec![0.0f32; grid.len(FieldId::V)];
    for j in 0..ny {
        for i in 0..=nx {
            u[j * (nx + 1) + i] = ((phi(i % nx, j) - phi((i + nx - 1) % nx, j)) / h) as f32;
        }
    }
    for j in 0..=ny {
        for i in 0..nx {
            v[j * nx + i] = ((phi(i, j % ny) - phi(i, (j + ny - 1) % ny)) / h) as f32;
        }
    }
    (u, v)
}

/// A single Fourier mode of divergence on a periodic grid is an eigenvector of the sweep: each
/// sweep multiplies it by `1 − ω μ / 4`, `μ = 4 − 2cos θx − 2cos θy`. Checked to 1e-3.
pub fn projection_single_mode<B: Backend>(make: impl Fn() -> B) {
    use std::f64::consts::TAU;
    let grid = Grid::new(32, 24, 0.1, fluid::Boundary::Periodic, fluid::Boundary::Periodic).expect("grid");
    let (tx, ty) = (TAU * 3.0 / 32.0, TAU * 2.0 / 24.0);
    let (u, v) = gradient_of(&grid, |i, j| (tx * i as f64 + ty * j as f64).cos());
    let mu = 4.0 - 2.0 * tx.cos() - 2.0 * ty.cos();
    for (omega, sweeps) in [(0.9f32, 10u32), (0.7, 30)] {
        let (before, after) = project(make(), &grid, &u, &v, omega, sweeps);
        let factor = (1.0 - f64::from(omega) * mu / 4.0).abs().powi(sweeps as i32);
        let err = (after / before / factor - 1.0).abs();
        assert!(
            err < 1e-3,
            "omega {omega}, {sweeps} sweeps: reduction {:.5e}, predicted {factor:.5e} (relative error {err:.2e})",
            after / before
        );
    }
}

/// The checkerboard divergence (μ = 8) on a periodic grid: plain Jacobi (ω = 1) leaves it as it
/// is (factor |1 − 2ω| = 1), ω = 0.8 damps it by 0.6 per sweep.
pub fn projection_checkerboard<B: Backend>(make: impl Fn() -> B) {
    let grid = Grid::new(16, 12, 0.1, fluid::Boundary::Periodic, fluid::Boundary::Periodic).expect("grid");
    let (u, v) = gradient_of(&grid, |i, j| if (i + j) % 2 == 0 { 1.0 } else { -1.0 });
    let (before, after) = project(make(), &grid, &u, &v, 1.0, 20);
    assert!((after / before - 1.0).abs() < 1e-3, "plain Jacobi: {before:.4e} -> {after:.4e}, expected unchanged");
    let (before, after) = project(make(), &grid, &u, &v, 0.8, 20);
    let factor = 0.6f64.powi(20);
    assert!(
        (after / before / factor - 1.0).abs() < 1e-2,
        "omega 0.8: reduction {:.4e}, expected 0.6^20 = {factor:.4e}",
        after / before
    );
}

/// Largest `|f(i, j) − f(nx−1−i, j)|` of a cell field, relative to its largest value.
pub fn mirror_asymmetry(grid: &Grid, f: &[f32]) -> f64 {
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let mut worst = 0.0f64;
    let mut peak = 0.0f64;
    for j in 0..ny {
        for i in 0..nx {
            let a = f64::from(f[j * nx + i]);
            let b = f64::from(f[j * nx + nx - 1 - i]);
            worst = worst.max((a - b).abs());
            peak = peak.max(a.abs());
        }
    }
    if peak > 0.0 { worst / peak } else { 0.0 }
}

/// The `smoke` preset on a 64 × 96 grid, emitter on the centre line: the plume must stay
/// mirror-symmetric. In exact arithmetic it is exactly symmetric; float rounding seeds
/// asymmetries of ~1e-7 that the flow amplifies, so the bound is loose where that growth
/// starts and tight where a real bug (an off-by-one face, a one-sided stencil) would show
/// at once: density within 1e-3 of its peak after 1 s.
pub fn plume_symmetry<B: Backend>(make: impl Fn() -> B) {
    let overrides: Vec<_> =
        ["grid.nx=64", "grid.ny=96"].iter().map(|s| fluid::parse_override(s).expect("override")).collect();
    let scene = Scene::preset_with("smoke", &overrides).expect("scene");
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let grid = *sim.grid();
    for _ in 0..60 {
        sim.step(dt).expect("step");
    }
    let density = sim.field(FieldId::Density).expect("density");
    let peak = density.iter().fold(0.0f32, |m, x| m.max(*x));
    assert!(peak > 0.1, "the plume exists (peak density {peak})");
    let asym = mirror_asymmetry(&grid, &density);
    assert!(asym < 1e-3, "density mirror asymmetry {asym:.3e} > 1e-3 of the peak");
    // The rising plume has moved up: its centre of mass is above the emitter.
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let (mut m, mut my) = (0.0f64, 0.0f64);
    for j in 0..ny {
        for i in 0..nx {
            m += f64::from(density[j * nx + i]);
            my += f64::from(density[j * nx + i]) * (j as f64 + 0.5) / ny as f64;
        }
    }
    assert!(my / m > 0.12, "plume centre of mass at {:.3} of the height, expected above the emitter", my / m);
}

/// `jacobi-multisweep` (up to `MULTISWEEP_MAX` sweeps per dispatch) gives the same projection as plain sweeps,
/// for even and odd sweep counts: max |div| within 1e-6 relative.
pub fn projection_multisweep_equals_plain<B: Backend>(make: impl Fn() -> B) {
    use fluid_core::params::PressureSolver;
    for (bx, by) in [(fluid::Boundary::Wall, fluid::Boundary::Wall), (fluid::Boundary::Periodic, fluid::Boundary::Wall)]
    {
        let grid = Grid::new(45, 29, 0.05, bx, by).expect("grid");
        let mut rng = fluid_core::scene::SplitMix64(11);
        let u: Vec<f32> = (0..grid.len(FieldId::U)).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
        let v: Vec<f32> = (0..grid.len(FieldId::V)).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
        for sweeps in [2u32, 7, 19, 40] {
            let (_, plain) = project_with(make(), &grid, &u, &v, Some(0.9), sweeps, PressureSolver::Jacobi);
            let (_, fused) = project_with(make(), &grid, &u, &v, Some(0.9), sweeps, PressureSolver::JacobiMultisweep);
            let rel = (plain - fused).abs() / plain;
            assert!(rel < 1e-6, "{bx:?}/{by:?}, {sweeps} sweeps: plain {plain:.6e}, multisweep {fused:.6e}");
        }
    }
}

/// Total, centroid offset from `centre` and variance along each axis, as [`moments`] gives them.
type Moments = (f64, [f64; 2], [f64; 2]);

/// Total, centroid offset from `centre` and variance along each axis of the samples `q(index)`
/// at positions `at(index)`, index in `0..count` (any unit of length). An axis with
/// `Some(length)` is periodic: each offset is wrapped into `[−L/2, L/2)`, the nearest image.
fn moments(
    q: impl Fn(usize) -> f64,
    count: usize,
    at: impl Fn(usize) -> [f64; 2],
    centre: [f64; 2],
    wrap: [Option<f64>; 2],
) -> Moments {
    let (mut m, mut s1, mut s2) = (0.0, [0.0; 2], [0.0; 2]);
    for c in 0..count {
        let (w, p) = (q(c), at(c));
        m += w;
        for a in 0..2 {
            let mut d = p[a] - centre[a];
            if let Some(len) = wrap[a] {
                d = (d + len / 2.0).rem_euclid(len) - len / 2.0;
            }
            s1[a] += w * d;
            s2[a] += w * d * d;
        }
    }
    let mean = [s1[0] / m, s1[1] / m];
    (m, mean, [s2[0] / m - mean[0] * mean[0], s2[1] / m - mean[1] * mean[1]])
}

/// Semi-Lagrangian transport in a uniform flow against the scheme's exact answer.
///
/// A gaussian blob of density and dye rides a uniform velocity across a periodic 64 × 48 box
/// for 60 steps, at 1.3 cells per step along x (a CFL number above 1) and −0.45 along y, so it
/// crosses the box's edges. In a uniform flow every backtrace (RK2 or RK3) lands exactly
/// `U·dt` upstream, and bilinear interpolation between the two cells around that point with
/// weights `f` and `1 − f` (`f` the fractional part of the shift in cells) keeps the total,
/// moves the centroid by exactly the shift, and widens the blob's variance along each axis by
/// exactly `f(1 − f)` cells² per step (the variance of a two-point distribution). Those three
/// hold to f32 rounding, so the tolerances are tight: mass 1e-5 relative, centroid 1e-3 cells,
/// variance growth 0.5 %. A wrong interpolation weight, a half-cell offset in the sample
/// positions, a wrong dt or cell-size scale or a bad periodic wrap misses by far more. The
/// velocity itself must stay uniform (the projection has nothing to remove).
pub fn uniform_translation<B: Backend>(make: impl Fn() -> B) {
    let (nx, ny) = (64u32, 48u32);
    let h = 1.0 / 64.0;
    let dt = 1.0 / 128.0;
    let shift = [1.3f64, -0.45]; // cells per step
    for backtrace in ["rk2", "rk3"] {
        let scene = test_scene(
            "uniform-translation",
            nx,
            ny,
            h,
            dt,
            &format!(
                "fields = {{ density = true, temperature = false, dye = true }}\n\
                 boundary = {{ x = \"periodic\", y = \"periodic\" }}\n\
                 advection = {{ backtrace = \"{backtrace}\" }}"
            ),
        );
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        let grid = *sim.grid();
        let (u0, v0) = ((shift[0] * h / dt) as f32, (shift[1] * h / dt) as f32);
        sim.set_field(FieldId::U, &vec![u0; grid.len(FieldId::U)]).expect("u");
        sim.set_field(FieldId::V, &vec![v0; grid.len(FieldId::V)]).expect("v");
        let start = [20.3f64, 30.7];
        let sigma = 2.5f64;
        let blob: Vec<f32> = (0..(nx * ny) as usize)
            .map(|c| {
                let (i, j) = ((c % nx as usize) as f64 + 0.5, (c / nx as usize) as f64 + 0.5);
                (-((i - start[0]).powi(2) + (j - start[1]).powi(2)) / (2.0 * sigma * sigma)).exp() as f32
            })
            .collect();
        let dye: Vec<f32> = blob.iter().flat_map(|&b| [b, 0.5 * b, 0.0, b]).collect();
        sim.set_field(FieldId::Density, &blob).expect("density");
        sim.set_field(FieldId::Dye, &dye).expect("dye");
        // Cell centres in cells, both axes periodic.
        let cell = |c: usize| [(c % nx as usize) as f64 + 0.5, (c / nx as usize) as f64 + 0.5];
        let (cells, wrap) = ((nx * ny) as usize, [Some(f64::from(nx)), Some(f64::from(ny))]);
        let (m0, c0, var0) = moments(|c| f64::from(blob[c]), cells, cell, start, wrap);
        for k in 1..=60u32 {
            sim.step(dt as f32).expect("step");
            if k % 20 != 0 {
                continue;
            }
            let n = f64::from(k);
            let centre = [start[0] + c0[0] + n * shift[0], start[1] + c0[1] + n * shift[1]];
            let density = sim.field(FieldId::Density).expect("density");
            let dye = sim.field(FieldId::Dye).expect("dye");
            for (name, values, stride, offset) in
                [("density", &density, 1, 0), ("dye red", &dye, 4, 0), ("dye alpha", &dye, 4, 3)]
            {
                let (m, c, var) = moments(|c| f64::from(values[stride * c + offset]), cells, cell, centre, wrap);
                let ctx = format!("{backtrace}, {name}, after {k} steps");
                assert!((m / m0 - 1.0).abs() < 1e-5, "{ctx}: mass {m} against {m0} at the start");
                for a in 0..2 {
                    let axis = ["x", "y"][a];
                    assert!(
                        c[a].abs() < 1e-3,
                        "{ctx}: the centroid is {:.5} cells off the exact {:.2}-cell shift along {axis}",
                        c[a],
                        n * shift[a]
                    );
                    let f = shift[a].rem_euclid(1.0);
                    let expected = n * f * (1.0 - f);
                    let grown = var[a] - var0[a];
                    assert!(
                        (grown / expected - 1.0).abs() < 5e-3,
                        "{ctx}: the variance along {axis} grew by {grown:.5} cells², the scheme's \
                         exact growth is {expected:.5} (f(1 - f) per step, f = {f:.2})"
                    );
                }
            }
            let (u, v) = (sim.field(FieldId::U).expect("u"), sim.field(FieldId::V).expect("v"));
            let drift = u.iter().map(|x| (x - u0).abs()).chain(v.iter().map(|x| (x - v0).abs())).fold(0.0f32, f32::max);
            assert!(drift < 1e-4 * u0.abs(), "after {k} steps the uniform velocity drifted by {drift}");
        }
    }
}

/// Velocity advection of a shear wave against the scheme's exact answer.
///
/// In a periodic 64 × 16 box, `u = U` (1.3 cells per step) and `v = B sin(k x)` with `k` three
/// waves across the box: `v` depends on x alone, so the field is divergence-free on the MAC
/// grid and the exact flow only carries the wave along x. Semi-Lagrangian advection with a
/// shift of `n + f` cells multiplies the wave's complex amplitude (`Σ v e^{−ikx}`) by exactly
/// `G = e^{−iknh}((1 − f) + f e^{−ikh})` per step: bilinear interpolation damps it by |G| (0.991
/// per step here) and lags it by a known phase. After 60 steps the amplitude must equal
/// `G^60` times the first to 1e-4 of the first (f32 rounding and the projection of what it
/// leaves are far below that); `u` must stay `U`. This checks `advect_velocity` where
/// [`uniform_translation`] checks `advect_cells`: a wrong face position (the half-cell offsets
/// of the staggered grid) shifts the phase, a wrong weight changes the damping.
pub fn shear_wave_advection<B: Backend>(make: impl Fn() -> B) {
    use std::f64::consts::TAU;
    let (nx, ny) = (64u32, 16u32);
    let h = 1.0 / 64.0;
    let dt = 1.0 / 128.0;
    let shift = 1.3f64;
    let (m, b) = (3.0f64, 0.05f64);
    let k = TAU * m / (f64::from(nx) * h);
    for backtrace in ["rk2", "rk3"] {
        let scene = test_scene(
            "shear-wave",
            nx,
            ny,
            h,
            dt,
            &format!(
                "fields = {{ density = false, temperature = false, dye = false }}\n\
                 boundary = {{ x = \"periodic\", y = \"periodic\" }}\n\
                 advection = {{ backtrace = \"{backtrace}\" }}\n\
                 pressure = {{ solver = \"multigrid\", iterations = 2 }}"
            ),
        );
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        let grid = *sim.grid();
        let u0 = (shift * h / dt) as f32;
        sim.set_field(FieldId::U, &vec![u0; grid.len(FieldId::U)]).expect("u");
        // v faces sit at x = (i + ½) h.
        let x = |i: usize| (i as f64 + 0.5) * h;
        let v: Vec<f32> = (0..grid.len(FieldId::V)).map(|c| (b * (k * x(c % nx as usize)).sin()) as f32).collect();
        sim.set_field(FieldId::V, &v).expect("v");
        // The wave's complex amplitude: the mean over the distinct faces of v e^{−ikx}.
        let amplitude = |v: &[f32]| {
            let (mut re, mut im) = (0.0, 0.0);
            for j in 0..ny as usize {
                for i in 0..nx as usize {
                    let (s, c) = (k * x(i)).sin_cos();
                    re += f64::from(v[j * nx as usize + i]) * c;
                    im -= f64::from(v[j * nx as usize + i]) * s;
                }
            }
            let n = f64::from(nx * ny);
            (re / n, im / n)
        };
        let a0 = amplitude(&v);
        let f = shift.rem_euclid(1.0);
        let kh = k * h;
        // G = e^{−ik n h} ((1 − f) + f e^{−ikh}).
        let (gr, gi) = ((1.0 - f) + f * kh.cos(), -f * kh.sin());
        let (lr, li) = ((shift.floor() * kh).cos(), -(shift.floor() * kh).sin());
        let g = (gr * lr - gi * li, gr * li + gi * lr);
        let steps = 60u32;
        for _ in 0..steps {
            sim.step(dt as f32).expect("step");
        }
        let mut want = a0;
        for _ in 0..steps {
            want = (want.0 * g.0 - want.1 * g.1, want.0 * g.1 + want.1 * g.0);
        }
        let got = amplitude(&sim.field(FieldId::V).expect("v"));
        let norm = (a0.0 * a0.0 + a0.1 * a0.1).sqrt();
        let err = ((got.0 - want.0).powi(2) + (got.1 - want.1).powi(2)).sqrt() / norm;
        let (gmag, wmag) = ((got.0 * got.0 + got.1 * got.1).sqrt(), (want.0 * want.0 + want.1 * want.1).sqrt());
        assert!(
            err < 1e-4,
            "{backtrace}: after {steps} steps the wave's amplitude is {:.6} of the first at phase {:.5} rad; \
             the scheme's exact answer is {:.6} at {:.5} rad (error {err:.2e} of the first, > 1e-4)",
            gmag / norm,
            got.1.atan2(got.0),
            wmag / norm,
            want.1.atan2(want.0)
        );
        let u = sim.field(FieldId::U).expect("u");
        let drift = u.iter().map(|x| (x - u0).abs()).fold(0.0f32, f32::max);
        assert!(drift < 1e-4 * u0, "{backtrace}: the uniform u drifted by {drift}");
    }
}

/// The `splat` kernel against the integrals of its falloffs.
///
/// One splat of radius 0.3 (6 cells of 0.05) on a 64 × 56 grid, alone on zero fields, once
/// with walls and centred off the grid's points (its gaussian's 4 radii short of every wall),
/// once with periodic axes and centred next to a corner so that it wraps across both edges.
/// Each quantity it adds must total its amount times the falloff's integral over the plane,
/// `π r²` for `exp(−d²/r²)` (the cut at 4 radii loses `e^{−16}`) and `π r²/3` for the cone
/// `1 − d/r`, and must be centred on the splat: density, temperature and dye over the cells,
/// each velocity component over its own faces. The grid's sums of a gaussian this wide equal
/// the integral to f32 rounding, so its tolerances are 1e-5 relative and 1e-4 cells (measured:
/// 2e-7 and 1e-6); the cone's kink at its tip and its rim cost the midpoint sums up to 1e-3
/// relative and 5e-3 cells (measured on every backend), so its tolerances are 2e-3 and 1e-2
/// cells. Radii in cells instead of world units, a face or cell sampled a tenth of a cell off,
/// a wrong falloff or a bad wrap miss by far more.
pub fn splat_integrals<B: Backend>(make: impl Fn() -> B) {
    use fluid::Boundary::{Periodic, Wall};
    use fluid::{Falloff, Splat};
    use std::f64::consts::PI;
    let (nx, ny, h) = (64u32, 56u32, 0.05f32);
    for (boundary, centre) in [(Wall, [1.63f32, 1.37]), (Periodic, [0.04, 2.77])] {
        for falloff in [Falloff::Gaussian, Falloff::Linear] {
            let grid = Grid::new(nx, ny, h, boundary, boundary).expect("grid");
            let splat = Splat {
                center: centre,
                radius: 0.3,
                falloff,
                velocity: [2.0, -1.0],
                density: 1.5,
                temperature: 0.7,
                dye: [0.2, 0.4, 0.6, 0.8],
            };
            let zero = |f: FieldId| (f, vec![0.0; grid.len(f)]);
            let fields = [FieldId::U, FieldId::V, FieldId::Density, FieldId::Temperature, FieldId::Dye].map(zero);
            let mut b = run_alone(&make, &grid, kernels::SPLAT, None, &fields, vec![splat]);
            let r = f64::from(splat.radius);
            let (integral, rel, cells) = match falloff {
                Falloff::Gaussian => (PI * r * r, 1e-5, 1e-4),
                Falloff::Linear => (PI * r * r / 3.0, 2e-3, 1e-2),
            };
            let hh = f64::from(h);
            let nxu = nx as usize;
            let cell = |c: usize| [((c % nxu) as f64 + 0.5) * hh, ((c / nxu) as f64 + 0.5) * hh];
            let u_face = |c: usize| face_position(&grid, FieldId::U, c);
            let v_face = |c: usize| face_position(&grid, FieldId::V, c);
            let density = b.download(FieldId::Density.into()).expect("density");
            let temperature = b.download(FieldId::Temperature.into()).expect("temperature");
            let dye = b.download(FieldId::Dye.into()).expect("dye");
            let u = b.download(FieldId::U.into()).expect("u");
            let v = b.download(FieldId::V.into()).expect("v");
            let channel = |k: usize| dye.iter().skip(k).step_by(4).copied().collect::<Vec<f32>>();
            let c64 = [f64::from(centre[0]), f64::from(centre[1])];
            let wrap = match boundary {
                Periodic => [Some(f64::from(nx) * hh), Some(f64::from(ny) * hh)],
                _ => [None, None],
            };
            // Total Σ q h² and centroid offset, in world units, each face counted once.
            let world = |field: FieldId, q: &[f32], at: &dyn Fn(usize) -> [f64; 2]| {
                let value = |c: usize| if periodic_copy(&grid, field, c) { 0.0 } else { f64::from(q[c]) };
                let (m, offset, _) = moments(value, q.len(), at, c64, wrap);
                (m * hh * hh, offset)
            };
            let checks = [
                ("density", 1.5, world(FieldId::Density, &density, &cell)),
                ("temperature", 0.7, world(FieldId::Temperature, &temperature, &cell)),
                ("dye red", 0.2, world(FieldId::Dye, &channel(0), &cell)),
                ("dye alpha", 0.8, world(FieldId::Dye, &channel(3), &cell)),
                ("u", 2.0, world(FieldId::U, &u, &u_face)),
                ("v", -1.0, world(FieldId::V, &v, &v_face)),
            ];
            for (name, amount, (total, offset)) in checks {
                let ctx = format!("{falloff:?} splat, {boundary:?} axes, {name}");
                let want = amount * integral;
                assert!(
                    (total / want - 1.0).abs() < rel,
                    "{ctx}: the grid holds {total:.6} of it, the falloff's integral gives {want:.6} \
                     (relative tolerance {rel:e})"
                );
                for (a, axis) in ["x", "y"].iter().enumerate() {
                    assert!(
                        offset[a].abs() / hh < cells,
                        "{ctx}: centred {:.5} cells off the splat along {axis} (tolerance {cells:e})",
                        offset[a] / hh
                    );
                }
            }
        }
    }
}

/// Uniform forces and dissipation in a periodic box against their exact recurrences.
///
/// On a periodic box a uniform acceleration is divergence-free and no pressure can balance
/// it, so the whole fluid accelerates; uniform fields stay uniform under advection. The step
/// decays each field by `e^{−k dt}` while advecting it, then adds the forces, then clamps, so
/// after step n, with `q = e^{−k_v dt}`:
/// - gravity `g`: `u_n = q u_{n−1} + g dt`;
/// - Boussinesq buoyancy along +y, `a = −w ρ + L (T − T_amb)` with `ρ` and `T − T_amb` decaying
///   at their own rates: `v_n = q v_{n−1} + a_n dt`, and `ρ_n`, `T_n` and each dye channel
///   follow their exponentials; with both terms, and with each alone;
/// - a speed clamp `s`: `v_n = min(v_{n−1} + g dt, s)` per component, exactly `s` once reached;
///   and the clamp alone, in a scene with no force, on a fluid that starts faster than `s`:
///   `±s` after one step.
///
/// 40 steps of each on every backend; the tolerance, 1e-5 relative, is f32 rounding over the
/// steps. A force with the wrong sign, scale or time unit, the decay applied after the forces or
/// per frame instead of per second, or a clamp of the speed instead of each component misses by
/// far more.
pub fn uniform_forces<B: Backend>(make: impl Fn() -> B) {
    let (dt, steps) = (0.05f64, 40u32);
    let scene = |params: &str| {
        let periodic = "boundary = { x = \"periodic\", y = \"periodic\" }";
        test_scene("uniform-forces", 16, 12, 0.1, dt, &format!("{periodic}\n{params}"))
    };
    let check = |what: &str, got: &[f32], want: f64| {
        for (c, &x) in got.iter().enumerate() {
            let err = (f64::from(x) - want).abs();
            assert!(
                err <= 1e-5 * want.abs().max(1e-3),
                "{what}: sample {c} holds {x}, the exact recurrence gives {want} (relative tolerance 1e-5)"
            );
        }
    };
    let q = |k: f64| (-k * dt).exp();

    // Gravity with velocity dissipation.
    let mut sim = Simulation::new(
        scene(
            "gravity = [0.3, -0.7]\ndissipation = { velocity = 0.5 }\nfields = { density = false, temperature = false, dye = false }",
        ),
        make(),
    )
    .expect("simulation");
    let (mut u, mut v) = (0.0f64, 0.0f64);
    for n in 1..=steps {
        sim.step(dt as f32).expect("step");
        u = q(0.5) * u + 0.3 * dt;
        v = q(0.5) * v - 0.7 * dt;
        if n % 10 == 0 {
            check(&format!("gravity, u after {n} steps"), &sim.field(FieldId::U).expect("u"), u);
            check(&format!("gravity, v after {n} steps"), &sim.field(FieldId::V).expect("v"), v);
        }
    }

    // Buoyancy from a uniform density and temperature, each decaying at its own rate: both
    // terms, and each alone (the other's weight zero).
    let (rho0, t0, amb) = (0.8f64, 5.0f64, 1.0f64);
    for (w, lift) in [(0.4f64, 2.0f64), (0.4, 0.0), (0.0, 2.0)] {
        let mut sim = Simulation::new(
            scene(&format!(
                "dissipation = {{ velocity = 0.2, density = 0.3, temperature = 0.6, dye = 0.45 }}\n\
                 buoyancy = {{ density_weight = {w}, temperature_lift = {lift}, ambient_temperature = {amb} }}\n\
                 fields = {{ density = true, temperature = true, dye = true }}"
            )),
            make(),
        )
        .expect("simulation");
        let cells = sim.grid().len(FieldId::Density);
        sim.set_field(FieldId::Density, &vec![rho0 as f32; cells]).expect("density");
        sim.set_field(FieldId::Temperature, &vec![t0 as f32; cells]).expect("temperature");
        let dye0 = [0.9f64, 0.5, 0.25, 1.0];
        let dye: Vec<f32> = (0..cells).flat_map(|_| dye0.map(|x| x as f32)).collect();
        sim.set_field(FieldId::Dye, &dye).expect("dye");
        let mut v = 0.0f64;
        for n in 1..=steps {
            sim.step(dt as f32).expect("step");
            let t = f64::from(n) * dt;
            let rho = rho0 * (-0.3 * t).exp();
            let excess = (t0 - amb) * (-0.6 * t).exp();
            v = q(0.2) * v + (lift * excess - w * rho) * dt;
            if n % 10 == 0 {
                check(
                    &format!("buoyancy (w {w}, L {lift}), density after {n} steps"),
                    &sim.field(FieldId::Density).expect("d"),
                    rho,
                );
                check(
                    &format!("buoyancy (w {w}, L {lift}), temperature after {n} steps"),
                    &sim.field(FieldId::Temperature).expect("t"),
                    amb + excess,
                );
                check(&format!("buoyancy (w {w}, L {lift}), v after {n} steps"), &sim.field(FieldId::V).expect("v"), v);
                let dye = sim.field(FieldId::Dye).expect("dye");
                for (k, d0) in dye0.iter().enumerate() {
                    let channel: Vec<f32> = dye.iter().skip(k).step_by(4).copied().collect();
                    check(
                        &format!("w {w}, L {lift}: dye channel {k} after {n} steps"),
                        &channel,
                        d0 * (-0.45 * t).exp(),
                    );
                }
                check(
                    &format!("buoyancy (w {w}, L {lift}), u after {n} steps"),
                    &sim.field(FieldId::U).expect("u"),
                    0.0,
                );
            }
        }
    }

    // A speed clamp on each component.
    let mut sim = Simulation::new(
        scene("gravity = [-2.0, 5.0]\nmax_speed = 0.6\nfields = { density = false, temperature = false, dye = false }"),
        make(),
    )
    .expect("simulation");
    let (mut u, mut v) = (0.0f64, 0.0f64);
    for n in 1..=steps {
        sim.step(dt as f32).expect("step");
        u = (u - 2.0 * dt).max(-0.6);
        v = (v + 5.0 * dt).min(0.6);
        if n % 2 == 0 {
            check(&format!("clamp, u after {n} steps"), &sim.field(FieldId::U).expect("u"), u);
            check(&format!("clamp, v after {n} steps"), &sim.field(FieldId::V).expect("v"), v);
        }
    }

    // The clamp alone, with no force in the scene, on a fluid that starts too fast.
    let mut sim = Simulation::new(
        scene("max_speed = 0.6\nfields = { density = false, temperature = false, dye = false }"),
        make(),
    )
    .expect("simulation");
    let grid = *sim.grid();
    sim.set_field(FieldId::U, &vec![1.5; grid.len(FieldId::U)]).expect("u");
    sim.set_field(FieldId::V, &vec![-2.0; grid.len(FieldId::V)]).expect("v");
    sim.step(dt as f32).expect("step");
    check("clamp alone, u after 1 step", &sim.field(FieldId::U).expect("u"), 0.6);
    check("clamp alone, v after 1 step", &sim.field(FieldId::V).expect("v"), -0.6);
}

/// Vorticity confinement acts within a step, on that step's vorticity.
///
/// A shielded gaussian vortex, the streamfunction `ψ = A e^{−r²/σ²}` (σ = 8 cells, centred off
/// the grid on a 64 × 64 wall box) differenced onto the faces, so that the velocity is exactly
/// divergence-free, a steady solution of the Euler equations. Its vorticity is `ω = (4A/σ²)
/// e^{−r²/σ²} (1 − r²/σ²)`, and where `|ω|` falls outwards (the core, `r < σ`) Fedkiw et al.'s
/// force `ε h (N × ω)` is `ε h ω θ̂` (the kernel check above pins this). That force is azimuthal
/// with a magnitude that depends on `r` only, so it is divergence-free and the projection
/// leaves it. Two simulations step once from the same state, one with confinement `ε` and one
/// without: they advect identically, so their difference is the force times dt. Checked on
/// every face 4 to 6.4 cells from the centre to 3 % of the largest force (measured on the CPU:
/// 1.7 % at 4 cells, falling as (h/r)² to 0.5 % at 6; a face's average of two cells whose θ̂
/// differ costs that, 2.7 % at 3 cells). A step that left the curl out, read last step's or the scratch's zeros, or
/// confined outside the step misses by the whole force.
pub fn vorticity_confinement_in_a_step<B: Backend>(make: impl Fn() -> B) {
    let (h, sigma, amplitude, eps, dt) = (0.05f64, 8.0 * 0.05f64, 0.25f64, 2.0f64, 0.01f64);
    let params = "fields = { density = false, temperature = false, dye = false }";
    let confined = test_scene("confinement-step", 64, 64, h, dt, &format!("vorticity = {eps}\n{params}"));
    let plain = test_scene("confinement-step", 64, 64, h, dt, &format!("vorticity = 0.0\n{params}"));
    let grid = confined.grid().expect("grid");
    let nx = grid.nx as usize;
    let centre = [32.3 * h, 31.8 * h];
    let psi = |i: usize, j: usize| {
        let (dx, dy) = (i as f64 * h - centre[0], j as f64 * h - centre[1]);
        amplitude * (-(dx * dx + dy * dy) / (sigma * sigma)).exp()
    };
    // u = ∂ψ/∂y, v = −∂ψ/∂x across each face: a counter-clockwise vortex.
    let u: Vec<f32> = (0..grid.len(FieldId::U))
        .map(|c| {
            let (i, j) = (c % (nx + 1), c / (nx + 1));
            ((psi(i, j + 1) - psi(i, j)) / h) as f32
        })
        .collect();
    let v: Vec<f32> = (0..grid.len(FieldId::V))
        .map(|c| {
            let (i, j) = (c % nx, c / nx);
            (-(psi(i + 1, j) - psi(i, j)) / h) as f32
        })
        .collect();
    let step = |scene: Scene| {
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        sim.set_field(FieldId::U, &u).expect("u");
        sim.set_field(FieldId::V, &v).expect("v");
        sim.step(dt as f32).expect("step");
        (sim.field(FieldId::U).expect("u"), sim.field(FieldId::V).expect("v"))
    };
    let with = step(confined);
    let without = step(plain);
    let omega0 = 4.0 * amplitude / (sigma * sigma);
    let peak = dt * eps * h * omega0;
    let (mut checked, mut worst) = (0, 0.0f64);
    for (field, a, b, component) in
        [(FieldId::U, &with.0, &without.0, 0usize), (FieldId::V, &with.1, &without.1, 1usize)]
    {
        for (c, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            let p = face_position(&grid, field, c);
            let (i, j) = (p[0] / h, p[1] / h);
            let (dx, dy) = (p[0] - centre[0], p[1] - centre[1]);
            let r = (dx * dx + dy * dy).sqrt();
            if !(4.0 * h..=0.8 * sigma).contains(&r) {
                continue;
            }
            let omega = omega0 * (-(r * r) / (sigma * sigma)).exp() * (1.0 - r * r / (sigma * sigma));
            // dt ε h ω θ̂, θ̂ = (−dy, dx) / r.
            let want = dt * eps * h * omega * [-dy, dx][component] / r;
            let got = f64::from(*x) - f64::from(*y);
            checked += 1;
            worst = worst.max((got - want).abs() / peak);
            assert!(
                (got - want).abs() < 0.03 * peak,
                "{}-face at ({i:.1}, {j:.1}) cells, {:.2} cells from the vortex's centre: one step with confinement differs \
                 from one without by {got:.4e}, expected dt eps h omega theta-hat = {want:.4e} (tolerance 3 % \
                 of the largest, {:.2e})",
                field.name(),
                r / h,
                0.03 * peak
            );
        }
    }
    assert!(checked > 120, "only {checked} faces checked");
    eprintln!("confinement in a step: worst {:.2} % of the largest force over {checked} faces", 100.0 * worst);
}

/// Run one kernel alone on `grid` over `fields` (uploaded first), with `splats` as the step's,
/// and return the backend.
fn run_alone<B: Backend>(
    make: impl Fn() -> B,
    grid: &Grid,
    kernel: fluid_core::Kernel,
    params: Option<ParamBlock>,
    fields: &[(FieldId, Vec<f32>)],
    splats: Vec<fluid::Splat>,
) -> B {
    let mut b = make();
    crate::parity::load(&mut b, grid, fields);
    let extent = match kernel.domain {
        fluid_core::ir::kernel::Domain::Faces => [grid.nx + 1, grid.ny + 1],
        _ => [grid.nx, grid.ny],
    };
    let ids: Vec<FieldId> = fields.iter().map(|(f, _)| *f).collect();
    let schedule = crate::parity::single(grid, kernel, &ids, params, extent);
    let inputs = StepInputs { dt: 0.1, time: 0.0, step: 0, splats };
    b.run(&schedule, &inputs).expect("run");
    b
}

/// The curl and the vorticity-confinement force against their analytic forms.
///
/// - `curl` of a solid-body rotation `(−Ω(y − y_c), Ω(x − x_c))` on a 40 × 30 wall box must be
///   `2Ω` in every cell (central and one-sided differences are exact on a linear field; 1e-4
///   relative for f32 rounding): the sign convention `∂v/∂x − ∂u/∂y` and the cell size.
/// - `apply_forces` with confinement `ε` alone, over a gaussian vorticity `ω = ω₀ e^{−r²/σ²}`
///   (σ = 6 cells, on a periodic 48 × 48 box, centred off the grid): Fedkiw et al. (2001)'s force
///   `ε h (N × ω)`, `N = ∇|ω| / |∇|ω||`, is `ε h ω θ̂` here (N points to the centre), an
///   azimuthal push that spins the vortex up. Every face farther than 4 cells from the centre
///   must get `dt` times that to 2 % of the largest force (measured: 0.8 %; the central
///   differences and the average onto a face of two cells whose θ̂ differ cost
///   O((h/σ)² + (h/r)²)), and the faces within must turn the same way. A flipped sign, a
///   missing `h` or a force on the wrong component misses by far more.
pub fn vorticity_confinement<B: Backend>(make: impl Fn() -> B) {
    use fluid::Boundary::{Periodic, Wall};
    use fluid_core::grid::uniforms::ForceParams;
    let h = 0.05f32;
    let hh = f64::from(h);

    let grid = Grid::new(40, 30, h, Wall, Wall).expect("grid");
    let (omega, xc, yc) = (1.7f64, 0.93f64, 0.71f64);
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let u: Vec<f32> =
        (0..grid.len(FieldId::U)).map(|c| (-omega * (((c / (nx + 1)) as f64 + 0.5) * hh - yc)) as f32).collect();
    let v: Vec<f32> = (0..grid.len(FieldId::V)).map(|c| (omega * (((c % nx) as f64 + 0.5) * hh - xc)) as f32).collect();
    let mut b = run_alone(
        &make,
        &grid,
        kernels::CURL,
        None,
        &[(FieldId::U, u), (FieldId::V, v), (FieldId::Curl, vec![0.0; nx * ny])],
        Vec::new(),
    );
    for (c, w) in b.download(FieldId::Curl.into()).expect("curl").iter().enumerate() {
        assert!(
            (f64::from(*w) / (2.0 * omega) - 1.0).abs() < 1e-4,
            "curl of a solid-body rotation at cell ({}, {}): {w}, expected 2 Omega = {}",
            c % nx,
            c / nx,
            2.0 * omega
        );
    }

    let grid = Grid::new(48, 48, h, Periodic, Periodic).expect("grid");
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let (w0, sigma, eps, dt) = (3.0f64, 6.0 * hh, 0.7f64, 0.1f64);
    let centre = [24.3 * hh, 23.8 * hh];
    let vorticity = |p: [f64; 2]| {
        let r2 = (p[0] - centre[0]).powi(2) + (p[1] - centre[1]).powi(2);
        w0 * (-r2 / (sigma * sigma)).exp()
    };
    let curl: Vec<f32> =
        (0..nx * ny).map(|c| vorticity([((c % nx) as f64 + 0.5) * hh, ((c / nx) as f64 + 0.5) * hh]) as f32).collect();
    let forces = ForceParams { vorticity: eps as f32, ..ForceParams::default() };
    let mut b = run_alone(
        &make,
        &grid,
        kernels::APPLY_FORCES,
        Some(ParamBlock::new(&forces)),
        &[
            (FieldId::U, vec![0.0; grid.len(FieldId::U)]),
            (FieldId::V, vec![0.0; grid.len(FieldId::V)]),
            (FieldId::Density, vec![0.0; nx * ny]),
            (FieldId::Temperature, vec![0.0; nx * ny]),
            (FieldId::Curl, curl),
        ],
        Vec::new(),
    );
    // ε h ω θ̂ at p, times dt; θ̂ = (−(y − y_c), x − x_c) / r.
    let expected = |p: [f64; 2]| {
        let (dx, dy) = (p[0] - centre[0], p[1] - centre[1]);
        let r = (dx * dx + dy * dy).sqrt();
        let s = dt * eps * hh * vorticity(p) / r;
        ([-dy * s, dx * s], r)
    };
    let peak = dt * eps * hh * w0; // |ε h ω θ̂| dt at the centre
    let u = b.download(FieldId::U.into()).expect("u");
    let v = b.download(FieldId::V.into()).expect("v");
    let mut checked = 0;
    let mut worst = 0.0f64;
    for (field, values, component) in [(FieldId::U, &u, 0usize), (FieldId::V, &v, 1usize)] {
        let name = field.name();
        for (c, &got) in values.iter().enumerate() {
            if periodic_copy(&grid, field, c) {
                continue;
            }
            let p = face_position(&grid, field, c);
            let (i, j) = (p[0] / hh, p[1] / hh);
            let (want, r) = expected(p);
            let got = f64::from(got);
            if r > 4.0 * hh {
                checked += 1;
                worst = worst.max((got - want[component]).abs() / peak);
                assert!(
                    (got - want[component]).abs() < 0.02 * peak,
                    "confinement on {name}-face at ({i:.1}, {j:.1}) cells, {:.2} cells from the vortex's centre: {got:.4e}, \
                     expected eps h omega theta-hat dt = {:.4e} (tolerance 2 % of the largest, {:.2e})",
                    r / hh,
                    want[component],
                    0.02 * peak
                );
            } else {
                assert!(
                    got * want[component] >= 0.0,
                    "confinement on {name}-face at ({i:.1}, {j:.1}) cells near the centre turns against the vortex: {got:.4e}, \
                     expected the sign of {:.4e}",
                    want[component]
                );
            }
        }
    }
    assert!(checked > 4000, "only {checked} faces checked");
}

/// The backtraces' order of accuracy against their exact polynomials in a solid-body rotation.
///
/// `advect_cells` alone, over the velocity `(−Ω(y − y_c), Ω(x − x_c))` (Ω dt = 0.3 rad per
/// step) on a 40 × 40 grid, carries `density = x` and `temperature = y`: the velocity and the
/// fields are linear, so bilinear sampling is exact and the two fields come back holding the
/// departure point of every cell. On a linear flow `ẋ = A x` every explicit Runge–Kutta method
/// of s ≤ 3 stages and order s returns the Taylor polynomial of `e^{−A dt}` to degree s
/// (its stability function), so Euler must land on `(I + Z) p`, the midpoint rule on
/// `(I + Z + Z²/2) p` and Ralston's RK3 on `(I + Z + Z²/2 + Z³/6) p`, `Z = −A dt`, each to
/// 1e-4 cells (f32 positions of up to 40 cells). Those differ from each other and from the
/// exact rotation by ≥ 3e-3 cells at 10 cells from the centre, so a backtrace of the wrong
/// order (Ralston's weights mistyped, RK3 falling back to RK2) fails. Cells whose departure
/// lies within 1.5 cells of a wall are left out (the sampling clamps there).
pub fn backtrace_order<B: Backend>(make: impl Fn() -> B) {
    use fluid::Boundary::Wall;
    use fluid_core::grid::uniforms::{ADVECT_DENSITY, ADVECT_TEMPERATURE, AdvectParams};
    let (n, h, dt, omega) = (40u32, 0.025f32, 0.1f64, 3.0f64);
    let grid = Grid::new(n, n, h, Wall, Wall).expect("grid");
    let (nu, hh) = (n as usize, f64::from(h));
    let centre = [20.37f64, 19.71]; // cells
    let u: Vec<f32> =
        (0..grid.len(FieldId::U)).map(|c| (-omega * ((c / (nu + 1)) as f64 + 0.5 - centre[1]) * hh) as f32).collect();
    let v: Vec<f32> =
        (0..grid.len(FieldId::V)).map(|c| (omega * ((c % nu) as f64 + 0.5 - centre[0]) * hh) as f32).collect();
    let x: Vec<f32> = (0..nu * nu).map(|c| (((c % nu) as f64 + 0.5) * hh) as f32).collect();
    let y: Vec<f32> = (0..nu * nu).map(|c| (((c / nu) as f64 + 0.5) * hh) as f32).collect();
    // Z p for p relative to the centre, Z = −Ω dt J (J rotates by +90°).
    let z = |p: [f64; 2]| [omega * dt * p[1], -omega * dt * p[0]];
    for order in 1..=3u32 {
        let params = AdvectParams { order, fields: ADVECT_DENSITY | ADVECT_TEMPERATURE, ..AdvectParams::default() };
        let mut b = run_alone(
            &make,
            &grid,
            kernels::ADVECT_CELLS,
            Some(ParamBlock::new(&params)),
            &[
                (FieldId::U, u.clone()),
                (FieldId::V, v.clone()),
                (FieldId::Density, x.clone()),
                (FieldId::Temperature, y.clone()),
                (FieldId::Dye, vec![0.0; 4 * nu * nu]),
                (FieldId::DensityTmp, vec![0.0; nu * nu]),
                (FieldId::TemperatureTmp, vec![0.0; nu * nu]),
                (FieldId::DyeTmp, vec![0.0; 4 * nu * nu]),
            ],
            Vec::new(),
        );
        let gx = b.download(FieldId::DensityTmp.into()).expect("x");
        let gy = b.download(FieldId::TemperatureTmp.into()).expect("y");
        let mut checked = 0;
        for c in 0..nu * nu {
            let p = [(c % nu) as f64 + 0.5 - centre[0], (c / nu) as f64 + 0.5 - centre[1]];
            // Σ_{k ≤ order} Z^k p / k!
            let (mut term, mut want) = (p, p);
            for k in 1..=order {
                let t = z(term);
                term = [t[0] / f64::from(k), t[1] / f64::from(k)];
                want = [want[0] + term[0], want[1] + term[1]];
            }
            let d = [want[0] + centre[0], want[1] + centre[1]];
            if d.iter().any(|&a| !(1.5..f64::from(n) - 1.5).contains(&a)) {
                continue;
            }
            checked += 1;
            let got = [f64::from(gx[c]) / hh, f64::from(gy[c]) / hh];
            let err = ((got[0] - d[0]).powi(2) + (got[1] - d[1]).powi(2)).sqrt();
            let (ang, r) = (-omega * dt, (p[0] * p[0] + p[1] * p[1]).sqrt());
            let exact =
                [centre[0] + p[0] * ang.cos() - p[1] * ang.sin(), centre[1] + p[0] * ang.sin() + p[1] * ang.cos()];
            assert!(
                err < 1e-4,
                "order {order}: cell ({}, {}), {r:.1} cells from the centre, departs from ({:.5}, {:.5}); \
                 the order-{order} Taylor polynomial of the rotation gives ({:.5}, {:.5}) (the exact \
                 rotation: ({:.5}, {:.5}))",
                c % nu,
                c / nu,
                got[0],
                got[1],
                d[0],
                d[1],
                exact[0],
                exact[1]
            );
        }
        assert!(checked > 1000, "order {order}: only {checked} cells checked");
    }
}

/// A fluid at rest under gravity and a stable stratification stays at rest.
///
/// In a closed 48 × 40 box, uniform gravity and a buoyancy force from a temperature that rises
/// linearly with height (a stable layering, the force a function of y alone) are gradients: the
/// pressure balances them exactly on the MAC grid (its face-to-face difference is what the force
/// puts on each v-face), and the exact answer is no motion at all. After 60 steps, with the
/// multigrid projection and no dissipation, every face must stay below 1e-5 of what one step's
/// forces add (`|g| dt`; measured: 8e-8, 4 % of the limit). Spurious currents from forces put
/// on the wrong faces, or a wall that lets flow through, grow far beyond that.
pub fn rest_state_stays_at_rest<B: Backend>(make: impl Fn() -> B) {
    let (nx, ny, dt, g) = (48u32, 40u32, 0.02f64, 9.8f64);
    let scene = test_scene(
        "rest",
        nx,
        ny,
        0.025,
        dt,
        &format!(
            "gravity = [0.0, -{g}]\n\
             fields = {{ density = false, temperature = true, dye = false }}\n\
             buoyancy = {{ temperature_lift = 3.0, ambient_temperature = 0.0 }}\n\
             pressure = {{ solver = \"multigrid\", iterations = 4 }}"
        ),
    );
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let nxu = nx as usize;
    let t: Vec<f32> =
        (0..nxu * ny as usize).map(|c| (0.5 + 2.0 * ((c / nxu) as f64 + 0.5) / f64::from(ny)) as f32).collect();
    sim.set_field(FieldId::Temperature, &t).expect("temperature");
    for _ in 0..60 {
        sim.step(dt as f32).expect("step");
    }
    let limit = 1e-5 * g * dt;
    for (name, f) in [("u", FieldId::U), ("v", FieldId::V)] {
        let vals = sim.field(f).expect("velocity");
        let (c, worst) = vals
            .iter()
            .enumerate()
            .map(|(c, x)| (c, f64::from(x.abs())))
            .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        assert!(
            worst < limit,
            "a stratified fluid at rest moved: |{name}| = {worst:.3e} at face {c} after 60 steps (limit {limit:.1e}, 1e-5 of g dt)"
        );
    }
}

/// Reads of `curl` through the simulation are the vorticity of the current velocity.
///
/// A Taylor–Green vortex (no vorticity confinement, so no step computes `curl`) on a periodic
/// 32 × 24 box after 3 steps: `field`, `sample`, `request_field` and `render` of `curl` must
/// give `∂v/∂x − ∂u/∂y` of the velocity read back, by central differences of the cell-centred
/// velocities (computed here in f64; 1e-5 of the largest vorticity), not the zeros the step
/// leaves.
pub fn curl_reads_are_the_current_vorticity<B: Backend>(make: impl Fn() -> B) {
    let mut scene = taylor_green_scene(32, 24, 0.1, 0.01, 0.02, 0.5);
    scene.render.field = fluid::RenderField::Curl;
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..3 {
        sim.step(0.02).expect("step");
    }
    let grid = *sim.grid();
    let (nx, ny, h) = (grid.nx as usize, grid.ny as usize, f64::from(grid.h));
    let u = sim.field(FieldId::U).expect("u");
    let v = sim.field(FieldId::V).expect("v");
    let uc = |i: usize, j: usize| 0.5 * (f64::from(u[j * (nx + 1) + i]) + f64::from(u[j * (nx + 1) + i + 1]));
    let vc = |i: usize, j: usize| 0.5 * (f64::from(v[j * nx + i]) + f64::from(v[(j + 1) * nx + i]));
    let want: Vec<f64> = (0..nx * ny)
        .map(|c| {
            let (i, j) = (c % nx, c / nx);
            let (il, ir, jd, ju) = ((i + nx - 1) % nx, (i + 1) % nx, (j + ny - 1) % ny, (j + 1) % ny);
            (vc(ir, j) - vc(il, j)) / (2.0 * h) - (uc(i, ju) - uc(i, jd)) / (2.0 * h)
        })
        .collect();
    let peak = want.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    assert!(peak > 1.0, "the vortex has vorticity {peak}");
    let close = |what: &str, got: &[f32]| {
        for (c, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (f64::from(*g) - w).abs() < 1e-5 * peak,
                "{what}: curl of cell ({}, {}) is {g}, the velocity's vorticity is {w}",
                c % nx,
                c / nx
            );
        }
    };
    close("field", &sim.field(FieldId::Curl).expect("curl"));
    let pending = sim.request_field(FieldId::Curl).expect("request");
    close("request_field", &sim.wait_field(pending).expect("wait"));
    // A sample at a cell centre is that cell's value.
    let (i, j) = (5usize, 17usize);
    let at = [(i as f32 + 0.5) * grid.h, (j as f32 + 0.5) * grid.h];
    let s = sim.sample(FieldId::Curl, &[at]).expect("sample");
    assert!((f64::from(s[0]) - want[j * nx + i]).abs() < 1e-5 * peak, "sample: {} against {}", s[0], want[j * nx + i]);
    let image = sim.render().expect("render");
    assert!(image.chunks(4).any(|p| p != &image[..4]), "the curl renders as one flat colour");
}

/// Viscous decay of a shear mode along free-slip walls.
///
/// Walls are free-slip (`∂u_t/∂n = 0`). In a channel with walls across y and periodic along x,
/// `u = A cos(π y / H)` (v = 0) meets that condition, is divergence-free and is not moved by
/// its own advection (it is uniform along the flow), so only viscosity acts and it decays as
/// `exp(−ν (π/H)² t)`. The same turned a quarter turn (`v = A cos(π x / W)`, walls across x)
/// checks the other axis. Both on a 24 × 32 box of cell 0.05 with ν = 0.05 over 100 steps of
/// 0.02 (the mode decays to 0.68 or 0.50), against the analytic decay to 1 %: the cell-centred
/// Neumann Laplacian's eigenvalue is `(π/H)²` within `(πh/H)²/12` (≤ 0.15 % of the rate) and
/// backward Euler loses `(ν k² dt)²/2` per step (≤ 0.25 % over the run); measured: 0.11 % and
/// 0.33 % after 100 steps. A wall that pins the
/// tangential velocity (no-slip) decays at a different rate by far more than 1 %.
pub fn free_slip_shear_decay<B: Backend>(make: impl Fn() -> B) {
    use std::f64::consts::PI;
    let (nx, ny, h, nu, dt, amplitude) = (24u32, 32u32, 0.05f64, 0.05f64, 0.02f64, 0.01f64);
    for walls_across_y in [true, false] {
        let (bx, by) = if walls_across_y { ("periodic", "wall") } else { ("wall", "periodic") };
        let scene = test_scene(
            "free-slip-shear",
            nx,
            ny,
            h,
            dt,
            &format!(
                "viscosity = {nu}\nviscosity_iterations = 30\n\
                 fields = {{ density = false, temperature = false, dye = false }}\n\
                 boundary = {{ x = \"{bx}\", y = \"{by}\" }}\n\
                 pressure = {{ solver = \"multigrid\", iterations = 2 }}"
            ),
        );
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        let grid = *sim.grid();
        let nxu = nx as usize;
        // The mode at the faces that carry it: u-faces at y = (j + ½) h, or v-faces at x = (i + ½) h.
        let (field, len, mode): (FieldId, f64, Box<dyn Fn(usize) -> f64>) = if walls_across_y {
            let height = f64::from(ny) * h;
            (FieldId::U, height, Box::new(move |c| (PI * ((c / (nxu + 1)) as f64 + 0.5) * h / height).cos()))
        } else {
            let width = f64::from(nx) * h;
            (FieldId::V, width, Box::new(move |c| (PI * ((c % nxu) as f64 + 0.5) * h / width).cos()))
        };
        let data: Vec<f32> = (0..grid.len(field)).map(|c| (amplitude * mode(c)) as f32).collect();
        sim.set_field(field, &data).expect("mode");
        let project = |values: &[f32]| {
            let (mut num, mut den) = (0.0, 0.0);
            for (c, x) in values.iter().enumerate() {
                if !periodic_copy(&grid, field, c) {
                    num += f64::from(*x) * mode(c);
                    den += mode(c) * mode(c);
                }
            }
            num / den
        };
        let a0 = project(&sim.field(field).expect("field"));
        let k2 = (PI / len).powi(2);
        for n in 1..=100u32 {
            sim.step(dt as f32).expect("step");
            if n % 25 == 0 {
                let a = project(&sim.field(field).expect("field"));
                let want = (-nu * k2 * f64::from(n) * dt).exp();
                let err = (a / a0 / want - 1.0).abs();
                assert!(
                    err < 0.01,
                    "walls across {}: the shear mode's amplitude is {:.5} of the first after {n} steps, \
                     exp(-nu k^2 t) = {want:.5} (relative error {err:.2e} > 1e-2)",
                    if walls_across_y { "y" } else { "x" },
                    a / a0
                );
            }
        }
    }
}
