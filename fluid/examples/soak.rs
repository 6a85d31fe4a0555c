//! A soak test: every preset for many steps on the CPU at a small size, checking the state after
//! every step (no NaN, no flow that outruns the grid) and watching the largest speed, the
//! kinetic energy and the total of each carried field for growth without bound.
//!
//! ```sh
//! cargo run --release -p swirly --example soak -- 100000 32   # steps, grid side
//! cargo run --release -p swirly --example soak -- 100000 32 fire,candle   # some presets
//! ```
//!
//! With `SOAK_TRACE` set, each sample also goes to stderr. Prints one Markdown row per preset (what doc/ROBUSTNESS.md quotes). A preset passes when
//! every step is sound and, over the last tenth of the run, neither the largest speed nor the
//! kinetic energy rises above twice its largest value over the second tenth (a bounded flow
//! settles, decays or holds; one that grows without bound fails). Exits 1 when any fails.

use std::process::ExitCode;
use std::time::Instant;

use swirly::{CpuBackend, FieldId, Scene, Simulation, scene::PRESETS, scene::parse_override};

/// What one sample of the state holds.
#[derive(Clone, Copy, Default)]
struct Sample {
    speed: f64,
    energy: f64,
    mass: f64,
}

fn sample(sim: &mut Simulation<CpuBackend>) -> swirly::Result<Sample> {
    let d = sim.checked_diagnostics()?;
    let h2 = f64::from(sim.frame().h).powi(2);
    let sum_sq = |x: Vec<f32>| x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>();
    if let Ok(count) = sim.points("positions") {
        // The liquid: kinetic energy per particle, and its particle count as the mass.
        let n = count.max(1) as f64;
        let energy = 0.5 * sum_sq(sim.field("velocities")?) / n;
        return Ok(Sample { speed: d.max_velocity, energy, mass: count as f64 });
    }
    let energy = 0.5 * h2 * (sum_sq(sim.field(FieldId::U)?) + sum_sq(sim.field(FieldId::V)?));
    let fields = sim.scene().params.fields;
    let mut mass = 0.0;
    for f in [FieldId::Density, FieldId::Temperature, FieldId::Dye] {
        if fields.carries(f) {
            mass += h2 * sim.field(f)?.iter().map(|&v| f64::from(v)).sum::<f64>();
        }
    }
    Ok(Sample { speed: d.max_velocity, energy, mass })
}

fn soak(preset: &str, steps: u32, side: u32) -> swirly::Result<(bool, String)> {
    let ov: Vec<_> = [format!("grid.nx={side}"), format!("grid.ny={side}")]
        .iter()
        .map(|s| parse_override(s))
        .collect::<swirly::Result<_>>()?;
    let scene = Scene::preset_with(preset, &ov)?;
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, CpuBackend::new()?)?;
    let every = (steps / 100).max(1);
    let trace = std::env::var_os("SOAK_TRACE").is_some();
    let mut samples = Vec::new();
    let t0 = Instant::now();
    for k in 1..=steps {
        sim.step(dt)?;
        sim.check_state()?;
        if k % every == 0 {
            let s = sample(&mut sim)?;
            if trace {
                eprintln!("{preset} step {k}: speed {:.4e} energy {:.4e} carried {:.4e}", s.speed, s.energy, s.mass);
            }
            samples.push(s);
        }
    }
    let ms = t0.elapsed().as_secs_f64() * 1e3 / f64::from(steps);
    let tenth = samples.len() / 10;
    let max = |s: &[Sample], f: fn(&Sample) -> f64| s.iter().map(f).fold(0.0f64, f64::max);
    let (early, late) = (&samples[tenth..2 * tenth], &samples[samples.len() - tenth..]);
    let bounded = |f: fn(&Sample) -> f64| max(late, f) <= 2.0 * max(early, f).max(1e-30);
    let ok = bounded(|s| s.speed) && bounded(|s| s.energy);
    let last = samples.last().copied().unwrap_or_default();
    let row = format!(
        "| {preset} | {side}² | {steps} | {ms:.3} | {:.3e} / {:.3e} | {:.3e} / {:.3e} | {:.3e} | {} |",
        max(early, |s| s.speed),
        max(late, |s| s.speed),
        max(early, |s| s.energy),
        max(late, |s| s.energy),
        last.mass,
        if ok { "bounded" } else { "GROWS" }
    );
    Ok((ok, row))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let steps: u32 = args.first().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let side: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(32);
    let only: Option<Vec<&str>> = args.get(2).map(|s| s.split(',').collect());
    if let Some(name) = only.iter().flatten().find(|n| !PRESETS.iter().any(|(p, _)| p == *n)) {
        eprintln!("error: no preset named {name:?}");
        return ExitCode::from(2);
    }
    if steps < 100 {
        eprintln!("error: at least 100 steps (got {steps})");
        return ExitCode::from(2);
    }
    println!(
        "| preset | grid | steps | ms/step | max speed, 2nd tenth / last tenth | kinetic energy, 2nd / last tenth | carried total at the end | |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut failed = false;
    for (preset, _) in PRESETS.iter().filter(|(p, _)| only.as_ref().is_none_or(|o| o.contains(p))) {
        match soak(preset, steps, side) {
            Ok((ok, row)) => {
                failed |= !ok;
                println!("{row}");
            }
            Err(e) => {
                failed = true;
                println!("| {preset} | {side}² | {steps} | | | | | failed: {e} |");
            }
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
