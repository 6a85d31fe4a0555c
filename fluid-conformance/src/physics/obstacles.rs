//! Obstacles: faces closed by a solid carry the solid's velocity and nothing else, the fluid
//! around them is divergence-free to the solver's residual, a moving solid pushes the fluid,
//! splats add nothing inside a solid, and a passive scalar keeps out of them.

use swirly::{FieldId, Scene, Simulation, backend::Backend};
use swirly_core::frame::solid::{Motion, Pose};

/// A closed box of `nx × ny` cells with `solver` and these `[[obstacles]]` (and more TOML).
fn scene(nx: u32, ny: u32, solver: &str, iterations: u32, rest: &str) -> Scene {
    let text = format!(
        "name = \"obstacles-test\"\n[grid]\nnx = {nx}\nny = {ny}\n[params]\ndt = 0.01\n\
         fields = {{ density = true, temperature = false, dye = false }}\n\
         dissipation = {{ density = 0.0, velocity = 0.0 }}\n\
         pressure = {{ solver = \"{solver}\", iterations = {iterations} }}\n{rest}\n"
    );
    Scene::from_toml(&text, "obstacles-test").expect("valid scene")
}

const SHAPES: &str = "\
[[obstacles]]
shape = \"circle\"
position = [0.3, 0.6]
radius = 0.12
[[obstacles]]
shape = \"box\"
position = [0.7, 0.45]
size = [0.3, 0.08]
angle = 25
[[obstacles]]
shape = \"polygon\"
position = [0.45, 0.25]
points = [[-0.1, -0.05], [0.1, -0.05], [0.1, 0.05], [0.0, 0.0], [-0.1, 0.05]]
";

/// Faces of one axis: `(open fraction, solid velocity)` pairs of a `*_faces` field.
fn pairs(faces: &[f32]) -> impl Iterator<Item = (f32, f32)> + '_ {
    faces.chunks_exact(2).map(|p| (p[0], p[1]))
}

/// The velocity on every face an obstacle closes, other than a wall's, is the solid's, bit
/// for bit.
fn closed_faces_carry_the_solid<B: Backend>(sim: &mut Simulation<B>, what: &str) -> usize {
    let grid = sim.scene().grid().expect("grid");
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let mut closed = 0;
    // Wall faces (the first and last of each row of u, of each column of v) stay zero.
    let wall = |vel: FieldId, c: usize| match vel {
        FieldId::U => [0, nx].contains(&(c % (nx + 1))),
        _ => [0, ny].contains(&(c / nx)),
    };
    for (vel, faces) in [(FieldId::U, FieldId::UFaces), (FieldId::V, FieldId::VFaces)] {
        let (u, f) = (sim.field(vel).expect("velocity"), sim.field(faces).expect("faces"));
        for (c, (open, solid)) in pairs(&f).enumerate() {
            if open == 0.0 && !wall(vel, c) {
                closed += 1;
                assert_eq!(
                    u[c].to_bits(),
                    solid.to_bits(),
                    "{what}: {} face {c} is closed: {} ≠ solid {solid}",
                    vel.name(),
                    u[c]
                );
            }
        }
    }
    closed
}

/// Smoke driven up round three static obstacles (a circle, a turned box, a concave polygon):
/// every closed face carries the solid's velocity (zero), the projected velocity's divergence
/// is at most 1e-3 of what entered the solve, the fully covered cells cover the shapes' area
/// within 6 %, and no density sits inside them.
pub fn static_solids_are_tight<B: Backend>(make: impl Fn() -> B) {
    let emitter = "[[emitters]]\ncenter = [0.5, 0.05]\nradius = 0.08\ndensity = 2.0\nvelocity = [0.0, 3.0]\n";
    let mut sim =
        Simulation::new(scene(48, 64, "sor", 300, &format!("{SHAPES}{emitter}")), make()).expect("simulation");
    for _ in 0..30 {
        sim.step(0.01).expect("step");
    }
    let closed = closed_faces_carry_the_solid(&mut sim, "static");
    assert!(closed > 100, "the obstacles close {closed} faces");
    let d = sim.diagnostics().expect("diagnostics");
    let before = sim.field(FieldId::Divergence).expect("divergence").iter().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(before > 0.1, "the solve had work: max |div u*| = {before}");
    assert!(
        d.figure("max_divergence").unwrap_or(f64::NAN) < 1e-3 * f64::from(before),
        "max |div u| {:.3e} after the projection, {before:.3e} before",
        d.figure("max_divergence").unwrap_or(f64::NAN)
    );
    let solid = sim.field(FieldId::Solid).expect("solid");
    let density = sim.field(FieldId::Density).expect("density");
    let grid = sim.scene().grid().expect("grid");
    let h2 = f64::from(grid.h * grid.h);
    let covered: f64 = solid.iter().map(|s| f64::from(*s) * h2).sum();
    let height = f64::from(grid.height());
    let area = std::f64::consts::PI * (0.12 * height).powi(2)
        + 0.3 * 0.08 * height * height
        + 0.2 * 0.1 * height * height * 0.75;
    assert!((covered / area - 1.0).abs() < 0.06, "solid cover {covered:.4} against the shapes' {area:.4}");
    for (c, s) in solid.iter().enumerate() {
        if *s == 1.0 {
            assert_eq!(density[c], 0.0, "density {} inside the solid at cell {c}", density[c]);
        }
    }
    assert!(density.iter().any(|x| *x > 0.1), "the smoke is there");
}

