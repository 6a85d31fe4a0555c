//! Structure-aware fuzzing of what users write and load: scene files (presets with keys set,
//! removed or retyped, and raw text edits), `--set` overrides and checkpoint files (bytes
//! flipped, cut or inserted, and headers edited with the checksum made to match). Every case
//! must be accepted or refused with an error, never panic; accepted small scenes also step,
//! read and render on the CPU backend. `FLUID_FUZZ_CASES` sets the count (default 100 000, a few minutes in CI);
//! `scripts/fuzz.sh` runs a longer campaign. A case that ever panicked is kept in
//! `regressions()` below.

use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use swirly::{CpuBackend, Scene, Simulation, scene::PRESETS, scene::parse_override};

/// Every key path of `v` under `path` (dotted, arrays by index), tables and arrays included.
fn walk(v: &toml::Value, path: String, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                out.push(p.clone());
                walk(v, p, out);
            }
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                let p = format!("{path}.{i}");
                out.push(p.clone());
                walk(v, p, out);
            }
        }
        _ => {}
    }
}

/// Keys the presets use (dotted, arrays by index), and a few they do not.
fn keys() -> Vec<String> {
    let mut out = Vec::new();
    for (_, text) in PRESETS {
        let table: toml::Value = toml::from_str(text).expect("preset");
        walk(&table, String::new(), &mut out);
    }
    out.extend(
        ["params.bogus", "grid.h", "emitters.7", "render.ramp.9.0", "initial.velocity.seed", "x.y.z"].map(String::from),
    );
    out.sort();
    out.dedup();
    out
}

/// Numbers a parser or a solver finds hard.
const HARD_FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e-50,
    -1e-50,
    1e-12,
    1e12,
    1e30,
    3.5e38,
    1e300,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN_POSITIVE,
    1e-45,
];
const HARD_INTS: &[i64] = &[0, 1, -1, 2, 3, 7, 16, 33, 4096, 32769, 65536, 100_001, 1 << 31, i64::MAX, i64::MIN];
const WORDS: &[&str] = &[
    "",
    "smoke",
    "multigrid",
    "mgpcg",
    "jacobi",
    "sor",
    "relaxation",
    "poisson-filter",
    "gaussian",
    "linear",
    "wall",
    "periodic",
    "open",
    "density",
    "dye",
    "curl",
    "taylor-green",
    "random",
    "zero",
    "#ff000080",
    "#zz",
    "double-float",
    "single",
    "../../x",
    "é",
    "a b",
];

fn value() -> impl Strategy<Value = toml::Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(toml::Value::Boolean),
        prop::sample::select(HARD_INTS).prop_map(toml::Value::Integer),
        any::<i64>().prop_map(toml::Value::Integer),
        prop::sample::select(HARD_FLOATS).prop_map(toml::Value::Float),
        (-4.0f64..4.0).prop_map(toml::Value::Float),
        prop::sample::select(WORDS).prop_map(|w| toml::Value::String(w.to_string())),
        "[ -~]{0,12}".prop_map(toml::Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(toml::Value::Array),
            prop::collection::vec(("[a-z_]{1,10}", inner), 0..5)
                .prop_map(|kv| toml::Value::Table(kv.into_iter().collect())),
        ]
    })
}

/// One edit of a scene's table: a value of any type, the value there nudged (a number scaled,
/// a flag flipped, another word), or the key removed.
#[derive(Clone, Debug)]
enum Edit {
    Set(String, toml::Value),
    Nudge(String, f64, usize),
    Remove(String),
}

fn edit(keys: Vec<String>) -> impl Strategy<Value = Edit> {
    let key = prop::sample::select(keys);
    let factor = prop_oneof![Just(0.0), Just(-1.0), Just(2.0), Just(0.5), Just(1e6), Just(1e-6), -3.0f64..3.0];
    prop_oneof![
        1 => (key.clone(), value()).prop_map(|(k, v)| Edit::Set(k, v)),
        4 => (key.clone(), factor, any::<usize>()).prop_map(|(k, f, w)| Edit::Nudge(k, f, w)),
        1 => key.prop_map(Edit::Remove),
    ]
}

