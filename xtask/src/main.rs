//! Project tasks, run as `cargo xtask <task>`:
//!
//! - `ci`: everything CI checks — formatting, the generated SPIR-V fresh and valid, clippy with
//!   warnings as errors, the docs, the public API as listed, every test, the CLI reference
//!   fresh, the `.npy` dumps read back by NumPy, and the `swirly` crate's examples run on
//!   every backend.
//! - `test`: the test suite only.
//! - `npy`, `examples`: those two parts of `ci` alone.
//! - `bench`: the criterion benchmarks of `swirly-bench`.
//! - `shaders [--check]`: WGSL → SPIR-V for the Vulkan backend (see [`shaders`]).
//! - `api [--check]`: the public API listings of the published libraries (see [`api`]).
//! - `cli-reference [--check]`: the guide's CLI reference from the program's `--help` (see
//!   [`cli_reference`]).

mod api;
mod cli_reference;
mod lanes;
mod shaders;

use std::process::{Command, ExitCode};

/// The `fluid` program and library with every backend: the tests of both cover each.
const EVERY_BACKEND: &str = "swirly-cli/wgpu,swirly-cli/vulkan,swirly-cli/view";

fn cargo(args: &[&str]) -> Result<(), String> {
    run("cargo", args, &[])
}

fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    eprintln!("xtask: {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{program} {}` failed ({status})", args.join(" "))) }
}

/// Cargo's target directory, as cargo itself reports it (`CARGO_TARGET_DIR` or the
/// `build.target-dir` setting move it away from `target/`).
fn target_dir() -> Result<std::path::PathBuf, String> {
    metadata()?["target_directory"]
        .as_str()
        .map(std::path::PathBuf::from)
        .ok_or_else(|| "cargo metadata names no target_directory".to_string())
}

/// `cargo metadata` of the workspace's own packages.
fn metadata() -> Result<serde_json::Value, String> {
    let out = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot start cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata printed no JSON: {e}"))
}

/// The path of an optimised build's program or example `name` (`examples/<name>` for an
/// example): [`optimised_build`] writes them under `target/debug`.
fn built_path(name: &str) -> Result<String, String> {
    let path = target_dir()?.join("debug").join(name);
    path.to_str().map(str::to_string).ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

/// Every test: the test binaries, two at a time (see [`lanes`]), then the doc tests.
fn test() -> Result<(), String> {
    lanes::run(&["--workspace", "--all-targets", "--features", EVERY_BACKEND])?;
    cargo(&["test", "--workspace", "--doc", "--features", EVERY_BACKEND])
}

/// The program and examples with every backend, for [`numpy_check`] and [`examples`], built
/// with the test profile (optimised, `opt-level = 2`) and the test run's features, so they
/// reuse every dependency [`test()`] compiled: a release build compiled them all again (five
/// minutes of CI on two cores).
fn optimised_build() -> Result<(), String> {
    cargo(&["build", "--profile", "test", "--workspace", "--bins", "--examples", "--features", EVERY_BACKEND])
}

/// Run the examples of the `swirly` crate as a newcomer would, on every backend (short runs).
/// Each exits non-zero on any error; `wgpu_draw` also checks the picture it drew from the
/// simulation's buffers against the field read back. The Vulkan run is under the validation
/// layer.
fn examples() -> Result<(), String> {
    let game_loop = built_path("examples/game_loop")?;
    run(&game_loop, &["cpu", "120"], &[])?;
    run(&game_loop, &["wgpu", "20"], &[])?;
    run(&game_loop, &["vulkan", "20"], &[("FLUID_VULKAN_VALIDATION", "1")])?;
    run(&built_path("examples/wgpu_draw")?, &["20"], &[])
}

/// Dump every field with the optimised CLI and load each file with NumPy, checking shape and dtype.
fn numpy_check() -> Result<(), String> {
    let dir = std::env::temp_dir().join("fluid-xtask-npy");
    let _ = std::fs::remove_dir_all(&dir);
    let dir_s = dir.to_str().ok_or("temp dir is not UTF-8")?;
    run(
        &built_path("fluid")?,
        &[
            "run",
            "smoke",
            "--steps",
            "5",
            "--set",
            "grid.nx=24",
            "--set",
            "grid.ny=16",
            // smoke carries no dye of its own, and dumping a field a scene does not carry is
            // an error.
            "--set",
            "params.fields.dye=true",
            // The solid fields exist only with obstacles: one disc in the upper half.
            "--set",
            "obstacles=[{shape = \"circle\", position = [0.5, 0.75], radius = 0.15}]",
            "--out",
            dir_s,
            "--dump",
            "u,v,pressure,divergence,density,temperature,dye,solid,u_faces,v_faces,curl",
        ],
        &[],
    )?;
    run("python3", &["scripts/check_npy.py", dir_s, "24", "16"], &[])
}

/// Validate every generated SPIR-V module for Vulkan 1.1 with Khronos' `spirv-val`
/// (Debian: spirv-tools; `scripts/test.sh` installs it).
fn spirv_val() -> Result<(), String> {
    let dir = root().join(shaders::GEN_DIR);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "spv") {
            let p = path.to_str().ok_or("non-UTF-8 path")?;
            let out = Command::new("spirv-val")
                .args(["--target-env", "vulkan1.1", p])
                .output()
                .map_err(|e| format!("cannot run spirv-val (apt-get install spirv-tools): {e}"))?;
            if !out.status.success() {
                return Err(format!("spirv-val rejects {p}: {}", String::from_utf8_lossy(&out.stderr)));
            }
            n += 1;
        }
    }
    eprintln!("xtask: spirv-val accepts all {n} SPIR-V modules (vulkan1.1)");
    Ok(())
}

