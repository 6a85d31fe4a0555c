//! The `fluid` program: runs, dumps, JSON, and clear errors with exit code 2.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

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
        "--set",
        "params.pressure.solver=sor",
        "--set",
        "obstacles=[{shape = \"circle\", position = [0.5, 0.6], radius = 0.2}]",
        "--out",
        dir.to_str().expect("utf8"),
        "--dump",
        "u,v,pressure,divergence,density,temperature,dye,solid,u_faces,v_faces,curl,dye",
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
        ("u_faces", &[16, 25, 2]),
        ("v_faces", &[17, 24, 2]),
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

/// A particle preset writes its positions and velocities as `[N, 2]`, its drawn liquid on the
/// picture's cells, and a GIF; the particles stay in the box.
#[test]
fn a_particle_scene_dumps_its_particles_and_draws_a_gif() {
    let dir = temp_dir("particles");
    let out = fluid(&[
        "run",
        "dam-break",
        "--steps",
        "6",
        "--set",
        "grid.nx=64",
        "--set",
        "grid.ny=32",
        "--gif",
        "--frame-every",
        "3",
        "--dump",
        "particles,density",
        "--out",
        dir.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (shape, payload) = npy(&dir.join("positions.npy"));
    assert!(shape.len() == 2 && shape[1] == 2 && shape[0] > 1000, "{shape:?}");
    let n = shape[0];
    let x: Vec<f32> = payload.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    assert!(x.chunks(2).all(|p| (0.0..=2.0).contains(&p[0]) && (0.0..=1.0).contains(&p[1])), "a particle left the box");
    assert_eq!(npy(&dir.join("velocities.npy")).0, vec![n, 2]);
    let (shape, payload) = npy(&dir.join("density.npy"));
    assert_eq!(shape, vec![32, 64]);
    let drawn = payload.chunks(4).filter(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) > 0.5).count();
    assert!(drawn > 64 && drawn < 32 * 64, "{drawn} cells hold liquid");
    assert!(dir.join("dam-break.gif").exists());
    let summary = text(&out.stdout);
    assert!(summary.contains(&format!("{n} particles")), "{summary}");
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
        let resources = memory["resources"].as_array().expect("resources").clone();
        let bytes = move |name: &str| {
            resources.iter().find(|r| r["name"] == name).and_then(|r| r["bytes"].as_u64()).expect("a resource's bytes")
        };
        (memory["total"].as_u64().expect("total"), bytes)
    };
    let (jacobi, j) = run("jacobi");
    let (multigrid, m) = run("multigrid");
    let cells = 40 * 30 * 4;
    // Jacobi: no workspace; its pressure partner and the diagnostics scratch of their own.
    assert_eq!((j("multigrid"), j("pressure_tmp"), j("scratch")), (0, cells, cells));
    // Multigrid: the workspace, holding the scratch (shared, counted once); no pressure partner.
    assert!(m("multigrid") > cells, "{}", m("multigrid"));
    assert_eq!((m("pressure_tmp"), m("scratch")), (0, 0));
    assert!(
        multigrid + 2 * cells >= jacobi + m("multigrid"),
        "{jacobi} − 2 × {cells} + {} against {multigrid}",
        m("multigrid")
    );
    let out = fluid(&["run", "smoke", "--steps", "1", "--set", "grid.nx=40", "--set", "grid.ny=30"]);
    assert!(text(&out.stdout).contains("MiB allocated"), "{}", text(&out.stdout));
}

