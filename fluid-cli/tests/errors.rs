//! The `fluid` program on bad input: clear messages and exit code 2, runs that blow up or
//! outrun the grid stopped with exit code 1, hostile option values never panicking.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

#[test]
fn bad_input_gets_a_clear_message_and_exit_code_2() {
    bad(&["run", "smokey"], &["unknown preset", "smokey", "smoke"]);
    bad(&["run", "smoke", "--dump", "velocity"], &["unknown field", "velocity"]);
    bad(&["run", "smoke", "--set", "params.dt=nan"], &["params.dt", "NaN"]);
    bad(&["run", "smoke", "--set", "params.dt=inf"], &["params.dt", "inf"]);
    bad(&["run", "smoke", "--set", "params.dt=1e300"], &["params.dt", "1e300", "f32"]);
    bad(&["run", "smoke", "--set", "params.viscosity=1e-50"], &["params.viscosity", "1e-50", "f32"]);
    bad(&["run", "smoke", "--set", "grid.nx=0"], &["grid.nx", "0"]);
    bad(&["run", "smoke", "--set", "grid.h=-1"], &["grid.h", "-1"]);
    bad(&["run", "smoke", "--set", "grid.h=1e-30"], &["grid.h", "1e-30", "1e-12"]);
    bad(&["run", "smoke", "--set", "emitters.3.radius=0.1"], &["emitters", "`3` is not an index"]);
    bad(&["run", "smoke", "--set", "params.viscosity=-0.1"], &["params.viscosity", "-0.1"]);
    // Settings that act on a field the scene does not carry would do nothing without a word.
    bad(&["run", "smoke", "--dump", "dye"], &["--dump", "dye", "params.fields.dye = false"]);
    bad(&["run", "ink", "--png", "--set", "render.field=density"], &["render.field", "density", "blank"]);
    bad(&["run", "smoke", "--set", "params.fields.temperature=false"], &["params.thermal_diffusivity", "0.001"]);
    bad(&["run", "ink", "--set", "emitters.0.density=2"], &["emitters[0].density", "2", "params.fields.density"]);
    // A step records every sweep; 10^8 of them would exhaust memory before the first ran.
    bad(
        &["run", "smoke", "--set", "params.pressure.iterations=100000000"],
        &["params.pressure.iterations", "100000000", "at most 100000"],
    );
    bad(&["run", "smoke", "--set", "grid.nx=30000", "--set", "grid.ny=30000"], &["30000x30000", "bytes"]);
    bad(&["run", "smoke", "--set", "params.viscosityy=1"], &["viscosityy"]);
    bad(&["run", "smoke", "--set", "params=[]"], &["`params` is a table", "[]"]);
    bad(&["run", "smoke", "--backend", "wgpu", "--threads", "4"], &["--threads", "4", "the wgpu backend has none"]);
    bad(&["run", "smoke", "--set", "params.pressure.solver=magic"], &["magic"]);
    bad(&["run", "smoke", "--set", "novalue"], &["novalue", "key=value"]);
    bad(
        &["run", "smoke", "--set", "params.boundary.x=periodic", "--set", "params.boundary.left=inflow"],
        &["params.boundary.left", "params.boundary.x", "periodic"],
    );
    bad(
        &["run", "smoke", "--set", "params.boundary.top={type=\"wall\", velocity=1}"],
        &["params.boundary.top.velocity", "no-slip"],
    );
    bad(
        &["run", "smoke", "--set", "params.boundary.top=open", "--set", "params.pressure.solver=poisson-filter"],
        &["poisson-filter", "open or inflow sides"],
    );
    bad(&["run", "smoke", "--set", "params.boundary.top=lava"], &["params.boundary.top", "lava"]);
    bad(&["run", "wind-tunnel", "--probe", "1.5,0.5"], &["--probe", "1.5,0.5", "fractions"]);
    bad(&["run", "smoke", "--set", "steps=0"], &["steps", "0"]);
    bad(&["run", "smoke", "--backend", "metal"], &["metal", "cpu"]);
    bad(&["bench", "--backends", "cpu,metal", "--sizes", "8", "--steps", "1"], &["metal", "known backends"]);
    bad(&["bench", "--backends", "cpu", "--sizes", "0,16", "--steps", "1"], &["--sizes", "[0, 16]", "positive"]);
    // Every size is checked before any backend is measured.
    let out = fluid(&["bench", "--backends", "cpu", "--sizes", "8,40000", "--steps", "1"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("40000") && !err.contains("bandwidth"), "{err}");
    // The particle liquid.
    bad(&["run", "dam-break", "--set", "particles.radius=0"], &["particles.radius", "0", "> 0"]);
    bad(&["run", "dam-break", "--set", "particles.radius=-0.1"], &["particles.radius", "-0.1"]);
    bad(&["run", "dam-break", "--set", "particles.rest_density=0"], &["particles.rest_density", "0"]);
    bad(&["run", "dam-break", "--set", "particles.fill.0.spacing=0.0001"], &["particles.fill", "at most 16000000"]);
    bad(
        &["run", "splash", "--set", "particles.fill.1.center=[0.9,0.9]"],
        &["particles.fill[1]", "{ shape = \"circle\", center = [0.9, 0.9], radius = 0.1", "outside the container"],
    );
    bad(&["run", "dam-break", "--set", "particles.substeps=0"], &["particles.substeps", "0"]);
    bad(
        &["run", "faucet", "--set", "particles.emitters.0.center=[0.0,0.5]"],
        &["particles.emitters[0]", "outside the container"],
    );
    bad(&["run", "faucet", "--set", "particles.emitters.0.velocity=[0,0]"], &["particles.emitters[0].velocity"]);
    bad(&["run", "faucet", "--set", "particles.emitters.0.max_particles=0"], &["particles.emitters[0].max_particles"]);
    bad(&["run", "faucet", "--set", "particles.emitters.0.max_particles=20000000"], &["at most 16000000"]);
    bad(&["run", "goo", "--set", "particles.springs.max_per_particle=33"], &["max_per_particle", "33", "1 to 32"]);
    bad(&["run", "goo", "--set", "particles.stick_distance=2"], &["particles.stick_distance", "2"]);
    bad(&["run", "dam-break", "--dump", "u"], &["--dump", "u", "particle scene"]);
    bad(&["run", "smoke", "--dump", "particles"], &["--dump", "positions", "particle scene"]);
    bad(&["run", "smoke", "--steps", "0"], &["--steps"]);
    bad(&["run", "smoke", "--threads", "100000"], &["threads", "100000", "1024"]);
    bad(&["run", "smoke", "--steps", "-3"], &["-3"]);
    bad(&["run", "/nonexistent/scene.toml"], &["/nonexistent/scene.toml"]);
    // A name is the default output folder: it may not leave out/, in a file or through --set.
    for name in ["../../x", "/abs/path", "..", "a\\b"] {
        let set = format!("name={name}");
        bad(&["run", "smoke", "--steps", "1", "--png", "--set", &set], &["`name`", "output folder"]);
    }
    let scene = temp_dir("name-escapes").join("escape.toml");
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../fluid-core/scenes/smoke.toml"))
        .expect("smoke");
    std::fs::write(&scene, text.replacen("name = \"smoke\"", "name = \"../escaped\"", 1)).expect("write");
    bad(&["run", scene.to_str().expect("utf8"), "--steps", "1", "--png"], &["`name`", "../escaped"]);
    // Options the chosen benchmark would ignore are refused, naming who takes them.
    bad(&["bench", "--solvers", "jacobi", "--sizes", "8", "--steps", "1"], &["--solvers", "`fluid bench solvers`"]);
    bad(&["bench", "--budget-ms", "3", "--sizes", "8"], &["--budget-ms", "`fluid bench solvers`"]);
    bad(&["bench", "solvers", "--steps", "3", "--sizes", "8"], &["--steps", "scene benchmark"]);
    bad(&["bench", "solvers", "--parity-steps", "2", "--sizes", "8"], &["--parity-steps", "scene benchmark"]);
    bad(&["bench", "--precision", "single", "--sizes", "8"], &["--precision", "`fluid bench solvers`"]);
    bad(&["bench", "--jacobi", "solvers", "--sizes", "8"], &["--jacobi", "scene benchmark"]);
    bad(
        &["bench", "solvers", "--solvers", "jacobi", "--precision", "single", "--sizes", "8"],
        &["--precision", "no multigrid"],
    );
    // Flipbooks and transparency: a layout that parses, enough steps, an atlas a texture holds.
    bad(&["run", "smoke", "--flipbook", "8by8"], &["--flipbook", "8by8", "COLSxROWS"]);
    bad(&["run", "smoke", "--flipbook", "0x4"], &["--flipbook", "0x4"]);
    bad(&["run", "smoke", "--steps", "10", "--flipbook", "4x4"], &["--flipbook", "16 frames", "10"]);
    bad(&["run", "smoke", "--steps", "400", "--flipbook", "100x4"], &["--flipbook", "100x4", "16384"]);
    bad(&["run", "smoke", "--gif", "--transparent"], &["--transparent", "GIF"]);
    bad(&["run", "smoke", "--transparent"], &["--transparent", "--png"]);
    // Scene files: stray keys are refused; ramp stops lie in [0, 1].
    let stray = temp_dir("stray-key").join("stray.toml");
    std::fs::write(&stray, "[grid]\nnx = 16\nny = 16\n[initial.velocity]\nkind = \"zero\"\nbogus = 3\n")
        .expect("write");
    bad(&["run", stray.to_str().expect("utf8"), "--steps", "1"], &["initial.velocity.bogus", "not a key here"]);
    bad(&["run", "smoke", "--png", "--set", "render.ramp.1.0=1.5"], &["render.ramp[1]", "1.5", "[0, 1]"]);
    // A key of thousands of dotted parts is refused, not a stack overflow.
    let deep = vec!["a"; 25_000].join(".") + "=1";
    bad(&["run", "smoke", "--set", &deep], &["25000 dotted parts", "at most 16"]);
    let file = temp_dir("out-is-a-file").join("frames");
    std::fs::write(&file, b"not a directory").expect("write");
    let file = file.to_str().expect("utf8");
    bad(&["run", "smoke", "--steps", "1", "--png", "--out", file], &[file, "not a directory"]);
}

/// Three steps of smoke at 16 × 16 with time step `dt` and the output `flags` must fail with
/// exit code 1, a message holding each of `needles`, and nothing left in the output folder.
fn stops_with_exit_code_1(name: &str, dt: &str, flags: &[&str], needles: &[&str]) {
    let dir = temp_dir(name);
    let dt = format!("params.dt={dt}");
    let mut args = vec!["run", "smoke", "--steps", "3", "--set", "grid.nx=16", "--set", "grid.ny=16", "--set", &dt];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", dir.to_str().expect("utf8")]);
    fails_with(1, &args, needles);
    let left: Vec<_> = std::fs::read_dir(&dir).expect("out dir").map(|e| e.expect("entry").file_name()).collect();
    assert!(left.is_empty(), "a failed run left {left:?}");
}

/// The GIF is written as the frames come, under a temporary name: a failed run leaves none.
#[test]
fn a_blown_up_run_fails_with_exit_code_1() {
    stops_with_exit_code_1("blown-up", "1e30", &["--gif"], &["blew up", "params.dt"]);
}

/// A finite state that crosses more than the grid in a step (smoke at dt = 1, without the heat
/// conduction that delays it a step at 16²) stops the run too, before any frame of it is drawn.
#[test]
fn a_run_that_outruns_the_grid_fails_with_exit_code_1() {
    stops_with_exit_code_1(
        "ran-away",
        "1",
        &["--set", "params.thermal_diffusivity=0", "--png", "--frame-every", "1"],
        &["outran the grid", "after step 1", "16 cells across", "params.dt"],
    );
}

/// Without frames or `--json` the state is checked after every step too: smoke at dt = 1 stops
/// after step 1 of 300, and the `--dump` files asked for hold the state that failed.
#[test]
fn every_step_is_checked_and_the_dumps_show_the_state_that_failed() {
    let dir = temp_dir("checked");
    let out = dir.to_str().expect("utf8");
    let args = ["run", "smoke", "--steps", "300", "--set", "params.dt=1", "--dump", "u,v", "--out", out];
    let o = fluid(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("outran the grid") && err.contains("after step 1 "), "{err}");
    assert!(err.contains("u.npy (the state after step 1)"), "{err}");
    // Faster than one box height (256 cells of 1/256) per step of 1 s: the runaway state.
    let (shape, payload) = npy(&dir.join("v.npy"));
    assert_eq!(shape, vec![257, 192]);
    let v: Vec<f32> = payload.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    assert!(v.iter().any(|x| x.abs() > 1.0), "the dump is not the runaway state");
}

/// A negative number is a bad value of its option, said plainly (not clap's `-- -1` tip), and
/// `--help` names `bench solvers`.
#[test]
fn negative_numbers_are_bad_values_and_help_names_every_command() {
    for (args, option) in [
        (&["run", "smoke", "--steps", "-1"][..], "--steps"),
        (&["run", "smoke", "--frame-every", "-3"][..], "--frame-every"),
        (&["bench", "--sizes", "-64"][..], "--sizes"),
        (&["bench", "solvers", "--budget-ms", "-2"][..], "--budget-ms"),
    ] {
        let o = fluid(args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(option) && !err.contains("-- -"), "{args:?}: {err}");
    }
    let help = text(&fluid(&["--help"]).stdout);
    assert!(help.contains("fluid bench solvers"), "{help}");
}

/// `--out` is made (with its parents) when a run writes something into it, frames or dumps,
/// and not at all when it writes nothing.
#[test]
fn the_output_folder_is_made_only_when_something_is_written() {
    let root = temp_dir("made-on-demand");
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec!["run", "smoke", "--steps", "1", "--set", "grid.nx=16", "--set", "grid.ny=16"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().expect("utf8")]);
        let o = fluid(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    };
    let nothing = root.join("nothing/here");
    run(&nothing, &[]);
    assert!(!root.join("nothing").exists(), "a run that writes nothing made its --out");
    let dumps = root.join("dumps/nested");
    run(&dumps, &["--dump", "u"]);
    assert!(dumps.join("u.npy").is_file(), "--dump alone makes its --out");
    let frames = root.join("frames/nested");
    run(&frames, &["--png"]);
    assert!(frames.join("frame_00000.png").is_file(), "--png makes its --out");
}

