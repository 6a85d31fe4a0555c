//! The run's outputs against a hostile or failing output folder: links planted under the names
//! the run writes are replaced, never followed; a disk that fills up leaves no truncated file
//! under an output's name (nor a part); a folder that cannot be written is refused before the
//! first step; the flipbook holds a row of tiles in memory, not its whole atlas.

mod common;

use common::{fluid_in, temp_dir, text};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A run of `fluid` with `args` in `dir`, with its files capped at `kib` KiB (`ulimit -f`,
/// the file-size signal ignored so a write past the cap fails with "file too large", as on
/// a full disk).
fn capped(dir: &Path, kib: u32, args: &[&str]) -> std::process::Output {
    let exe = env!("CARGO_BIN_EXE_fluid");
    let script = format!("trap '' XFSZ; ulimit -f {}; exec \"$0\" \"$@\"", 2 * kib);
    Command::new("sh").arg("-c").arg(script).arg(exe).args(args).current_dir(dir).output().expect("run fluid")
}

#[test]
fn links_planted_in_the_output_folder_are_never_followed() {
    let dir = temp_dir("planted");
    let out = dir.join("o");
    std::fs::create_dir_all(&out).expect("out");
    let names = [
        "density.npy.part",
        "probes.csv",
        "probes.csv.part",
        "frame_00000.png",
        "smoke_flipbook.json.part",
        "smoke_flipbook.png",
        "checkpoint_000002.fluid.part",
    ];
    for (k, name) in names.iter().enumerate() {
        let victim = dir.join(format!("victim{k}"));
        std::fs::write(&victim, "keep").expect("victim");
        std::os::unix::fs::symlink(&victim, out.join(name)).expect("link");
    }
    let args = [
        "run",
        "smoke",
        "--steps",
        "2",
        "--set",
        "grid.nx=24",
        "--set",
        "grid.ny=16",
        "--dump",
        "density",
        "--probe",
        "0.5,0.5",
        "--png",
        "--frame-every",
        "1",
        "--flipbook",
        "1x2",
        "--save-every",
        "2",
        "--out",
        "o",
    ];
    let run = fluid_in(&args, &dir, Duration::from_secs(120));
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    for (k, name) in names.iter().enumerate() {
        assert_eq!(std::fs::read(dir.join(format!("victim{k}"))).expect("victim"), b"keep", "{name} followed");
    }
    for name in ["density.npy", "probes.csv", "frame_00000.png", "smoke_flipbook.png", "checkpoint_000002.fluid"] {
        let meta = std::fs::symlink_metadata(out.join(name)).expect(name);
        assert!(meta.is_file() && meta.len() > 4, "{name}: a regular file of its own");
    }
    let parts: Vec<_> = std::fs::read_dir(&out)
        .expect("read out")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .collect();
    assert!(parts.is_empty(), "parts left: {parts:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Outputs cut short by a full disk (here: a file-size cap the writes run into) leave no file
/// under an output's name that is not whole, and no part.
#[test]
fn a_full_disk_leaves_no_truncated_output() {
    let dir = temp_dir("full");
    let cases: [(&str, &str, &[&str]); 3] = [
        ("flipbook", "96", &["--flipbook", "4x4"]),
        ("probes", "32", &["--probe", "0.5,0.5", "--probe", "0.25,0.75", "--probe", "0.4,0.6", "--probe", "0.7,0.2"]),
        ("png", "256", &["--png", "--frame-every", "100"]),
    ];
    for (what, n, extra) in cases {
        let out = dir.join(what);
        let (nx, ny) = (format!("grid.nx={n}"), format!("grid.ny={n}"));
        let mut args = vec!["run", "smoke", "--steps", "400", "--set", &nx, "--set", &ny];
        args.extend_from_slice(extra);
        let out_s = out.to_str().expect("utf-8");
        args.extend_from_slice(&["--out", out_s]);
        let run = capped(&dir, 24, &args);
        let err = text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{what}: {err}");
        assert!(err.contains("cannot write") && !err.contains("panicked"), "{what}: {err}");
        for entry in std::fs::read_dir(&out).expect("read out").filter_map(|e| e.ok()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(!name.ends_with(".part"), "{what}: {name} left behind");
            let bytes = std::fs::read(entry.path()).expect("read");
            if name.ends_with(".png") {
                let decoded = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().and_then(|mut r| {
                    let mut buf = vec![0; r.output_buffer_size().unwrap_or(0)];
                    r.next_frame(&mut buf).map(|_| ())
                });
                assert!(decoded.is_ok(), "{what}: {name} is not a whole PNG");
            }
            assert_ne!(name, "probes.csv", "{what}: a probe table that was not finished");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An output folder that cannot be written fails the run at once, naming it, before any step.
#[test]
fn an_unwritable_output_folder_is_refused_before_the_first_step() {
    let dir = temp_dir("unwritable");
    std::fs::write(dir.join("file"), "not a folder").expect("file");
    for out in ["/proc/fluid-cannot-be-here", "file", "file/below"] {
        let t0 = Instant::now();
        let args = ["run", "smoke", "--steps", "100000", "--dump", "density", "--out", out];
        let run = fluid_in(&args, &dir, Duration::from_secs(60));
        let err = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{out}: {err}");
        assert!(err.contains("--out") && err.contains(out), "{out}: {err}");
        assert!(t0.elapsed() < Duration::from_secs(20), "{out}: refused only after {:?}", t0.elapsed());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--plan` says what each output holds in host memory: the flipbook a row of its tiles.
#[test]
fn the_plan_counts_what_outputs_hold_on_the_host() {
    let run = common::fluid(&[
        "run",
        "smoke",
        "--plan",
        "--set",
        "grid.nx=256",
        "--set",
        "grid.ny=256",
        "--flipbook",
        "16x16",
        "--steps",
        "256",
        "--gif",
    ]);
    let out = text(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    // 16 tiles of 256 x 256 RGBA: 4 MiB, where the whole atlas would be 64 MiB.
    assert!(out.contains("--flipbook") && out.contains("4.0 MiB (4194304 B)"), "{out}");
    assert!(out.contains("--gif: frames are written in batches"), "{out}");
}