/// The value at `path` (dotted; a number indexes an array) in `table`, made where a table is
/// missing on the way; `None` where the path runs through a value that is neither.
fn slot<'a>(table: &'a mut toml::Table, path: &str) -> Option<(&'a mut toml::Table, String)> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut node = table;
    for part in &parts[..parts.len() - 1] {
        let next = node.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        node = match next {
            toml::Value::Table(t) => t,
            _ => return None,
        };
    }
    Some((node, parts[parts.len() - 1].to_string()))
}

/// Apply `edit` to `table` where its path can be followed (paths through arrays are skipped).
fn apply(table: &mut toml::Table, edit: &Edit) {
    match edit {
        Edit::Set(k, v) => {
            if let Some((t, last)) = slot(table, k) {
                t.insert(last, v.clone());
            }
        }
        Edit::Remove(k) => {
            if let Some((t, last)) = slot(table, k) {
                t.remove(&last);
            }
        }
        Edit::Nudge(k, f, w) => {
            if let Some((t, last)) = slot(table, k)
                && let Some(v) = t.get_mut(&last)
            {
                let nudged = match &*v {
                    toml::Value::Integer(i) => toml::Value::Integer((*i as f64 * f).round() as i64),
                    toml::Value::Float(x) => toml::Value::Float(x * f),
                    toml::Value::Boolean(b) => toml::Value::Boolean(!b),
                    toml::Value::String(_) => toml::Value::String(WORDS[w % WORDS.len()].to_string()),
                    other => other.clone(),
                };
                *v = nudged;
            }
        }
    }
}

/// A preset's table on a grid small enough to step in a fuzz case.
fn small_table(text: &str) -> toml::Table {
    let mut table: toml::Table = toml::from_str(text).expect("preset");
    if let Some(toml::Value::Table(grid)) = table.get_mut("grid") {
        grid.insert("nx".into(), toml::Value::Integer(24));
        grid.insert("ny".into(), toml::Value::Integer(20));
    }
    table
}

/// Raw edits of a preset's text: what a hand-edited file can hold.
#[derive(Clone, Debug)]
enum TextEdit {
    Truncate(usize),
    Insert(usize, String),
    Delete(usize, usize),
    DuplicateLine(usize),
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    prop_oneof![
        any::<usize>().prop_map(TextEdit::Truncate),
        (
            any::<usize>(),
            prop::sample::select(vec![
                "[",
                "]",
                "=",
                "\"",
                "\n",
                "[[emitters]]\n",
                "#",
                ".",
                "nan",
                "1e999",
                "{",
                ",",
                "é"
            ])
        )
            .prop_map(|(at, s)| TextEdit::Insert(at, s.to_string())),
        (any::<usize>(), 0usize..40).prop_map(|(at, n)| TextEdit::Delete(at, n)),
        any::<usize>().prop_map(TextEdit::DuplicateLine),
    ]
}

fn apply_text(text: &str, e: &TextEdit) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |k: usize| k % (chars.len() + 1);
    match e {
        TextEdit::Truncate(k) => chars[..at(*k)].iter().collect(),
        TextEdit::Insert(k, s) => {
            let k = at(*k);
            chars[..k].iter().collect::<String>() + s + &chars[k..].iter().collect::<String>()
        }
        TextEdit::Delete(k, n) => {
            let k = at(*k);
            let end = (k + n).min(chars.len());
            chars[..k].iter().chain(&chars[end..]).collect()
        }
        TextEdit::DuplicateLine(k) => {
            let lines: Vec<&str> = text.lines().collect();
            let k = k % lines.len().max(1);
            let mut out: Vec<&str> = lines.clone();
            if let Some(l) = lines.get(k) {
                out.insert(k, l);
            }
            out.join("\n")
        }
    }
}

