//! The `fluid` program under fuzzed command lines, each case its own process: a preset with one
//! of its keys set to a hostile or random value through `--set`, or a preset's scene file with
//! its text edited (a line dropped or repeated, a value replaced, the file cut, bytes thrown
//! in), run for two steps on a small grid within a 64 MiB budget; and, a case in four, a
//! scene whose mask or background names a file of a zoo of hostile ones (a FIFO, devices, a
//! folder, a 1 GB file, a PNG bomb, damaged PNGs, symbolic links to devices, out of the
//! scene's folder, dangling or looping), in the file or by `--set`, or a scene path that is
//! one of them. A third of the other cases also write outputs (dumps, probes, PNG frames,
//! checkpoints) into a folder where links to a file outside it are planted under the names
//! they take. Every run must exit 0 (it ran), 1 (it stopped: a state check or the device
//! failed) or 2 (the input was refused) within 60 s, print no panic and end by no signal; a
//! scene that names a file no scene may read must exit 2; the file the planted links lead to
//! must stay as it was. `FLUID_CLI_FUZZ_CASES` sets the
//! count (2000 by default; `scripts/fuzz.sh` runs more) and the test prints the tally.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use swirly_core::scene::SplitMix64;

/// Values a key may be set to, beside random numbers.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "0.5",
    "-0.0",
    "3",
    "1e30",
    "-1e30",
    "1e-30",
    "1e-45",
    "nan",
    "inf",
    "-inf",
    "4294967297",
    "-9223372036854775808",
    "\"\"",
    "\"x\"",
    "true",
    "[]",
    "[1, 2]",
    "[0.5, 0.5, 7]",
    "{}",
    "{a = 1}",
    "\"../../x\"",
];

/// Every key of a scene as `--set` writes it (tables and arrays by their paths).
fn keys(value: &serde_json::Value, key: &str, out: &mut Vec<String>) {
    if !key.is_empty() {
        out.push(key.to_string());
    }
    let join = |k: &str| if key.is_empty() { k.to_string() } else { format!("{key}.{k}") };
    match value {
        serde_json::Value::Object(o) => o.iter().for_each(|(k, v)| keys(v, &join(k), out)),
        serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| keys(v, &join(&i.to_string()), out)),
        _ => {}
    }
}

fn pick<'a, T>(rng: &mut SplitMix64, items: &'a [T]) -> &'a T {
    &items[(rng.next_u64() % items.len() as u64) as usize]
}

fn value(rng: &mut SplitMix64) -> String {
    match rng.next_u64() % 3 {
        0 => format!("{}", (rng.next_f32() - 0.5) * 10f32.powi((rng.next_u64() % 12) as i32 - 4)),
        1 => format!("{}", rng.next_u64() % 100),
        _ => pick(rng, VALUES).to_string(),
    }
}

/// The scene file's text with one edit.
fn edited(rng: &mut SplitMix64, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let k = (rng.next_u64() % lines.len().max(1) as u64) as usize;
    match rng.next_u64() % 5 {
        0 => {
            lines.remove(k);
        }
        1 => {
            let line = lines[k].clone();
            lines.insert(k, line);
        }
        2 => {
            if let Some((key, _)) = lines[k].split_once('=') {
                lines[k] = format!("{key}= {}", value(rng));
            }
        }
        3 => {
            let cut = (rng.next_u64() % text.len().max(1) as u64) as usize;
            return text.get(..cut).unwrap_or(text).to_string();
        }
        _ => {
            let junk = *pick(rng, &["[", "]", "\"", "{", "=", "\0", "ü", "[[", "nan", "1e999"]);
            let at = (rng.next_u64() % (lines[k].len() as u64 + 1)) as usize;
            if lines[k].is_char_boundary(at) {
                lines[k].insert_str(at, junk);
            }
        }
    }
    lines.join("\n")
}

/// A PNG claiming `w` × `h` pixels of one bit, all zero: a few kilobytes that decode to
/// `w · h` pixels.
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

