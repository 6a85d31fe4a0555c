//! The `fluid` program: run scenes headless, write frames, GIFs and raw fields, and time the
//! backends (`fluid bench`, `fluid bench solvers`).

mod bench;
mod npy;
mod solvers;
mod whole;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use fluid::{Error, FieldId, Scene, Simulation};

#[derive(Parser, Debug)]
#[command(
    name = "fluid",
    version,
    about = "Real-time 2D fluids: run scenes headless on the CPU or GPU",
    after_help = "Exit codes: 0 done; 1 the run failed (it blew up or outran the grid, the device failed, \
                  an output could not be written); 2 bad input (a scene, an option or a value), named in \
                  the message."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scene for a number of steps and write what was asked for.
    Run(RunArgs),
    /// List the built-in scenes.
    Presets,
    /// List the backends of this build and the GPU adapters they see.
    Info,
    /// Time one scene at several grid sizes on several backends, one table; `fluid bench
    /// solvers` times the pressure solvers to a residual instead.
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
// A negative number is a bad value of its option (named with the reason), not another option.
#[command(allow_negative_numbers = true)]
struct BenchArgs {
    /// `solvers`: time each pressure solver to relative residuals 1e-2, 1e-4, 1e-6 instead of
    /// timing a scene (uses --sizes, --backends, --solvers, --budget-ms, --json, --threads).
    #[arg(value_parser = ["solvers"])]
    what: Option<String>,
    /// With `solvers`: the solvers to compare.
    #[arg(long, value_delimiter = ',', default_value = "jacobi,sor,multigrid")]
    solvers: Vec<String>,
    /// With `solvers`: the fixed time budget per solve, milliseconds (a row marks "(cap)" where
    /// it holds more iterations than the most tried: 16384, or 64 V-cycles).
    #[arg(long, default_value_t = 2.0)]
    budget_ms: f64,
    /// With `solvers`: multigrid's precision, `double-float` (its default) or `single`.
    #[arg(long, value_parser = ["double-float", "single"])]
    precision: Option<String>,
    /// Scene: a preset name or a `*.toml` file.
    #[arg(long, default_value = "smoke")]
    scene: String,
    /// Square grid sizes.
    #[arg(long, value_delimiter = ',', default_value = "256,512,1024")]
    sizes: Vec<u32>,
    /// Backends (default: every backend of this build that opens on this machine).
    #[arg(long, value_delimiter = ',')]
    backends: Vec<String>,
    /// Timed steps per row.
    #[arg(long, default_value_t = 50)]
    steps: u32,
    /// Time the Jacobi pressure sweep alone (per sweep) instead of the whole step: plain
    /// `jacobi`, or `jacobi-multisweep` when the scene's solver is set to it.
    #[arg(long)]
    jacobi: bool,
    /// Override a scene value, as for `run` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print the rows as one JSON array instead of a table.
    #[arg(long)]
    json: bool,
    /// CPU worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Steps (sweeps with --jacobi) of the parity check against the CPU backend; 0 skips it.
    #[arg(long, default_value_t = 10)]
    parity_steps: u32,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
struct RunArgs {
    /// A scene file (`*.toml`), the name of a built-in preset (see `fluid presets`), or a
    /// checkpoint (`*.fluid`, written by --save-every) to continue from: --steps more steps,
    /// its scene changed by --set (except its grid).
    scene: String,
    /// Backend: cpu, wgpu or vulkan.
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// Steps to run (default: the scene's `steps`, else 300).
    #[arg(long)]
    steps: Option<u32>,
    /// Output folder (default: out/<scene name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write frames as a PNG sequence (DIR/frame_00000.png, ...).
    #[arg(long)]
    png: bool,
    /// Write an animated GIF (DIR/<scene>.gif).
    #[arg(long)]
    gif: bool,
    /// Capture a frame every K steps for --png and --gif (default: steps/100, at least 1).
    #[arg(long, value_name = "K")]
    frame_every: Option<u32>,
    /// At every frame (as for --png) write DIR/<field>_<frame>.exr for each field: 32-bit
    /// float OpenEXR, channel Y (dye: R, G, B, A), top row first, for VFX tools.
    #[arg(long, value_delimiter = ',', value_name = "FIELD,...")]
    exr: Vec<String>,
    /// Draw over a transparent background (the scene's background colour with alpha 0): PNG
    /// frames and flipbooks keep the alpha, zero where nothing is drawn.
    #[arg(long)]
    transparent: bool,
    /// Write a flipbook: COLSxROWS frames spread evenly over the run (the last at the last
    /// step) in one PNG atlas, DIR/<scene>_flipbook.png, row by row from the top left, and
    /// its layout and frame rate in DIR/<scene>_flipbook.json.
    #[arg(long, value_name = "COLSxROWS")]
    flipbook: Option<String>,
    /// After the last step write DIR/<field>.npy for each field: u, v, pressure, divergence,
    /// density, temperature, dye, curl, and with obstacles solid (each cell's solid fraction),
    /// u_faces and v_faces (each face's open fraction and solid velocity, [rows, cols, 2]).
    #[arg(long, value_delimiter = ',', value_name = "FIELD,...")]
    dump: Vec<String>,
    /// Override a scene value by its TOML path, e.g. --set params.viscosity=0.01 or --set
    /// emitters.0.radius=0.05 (a number indexes an array; an inline table such as
    /// 'params={dt=0.01}' sets only the keys it names; repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print what the scene needs on the backend (every resource, the backend's working
    /// memory, the total against `storage.budget`) and the grid that would run, then stop.
    #[arg(long)]
    plan: bool,
    /// Save a checkpoint every K steps and after the last: DIR/checkpoint_<step>.fluid (the
    /// step counted from the scene's start), which `fluid run` continues from on any backend.
    #[arg(long, value_name = "K")]
    save_every: Option<u32>,
    /// Print one JSON object with the summary instead of text.
    #[arg(long)]
    json: bool,
    /// CPU worker threads (0: one per core); with another backend, an error.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Print per-kernel timings.
    #[arg(long)]
    timings: bool,
    /// Record the velocity at a point every step into DIR/probes.csv (step, time, then u and v
    /// of each probe); X,Y are fractions of the box (0 to 1 across it); repeatable.
    #[arg(long = "probe", value_name = "X,Y")]
    probes: Vec<String>,
}

/// A failure with the exit code it deserves: 2 for bad input, 1 for everything else.
struct Failure {
    code: u8,
    message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let code = match e {
            Error::Backend { .. } | Error::NotAllocated(_) | Error::NonFinite { .. } | Error::RanAway { .. } => 1,
            _ => 2,
        };
        Failure { code, message: e.to_string() }
    }
}

