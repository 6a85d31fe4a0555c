//! What a run reports when it is done: one line of text (and the memory, the timings and the
//! files written), or one JSON object.

use super::*;

/// What a finished run measured.
pub(crate) struct Summary {
    pub name: String,
    pub steps: u32,
    /// Milliseconds per step, each step waited for.
    pub ms_per_step: f64,
    /// The last step's diagnostics.
    pub diagnostics: swirly::Diagnostics,
    /// With `--json`, each step's diagnostics, iterations and substeps.
    pub per_step: Vec<PerStep>,
    pub timings: Vec<swirly::KernelTiming>,
    /// Why there are no timings, where the backend measures none.
    pub timing_note: Option<String>,
    pub written: Vec<PathBuf>,
}

impl Summary {
    /// Print it for `sim`, as JSON or text.
    pub(crate) fn print(&self, sim: &mut Simulation, json: bool) {
        let frame = *sim.frame();
        let device = sim.backend_mut().device();
        let backend = sim.backend_mut().name();
        // What the backend holds for this scene, from its own accounting (every backend of the
        // workspace keeps one; a backend without it reports none).
        let memory = sim.backend().memory().ok();
        // The live count at the end: emitters add particles as the liquid runs.
        let particles = sim.points("positions").unwrap_or(0);
        let d = &self.diagnostics;
        let (name, steps, ms) = (&self.name, self.steps, self.ms_per_step);
        if json {
            let figure = |d: &swirly::Diagnostics, name: &str| d.figure(name);
            let json = serde_json::json!({
                "scene": name,
                "backend": backend,
                "device": device,
                "grid": [frame.nx, frame.ny],
                "particles": particles,
                "downscaled_from": sim.downscaled_from(),
                "steps": steps,
                "ms_per_step": ms,
                "max_divergence": figure(d, "max_divergence"),
                "residual": figure(d, "residual"),
                "max_velocity": d.max_velocity,
                "cfl": d.cfl,
                "memory": memory.as_ref().map(|m| serde_json::json!({
                    "total": m.total, "reserved": m.reserved, "peak": m.peak,
                    "resources": m.resources.iter().map(|(n, b)| serde_json::json!({"name": n, "bytes": b}))
                        .collect::<Vec<_>>(),
                })),
                "timings_note": self.timing_note,
                "residual_per_step": self.per_step.iter().map(|s| figure(&s.0, "residual")).collect::<Vec<_>>(),
                "max_divergence_per_step":
                    self.per_step.iter().map(|s| figure(&s.0, "max_divergence")).collect::<Vec<_>>(),
                "iterations_per_step": self.per_step.iter().map(|s| s.1).collect::<Vec<_>>(),
                "substeps_per_step": self.per_step.iter().map(|s| s.2).collect::<Vec<_>>(),
                "timings": self.timings.iter().map(|t| serde_json::json!({
                    "label": t.label, "invocations": t.invocations, "ms": t.ms,
                })).collect::<Vec<_>>(),
                "outputs": self.written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            });
            println!("{json}");
            return;
        }
        match (d.figure("max_divergence"), d.figure("residual")) {
            (Some(divergence), Some(residual)) => println!(
                "{name}: {}x{} on {backend} ({device}): {steps} steps, {ms:.3} ms/step, max |div u| \
                 {divergence:.3e} /s, relative residual {residual:.3e}, CFL {:.2}",
                frame.nx, frame.ny, d.cfl
            ),
            _ => println!(
                "{name}: {particles} particles, drawn on {}x{}, on {backend} ({device}): {steps} steps, {ms:.3} \
                 ms/step, max speed {:.3e}, {:.2} radii per step",
                frame.nx, frame.ny, d.max_velocity, d.cfl
            ),
        }
        if let Some(m) = &memory {
            let mib = |bytes: u64| bytes as f64 / 1048576.0;
            println!(
                "memory: {:.1} MiB allocated, {:.1} MiB of it the scene's resources; {:.1} MiB reserved; \
                 {:.1} MiB at most at once",
                mib(m.total),
                mib(m.resources.iter().map(|r| r.1).sum::<u64>()),
                mib(m.reserved),
                mib(m.peak)
            );
        }
        if let Some(note) = &self.timing_note {
            println!("per-kernel timings: {note}");
        }
        if !self.timings.is_empty() {
            println!("{:<24} {:>8} {:>12} {:>10}", "kernel", "calls", "total ms", "ms/step");
            for t in &self.timings {
                println!("{:<24} {:>8} {:>12.3} {:>10.4}", t.label, t.invocations, t.ms, t.ms / f64::from(steps));
            }
        }
        for p in &self.written {
            println!("wrote {}", p.display());
        }
    }
}
