//! Semi-Lagrangian advection against the scheme's exact answers: transport in a uniform flow,
//! a shear wave carried by it, and the backtraces' order in a rotation.

use swirly::{FieldId, Simulation, backend::Backend, model::Grid};
use swirly_core::grid::kernels;
use swirly_core::ir::schedule::ParamBlock;

use super::{moments, run_alone, test_scene};

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
        let grid = sim.scene().grid().expect("grid");
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
/// [`uniform_translation`] checks `advect_channels`: a wrong face position (the half-cell offsets
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
        let grid = sim.scene().grid().expect("grid");
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

/// The backtraces' order of accuracy against their exact polynomials in a solid-body rotation.
///
/// `advect_channels` alone, over the velocity `(−Ω(y − y_c), Ω(x − x_c))` (Ω dt = 0.3 rad per
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
    use swirly::Boundary::Wall;
    use swirly_core::grid::uniforms::{CHANNEL_Q0, CHANNEL_Q1, ChannelParams};
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
        let params = ChannelParams { order, factor: 1, channels: CHANNEL_Q0 | CHANNEL_Q1, ..ChannelParams::default() };
        let mut b = run_alone(
            &make,
            &grid,
            kernels::ADVECT_CHANNELS,
            Some(ParamBlock::new(&params)),
            &[
                (FieldId::U, u.clone()),
                (FieldId::V, v.clone()),
                (FieldId::Density, x.clone()),
                (FieldId::Temperature, y.clone()),
                (FieldId::Vacant, Vec::new()),
                (FieldId::DensityTmp, vec![0.0; nu * nu]),
                (FieldId::TemperatureTmp, vec![0.0; nu * nu]),
                (FieldId::VacantOut0, Vec::new()),
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

/// The limiter of MacCormack and BFECC: a corrected value is clamped to the range of the
/// samples its backtrace lands between, so no step makes a new maximum or minimum.
///
/// Density, temperature, fuel and the four dye channels start as sharp random patterns (cells
/// of values drawn in `[0.2, 0.9]`, each channel its own) in a 48 × 40 box, walls across x and
/// periodic along y, stirred by a random divergence-free flow with no dissipation. Unlimited,
/// the round trip's correction overshoots at such edges at once. Over 30 steps every field
/// stays within its starting range to 1e-6 (f32 rounding of the dissipation map), and the
/// scheme is seen to act: it leaves the density far from where semi-Lagrangian advection does.
pub fn the_limiter_makes_no_new_extrema<B: Backend>(make: impl Fn() -> B) {
    let (nx, ny) = (48u32, 40u32);
    let run = |scheme: &str| -> Vec<f32> {
        let scene = test_scene(
            "limiter",
            nx,
            ny,
            1.0 / 40.0,
            0.02,
            &format!(
                "fields = {{ density = true, temperature = true, dye = true, fuel = true }}\n\
                 boundary = {{ x = \"wall\", y = \"periodic\" }}\n\
                 advection = {{ scheme = \"{scheme}\", backtrace = \"rk2\" }}\n\
                 buoyancy = {{ temperature_lift = 0.0, density_weight = 0.0, ambient_temperature = 0.5 }}\n\
                 pressure = {{ solver = \"multigrid\", iterations = 4 }}\n\
                 [initial.velocity]\n\
                 kind = \"random\"\n\
                 amplitude = 1.5\n\
                 seed = 11"
            ),
        );
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        let cells = (nx * ny) as usize;
        let mut rng = swirly_core::scene::SplitMix64(29);
        let mut pattern = |n: usize| -> Vec<f32> {
            // Blocks of 3 × 3 cells, each one value: edges a cell wide everywhere.
            let blocks = (nx as usize).div_ceil(3) * (ny as usize).div_ceil(3);
            let values: Vec<f32> = (0..n * blocks).map(|_| 0.2 + 0.7 * rng.next_f32()).collect();
            (0..cells * n)
                .map(|k| {
                    let (c, ch) = (k / n, k % n);
                    let (i, j) = (c % nx as usize, c / nx as usize);
                    values[((j / 3) * (nx as usize).div_ceil(3) + i / 3) * n + ch]
                })
                .collect()
        };
        let fields = [(FieldId::Density, 1), (FieldId::Temperature, 1), (FieldId::Fuel, 1), (FieldId::Dye, 4)];
        let start: Vec<Vec<f32>> = fields.iter().map(|&(_, n)| pattern(n)).collect();
        for ((f, _), data) in fields.iter().zip(&start) {
            sim.set_field(*f, data).expect("set");
        }
        let bounds = |data: &[f32], n: usize, ch: usize| {
            data.iter().skip(ch).step_by(n).fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
        };
        for step in 1..=30 {
            sim.step(0.02).expect("step");
            for ((f, n), data) in fields.iter().zip(&start) {
                let now = sim.field(*f).expect("field");
                for ch in 0..*n {
                    let (lo0, hi0) = bounds(data, *n, ch);
                    let (lo, hi) = bounds(&now, *n, ch);
                    assert!(
                        lo >= lo0 - 1e-6 && hi <= hi0 + 1e-6,
                        "{scheme}: step {step}: {} channel {ch} spans [{lo}, {hi}], beyond its start [{lo0}, {hi0}]",
                        f.name()
                    );
                }
            }
        }
        sim.field(FieldId::Density).expect("density")
    };
    let sl = run("semi-lagrangian");
    for scheme in ["maccormack", "bfecc"] {
        let sharp = run(scheme);
        let apart = sl.iter().zip(&sharp).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(apart > 0.05, "{scheme}: at most {apart} from semi-Lagrangian advection: the scheme did not act");
    }
}
