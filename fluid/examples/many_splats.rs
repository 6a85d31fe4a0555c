//! Steps that each take many small splats (a brush dragged fast, sparks, rain): `splats`
//! splats of two cells' radius scattered over the smoke at `side`², every step, on one
//! backend. The splat kernels bin them (a GPU workgroup, a CPU row adds up only those that
//! reach it): no sample loops over all of them.
//!
//! ```sh
//! cargo run --release -p swirly --features vulkan,wgpu --example many_splats -- vulkan 1024 8000 50
//! ```
//!
//! Prints the median milliseconds of a step (its call until the device is done) with that
//! many splats and with one.

use swirly::{Falloff, Scene, Simulation, Splat, scene::parse_override};

fn main() -> Result<(), swirly::Error> {
    let args: Vec<String> = std::env::args().collect();
    let backend = args.get(1).map_or("cpu", String::as_str);
    let arg = |k: usize, default: usize| args.get(k).and_then(|s| s.parse().ok()).unwrap_or(default);
    let (side, count, steps) = (arg(2, 256), arg(3, 8000), arg(4, 20).max(1));
    let ov: Vec<_> = [format!("grid.nx={side}"), format!("grid.ny={side}")]
        .iter()
        .map(|s| parse_override(s))
        .collect::<Result<_, _>>()?;
    let scene = Scene::preset_with("smoke", &ov)?;
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, swirly::backend(backend)?)?;
    let (w, h, cell) = (sim.frame().width(), sim.frame().height(), sim.frame().h);
    let mut seed = 1u64;
    let mut unit = move || {
        // SplitMix64's output, as a fraction.
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut median =
        |sim: &mut Simulation<Box<dyn swirly::backend::Backend>>, n: usize| -> Result<f64, swirly::Error> {
            let mut times = Vec::new();
            for _ in 0..steps {
                for _ in 0..n {
                    sim.splat(Splat {
                        center: [unit() * w, unit() * h],
                        radius: 2.0 * cell,
                        falloff: Falloff::Gaussian,
                        velocity: [unit() - 0.5, unit() - 0.5],
                        density: 0.05,
                        ..Splat::default()
                    })?;
                }
                let start = std::time::Instant::now();
                sim.step(dt)?;
                sim.backend_mut().finish()?;
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            Ok(times[times.len() / 2])
        };
    let one = median(&mut sim, 1)?;
    let many = median(&mut sim, count)?;
    println!("{backend} {side}²: {one:.3} ms a step with 1 splat, {many:.3} ms with {count}");
    Ok(())
}
