//! Seeded random scenes, each mixing settings that the presets fix one way, stepped on a backend
//! against the CPU backend.

use swirly::{CpuBackend, Scene, Simulation, Splat, backend::Backend};
use swirly_core::scene::SplitMix64;

use crate::presets::check_states;
use crate::support::carried;

/// Random scenes ([`random_scene`]) whose whole steps [`random_scenes_parity`] compares;
/// `FLUID_RANDOM_SCENES=N` runs seeds 0 to N − 1 instead, for a longer search.
pub const RANDOM_SCENES: u64 = 12;

/// Steps of each random scene.
pub const RANDOM_SCENE_STEPS: u32 = 10;

/// Scene `seed` of the random-scene parity check, as `--set` overrides of a preset: a random
/// grid of 9 to 48 cells a side, boundaries, pressure solver (each in turn, with a random
/// iteration count in its useful range, warm start and precision), backtrace order,
/// viscosity, vorticity confinement, gravity, speed clamp, dissipation, an obstacle and the kind of
/// each side (walls, no-slip walls and lids, outflows, inflows). The presets fix
/// one combination each; these mix them, so that a kernel's treatment of one setting is
/// checked beside the others (a periodic axis under multigrid, MGPCG with viscosity, an
/// odd grid under the Poisson filter). Combinations a scene refuses are drawn again.
pub fn random_scene(seed: u64) -> (String, Vec<String>, Scene) {
    let mut rng = SplitMix64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED);
    let mut pick = |n: u64| rng.next_u64() % n;
    loop {
        let preset = ["smoke", "ink", "taylor-green", "stable-fluid"][pick(4) as usize];
        let mut set = vec![format!("grid.nx={}", 9 + pick(40)), format!("grid.ny={}", 9 + pick(40))];
        let mut periodic = [false; 2];
        for (k, axis) in ["x", "y"].into_iter().enumerate() {
            periodic[k] = pick(2) == 1;
            set.push(format!("params.boundary.{axis}={}", ["wall", "periodic"][usize::from(periodic[k])]));
        }
        // The sides of a wall axis: a wall, a moving no-slip wall, an outflow or an inflow
        // (carrying smoke, in stripes or not); an inflow gets an outflow opposite where none
        // was drawn, so that what enters can leave.
        let names = ["left", "right", "bottom", "top"];
        let mut kinds = [0u64; 4];
        for (k, kind) in kinds.iter_mut().enumerate() {
            if !periodic[k / 2] {
                *kind = pick(5);
            }
        }
        if kinds.contains(&3) && !kinds.contains(&2) {
            let k = kinds.iter().position(|k| *k == 3).expect("an inflow");
            kinds[k ^ 1] = 2;
        }
        for (k, kind) in kinds.into_iter().enumerate() {
            let side = match kind {
                1 => format!("{{type = \"no-slip\", velocity = {}}}", [0.0, 0.8][pick(2) as usize]),
                2 => "\"open\"".to_string(),
                3 => format!(
                    "{{type = \"inflow\", velocity = 0.6, profile = \"{}\", density = 0.8, dye = [0.9, 0.3, 0.1, 1.0], \
                     stripes = {}}}",
                    ["uniform", "parabolic"][pick(2) as usize],
                    pick(4)
                ),
                _ => continue,
            };
            set.push(format!("params.boundary.{}={side}", names[k]));
        }
        // Every solver in turn, so that each is in the sample whatever the draws.
        let solver = ["jacobi", "jacobi-multisweep", "sor", "multigrid", "mgpcg", "poisson-filter", "relaxation"]
            [(seed % 7) as usize];
        let iterations = match solver {
            "multigrid" => 1 + pick(4),
            "mgpcg" => 1 + pick(12),
            "poisson-filter" => 1 + pick(32),
            _ => 5 + pick(56),
        };
        set.push(format!("params.pressure.solver={solver}"));
        set.push(format!("params.pressure.iterations={iterations}"));
        set.push(format!("params.pressure.warm_start={}", pick(2) == 0));
        if solver == "multigrid" {
            set.push(format!("params.pressure.precision={}", ["single", "double-float"][pick(2) as usize]));
        }
        set.push(format!("params.advection.backtrace={}", ["euler", "rk2", "rk3"][pick(3) as usize]));
        if pick(2) == 0 {
            set.push("params.viscosity=0.002".into());
            set.push(format!("params.viscosity_iterations={}", 5 + pick(26)));
        } else {
            set.push("params.viscosity=0".into());
        }
        set.push(format!("params.vorticity={}", [0, 4][pick(2) as usize]));
        set.push(format!("params.gravity=[0, {}]", [0.0, -1.0][pick(2) as usize]));
        if pick(3) == 0 {
            set.push("params.max_speed=1.5".into());
        }
        set.push(format!("params.dissipation.density={}", [0.0, 0.5][pick(2) as usize]));
        if pick(2) == 0 {
            // An obstacle of any shape, anywhere, turned, perhaps moving and spinning (a
            // solver that cannot honour it refuses the scene, which is drawn again).
            let shape = ["circle", "box", "capsule", "polygon"][pick(4) as usize];
            let size = match shape {
                "circle" => "radius = 0.15",
                "box" => "size = [0.3, 0.1]",
                "capsule" => "length = 0.3, radius = 0.06",
                _ => "points = [[-0.15, -0.1], [0.15, -0.05], [0.0, 0.0], [0.02, 0.15]]",
            };
            let (x, y) = (0.1 + 0.008 * pick(100) as f32, 0.1 + 0.008 * pick(100) as f32);
            let (angle, speed, spin) = (pick(180), [0.0, 0.3][pick(2) as usize], [0, 90][pick(2) as usize]);
            set.push(format!(
                "obstacles=[{{shape = \"{shape}\", position = [{x}, {y}], {size}, angle = {angle}, \
                 velocity = [{speed}, -0.1], angular_velocity = {spin}}}]"
            ));
        }
        let overrides: Vec<_> = set.iter().map(|s| swirly::scene::parse_override(s).expect("override")).collect();
        if let Ok(scene) = Scene::preset_with(preset, &overrides) {
            return (preset.to_string(), set, scene);
        }
    }
}

