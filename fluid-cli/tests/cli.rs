//! The `fluid` program: runs, dumps, JSON, and clear errors with exit code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fluid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluid")).args(args).output().expect("run fluid")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fluid-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parse a `.npy` header: (shape, payload bytes).
fn npy(path: &Path) -> (Vec<usize>, Vec<u8>) {
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

#[test]
fn run_dumps_every_field_with_the_documented_shape() {
    let dir = temp_dir("dump");
    let out = fluid(&[
        "run",
        "smoke",
        "--steps",
        "4",
        "--set",
        "grid.nx=24",
        "--set",
        "grid.ny=16",
        "--set",
        "params.fields.dye=true",
        "--out",
        dir.to_str().expect("utf8"),
        "--dump",
        "u,v,pressure,divergence,density,temperature,dye,solid,curl,dye",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expect: &[(&str, &[usize])] = &[
        ("u", &[16, 25]),
        ("v", &[17, 24]),
        ("pressure", &[16, 24]),
        ("divergence", &[16, 24]),
        ("density", &[16, 24]),
        ("temperature", &[16, 24]),
        ("dye", &[16, 24, 4]),
        ("solid", &[16, 24]),
        ("curl", &[16, 24]),
    ];
    for (name, shape) in expect {
        let (got, payload) = npy(&dir.join(format!("{name}.npy")));
        assert_eq!(&got, shape, "{name}");
        assert_eq!(payload.len(), 4 * shape.iter().product::<usize>(), "{name}");
    }
    // The emitter has put density into the box.
    let (_, payload) = npy(&dir.join("density.npy"));
    let total: f32 = payload.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).sum();
    assert!(total > 0.0, "density after 4 steps: {total}");
    let summary = text(&out.stdout);
    assert!(summary.contains("4 steps") && summary.contains("ms/step") && summary.contains("max |div u|"), "{summary}");
    // A field named twice is written once.
    assert_eq!(summary.matches("dye.npy").count(), 1, "{summary}");
}

#[test]
fn json_summary_has_the_documented_keys() {
    let out = fluid(&["run", "taylor-green", "--steps", "3", "--set", "grid.nx=32", "--set", "grid.ny=32", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(v["steps"], 3);
    for key in ["ms_per_step", "max_divergence", "residual", "max_velocity", "cfl"] {
        let x = v[key].as_f64().unwrap_or_else(|| panic!("{key} is a number: {v}"));
        assert!(x.is_finite() && x >= 0.0, "{key} = {x}");
    }
    assert_eq!(v["grid"], serde_json::json!([32, 32]));
    assert_eq!(v["backend"], "cpu");
    let per_step = v["residual_per_step"].as_array().expect("residual per step");
    assert_eq!(per_step.len(), 3);
    assert_eq!(per_step[2], v["residual"], "the last step's residual is the summary's");
    assert_eq!(v["max_divergence_per_step"].as_array().expect("max div per step").len(), 3);
}

/// `run` reports what the backend holds, from its own accounting: a Jacobi scene holds no
/// solver workspace, a multigrid scene holds it, and the difference in the total is at least
/// that workspace; the text output names the total.
#[test]
fn run_reports_the_memory_the_scene_holds() {
    let run = |solver: &str| {
        let solver = format!("params.pressure.solver={solver}");
        let args = ["run", "smoke", "--steps", "1", "--set", "grid.nx=40", "--set", "grid.ny=30", "--set", &solver];
        let out = fluid(&[&args[..], &["--json"]].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let memory = v["memory"].clone();
        let workspace = memory["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["name"] == "multigrid")
            .and_then(|r| r["bytes"].as_u64())
            .expect("the workspace's bytes");
        (memory["total"].as_u64().expect("total"), workspace)
    };
    let (jacobi, none) = run("jacobi");
    let (multigrid, workspace) = run("multigrid");
    assert_eq!(none, 0, "a Jacobi scene holds no workspace");
    assert!(workspace > 0 && multigrid >= jacobi + workspace, "{jacobi} + {workspace} against {multigrid}");
    let out = fluid(&["run", "smoke", "--steps", "1", "--set", "grid.nx=40", "--set", "grid.ny=30"]);
    assert!(text(&out.stdout).contains("MiB allocated"), "{}", text(&out.stdout));
}

#[test]
fn gif_and_png_frames_are_written() {
    let dir = temp_dir("frames");
    let out = fluid(&[
        "run",
        "ink",
        "--steps",
        "30",
        "--frame-every",
        "3",
        "--set",
        "grid.nx=40",
        "--set",
        "grid.ny=30",
        "--gif",
        "--png",
        "--out",
        dir.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let gif = std::fs::read(dir.join("ink.gif")).expect("gif");
    assert_eq!(&gif[..6], b"GIF89a");
    // Ten frames: more than one batch of the GIF writer on a machine of two cores (it quantises
    // four frames per core at a time), so the batches must come out in order.
    let pngs: Vec<Vec<u8>> = (0..10)
        .map(|k| {
            let path = dir.join(format!("frame_{k:05}.png"));
            assert_eq!(&std::fs::read(&path).expect("png")[1..4], b"PNG");
            image::open(&path).expect("decode png").to_rgba8().into_raw()
        })
        .collect();
    // The GIF holds the same frames, in order, each through its own 256-colour palette: 40 ms
    // each, 40 × 30, looping, and each decoded frame closest to its own PNG.
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(gif.as_slice()).expect("gif header");
    assert_eq!((decoder.width(), decoder.height()), (40, 30));
    assert_eq!(decoder.repeat(), gif::Repeat::Infinite);
    let mean_diff =
        |a: &[u8], b: &[u8]| a.iter().zip(b).map(|(x, y)| f64::from(x.abs_diff(*y))).sum::<f64>() / a.len() as f64;
    let mut k = 0;
    while let Some(frame) = decoder.read_next_frame().expect("gif frame") {
        assert_eq!(frame.delay, 4, "frame {k}: 40 ms");
        assert_eq!((frame.left, frame.top, frame.width, frame.height), (0, 0, 40, 30));
        let own = mean_diff(&frame.buffer, &pngs[k]);
        assert!(own < 4.0, "frame {k} differs from its PNG by {own} per channel on average");
        for (j, png) in pngs.iter().enumerate() {
            assert!(own <= mean_diff(&frame.buffer, png), "frame {k} is closer to PNG {j}");
        }
        k += 1;
    }
    assert_eq!(k, 10, "ten frames");
    assert!(!dir.join("ink.gif.part").exists(), "the GIF kept its temporary name");
}

#[test]
fn presets_are_listed_one_per_line() {
    let out = fluid(&["presets"]);
    assert!(out.status.success());
    let list = text(&out.stdout);
    for name in ["smoke", "ink", "taylor-green"] {
        assert!(list.lines().any(|l| l.starts_with(name)), "{list}");
    }
}

#[test]
fn timings_table_lists_kernels() {
    let out = fluid(&["run", "smoke", "--steps", "2", "--set", "grid.nx=16", "--set", "grid.ny=16", "--timings"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("fluid.mg_coarse") && s.contains("fluid.advect_velocity"),
        "the preset projects with multigrid (at 16x16 the whole V-cycle is one mg_coarse): {s}"
    );
}

/// Runs `fluid` and expects exit code `code`, a message containing each of `needles`, and no
/// panic.
fn fails_with(code: i32, args: &[&str], needles: &[&str]) {
    let out = fluid(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "args {args:?}: stderr {err}");
    assert!(!err.contains("panicked"), "args {args:?} panicked: {err}");
    for n in needles {
        assert!(err.contains(n), "args {args:?}: stderr should mention `{n}`: {err}");
    }
}

/// Bad input: exit code 2 and a message naming each of `needles`.
fn bad(args: &[&str], needles: &[&str]) {
    fails_with(2, args, needles);
}

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
    bad(&["run", "smoke", "--set", "params.fields.temperature=false"], &["params.buoyancy.temperature_lift", "1"]);
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
    bad(&["run", "smoke", "--set", "params.boundary.x=open"], &["open", "not supported"]);
    bad(&["run", "smoke", "--backend", "metal"], &["metal", "cpu"]);
    bad(&["bench", "--backends", "cpu,metal", "--sizes", "8", "--steps", "1"], &["metal", "known backends"]);
    bad(&["bench", "--backends", "cpu", "--sizes", "0,16", "--steps", "1"], &["--sizes", "[0, 16]", "positive"]);
    // Every size is checked before any backend is measured.
    let out = fluid(&["bench", "--backends", "cpu", "--sizes", "8,40000", "--steps", "1"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("40000") && !err.contains("bandwidth"), "{err}");
    bad(&["run", "smoke", "--steps", "0"], &["--steps"]);
    bad(&["run", "smoke", "--threads", "100000"], &["threads", "100000", "1024"]);
    bad(&["run", "smoke", "--steps", "-3"], &["-3"]);
    bad(&["run", "/nonexistent/scene.toml"], &["/nonexistent/scene.toml"]);
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

/// A finite state that crosses more than the grid in a step (smoke at dt = 1) stops the run
/// too, before any frame of it is drawn.
#[test]
fn a_run_that_outruns_the_grid_fails_with_exit_code_1() {
    stops_with_exit_code_1(
        "ran-away",
        "1",
        &["--png", "--frame-every", "1"],
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

#[cfg(feature = "wgpu")]
mod wgpu {
    use super::*;

    #[test]
    fn info_lists_the_adapters() {
        let out = fluid(&["info"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let s = text(&out.stdout);
        assert!(s.contains("wgpu adapters:"), "{s}");
        assert!(s.contains("Vulkan"), "an adapter through Vulkan (lavapipe in CI): {s}");
    }

    #[test]
    fn runs_on_wgpu_with_timings_and_json() {
        runs_on_gpu_with_timings_and_json("wgpu");
    }

    #[test]
    fn bench_prints_one_row_per_backend_and_size() {
        let out = fluid(&["bench", "--sizes", "16,24", "--steps", "2", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON array");
        let rows = rows.as_array().expect("array");
        let backends = 2 + usize::from(cfg!(feature = "vulkan"));
        assert_eq!(rows.len(), 2 * backends, "every backend of the build at two sizes");
        for r in rows {
            for key in [
                "backend",
                "adapter",
                "grid",
                "ms_per_step",
                "host_ms_per_step",
                "waited_ms_per_step",
                "cells_per_s",
                "gb_per_s",
                "bandwidth_share",
                "parity_rel_l2",
            ] {
                assert!(!r[key].is_null(), "{key} in {r}");
            }
            assert!(r["ms_per_step"].as_f64().expect("number") > 0.0);
            assert!(r["host_ms_per_step"].as_f64().expect("number") > 0.0);
            // Only positive: how the waited and the host times compare is a timing, which a
            // loaded machine upsets with two steps (CI once saw a 16² CPU step's host time at
            // 4.9 ms against 0.10 ms waited). Benchmarks, not tests, compare times.
            assert!(r["waited_ms_per_step"].as_f64().expect("number") > 0.0, "{r}");
            // Every backend measures its copy bandwidth, and the share is the row's GB/s over it.
            // The range (50 MB/s to 50 TB/s) checks the units, not a speed: a figure off by
            // 1e3 or more leaves it on any machine.
            let number = |key: &str| r[key].as_f64().unwrap_or_else(|| panic!("{key} in {r}"));
            let copy = number("copy_gb_per_s");
            assert!((0.05..50_000.0).contains(&copy), "copy bandwidth {copy} GB/s: {r}");
            let share = number("bandwidth_share") * copy / number("gb_per_s");
            assert!((share - 1.0).abs() < 1e-9, "{r}");
            // The conformance suite's preset tolerance: the GPU backends agree with the CPU to ~1e-6.
            let parity = r["parity_rel_l2"].as_f64().expect("number");
            assert!(parity < 1e-4, "{r}");
            if r["backend"] == "cpu" {
                assert_eq!(parity, 0.0, "the CPU backend is deterministic: {r}");
            }
        }
    }

    /// `--jacobi` times plain sweeps even though the preset solves with multigrid, and the
    /// fused kernel when the scene asks for `jacobi-multisweep`.
    #[test]
    fn bench_jacobi_times_the_sweep_kernels() {
        for (set, kernel) in
            [(None, "fluid.jacobi"), (Some("params.pressure.solver=jacobi-multisweep"), "fluid.jacobi_multisweep")]
        {
            let mut args = vec!["bench", "--jacobi", "--backends", "wgpu", "--sizes", "24", "--steps", "2", "--json"];
            if let Some(set) = set {
                args.extend(["--set", set]);
            }
            let out = fluid(&args);
            assert!(out.status.success(), "{}", text(&out.stderr));
            let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON array");
            let row = &rows.as_array().expect("array")[0];
            let kernels = row["kernels"].as_array().expect("kernels");
            let names: Vec<&str> = kernels.iter().map(|k| k[0].as_str().expect("kernel name")).collect();
            assert_eq!(names, vec![kernel], "{row}");
            let parity = row["parity_rel_l2"].as_f64().expect("number");
            assert!(parity < 1e-5, "{row}");
            if set.is_none() {
                // GB/s is one sweep's compulsory traffic over its time: pressure and divergence
                // read, the new pressure written, 3 × 4 bytes a cell.
                let number = |key: &str| row[key].as_f64().expect("number");
                let bytes = number("gb_per_s") * 1e9 * number("ms_per_step") * 1e-3;
                assert!((bytes / (3.0 * 4.0 * 24.0 * 24.0) - 1.0).abs() < 1e-6, "{bytes} bytes a sweep: {row}");
            }
        }
    }

    #[test]
    fn a_bad_adapter_name_is_a_clear_error() {
        let out = Command::new(env!("CARGO_BIN_EXE_fluid"))
            .args(["run", "smoke", "--backend", "wgpu", "--steps", "1"])
            .env("FLUID_WGPU_ADAPTER", "no-such-gpu")
            .output()
            .expect("run fluid");
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(err.contains("no-such-gpu") && err.contains("adapters:"), "{err}");
    }

    /// `FLUID_WGPU_SHADER_DIR` replaces a kernel's shader file without a rebuild: with a
    /// `subtract_gradient.wgsl` whose entry point returns at once, the steps leave the velocity
    /// unprojected (max |div u| far above the built-in shader's). A `shared/common.wgsl` in it
    /// replaces the code every shader starts with: one that puts a wall on every face leaves
    /// no velocity at all. A folder that holds neither is refused, naming the variable.
    #[test]
    fn shader_overrides_replace_a_kernel() {
        let built_in = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fluid-shaders/shaders/grid/subtract_gradient.wgsl"
        ))
        .expect("the shader's source");
        let skipping =
            built_in.replacen("    let i = id.x;", "    if (true) {\n        return;\n    }\n    let i = id.x;", 1);
        assert_ne!(skipping, built_in, "the entry point's first line moved");
        let dir = temp_dir("shaders");
        std::fs::create_dir_all(&dir).expect("folder");
        std::fs::write(dir.join("subtract_gradient.wgsl"), skipping).expect("write");
        let run = |shaders: Option<&Path>| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluid"));
            cmd.args(["run", "smoke", "--backend", "wgpu", "--steps", "3", "--set", "grid.nx=24"]);
            cmd.args(["--set", "grid.ny=20", "--json"]);
            if let Some(dir) = shaders {
                cmd.env("FLUID_WGPU_SHADER_DIR", dir);
            }
            cmd.output().expect("run fluid")
        };
        let divergence = |out: &Output| {
            assert!(out.status.success(), "{}", text(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            v["max_divergence"].as_f64().expect("number")
        };
        let (built_in, skipped) = (divergence(&run(None)), divergence(&run(Some(&dir))));
        assert!(skipped > 1e3 * built_in, "max |div u|: {skipped:.3e} without the gradient, {built_in:.3e} with it");
        let common = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fluid-shaders/shaders/shared/common.wgsl"
        ))
        .expect("the shared source");
        let walled = common.replacen("{ return !px() && (i == 0u || i == grid.nx); }", "{ return true; }", 1).replacen(
            "{ return !py() && (j == 0u || j == grid.ny); }",
            "{ return true; }",
            1,
        );
        assert_eq!(walled.matches("{ return true; }").count(), 2, "the wall tests of common.wgsl moved");
        let walls = temp_dir("shared-shaders");
        std::fs::create_dir_all(walls.join("shared")).expect("folder");
        std::fs::write(walls.join("shared/common.wgsl"), walled).expect("write");
        let speed = |out: &Output| {
            assert!(out.status.success(), "{}", text(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            v["max_velocity"].as_f64().expect("number")
        };
        assert!(speed(&run(None)) > 0.0, "the built-in shaders leave the plume still");
        assert_eq!(speed(&run(Some(&walls))), 0.0, "every face a wall leaves no velocity");
        let empty = temp_dir("no-shaders");
        std::fs::create_dir_all(&empty).expect("folder");
        let out = run(Some(&empty));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains("FLUID_WGPU_SHADER_DIR") && err.contains("no <kernel>.wgsl"), "{err}");
        assert!(err.contains("no shared/<snippet>.wgsl"), "{err}");
        for folder in [&dir, &empty, &walls] {
            let _ = std::fs::remove_dir_all(folder);
        }
    }

    #[test]
    fn bench_shows_the_rows_measured_before_a_backend_fails() {
        let out = Command::new(env!("CARGO_BIN_EXE_fluid"))
            .args(["bench", "--backends", "cpu,wgpu", "--sizes", "16", "--steps", "1", "--parity-steps", "0"])
            .env("FLUID_WGPU_ADAPTER", "no-such-gpu")
            .output()
            .expect("run fluid");
        let (table, err) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("no-such-gpu"), "{err}");
        assert!(table.lines().any(|l| l.starts_with("cpu ") && l.contains("16x16")), "{table}");
    }
}

#[test]
fn bench_solvers_reports_iterations_and_time_to_each_residual() {
    // A budget that no machine fills with the most iterations tried (16384 sweeps or 64
    // V-cycles would need 12 ns a sweep or 3 µs a V-cycle at 24²), so that no row may say
    // "capped". The default 2 ms did not always: on a quiet Zen 3 the 64 V-cycles fitted.
    let args = ["bench", "solvers", "--sizes", "24", "--backends", "cpu", "--solvers", "jacobi,multigrid"];
    let out = fluid(&[&args[..], &["--budget-ms", "0.2", "--json"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON array");
    let rows = rows.as_array().expect("array");
    assert_eq!(rows.len(), 2);
    for r in rows {
        for key in [
            "backend",
            "adapter",
            "grid",
            "solver",
            "reached",
            "budget_ms",
            "budget_iterations",
            "budget_capped",
            "budget_residual",
        ] {
            assert!(!r[key].is_null(), "{key} in {r}");
        }
    }
    let mg = rows.iter().find(|r| r["solver"] == "multigrid").expect("multigrid row");
    let reached = mg["reached"].as_array().expect("reached");
    assert_eq!(reached.len(), 3);
    // About 10x per V-cycle: 1e-2 in one or two cycles, 1e-4 in at most five.
    let it = |k: usize| reached[k]["iterations"].as_u64().unwrap_or(u64::MAX);
    assert!(it(0) <= 2 && it(1) <= 5, "{mg}");
    assert!(reached[1]["ms"].as_f64().expect("ms") > 0.0);
    let jacobi = rows.iter().find(|r| r["solver"] == "jacobi").expect("jacobi row");
    assert!(jacobi["reached"][1]["iterations"].as_u64().expect("jacobi reaches 1e-4 at 24x24") > it(1) * 10);
    // A budget that holds more iterations than the most tried says so, and gives those.
    let huge_budget = |solvers: &str, json: &[&str]| {
        let args =
            ["bench", "solvers", "--sizes", "24", "--backends", "cpu", "--solvers", solvers, "--budget-ms", "1e9"];
        fluid(&[&args[..], json].concat())
    };
    assert!(rows.iter().all(|r| r["budget_capped"] == false), "{rows:?}");
    let large: serde_json::Value =
        serde_json::from_slice(&huge_budget("jacobi,multigrid", &["--json"]).stdout).expect("JSON array");
    for (r, cap) in large.as_array().expect("array").iter().zip([16384, 64]) {
        assert!(r["budget_capped"] == true && r["budget_iterations"] == cap, "{r}");
    }
    let table = text(&huge_budget("multigrid", &[]).stdout);
    assert!(table.contains("64 (cap), ") && table.contains("(cap): the budget"), "{table}");
    bad(&["bench", "solvers", "--solvers", "magic"], &["magic"]);
    for budget in ["--budget-ms=0", "--budget-ms=-1", "--budget-ms=nan", "--budget-ms=inf"] {
        bad(&["bench", "solvers", "--sizes", "24", "--backends", "cpu", budget], &["--budget-ms"]);
    }
    // Multigrid in f32 when asked, and the row says so.
    let args = ["bench", "solvers", "--sizes", "24", "--backends", "cpu", "--solvers", "multigrid", "--json"];
    for (precision, label) in [("single", "multigrid (single)"), ("double-float", "multigrid")] {
        let out = fluid(&[&args[..], &["--precision", precision]].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON array");
        assert_eq!(rows[0]["solver"], label, "--precision {precision}");
    }
}

#[cfg(feature = "vulkan")]
#[test]
fn runs_on_vulkan_with_timings_and_json() {
    runs_on_gpu_with_timings_and_json("vulkan");
}

/// A short smoke run on a GPU backend with `--timings --json`: the JSON names the backend, the
/// per-kernel timings include the preset's kernels, and the divergence is a number.
#[cfg(any(feature = "wgpu", feature = "vulkan"))]
fn runs_on_gpu_with_timings_and_json(backend: &str) {
    let out = fluid(&[
        "run",
        "smoke",
        "--backend",
        backend,
        "--steps",
        "3",
        "--set",
        "grid.nx=24",
        "--set",
        "grid.ny=20",
        "--timings",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["backend"], backend);
    let labels: Vec<&str> =
        v["timings"].as_array().expect("timings").iter().filter_map(|t| t["label"].as_str()).collect();
    // At 24x20 the whole V-cycle is one mg_coarse.
    assert!(labels.contains(&"fluid.mg_coarse") && labels.contains(&"fluid.advect_velocity"), "{labels:?}");
    assert!(v["max_divergence"].as_f64().expect("number").is_finite());
}

/// `ms_per_step` on a GPU backend is each step's time until the device has finished it, not the
/// time to queue it: with `--json` (a diagnostics read after every step, outside the timed
/// part) it used to be the queueing alone, 0.05 ms against about 55 ms of work per step on
/// lavapipe. Checked against the kernels' own GPU timestamps from a `--timings` run of the same
/// steps, with a factor of ten to spare for a noisy machine (a measurement's meaning, not a
/// speed).
#[cfg(feature = "vulkan")]
#[test]
fn gpu_ms_per_step_includes_the_device_s_work() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "smoke", "--backend", "vulkan", "--steps", "4", "--set", "grid.nx=32"];
        args.extend_from_slice(&["--set", "grid.ny=32", "--json"]);
        args.extend_from_slice(extra);
        let out = fluid(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    };
    let ms = run(&[])["ms_per_step"].as_f64().expect("ms_per_step");
    let timed = run(&["--timings"]);
    let kernels: f64 =
        timed["timings"].as_array().expect("timings").iter().filter_map(|t| t["ms"].as_f64()).sum::<f64>() / 4.0;
    assert!(kernels > 0.0, "{timed}");
    assert!(ms >= 0.1 * kernels, "ms_per_step {ms} against {kernels} ms of kernels per step on the device");
}

/// The standard error of one step of `smoke` on Vulkan with environment variable `key` set to
/// `value`, which must make it fail with exit code 2.
#[cfg(feature = "vulkan")]
fn vulkan_refuses(key: &str, value: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fluid"))
        .args(["run", "smoke", "--backend", "vulkan", "--steps", "1"])
        .env(key, value)
        .output()
        .expect("run fluid");
    assert_eq!(out.status.code(), Some(2), "{key}={value}: {}", text(&out.stderr));
    text(&out.stderr)
}

#[cfg(feature = "vulkan")]
#[test]
fn a_bad_vulkan_device_name_is_a_clear_error() {
    let err = vulkan_refuses("FLUID_VULKAN_DEVICE", "no-such-gpu");
    assert!(err.contains("no-such-gpu") && err.contains("devices:"), "{err}");
}

#[cfg(feature = "vulkan")]
#[test]
fn a_bad_vulkan_queue_choice_is_a_clear_error() {
    let err = vulkan_refuses("FLUID_VULKAN_QUEUE", "transfer");
    assert!(err.contains("FLUID_VULKAN_QUEUE") && err.contains("transfer"), "{err}");
}

#[cfg(all(feature = "wgpu", feature = "vulkan"))]
#[test]
fn bench_leaves_out_the_gpu_backends_that_do_not_open_unless_they_are_named() {
    // No Vulkan driver: neither GPU backend opens (wgpu finds no adapter through Vulkan).
    let bench = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_fluid"))
            .args(["bench", "--sizes", "16", "--steps", "1", "--parity-steps", "0", "--json"])
            .args(extra)
            .env("VK_DRIVER_FILES", "/nonexistent/fluid-no-icd.json")
            .env("VK_ICD_FILENAMES", "/nonexistent/fluid-no-icd.json")
            .output()
            .expect("run fluid")
    };
    let out = bench(&[]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON array");
    let backends: Vec<&str> =
        rows.as_array().expect("array").iter().map(|r| r["backend"].as_str().expect("name")).collect();
    assert_eq!(backends, ["cpu"], "{err}");
    for name in ["wgpu", "vulkan"] {
        assert!(err.contains(&format!("bench: {name} left out, it does not open here: ")), "{err}");
    }
    // Named, a backend that does not open is an error.
    let out = bench(&["--backends", "cpu,vulkan"]);
    assert!(!out.status.success() && !text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("vulkan"), "{}", text(&out.stderr));
}

#[cfg(feature = "vulkan")]
#[test]
fn a_bad_gpu_spin_budget_is_a_clear_error() {
    for bad in ["abc", "-5", "2000000"] {
        let err = vulkan_refuses("FLUID_GPU_SPIN_US", bad);
        assert!(err.contains("FLUID_GPU_SPIN_US") && err.contains(bad), "{err}");
    }
    // `fluid info` says how the GPU backends wait, and with which budget.
    let said = |value: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluid"));
        cmd.arg("info");
        match value {
            Some(v) => cmd.env("FLUID_GPU_SPIN_US", v),
            None => cmd.env_remove("FLUID_GPU_SPIN_US"),
        };
        let out = cmd.output().expect("run fluid");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).lines().find(|l| l.starts_with("GPU waits:")).map(str::to_string).unwrap_or_default()
    };
    assert!(said(None).contains("up to 2000 us") && said(None).contains("CPU device block at once"), "{}", said(None));
    assert!(said(Some("0")).contains("block at once"), "{}", said(Some("0")));
    assert!(said(Some("350")).contains("up to 350 us"), "{}", said(Some("350")));
}

#[cfg(feature = "vulkan")]
#[test]
fn info_lists_the_vulkan_physical_devices() {
    let out = fluid(&["info"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let section = s.split("Vulkan physical devices:").nth(1).unwrap_or_else(|| panic!("no Vulkan section: {s}"));
    let device = section.lines().nth(2).unwrap_or_default();
    assert!(!device.trim().is_empty(), "at least one device: {s}");
    // Every machine the tests run on (lavapipe, the H100) has a compute queue.
    assert!(device.contains("(graphics, compute)") || device.contains("(compute only)"), "queue family: {s}");
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
        let mut a = vec!["bench"];
        if solvers {
            a.push("solvers");
        }
        a.extend(["--sizes", "16", "--steps", "2", "--parity-steps", "1", "--backends", "cpu", "--budget-ms", "0.5"]);
        a.extend(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let (mut cases, mut refused) = (0, 0);
    for value in VALUES {
        let mut lines: Vec<(String, Vec<String>)> = Vec::new();
        for option in ["--backend", "--steps", "--out", "--frame-every", "--dump", "--set", "--threads"] {
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
