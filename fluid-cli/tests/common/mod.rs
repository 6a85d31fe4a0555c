//! Helpers of the `fluid` program's test files: running it (within a time limit, so that a
//! hang fails the test), temporary folders, its output as text, `.npy` headers, and runs that
//! must fail.
#![allow(dead_code, reason = "each test file uses some of the helpers")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run `fluid` with `args` in `cwd`, and fail if it takes longer than `limit` (a hang).
pub fn fluid_in(args: &[&str], cwd: &Path, limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluid"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fluid");
    let (mut out, mut err) = (child.stdout.take().expect("stdout"), child.stderr.take().expect("stderr"));
    let read_out = std::thread::spawn(move || std::io::read_to_string(&mut out).unwrap_or_default());
    let read_err = std::thread::spawn(move || std::io::read_to_string(&mut err).unwrap_or_default());
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`fluid {}` hung: still running after {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (read_out.join().expect("stdout"), read_err.join().expect("stderr"));
    Output { status, stdout: stdout.into_bytes(), stderr: stderr.into_bytes() }
}

pub fn fluid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluid")).args(args).output().expect("run fluid")
}

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fluid-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parse a `.npy` header: (shape, payload bytes).
pub fn npy(path: &Path) -> (Vec<usize>, Vec<u8>) {
    let bytes = std::fs::read(path).expect("npy file");
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).expect("ascii header");
    assert!(header.contains("'descr': '<f4'") && header.contains("'fortran_order': False"), "{header}");
    let shape_text = header.split("'shape': (").nth(1).and_then(|s| s.split(')').next()).expect("shape");
    let shape =
        shape_text.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().expect("dim")).collect();
    (shape, bytes[10 + hlen..].to_vec())
}

/// Runs `fluid` and expects exit code `code`, a message containing each of `needles`, and no
/// panic.
pub fn fails_with(code: i32, args: &[&str], needles: &[&str]) {
    let out = fluid(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "args {args:?}: stderr {err}");
    assert!(!err.contains("panicked"), "args {args:?} panicked: {err}");
    for n in needles {
        assert!(err.contains(n), "args {args:?}: stderr should mention `{n}`: {err}");
    }
}

/// Bad input: exit code 2 and a message naming each of `needles`.
pub fn bad(args: &[&str], needles: &[&str]) {
    fails_with(2, args, needles);
}
