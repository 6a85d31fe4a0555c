//! The workspace's test binaries, built once by cargo and run two at a time.
//!
//! `cargo test` runs one binary after another. The raw-Vulkan conformance suite runs its tests
//! one at a time (`swirly_conformance::run_alone`) and keeps one core busy for about ten
//! minutes of CI on lavapipe; run beside the other binaries, it leaves no core idle. Each binary
//! runs as `cargo test` runs it: from its package's folder, with no arguments; its output is
//! printed whole when it ends, so two binaries' lines never interleave.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

/// One test binary: its package, its target, the file and the folder it runs in.
struct Binary {
    package: String,
    target: String,
    executable: PathBuf,
    folder: PathBuf,
}

impl Binary {
    fn label(&self) -> String {
        format!("{} {}", self.package, self.target)
    }
}

/// The binaries that run longest on CI, started first (longest first keeps the two lanes even):
/// (package, target).
const LONGEST: &[(&str, &str)] = &[("swirly-conformance", "vulkan"), ("swirly-conformance", "wgpu"), ("swirly", "api")];

/// How many binaries run at once.
const LANES: usize = 2;

/// Build every test binary of `cargo test <args>` (`--no-run`) and name them from cargo's JSON
/// messages.
fn build(args: &[&str]) -> Result<Vec<Binary>, String> {
    let mut all = vec!["test", "--no-run", "--message-format=json-render-diagnostics"];
    all.extend_from_slice(args);
    eprintln!("xtask: cargo {}", all.join(" "));
    let out = Command::new("cargo")
        .args(&all)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("`cargo {}` failed ({})", all.join(" "), out.status));
    }
    let mut binaries = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
            continue;
        }
        let Some(executable) = message["executable"].as_str() else { continue };
        let manifest = message["manifest_path"].as_str().ok_or("an artifact without manifest_path")?;
        let folder = PathBuf::from(manifest).parent().ok_or("a manifest path without a folder")?.to_path_buf();
        let id = message["package_id"].as_str().unwrap_or_default();
        binaries.push(Binary {
            package: package_name(id, &folder),
            target: message["target"]["name"].as_str().unwrap_or_default().to_string(),
            executable: PathBuf::from(executable),
            folder,
        });
    }
    if binaries.is_empty() {
        return Err("cargo built no test binaries".to_string());
    }
    Ok(binaries)
}

/// The package name in a package id: `path+file:///…/fluid-core#swirly-core@0.1.0` (or, for a
/// package named as its folder, `path+file:///…/xtask#0.1.0`).
fn package_name(id: &str, folder: &std::path::Path) -> String {
    let tail = id.rsplit('#').next().unwrap_or(id);
    match tail.split_once('@') {
        Some((name, _)) => name.to_string(),
        None => folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
    }
}

/// Build and run every test binary of `cargo test <args>`, [`LANES`] at a time, the
/// [`LONGEST`] first; every binary runs even after one fails, and the failures are named at the
/// end.
pub fn run(args: &[&str]) -> Result<(), String> {
    let mut binaries = build(args)?;
    let rank =
        |b: &Binary| LONGEST.iter().position(|(p, t)| *p == b.package && *t == b.target).unwrap_or(LONGEST.len());
    binaries.sort_by_key(rank);
    let count = binaries.len();
    let queue = Mutex::new(binaries.into_iter().collect::<VecDeque<_>>());
    let failed = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..LANES {
            s.spawn(|| {
                loop {
                    // The lock is let go before the binary runs (a guard in a `while let`'s
                    // condition would be held through the loop's body, one lane at a time).
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some(binary) = next else { break };
                    if let Err(e) = run_one(&binary) {
                        failed.lock().unwrap_or_else(|e| e.into_inner()).push(e);
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    eprintln!("xtask: {count} test binaries ran in {:.0} s, {LANES} at a time", started.elapsed().as_secs_f64());
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} test binaries failed: {}", failed.len(), failed.join("; ")))
    }
}

/// Run one binary; print its output whole, with its time.
fn run_one(binary: &Binary) -> Result<(), String> {
    let started = Instant::now();
    let out = Command::new(&binary.executable).current_dir(&binary.folder).stdin(Stdio::null()).output();
    let seconds = started.elapsed().as_secs_f64();
    let out = out.map_err(|e| format!("{}: cannot start {}: {e}", binary.label(), binary.executable.display()))?;
    let mut text =
        format!("\nxtask: {} ({}) in {seconds:.1} s: {}\n", binary.label(), binary.executable.display(), out.status);
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    eprint!("{text}");
    if out.status.success() { Ok(()) } else { Err(format!("{} ({})", binary.label(), out.status)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_come_from_their_ids() {
        let folder = std::path::Path::new("/w/fluid-core");
        assert_eq!(package_name("path+file:///w/fluid-core#swirly-core@0.1.0", folder), "swirly-core");
        assert_eq!(package_name("path+file:///w/xtask#0.1.0", std::path::Path::new("/w/xtask")), "xtask");
    }
}
