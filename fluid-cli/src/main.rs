//! The `fluid` program: run scenes headless, write frames, GIFs and raw fields, and time the
//! backends (`fluid bench`, `fluid bench solvers`).

mod frames;
mod info;
mod npy;
mod run;
#[cfg(feature = "view")]
mod view;
mod whole;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use swirly::{Error, Scene, Simulation};

use frames::{Atlas, Flipbook, GifWriter, save_exr, save_png};
use info::{info, presets};
use run::{load_scene, run};

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
    /// Run a scene live in a window: drag to stir it, change its numbers in the panel, pause,
    /// step, reset, switch look, preset or backend, take screenshots.
    #[command(after_help = VIEW_KEYS)]
    View(ViewArgs),
}

/// The viewer's keys, as its panel and `fluid view --help` list them.
const VIEW_KEYS: &str = "Keys: Space pause · N one step · R reset · L next look · V next field or debug view · S screenshot · \
     G record / stop a GIF · Esc quit";

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
struct ViewArgs {
    /// A scene file (`*.toml`) or the name of a built-in preset (see `fluid presets`).
    #[arg(default_value = "smoke")]
    scene: String,
    /// Backend: cpu, wgpu or vulkan (switched live in the panel).
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// Override a scene value, as for `run` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// CPU worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// A scripted drag over the first frames, `X0,Y0:X1,Y1` in fractions of the box (0 to 1
    /// across and up), through the same path as the mouse's.
    #[arg(long, value_name = "X0,Y0:X1,Y1")]
    drag: Option<String>,
    /// Close after this many frames, with a screenshot of the window.
    #[arg(long)]
    frames: Option<u64>,
    /// Where screenshots of the window go (S, and at the end of --frames); a GIF recorded
    /// with G goes beside it (`.gif`).
    #[arg(long, default_value = "out/view.png")]
    screenshot: PathBuf,
    /// Record the picture of every frame to this GIF from the start.
    #[arg(long, value_name = "PATH")]
    gif: Option<PathBuf>,
    /// Run --frames frames (default 300) without a window, and report the time of a frame:
    /// the step and the picture read back, as the window does them, without its drawing.
    #[arg(long)]
    headless: bool,
    /// Start paused: frames draw the picture without stepping (Space runs).
    #[arg(long)]
    paused: bool,
    /// With --headless: each kernel's device time per frame (GPU timestamps; the CPU's clock).
    #[arg(long)]
    timings: bool,
}

