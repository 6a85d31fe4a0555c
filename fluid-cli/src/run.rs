//! `fluid run`: a scene stepped to its end, with its pictures, dumps, probes and checkpoints.

use super::*;

/// Whether `arg` names a checkpoint rather than a scene.
pub(crate) fn is_checkpoint(arg: &str) -> bool {
    Path::new(arg).extension().is_some_and(|e| e == "fluid")
}

/// The checkpoint at `path`, opened for reading.
pub(crate) fn open_checkpoint(path: &Path) -> Result<std::io::BufReader<std::fs::File>, Failure> {
    let file = std::fs::File::open(path)
        .map_err(|e| Failure { code: 2, message: format!("cannot read checkpoint {}: {e}", path.display()) })?;
    Ok(std::io::BufReader::new(file))
}

/// The scene of the checkpoint at `path`, with `overrides` applied and checked like a scene
/// file's (a file's name is its output folder: one edited to leave `out/` is refused before
/// anything is written); without a name it takes the file's, as a scene file does.
pub(crate) fn checkpoint_scene(path: &Path, overrides: &[String]) -> Result<Scene, Failure> {
    let overrides = overrides.iter().map(|s| fluid::parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let (header, _) = fluid::checkpoint::read_header(open_checkpoint(path)?)?;
    let mut scene = header.scene.with_overrides(&format!("checkpoint {}", path.display()), &overrides)?;
    if scene.name.is_empty() {
        scene.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        fluid::check_name(&scene.name)?;
    }
    Ok(scene)
}

pub(crate) fn load_scene(arg: &str, overrides: &[String]) -> Result<Scene, Failure> {
    if is_checkpoint(arg) {
        return checkpoint_scene(Path::new(arg), overrides);
    }
    let overrides = overrides.iter().map(|s| fluid::parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let path = Path::new(arg);
    // A scene file: a `*.toml` name, or anything there but a preset's name (so that a FIFO or
    // a folder given as the scene is named as what it is).
    let preset = fluid::PRESETS.iter().any(|(name, _)| *name == arg);
    let is_file = arg.ends_with(".toml") || path.is_file() || (!preset && std::fs::symlink_metadata(path).is_ok());
    if is_file {
        let mut scene = Scene::from_file(path, &overrides)?;
        if scene.name.is_empty() {
            scene.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            fluid::check_name(&scene.name)?;
        }
        Ok(scene)
    } else {
        Ok(Scene::preset_with(arg, &overrides)?)
    }
}

/// The fields named, each once (`--dump dye,dye` writes dye.npy once).
/// `--probe X,Y` points, each a fraction of the box along both axes.
pub(crate) fn parse_probes(texts: &[String]) -> Result<Vec<[f32; 2]>, Failure> {
    texts
        .iter()
        .map(|t| {
            let parts: Vec<Option<f32>> = t.split(',').map(|x| x.trim().parse::<f32>().ok()).collect();
            match parts[..] {
                [Some(x), Some(y)] if (0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y) => Ok([x, y]),
                _ => {
                    Err(Error::invalid("--probe", t, "two fractions of the box, each from 0 to 1, e.g. 0.4,0.5").into())
                }
            }
        })
        .collect()
}

/// The fields `names` asks for, each once, in order: `particles` stands for the particle
/// liquid's positions and velocities.
pub(crate) fn field_list(names: &[String]) -> Vec<String> {
    let mut fields: Vec<String> = Vec::new();
    for name in names {
        let named = match name.trim() {
            "particles" => vec!["positions", "velocities"],
            other => vec![other],
        };
        for field in named {
            if !fields.iter().any(|f| f == field) {
                fields.push(field.to_string());
            }
        }
    }
    fields
}

pub(crate) fn run(args: &RunArgs) -> Result<(), Failure> {
    // Check everything the user typed before any work starts.
    let (dumps, exr) = (field_list(&args.dump), field_list(&args.exr));
    if args.steps == Some(0) {
        return Err(Error::invalid("--steps", 0, "run at least one step").into());
    }
    let probes = parse_probes(&args.probes)?;
    if args.frame_every == Some(0) {
        return Err(Error::invalid("--frame-every", 0, "must be at least 1").into());
    }
    if args.save_every == Some(0) {
        return Err(Error::invalid("--save-every", 0, "must be at least 1").into());
    }
    fluid::check_backend_name(&args.backend)?;
    if args.threads != 0 && args.backend != "cpu" {
        let why = format!("sets the cpu backend's worker threads; the {} backend has none", args.backend);
        return Err(Error::invalid("--threads", args.threads, why).into());
    }
    let scene = load_scene(&args.scene, &args.set)?;
    let steps = args.steps.or(scene.steps).unwrap_or(300);
    let flipbook = args.flipbook.as_deref().map(|f| Flipbook::parse(f, steps)).transpose()?;
    if args.transparent {
        if args.gif {
            let why = "a GIF has no partial transparency: use --png or --flipbook";
            return Err(Error::invalid("--transparent", "with --gif", why).into());
        }
        if !args.png && flipbook.is_none() {
            let why = "it applies to --png frames and --flipbook, and neither is asked for";
            return Err(Error::invalid("--transparent", "alone", why).into());
        }
    }
    let mut scene = scene;
    if args.transparent {
        scene.render.background.0[3] = 0;
    }
    if args.png || args.gif || flipbook.is_some() {
        scene.check_render()?;
    }
    if let Some(book) = &flipbook {
        book.check_size(scene.picture_size()?)?;
    }
    let model = scene.model()?;
    for (option, fields) in [("--dump", &dumps), ("--exr", &exr)] {
        for field in fields {
            if let Err(e) = model.check_field(field) {
                let why = match e {
                    Error::InvalidValue { reason, .. } => reason,
                    other => other.to_string(),
                };
                return Err(Error::invalid(option, field, why).into());
            }
        }
    }
    let backend = fluid::backend_with_threads(&args.backend, args.threads)?;
    if args.plan {
        print_plan(&scene, backend.as_ref())?;
        if let Some((field, bytes)) = largest_dump(model.as_ref(), &dumps) {
            println!(
                "--dump: each field is read back to host memory in turn and written a block at a time; the \
                 largest, {field}, takes {} on the host",
                fluid::storage::Bytes(bytes)
            );
        }
        return check_dumps_fit(model.as_ref(), &args.backend, &dumps);
    }
    check_dumps_fit(model.as_ref(), &args.backend, &dumps)?;
    drop(model);
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&scene.name));
    let frames_wanted = args.png || args.gif || !exr.is_empty();
    if frames_wanted || flipbook.is_some() || !dumps.is_empty() || args.save_every.is_some() || !probes.is_empty() {
        if out_dir.exists() && !out_dir.is_dir() {
            return Err(Failure {
                code: 2,
                message: format!("--out {}: exists and is not a directory", out_dir.display()),
            });
        }
        std::fs::create_dir_all(&out_dir).map_err(|e| io_failure(&out_dir, e))?;
    }

    let dt = scene.params.dt;
    let name = scene.name.clone();
    let asked = (scene.grid.nx, scene.grid.ny);
    let asked_factors = (scene.grid.dye_factor, scene.grid.density_factor);
    let mut sim = if is_checkpoint(&args.scene) {
        let mut sim = Simulation::load(open_checkpoint(Path::new(&args.scene))?, backend)?;
        if sim.scene() != &scene {
            sim.set_scene(scene)?;
        }
        sim
    } else {
        Simulation::new(scene, backend)?
    };
    // Per-kernel timings where the backend can measure them; otherwise say so and run on.
    let mut timing_note = None;
    if args.timings {
        match sim.backend_mut().set_timing(true) {
            Ok(()) => {}
            Err(Error::Unsupported { what, by }) => timing_note = Some(format!("{what} are not available on {by}")),
            Err(e) => return Err(e.into()),
        }
    }
    let timing_on = args.timings && timing_note.is_none();
    let grid = *sim.frame();
    if sim.downscaled_from().is_some() {
        let budget = sim.scene().storage.budget.map(|b| b.to_string()).unwrap_or_default();
        eprintln!("storage.budget {budget}: {}", downscaled(asked, asked_factors, &sim.scene().grid()?));
    }
    let every = args.frame_every.unwrap_or((steps / 100).max(1));
    let probe_points: Vec<[f32; 2]> = probes.iter().map(|p| [p[0] * grid.width(), p[1] * grid.height()]).collect();
    let mut probe_rows: Vec<String> = Vec::new();
    let mut frames = 0usize;
    let mut written: Vec<PathBuf> = Vec::new();
    let gif_path = out_dir.join(format!("{name}.gif"));
    let (width, height) = sim.picture_size();
    let mut gif = if args.gif { Some(GifWriter::create(&gif_path, width, height)?) } else { None };
    let mut atlas = flipbook.map(|book| Atlas::new(book, width, height));

    // Cleared however the loop ends, so that an error's message is not printed over the bar.
    let bar = ClearOnDrop(indicatif::ProgressBar::new(u64::from(steps)));
    bar.0.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} steps {per_sec} eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.0.set_message(format!("{name} {}x{} on {}", grid.nx, grid.ny, sim.backend_mut().name()));
    let mut stepping = std::time::Duration::ZERO;
    // With --json, every step's projection quality too (one diagnostics pass per step, not timed).
    let mut per_step: Vec<fluid::Diagnostics> = Vec::new();
    let mut iterations_per_step: Vec<u32> = Vec::new();
    let mut substeps_per_step: Vec<u32> = Vec::new();
    for k in 1..=steps {
        let t0 = Instant::now();
        sim.step(dt)?;
        // A GPU backend returns once the step is queued: ms/step is the step's time until the
        // device has finished it, not the call's (`fluid bench` times steps queued back to back).
        sim.backend_mut().finish()?;
        stepping += t0.elapsed();
        // Every step is checked (outside the timed part), so a run that blows up stops at
        // once, naming the step, rather than after all its steps (or frames) of garbage.
        let checked = if args.json {
            sim.checked_diagnostics().map(|d| {
                per_step.push(d);
                iterations_per_step.push(sim.last_iterations());
                substeps_per_step.push(sim.last_substeps());
            })
        } else {
            sim.check_state()
        };
        if let Err(e) = checked {
            // The --dump files show the state that failed the check.
            drop(bar);
            for path in write_dumps(&mut sim, &dumps, &out_dir)? {
                eprintln!("wrote {} (the state after step {k})", path.display());
            }
            return Err(e.into());
        }
        if !probe_points.is_empty() {
            let (u, v) = (sim.sample("u", &probe_points)?, sim.sample("v", &probe_points)?);
            let values: Vec<String> = u.iter().zip(&v).map(|(u, v)| format!("{u},{v}")).collect();
            probe_rows.push(format!("{k},{},{}", sim.time(), values.join(",")));
        }
        if frames_wanted && (k % every == 0 || k == steps) {
            if args.png || args.gif {
                let rgba = sim.render()?;
                if args.png {
                    let path = out_dir.join(format!("frame_{frames:05}.png"));
                    save_png(&path, width, height, &rgba)?;
                    written.push(path);
                }
                if let Some(gif) = gif.as_mut() {
                    gif.push(rgba)?;
                }
            }
            for field in &exr {
                let path = out_dir.join(format!("{field}_{frames:05}.exr"));
                let shape = sim.field_info(field)?.shape(&grid);
                save_exr(&path, &shape, &sim.field(field)?)?;
                written.push(path);
            }
            frames += 1;
        }
        if let Some(atlas) = atlas.as_mut()
            && atlas.wants(k)
        {
            atlas.push(&sim.render()?);
        }
        if let Some(every) = args.save_every
            && (k % every == 0 || k == steps)
        {
            written.push(save_checkpoint(&mut sim, &out_dir)?);
        }
        bar.0.inc(1);
    }
    drop(bar);

    if let Some(gif) = gif {
        gif.finish()?;
        written.push(gif_path);
    }
    if let Some(atlas) = atlas {
        written.extend(atlas.write(&out_dir, &name, dt)?);
    }
    written.extend(write_dumps(&mut sim, &dumps, &out_dir)?);
    if !probes.is_empty() {
        let path = out_dir.join("probes.csv");
        let header: Vec<String> = (0..probes.len()).map(|k| format!("u{k},v{k}")).collect();
        let text = format!("step,time,{}\n{}\n", header.join(","), probe_rows.join("\n"));
        std::fs::write(&path, text).map_err(|e| io_failure(&path, e))?;
        written.push(path);
    }
    let timings = if timing_on { sim.backend_mut().take_timings()? } else { Vec::new() };
    // With --json the last step's diagnostics are this state's: nothing has stepped since.
    let diag = match per_step.last() {
        Some(d) => d.clone(),
        None => sim.checked_diagnostics()?,
    };
    let ms_per_step = stepping.as_secs_f64() * 1e3 / f64::from(steps);
    let device = sim.backend_mut().device();
    let backend_name = sim.backend_mut().name();
    // What the backend holds for this scene, from its own accounting (every backend of the
    // workspace keeps one; a backend without it reports none).
    let memory = sim.backend().memory().ok();
    // The live count at the end: emitters add particles as the liquid runs.
    let particles = sim.field_info("positions").map_or(0, |f| f.lattice.points(&grid));
    let figure = |d: &fluid::Diagnostics, name: &str| d.figure(name);

    if args.json {
        let json = serde_json::json!({
            "scene": name,
            "backend": backend_name,
            "device": device,
            "grid": [grid.nx, grid.ny],
            "particles": particles,
            "downscaled_from": sim.downscaled_from(),
            "steps": steps,
            "ms_per_step": ms_per_step,
            "max_divergence": figure(&diag, "max_divergence"),
            "residual": figure(&diag, "residual"),
            "max_velocity": diag.max_velocity,
            "cfl": diag.cfl,
            "memory": memory.as_ref().map(|m| serde_json::json!({
                "total": m.total, "reserved": m.reserved, "peak": m.peak,
                "resources": m.resources.iter().map(|(n, b)| serde_json::json!({"name": n, "bytes": b}))
                    .collect::<Vec<_>>(),
            })),
            "timings_note": timing_note,
            "residual_per_step": per_step.iter().map(|d| figure(d, "residual")).collect::<Vec<_>>(),
            "max_divergence_per_step": per_step.iter().map(|d| figure(d, "max_divergence")).collect::<Vec<_>>(),
            "iterations_per_step": iterations_per_step,
            "substeps_per_step": substeps_per_step,
            "timings": timings.iter().map(|t| serde_json::json!({
                "label": t.label, "invocations": t.invocations, "ms": t.ms,
            })).collect::<Vec<_>>(),
            "outputs": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        });
        println!("{json}");
    } else {
        match (figure(&diag, "max_divergence"), figure(&diag, "residual")) {
            (Some(divergence), Some(residual)) => println!(
                "{name}: {}x{} on {backend_name} ({device}): {} steps, {ms_per_step:.3} ms/step, \
                 max |div u| {divergence:.3e} /s, relative residual {residual:.3e}, CFL {:.2}",
                grid.nx, grid.ny, steps, diag.cfl
            ),
            _ => println!(
                "{name}: {} particles, drawn on {}x{}, on {backend_name} ({device}): {} steps, \
                 {ms_per_step:.3} ms/step, max speed {:.3e}, {:.2} radii per step",
                particles, grid.nx, grid.ny, steps, diag.max_velocity, diag.cfl
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
        if let Some(note) = &timing_note {
            println!("per-kernel timings: {note}");
        }
        if !timings.is_empty() {
            println!("{:<24} {:>8} {:>12} {:>10}", "kernel", "calls", "total ms", "ms/step");
            for t in &timings {
                println!("{:<24} {:>8} {:>12.3} {:>10.4}", t.label, t.invocations, t.ms, t.ms / f64::from(steps));
            }
        }
        for p in &written {
            println!("wrote {}", p.display());
        }
    }
    Ok(())
}

/// An error unless the host can hold the largest field `dumps` asks for (its copy read back
/// to write it; the file is written a block at a time), beside the scene's fields where the
/// backend keeps them in host memory (`cpu`). Checked before the run starts, so a huge
/// `--dump` fails at once rather than being killed after the last step.
pub(crate) fn check_dumps_fit(model: &dyn fluid::Model, backend: &str, dumps: &[String]) -> Result<(), Failure> {
    let largest = largest_dump(model, dumps);
    let fields = if backend == "cpu" { model.resources().iter().map(|r| 4 * r.scalars()).sum() } else { 0 };
    if let (Some((field, bytes)), Some(avail)) = (largest, fluid_core::backend::available_memory())
        && bytes + fields > avail
    {
        let why = format!(
            "writing it reads back {bytes} bytes, beside the {fields} bytes of the scene's fields in host memory, \
             and only {avail} bytes of memory are available"
        );
        return Err(Error::invalid("--dump", field, why).into());
    }
    Ok(())
}

/// The field of `dumps` whose read-back takes the most host memory, and those bytes (`f32`
/// values: an `f16` field is widened when read back; a liquid's with the room its emitters
/// fill).
fn largest_dump<'a>(model: &dyn fluid::Model, dumps: &'a [String]) -> Option<(&'a str, u64)> {
    let resources = model.resources();
    let bytes = |field: &str| resources.iter().find(|r| r.name == field).map_or(0, |r| 4 * r.scalars());
    dumps.iter().map(|f| (f.as_str(), bytes(f))).max_by_key(|(_, bytes)| *bytes)
}