/// Files a scene's images are named by, in `dir/zoo/scene` (the scenes' folder): the path as
/// a scene writes it, and whether no scene may read an image from it (given in the file: an
/// image outside the folder; by `--set` only what is no PNG to read).
fn zoo(dir: &Path) -> (PathBuf, Vec<(String, bool, bool)>) {
    use std::os::unix::fs::symlink;
    let home = dir.join("zoo/scene");
    std::fs::create_dir_all(home.join("sub")).expect("zoo");
    let grate =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fluid-core/scenes/grate.png")).expect("grate");
    std::fs::write(home.join("ok.png"), &grate).expect("write");
    std::fs::write(home.join("cut.png"), &grate[..grate.len() / 2]).expect("write");
    std::fs::write(home.join("text.png"), "not an image").expect("write");
    std::fs::write(home.join("empty.png"), "").expect("write");
    std::fs::write(dir.join("zoo/outside.png"), &grate).expect("write");
    bomb(&home.join("bomb.png"), 20000, 20000);
    std::fs::File::create(home.join("huge.png")).and_then(|f| f.set_len(1 << 30)).expect("sparse");
    assert!(std::process::Command::new("mkfifo").arg(home.join("fifo.png")).status().expect("mkfifo").success());
    std::fs::create_dir_all(home.join("folder.png")).expect("folder");
    symlink("/dev/zero", home.join("zero.png")).expect("symlink");
    symlink("/dev/urandom", home.join("random.png")).expect("symlink");
    symlink("fifo.png", home.join("fifo-link.png")).expect("symlink");
    symlink("../outside.png", home.join("out-link.png")).expect("symlink");
    symlink("nowhere.png", home.join("dangling.png")).expect("symlink");
    symlink("loop.png", home.join("loop.png")).expect("symlink");
    let outside = dir.join("zoo/outside.png").display().to_string();
    // (path, refused in a file, refused by --set)
    let never = |p: &str| (p.to_string(), true, true);
    let mut out = vec![
        ("grate.png".to_string(), false, false),
        ("ok.png".to_string(), false, false),
        ("sub/../ok.png".to_string(), false, false),
        ("../outside.png".to_string(), true, false),
        ("out-link.png".to_string(), true, false),
        (outside, true, false),
    ];
    out.extend(
        [
            "cut.png",
            "text.png",
            "empty.png",
            "bomb.png",
            "huge.png",
            "fifo.png",
            "fifo-link.png",
            "folder.png",
            "zero.png",
            "random.png",
            "dangling.png",
            "loop.png",
            "missing.png",
            "/dev/zero",
            "/dev/stdin",
            "/proc/self/mem",
        ]
        .map(never),
    );
    (home, out)
}

/// A case whose scene's images (or the scene path itself) come from the zoo, and whether it
/// must be refused.
fn image_case(
    rng: &mut SplitMix64,
    k: u64,
    dir: &Path,
    home: &Path,
    zoo: &[(String, bool, bool)],
) -> (Vec<String>, bool) {
    let (path, in_file, by_set) = pick(rng, zoo).clone();
    let set = rng.next_u64().is_multiple_of(2);
    let background = rng.next_u64().is_multiple_of(3);
    let out = dir.join(format!("out{k}")).display().to_string();
    let small = ["--steps", "2", "--set", "grid.nx=16", "--set", "grid.ny=12", "--out", &out].map(String::from);
    if rng.next_u64().is_multiple_of(8) {
        // The scene path itself: no zoo file is a scene (but the empty one, which the
        // overrides' grid makes one).
        let mut args = vec!["run".to_string(), home.join(&path).display().to_string()];
        args.extend(small);
        return (args, path != "empty.png");
    }
    let mut text = String::from("[grid]\nnx = 16\nny = 12\n[params.pressure]\nsolver = \"sor\"\n");
    let (key, line) = if background {
        ("render.background_image".to_string(), format!("[render]\nbackground_image = {path:?}\n"))
    } else {
        let mask = format!("{{ shape = \"mask\", image = {path:?}, size = [0.5, 0.3] }}");
        (format!("obstacles=[{mask}]"), format!("obstacles = [{mask}]\n"))
    };
    let mut args = vec!["run".to_string()];
    let file = home.join(format!("case{k}.toml"));
    if set {
        std::fs::write(&file, &text).expect("scene");
        args.push(file.display().to_string());
        args.extend(small);
        args.push("--set".to_string());
        args.push(if background { format!("{key}={path:?}") } else { key });
    } else {
        text += &line;
        std::fs::write(&file, &text).expect("scene");
        args.push(file.display().to_string());
        args.extend(small);
    }
    if background {
        args.push("--png".to_string());
    }
    (args, if set { by_set } else { in_file })
}

/// Names a run's outputs take in its folder, each planted as a link to `victim` in `dir`.
const PLANTED: [&str; 8] = [
    "density.npy",
    "density.npy.part",
    "probes.csv",
    "probes.csv.part",
    "frame_00000.png",
    "frame_00001.png.part",
    "checkpoint_000001.fluid",
    "checkpoint_000002.fluid.part",
];

/// Case `k`'s output folder with [`PLANTED`] links to `dir/victim`.
fn plant(dir: &Path, k: u64) {
    let out = dir.join(format!("out{k}"));
    std::fs::create_dir_all(&out).expect("out");
    for name in PLANTED {
        std::os::unix::fs::symlink(dir.join("victim"), out.join(name)).expect("link");
    }
}

