//! Project tasks, run as `cargo xtask <task>`:
//!
//! - `ci`: everything CI checks — formatting, clippy with warnings as errors, the docs, every
//!   test, and the `.npy` dumps read back by NumPy.
//! - `test`: the test suite only.
//! - `bench`: the criterion benchmarks of `fluid-bench`.

use std::process::{Command, ExitCode};

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

fn test() -> Result<(), String> {
    cargo(&["test", "--workspace", "--all-targets"])?;
    cargo(&["test", "--workspace", "--doc"])
}

/// Dump every field with the release CLI and load each file with NumPy, checking shape and dtype.
fn numpy_check() -> Result<(), String> {
    cargo(&["build", "--release", "--package", "fluid"])?;
    let dir = std::env::temp_dir().join("fluid-xtask-npy");
    let _ = std::fs::remove_dir_all(&dir);
    let dir_s = dir.to_str().ok_or("temp dir is not UTF-8")?;
    run(
        "target/release/fluid",
        &[
            "run",
            "smoke",
            "--steps",
            "5",
            "--set",
            "grid.nx=24",
            "--set",
            "grid.ny=16",
            "--out",
            dir_s,
            "--dump",
            "u,v,pressure,divergence,density,temperature,dye,solid,curl",
        ],
        &[],
    )?;
    run("python3", &["scripts/check_npy.py", dir_s, "24", "16"], &[])
}

fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--check"])?;
    cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    run("cargo", &["doc", "--workspace", "--no-deps"], &[("RUSTDOCFLAGS", "-D warnings")])?;
    test()?;
    numpy_check()
}

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "ci" => ci(),
        "test" => test(),
        "bench" => cargo(&["bench", "--package", "fluid-bench"]),
        "npy" => numpy_check(),
        _ => Err("usage: cargo xtask <ci | test | bench | npy>".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