/// What the cases came to.
#[derive(Default)]
struct Outcomes {
    accepted: AtomicU64,
    refused: AtomicU64,
    stepped: AtomicU64,
    step_errors: AtomicU64,
}

/// Accepted scenes small enough step twice on the CPU, are read and rendered: any error is
/// fine, a panic is not.
fn exercise(scene: Result<Scene, swirly::Error>, out: &Outcomes) {
    let Ok(scene) = scene else {
        out.refused.fetch_add(1, Ordering::Relaxed);
        return;
    };
    out.accepted.fetch_add(1, Ordering::Relaxed);
    let Ok(grid) = scene.grid() else { return };
    let p = &scene.params.pressure;
    if grid.cells() > 40 * 40 || p.iterations > 200 || scene.params.viscosity_iterations > 200 {
        return;
    }
    let run = || -> Result<(), swirly::Error> {
        let mut sim = Simulation::new(scene, CpuBackend::with_threads(1)?)?;
        sim.step(sim.scene().params.dt)?;
        sim.step(sim.scene().params.dt)?;
        sim.diagnostics()?;
        // A particle liquid has no grid velocity to read: its particles' positions instead.
        let read = if sim.carries("positions") { "positions" } else { "u" };
        sim.field(read)?;
        if sim.scene().check_render().is_ok() {
            sim.render()?;
        }
        Ok(())
    };
    match run() {
        Ok(()) => out.stepped.fetch_add(1, Ordering::Relaxed),
        Err(_) => out.step_errors.fetch_add(1, Ordering::Relaxed),
    };
}

