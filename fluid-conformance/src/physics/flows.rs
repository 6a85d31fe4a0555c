//! Whole flows with a known answer: Taylor–Green and a free-slip shear mode decaying at the
//! viscous rate, a stratified fluid at rest staying at rest, and a centred plume staying
//! mirror-symmetric.

use swirly::{FieldId, Scene, Simulation, backend::Backend, model::Grid};

use super::{periodic_copy, taylor_green_scene, test_scene};

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
    let grid = sim.scene().grid().expect("grid");
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

/// The relative error of a Taylor–Green vortex's kinetic energy at `t = 1` against
/// `exp(−4νt)`, at amplitude 1 on a 2π box of 128², ν = 0.1, advected by `scheme`
/// (`params.advection` entries): advection matters there, and its numerical diffusion shows.
pub fn taylor_green_error<B: Backend>(backend: B, advection: &str) -> f64 {
    use std::f64::consts::TAU;
    let (n, nu, dt, steps) = (128u32, 0.1, 0.02, 50u32);
    let params = format!(
        "viscosity = {nu}\n\
         viscosity_iterations = 30\n\
         fields = {{ density = false, temperature = false, dye = false }}\n\
         boundary = {{ x = \"periodic\", y = \"periodic\" }}\n\
         advection = {{ backtrace = \"rk3\", {advection} }}\n\
         pressure = {{ solver = \"multigrid\", iterations = 4 }}\n\
         [initial.velocity]\n\
         kind = \"taylor-green\"\n\
         amplitude = 1.0"
    );
    let scene = test_scene("taylor-green-sharp", n, n, TAU / f64::from(n), dt, &params);
    let mut sim = Simulation::new(scene, backend).expect("simulation");
    let grid = sim.scene().grid().expect("grid");
    let energy = |sim: &mut Simulation<B>| {
        kinetic_energy(&grid, &sim.field(FieldId::U).expect("u"), &sim.field(FieldId::V).expect("v"))
    };
    let e0 = energy(&mut sim);
    for _ in 0..steps {
        sim.step(dt as f32).expect("step");
    }
    let t = f64::from(steps) * dt;
    (energy(&mut sim) / e0 / (-4.0 * nu * t).exp() - 1.0).abs()
}

/// MacCormack and BFECC keep the Taylor–Green vortex's energy within 1 % of `exp(−4νt)` at
/// `t = 1` where bilinear semi-Lagrangian advection, which must stay more than 2 % off (else
/// the case does not tell the schemes apart), loses more to numerical diffusion.
pub fn sharp_advection_keeps_taylor_green_within_1_percent<B: Backend>(make: impl Fn() -> B) {
    let sl = taylor_green_error(make(), "scheme = \"semi-lagrangian\"");
    assert!(sl > 0.02, "semi-Lagrangian: relative error {sl:.4} at t = 1: the case no longer needs a sharper scheme");
    for scheme in ["maccormack", "bfecc"] {
        let err = taylor_green_error(make(), &format!("scheme = \"{scheme}\""));
        assert!(err < 0.01, "{scheme}: relative error {err:.4} at t = 1 (semi-Lagrangian: {sl:.4}), want < 0.01");
        eprintln!("taylor-green 128², t = 1: {scheme} {err:.4}, semi-Lagrangian {sl:.4}");
    }
    // Monotone cubic sampling has less numerical diffusion than bilinear, and no round trip.
    let cubic = taylor_green_error(make(), "interpolation = \"monotone-cubic\"");
    eprintln!("taylor-green 128², t = 1: monotone cubic {cubic:.4}");
    assert!(cubic < 0.5 * sl, "monotone cubic: relative error {cubic:.4} at t = 1, semi-Lagrangian {sl:.4}");
}

