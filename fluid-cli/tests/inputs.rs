//! The `fluid` program against hostile files and as a process: one process whatever its
//! environment, and scene and image paths that are not regular files, too large, or PNG bombs.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// `fluid_in` must exit 2, quickly, with a message holding each of `needles`.
fn refused(args: &[&str], cwd: &Path, needles: &[&str]) {
    let out = fluid_in(args, cwd, Duration::from_secs(20));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: the message should say `{n}`: {err}");
    }
}

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

/// A PNG of `w` × `h` pixels, one bit each, all zero: a few kilobytes that decode to `w · h`
/// pixels.
fn bomb(path: &Path, w: u32, h: u32) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut encoder = png::Encoder::new(file, w, h);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::One);
    let mut writer = encoder.write_header().expect("header");
    let mut stream = writer.stream_writer().expect("stream");
    let row = vec![0u8; w.div_ceil(8) as usize];
    for _ in 0..h {
        std::io::Write::write_all(&mut stream, &row).expect("row");
    }
    stream.finish().expect("finish");
}

/// Special files and the forms of a scene file's path that hold no scene.
struct Specials {
    dir: PathBuf,
    fifo: PathBuf,
    zero: PathBuf,
    sparse: PathBuf,
    bomb: PathBuf,
    text: PathBuf,
}

fn specials(name: &str) -> Specials {
    let dir = temp_dir(name);
    let fifo = dir.join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let zero = dir.join("zero");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
    let sparse = dir.join("sparse");
    std::fs::File::create(&sparse).and_then(|f| f.set_len(1 << 30)).expect("sparse");
    let bomb_path = dir.join("bomb.png");
    bomb(&bomb_path, 20000, 20000);
    let text = dir.join("text.png");
    std::fs::write(&text, "not a PNG").expect("write");
    Specials { dir, fifo, zero, sparse, bomb: bomb_path, text }
}

/// An image that is a FIFO, a device, a folder, a 1 GB file, a PNG bomb (20000 × 20000 in a
/// few kilobytes), not a PNG or missing is refused at once with a message naming the key, the
/// path and which of these it is.
#[test]
fn image_paths_that_are_not_small_regular_pngs_are_refused_saying_why() {
    let s = specials("image-paths");
    let p = |path: &Path| path.to_str().expect("utf8").to_string();
    assert!(std::fs::metadata(&s.bomb).expect("bomb").len() < 2 << 20, "the bomb is small");
    let cases = [
        (p(&s.fifo), "a FIFO (named pipe), not a PNG image"),
        (p(&s.zero), "a device, not a PNG image"),
        (p(&s.dir), "a folder, not a PNG image"),
        (p(&s.sparse), "1073741824 bytes, more than the 16777216 (16 MiB)"),
        (p(&s.bomb), "20000 x 20000 pixels, more than this program decodes"),
        (p(&s.text), "not a PNG image: it does not begin with PNG's signature"),
        (p(&s.dir.join("missing.png")), "(no such file)"),
    ];
    for (path, why) in &cases {
        let mask = format!("obstacles=[{{shape = \"mask\", image = {path:?}, size = [0.5, 0.5]}}]");
        let args = ["run", "smoke", "--steps", "1", "--set", "params.pressure.solver=sor", "--set", &mask];
        refused(&args, &s.dir, &["`obstacles[0].image`", path.as_str(), why]);
        let background = format!("render.background_image={path}");
        refused(&["run", "smoke", "--steps", "1", "--set", &background], &s.dir, &["`render.background_image`", why]);
    }
    // Named by a scene file beside it, the same.
    let scene = "[grid]\nnx = 16\nny = 16\n[params.pressure]\nsolver = \"sor\"\n\
                 [[obstacles]]\nshape = \"mask\"\nimage = \"pipe\"\nsize = [0.5, 0.5]\n";
    std::fs::write(s.dir.join("fifo.toml"), scene).expect("scene");
    refused(&["run", "fifo.toml", "--steps", "1"], &s.dir, &["`obstacles[0].image`", "a FIFO"]);
    let _ = std::fs::remove_dir_all(&s.dir);
}

/// A scene path that is a FIFO, a device, a folder or a 1 GB file is refused at once, saying
/// which (not "no such file", not an unknown preset, not a parser out of memory).
#[test]
fn scene_paths_that_are_not_small_regular_files_are_named() {
    let s = specials("scene-paths");
    let fifo_toml = s.dir.join("pipe.toml");
    assert!(Command::new("mkfifo").arg(&fifo_toml).status().expect("mkfifo").success());
    let sparse_toml = s.dir.join("huge.toml");
    std::fs::rename(&s.sparse, &sparse_toml).expect("rename");
    let folder_toml = s.dir.join("folder.toml");
    std::fs::create_dir_all(&folder_toml).expect("dir");
    let p = |path: &Path| path.to_str().expect("utf8").to_string();
    for (path, why) in [
        (p(&s.fifo), "a FIFO (named pipe), not a scene file"),
        (p(&fifo_toml), "a FIFO (named pipe), not a scene file"),
        (p(&s.zero), "a device, not a scene file"),
        (p(&s.dir), "a folder, not a scene file"),
        (p(&folder_toml), "a folder, not a scene file"),
        (p(&sparse_toml), "1073741824 bytes, more than the 4194304 (4 MiB)"),
        (p(&s.dir.join("none.toml")), "no such file"),
    ] {
        refused(&["run", &path, "--steps", "1"], &s.dir, &[path.as_str(), why]);
    }
    let _ = std::fs::remove_dir_all(&s.dir);
}
