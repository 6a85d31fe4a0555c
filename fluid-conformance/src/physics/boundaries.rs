//! The sides of the box: an inflow's flow and what it carries, outflows letting everything
//! leave, no-slip walls holding a Poiseuille profile, the lid-driven cavity against Ghia,
//! Ghia & Shin (1982) and the vortex street behind a cylinder against the Strouhal number of
//! Williamson (1996).

use swirly::{FieldId, Scene, Simulation, backend::Backend};

/// `nx × ny` cells (h = 1/ny, the box `nx/ny × 1`) with these `[params.boundary]` lines and
/// more TOML after `[params]`.
fn scene(nx: u32, ny: u32, dt: f64, boundary: &str, rest: &str) -> Scene {
    // Density only, unless `rest` says otherwise.
    let fields =
        if rest.contains("fields") { "" } else { "fields = { density = true, temperature = false, dye = false }" };
    let text = format!(
        "name = \"sides-test\"\n[grid]\nnx = {nx}\nny = {ny}\n[params]\ndt = {dt}\n{fields}\n{rest}\n\
         [params.boundary]\n{boundary}\n"
    );
    Scene::from_toml(&text, "sides-test").expect("valid scene")
}

/// Sum of a cell field.
fn total(values: &[f32]) -> f64 {
    values.iter().map(|x| f64::from(*x)).sum()
}

/// Air entering a 3 × 1 channel on the left at speed 1 and leaving on the right: once
/// projected the flow is that speed on every face (the potential flow of a straight
/// channel), within 1e-3, and what leaves equals what enters.
pub fn a_channel_carries_its_inflow<B: Backend>(make: impl Fn() -> B) {
    let boundary = "left = { type = \"inflow\", velocity = 1.0 }\nright = \"open\"";
    let rest = "pressure = { solver = \"multigrid\", iterations = 8 }";
    let mut sim = Simulation::new(scene(48, 16, 0.02, boundary, rest), make()).expect("simulation");
    for _ in 0..5 {
        sim.step(0.02).expect("step");
    }
    let (u, v) = (sim.field(FieldId::U).expect("u"), sim.field(FieldId::V).expect("v"));
    let worst_u = u.iter().map(|x| (x - 1.0).abs()).fold(0.0f32, f32::max);
    let worst_v = v.iter().map(|x| x.abs()).fold(0.0f32, f32::max);
    assert!(worst_u < 1e-3 && worst_v < 1e-3, "channel: |u − 1| up to {worst_u:e}, |v| up to {worst_v:e}");
    let (inflow, outflow): (f64, f64) = (0..16)
        .map(|j| (f64::from(u[j * 49]), f64::from(u[j * 49 + 48])))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert!((outflow - inflow).abs() < 1e-3 * inflow, "channel: {outflow} leaves of {inflow} entering");
}

/// A puff of smoke carried down the channel by the inflow (which carries none) keeps its
/// total within 3 % until it reaches the outflow, and has left by the time the flow has
/// crossed the channel twice (less than 1 % remains): the outflow lets it out, nothing wraps
/// or piles up.
pub fn outflow_carries_what_leaves<B: Backend>(make: impl Fn() -> B) {
    let boundary = "left = { type = \"inflow\", velocity = 1.0 }\nright = \"open\"";
    let rest = "pressure = { solver = \"multigrid\", iterations = 6 }\n\
                [[splats]]\ncenter = [0.2, 0.5]\nradius = 0.15\nfalloff = \"linear\"\ndensity = 1.0";
    let mut sim = Simulation::new(scene(48, 16, 0.02, boundary, rest), make()).expect("simulation");
    sim.step(0.02).expect("step");
    let start = total(&sim.field(FieldId::Density).expect("density"));
    // The puff's front starts at x = 0.75 and reaches x = 3 after 2.25 s: check at 1.5 s.
    for _ in 1..75 {
        sim.step(0.02).expect("step");
    }
    let middle = total(&sim.field(FieldId::Density).expect("density"));
    assert!((middle / start - 1.0).abs() < 0.03, "outflow: the puff went from {start} to {middle} inside the channel");
    for _ in 75..300 {
        sim.step(0.02).expect("step");
    }
    let end = total(&sim.field(FieldId::Density).expect("density"));
    assert!(end < 0.01 * start, "outflow: {end} of {start} still in the channel after 6 s");
}