/// `DIR/<field>.npy` of each field in `dumps`; the paths written.
pub(crate) fn write_dumps(sim: &mut Simulation, dumps: &[String], out_dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let frame = *sim.frame();
    let mut written = Vec::new();
    for field in dumps {
        let shape = sim.field_info(field)?.shape(&frame);
        let data = sim.field(field)?;
        let path = out_dir.join(format!("{field}.npy"));
        npy::write_f32(&path, &shape, &data).map_err(|e| io_failure(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// `fluid run --plan`: the memory plan of `scene` on `backend`, and what its budget makes of it.
pub(crate) fn print_plan(scene: &Scene, backend: &dyn fluid::Backend) -> Result<(), Failure> {
    let budget = scene.storage.budget;
    let fitted = match fluid::storage::plan(scene, backend) {
        Ok(f) => f,
        Err(e @ Error::OverBudget { .. }) => {
            // The plan is still worth showing beside the refusal.
            let mut full = scene.clone();
            full.storage.budget = None;
            print!("{}", fluid::storage::plan(&full, backend)?.plan.table());
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    print!("{}", fitted.plan.table());
    let grid = &fitted.scene.grid;
    match (budget, fitted.downscaled_from) {
        (None, _) => println!("no storage.budget: runs {}x{}", grid.nx, grid.ny),
        (Some(b), None) => println!("storage.budget {b}: fits; runs {}x{}", grid.nx, grid.ny),
        (Some(b), Some([nx, ny])) => {
            let fitted_grid = fitted.scene.grid()?;
            let what = downscaled((nx, ny), (scene.grid.dye_factor, scene.grid.density_factor), &fitted_grid);
            println!("storage.budget {b}: {what} (storage.policy = \"downscale\")")
        }
    }
    Ok(())
}

/// What a downscaled run gave up: the `asked` grid with its dye and density `factors` times
/// finer, against the grid that runs.
fn downscaled(asked: (u32, u32), factors: (u32, u32), grid: &fluid::Grid) -> String {
    let fields = [("dye", factors.0, grid.dye_factor), ("density", factors.1, grid.density_factor)];
    if (grid.nx, grid.ny) == asked {
        let gave: Vec<String> = (fields.iter().filter(|(_, from, to)| from != to))
            .map(|(name, from, to)| {
                let at = if *to == 1 { "on the grid".to_string() } else { format!("{to}x finer") };
                format!("its {name} {at} (grid.{name}_factor {to} instead of {from})")
            })
            .collect();
        return format!("the {}x{} grid fits only with {}; running that", grid.nx, grid.ny, gave.join(" and "));
    }
    let fine: Vec<&str> = fields.iter().filter(|(_, from, _)| *from > 1).map(|(name, ..)| *name).collect();
    let fine = if fine.is_empty() { String::new() } else { format!(" (its {} on the grid)", fine.join(" and ")) };
    format!(
        "the {}x{} grid does not fit; running {}x{}{fine}, the largest of its box that does",
        asked.0, asked.1, grid.nx, grid.ny
    )
}

/// Write DIR/checkpoint_<step>.fluid, whole or not at all.
pub(crate) fn save_checkpoint(sim: &mut Simulation, out_dir: &Path) -> Result<PathBuf, Failure> {
    let path = out_dir.join(format!("checkpoint_{:06}.fluid", sim.steps()));
    let mut failure = None;
    whole::write_whole(&path, |part| {
        let mut w = std::io::BufWriter::new(std::fs::File::create(part)?);
        sim.save(&mut w).map_err(|e| {
            let message = e.to_string();
            failure = Some(e);
            std::io::Error::other(message)
        })
    })
    .map_err(|e| match failure.take() {
        // The state could not be read: the backend's failure, as it is.
        Some(e @ Error::Backend { .. }) => Failure::from(e),
        _ => io_failure(&path, e),
    })?;
    Ok(path)
}