/// A progress bar that is cleared when dropped (indicatif leaves an abandoned bar drawn).
struct ClearOnDrop(indicatif::ProgressBar);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

fn io_failure(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure { code: 1, message: format!("cannot write {}: {e}", path.display()) }
}

/// Where the session has no runtime directory (a container, a server, CI), Mesa's Vulkan
/// device-select layer prints `XDG_RUNTIME_DIR is invalid or not set` whenever a GPU backend
/// lists devices. The program then runs itself again with a private one (0700, under the
/// temporary folder), the child's exit code its own; setting the variable in this process
/// would take `unsafe` (`std::env::set_var`).
#[cfg(unix)]
fn with_runtime_dir() -> Option<ExitCode> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    const VAR: &str = "XDG_RUNTIME_DIR";
    if std::env::var_os(VAR).is_some_and(|d| Path::new(&d).is_dir())
        || std::env::var_os("FLUID_RUNTIME_DIR_SET").is_some()
    {
        return None;
    }
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("fluid-xdg-{uid}"));
    let made = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir);
    let private =
        std::fs::metadata(&dir).is_ok_and(|m| m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0);
    let exe = std::env::current_exe().ok()?;
    if made.is_err() || !private {
        return None;
    }
    let status = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(VAR, &dir)
        .env("FLUID_RUNTIME_DIR_SET", "1")
        .status()
        .ok()?;
    Some(ExitCode::from(status.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1)))
}

#[cfg(not(unix))]
fn with_runtime_dir() -> Option<ExitCode> {
    None
}