/// A flipbook holds the frames `--png` writes at the same steps, tile by tile from the top
/// left, with a sidecar giving its layout and frame rate; `--transparent` leaves alpha 0 where
/// nothing is drawn, in both.
#[test]
fn flipbooks_and_transparent_frames_are_written() {
    let dir = temp_dir("flipbook");
    let out = dir.to_str().expect("utf8");
    let args = [
        "run",
        "smoke",
        "--steps",
        "16",
        "--frame-every",
        "2",
        "--png",
        "--flipbook",
        "4x2",
        "--transparent",
        "--set",
        "grid.nx=24",
        "--set",
        "grid.ny=20",
        "--out",
        out,
    ];
    let run = fluid(&args);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let atlas = image::open(dir.join("smoke_flipbook.png")).expect("atlas").to_rgba8();
    assert_eq!(atlas.dimensions(), (4 * 24, 2 * 20));
    for f in 0..8u32 {
        let frame = image::open(dir.join(format!("frame_{f:05}.png"))).expect("frame").to_rgba8();
        let (col, row) = (f % 4, f / 4);
        for y in 0..20 {
            for x in 0..24 {
                assert_eq!(atlas.get_pixel(col * 24 + x, row * 20 + y), frame.get_pixel(x, y), "frame {f} at {x},{y}");
            }
        }
        // The top corners are far from the plume: nothing drawn, fully transparent.
        assert_eq!(frame.get_pixel(0, 0)[3], 0, "frame {f}");
        assert!(frame.pixels().any(|p| p[3] > 0), "frame {f} draws nothing");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("smoke_flipbook.json")).expect("json")).expect("JSON");
    assert_eq!((json["columns"].as_u64(), json["rows"].as_u64(), json["frames"].as_u64()), (Some(4), Some(2), Some(8)));
    assert_eq!((json["frame_width"].as_u64(), json["frame_height"].as_u64()), (Some(24), Some(20)));
    let dt = 0.0166667f64;
    let fps = json["fps"].as_f64().expect("fps");
    assert!((fps - 1.0 / (2.0 * dt)).abs() < 1e-3, "{fps}");
    // Without --transparent every pixel is opaque.
    let opaque =
        fluid(&["run", "smoke", "--steps", "2", "--png", "--set", "grid.nx=24", "--set", "grid.ny=20", "--out", out]);
    assert!(opaque.status.success(), "{}", text(&opaque.stderr));
    let frame = image::open(dir.join("frame_00000.png")).expect("frame").to_rgba8();
    assert!(frame.pixels().all(|p| p[3] == 255));
}

/// A look chosen by `--set` alone draws its layers: the fire look over a transparent
/// background leaves the top corner clear and the burner lit; a look or blend mode that does
/// not exist exits 2 naming the key and the choices.
#[test]
fn a_look_is_chosen_by_set_and_keeps_transparency() {
    let dir = temp_dir("look");
    let out = dir.to_str().expect("utf8");
    let args = ["run", "fire", "--steps", "30", "--frame-every", "30", "--png", "--transparent"];
    let size = ["--set", "grid.nx=48", "--set", "grid.ny=64", "--set", "render.look=fire", "--out", out];
    let run = fluid(&[&args[..], &size[..]].concat());
    assert!(run.status.success(), "{}", text(&run.stderr));
    let frame = image::open(dir.join("frame_00000.png")).expect("frame").to_rgba8();
    assert_eq!(frame.get_pixel(0, 0)[3], 0, "nothing drawn in the top corner");
    let lit = frame.pixels().filter(|p| p[3] == 255 && p[0] > 200 && p[0] > p[2]).count();
    assert!(lit > 0, "no flame drawn");
    bad(&["run", "smoke", "--set", "render.look=flame"], &["render.look", "flame", "fire", "trails"]);
    bad(&["run", "smoke", "--set", "render.layers=[{blend=\"lighten\"}]"], &["render.layers", "lighten", "screen"]);
    bad(&["run", "smoke", "--set", "render.layers=[{opacity=2}]"], &["render.layers[0].opacity", "2"]);
}

