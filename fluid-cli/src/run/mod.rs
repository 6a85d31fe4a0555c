//! `fluid run`: a scene stepped to its end, with its pictures, dumps, probes and checkpoints.
//! The plan checks everything first ([`plan`]), the sinks write the outputs ([`sinks`]), and
//! the summary reports ([`summary`]); the loop between is here.

mod plan;
mod sinks;
mod summary;

pub(crate) use plan::load_scene;
use plan::{Outputs, RunPlan, downscaled};
use sinks::Sink;
use summary::Summary;

use super::*;

pub(crate) fn run(args: &RunArgs) -> Result<(), Failure> {
    let Some(plan) = RunPlan::from_args(args)? else { return Ok(()) };
    let asked = &plan.scene.grid;
    let (asked, factors) = ((asked.nx, asked.ny), (asked.dye_factor, asked.density_factor));
    let mut sim = plan.simulation()?;
    // Per-kernel timings where the backend can measure them; otherwise say so and run on.
    let mut timing_note = None;
    if plan.timings {
        match sim.backend_mut().set_timing(true) {
            Ok(()) => {}
            Err(Error::Unsupported { what, by }) => timing_note = Some(format!("{what} are not available on {by}")),
            Err(e) => return Err(e.into()),
        }
    }
    if sim.downscaled_from().is_some() {
        let budget = sim.scene().storage.budget.map(|b| b.to_string()).unwrap_or_default();
        eprintln!("storage.budget {budget}: {}", downscaled(asked, factors, &sim.scene().grid()?));
    }
    let mut sinks = sinks::sinks(&plan, &sim)?;
    let (stepping, per_step) = step_all(&plan, &mut sim, &mut sinks)?;
    let mut written = Vec::new();
    for sink in sinks {
        written.extend(sink.finish(&mut sim)?);
    }
    let timings = if plan.timings && timing_note.is_none() { sim.backend_mut().take_timings()? } else { Vec::new() };
    // With --json the last step's diagnostics are this state's: nothing has stepped since.
    let diagnostics = match per_step.last() {
        Some(d) => d.0.clone(),
        None => sim.checked_diagnostics()?,
    };
    let ms_per_step = stepping.as_secs_f64() * 1e3 / f64::from(plan.steps);
    let summary = Summary {
        name: plan.scene.name.clone(),
        steps: plan.steps,
        ms_per_step,
        diagnostics,
        per_step,
        timings,
        timing_note,
        written,
    };
    summary.print(&mut sim, plan.json);
    Ok(())
}

/// A step's diagnostics, pressure iterations and substeps (what `--json` lists per step).
type PerStep = (swirly::Diagnostics, u32, u32);

/// Every step of `plan`, each checked and handed to the sinks: the time spent stepping, and
/// with `--json` each step's figures.
fn step_all(
    plan: &RunPlan,
    sim: &mut Simulation,
    sinks: &mut [Box<dyn Sink>],
) -> Result<(std::time::Duration, Vec<PerStep>), Failure> {
    let (steps, dt) = (plan.steps, plan.scene.params.dt);
    // Cleared however the loop ends, so that an error's message is not printed over the bar.
    let bar = ClearOnDrop(indicatif::ProgressBar::new(u64::from(steps)));
    bar.0.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} steps {per_sec} eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let frame = *sim.frame();
    bar.0.set_message(format!("{} {}x{} on {}", plan.scene.name, frame.nx, frame.ny, sim.backend_mut().name()));
    let mut stepping = std::time::Duration::ZERO;
    let mut per_step = Vec::new();
    for k in 1..=steps {
        let t0 = Instant::now();
        sim.step(dt)?;
        // A GPU backend returns once the step is queued: ms/step is the step's time until the
        // device has finished it, not the call's (`fluid bench` times steps queued back to back).
        sim.backend_mut().finish()?;
        stepping += t0.elapsed();
        // Every step is checked (outside the timed part), so a run that blows up stops at
        // once, naming the step, rather than after all its steps (or frames) of garbage.
        let checked = if plan.json {
            sim.checked_diagnostics().map(|d| per_step.push((d, sim.last_iterations(), sim.last_substeps())))
        } else {
            sim.check_state()
        };
        if let Err(e) = checked {
            drop(bar);
            // The --dump files show the state that failed the check.
            for sink in sinks.iter_mut() {
                for path in sink.failed(sim, k)? {
                    eprintln!("wrote {} (the state after step {k})", path.display());
                }
            }
            return Err(e.into());
        }
        for sink in sinks.iter_mut() {
            sink.step(sim, k, steps)?;
        }
        bar.0.inc(1);
    }
    Ok((stepping, per_step))
}