fn main() -> ExitCode {
    if let Some(code) = with_runtime_dir() {
        return code;
    }
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let given = |name: &str, id: &str| {
        matches.subcommand_matches(name).is_some_and(|m| {
            m.ids().any(|i| i.as_str() == id) && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        })
    };
    let result = match cli.command {
        Command::Presets => {
            presets();
            Ok(())
        }
        Command::Run(args) => run(&args),
        Command::Info => {
            info();
            Ok(())
        }
        Command::Bench(args) => check_bench_options(&args, |id| given("bench", id)).and_then(|()| bench(&args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn presets() {
    for (name, _) in fluid::PRESETS {
        let desc = Scene::preset(name).map(|s| s.description).unwrap_or_else(|e| format!("(broken: {e})"));
        println!("{name:<14} {desc}");
    }
}

fn info() {
    println!("backends in this build:");
    cpu_line();
    println!("  wgpu    {}", if cfg!(feature = "wgpu") { "yes" } else { "no (build with --features wgpu)" });
    println!("  vulkan  {}", if cfg!(feature = "vulkan") { "yes (ash)" } else { "no (build with --features vulkan)" });
    wgpu_adapters();
    vulkan_devices();
    if cfg!(any(feature = "wgpu", feature = "vulkan")) {
        println!("GPU waits: {}", gpu_waits());
    }
}

/// How the GPU backends wait for the device ([`fluid_core::wait`]), as `fluid info` says it.
fn gpu_waits() -> String {
    use fluid_core::wait;
    match wait::spin_from_env() {
        Err(e) => e.to_string(),
        Ok(Some(spin)) if spin.is_zero() => format!("block at once ({}=0)", wait::SPIN_ENV),
        Ok(Some(spin)) => format!("poll for up to {} us, then block ({})", spin.as_micros(), wait::SPIN_ENV),
        Ok(None) => format!(
            "poll for up to {} us, then block; on a CPU device block at once ({} sets it)",
            wait::DEFAULT_SPIN.as_micros(),
            wait::SPIN_ENV
        ),
    }
}

#[cfg(feature = "cpu")]
fn cpu_line() {
    println!("  cpu     yes (rayon; kernels run as {})", fluid_cpu::simd::instruction_set());
}

#[cfg(not(feature = "cpu"))]
fn cpu_line() {
    println!("  cpu     no (build with --features cpu)");
}

#[cfg(feature = "vulkan")]
fn vulkan_devices() {
    match fluid_vulkan::physical_devices() {
        Err(e) => println!("Vulkan physical devices: none ({e})"),
        Ok(devices) if devices.is_empty() => println!("Vulkan physical devices: none"),
        Ok(devices) => {
            println!("Vulkan physical devices:");
            println!(
                "  {:<40} {:<14} {:<9} {:<10} {:<18} queue family used",
                "name", "type", "API", "timestamps", "timestamp period"
            );
            for d in devices {
                let queue = match d.queue_family {
                    None => "none with compute".to_string(),
                    Some(f) if d.dedicated_compute => format!("{f} (compute only)"),
                    Some(f) => format!("{f} (graphics, compute)"),
                };
                println!(
                    "  {:<40} {:<14} {:<9} {:<10} {:<18} {queue}",
                    d.name,
                    d.device_type,
                    d.api_version,
                    if d.timestamps { "yes" } else { "no" },
                    format!("{} ns", d.timestamp_period_ns),
                );
            }
        }
    }
}

#[cfg(not(feature = "vulkan"))]
fn vulkan_devices() {}

#[cfg(feature = "wgpu")]
fn wgpu_adapters() {
    let adapters = fluid_wgpu::adapters();
    if adapters.is_empty() {
        println!("wgpu adapters: none (install a Vulkan driver, e.g. apt-get install mesa-vulkan-drivers libvulkan1)");
        return;
    }
    println!("wgpu adapters:");
    println!("  {:<40} {:<8} {:<14} {:<10} driver", "name", "backend", "type", "timestamps");
    for a in adapters {
        println!(
            "  {:<40} {:<8} {:<14} {:<10} {}",
            a.name,
            a.backend,
            a.device_type,
            if a.timestamps { "yes" } else { "no" },
            a.driver
        );
    }
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_adapters() {}

/// An error for an option given that the chosen benchmark would ignore: `--solvers`,
/// `--budget-ms` and `--precision` belong to `bench solvers`; `--scene`, `--steps`, `--jacobi`,
/// `--set` and `--parity-steps` to the scene benchmark.
fn check_bench_options(args: &BenchArgs, given: impl Fn(&str) -> bool) -> Result<(), Failure> {
    let solvers_only = ["solvers", "budget_ms", "precision"];
    let scene_only = ["scene", "steps", "jacobi", "set", "parity_steps"];
    let (ignored, used_by) = match args.what.as_deref() {
        Some("solvers") => (&scene_only[..], "the scene benchmark (`fluid bench`)"),
        _ => (&solvers_only[..], "`fluid bench solvers`"),
    };
    match ignored.iter().find(|id| given(id)) {
        Some(id) => Err(Failure {
            code: 2,
            message: format!("--{} applies only to {used_by}; this run would ignore it", id.replace('_', "-")),
        }),
        None => Ok(()),
    }
}

fn bench(args: &BenchArgs) -> Result<(), Failure> {
    if args.sizes.is_empty() || args.sizes.contains(&0) {
        return Err(Error::invalid("--sizes", format!("{:?}", args.sizes), "give positive grid sizes").into());
    }
    if args.what.as_deref() == Some("solvers") {
        return bench_solvers(args);
    }
    if args.steps == 0 {
        return Err(Error::invalid("--steps", 0, "time at least one step").into());
    }
    let backends = args.backends();
    let cfg = bench::BenchConfig {
        scene: load_scene(&args.scene, &args.set)?,
        sizes: args.sizes.clone(),
        backends,
        steps: args.steps,
        jacobi_only: args.jacobi,
        threads: args.threads,
        parity_steps: args.parity_steps,
    };
    let mut rows = Vec::new();
    let outcome = bench::run_each(&cfg, progress(args.json), |r| rows.push(r));
    // The rows measured before a failure (say, a size too large for a device) are still shown.
    if outcome.is_ok() || !rows.is_empty() {
        print_rows(&rows, args.json, bench::table)?;
    }
    Ok(outcome?)
}

/// Progress lines on stderr, silent when the output is JSON.
fn progress(quiet: bool) -> impl FnMut(&str) {
    move |msg| {
        if !quiet {
            eprintln!("bench: {msg}");
        }
    }
}

/// Benchmark rows as one JSON array or as the text table.
fn print_rows<R: serde::Serialize>(rows: &[R], json: bool, table: impl FnOnce(&[R]) -> String) -> Result<(), Failure> {
    if json {
        println!("{}", serde_json::to_string(rows).map_err(|e| Failure { code: 1, message: e.to_string() })?);
    } else {
        print!("{}", table(rows));
    }
    Ok(())
}

impl BenchArgs {
    /// `--backends`, or every backend of this build that opens on this machine: one that does
    /// not (no GPU, no Vulkan driver) is left out with a line on stderr saying why, so that
    /// `fluid bench` on a machine without a GPU times the CPU. A backend named in `--backends`
    /// that does not open is an error.
    fn backends(&self) -> Vec<String> {
        if !self.backends.is_empty() {
            return self.backends.clone();
        }
        let mut all = vec!["cpu".to_string()];
        if cfg!(feature = "wgpu") {
            all.push("wgpu".to_string());
        }
        if cfg!(feature = "vulkan") {
            all.push("vulkan".to_string());
        }
        all.retain(|name| match fluid::backend_with_threads(name, self.threads) {
            Ok(_) => true,
            Err(e) => {
                eprintln!("bench: {name} left out, it does not open here: {e}");
                false
            }
        });
        all
    }
}

fn bench_solvers(args: &BenchArgs) -> Result<(), Failure> {
    if !(args.budget_ms.is_finite() && args.budget_ms > 0.0) {
        return Err(Error::invalid("--budget-ms", args.budget_ms, "a positive number of milliseconds").into());
    }
    let cfg = solvers::SolverBenchConfig {
        sizes: args.sizes.clone(),
        backends: args.backends(),
        solvers: args.solvers.iter().map(|s| solvers::parse_solver(s)).collect::<Result<Vec<_>, _>>()?,
        budget_ms: args.budget_ms,
        threads: args.threads,
        precision: args.precision.as_deref().map(|p| match p {
            "single" => fluid_core::params::Precision::Single,
            _ => fluid_core::params::Precision::DoubleFloat,
        }),
        ..Default::default()
    };
    let rows = solvers::run(&cfg, progress(args.json))?;
    print_rows(&rows, args.json, solvers::table)
}

/// Whether `arg` names a checkpoint rather than a scene.
fn is_checkpoint(arg: &str) -> bool {
    Path::new(arg).extension().is_some_and(|e| e == "fluid")
}

/// The checkpoint at `path`, opened for reading.
fn open_checkpoint(path: &Path) -> Result<std::io::BufReader<std::fs::File>, Failure> {
    let file = std::fs::File::open(path)
        .map_err(|e| Failure { code: 2, message: format!("cannot read checkpoint {}: {e}", path.display()) })?;
    Ok(std::io::BufReader::new(file))
}

/// The scene of the checkpoint at `path`, with `overrides` applied.
fn checkpoint_scene(path: &Path, overrides: &[String]) -> Result<Scene, Failure> {
    let overrides = overrides.iter().map(|s| fluid::parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let (header, _) = fluid::checkpoint::read_header(open_checkpoint(path)?)?;
    Ok(header.scene.with_overrides(&format!("checkpoint {}", path.display()), &overrides)?)
}

fn load_scene(arg: &str, overrides: &[String]) -> Result<Scene, Failure> {
    if is_checkpoint(arg) {
        return checkpoint_scene(Path::new(arg), overrides);
    }
    let overrides = overrides.iter().map(|s| fluid::parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let path = Path::new(arg);
    let is_file = arg.ends_with(".toml") || path.is_file();
    if is_file {
        if !path.is_file() {
            return Err(Failure { code: 2, message: format!("cannot read scene {}: no such file", path.display()) });
        }
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
fn parse_probes(texts: &[String]) -> Result<Vec<[f32; 2]>, Failure> {
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

fn field_list(names: &[String]) -> Result<Vec<FieldId>, Failure> {
    let mut fields = Vec::new();
    for name in names {
        let field = FieldId::parse(name.trim())?;
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    Ok(fields)
}

fn run(args: &RunArgs) -> Result<(), Failure> {
    // Check everything the user typed before any work starts.
    let (dumps, exr) = (field_list(&args.dump)?, field_list(&args.exr)?);
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
        book.check_size(&scene.grid()?)?;
    }
    for (option, fields) in [("--dump", &dumps), ("--exr", &exr)] {
        for field in fields {
            if let Some(why) = scene.params.fields.not_carried(*field) {
                return Err(Error::invalid(option, field.name(), format!("{why}: it would be all zeros")).into());
            }
        }
    }
    let backend = fluid::backend_with_threads(&args.backend, args.threads)?;
    if args.plan {
        return print_plan(&scene, backend.as_ref());
    }
    check_dumps_fit(&scene, &args.backend, &dumps)?;
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
    let grid = *sim.grid();
    if sim.downscaled_from().is_some() {
        let budget = sim.scene().storage.budget.map(|b| b.to_string()).unwrap_or_default();
        eprintln!(
            "storage.budget {budget}: the {}x{} grid does not fit; running {}x{}, the largest of its box that does",
            asked.0, asked.1, grid.nx, grid.ny
        );
    }
    let every = args.frame_every.unwrap_or((steps / 100).max(1));
    let probe_points: Vec<[f32; 2]> = probes.iter().map(|p| [p[0] * grid.width(), p[1] * grid.height()]).collect();
    let mut probe_rows: Vec<String> = Vec::new();
    let mut frames = 0usize;
    let mut written: Vec<PathBuf> = Vec::new();
    let gif_path = out_dir.join(format!("{name}.gif"));
    let mut gif = if args.gif { Some(GifWriter::create(&gif_path, grid.nx, grid.ny)?) } else { None };
    let mut atlas = flipbook.map(|book| Atlas::new(book, grid.nx, grid.ny));

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
            let (u, v) = (sim.sample(FieldId::U, &probe_points)?, sim.sample(FieldId::V, &probe_points)?);
            let values: Vec<String> = u.iter().zip(&v).map(|(u, v)| format!("{u},{v}")).collect();
            probe_rows.push(format!("{k},{},{}", sim.time(), values.join(",")));
        }
        if frames_wanted && (k % every == 0 || k == steps) {
            if args.png || args.gif {
                let rgba = sim.render()?;
                if args.png {
                    let path = out_dir.join(format!("frame_{frames:05}.png"));
                    save_png(&path, grid.nx, grid.ny, &rgba)?;
                    written.push(path);
                }
                if let Some(gif) = gif.as_mut() {
                    gif.push(rgba)?;
                }
            }
            for field in &exr {
                let path = out_dir.join(format!("{}_{frames:05}.exr", field.name()));
                save_exr(&path, &grid, *field, &sim.field(*field)?)?;
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
        Some(d) => *d,
        None => sim.checked_diagnostics()?,
    };
    let ms_per_step = stepping.as_secs_f64() * 1e3 / f64::from(steps);
    let device = sim.backend_mut().device();
    let backend_name = sim.backend_mut().name();
    // What the backend holds for this scene, from its own accounting (every backend of the
    // workspace keeps one; a backend without it reports none).
    let memory = sim.backend().memory().ok();

    if args.json {
        let json = serde_json::json!({
            "scene": name,
            "backend": backend_name,
            "device": device,
            "grid": [grid.nx, grid.ny],
            "downscaled_from": sim.downscaled_from(),
            "steps": steps,
            "ms_per_step": ms_per_step,
            "max_divergence": diag.max_divergence,
            "residual": diag.residual,
            "max_velocity": diag.max_velocity,
            "cfl": diag.cfl,
            "memory": memory.as_ref().map(|m| serde_json::json!({
                "total": m.total, "reserved": m.reserved,
                "resources": m.resources.iter().map(|(n, b)| serde_json::json!({"name": n, "bytes": b}))
                    .collect::<Vec<_>>(),
            })),
            "timings_note": timing_note,
            "residual_per_step": per_step.iter().map(|d| d.residual).collect::<Vec<_>>(),
            "max_divergence_per_step": per_step.iter().map(|d| d.max_divergence).collect::<Vec<_>>(),
            "iterations_per_step": iterations_per_step,
            "substeps_per_step": substeps_per_step,
            "timings": timings.iter().map(|t| serde_json::json!({
                "label": t.label, "invocations": t.invocations, "ms": t.ms,
            })).collect::<Vec<_>>(),
            "outputs": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        });
        println!("{json}");
    } else {
        println!(
            "{name}: {}x{} on {backend_name} ({device}): {} steps, {ms_per_step:.3} ms/step, \
             max |div u| {:.3e} /s, relative residual {:.3e}, CFL {:.2}",
            grid.nx, grid.ny, steps, diag.max_divergence, diag.residual, diag.cfl
        );
        if let Some(m) = &memory {
            let mib = |bytes: u64| bytes as f64 / 1048576.0;
            println!(
                "memory: {:.1} MiB allocated, {:.1} MiB of it the scene's resources; {:.1} MiB reserved",
                mib(m.total),
                mib(m.resources.iter().map(|r| r.1).sum::<u64>()),
                mib(m.reserved)
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
fn check_dumps_fit(scene: &Scene, backend: &str, dumps: &[FieldId]) -> Result<(), Failure> {
    let grid = scene.grid()?;
    let largest = dumps.iter().map(|f| (*f, 4 * grid.len(*f) as u64)).max_by_key(|(_, bytes)| *bytes);
    let fields = if backend == "cpu" { fluid::GridFields::declare(&grid, &scene.params).bytes() } else { 0 };
    if let (Some((field, bytes)), Some(avail)) = (largest, fluid_core::backend::available_memory())
        && bytes + fields > avail
    {
        let why = format!(
            "writing it reads back {bytes} bytes, beside the {fields} bytes of the scene's fields in host memory, \
             and only {avail} bytes of memory are available"
        );
        return Err(Error::invalid("--dump", field.name(), why).into());
    }
    Ok(())
}

/// `DIR/<field>.npy` of each field in `dumps`; the paths written.
fn write_dumps(sim: &mut Simulation, dumps: &[FieldId], out_dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let grid = *sim.grid();
    let mut written = Vec::new();
    for field in dumps {
        let data = sim.field(*field)?;
        let path = out_dir.join(format!("{}.npy", field.name()));
        npy::write_f32(&path, &grid.shape(*field), &data).map_err(|e| io_failure(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// `fluid run --plan`: the memory plan of `scene` on `backend`, and what its budget makes of it.
fn print_plan(scene: &Scene, backend: &dyn fluid::Backend) -> Result<(), Failure> {
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
        (Some(b), Some([nx, ny])) => println!(
            "storage.budget {b}: {nx}x{ny} does not fit; runs {}x{} (storage.policy = \"downscale\")",
            grid.nx, grid.ny
        ),
    }
    Ok(())
}

/// Write DIR/checkpoint_<step>.fluid, whole or not at all.
fn save_checkpoint(sim: &mut Simulation, out_dir: &Path) -> Result<PathBuf, Failure> {
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

/// `data` (a field of `grid`, laid out as `Grid::shape` says) as a 32-bit float OpenEXR image,
/// top row first: channel `Y`, or `R`, `G`, `B`, `A` for the dye. Written to `<path>.part` and
/// renamed once whole.
fn save_exr(path: &Path, grid: &fluid::Grid, field: FieldId, data: &[f32]) -> Result<(), Failure> {
    use exr::prelude::{Image, SpecificChannels, Vec2, WritableImage};
    let shape = grid.shape(field);
    let (h, w) = (shape[0], shape[1]);
    let written = whole::write_whole(path, |part| {
        let written = if shape.len() == 3 {
            let px = |p: Vec2<usize>| {
                let c = 4 * ((h - 1 - p.1) * w + p.0);
                (data[c], data[c + 1], data[c + 2], data[c + 3])
            };
            Image::from_channels((w, h), SpecificChannels::rgba(px)).write().to_file(part)
        } else {
            let px = |p: Vec2<usize>| (data[(h - 1 - p.1) * w + p.0],);
            let channels = SpecificChannels::build().with_channel("Y").with_pixel_fn(px);
            Image::from_channels((w, h), channels).write().to_file(part)
        };
        written.map_err(std::io::Error::other)
    });
    written.map_err(|e| io_failure(path, e))
}

fn save_png(path: &Path, w: u32, h: u32, rgba: &[u8]) -> Result<(), Failure> {
    image::save_buffer(path, rgba, w, h, image::ExtendedColorType::Rgba8).map_err(|e| io_failure(path, e))
}

/// Most pixels along either side of a flipbook atlas (what game engines take as one texture).
const MAX_ATLAS_SIDE: u32 = 16384;

/// A flipbook's layout: `columns × rows` frames over a run of `steps` steps.
#[derive(Clone, Copy, Debug)]
struct Flipbook {
    columns: u32,
    rows: u32,
    steps: u32,
}

impl Flipbook {
    /// `COLSxROWS`, e.g. `8x8`: at least one of each, no more frames than steps.
    fn parse(text: &str, steps: u32) -> Result<Flipbook, Failure> {
        let bad = |why: String| Failure::from(Error::invalid("--flipbook", text, why));
        let (c, r) = text.split_once(['x', 'X']).ok_or_else(|| bad("expected COLSxROWS, e.g. 8x8".into()))?;
        let parse = |s: &str| s.trim().parse::<u32>().ok().filter(|n| (1..=1024).contains(n));
        let (Some(columns), Some(rows)) = (parse(c), parse(r)) else {
            return Err(bad("columns and rows are whole numbers from 1 to 1024, e.g. 8x8".into()));
        };
        let frames = u64::from(columns) * u64::from(rows);
        if frames > u64::from(steps) {
            return Err(bad(format!("{frames} frames need at least as many steps, and the run has {steps}")));
        }
        Ok(Flipbook { columns, rows, steps })
    }

    fn frames(&self) -> u32 {
        self.columns * self.rows
    }

    /// An error unless the atlas of `grid`'s frames fits [`MAX_ATLAS_SIDE`] both ways.
    fn check_size(&self, grid: &fluid::Grid) -> Result<(), Failure> {
        let (w, h) = (u64::from(self.columns) * u64::from(grid.nx), u64::from(self.rows) * u64::from(grid.ny));
        if w > u64::from(MAX_ATLAS_SIDE) || h > u64::from(MAX_ATLAS_SIDE) {
            let why = format!(
                "the atlas would be {w} x {h} pixels, more than {MAX_ATLAS_SIDE} along a side: fewer frames or a smaller grid"
            );
            return Err(Error::invalid("--flipbook", format!("{}x{}", self.columns, self.rows), why).into());
        }
        Ok(())
    }
}

/// The frames of a flipbook as they come, in one RGBA8 atlas.
struct Atlas {
    book: Flipbook,
    frame: (usize, usize),
    pixels: Vec<u8>,
    taken: u32,
}

impl Atlas {
    fn new(book: Flipbook, nx: u32, ny: u32) -> Atlas {
        let (w, h) = (nx as usize, ny as usize);
        let pixels = vec![0; 4 * w * h * book.frames() as usize];
        Atlas { book, frame: (w, h), pixels, taken: 0 }
    }

    /// Whether step `k` (1-based) is the next frame's: frame `f` is at step
    /// ⌊(f + 1) · steps / frames⌋, so they are evenly spread and the last is the last step.
    fn wants(&self, k: u32) -> bool {
        let f = u64::from(self.taken);
        f < u64::from(self.book.frames())
            && u64::from(k) == (f + 1) * u64::from(self.book.steps) / u64::from(self.book.frames())
    }

    /// Place the next frame (`nx × ny` RGBA8, top row first) in its tile.
    fn push(&mut self, rgba: &[u8]) {
        let (w, h) = self.frame;
        let (col, row) = ((self.taken % self.book.columns) as usize, (self.taken / self.book.columns) as usize);
        let stride = 4 * w * self.book.columns as usize;
        for y in 0..h {
            let dst = (row * h + y) * stride + 4 * col * w;
            self.pixels[dst..dst + 4 * w].copy_from_slice(&rgba[4 * w * y..4 * w * (y + 1)]);
        }
        self.taken += 1;
    }

    /// Write `DIR/<name>_flipbook.png` and its `.json`; the paths.
    fn write(self, dir: &Path, name: &str, dt: f32) -> Result<Vec<PathBuf>, Failure> {
        let (w, h) = self.frame;
        let (cols, rows) = (self.book.columns, self.book.rows);
        let png = dir.join(format!("{name}_flipbook.png"));
        save_png(&png, w as u32 * cols, h as u32 * rows, &self.pixels)?;
        let seconds_per_frame = f64::from(dt) * f64::from(self.book.steps) / f64::from(self.book.frames());
        let layout = serde_json::json!({
            "image": png.file_name().map(|n| n.to_string_lossy().into_owned()),
            "columns": cols,
            "rows": rows,
            "frames": self.book.frames(),
            "frame_width": w,
            "frame_height": h,
            "order": "row by row from the top left",
            "fps": 1.0 / seconds_per_frame,
            "seconds_per_frame": seconds_per_frame,
        });
        let json = dir.join(format!("{name}_flipbook.json"));
        let text = serde_json::to_string_pretty(&layout).map_err(|e| io_failure(&json, e))?;
        std::fs::write(&json, text + "\n").map_err(|e| io_failure(&json, e))?;
        Ok(vec![png, json])
    }
}

/// An animated GIF written as the frames come: frames of 40 ms, looping, each with its own
/// palette (what `image`'s GIF encoder wrote at speed 10, byte for byte). The quantisation is
/// most of a GIF's time, so frames wait in a batch of a few per core and each batch's palettes
/// are computed on every core, then compressed and written in order: memory holds one batch,
/// not the whole run. The file is `<path>.part` until [`GifWriter::finish`] renames it; a run
/// that fails before then removes it.
struct GifWriter {
    path: PathBuf,
    part: PathBuf,
    size: (u16, u16),
    /// `None` once finished.
    enc: Option<gif::Encoder<std::io::BufWriter<std::fs::File>>>,
    batch: Vec<Vec<u8>>,
    workers: usize,
}

impl GifWriter {
    fn create(path: &Path, w: u32, h: u32) -> Result<GifWriter, Failure> {
        let (Ok(gw), Ok(gh)) = (u16::try_from(w), u16::try_from(h)) else {
            return Err(io_failure(path, format!("a GIF is at most 65535 pixels wide and high, not {w} x {h}")));
        };
        let part = whole::part_path(path);
        let file = std::fs::File::create(&part).map_err(|e| io_failure(&part, e))?;
        let mut enc =
            gif::Encoder::new(std::io::BufWriter::new(file), gw, gh, &[]).map_err(|e| io_failure(&part, e))?;
        enc.set_repeat(gif::Repeat::Infinite).map_err(|e| io_failure(&part, e))?;
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(GifWriter { path: path.to_path_buf(), part, size: (gw, gh), enc: Some(enc), batch: Vec::new(), workers })
    }

    /// Add a frame (`w × h` RGBA8, top row first).
    fn push(&mut self, rgba: Vec<u8>) -> Result<(), Failure> {
        let (w, h) = (usize::from(self.size.0), usize::from(self.size.1));
        if rgba.len() != 4 * w * h {
            return Err(io_failure(&self.path, format!("a frame of {} bytes is not {w} x {h} RGBA", rgba.len())));
        }
        self.batch.push(rgba);
        if self.batch.len() >= 4 * self.workers { self.write_batch() } else { Ok(()) }
    }

    fn write_batch(&mut self) -> Result<(), Failure> {
        let (gw, gh) = self.size;
        let quantise = |rgba: &Vec<u8>| {
            let mut frame = gif::Frame::from_rgba_speed(gw, gh, &mut rgba.clone(), 10);
            frame.delay = 4;
            frame.dispose = gif::DisposalMethod::Background;
            frame
        };
        let per = self.batch.len().div_ceil(self.workers).max(1);
        let batch = &self.batch;
        let quantised: Vec<gif::Frame<'static>> = std::thread::scope(|s| {
            let jobs: Vec<_> = batch
                .chunks(per)
                .map(|chunk| s.spawn(move || chunk.iter().map(quantise).collect::<Vec<_>>()))
                .collect();
            jobs.into_iter().flat_map(|j| j.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        let Some(enc) = self.enc.as_mut() else {
            return Err(io_failure(&self.part, "the GIF is already finished"));
        };
        for frame in &quantised {
            enc.write_frame(frame).map_err(|e| io_failure(&self.part, e))?;
        }
        self.batch.clear();
        Ok(())
    }

    /// Write what is left and the trailer, flush, and give the file its name.
    fn finish(mut self) -> Result<(), Failure> {
        self.write_batch()?;
        let Some(enc) = self.enc.take() else {
            return Err(io_failure(&self.part, "the GIF is already finished"));
        };
        // Write the trailer and flush here, so that a failure is reported rather than dropped
        // (a full disk shows here, when the buffer is written); a failure removes the file.
        let done = enc.into_inner().map_err(|e| io_failure(&self.part, e)).and_then(|mut out| {
            std::io::Write::flush(&mut out).map_err(|e| io_failure(&self.part, e))?;
            drop(out);
            std::fs::rename(&self.part, &self.path).map_err(|e| io_failure(&self.path, e))
        });
        if done.is_err() {
            let _ = std::fs::remove_file(&self.part);
        }
        done
    }
}

impl Drop for GifWriter {
    fn drop(&mut self) {
        if self.enc.take().is_some() {
            // Not finished: the run failed. The half-written file is of no use.
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GIF that cannot be finished leaves no `.part` file: here its name is taken by a
    /// folder, so the last step, the rename, fails.
    #[test]
    fn a_gif_that_fails_to_finish_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("fluid-gif-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("taken.gif");
        std::fs::create_dir_all(path.join("inside")).expect("a folder where the GIF goes");
        let mut gif = GifWriter::create(&path, 4, 2).map_err(|e| e.message).expect("create");
        gif.push(vec![128; 4 * 4 * 2]).map_err(|e| e.message).expect("frame");
        let part = gif.part.clone();
        assert!(part.exists());
        let Err(e) = gif.finish() else { panic!("finished a GIF whose name is a folder") };
        assert!(e.message.contains("taken.gif"), "{}", e.message);
        assert!(!part.exists(), "{} left behind", part.display());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