/// `--exr` writes each field at each frame as 32-bit float OpenEXR, top row first: the last
/// frame's values are the `.npy` dump's, bit for bit (Y for a scalar or face field, RGBA for
/// the dye).
#[test]
fn exr_frames_hold_the_fields_values() {
    let dir = temp_dir("exr");
    let out = dir.to_str().expect("utf8");
    let args = [
        "run",
        "ink",
        "--steps",
        "10",
        "--frame-every",
        "5",
        "--exr",
        "dye,u,pressure",
        "--dump",
        "dye,u,pressure",
        "--set",
        "grid.nx=40",
        "--set",
        "grid.ny=30",
        "--out",
        out,
    ];
    let run = fluid(&args);
    assert!(run.status.success(), "{}", text(&run.stderr));
    for (field, channels) in [("u", &["Y"][..]), ("pressure", &["Y"]), ("dye", &["A", "B", "G", "R"])] {
        let (shape, payload) = npy(&dir.join(format!("{field}.npy")));
        let want: Vec<f32> = payload.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let image = exr::prelude::read_first_flat_layer_from_file(dir.join(format!("{field}_00001.exr"))).expect("exr");
        let (w, h) = (image.layer_data.size.0, image.layer_data.size.1);
        assert_eq!((h, w), (shape[0], shape[1]), "{field}");
        let list = &image.layer_data.channel_data.list;
        let names: Vec<String> = list.iter().map(|c| c.name.to_string()).collect();
        assert_eq!(names, channels, "{field}");
        let per = if channels.len() == 4 { 4 } else { 1 };
        for c in list {
            let exr::prelude::FlatSamples::F32(values) = &c.sample_data else { panic!("{field}: not f32") };
            let k = ["R", "G", "B", "A"].iter().position(|n| c.name.to_string() == *n).unwrap_or(0);
            for y in 0..h {
                for x in 0..w {
                    // The picture's top row is the box's top row.
                    let got = values[y * w + x];
                    let expected = want[per * ((h - 1 - y) * w + x) + k];
                    assert_eq!(got.to_bits(), expected.to_bits(), "{field} {} at {x},{y}", c.name);
                }
            }
        }
    }
    assert!(dir.join("dye_00000.exr").exists() && !dir.join("dye_00001.exr.part").exists());
    bad(&["run", "smoke", "--exr", "velocity"], &["unknown field", "velocity"]);
    bad(&["run", "smoke", "--exr", "dye"], &["--exr", "dye", "params.fields.dye = false"]);
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
    // The GIF holds the same frames, in order, each through its own 256-colour palette: 50 ms
    // each (three steps of 1/60 s: it plays in simulated time), 40 × 30, looping, and each
    // decoded frame closest to its own PNG.
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(gif.as_slice()).expect("gif header");
    assert_eq!((decoder.width(), decoder.height()), (40, 30));
    assert_eq!(decoder.repeat(), gif::Repeat::Infinite);
    let mean_diff =
        |a: &[u8], b: &[u8]| a.iter().zip(b).map(|(x, y)| f64::from(x.abs_diff(*y))).sum::<f64>() / a.len() as f64;
    let mut k = 0;
    while let Some(frame) = decoder.read_next_frame().expect("gif frame") {
        assert_eq!(frame.delay, 5, "frame {k}: 50 ms");
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

#[test]
fn a_run_continued_from_its_checkpoint_ends_with_the_same_bits() {
    let dir = temp_dir("checkpoint");
    let (whole, first, rest) = (dir.join("whole"), dir.join("first"), dir.join("rest"));
    let small = ["--set", "grid.nx=24", "--set", "grid.ny=16", "--set", "params.fields.dye=true"];
    let run = |args: &[&str]| {
        let out = fluid(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let s = |p: &Path| p.to_str().expect("utf8").to_string();
    let (whole_s, first_s, rest_s) = (s(&whole), s(&first), s(&rest));
    let mut a = vec!["run", "smoke", "--steps", "10", "--out", &whole_s, "--dump", "u,v,pressure,density,dye"];
    a.extend(small);
    run(&a);
    let mut b = vec!["run", "smoke", "--steps", "6", "--save-every", "4", "--out", &first_s];
    b.extend(small);
    let summary = run(&b);
    // Every 4 steps and after the last.
    for step in [4, 6] {
        let file = first.join(format!("checkpoint_{step:06}.fluid"));
        assert!(file.is_file() && summary.contains(&s(&file)), "{summary}");
    }
    assert!(!first.join("checkpoint_000008.fluid").exists());
    let checkpoint = s(&first.join("checkpoint_000006.fluid"));
    run(&["run", &checkpoint, "--steps", "4", "--out", &rest_s, "--dump", "u,v,pressure,density,dye"]);
    for field in ["u", "v", "pressure", "density", "dye"] {
        let (shape_a, data_a) = npy(&whole.join(format!("{field}.npy")));
        let (shape_b, data_b) = npy(&rest.join(format!("{field}.npy")));
        assert_eq!(shape_a, shape_b, "{field}");
        assert!(data_a == data_b, "{field}: the continued run differs from the whole one");
    }
    // Its scene's parameters may change; its grid may not; a damaged file is refused.
    run(&["run", &checkpoint, "--steps", "1", "--set", "params.vorticity=2"]);
    let out = fluid(&["run", &checkpoint, "--steps", "1", "--set", "grid.nx=32"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("keeps its grid"), "{}", text(&out.stderr));
    let mut bytes = std::fs::read(first.join("checkpoint_000006.fluid")).expect("read");
    bytes.truncate(bytes.len() / 2);
    let cut = dir.join("cut.fluid");
    std::fs::write(&cut, bytes).expect("write");
    let out = fluid(&["run", &s(&cut), "--steps", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("checkpoint: ") && text(&out.stderr).contains("truncated"),
        "{}",
        text(&out.stderr)
    );
    let out = fluid(&["run", "smoke", "--steps", "1", "--save-every", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--save-every"), "{}", text(&out.stderr));
    // A checkpoint's name is checked as a scene file's: one edited to leave out/ is refused
    // before any folder is made (run from an empty folder, where out/../zz would appear).
    let bytes = std::fs::read(first.join("checkpoint_000006.fluid")).expect("read");
    let at = bytes.windows(14).position(|w| w == b"name = \"smoke\"").expect("the scene's name in the header");
    let mut edited = bytes.clone();
    edited[at..at + 14].copy_from_slice(b"name = \"../zz\"");
    let cwd = temp_dir("checkpoint-name");
    std::fs::write(cwd.join("evil.fluid"), edited).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_fluid"))
        .args(["run", "evil.fluid", "--steps", "1", "--png"])
        .current_dir(&cwd)
        .output()
        .expect("run fluid");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`name`") && err.contains("../zz"), "{err}");
    assert!(!cwd.join("zz").exists() && !cwd.join("out").exists(), "nothing is made");
}

#[test]
fn the_plan_and_the_memory_budget() {
    let small = ["--set", "grid.nx=48", "--set", "grid.ny=64"];
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "smoke", "--steps", "3"];
        args.extend(small);
        args.extend(extra);
        fluid(&args)
    };
    let out = run(&["--plan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan = text(&out.stdout);
    for needle in ["u ", "multigrid", "in workspace", "cpu working memory", "total", "no storage.budget: runs 48x64"] {
        assert!(plan.contains(needle), "`{needle}` missing from\n{plan}");
    }
    let total: u64 = plan
        .lines()
        .find(|l| l.starts_with("total"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .expect("the total");
    // A dump is counted: the largest field read back (u, 49 × 64 f32 values).
    let out = run(&["--plan", "--dump", "density,u"]);
    let plan = text(&out.stdout);
    assert!(
        out.status.success() && plan.contains(&format!("the largest, u, takes 12.2 KiB ({} B)", 49 * 64 * 4)),
        "{plan}"
    );
    // In f16 the velocity and smoke are stored so (the CPU holds them in f32 words).
    let out = run(&["--plan", "--set", "storage.format=f16"]);
    let plan = text(&out.stdout);
    assert!(plan.lines().any(|l| l.starts_with("density ") && l.contains(" f16 ")), "{plan}");
    assert!(plan.lines().any(|l| l.starts_with("pressure ") && l.contains(" f32 ")), "{plan}");
    let budget = format!("storage.budget={}", total - 1);
    let out = run(&["--set", &budget]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let message = text(&out.stderr);
    assert!(message.contains(&format!("needs {total} bytes")) && message.contains("downscale"), "{message}");
    let exact = format!("storage.budget={total}");
    assert!(run(&["--set", &exact]).status.success());
    let half = format!("storage={{budget={}, policy=\"downscale\"}}", total / 2);
    let out = run(&["--set", &half, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("the 48x64 grid does not fit; running"), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_str(&text(&out.stdout)).expect("json");
    assert_eq!(json["downscaled_from"], serde_json::json!([48, 64]));
    assert!(json["grid"][1].as_u64().expect("ny") < 64);
    assert!(json["memory"]["total"].as_u64().expect("total") <= total / 2);
    // A finer dye gives first, and the message says so: the paddle preset (dye twice finer) in
    // a budget between its plan with the dye on the grid and its own.
    let paddle = |extra: &[&str]| {
        let mut args = vec!["run", "paddle", "--steps", "2", "--set", "grid.nx=40", "--set", "grid.ny=40"];
        args.extend(extra);
        fluid(&args)
    };
    let total_of = |out: std::process::Output| -> u64 {
        let plan = text(&out.stdout);
        let line = plan.lines().find(|l| l.starts_with("total")).map(str::to_string).unwrap_or_default();
        line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("the total")
    };
    let (coarse, fine) = (total_of(paddle(&["--set", "grid.dye_factor=1", "--plan"])), total_of(paddle(&["--plan"])));
    assert!(coarse < fine);
    let between = format!("storage={{budget={}, policy=\"downscale\"}}", (coarse + fine) / 2);
    let out = paddle(&["--set", &between, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message = text(&out.stderr);
    assert!(
        message.contains("the 40x40 grid fits only with its dye on the grid (grid.dye_factor 1 instead of 2)"),
        "{message}"
    );
    let json: serde_json::Value = serde_json::from_str(&text(&out.stdout)).expect("json");
    assert_eq!(json["grid"], serde_json::json!([40, 40]));
    let out = run(&["--set", "storage.budget=\"12 parsecs\""]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("storage.budget"), "{}", text(&out.stderr));
}

#[test]
fn a_scene_files_mask_is_read_beside_it() {
    let dir = temp_dir("mask-scene");
    std::fs::create_dir_all(dir.join("art")).expect("dir");
    std::fs::copy("../fluid-core/scenes/grate.png", dir.join("art/slats.png")).expect("copy");
    let scene = "name = \"masked\"\n[grid]\nnx = 128\nny = 128\n[params.pressure]\nsolver = \"sor\"\n\
                 [[obstacles]]\nshape = \"mask\"\nimage = \"art/slats.png\"\nsize = [0.8, 0.2]\n";
    std::fs::write(dir.join("masked.toml"), scene).expect("scene");
    let out_dir = dir.join("out");
    let out = fluid(&[
        "run",
        dir.join("masked.toml").to_str().expect("utf8"),
        "--steps",
        "2",
        "--out",
        out_dir.to_str().expect("utf8"),
        "--dump",
        "solid",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (shape, bytes) = npy(&out_dir.join("solid.npy"));
    assert_eq!(shape, vec![128, 128]);
    let solid: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    // The grate's opaque pixels are 64.2 % of its 102.4 × 25.6 cells: 1683 cells of solid.
    let area: f32 = solid.iter().sum();
    assert!((area / 1683.0 - 1.0).abs() < 0.03, "{area} cells of solid");
}