/// A disc moving right at 0.5 through fluid at rest in a closed box: it stands where its
/// motion puts it, every face it closes moves at 0.5, the fluid just ahead of it is pushed
/// the same way and the fluid is divergence-free round it; placed elsewhere at rest through
/// `set_obstacle`, the next step closes the faces there at zero velocity.
pub fn a_moving_solid_pushes_the_fluid<B: Backend>(make: impl Fn() -> B) {
    let disc = "[[obstacles]]\nshape = \"circle\"\nposition = [0.3, 0.5]\nradius = 0.1\nvelocity = [0.5, 0.0]\n";
    let mut sim = Simulation::new(scene(64, 64, "sor", 200, disc), make()).expect("simulation");
    let grid = sim.scene().grid().expect("grid");
    for _ in 0..10 {
        sim.step(0.01).expect("step");
    }
    let now = sim.obstacles()[0].pose.position;
    assert!((now[0] - 0.35).abs() < 1e-5 && (now[1] - 0.5).abs() < 1e-6, "the disc stands at {now:?}");
    let closed = closed_faces_carry_the_solid(&mut sim, "moving");
    assert!(closed > 50, "the disc closes {closed} faces");
    let u_faces = sim.field(FieldId::UFaces).expect("faces");
    assert!(
        pairs(&u_faces).filter(|(o, _)| *o == 0.0).all(|(_, s)| (s - 0.5).abs() < 1e-6),
        "closed faces move at 0.5"
    );
    // The face row through the disc's centre, two cells ahead of its front (the disc reached
    // 0.35 at the step's end): pushed along.
    let (nx, h) = (grid.nx as usize, grid.h);
    let j = (0.5 / h) as usize;
    let i = ((0.35 + 0.1) / h) as usize + 2;
    let ahead = sim.field(FieldId::U).expect("u")[j * (nx + 1) + i];
    assert!(ahead > 0.1, "u ahead of the disc: {ahead}");
    let d = sim.diagnostics().expect("diagnostics");
    assert!(
        d.figure("residual").unwrap_or(f64::NAN) < 1e-3,
        "relative residual {:.3e}",
        d.figure("residual").unwrap_or(f64::NAN)
    );

    // Stopped and moved to the left half: the faces follow without a new scene.
    sim.set_obstacle(0, Pose { position: [0.2, 0.3], angle: 0.0 }, Motion::default()).expect("set");
    sim.step(0.01).expect("step");
    closed_faces_carry_the_solid(&mut sim, "moved");
    let solid = sim.field(FieldId::Solid).expect("solid");
    let at = |x: f32, y: f32| solid[(y / h) as usize * nx + (x / h) as usize];
    assert_eq!((at(0.2, 0.3), at(0.35, 0.5)), (1.0, 0.0), "the disc left its old place for its new one");
}

/// A disc on a keyframed path (right at 2 for 0.05 s, then down at 4 for 0.05 s, then still):
/// it stands at each key at its time, the faces it closes move at its leg's velocity, and it
/// stays at the last key; placed by hand it leaves the path.
pub fn a_solid_follows_its_path<B: Backend>(make: impl Fn() -> B) {
    let disc = "[[obstacles]]\nshape = \"circle\"\nradius = 0.1\npath = [\
                { time = 0.0, position = [0.3, 0.5] }, { time = 0.05, position = [0.4, 0.5] }, \
                { time = 0.1, position = [0.4, 0.3] }]\n";
    let mut sim = Simulation::new(scene(64, 64, "sor", 200, disc), make()).expect("simulation");
    let check = |sim: &mut Simulation<B>, steps: usize, want: [f32; 2], velocity: [f32; 2]| {
        for _ in 0..steps {
            sim.step(0.01).expect("step");
        }
        let o = &sim.obstacles()[0];
        let p = o.pose.position;
        assert!((p[0] - want[0]).abs() < 1e-5 && (p[1] - want[1]).abs() < 1e-5, "t={}: at {p:?}", sim.time());
        let v = o.motion.velocity;
        assert!((v[0] - velocity[0]).abs() < 1e-5 && (v[1] - velocity[1]).abs() < 1e-5, "t={}: {v:?}", sim.time());
        let closed = closed_faces_carry_the_solid(sim, "on its path");
        assert!(closed > 50, "the disc closes {closed} faces");
        let (solid, grid) = (sim.field(FieldId::Solid).expect("solid"), sim.scene().grid().expect("grid"));
        let at = |x: f32, y: f32| solid[(y / grid.h) as usize * grid.nx as usize + (x / grid.h) as usize];
        assert_eq!(at(want[0], want[1]), 1.0, "t={}: no solid at its centre", sim.time());
    };
    check(&mut sim, 5, [0.4, 0.5], [2.0, 0.0]);
    check(&mut sim, 5, [0.4, 0.3], [0.0, -4.0]);
    check(&mut sim, 3, [0.4, 0.3], [0.0, 0.0]);
    sim.set_obstacle(
        0,
        Pose { position: [0.7, 0.7], angle: 0.0 },
        Motion { velocity: [0.0, 1.0], angular_velocity: 0.0 },
    )
    .expect("set");
    check(&mut sim, 2, [0.7, 0.72], [0.0, 1.0]);
}

