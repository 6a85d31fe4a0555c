//! The `fluid` program against hostile files and its own process: one process whatever the
//! environment, scene and image paths that are not regular files or too large, PNG bombs,
//! built-in images the working folder cannot shadow, checkpoints that resume from any folder
//! and count their steps in 64 bits, and the messages of values of the wrong kind.

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

/// The solid fraction of `fluid run <scene> --steps 1` at 64², run in `cwd`.
fn solid_of(scene: &str, cwd: &Path, out: &Path) -> Vec<u8> {
    let args = ["run", scene, "--steps", "1", "--set", "grid.nx=64", "--set", "grid.ny=64", "--dump", "solid"];
    let o = fluid_in(&[&args[..], &["--out", out.to_str().expect("utf8")]].concat(), cwd, Duration::from_secs(120));
    assert!(o.status.success(), "{scene} in {}: {}", cwd.display(), text(&o.stderr));
    npy(&out.join("solid.npy")).1
}

/// A preset takes its images from the program, whatever the working folder holds (a
/// `grate.png` there changes nothing), and a preset's file copied to another folder runs with
/// them too, as the README says built-in images are named.
#[test]
fn presets_take_their_built_in_images_whatever_the_working_folder_holds() {
    let dir = temp_dir("built-in-images");
    let (clean, planted, copied) = (dir.join("clean"), dir.join("planted"), dir.join("copied"));
    for d in [&clean, &planted, &copied] {
        std::fs::create_dir_all(d).expect("dir");
    }
    // Solid everywhere: a mask that would fill its rectangle.
    image::RgbaImage::from_pixel(8, 8, image::Rgba([255, 255, 255, 255])).save(planted.join("grate.png")).expect("png");
    let want = solid_of("obstacles", &clean, &dir.join("o1"));
    assert_eq!(solid_of("obstacles", &planted, &dir.join("o2")), want, "a grate.png in the working folder");
    let scene = copied.join("obstacles.toml");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../fluid-core/scenes/obstacles.toml"), &scene).expect("copy");
    assert_eq!(solid_of(scene.to_str().expect("utf8"), &planted, &dir.join("o3")), want, "a copied preset");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkpoint keeps its scene's images by their canonical paths (the payload holds the
/// mask; the background is read again), so a run started in one folder resumes from another.
#[test]
fn a_checkpoint_resumes_from_any_working_folder() {
    let dir = temp_dir("resume-elsewhere");
    std::fs::create_dir_all(dir.join("scene/art")).expect("dir");
    std::fs::create_dir_all(dir.join("elsewhere")).expect("dir");
    std::fs::copy("../fluid-core/scenes/grate.png", dir.join("scene/art/slats.png")).expect("copy");
    let scene = "name = \"masked\"\n[grid]\nnx = 32\nny = 32\n[params.pressure]\nsolver = \"sor\"\n\
                 [render]\nbackground_image = \"art/slats.png\"\n\
                 [[obstacles]]\nshape = \"mask\"\nimage = \"art/slats.png\"\nsize = [0.8, 0.2]\n";
    std::fs::write(dir.join("scene/masked.toml"), scene).expect("scene");
    let args = ["run", "scene/masked.toml", "--steps", "2", "--save-every", "2", "--out", "out"];
    let o = fluid_in(&args, &dir, Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let checkpoint = dir.join("out/checkpoint_000002.fluid");
    let args = ["run", checkpoint.to_str().expect("utf8"), "--steps", "1", "--png", "--out", "more"];
    let o = fluid_in(&args, &dir.join("elsewhere"), Duration::from_secs(60));
    assert!(o.status.success(), "resumed elsewhere: {}", text(&o.stderr));
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

/// A scene that names an image outside its own folder is refused (a scene file from the
/// internet reads no file of its reader's), by `..`, an absolute path or a symbolic link;
/// `--set` may name one anywhere.
#[test]
fn a_scene_file_reads_no_image_outside_its_folder() {
    let dir = temp_dir("outside-folder");
    std::fs::create_dir_all(dir.join("scene")).expect("dir");
    std::fs::copy("../fluid-core/scenes/grate.png", dir.join("private.png")).expect("copy");
    let private = dir.join("private.png");
    std::os::unix::fs::symlink(&private, dir.join("scene/link.png")).expect("symlink");
    let scene = |image: &str| {
        format!(
            "[grid]\nnx = 16\nny = 16\n[params.pressure]\nsolver = \"sor\"\n\
             [[obstacles]]\nshape = \"mask\"\nimage = {image:?}\nsize = [0.5, 0.5]\n"
        )
    };
    let file = dir.join("scene/s.toml");
    let file = file.to_str().expect("utf8");
    for image in ["../private.png", private.to_str().expect("utf8"), "link.png"] {
        std::fs::write(file, scene(image)).expect("scene");
        refused(&["run", file, "--steps", "1"], &dir, &["`obstacles[0].image`", "outside the scene file's folder"]);
    }
    let set = format!("obstacles.0.image={}", private.display());
    let o = fluid_in(&["run", file, "--steps", "1", "--set", &set], &dir, Duration::from_secs(60));
    assert!(o.status.success(), "--set names it: {}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
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

/// The checkpoint at `file` with its header's `key` set to `value`, the checksum made to match.
fn with_header_value(file: &Path, key: &str, value: toml::Value) {
    let bytes = std::fs::read(file).expect("checkpoint");
    let (header, _) = swirly::checkpoint::read_header(bytes.as_slice()).expect("header");
    let mut table = toml::Table::try_from(&header).expect("table");
    table.insert(key.to_string(), value);
    let text = toml::to_string(&table).expect("toml");
    std::fs::write(file, swirly_core::testing::with_header(&bytes, &text).expect("rewritten")).expect("write");
}

/// Steps are counted in 64 bits: two steps after `u32::MAX` are saved as
/// `checkpoint_4294967296.fluid` and `checkpoint_4294967297.fluid`, not over
/// `checkpoint_000000.fluid`; and a header whose checksum matches but whose time is NaN,
/// infinite or negative is refused, naming the value.
#[test]
fn checkpoint_steps_count_past_u32_and_impossible_times_are_refused() {
    let dir = temp_dir("steps-u64");
    let out = dir.to_str().expect("utf8");
    let args = ["run", "smoke", "--steps", "1", "--set", "grid.nx=16", "--set", "grid.ny=16"];
    let o = fluid_in(&[&args[..], &["--save-every", "1", "--out", out]].concat(), &dir, Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let first = dir.join("checkpoint_000001.fluid");
    let late = dir.join("late.fluid");
    std::fs::copy(&first, &late).expect("copy");
    with_header_value(&late, "steps", toml::Value::Integer(i64::from(u32::MAX)));
    std::fs::remove_file(&first).expect("remove");
    let late_text = late.to_str().expect("utf8");
    let o =
        fluid_in(&["run", late_text, "--steps", "2", "--save-every", "1", "--out", out], &dir, Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let saved: Vec<String> = names(&dir).into_iter().filter(|n| n.starts_with("checkpoint_")).collect();
    assert_eq!(saved, ["checkpoint_4294967296.fluid", "checkpoint_4294967297.fluid"]);
    for (value, shown) in [(f64::NAN, "NaN"), (f64::INFINITY, "inf"), (-1.0, "-1.0")] {
        std::fs::copy(dir.join("checkpoint_4294967296.fluid"), &late).expect("copy");
        with_header_value(&late, "time", toml::Value::Float(value));
        refused(&["run", late_text, "--steps", "1"], &dir, &["checkpoint", &format!("`time` is {shown}")]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Values of the wrong kind are named with their key, the value and what the key takes.
#[test]
fn values_of_the_wrong_kind_name_the_key_the_value_and_what_it_takes() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    refused(
        &["run", "smoke", "--set", "params.advection.backtrace=7"],
        here,
        &["`params.advection.backtrace`: 7", "`euler`, `rk2`, `rk3`"],
    );
    refused(
        &["run", "smoke", "--set", "storage.budget=[1]"],
        here,
        &["storage.budget", "a whole number of bytes", "\"256 MiB\""],
    );
    let out = fluid_in(&["run", "splash", "--set", "particles.fill.1.center=[0.9,0.9]"], here, Duration::from_secs(60));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("shape = \"circle\", center = [0.9, 0.9]") && !err.contains("Circle {"), "{err}");
}