/// The dependency policy of `deny.toml`: licences, bans and sources always; advisories when
/// RustSec's database (a repository on GitHub) can be fetched, and a line saying so when not.
fn deny() -> Result<(), String> {
    let installed = Command::new("cargo").args(["deny", "--version"]).output().is_ok_and(|o| o.status.success());
    if !installed {
        return Err(format!("cargo-deny is not installed: `cargo install --locked cargo-deny@{DENY_VERSION}`"));
    }
    let fetch = Command::new("cargo")
        .args(["deny", "fetch", "db"])
        .output()
        .map_err(|e| format!("cannot run cargo deny: {e}"))?;
    if fetch.status.success() {
        return cargo(&["deny", "check", "--hide-inclusion-graph"]);
    }
    let why = String::from_utf8_lossy(&fetch.stderr);
    let why = why.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no reason given");
    eprintln!("xtask: advisories not checked: RustSec's database could not be fetched ({})", why.trim());
    cargo(&["deny", "check", "--hide-inclusion-graph", "licenses", "bans", "sources"])
}

/// The cargo-deny that `scripts/test.sh` installs.
const DENY_VERSION: &str = "0.20.2";

/// The crates meant for crates.io, in dependency order.
const PUBLISHED: &[&str] = &[
    "swirly-ir",
    "swirly-core",
    "swirly-shaders",
    "swirly-cpu",
    "swirly-wgpu",
    "swirly-vulkan",
    "swirly",
    "swirly-bench",
    "swirly-cli",
];

/// The published crates that have a library, whose public API `doc/api/` lists: all but the
/// program's.
fn libraries() -> Vec<&'static str> {
    PUBLISHED.iter().copied().filter(|name| *name != "swirly-cli").collect()
}

/// The published crates that embed files with `include_str!`/`include_bytes!`: a build from
/// their packed sources is the only check that those files travel with them.
const EMBEDS_FILES: &[&str] = &["swirly-ir", "swirly-shaders", "swirly-core"];

/// `cargo package` of every published crate, the workspace's crates standing in for the
/// registry: each manifest, file list and path dependency is checked (a dependency on an
/// unpublished crate fails here). The crates that embed files are also built from their packed
/// sources, so a file read from outside a crate's folder fails; building all nine alone costs
/// about six minutes on two cores and finds nothing more, since the rest read no files.
fn package() -> Result<(), String> {
    let mut args = vec!["package", "--no-verify"];
    for name in PUBLISHED {
        args.extend(["-p", name]);
    }
    cargo(&args)?;
    let mut args = vec!["package"];
    for name in EMBEDS_FILES {
        args.extend(["-p", name]);
    }
    cargo(&args)
}

/// The build at the declared minimum Rust version (`rust-version` of the workspace): free when
/// the toolchain running CI is that version (the everyday case, and then every step above is
/// the MSRV build), else `cargo +<version> check` of everything, with the toolchain installed
/// by rustup if it is missing.
fn msrv() -> Result<(), String> {
    let meta = metadata()?;
    let declared = meta["packages"]
        .as_array()
        .and_then(|p| p.iter().find_map(|p| p["rust_version"].as_str()))
        .ok_or("cargo metadata names no rust-version")?
        .to_string();
    let out = Command::new("rustc").arg("--version").output().map_err(|e| format!("cannot start rustc: {e}"))?;
    let running = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // "rustc 1.95.0 (…)": the declared "1.95" matches any 1.95.x.
    let version = running.split_whitespace().nth(1).unwrap_or_default();
    if version == declared || version.starts_with(&format!("{declared}.")) {
        eprintln!(
            "xtask: the toolchain is the declared minimum, Rust {declared} ({running}): this run is the MSRV build"
        );
        return Ok(());
    }
    run("rustup", &["toolchain", "install", &declared, "--profile", "minimal"], &[])?;
    let toolchain = format!("+{declared}");
    cargo(&[&toolchain, "check", "--workspace", "--all-targets", "--features", EVERY_BACKEND])
}

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--check"])?;
    deny()?;
    msrv()?;
    shaders::run(&root(), true)?;
    spirv_val()?;
    cargo(&["clippy", "--workspace", "--all-targets", "--features", EVERY_BACKEND, "--", "-D", "warnings"])?;
    run(
        "cargo",
        &["doc", "--workspace", "--no-deps", "--features", EVERY_BACKEND],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    api::run(&root(), &target_dir()?, &libraries(), true)?;
    // Before the tests, while the clone is clean.
    package()?;
    test()?;
    optimised_build()?;
    cli_reference::run(&root(), &built_path("fluid")?, true)?;
    numpy_check()?;
    examples()
}

fn main() -> ExitCode {
    if let Some(code) = api::as_rustdoc() {
        return code;
    }
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "ci" => ci(),
        "test" => test(),
        "package" => package(),
        "deny" => deny(),
        "bench" => cargo(&["bench", "--package", "swirly-bench"]),
        "npy" => optimised_build().and_then(|()| numpy_check()),
        "examples" => optimised_build().and_then(|()| examples()),
        "shaders" => shaders::run(&root(), std::env::args().nth(2).as_deref() == Some("--check")),
        "api" => target_dir()
            .and_then(|t| api::run(&root(), &t, &libraries(), std::env::args().nth(2).as_deref() == Some("--check"))),
        "cli-reference" => optimised_build().and_then(|()| {
            cli_reference::run(&root(), &built_path("fluid")?, std::env::args().nth(2).as_deref() == Some("--check"))
        }),
        _ => Err("usage: cargo xtask <ci | test | package | deny | bench | npy | examples | shaders [--check] | \
                  api [--check] | cli-reference [--check]>"
            .to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