#[test]
fn malformed_scene_files_name_their_line() {
    let dir = temp_dir("bad-scene");
    let path = dir.join("broken.toml");
    std::fs::write(&path, "[grid]\nnx = 32\nny = 32\n\n[params]\ndt = = 0.1\n").expect("write");
    bad(&["run", path.to_str().expect("utf8")], &["broken.toml", "line 6"]);
    let path = dir.join("nan.toml");
    std::fs::write(&path, "[grid]\nnx = 32\nny = 32\n[[emitters]]\nradius = nan\n").expect("write");
    bad(&["run", path.to_str().expect("utf8")], &["emitters[0].radius", "NaN"]);
    let path = dir.join("good.toml");
    std::fs::write(&path, "[grid]\nnx = 20\nny = 10\n[[emitters]]\ncenter = [0.5, 0.2]\ndensity = 1.0\n")
        .expect("write");
    let out = fluid(&["run", path.to_str().expect("utf8"), "--steps", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("good:"), "{}", text(&out.stdout));
}

/// Hostile values for every option that takes one, on `run`, `bench` and `bench solvers`:
/// the program exits 0 or 2 (1 where a run stops on its own, e.g. a blow-up), within a minute,
/// never panicking, and a refusal names the option or the value.
#[test]
fn hostile_option_values_never_panic_and_are_named() {
    const VALUES: &[&str] =
        &["", "0", "-1", "1.5", "nan", "inf", "1e30", "18446744073709551616", "x", ",", "1,,2", "cpu,", "a b", "é"];
    let dir = temp_dir("hostile");
    let out = dir.to_str().expect("utf8");
    let small = ["--set", "grid.nx=16", "--set", "grid.ny=12"];
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "smoke", "--steps", "2", "--out", out];
        a.extend(small);
        a.extend(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let bench = |solvers: bool, extra: &[&str]| {
        // Each benchmark with only the options it takes (the others are refused).
        let mut a = vec!["bench"];
        if solvers {
            a.extend(["solvers", "--budget-ms", "0.5"]);
        } else {
            a.extend(["--steps", "2", "--parity-steps", "1"]);
        }
        a.extend(["--sizes", "16", "--backends", "cpu"]);
        a.extend(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let (mut cases, mut refused) = (0, 0);
    for value in VALUES {
        let mut lines: Vec<(String, Vec<String>)> = Vec::new();
        for option in
            ["--backend", "--steps", "--out", "--frame-every", "--dump", "--exr", "--set", "--threads", "--flipbook"]
        {
            let mut args = run(&[option, value]);
            if option == "--frame-every" {
                args.push("--png".into());
            }
            lines.push((option.into(), args));
        }
        for option in ["--scene", "--sizes", "--backends", "--steps", "--set", "--threads", "--parity-steps"] {
            lines.push((option.into(), bench(false, &[option, value])));
        }
        for option in ["--solvers", "--budget-ms", "--precision", "--sizes", "--scene"] {
            lines.push((option.into(), bench(true, &[option, value])));
        }
        for (option, args) in lines {
            cases += 1;
            let mut child = Command::new(env!("CARGO_BIN_EXE_fluid"))
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("run fluid");
            let start = std::time::Instant::now();
            while child.try_wait().expect("wait").is_none() {
                if start.elapsed() > std::time::Duration::from_secs(60) {
                    let _ = child.kill();
                    panic!("{args:?} ran for more than a minute");
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let done = child.wait_with_output().expect("output");
            let err = text(&done.stderr);
            assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
            match done.status.code() {
                Some(0) | Some(1) => {}
                Some(2) => {
                    refused += 1;
                    let named = err.contains(option.as_str())
                        || err.contains(option.trim_start_matches('-'))
                        || (!value.is_empty() && err.contains(value))
                        || err.contains(&format!("`{value}`"))
                        || value.split(',').any(|p| !p.is_empty() && err.contains(&format!("`{p}`")));
                    assert!(named, "{args:?}: refused without naming `{option}` or `{value}`: {err}");
                }
                code => panic!("{args:?} exited with {code:?}: {err}"),
            }
        }
    }
    assert!(refused > cases / 2, "{refused} of {cases} refused");
}

/// Bad obstacles and the solid fields of a scene without obstacles: a message naming the key
/// and exit code 2.
#[test]
fn bad_obstacles_exit_2_naming_the_key() {
    let path =
        |keys: &str, extra: &str| format!("obstacles=[{{shape = \"circle\", radius = 0.1, path = [{keys}]{extra}}}]");
    let (one, back) = ("{time = 0, position = [0.5, 0.5]}", "{time = 0, position = [0.2, 0.5]}");
    let (late, gone) =
        ("{time = 1, position = [0.5, 0.5]}", "{time = 0, position = [5, 5]}, {time = 1, position = [6, 5]}");
    let paths = [
        (path(one, ""), "`obstacles[0].path`: 1 keys (a path needs at least two keys"),
        (path(&format!("{late}, {back}"), ""), "`obstacles[0].path[1].time`: 0 (key times must increase"),
        (path(&format!("{one}, {late}"), ", velocity = [1, 0]"), "`obstacles[0].velocity`: set (a path gives"),
        (path(gone, ""), "`obstacles[0].path`: every key (it lies wholly outside"),
        ("obstacles=[{shape = \"circle\", radius = 0.1, repeat = true}]".to_string(), "`obstacles[0].repeat`"),
    ];
    for (set, needle) in &paths {
        let out = fluid(&["run", "paddle", "--steps", "1", "--set", "grid.nx=16", "--set", "grid.ny=16", "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{set}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(needle), "{set}: wanted {needle:?} in {}", text(&out.stderr));
    }
    let cases: [(&[&str], &str); 7] = [
        (&["--set", "obstacles=[{shape = \"circle\"}]", "--set", "params.pressure.solver=sor"], "obstacles[0].radius"),
        (
            &["--set", "obstacles=[{shape = \"mask\", image = \"nope.png\", size = [0.5, 0.5]}]"],
            "fluid-cli/nope.png (no such file)",
        ),
        (&["--set", "obstacles=[{shape = \"mask\", image = \"Cargo.toml\", size = [0.5, 0.5]}]"], "not a PNG image"),
        (
            &[
                "--set",
                "obstacles=[{shape = \"mask\", image = \"grate.png\", size = [0.5, 0.5], invert = true, threshold = 0}]",
            ],
            "no pixel is solid",
        ),
        (
            &["--set", "obstacles=[{shape = \"polygon\", points = []}]", "--set", "params.pressure.solver=sor"],
            "3 to 256 points",
        ),
        (
            &["--set", "obstacles=[{shape = \"box\", size = [9, 9]}]", "--set", "params.pressure.solver=sor"],
            "cover the whole box",
        ),
        (
            &["--set", "obstacles=[{shape = \"circle\", radius = 0.1}]", "--set", "params.pressure.solver=relaxation"],
            "params.pressure.solver",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["run", "smoke", "--steps", "1", "--set", "grid.nx=16", "--set", "grid.ny=16"];
        all.extend_from_slice(args);
        let out = fluid(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(needle), "{args:?}: {}", text(&out.stderr));
    }
    let dir = temp_dir("no-solid");
    let out = fluid(&[
        "run",
        "smoke",
        "--steps",
        "1",
        "--set",
        "grid.nx=16",
        "--set",
        "grid.ny=16",
        "--out",
        dir.to_str().expect("utf8"),
        "--dump",
        "solid",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no obstacles"), "{}", text(&out.stderr));
}