fn cases() -> u32 {
    std::env::var("FLUID_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000)
}

/// Cases that once panicked or escaped, kept as they were found: (preset, overrides).
fn regressions() -> Vec<(&'static str, Vec<String>)> {
    vec![
        // 25,000 dotted parts overflowed the stack.
        ("smoke", vec![format!("{}a=1", "a.".repeat(25_000))]),
        // A name led the output folder out of out/.
        ("smoke", vec!["name=../../x".into()]),
    ]
}

#[test]
fn fuzzed_scene_files_and_overrides_never_panic() {
    let keys = keys();
    let presets: Vec<(&str, &str)> = PRESETS.to_vec();
    let out = Outcomes::default();
    let total = cases();
    // A third each: edited tables, edited text, overrides.
    let config = Config { cases: total / 3, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config.clone());
    let tables = (prop::sample::select(presets.clone()), prop::collection::vec(edit(keys.clone()), 1..6));
    runner
        .run(&tables, |((_, text), edits)| {
            let mut table = small_table(text);
            edits.iter().for_each(|e| apply(&mut table, e));
            // A table toml cannot write (a NaN key, say) is no scene a user could write.
            if let Ok(text) = toml::to_string(&table) {
                exercise(Scene::from_toml(&text, "fuzz"), &out);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("an edited scene table: {e}"));
    let mut runner = TestRunner::new(config.clone());
    let texts = (prop::sample::select(presets.clone()), prop::collection::vec(text_edit(), 1..4));
    runner
        .run(&texts, |((_, text), edits)| {
            let small = toml::to_string(&small_table(text)).expect("a preset writes");
            let text = edits.iter().fold(small, |t, e| apply_text(&t, e));
            exercise(Scene::from_toml(&text, "fuzz"), &out);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("an edited scene text: {e}"));
    let mut runner = TestRunner::new(config);
    let overrides = (
        prop::sample::select(presets.iter().map(|(n, _)| *n).collect::<Vec<_>>()),
        prop::collection::vec((prop::sample::select(keys), value(), "[ -~]{0,8}", any::<bool>()), 1..4),
    );
    runner
        .run(&overrides, |(preset, sets)| {
            let items: Vec<String> = sets
                .iter()
                .map(|(k, v, raw, as_raw)| if *as_raw { format!("{k}={raw}") } else { format!("{k}={v}") })
                .collect();
            let small = ["grid.nx=24", "grid.ny=20"].map(String::from);
            let parsed: Result<Vec<_>, _> = small.iter().chain(&items).map(|s| parse_override(s)).collect();
            match parsed {
                Ok(ov) => exercise(Scene::preset_with(preset, &ov), &out),
                Err(_) => {
                    out.refused.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("overrides: {e}"));
    for (preset, sets) in regressions() {
        let ov: Result<Vec<_>, _> = sets.iter().map(|s| parse_override(s)).collect();
        let scene = ov.and_then(|ov| Scene::preset_with(preset, &ov));
        assert!(scene.is_err(), "{preset} with {:.60?}: accepted", sets);
        exercise(scene, &out);
    }
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let (accepted, refused) = (load(&out.accepted), load(&out.refused));
    println!(
        "fuzz: {} cases: {accepted} accepted ({} stepped, {} stopped with an error), {refused} refused, 0 panics",
        accepted + refused,
        load(&out.stepped),
        load(&out.step_errors)
    );
    // The generators reach both sides: a fuzzer that only ever builds broken scenes tests little.
    assert!(accepted > 0 && refused > 0 && load(&out.stepped) > 0, "accepted {accepted}, refused {refused}");
}

/// A checkpoint of `preset` at 24 × 20 after two steps, with a splat queued (but in a particle
/// scene).
fn checkpoint_of(text: &str) -> Vec<u8> {
    let scene = Scene::from_toml(&toml::to_string(&small_table(text)).expect("toml"), "fuzz").expect("scene");
    let mut sim = Simulation::new(scene, CpuBackend::with_threads(1).expect("cpu")).expect("simulation");
    sim.step(sim.scene().params.dt).expect("step");
    sim.step(sim.scene().params.dt).expect("step");
    let h = sim.frame().height();
    let splat =
        swirly::Splat { center: [0.4 * h, 0.5 * h], radius: 0.1 * h, velocity: [0.3, 0.1], ..Default::default() };
    // The particle liquid takes no splats.
    if sim.scene().particles.is_none() {
        sim.splat(splat).expect("splat");
    }
    let mut bytes = Vec::new();
    sim.save(&mut bytes).expect("save");
    bytes
}

/// Damage done to a checkpoint file.
#[derive(Clone, Debug)]
enum FileEdit {
    /// XOR a byte.
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    /// Edit the header as a table; the length and checksum are rewritten to match.
    Header(Vec<Edit>),
}

fn file_edit(header_keys: Vec<String>) -> impl Strategy<Value = FileEdit> {
    prop_oneof![
        1 => (any::<usize>(), 1..=255u8).prop_map(|(at, x)| FileEdit::Flip(at, x)),
        1 => any::<usize>().prop_map(FileEdit::Truncate),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, x)| FileEdit::Insert(at, x)),
        3 => prop::collection::vec(edit(header_keys), 1..4).prop_map(FileEdit::Header),
    ]
}

fn damage(good: &[u8], e: &FileEdit) -> Vec<u8> {
    let mut bytes = good.to_vec();
    match e {
        // An earlier cut may have left nothing to flip or cut.
        FileEdit::Flip(..) | FileEdit::Truncate(_) if bytes.is_empty() => {}
        FileEdit::Flip(at, x) => {
            let at = at % bytes.len();
            bytes[at] ^= x;
        }
        FileEdit::Truncate(len) => bytes.truncate(len % bytes.len()),
        FileEdit::Insert(at, x) => bytes.insert(at % (bytes.len() + 1), *x),
        FileEdit::Header(edits) => {
            // After an earlier edit the header may not read: leave such a file as it is.
            let Ok((header, _)) = swirly::checkpoint::read_header(good) else { return bytes };
            let mut table = toml::Table::try_from(&header).expect("table");
            edits.iter().for_each(|e| apply(&mut table, e));
            let Ok(text) = toml::to_string(&table) else { return bytes };
            // An earlier cut may have left less than the header's length says.
            if let Some(out) = swirly_core::testing::with_header(good, &text) {
                bytes = out;
            }
        }
    }
    bytes
}

#[test]
fn fuzzed_checkpoint_files_never_panic() {
    let files: Vec<Vec<u8>> = PRESETS.iter().map(|(_, text)| checkpoint_of(text)).collect();
    let header_keys = {
        let (header, _) = swirly::checkpoint::read_header(files[0].as_slice()).expect("header");
        // Leaves only (a header is edited value by value), and the tables and lists whole.
        fn leaves(v: &toml::Value, path: String, out: &mut Vec<String>) {
            if let toml::Value::Table(t) = v {
                for (k, v) in t {
                    leaves(v, if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, out);
                }
            } else {
                out.push(path);
            }
        }
        let mut keys = Vec::new();
        leaves(&toml::Value::try_from(&header).expect("value"), String::new(), &mut keys);
        keys.extend(["resources", "scene", "time", "queued"].map(String::from));
        keys
    };
    let (accepted, refused, stepped) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let config = Config { cases: cases() / 4, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let strategy = (0..files.len(), prop::collection::vec(file_edit(header_keys), 1..3));
    runner
        .run(&strategy, |(which, edits)| {
            let bytes = edits.iter().fold(files[which].clone(), |b, e| damage(&b, e));
            match Simulation::load(bytes.as_slice(), CpuBackend::with_threads(1).expect("cpu")) {
                Err(_) => {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
                Ok(mut sim) => {
                    accepted.fetch_add(1, Ordering::Relaxed);
                    let small = sim.frame().cells() <= 40 * 40 && sim.scene().params.pressure.iterations <= 200;
                    if small && sim.step(sim.scene().params.dt).is_ok() && sim.save(&mut Vec::new()).is_ok() {
                        stepped.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("a damaged checkpoint: {e}"));
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "fuzz: {} checkpoint files: {} restored ({} stepped and saved again), {} refused, 0 panics",
        load(&accepted) + load(&refused),
        load(&accepted),
        load(&stepped),
        load(&refused)
    );
    assert!(load(&accepted) > 0 && load(&refused) > 0, "both sides reached");
}

/// CRC-32 of PNG chunks (the IEEE polynomial), to forge headers.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// `png` (a PNG whose first chunk is its IHDR) claiming `w` × `h` pixels, its CRC made to
/// match: a decompression bomb's header over the pixels of a small image.
fn with_size(png: &[u8], w: u32, h: u32) -> Vec<u8> {
    let mut out = png.to_vec();
    out[16..20].copy_from_slice(&w.to_be_bytes());
    out[20..24].copy_from_slice(&h.to_be_bytes());
    let crc = crc32(&out[12..29]);
    out[29..33].copy_from_slice(&crc.to_be_bytes());
    out
}

/// The paths a fuzzed scene names its images by, as written in it, and the files they lead
/// to: good PNGs, damaged and forged ones (a 20000 × 20000 header over a small image), other
/// files, special files (a FIFO, devices, a folder), symbolic links (to a device, out of the
/// scene's folder, dangling, a loop), paths out of the folder, and names no file system takes.
/// `home` is the scene's folder; `mutant.png` in it is rewritten by each case.
fn image_zoo(root: &std::path::Path) -> (std::path::PathBuf, Vec<String>) {
    use std::os::unix::fs::symlink;
    let home = root.join("scene");
    std::fs::create_dir_all(home.join("sub")).expect("folder");
    let grate = swirly_core::scene::PRESET_IMAGES[0].1;
    let write = |name: &str, bytes: &[u8]| std::fs::write(home.join(name), bytes).expect("write");
    write("ok.png", grate);
    write("sub/slats.png", swirly_core::scene::PRESET_IMAGES[1].1);
    write("mutant.png", grate);
    write("empty.png", b"");
    write("text.png", b"[grid]\nnx = 8\n");
    write("bomb.png", &with_size(grate, 20000, 20000));
    write("wide.png", &with_size(grate, 16385, 1));
    write("zero-size.png", &with_size(grate, 0, 7));
    for cut in [8, 20, 33, 60, grate.len() / 2, grate.len() - 12] {
        write(&format!("cut{cut}.png"), &grate[..cut]);
    }
    std::fs::write(root.join("outside.png"), grate).expect("write");
    assert!(std::process::Command::new("mkfifo").arg(home.join("fifo.png")).status().expect("mkfifo").success());
    std::fs::File::create(home.join("huge.png")).and_then(|f| f.set_len(1 << 30)).expect("sparse");
    std::fs::create_dir_all(home.join("folder.png")).expect("folder");
    symlink("/dev/zero", home.join("zero.png")).expect("symlink");
    symlink("/dev/null", home.join("null.png")).expect("symlink");
    symlink("../outside.png", home.join("out-link.png")).expect("symlink");
    symlink("nowhere.png", home.join("dangling.png")).expect("symlink");
    symlink("loop.png", home.join("loop.png")).expect("symlink");
    symlink("fifo.png", home.join("fifo-link.png")).expect("symlink");
    let outside = root.join("outside.png").display().to_string();
    let mut paths: Vec<String> = [
        "grate.png",
        "bricks.png",
        "ok.png",
        "./ok.png",
        "sub/slats.png",
        "sub/../ok.png",
        "mutant.png",
        "empty.png",
        "text.png",
        "bomb.png",
        "wide.png",
        "zero-size.png",
        "fifo.png",
        "fifo-link.png",
        "huge.png",
        "folder.png",
        "zero.png",
        "null.png",
        "out-link.png",
        "dangling.png",
        "loop.png",
        "missing.png",
        "../outside.png",
        "sub/../../outside.png",
        "",
        ".",
        "/",
        "/dev/zero",
        "/dev/stdin",
        "/proc/self/mem",
        "/proc/self/pagemap",
        "a\u{0}b.png",
    ]
    .map(String::from)
    .to_vec();
    paths.extend([grate.len() / 2, grate.len() - 12].iter().chain(&[8, 20, 33, 60]).map(|c| format!("cut{c}.png")));
    paths.push(outside);
    paths.push("x".repeat(5000));
    (home, paths)
}

/// Paths of the zoo that no scene may read an image from, whoever names them.
const NEVER_READ: &[&str] = &[
    "empty.png",
    "text.png",
    "bomb.png",
    "wide.png",
    "zero-size.png",
    "fifo.png",
    "fifo-link.png",
    "huge.png",
    "folder.png",
    "zero.png",
    "null.png",
    "dangling.png",
    "loop.png",
    "missing.png",
    "",
    ".",
    "/",
    "/dev/zero",
    "/dev/stdin",
    "/proc/self/mem",
    "/proc/self/pagemap",
    "a\u{0}b.png",
    "cut8.png",
    "cut20.png",
    "cut33.png",
    "cut60.png",
];

/// One fuzzed use of an image: the mask's path and the background's, written in the scene
/// file or given by `--set`, the scene file itself sometimes one of the zoo, and damage done
/// to `mutant.png`.
#[derive(Clone, Debug)]
struct ImageCase {
    mask: Option<usize>,
    background: Option<usize>,
    by_set: bool,
    scene_is: Option<usize>,
    mutation: Vec<FileEdit>,
}

#[test]
fn fuzzed_image_and_scene_paths_never_panic_or_hang() {
    let root = std::env::temp_dir().join(format!("fluid-fuzz-images-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (home, zoo) = image_zoo(&root);
    let n = zoo.len();
    let (accepted, refused, stepped) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let total = (cases() / 50).max(200);
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let worker = {
        let (home, zoo, counts) = (home.clone(), zoo.clone(), (&accepted, &refused, &stepped));
        move || {
            let byte_edit = prop_oneof![
                (any::<usize>(), 1..=255u8).prop_map(|(at, x)| FileEdit::Flip(at, x)),
                any::<usize>().prop_map(FileEdit::Truncate),
                (any::<usize>(), any::<u8>()).prop_map(|(at, x)| FileEdit::Insert(at, x)),
            ];
            let strategy = (
                prop::option::of(0..n),
                prop::option::weighted(0.3, 0..n),
                any::<bool>(),
                prop::option::weighted(0.1, 0..n),
                prop::collection::vec(byte_edit, 0..3),
            )
                .prop_map(|(mask, background, by_set, scene_is, mutation)| ImageCase {
                    mask,
                    background,
                    by_set,
                    scene_is,
                    mutation,
                });
            let config = Config { cases: total, failure_persistence: None, ..Config::default() };
            let mut runner = TestRunner::new(config);
            let (accepted, refused, stepped) = counts;
            runner
                .run(&strategy, |case| {
                    let _ = tx.send(format!("{case:?}"));
                    let grate = swirly_core::scene::PRESET_IMAGES[0].1.to_vec();
                    let mutant = case.mutation.iter().fold(grate, |b, e| damage(&b, e));
                    std::fs::write(home.join("mutant.png"), mutant).expect("mutant");
                    let mut text = String::from("[grid]\nnx = 24\nny = 20\n[params.pressure]\nsolver = \"sor\"\n");
                    let mut sets = Vec::new();
                    if let Some(k) = case.background {
                        let line = format!("background_image = {:?}", zoo[k]);
                        match case.by_set {
                            true => sets.push(format!("render.{line}")),
                            false => text += &format!("[render]\n{line}\n"),
                        }
                    }
                    if let Some(k) = case.mask {
                        let mask = format!("{{ shape = \"mask\", image = {:?}, size = [0.5, 0.3] }}", zoo[k]);
                        match case.by_set {
                            true => sets.push(format!("obstacles=[{mask}]")),
                            false => text += &format!("obstacles = [{mask}]\n"),
                        }
                    }
                    let file = match case.scene_is {
                        Some(k) => home.join(&zoo[k]),
                        None => {
                            std::fs::write(home.join("case.toml"), &text).expect("scene");
                            home.join("case.toml")
                        }
                    };
                    let scene = sets
                        .iter()
                        .map(|s| parse_override(s))
                        .collect::<Result<Vec<_>, _>>()
                        .and_then(|ov| Scene::from_file(&file, &ov));
                    let named = [case.mask, case.background].into_iter().flatten().map(|k| zoo[k].as_str());
                    let must_refuse = case.scene_is.is_some()
                        || named.clone().any(|p| NEVER_READ.contains(&p) || p.starts_with("xxxx"))
                        || (!case.by_set && named.clone().any(|p| p.contains("outside") || p == "out-link.png"));
                    match scene {
                        Err(_) => {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(_) if must_refuse => panic!("accepted {case:?} ({:?})", named.collect::<Vec<_>>()),
                        Ok(scene) => {
                            accepted.fetch_add(1, Ordering::Relaxed);
                            let run = || -> Result<(), swirly::Error> {
                                let mut sim = Simulation::new(scene, CpuBackend::with_threads(1)?)?;
                                sim.step(sim.scene().params.dt)?;
                                sim.render()?;
                                Ok(())
                            };
                            if run().is_ok() {
                                stepped.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("an image path: {e}"));
        }
    };
    std::thread::scope(|s| {
        let handle = s.spawn(worker);
        // A case that hangs (a FIFO opened, a device read to its end) sends nothing more.
        let mut last = String::from("the first case");
        loop {
            match rx.recv_timeout(std::time::Duration::from_secs(60)) {
                Ok(case) => last = case,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("hung for 60 s on {last}"),
            }
        }
        if let Err(e) = handle.join() {
            std::panic::resume_unwind(e);
        }
    });
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "fuzz: {} image and scene paths: {} accepted ({} stepped and drawn), {} refused, 0 panics, 0 hangs",
        load(&accepted) + load(&refused),
        load(&accepted),
        load(&stepped),
        load(&refused)
    );
    assert!(load(&accepted) > 0 && load(&refused) > 0, "both sides reached");
    let _ = std::fs::remove_dir_all(&root);
}