/// Fluid drawn in through an outflow brings no momentum: the explosion preset at 16² for 1500
/// steps (its sides and top open, vorticity confinement on) keeps its fastest face under 2 (it
/// stays under 0.7). When a backtrace past an open side sampled the side's own velocity,
/// confinement fed a flow through the outflows that grew without bound: 8 after 1500 steps,
/// and at 32² 128 after 20 000 steps, until it outran the grid. (The blend itself is tested
/// exactly on the CPU kernel; kernel parity holds the GPUs to it.)
pub fn backflow_brings_no_momentum<B: Backend>(make: impl Fn() -> B) {
    let scene = crate::support::small_preset_with("explosion", &["grid.nx=16", "grid.ny=16"]);
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..1500 {
        sim.step(dt).expect("step");
    }
    let speed = sim.checked_diagnostics().expect("diagnostics").max_velocity;
    assert!(speed < 2.0, "explosion at 16² after 1500 steps: the fastest face moves at {speed}");
}

/// An inflow carrying smoke in two stripes (five equal slots along the side, the second and
/// fourth smoke): after the flow has crossed half the channel, the column at x = 1 holds
/// density 1 within 2 % at the stripes' middles and under 2 % at the gaps', and the
/// temperature the inflow carries where it passed.
pub fn an_inflow_carries_smoke_in_stripes<B: Backend>(make: impl Fn() -> B) {
    let boundary = "left = { type = \"inflow\", velocity = 1.0, density = 1.0, temperature = 2.0, stripes = 2 }\n\
                    right = \"open\"";
    let rest = "fields = { density = true, temperature = true, dye = false }\n\
                pressure = { solver = \"multigrid\", iterations = 6 }";
    let scene = scene(40, 20, 0.025, boundary, rest);
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..60 {
        sim.step(0.025).expect("step");
    }
    // Column x = 1 (i = 20) at t = 1.5: the smoke entered 1.5 ago.
    let (d, t) = (sim.field(FieldId::Density).expect("density"), sim.field(FieldId::Temperature).expect("temp"));
    let at = |field: &[f32], y: f32| field[(y * 20.0) as usize * 40 + 20];
    for y in [0.3, 0.7] {
        assert!((at(&d, y) - 1.0).abs() < 0.02, "stripes: density {} at y = {y}, a stripe's middle", at(&d, y));
    }
    for y in [0.1, 0.5, 0.9] {
        assert!(at(&d, y) < 0.02, "stripes: density {} at y = {y}, a gap's middle", at(&d, y));
    }
    assert!((at(&t, 0.5) - 2.0).abs() < 0.02, "stripes: temperature {} behind the inflow, not 2", at(&t, 0.5));
}

/// Plane Poiseuille flow: a parabolic inflow (peak 1) between no-slip walls with viscosity
/// 0.05, leaving through an outflow. The viscous step's wall ghosts hold the parabola
/// 4 U s (1 − s) downstream within 2 % of the peak at x = 1.5 (free-slip walls would let
/// viscosity flatten it toward its mean, 2/3).
pub fn no_slip_walls_hold_a_poiseuille_profile<B: Backend>(make: impl Fn() -> B) {
    let boundary = "left = { type = \"inflow\", velocity = 1.0, profile = \"parabolic\" }\nright = \"open\"\n\
                    bottom = \"no-slip\"\ntop = \"no-slip\"";
    let rest = "viscosity = 0.05\nviscosity_iterations = 40\npressure = { solver = \"multigrid\", iterations = 6 }";
    let mut sim = Simulation::new(scene(32, 16, 0.02, boundary, rest), make()).expect("simulation");
    for _ in 0..150 {
        sim.step(0.02).expect("step");
    }
    let u = sim.field(FieldId::U).expect("u");
    let worst = (0..16)
        .map(|j| {
            let s = (j as f32 + 0.5) / 16.0;
            (u[j * 33 + 24] - 4.0 * s * (1.0 - s)).abs()
        })
        .fold(0.0f32, f32::max);
    assert!(worst < 0.02, "poiseuille: the profile at x = 1.5 is off the parabola by up to {worst}");
}

/// Ghia, Ghia & Shin (1982), Table I, Re = 100: u along the vertical centre line, `(y, u)`.
pub const GHIA_U: [(f64, f64); 17] = [
    (1.0, 1.0),
    (0.9766, 0.84123),
    (0.9688, 0.78871),
    (0.9609, 0.73722),
    (0.9531, 0.68717),
    (0.8516, 0.23151),
    (0.7344, 0.00332),
    (0.6172, -0.13641),
    (0.5, -0.20581),
    (0.4531, -0.21090),
    (0.2813, -0.15662),
    (0.1719, -0.10150),
    (0.1016, -0.06434),
    (0.0703, -0.04775),
    (0.0625, -0.04192),
    (0.0547, -0.03717),
    (0.0, 0.0),
];

