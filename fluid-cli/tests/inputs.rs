//! The `fluid` program as a process: one process whatever its environment, ended by a signal
//! to its PID.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// The PIDs of the processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid ...`: the command may hold spaces and parentheses.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if ppid == Some(parent) {
            out.push(pid);
        }
    }
    out
}

/// The PIDs of the processes whose command line mentions `needle`.
fn mentioning(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if let Ok(line) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&line).contains(needle)
        {
            out.push(pid);
        }
    }
    out
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).expect("dir").map(|e| e.expect("entry").file_name().to_string_lossy().into()).collect();
    v.sort();
    v
}

/// Without `XDG_RUNTIME_DIR` (a container, CI, cron) the run is one process: the PID its
/// caller holds is the one stepping, with no child, and `kill -9` of it ends the run, leaving
/// nothing that writes on.
#[test]
fn without_a_runtime_directory_the_run_is_one_process_that_dies_with_its_pid() {
    let dir = temp_dir("one-process");
    let out = dir.join("o");
    let out_text = out.to_str().expect("utf8").to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluid"))
        .args(["run", "smoke", "--set", "grid.nx=64", "--set", "grid.ny=64", "--steps", "200000"])
        .args(["--save-every", "50", "--out", &out_text])
        .env_remove("XDG_RUNTIME_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run fluid");
    let t0 = Instant::now();
    while !out.join("checkpoint_000050.fluid").exists() {
        assert!(t0.elapsed() < Duration::from_secs(120), "no checkpoint after {:?}", t0.elapsed());
        assert!(child.try_wait().expect("wait").is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(children_of(child.id()), Vec::<u32>::new(), "the run has a child process");
    assert_eq!(mentioning(&out_text), vec![child.id()], "the processes running it");
    child.kill().expect("kill -9");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(9), "{status:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(mentioning(&out_text), Vec::<u32>::new(), "a process runs on after kill -9");
    let before = names(&out);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(names(&out), before, "something writes on after kill -9");
    let _ = std::fs::remove_dir_all(&dir);
}
