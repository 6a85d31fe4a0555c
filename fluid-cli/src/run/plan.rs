//! A run's plan: everything the user typed, checked before any work starts (the scene, the
//! options, the fields asked for, the outputs' sizes, the output folder writable), and
//! `--plan`'s report of what the scene needs.

use super::*;

/// What a `fluid run` does, checked.
pub(crate) struct RunPlan {
    /// The scene, its overrides applied (a transparent background set).
    pub scene: Scene,
    /// The checkpoint it continues from, when the argument names one.
    pub checkpoint: Option<PathBuf>,
    /// Steps to run.
    pub steps: u32,
    /// The backend's name and its CPU threads.
    pub backend: (String, usize),
    /// The output folder (made and checked writable once outputs are asked for).
    pub out_dir: PathBuf,
    /// What the run writes.
    pub outputs: Outputs,
    /// Print JSON instead of text.
    pub json: bool,
    /// Per-kernel timings.
    pub timings: bool,
}

/// The outputs a run writes.
pub(crate) struct Outputs {
    /// PNG frames.
    pub png: bool,
    /// An animated GIF.
    pub gif: bool,
    /// Fields written as OpenEXR at every frame.
    pub exr: Vec<String>,
    /// A frame every `frame_every` steps (and at the last) for PNG, GIF and EXR.
    pub frame_every: u32,
    /// A flipbook atlas.
    pub flipbook: Option<Flipbook>,
    /// Fields written as `.npy` after the last step.
    pub dumps: Vec<String>,
    /// Probe points, fractions of the box.
    pub probes: Vec<[f32; 2]>,
    /// A checkpoint every so many steps (and after the last).
    pub save_every: Option<u32>,
}

impl Outputs {
    /// Whether anything is written to the output folder.
    fn any(&self) -> bool {
        self.png
            || self.gif
            || !self.exr.is_empty()
            || self.flipbook.is_some()
            || !self.dumps.is_empty()
            || !self.probes.is_empty()
            || self.save_every.is_some()
    }
}

impl RunPlan {
    /// Check everything `args` asks for. With `--plan` the plan is printed and `None`
    /// returned: nothing is to run.
    pub(crate) fn from_args(args: &RunArgs) -> Result<Option<RunPlan>, Failure> {
        let (dumps, exr) = (field_list(&args.dump), field_list(&args.exr));
        if args.steps == Some(0) {
            return Err(Error::invalid("--steps", 0, "run at least one step").into());
        }
        for (key, value) in [("--frame-every", args.frame_every), ("--save-every", args.save_every)] {
            if value == Some(0) {
                return Err(Error::invalid(key, 0, "must be at least 1").into());
            }
        }
        let probes = parse_probes(&args.probes)?;
        swirly::backend::check_backend_name(&args.backend)?;
        if args.threads != 0 && args.backend != "cpu" {
            let why = format!("sets the cpu backend's worker threads; the {} backend has none", args.backend);
            return Err(Error::invalid("--threads", args.threads, why).into());
        }
        let mut scene = load_scene(&args.scene, &args.set)?;
        let steps = args.steps.or(scene.steps).unwrap_or(300);
        let flipbook = args.flipbook.as_deref().map(|f| Flipbook::parse(f, steps)).transpose()?;
        check_transparent(args, flipbook.is_some())?;
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
        check_fields(model.as_ref(), &dumps, &exr)?;
        check_dumps_fit(model.as_ref(), &args.backend, &dumps)?;
        let outputs = Outputs {
            png: args.png,
            gif: args.gif,
            exr,
            frame_every: args.frame_every.unwrap_or((steps / 100).max(1)),
            flipbook,
            dumps,
            probes,
            save_every: args.save_every,
        };
        if args.plan {
            let backend = swirly::backend_with_threads(&args.backend, args.threads)?;
            print_plan(&scene, backend.as_ref())?;
            print_host_outputs(model.as_ref(), &scene, &outputs)?;
            return Ok(None);
        }
        let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&scene.name));
        if outputs.any() {
            whole::check_writable(&out_dir).map_err(|e| Failure {
                code: 2,
                message: format!("--out {}: cannot write there: {e}", out_dir.display()),
            })?;
        }
        Ok(Some(RunPlan {
            checkpoint: is_checkpoint(&args.scene).then(|| PathBuf::from(&args.scene)),
            scene,
            steps,
            backend: (args.backend.clone(), args.threads),
            out_dir,
            outputs,
            json: args.json,
            timings: args.timings,
        }))
    }

    /// The simulation of the plan: its scene new, or its checkpoint restored (and carried on
    /// under the scene's changes).
    pub(crate) fn simulation(&self) -> Result<Simulation, Failure> {
        let backend = swirly::backend_with_threads(&self.backend.0, self.backend.1)?;
        let scene = self.scene.clone();
        match &self.checkpoint {
            Some(path) => {
                let mut sim = Simulation::load(open_checkpoint(path)?, backend)?;
                if sim.scene() != &scene {
                    sim.set_scene(scene)?;
                }
                Ok(sim)
            }
            None => Ok(Simulation::new(scene, backend)?),
        }
    }
}