/// Ghia, Ghia & Shin (1982), Table II, Re = 100: v along the horizontal centre line, `(x, v)`.
pub const GHIA_V: [(f64, f64); 17] = [
    (1.0, 0.0),
    (0.9688, -0.05906),
    (0.9609, -0.07391),
    (0.9531, -0.08864),
    (0.9453, -0.10313),
    (0.9063, -0.16914),
    (0.8594, -0.22445),
    (0.8047, -0.24533),
    (0.5, 0.05454),
    (0.2344, 0.17527),
    (0.2266, 0.17507),
    (0.1563, 0.16077),
    (0.0938, 0.12317),
    (0.0781, 0.10890),
    (0.0703, 0.10091),
    (0.0625, 0.09233),
    (0.0, 0.0),
];

/// Largest gap between the cavity's centre-line velocities and Ghia's tables: u at x = 1/2
/// (the u-faces there) and v at y = 1/2, linear between samples, the walls' values at the
/// ends (the lid's speed, zero).
pub fn ghia_deviation(n: usize, u: &[f32], v: &[f32], lid: f64) -> f64 {
    let h = 1.0 / n as f64;
    let profile = |samples: Vec<f64>, end: f64, at: f64| -> f64 {
        let mut xs = vec![0.0];
        let mut ys = vec![0.0];
        for (k, s) in samples.iter().enumerate() {
            xs.push((k as f64 + 0.5) * h);
            ys.push(*s);
        }
        xs.push(1.0);
        ys.push(end);
        let k = xs.iter().position(|x| *x >= at).unwrap_or(xs.len() - 1).max(1);
        let t = (at - xs[k - 1]) / (xs[k] - xs[k - 1]);
        ys[k - 1] + t * (ys[k] - ys[k - 1])
    };
    let column: Vec<f64> = (0..n).map(|j| f64::from(u[j * (n + 1) + n / 2])).collect();
    let row: Vec<f64> = (0..n).map(|i| f64::from(v[(n / 2) * n + i])).collect();
    let du = GHIA_U.iter().map(|(y, want)| (profile(column.clone(), lid, *y) - want).abs());
    let dv = GHIA_V.iter().map(|(x, want)| (profile(row.clone(), 0.0, *x) - want).abs());
    du.chain(dv).fold(0.0, f64::max)
}

/// The `cavity` preset at 32² (dt 0.04, run to t = 20, steady): both centre-line profiles
/// within 0.03 of Ghia's at all 34 points (3 % of the lid's speed; 0.006 at the preset's
/// 128², doc/PERFORMANCE.md).
pub fn the_cavity_matches_ghia<B: Backend>(make: impl Fn() -> B) {
    let set =
        ["grid.nx=32", "grid.ny=32", "params.dt=0.04"].map(|s| swirly::scene::parse_override(s).expect("override"));
    let scene = Scene::preset_with("cavity", &set).expect("cavity");
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..500 {
        sim.step(0.04).expect("step");
    }
    let (u, v) = (sim.field(FieldId::U).expect("u"), sim.field(FieldId::V).expect("v"));
    let worst = ghia_deviation(32, &u, &v, 1.0);
    assert!(worst < 0.03, "cavity 32²: the centre lines are up to {worst:.4} off Ghia et al.");
}

/// de Vahl Davis (1983), the square cavity heated from the side at Ra = 1e4, Pr = 0.71: the
/// mean Nusselt number of the hot wall, the largest horizontal velocity on the vertical centre
/// line and the largest vertical velocity on the horizontal one (velocities in κ / L).
pub const DE_VAHL_DAVIS_RA_1E4: [f64; 3] = [2.243, 16.178, 19.617];

/// `(Nu, u_max, v_max)` of a steady heated cavity of `n × n` cells of width 1 with the left wall
/// at T = 1 (the flux through its faces: `(1 − T) / (h / 2)`), velocities divided by `kappa`;
/// each largest velocity is the peak of the parabola through the largest sample and its two
/// neighbours (the samples lie h apart, the peak between them).
pub fn heated_cavity_numbers(n: usize, t: &[f32], u: &[f32], v: &[f32], kappa: f64) -> [f64; 3] {
    let h = 1.0 / n as f64;
    let nu = (0..n).map(|j| 2.0 * (1.0 - f64::from(t[j * n])) / h).sum::<f64>() / n as f64;
    let peak = |s: Vec<f64>| {
        let k = (0..s.len()).fold(0, |best, k| if s[k] > s[best] { k } else { best });
        if k == 0 || k + 1 == s.len() {
            return s[k];
        }
        let (a, b, c) = (s[k - 1], s[k], s[k + 1]);
        let curvature = a - 2.0 * b + c;
        if curvature == 0.0 { b } else { b - 0.125 * (a - c) * (a - c) / curvature }
    };
    let u_max = peak((0..n).map(|j| f64::from(u[j * (n + 1) + n / 2])).collect()) / kappa;
    let v_max = peak((0..n).map(|i| f64::from(v[(n / 2) * n + i])).collect()) / kappa;
    [nu, u_max, v_max]
}