#[derive(clap::Args, Debug)]
// A negative number is a bad value of its option (named with the reason), not another option.
#[command(allow_negative_numbers = true)]
struct BenchArgs {
    /// `solvers`: time each pressure solver to relative residuals 1e-2, 1e-4, 1e-6 instead of
    /// timing a scene (uses --sizes, --backends, --solvers, --budget-ms, --json, --threads, and
    /// --scene or --set for a box with that scene's sides and obstacles).
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
    /// Scene: a preset name or a `*.toml` file (with `solvers`: its sides and obstacles; no
    /// default there).
    #[arg(long, default_value = "smoke")]
    scene: String,
    /// Square grid sizes (particle counts for a particle scene).
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
    /// Write an animated GIF (DIR/<scene>.gif) that plays in simulated time: each frame is
    /// shown for the simulated time until the next (at least 20 ms, what browsers honour).
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
    /// density, temperature, dye, fuel, curl, and with obstacles solid (each cell's solid fraction),
    /// u_faces and v_faces (each face's open fraction and solid velocity, [rows, cols, 2]); in a
    /// particle scene density (the liquid drawn), positions and velocities ([N, 2]), or
    /// `particles` for both.
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
#[derive(Debug)]
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

fn main() -> ExitCode {
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
        Command::View(args) => view_command(args),
        Command::Bench(args) => check_bench_options(&args, |id| given("bench", id))
            .and_then(|()| bench(&args, given("bench", "scene") || given("bench", "set"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// `fluid view`, where the build has the viewer.
#[cfg(feature = "view")]
fn view_command(args: ViewArgs) -> Result<(), Failure> {
    let drag = args.drag.as_deref().map(parse_drag).transpose()?;
    if args.frames == Some(0) {
        return Err(Failure { code: 2, message: "--frames 0: a scripted run draws at least one frame".to_string() });
    }
    view::view(view::ViewConfig {
        scene: args.scene,
        overrides: args.set,
        backend: args.backend,
        threads: args.threads,
        drag,
        frames: args.frames,
        screenshot: args.screenshot,
        gif: args.gif,
        headless: args.headless,
        paused: args.paused,
        timings: args.timings,
    })
}

#[cfg(not(feature = "view"))]
fn view_command(args: ViewArgs) -> Result<(), Failure> {
    // Bad input is named first, as in a build with the viewer.
    args.drag.as_deref().map(parse_drag).transpose()?;
    Err(Failure { code: 2, message: "this build has no viewer: build swirly-cli with --features view".to_string() })
}

/// `X0,Y0:X1,Y1`, each a fraction of the box in [0, 1].
fn parse_drag(text: &str) -> Result<([f32; 2], [f32; 2]), Failure> {
    let bad = |why: &str| Failure { code: 2, message: format!("--drag {text}: {why}") };
    let point = |p: &str| -> Result<[f32; 2], Failure> {
        let xy: Vec<Option<f32>> = p.split(',').map(|x| x.trim().parse::<f32>().ok()).collect();
        match xy[..] {
            [Some(x), Some(y)] if (0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y) => Ok([x, y]),
            _ => Err(bad("each end is X,Y with both in [0, 1] (fractions of the box)")),
        }
    };
    match text.split_once(':') {
        Some((a, b)) => Ok((point(a)?, point(b)?)),
        None => Err(bad("write it X0,Y0:X1,Y1")),
    }
}

/// An error for an option given that the chosen benchmark would ignore: `--solvers`,
/// `--budget-ms` and `--precision` belong to `bench solvers`; `--scene`, `--steps`, `--jacobi`,
/// `--set` and `--parity-steps` to the scene benchmark.
fn check_bench_options(args: &BenchArgs, given: impl Fn(&str) -> bool) -> Result<(), Failure> {
    let solvers_only = ["solvers", "budget_ms", "precision"];
    let scene_only = ["steps", "jacobi", "parity_steps"];
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

/// `scene_given`: `--scene` or `--set` was on the command line (the solver benchmark's box is
/// otherwise a walled empty one).
fn bench(args: &BenchArgs, scene_given: bool) -> Result<(), Failure> {
    if args.sizes.is_empty() || args.sizes.contains(&0) {
        return Err(Error::invalid("--sizes", format!("{:?}", args.sizes), "give positive grid sizes").into());
    }
    if args.what.as_deref() == Some("solvers") {
        let scene = if scene_given { Some(load_scene(&args.scene, &args.set)?) } else { None };
        return bench_solvers(args, scene);
    }
    if args.steps == 0 {
        return Err(Error::invalid("--steps", 0, "time at least one step").into());
    }
    let backends = args.backends();
    let cfg = swirly_bench::scenes::BenchConfig {
        scene: load_scene(&args.scene, &args.set)?,
        sizes: args.sizes.clone(),
        backends,
        steps: args.steps,
        jacobi_only: args.jacobi,
        threads: args.threads,
        parity_steps: args.parity_steps,
    };
    let mut rows = Vec::new();
    let outcome = swirly_bench::scenes::run_each(&cfg, progress(args.json), |r| rows.push(r));
    // The rows measured before a failure (say, a size too large for a device) are still shown.
    if outcome.is_ok() || !rows.is_empty() {
        print_rows(&rows, args.json, swirly_bench::scenes::table)?;
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
        all.retain(|name| match swirly::backend_with_threads(name, self.threads) {
            Ok(_) => true,
            Err(e) => {
                eprintln!("bench: {name} left out, it does not open here: {e}");
                false
            }
        });
        all
    }
}

fn bench_solvers(args: &BenchArgs, scene: Option<Scene>) -> Result<(), Failure> {
    if !(args.budget_ms.is_finite() && args.budget_ms > 0.0) {
        return Err(Error::invalid("--budget-ms", args.budget_ms, "a positive number of milliseconds").into());
    }
    let list = args.solvers.iter().map(|s| swirly_bench::solvers::parse_solver(s)).collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = &args.precision
        && !list.contains(&swirly::PressureSolver::Multigrid)
    {
        let why = "it sets multigrid's precision, and --solvers names no multigrid; this run would ignore it";
        return Err(Error::invalid("--precision", p, why).into());
    }
    let cfg = swirly_bench::solvers::SolverBenchConfig {
        sizes: args.sizes.clone(),
        backends: args.backends(),
        solvers: list,
        budget_ms: args.budget_ms,
        threads: args.threads,
        precision: args.precision.as_deref().map(|p| match p {
            "single" => swirly::Precision::Single,
            _ => swirly::Precision::DoubleFloat,
        }),
        scene,
        ..Default::default()
    };
    let rows = swirly_bench::solvers::run(&cfg, progress(args.json))?;
    print_rows(&rows, args.json, swirly_bench::solvers::table)
}