/// `--transparent` only with outputs that keep alpha.
fn check_transparent(args: &RunArgs, flipbook: bool) -> Result<(), Failure> {
    if !args.transparent {
        return Ok(());
    }
    if args.gif {
        let why = "a GIF has no partial transparency: use --png or --flipbook";
        return Err(Error::invalid("--transparent", "with --gif", why).into());
    }
    if !args.png && !flipbook {
        let why = "it applies to --png frames and --flipbook, and neither is asked for";
        return Err(Error::invalid("--transparent", "alone", why).into());
    }
    Ok(())
}

/// An error naming the option and the field for a field of `--dump` or `--exr` the scene's
/// model cannot give, saying why.
fn check_fields(model: &dyn swirly::model::Model, dumps: &[String], exr: &[String]) -> Result<(), Failure> {
    for (option, fields) in [("--dump", dumps), ("--exr", exr)] {
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
    Ok(())
}

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
    let overrides = overrides.iter().map(|s| swirly::scene::parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let (header, _) = swirly::checkpoint::read_header(open_checkpoint(path)?)?;
    let mut scene = header.scene.with_overrides(&format!("checkpoint {}", path.display()), &overrides)?;
    if scene.name.is_empty() {
        scene.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        swirly::scene::check_name(&scene.name)?;
    }
    Ok(scene)
}

/// The scene `arg` names (a scene file, a preset, a checkpoint) with `overrides` applied.
pub(crate) fn load_scene(arg: &str, overrides: &[String]) -> Result<Scene, Failure> {
    if is_checkpoint(arg) {
        return checkpoint_scene(Path::new(arg), overrides);
    }
    let overrides = overrides.iter().map(|s| swirly::scene::parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let path = Path::new(arg);
    // A scene file: a `*.toml` name, or anything there but a preset's name (so that a FIFO or
    // a folder given as the scene is named as what it is).
    let preset = swirly::scene::PRESETS.iter().any(|(name, _)| *name == arg);
    let is_file = arg.ends_with(".toml") || path.is_file() || (!preset && std::fs::symlink_metadata(path).is_ok());
    if is_file {
        let mut scene = Scene::from_file(path, &overrides)?;
        if scene.name.is_empty() {
            scene.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            swirly::scene::check_name(&scene.name)?;
        }
        Ok(scene)
    } else {
        Ok(Scene::preset_with(arg, &overrides)?)
    }
}

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

/// An error unless the host can hold the largest field `dumps` asks for (its copy read back
/// to write it; the file is written a block at a time), beside the scene's fields where the
/// backend keeps them in host memory (`cpu`). Checked before the run starts, so a huge
/// `--dump` fails at once rather than being killed after the last step.
pub(crate) fn check_dumps_fit(
    model: &dyn swirly::model::Model,
    backend: &str,
    dumps: &[String],
) -> Result<(), Failure> {
    let largest = largest_dump(model, dumps);
    let fields = if backend == "cpu" { model.resources().iter().map(|r| 4 * r.scalars()).sum() } else { 0 };
    if let (Some((field, bytes)), Some(avail)) = (largest, swirly::backend::available_memory())
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
fn largest_dump<'a>(model: &dyn swirly::model::Model, dumps: &'a [String]) -> Option<(&'a str, u64)> {
    let resources = model.resources();
    let bytes = |field: &str| resources.iter().find(|r| r.name == field).map_or(0, |r| 4 * r.scalars());
    dumps.iter().map(|f| (f.as_str(), bytes(f))).max_by_key(|(_, bytes)| *bytes)
}

/// `--plan`'s lines on what the outputs hold in host memory at most, beside the backend's plan
/// (`storage.budget` bounds the backend's memory; the outputs stream what they write).
fn print_host_outputs(model: &dyn swirly::model::Model, scene: &Scene, outputs: &Outputs) -> Result<(), Failure> {
    let size = scene.picture_size()?;
    let frame = 4 * u64::from(size.0) * u64::from(size.1);
    let bytes = swirly::storage::Bytes;
    if let Some((field, b)) = largest_dump(model, &outputs.dumps) {
        println!(
            "--dump: each field is read back to host memory in turn and written a block at a time; the largest, \
             {field}, takes {} on the host",
            bytes(b)
        );
    }
    if let Some(book) = &outputs.flipbook {
        println!(
            "--flipbook: the atlas is written a row of tiles at a time; {} on the host",
            bytes(Atlas::host_bytes(book, size))
        );
    }
    if outputs.gif {
        let batch = GifWriter::batch_frames() as u64;
        println!("--gif: frames are written in batches of {batch}; {} on the host", bytes(batch * frame));
    }
    if outputs.png || !outputs.exr.is_empty() {
        println!("--png and --exr: one frame or field at a time ({} a picture)", bytes(frame));
    }
    Ok(())
}

/// `fluid run --plan`: the memory plan of `scene` on `backend`, and what its budget makes of it.
pub(crate) fn print_plan(scene: &Scene, backend: &dyn swirly::backend::Backend) -> Result<(), Failure> {
    let budget = scene.storage.budget;
    let fitted = match swirly::storage::plan(scene, backend) {
        Ok(f) => f,
        Err(e @ Error::OverBudget { .. }) => {
            // The plan is still worth showing beside the refusal.
            let mut full = scene.clone();
            full.storage.budget = None;
            print!("{}", swirly::storage::plan(&full, backend)?.plan.table());
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
pub(crate) fn downscaled(asked: (u32, u32), factors: (u32, u32), grid: &swirly::model::Grid) -> String {
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