/// A splat centred inside a disc, reaching no farther than two cells short of its outline,
/// adds nothing anywhere; one outside it adds its amount.
pub fn splats_add_nothing_inside_a_solid<B: Backend>(make: impl Fn() -> B) {
    let disc = "[[obstacles]]\nshape = \"circle\"\nposition = [0.5, 0.5]\nradius = 0.2\n";
    let mut sim = Simulation::new(scene(48, 48, "jacobi", 40, disc), make()).expect("simulation");
    let grid = sim.scene().grid().expect("grid");
    let splat = |x: f32| swirly::Splat {
        center: [x * grid.width(), 0.5 * grid.height()],
        radius: 0.1 * grid.height(),
        density: 1.0,
        velocity: [1.0, 0.0],
        ..swirly::Splat::default()
    };
    sim.splat(splat(0.5)).expect("splat");
    sim.step(0.01).expect("step");
    let total: f32 = sim.field(FieldId::Density).expect("density").iter().sum();
    assert_eq!(total, 0.0, "density added inside the disc");
    sim.splat(splat(0.12)).expect("splat");
    sim.step(0.01).expect("step");
    let total: f32 = sim.field(FieldId::Density).expect("density").iter().sum();
    assert!(total > 1.0, "a splat beside the disc adds density ({total})");
}

/// Density stirred round static obstacles in a closed box with no dissipation: the total
/// stays within 5 % of what was put in over 100 steps, and none enters a solid.
pub fn a_scalar_stays_out_of_solids<B: Backend>(make: impl Fn() -> B) {
    let stir = "[[splats]]\ncenter = [0.5, 0.85]\nradius = 0.1\ndensity = 1.0\n\
                [[emitters]]\ncenter = [0.15, 0.5]\nradius = 0.1\nvelocity = [0.0, 8.0]\n";
    let mut sim = Simulation::new(scene(48, 64, "sor", 60, &format!("{SHAPES}{stir}")), make()).expect("simulation");
    let start: f64 = sim.field(FieldId::Density).expect("density").iter().map(|x| f64::from(*x)).sum();
    for _ in 0..100 {
        sim.step(0.01).expect("step");
    }
    let density = sim.field(FieldId::Density).expect("density");
    let end: f64 = density.iter().map(|x| f64::from(*x)).sum();
    assert!((end / start - 1.0).abs() < 0.05, "density total {start:.3} → {end:.3}");
    let solid = sim.field(FieldId::Solid).expect("solid");
    assert!(solid.iter().zip(&density).all(|(s, d)| *s < 1.0 || *d == 0.0), "density inside a solid");
}

/// The relative residual of one cold pressure solve of `iterations` by `solver` on a 128 × 96
/// box with the three obstacles, the velocity random (one step from it, so the solve sees
/// what advection left).
fn obstacle_solve<B: Backend>(make: &impl Fn() -> B, solver: &str, iterations: u32) -> f64 {
    let mut s = scene(128, 96, solver, iterations, SHAPES);
    s.params.pressure.warm_start = false;
    let mut sim = Simulation::new(s, make()).expect("simulation");
    let mut rng = swirly_core::scene::SplitMix64(41);
    for f in [FieldId::U, FieldId::V] {
        let n = sim.field(f).expect("field").len();
        let values: Vec<f32> = (0..n).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
        sim.set_field(f, &values).expect("set");
    }
    sim.step(0.01).expect("step");
    sim.diagnostics().expect("diagnostics").figure("residual").unwrap_or(f64::NAN)
}

/// With obstacles the solvers keep their pace: multigrid cuts the residual at least 5× per
/// V-cycle (from 1 to 4 cycles), and MGPCG reaches 1e-6 within 20 iterations, on 128 × 96.
pub fn solvers_converge_round_solids<B: Backend>(make: impl Fn() -> B) {
    let (one, four) = (obstacle_solve(&make, "multigrid", 1), obstacle_solve(&make, "multigrid", 4));
    let factor = (four / one).powf(1.0 / 3.0);
    assert!(
        factor < 0.2,
        "multigrid with obstacles: {one:.3e} after 1 V-cycle, {four:.3e} after 4: {factor:.3} per cycle"
    );
    let cg = obstacle_solve(&make, "mgpcg", 20);
    assert!(cg < 1e-6, "MGPCG with obstacles: {cg:.3e} after 20 iterations");
}