/// A 48 × 32 box of cell 0.1: `kx ≠ ky`, so an aspect-ratio mistake shows in the rate.
pub fn taylor_green_non_square<B: Backend>(make: impl Fn() -> B) {
    taylor_green_decay(make(), 48, 32, 0.1, 0.02);
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
        let grid = sim.scene().grid().expect("grid");
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

/// Heat diffusion against the analytic decay of a temperature mode in a fluid at rest.
///
/// A 64 × 8 box, h = 0.025, κ = 0.05, dt = 0.01: `T = cos(π x / W)` between insulating walls
/// (zero flux: the cell-centred Neumann mode) and `T = cos(2π x / W)` on a periodic axis decay
/// as `exp(−κ k² t)`; after 100 steps the mode's amplitude lies within 1 % of it. The discrete
/// Laplacian's eigenvalue is `k²` within `(kh)²/12` (≤ 0.08 %), backward Euler loses
/// `(κ k² dt)²/2` per step (≤ 0.3 % over the run), 40 Jacobi sweeps leave `(4a / (1 + 4a))^40`
/// (a = κ dt / h² = 0.8: 2e-5) of each step's change; measured on the CPU: 0.02 % (walls) and
/// 0.36 % (periodic) after 100 steps. Walls held at a temperature, or a flux
/// through them, would decay the mode at another rate by far more than 1 %.
pub fn heat_mode_decay<B: Backend>(make: impl Fn() -> B) {
    use std::f64::consts::PI;
    let (nx, ny, h, kappa, dt) = (64u32, 8u32, 0.025f64, 0.05f64, 0.01f64);
    let width = f64::from(nx) * h;
    for (boundary, k) in [("wall", PI / width), ("periodic", 2.0 * PI / width)] {
        let scene = test_scene(
            "heat-decay",
            nx,
            ny,
            h,
            dt,
            &format!(
                "thermal_diffusivity = {kappa}\nthermal_iterations = 40\n\
                 fields = {{ density = false, temperature = true, dye = false }}\n\
                 boundary = {{ x = \"{boundary}\", y = \"wall\" }}\n\
                 pressure = {{ solver = \"jacobi\", iterations = 2 }}"
            ),
        );
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        let nxu = nx as usize;
        let mode = |c: usize| (k * ((c % nxu) as f64 + 0.5) * h).cos();
        let data: Vec<f32> = (0..(nx * ny) as usize).map(|c| mode(c) as f32).collect();
        sim.set_field(FieldId::Temperature, &data).expect("mode");
        let project = |values: &[f32]| {
            let num: f64 = values.iter().enumerate().map(|(c, x)| f64::from(*x) * mode(c)).sum();
            num / (0..values.len()).map(|c| mode(c) * mode(c)).sum::<f64>()
        };
        let a0 = project(&sim.field(FieldId::Temperature).expect("field"));
        for n in 1..=100u32 {
            sim.step(dt as f32).expect("step");
            if n % 25 == 0 {
                let a = project(&sim.field(FieldId::Temperature).expect("field"));
                let want = (-kappa * k * k * f64::from(n) * dt).exp();
                let err = (a / a0 / want - 1.0).abs();
                assert!(
                    err < 0.01,
                    "{boundary} sides: the mode's amplitude is {:.5} of the first after {n} steps, \
                     exp(-kappa k^2 t) = {want:.5} (relative error {err:.2e} > 1e-2)",
                    a / a0
                );
            }
        }
    }
}

/// Conduction between walls held at two temperatures reaches the linear profile.
///
/// A 32 × 4 box of width 1 at rest, the left wall held at T = 1, the right at T = 0, the top
/// and bottom insulating, κ = 0.1: the steady temperature is `1 − x` (the wall faces at their
/// temperatures, so cell i holds `1 − (i + ½) h` exactly on the grid). After 10 s (the slowest
/// mode has decayed by e^(−κ π² t) ≈ 5e-5) every cell lies within 1e-3 of it; an insulating
/// wall would leave the mean at ½ with no gradient, a wall at the cell's own edge (a missing
/// half cell) would bend the profile by h/2 at each end.
pub fn held_walls_conduct_linearly<B: Backend>(make: impl Fn() -> B) {
    let sides =
        "boundary = { left = { type = \"wall\", temperature = 1.0 }, right = { type = \"wall\", temperature = 0.0 } }";
    assert_linear_conduction(make, sides, |x| 1.0 - x);
}

/// Conduction from an obstacle held at a temperature reaches the linear profile.
///
/// The box of [`held_walls_conduct_linearly`], both walls insulating but the right one held
/// at T = 0, and a slab four cells thick along the left wall held at T = 1 (its edge on the
/// face between cells 3 and 4). The held cells keep T = 1 and their faces conduct whole, so
/// the steady temperature falls linearly from 1 at cell 3's centre to 0 at the right wall:
/// `(1 − x) / (1 − 3.5 h)`, exact on the grid. After 10 s every fluid cell lies within 1e-3 of
/// it, and the slab's cells hold 1 exactly. An insulating slab would leave the fluid at 0.
pub fn held_obstacle_conducts_linearly<B: Backend>(make: impl Fn() -> B) {
    let slab = "boundary = { right = { type = \"wall\", temperature = 0.0 } }\n\
                [[obstacles]]\nshape = \"box\"\nposition = [0.0625, 0.5]\nsize = [1.0, 2.0]\ntemperature = 1.0";
    let edge = 3.5 / 32.0;
    assert_linear_conduction(make, slab, |x| if x < edge { 1.0 } else { (1.0 - x) / (1.0 - edge) });
}

/// A 32 × 4 box of width 1 at rest with κ = 0.1 and what `extra` adds (its sides and solids,
/// the last lines of `[params]`), after 10 s: every cell within 1e-3 of `want` at its centre.
fn assert_linear_conduction<B: Backend>(make: impl Fn() -> B, extra: &str, want: impl Fn(f64) -> f64) {
    let (nx, ny, dt) = (32u32, 4u32, 0.05f64);
    let h = 1.0 / f64::from(nx);
    let params = format!(
        "thermal_diffusivity = 0.1\nthermal_iterations = 40\n\
         fields = {{ density = false, temperature = true, dye = false }}\n\
         pressure = {{ solver = \"jacobi\", iterations = 2 }}\n{extra}"
    );
    let scene = test_scene("conduction", nx, ny, h, dt, &params);
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..200 {
        sim.step(dt as f32).expect("step");
    }
    let t = sim.field(FieldId::Temperature).expect("temperature");
    for (c, x) in t.iter().enumerate() {
        let want = want(((c % nx as usize) as f64 + 0.5) * h);
        assert!((f64::from(*x) - want).abs() < 1e-3, "cell {c}: T = {x}, the linear profile {want:.5}");
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

/// The `smoke` preset as shipped at 2 s (120 steps at 192 × 256) has no grid-scale seam:
/// no cell's density stands above the mean of its two horizontal neighbours by more than 0.2
/// of its value (of 0.05 where it is fainter) anywhere above the source, and the axis under
/// the source stays clear (below 0.1) down to the floor. Without heat conduction the hot core
/// thins to a cell or two and its buoyancy drives a grid-scale jet up the axis: that seam
/// stood 0.27 above its neighbours, and the gaussian tail of a source nearer the floor left a
/// line of 0.3 on the axis under it. With the preset's conduction the largest is ~0.13.
pub fn smoke_has_no_seam<B: Backend>(make: impl Fn() -> B) {
    let scene = Scene::preset("smoke").expect("scene");
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let grid = sim.scene().grid().expect("grid");
    for _ in 0..120 {
        sim.step(dt).expect("step");
    }
    let d = sim.field(FieldId::Density).expect("density");
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let mut worst = (0.0f32, 0, 0);
    for j in 40..ny {
        for i in 1..nx - 1 {
            let c = d[j * nx + i];
            let ridge = (c - 0.5 * (d[j * nx + i - 1] + d[j * nx + i + 1])) / c.max(0.05);
            if ridge > worst.0 {
                worst = (ridge, i, j);
            }
        }
    }
    let (ridge, i, j) = worst;
    assert!(ridge < 0.2, "a seam: cell ({i}, {j}) stands {ridge:.3} of its density above its neighbours");
    let axis = (0..8).map(|j| d[j * nx + nx / 2].max(d[j * nx + nx / 2 - 1])).fold(0.0f32, f32::max);
    assert!(axis < 0.1, "a line under the source: density {axis:.3} on the axis within 8 cells of the floor");
}

/// The `smoke` preset on a 64 × 96 grid, emitter on the centre line: the plume must stay
/// mirror-symmetric. In exact arithmetic it is exactly symmetric; float rounding seeds
/// asymmetries of ~1e-7 that the flow amplifies, so the bound is loose where that growth
/// starts and tight where a real bug (an off-by-one face, a one-sided stencil) would show
/// at once: density within 1e-3 of its peak after 1 s.
pub fn plume_symmetry<B: Backend>(make: impl Fn() -> B) {
    let overrides: Vec<_> =
        ["grid.nx=64", "grid.ny=96"].iter().map(|s| swirly::scene::parse_override(s).expect("override")).collect();
    let scene = Scene::preset_with("smoke", &overrides).expect("scene");
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let grid = sim.scene().grid().expect("grid");
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

/// The finer dye moves exactly with a uniform flow and takes splats at its own resolution.
///
/// A periodic 16 × 8 box (h = 1/16) with the dye twice finer (32 × 16), a uniform velocity of
/// 0.5 along x and dt = h: each step carries the dye half a cell, one fine cell, so every
/// semi-Lagrangian sample falls on a fine cell's centre (bilinear weight 0). After 10 steps a
/// random pattern is the first shifted by 10 fine cells, within 1e-6. A backtrace on the wrong
/// lattice (the coarse cells', or off by half a cell) blends neighbours and misses by the
/// pattern's size. Then, with the flow stopped, one gaussian splat adds to each fine cell its
/// falloff at that cell's own centre (within 1e-5): the splat is drawn at the dye's
/// resolution, not the velocity's.
pub fn fine_dye_moves_exactly<B: Backend>(make: impl Fn() -> B) {
    let (nx, ny, f) = (16usize, 8usize, 2usize);
    let h = 1.0 / nx as f64;
    let text = format!(
        "name = \"fine-dye\"\n[grid]\nnx = {nx}\nny = {ny}\nh = {h}\ndye_factor = {f}\n[params]\ndt = {h}\n\
         fields = {{ density = false, temperature = false, dye = true }}\n\
         boundary = {{ x = \"periodic\", y = \"periodic\" }}\n\
         pressure = {{ solver = \"multigrid\", iterations = 2 }}\n"
    );
    let scene = Scene::from_toml(&text, "fine-dye").expect("valid scene");
    let grid = scene.grid().expect("grid");
    assert_eq!(grid.dye_dims(), ((nx * f) as u32, (ny * f) as u32));
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let (fx, fy) = (nx * f, ny * f);
    let mut rng = swirly_core::scene::SplitMix64(7);
    let dye0: Vec<f32> = (0..4 * fx * fy).map(|_| rng.next_f32()).collect();
    sim.set_field(FieldId::Dye, &dye0).expect("dye");
    sim.set_field(FieldId::U, &vec![0.5; (nx + 1) * ny]).expect("u");
    let steps = 10;
    for _ in 0..steps {
        sim.step(h as f32).expect("step");
    }
    let dye = sim.field(FieldId::Dye).expect("dye");
    for j in 0..fy {
        for i in 0..fx {
            let from = 4 * (j * fx + (i + fx - steps) % fx);
            for ch in 0..4 {
                let (got, want) = (dye[4 * (j * fx + i) + ch], dye0[from + ch]);
                assert!((got - want).abs() < 1e-6, "fine cell ({i}, {j}) channel {ch}: {got}, shifted pattern {want}");
            }
        }
    }
    // The flow stopped and the dye cleared, one gaussian splat.
    sim.set_field(FieldId::U, &vec![0.0; (nx + 1) * ny]).expect("u");
    sim.set_field(FieldId::Dye, &vec![0.0; 4 * fx * fy]).expect("dye");
    let (centre, radius) = ([0.37f32, 0.21f32], 0.05f32);
    let splat = swirly::Splat {
        center: centre,
        radius,
        falloff: swirly::Falloff::Gaussian,
        dye: [1.0, 0.5, 0.25, 1.0],
        ..swirly::Splat::default()
    };
    sim.splat(splat).expect("splat");
    sim.step(h as f32).expect("step");
    let dye = sim.field(FieldId::Dye).expect("dye");
    let fh = h / f as f64;
    for j in 0..fy {
        for i in 0..fx {
            let (x, y) = ((i as f64 + 0.5) * fh, (j as f64 + 0.5) * fh);
            let d2 = (x - f64::from(centre[0])).powi(2) + (y - f64::from(centre[1])).powi(2);
            let w = (-d2 / f64::from(radius).powi(2)).exp();
            let w = if d2 / f64::from(radius).powi(2) < 16.0 { w } else { 0.0 };
            let got = f64::from(dye[4 * (j * fx + i)]);
            assert!((got - w).abs() < 1e-5, "fine cell ({i}, {j}): {got}, the splat's falloff there {w}");
        }
    }
}

/// The finer density moves exactly with a uniform flow, takes splats at its own resolution,
/// and pushes the flow by its mean over each cell.
///
/// The flow and splat checks are the finer dye's ([`fine_dye_moves_exactly`]) on a density
/// twice finer. Then buoyancy: two boxes at rest, one with a coarse density `m`, the other
/// with a density twice finer whose four cells in each cell are `m ± d, m ± e` (exact binary
/// fractions, so their mean is `m` to the bit). One step later (advection leaves fields at
/// rest as they are) their velocities agree within 1e-6: the forces read the fine density's
/// mean, not its first cell or its sum.
pub fn fine_density_moves_exactly<B: Backend>(make: impl Fn() -> B) {
    let (nx, ny, f) = (16usize, 8usize, 2usize);
    let h = 1.0 / nx as f64;
    let scene = |factor: usize, boundary: &str, weight: f64| {
        let text = format!(
            "name = \"fine-density\"\n[grid]\nnx = {nx}\nny = {ny}\nh = {h}\ndensity_factor = {factor}\n\
             [params]\ndt = {h}\ngravity = [0.0, 0.0]\n\
             fields = {{ density = true, temperature = false, dye = false }}\n\
             buoyancy = {{ density_weight = {weight} }}\n\
             boundary = {{ x = \"{boundary}\", y = \"{boundary}\" }}\n\
             pressure = {{ solver = \"multigrid\", iterations = 4 }}\n"
        );
        Scene::from_toml(&text, "fine-density").expect("valid scene")
    };
    let mut sim = Simulation::new(scene(f, "periodic", 0.0), make()).expect("simulation");
    let (fx, fy) = (nx * f, ny * f);
    let mut rng = swirly_core::scene::SplitMix64(11);
    let rho0: Vec<f32> = (0..fx * fy).map(|_| rng.next_f32()).collect();
    sim.set_field(FieldId::Density, &rho0).expect("density");
    sim.set_field(FieldId::U, &vec![0.5; (nx + 1) * ny]).expect("u");
    let steps = 10;
    for _ in 0..steps {
        sim.step(h as f32).expect("step");
    }
    let rho = sim.field(FieldId::Density).expect("density");
    for j in 0..fy {
        for i in 0..fx {
            let (got, want) = (rho[j * fx + i], rho0[j * fx + (i + fx - steps) % fx]);
            assert!((got - want).abs() < 1e-6, "fine cell ({i}, {j}): {got}, shifted pattern {want}");
        }
    }
    sim.set_field(FieldId::U, &vec![0.0; (nx + 1) * ny]).expect("u");
    sim.set_field(FieldId::Density, &vec![0.0; fx * fy]).expect("density");
    let (centre, radius) = ([0.37f32, 0.21f32], 0.05f32);
    let splat = swirly::Splat {
        center: centre,
        radius,
        falloff: swirly::Falloff::Gaussian,
        density: 1.0,
        ..Default::default()
    };
    sim.splat(splat).expect("splat");
    sim.step(h as f32).expect("step");
    let rho = sim.field(FieldId::Density).expect("density");
    let fh = h / f as f64;
    for j in 0..fy {
        for i in 0..fx {
            let (x, y) = ((i as f64 + 0.5) * fh, (j as f64 + 0.5) * fh);
            let x2 =
                ((x - f64::from(centre[0])).powi(2) + (y - f64::from(centre[1])).powi(2)) / f64::from(radius).powi(2);
            let w = if x2 < 16.0 { (-x2).exp() } else { 0.0 };
            let got = f64::from(rho[j * fx + i]);
            assert!((got - w).abs() < 1e-5, "fine cell ({i}, {j}): {got}, the splat's falloff there {w}");
        }
    }
    // Buoyancy from the mean, in a closed box.
    let mean: Vec<f32> = (0..nx * ny).map(|c| 0.25 + 0.5 * ((c * 7) % 16) as f32 / 16.0).collect();
    let mut fine = vec![0.0f32; fx * fy];
    for (c, m) in mean.iter().enumerate() {
        let (i, j) = (c % nx, c / nx);
        let [d, e] = [0.125f32, 0.0625];
        for (k, off) in [d, -d, e, -e].into_iter().enumerate() {
            fine[(2 * j + k / 2) * fx + 2 * i + k % 2] = m + off;
        }
    }
    let run = |factor: usize, rho: &[f32]| {
        let mut sim = Simulation::new(scene(factor, "wall", 0.7), make()).expect("simulation");
        sim.set_field(FieldId::Density, rho).expect("density");
        sim.step(h as f32).expect("step");
        (sim.field(FieldId::U).expect("u"), sim.field(FieldId::V).expect("v"))
    };
    let (coarse, finer) = (run(1, &mean), run(f, &fine));
    let peak = coarse.1.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(peak > 1e-3, "the density's weight moved nothing ({peak})");
    for (name, a, b) in [("u", &coarse.0, &finer.0), ("v", &coarse.1, &finer.1)] {
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() < 1e-6 * peak.max(1.0), "{name}[{k}]: coarse density {x}, finer {y}");
        }
    }
}