/// The `convection` preset at 32² (dt 0.08, 20 sweeps of each diffusion, run to t = 48,
/// steady: the hot and the cold wall's fluxes agree to 0.1 %) against de Vahl Davis: measured
/// on the CPU, Nu 2.222 (−0.9 %), u_max 16.08 (−0.6 %), v_max 19.10 (−2.6 %: the narrow jet
/// along the wall spans three cells at 32²); at the preset's 128², −0.35 %, −0.2 %, −0.55 %.
/// Nu and u_max within 2 %, v_max within 4 %. Insulating side walls would carry no heat.
pub fn the_heated_cavity_matches_de_vahl_davis<B: Backend>(make: impl Fn() -> B) {
    let set = [
        "grid.nx=32",
        "grid.ny=32",
        "params.dt=0.08",
        "params.thermal_iterations=20",
        "params.viscosity_iterations=20",
    ]
    .map(|s| swirly::scene::parse_override(s).expect("override"));
    let scene = Scene::preset_with("convection", &set).expect("convection");
    let kappa = f64::from(scene.params.thermal_diffusivity);
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..600 {
        sim.step(0.08).expect("step");
    }
    let [t, u, v] = [FieldId::Temperature, FieldId::U, FieldId::V].map(|f| sim.field(f).expect("field"));
    let got = heated_cavity_numbers(32, &t, &u, &v, kappa);
    for (k, (name, within)) in [("Nu", 0.02), ("u_max", 0.02), ("v_max", 0.04)].iter().enumerate() {
        let want = DE_VAHL_DAVIS_RA_1E4[k];
        let err = (got[k] / want - 1.0).abs();
        assert!(err < *within, "heated cavity 32²: {name} = {:.4}, de Vahl Davis {want} ({err:.2e} off)", got[k]);
    }
}

/// Williamson (1996): the Strouhal number of laminar parallel shedding behind a circular
/// cylinder, `St = −3.3265/Re + 0.1816 + 1.6e-4 Re` (49 < Re < 180).
pub fn williamson_strouhal(re: f64) -> f64 {
    -3.3265 / re + 0.1816 + 1.6e-4 * re
}

/// The shedding frequency of a probe's cross-stream velocity: the mean period between
/// upward zero crossings (interpolated) after `skip` samples, each `dt` apart.
pub fn shedding_frequency(v: &[f32], dt: f64, skip: usize) -> Option<f64> {
    let mean = v[skip..].iter().map(|x| f64::from(*x)).sum::<f64>() / (v.len() - skip) as f64;
    let mut crossings = Vec::new();
    for k in skip + 1..v.len() {
        let (a, b) = (f64::from(v[k - 1]) - mean, f64::from(v[k]) - mean);
        if a < 0.0 && b >= 0.0 {
            crossings.push((k as f64 - 1.0 + a / (a - b)) * dt);
        }
    }
    (crossings.len() >= 3).then(|| (crossings.len() - 1) as f64 / (crossings[crossings.len() - 1] - crossings[0]))
}

/// The `wind-tunnel` preset at half its resolution (256 × 64, a cylinder 6.4 cells across,
/// Re = 100): the vortex street's shedding frequency, from the cross-stream velocity three
/// diameters behind the cylinder over t = 12 to 24, gives a Strouhal number within 20 % of
/// Williamson's 0.164, and below it: the bilinear semi-Lagrangian advection's numerical
/// viscosity lowers the effective Reynolds number (measured: 0.138 here, −16 %; 0.154, −6.5 %,
/// at the preset's 512 × 128, doc/PERFORMANCE.md).
pub fn a_cylinder_sheds_at_the_strouhal_number<B: Backend>(make: impl Fn() -> B) {
    let set =
        ["grid.nx=256", "grid.ny=64", "params.dt=0.008"].map(|s| swirly::scene::parse_override(s).expect("override"));
    let scene = Scene::preset_with("wind-tunnel", &set).expect("wind tunnel");
    let grid = scene.grid().expect("grid");
    let probe = [[0.6 + 0.3, 0.5 * grid.height()]];
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let mut v = Vec::new();
    for _ in 0..3000 {
        sim.step(0.008).expect("step");
        v.push(sim.sample(FieldId::V, &probe).expect("probe")[0]);
    }
    let f = shedding_frequency(&v, 0.008, 1500).expect("the wake sheds");
    let (st, want) = (f * 0.1 / 1.0, williamson_strouhal(100.0));
    assert!(st < want && st > 0.8 * want, "wind tunnel: St = {st:.4}, Williamson's {want:.4}");
}