/// One case's command line: a preset and an override, or an edited scene file in `dir`; a
/// third of them also write outputs into a folder with links planted in it ([`plant`]).
fn case(rng: &mut SplitMix64, k: u64, dir: &Path, presets: &[(String, Vec<String>, String)]) -> Vec<String> {
    let (name, keys, text) = pick(rng, presets);
    // A budget keeps a fuzzed particle fill (millions of particles) from a long run: over it,
    // the liquid is refused (it is never downscaled).
    let small =
        ["--set", "grid.nx=16", "--set", "grid.ny=12", "--set", "storage.budget=\"64 MiB\"", "--steps", "2", "--out"]
            .map(String::from);
    let out = dir.join(format!("out{k}")).display().to_string();
    let mut args = vec!["run".to_string()];
    if rng.next_u64().is_multiple_of(3) {
        // Outputs into a folder with links planted under the names they take.
        plant(dir, k);
        let outputs = ["--dump", "density", "--probe", "0.5,0.5", "--png", "--frame-every", "1", "--save-every", "1"];
        args.extend(outputs.map(String::from));
    }
    if rng.next_u64().is_multiple_of(2) {
        let file = dir.join(format!("case{k}.toml"));
        std::fs::write(&file, edited(rng, text)).expect("write scene");
        args.push(file.display().to_string());
        args.extend(small);
        args.push(out);
    } else {
        args.push(name.clone());
        args.extend(small);
        args.push(out);
        args.extend(["--set".to_string(), format!("{}={}", pick(rng, keys), value(rng))]);
    }
    args
}

/// The tally of outcomes: exit 0, 1, 2.
#[derive(Default, Debug)]
struct Tally {
    ran: u64,
    stopped: u64,
    refused: u64,
    /// Cases of the image zoo, and those of them refused.
    images: u64,
    images_refused: u64,
    /// Why some runs stopped (the first line of their message), a few of them.
    why_stopped: Vec<String>,
}

#[test]
fn fuzzed_command_lines_exit_0_1_or_2_without_a_panic_or_signal() {
    let cases: u64 = std::env::var("FLUID_CLI_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let presets: Vec<(String, Vec<String>, String)> = swirly::scene::PRESETS
        .iter()
        .map(|(name, text)| {
            let scene = swirly::Scene::preset(name).expect("preset");
            let mut k = Vec::new();
            keys(&serde_json::to_value(&scene).expect("json"), "", &mut k);
            (name.to_string(), k, text.to_string())
        })
        .collect();
    let dir = common::temp_dir("fuzz");
    let (home, zoo) = zoo(&dir);
    std::fs::write(dir.join("victim"), "keep").expect("victim");
    let tally = Mutex::new(Tally::default());
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    std::thread::scope(|s| {
        for w in 0..workers {
            let (presets, dir, tally, home, zoo) = (&presets, &dir, &tally, &home, &zoo);
            s.spawn(move || {
                let mut rng = SplitMix64(seed ^ (w + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                for k in (w..cases).step_by(workers as usize) {
                    let (args, must_refuse) = match rng.next_u64() % 4 {
                        0 => {
                            let (args, refuse) = image_case(&mut rng, k, dir, home, zoo);
                            (args, Some(refuse))
                        }
                        _ => (case(&mut rng, k, dir, presets), None),
                    };
                    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                    let out = common::fluid_in(&argv, dir, Duration::from_secs(60));
                    let err = common::text(&out.stderr);
                    let line = args.join(" ");
                    assert!(out.status.signal().is_none(), "`fluid {line}` ended by signal {:?}", out.status.signal());
                    assert!(!err.contains("panicked"), "`fluid {line}` panicked: {err}");
                    if must_refuse == Some(true) {
                        assert_eq!(out.status.code(), Some(2), "`fluid {line}` read what no scene may: {err}");
                    }
                    let victim = std::fs::read(dir.join("victim")).expect("victim");
                    assert_eq!(victim, b"keep", "`fluid {line}` wrote through a link in its output folder");
                    let mut t = tally.lock().expect("tally");
                    if must_refuse.is_some() {
                        t.images += 1;
                        t.images_refused += u64::from(out.status.code() == Some(2));
                    }
                    match out.status.code() {
                        Some(0) => t.ran += 1,
                        Some(1) => {
                            t.stopped += 1;
                            let why = err.lines().next().unwrap_or("").chars().take(160).collect::<String>();
                            if t.why_stopped.len() < 4 && !t.why_stopped.contains(&why) {
                                t.why_stopped.push(why);
                            }
                        }
                        Some(2) => t.refused += 1,
                        code => panic!("`fluid {line}` exited {code:?}: {err}"),
                    }
                    drop(t);
                    let _ = std::fs::remove_dir_all(dir.join(format!("out{k}")));
                    let _ = std::fs::remove_file(dir.join(format!("case{k}.toml")));
                    let _ = std::fs::remove_file(home.join(format!("case{k}.toml")));
                }
            });
        }
    });
    let t = tally.into_inner().expect("tally");
    println!(
        "cli fuzz: {cases} runs: {} exit 0, {} exit 1, {} exit 2, 0 panics, 0 signals, 0 hangs (seed {seed}); \
         {} of them from the image zoo, {} refused",
        t.ran, t.stopped, t.refused, t.images, t.images_refused
    );
    for why in &t.why_stopped {
        println!("  stopped: {why}");
    }
    assert!(t.ran > 0 && t.refused > 0, "both sides reached: {t:?}");
    assert!(t.images > t.images_refused && t.images_refused > 0, "both sides reached by the zoo: {t:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
