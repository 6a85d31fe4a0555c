//! Fill a GPU's memory with simulations until it refuses one: the refusal must be a typed
//! [`swirly::Error::OutOfMemory`] (no crash, no abort), and the simulations made before it must
//! still step. Each simulation is the smoke at `side`² (a GPU binds at most 4 GiB per buffer,
//! so one scene alone cannot fill a large device).
//!
//! ```sh
//! cargo run --release -p swirly --features vulkan,wgpu --example device_oom -- vulkan 16000
//! ```
//!
//! Prints what each simulation took and the error that ended the loop; exits 0 when that error
//! was `OutOfMemory` and every simulation made still steps, 1 otherwise.

use std::process::ExitCode;

use swirly::{Error, Scene, Simulation, backend::Backend, scene::parse_override};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let backend = args.get(1).map_or("vulkan", String::as_str);
    let side: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(16000);
    let ov: Vec<_> = [format!("grid.nx={side}"), format!("grid.ny={side}"), "params.pressure.iterations=1".into()]
        .iter()
        .map(|s| parse_override(s).expect("override"))
        .collect();
    let scene = Scene::preset_with("smoke", &ov).expect("preset");
    let mut sims = Vec::new();
    let outcome = loop {
        let made = swirly::backend(backend).and_then(|b| Simulation::new(scene.clone(), b));
        match made {
            Ok(sim) => {
                let held = sim.backend().memory().map_or(0, |m| m.total);
                println!("simulation {} on {backend}: {} MiB", sims.len() + 1, held >> 20);
                sims.push(sim);
            }
            Err(e) => break e,
        }
        if sims.len() > 64 {
            println!("64 simulations fit: no refusal to see at {side}²");
            return ExitCode::FAILURE;
        }
    };
    println!("refused: {outcome}");
    let stepped = sims.iter_mut().all(|s| s.step(scene.params.dt).is_ok());
    println!("the {} simulations made step on: {stepped}", sims.len());
    if matches!(outcome, Error::OutOfMemory { .. }) && stepped { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