/// Whole steps of [`RANDOM_SCENES`] random scenes ([`random_scene`]), with a splat every third
/// step, against the CPU backend: every state field within [`PRESET_TOLERANCE`](crate::presets::PRESET_TOLERANCE) after
/// [`RANDOM_SCENE_STEPS`] steps (`check_states`, as [`preset_parity`](crate::presets::preset_parity) does).
pub fn random_scenes_parity<B: Backend>(make: impl Fn() -> B) {
    let count = match std::env::var("FLUID_RANDOM_SCENES") {
        Ok(n) => n.parse().unwrap_or_else(|_| panic!("FLUID_RANDOM_SCENES={n}: not a count")),
        Err(_) => RANDOM_SCENES,
    };
    for seed in 0..count {
        let (preset, set, scene) = random_scene(seed);
        let name = format!("random-scene-{seed} ({preset} --set {})", set.join(" --set "));
        let grid = scene.grid().expect("grid");
        let dt = scene.params.dt;
        let mut cpu = Simulation::new(scene.clone(), CpuBackend::new().expect("cpu backend")).expect("cpu simulation");
        let mut other = Simulation::new(scene, make()).expect(&name);
        for k in 0..RANDOM_SCENE_STEPS {
            if k % 3 == 0 {
                let s = Splat {
                    center: [(0.3 + 0.04 * k as f32) * grid.width(), 0.45 * grid.height()],
                    radius: 0.12 * grid.height(),
                    falloff: swirly::Falloff::ALL[(k / 3 % 3) as usize],
                    velocity: [0.6, -0.4],
                    density: 0.7,
                    temperature: 1.0,
                    dye: [0.2, 0.5, 0.9, 1.0],
                    fuel: 0.7,
                };
                cpu.splat(carried(&cpu, s)).expect("splat");
                other.splat(carried(&other, s)).expect("splat");
            }
            cpu.step(dt).expect(&name);
            other.step(dt).expect(&name);
        }
        check_states(&name, &grid, &mut cpu, &mut other);
    }
}
