use super::*;

#[test]
fn presets_parse() {
    for (name, _) in PRESETS {
        let s = Scene::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!s.description.is_empty(), "{name} has a description");
    }
}

#[test]
fn overrides_reach_every_required_key() {
    let items = [
        "grid.nx=40",
        "grid.ny=30",
        "grid.h=0.5",
        "params.dt=0.02",
        "params.viscosity=0.01",
        "params.pressure.solver=jacobi",
        "params.pressure.iterations=12",
        "params.pressure.omega=0.8",
    ];
    let ov: Vec<_> = items.iter().map(|i| parse_override(i).expect("parse")).collect();
    let s = Scene::preset_with("smoke", &ov).expect("scene");
    assert_eq!((s.grid.nx, s.grid.ny, s.grid.h), (40, 30, Some(0.5)));
    assert_eq!(s.params.dt, 0.02);
    assert_eq!(s.params.viscosity, 0.01);
    assert_eq!(s.params.pressure.iterations, 12);
    assert_eq!(s.params.pressure.omega, Some(0.8));
}

#[test]
fn overrides_index_arrays() {
    let ov = |items: &[&str]| items.iter().map(|i| parse_override(i).expect("parse")).collect::<Vec<_>>();
    let base = Scene::preset("smoke").expect("smoke");
    let s = Scene::preset_with("smoke", &ov(&["emitters.0.radius=0.05", "emitters.0.center.1=0.2"]))
        .expect("indexed overrides");
    assert_eq!(s.emitters[0].radius, 0.05);
    assert_eq!(s.emitters[0].center, [base.emitters[0].center[0], 0.2]);
    assert_eq!(s.emitters.len(), base.emitters.len());
    let n = base.emitters.len();
    let e = Scene::preset_with("smoke", &ov(&[&format!("emitters.{n}.radius=0.1")])).expect_err("past the end");
    assert!(e.to_string().contains(&format!("`emitters` is an array of {n}")), "{e}");
    let e = Scene::preset_with("smoke", &ov(&["emitters.x.radius=0.1"])).expect_err("not an index");
    assert!(e.to_string().contains("`x` is not an index"), "{e}");
    let e = Scene::preset_with("smoke", &ov(&["grid.nx.y=3"])).expect_err("through a number");
    assert!(e.to_string().contains("`grid.nx` is not a table or an array"), "{e}");
    // smoke has no initial splats: an index into them cannot be set piecewise.
    let e = Scene::preset_with("smoke", &ov(&["splats.0.center=[0.5, 0.5]"])).expect_err("no such array");
    assert!(e.to_string().contains("the scene has no `splats`, so it has no element 0"), "{e}");
    let e = Scene::preset_with("smoke", &ov(&["params.extra.2=1"])).expect_err("nested");
    assert!(e.to_string().contains("no `params.extra`"), "{e}");
    Scene::preset_with("smoke", &ov(&["splats=[{center=[0.5, 0.5], density=1}]"])).expect("the whole array");
}

#[test]
fn overrides_of_a_table_set_its_keys_and_refuse_other_values() {
    let ov = |items: &[&str]| items.iter().map(|i| parse_override(i).expect("parse")).collect::<Vec<_>>();
    let base = Scene::preset("smoke").expect("smoke");
    // An inline table sets the keys it names, at any depth, and keeps the others.
    let s = Scene::preset_with("smoke", &ov(&["params={dt=0.02, pressure={iterations=7}}"])).expect("merged");
    assert_eq!((s.params.dt, s.params.pressure.iterations), (0.02, 7));
    assert_eq!(s.params.viscosity, base.params.viscosity);
    assert_eq!(s.params.pressure.solver, base.params.pressure.solver);
    assert_eq!(s.params.vorticity, base.params.vorticity);
    // A table written as an array in a scene file is refused by name: serde would read
    // `grid = [16, 16]` as nx and ny.
    for (text, path) in [
        ("grid = [16, 16]\n", "grid"),
        ("params = [0.5]\n[grid]\nnx = 8\nny = 8\n", "params"),
        ("[grid]\nnx = 8\nny = 8\n[params]\npressure = []\n", "params.pressure"),
        ("[grid]\nnx = 8\nny = 8\n[[emitters]]\ncenter = [0.5, 0.5]\nradius = 0.1\n", ""),
    ] {
        match Scene::from_toml(text, "t") {
            Ok(_) => assert!(path.is_empty(), "{text}: accepted"),
            Err(e) => {
                let e = e.to_string();
                assert!(!path.is_empty() && e.contains(&format!("`{path}` is a table")), "{text}: {e}");
            }
        }
    }
    // The check reads the scene's shape from the scene serialised back: every preset
    // serialises (were one not to, the check would pass it unread).
    for (name, _) in PRESETS {
        let scene = Scene::preset(name).expect("preset");
        assert!(toml::Table::try_from(&scene).is_ok(), "{name}");
    }
    // The same for overrides: a table replaced by anything else (serde would read `[]` as
    // a struct of defaults).
    for (item, path, what) in [
        ("params=[]", "params", "array"),
        ("params.pressure=3", "params.pressure", "integer"),
        ("params={pressure=[]}", "params.pressure", "array"),
        ("grid=small", "grid", "string"),
        // An element of an array that is a table, too (serde would read `[1, 2]` as a
        // splat's centre and radius, and name neither).
        ("emitters.0=[1, 2]", "emitters.0", "array"),
    ] {
        let e = Scene::preset_with("smoke", &ov(&[item])).expect_err(item).to_string();
        assert!(e.contains(&format!("`{path}` is a table")) && e.contains(what), "{item}: {e}");
    }
    let s = Scene::preset_with("smoke", &ov(&["emitters.0={radius=0.03}"])).expect("an element's keys");
    assert_eq!((s.emitters[0].radius, s.emitters[0].center), (0.03, base.emitters[0].center));
}

#[test]
fn an_override_that_makes_the_scene_unreadable_is_named() {
    let ov = |items: &[&str]| items.iter().map(|i| parse_override(i).expect("parse")).collect::<Vec<_>>();
    // serde's message for a field of the tagged `initial.velocity` does not say where.
    let e = Scene::preset_with("taylor-green", &ov(&["params.dt=0.01", "initial.velocity.amplitude=[]", "grid.nx=32"]))
        .expect_err("an array for a number")
        .to_string();
    assert!(e.contains("after --set initial.velocity.amplitude=[]") && e.contains("expected f32"), "{e}");
    let e = Scene::preset_with("smoke", &ov(&["params.dt=0.01", "params.pressure.solver=fast"]))
        .expect_err("no such solver")
        .to_string();
    assert!(e.contains("after --set params.pressure.solver=\"fast\"") && e.contains("fast"), "{e}");
}

#[test]
fn bad_scenes_say_why() {
    let e = Scene::from_toml("[grid]\nnx = 4\nny = \n", "t").expect_err("syntax").to_string();
    assert!(e.contains("line 3"), "{e}");
    let e = Scene::from_toml("[grid]\nnx = 0\nny = 4\n", "t").expect_err("zero").to_string();
    assert!(e.contains("grid.nx") && e.contains('0'), "{e}");
    let e = Scene::from_toml("[grid]\nnx = 4\nny = 4\n[params]\ndt = nan\n", "t").expect_err("nan").to_string();
    assert!(e.contains("params.dt") && e.contains("NaN"), "{e}");
    let e = Scene::from_toml("[grid]\nnx = 4\nny = 4\n[params]\nviscosityy = 1\n", "t").expect_err("typo").to_string();
    assert!(e.contains("viscosityy"), "{e}");
    let e = Scene::preset_with("smoke", &[parse_override("params.pressure.solver=conjugate").expect("p")])
        .expect_err("solver")
        .to_string();
    assert!(e.contains("conjugate") && e.contains("multigrid"), "{e}");
    assert!(parse_override("novalue").is_err());
    // Floats that f32 cannot hold are refused with the value as written, not as it would
    // have become (inf, 0), in the file and through overrides, arrays included.
    let e = Scene::from_toml("[grid]\nnx = 4\nny = 4\n[params]\ndt = 1e300\n", "t").expect_err("huge").to_string();
    assert!(e.contains("params.dt") && e.contains("1e300") && e.contains("f32's range"), "{e}");
    let over = |item: &str| Scene::preset_with("smoke", &[parse_override(item).expect("p")]);
    let e = over("params.viscosity=1e-50").expect_err("tiny").to_string();
    assert!(e.contains("params.viscosity") && e.contains("1e-50") && e.contains("too small"), "{e}");
    let e = over("emitters.0.center.1=-4e38").expect_err("huge negative").to_string();
    assert!(e.contains("emitters[0].center[1]") && e.contains("-4e38"), "{e}");
    // The edges of the range, and zero, pass: f32::MIN_POSITIVE and f32::MAX exactly, either
    // sign; the f64 values just past them do not.
    for ok in [
        "params.viscosity=0.0",
        "params.viscosity=-0.0",
        "params.viscosity=1.2e-38",
        "params.max_speed=3.4e38",
        "params.viscosity=1.1754943508222875e-38",
        "params.max_speed=3.4028234663852886e38",
        "params.gravity=[-1.1754943508222875e-38, -3.4028234663852886e38]",
    ] {
        over(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for bad in ["params.viscosity=1.1754943508222874e-38", "params.max_speed=3.402823466385289e38"] {
        assert!(over(bad).is_err(), "{bad}");
    }
    assert!(Scene::preset("nope").is_err());
}

#[test]
fn splats_past_a_wall_are_refused_and_wrap_on_periodic_axes() {
    let over = |items: &[&str]| {
        let base = ["emitters.0.radius=0.05", "emitters.0.center=[0.5, 0.08]"];
        let ov: Vec<_> = base.iter().chain(items).map(|s| parse_override(s).expect("override")).collect();
        Scene::preset_with("smoke", &ov)
    };
    // The smoke emitter, set to gaussian of radius 0.05 of the height: it reaches 0.2 (x is a
    // fraction of the width, 0.75 of the height: 0.2 / 0.75 of it).
    let e = over(&["emitters.0.center.0=-0.27"]).expect_err("past the left wall").to_string();
    assert!(e.contains("emitters[0].center") && e.contains("[-0.27, 0.08]") && e.contains("along x"), "{e}");
    let e = over(&["emitters.0.center.1=1.21"]).expect_err("past the top").to_string();
    assert!(e.contains("[0.5, 1.21]") && e.contains("along y") && e.contains("gaussian"), "{e}");
    // Within its reach of the box it still adds something near the edge, and is kept.
    over(&["emitters.0.center.0=-0.26"]).expect("reaches in from the left");
    over(&["emitters.0.center.1=1.19"]).expect("reaches in from the top");
    over(&["emitters.0.center.1=0"]).expect("half in");
    // Linear falloff reaches its radius only; initial splats are checked too.
    let e = over(&["splats=[{center=[0.5, -0.06], radius=0.05}]"]).expect_err("linear").to_string();
    assert!(e.contains("splats[0].center") && e.contains("its radius, linear"), "{e}");
    over(&["splats=[{center=[0.5, -0.04], radius=0.05}]"]).expect("within its radius");
    // A periodic axis wraps any centre round.
    over(&["params.boundary.x=\"periodic\"", "emitters.0.center.0=-3.5"]).expect("periodic");
}

#[test]
fn settings_on_a_field_the_step_does_not_carry_are_refused() {
    let over = |preset: &str, items: &[&str]| {
        let ov: Vec<_> = items.iter().map(|s| parse_override(s).expect("override")).collect();
        Scene::preset_with(preset, &ov)
    };
    for (preset, items, needles) in [
        ("smoke", &["params.fields.density=false"][..], &["params.buoyancy.density_weight", "0.4"][..]),
        ("smoke", &["params.fields.temperature=false"], &["params.thermal_diffusivity", "0.001"]),
        (
            "smoke",
            &["params.fields.temperature=false", "params.thermal_diffusivity=0"],
            &["params.buoyancy.temperature_lift", "1"],
        ),
        (
            "smoke",
            &["params.fields.temperature=false", "params.buoyancy.temperature_lift=0", "params.thermal_diffusivity=0"],
            &["emitters[0].temperature", "8", "params.fields.temperature = false"],
        ),
        ("ink", &["emitters.1.density=0.5"], &["emitters[1].density", "0.5", "params.fields.density"]),
        ("smoke", &["splats=[{dye=[1, 0, 0, 1]}]"], &["splats[0].dye", "[1.0, 0.0, 0.0, 1.0]", "params.fields.dye"]),
        ("blobs", &["params.fields.density=false"], &["params.surface_tension", "0.0006", "params.fields.density"]),
        ("blobs", &["params.surface_tension=-1"], &["params.surface_tension", "-1"]),
        (
            "ink",
            &["params.advection.interpolation=\"monotone-cubic\""],
            &["params.advection.interpolation", "monotone-cubic", "MacCormack"],
        ),
        ("ink", &["params.advection.scheme=\"upwind\""], &["upwind", "maccormack", "bfecc"]),
    ] {
        let e = over(preset, items).expect_err("refused").to_string();
        for n in needles {
            assert!(e.contains(n), "{items:?}: `{n}` missing from: {e}");
        }
    }
    // With the field carried, or the setting gone, each is fine.
    over("smoke", &["params.fields.dye=true", "splats=[{dye=[1, 0, 0, 1]}]"]).expect("dye carried");
    over("ink", &["params.fields.density=true", "emitters.1.density=0.5"]).expect("density carried");
    over("ink", &["params.advection.interpolation=\"monotone-cubic\"", "params.advection.scheme=\"semi-lagrangian\""])
        .expect("cubic with semi-Lagrangian everywhere");
    // Drawing: only checked by whoever draws (`render.field` defaults to density).
    let ink = over("ink", &["render.field=\"density\""]).expect("a scene that never draws may keep it");
    let e = ink.check_render().expect_err("blank picture").to_string();
    assert!(e.contains("render.field") && e.contains("density") && e.contains("blank"), "{e}");
    over("ink", &[]).expect("preset").check_render().expect("dye is carried");
    over("smoke", &["render.field=\"curl\""]).expect("curl").check_render().expect("curl is always there");
}

/// `SplitMix64` is the published generator: the first five outputs for seed 1234567 are
/// those of the reference (Rosetta Code, "Pseudo-random numbers/Splitmix64"). Only the top
/// 24 bits reach `next_f32`, so the scenes' velocities alone would not see a slip in the
/// low bits of the last mixing step.
#[test]
fn splitmix64_gives_the_reference_sequence() {
    let mut rng = SplitMix64(1234567);
    let first: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
    assert_eq!(
        first,
        [6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821]
    );
}

/// `random` initial velocities are uniform in `[−amplitude, amplitude]` on both face
/// grids (both signs, the mean near 0: 5 standard errors), and the seed decides them.
#[test]
fn random_initial_velocities_span_plus_and_minus_the_amplitude() {
    let text = |seed: u64| {
        format!("[grid]\nnx = 32\nny = 24\n[initial.velocity]\nkind = \"random\"\namplitude = 0.5\nseed = {seed}\n")
    };
    let fields = |seed| {
        let scene = Scene::from_toml(&text(seed), "t").expect("scene");
        scene.initial_fields(&scene.grid().expect("grid"))
    };
    let a = fields(9);
    for (field, data) in &a {
        let n = data.len() as f32;
        let (lo, hi) = data.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let mean = data.iter().sum::<f32>() / n;
        let standard_error = 0.5 / 3f32.sqrt() / n.sqrt();
        assert!(lo >= -0.5 && hi <= 0.5 && lo < -0.45 && hi > 0.45, "{field:?}: [{lo}, {hi}]");
        assert!(mean.abs() < 5.0 * standard_error, "{field:?}: mean {mean}");
    }
    assert_eq!(a.iter().map(|(f, _)| *f).collect::<Vec<_>>(), [FieldId::U, FieldId::V]);
    assert_eq!(a, fields(9), "the same seed, the same field");
    assert_ne!(a, fields(10), "another seed, another field");
}

#[test]
fn taylor_green_is_discretely_divergence_free() {
    let g = Grid::new(24, 16, 0.3, Boundary::Periodic, Boundary::Periodic).expect("grid");
    let (u, v) = crate::grid::initial::taylor_green(&g, 1.0);
    let (nx, ny) = (24, 16);
    let mut worst = 0.0f32;
    for j in 0..ny {
        for i in 0..nx {
            let d = u[j * (nx + 1) + i + 1] - u[j * (nx + 1) + i] + v[(j + 1) * nx + i] - v[j * nx + i];
            worst = worst.max(d.abs());
        }
    }
    assert!(worst < 1e-5, "max |div| h = {worst}");
}

/// A scene's name becomes its output folder: one plain path component, whatever sets it.
#[test]
fn names_that_would_leave_the_output_folder_are_refused() {
    for name in ["smoke", "my scene 2", "v1.2_final-cut", "étude"] {
        check_name(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for (name, why) in [
        ("", "empty"),
        ("../../x", "'/'"),
        ("/abs/path", "'/'"),
        ("..", "names a folder"),
        (".", "names a folder"),
        ("a\\b", "'\\\\'"),
        ("c:x", "':'"),
        ("a\nb", "'\\n'"),
    ] {
        let e = check_name(name).expect_err(name).to_string();
        assert!(e.contains(why) && e.contains("`name`"), "{name:?}: {e}");
    }
    let long = "x".repeat(MAX_NAME_BYTES + 1);
    assert!(check_name(&long).expect_err("long").to_string().contains("129 bytes"));
    let e = Scene::preset_with("smoke", &[parse_override("name=../up").expect("override")]).expect_err("escapes");
    assert!(e.to_string().contains("output folder"), "{e}");
}

/// A `--set` key deeper than any scene key is refused before it builds nested tables.
#[test]
fn override_keys_have_a_bounded_depth() {
    let deep = vec!["a"; MAX_KEY_PARTS + 1].join(".") + "=1";
    let e = parse_override(&deep).expect_err("deep").to_string();
    assert!(e.contains(&format!("{} dotted parts", MAX_KEY_PARTS + 1)), "{e}");
    let ok = vec!["a"; MAX_KEY_PARTS].join(".") + "=1";
    parse_override(&ok).expect("at the bound");
    // A key handed to the library without `parse_override` is held to the same bound.
    let raw = (vec!["a"; 25_000].join("."), toml::Value::Integer(1));
    let e = Scene::preset("smoke").and_then(|s| s.with_overrides("test", &[raw])).expect_err("deep").to_string();
    assert!(e.contains("25000 dotted parts") && e.len() < 1000, "{}", &e[..e.len().min(2000)]);
}

/// A scene file nested deeper than any scene is refused by the parser's bound, with a
/// message, not a stack overflow: arrays, inline tables and table headers.
#[test]
fn deeply_nested_scene_files_are_refused() {
    let n = 25_000;
    for text in [
        format!("x = {}{}", "[".repeat(n), "]".repeat(n)),
        format!("x = {}1{}", "{a=".repeat(n), "}".repeat(n)),
        format!("[{}]", vec!["a"; n].join(".")),
    ] {
        let e = Scene::from_toml(&text, "test").expect_err("deep").to_string();
        assert!(e.len() < 2000, "{} bytes", e.len());
    }
}

/// Scene files are held to the shape `--set` is held to: no array longer than its type, no
/// key serde would let through unread (beside a unit variant's `kind`).
#[test]
fn extra_array_elements_and_unread_keys_are_refused() {
    let base = "[grid]\nnx = 16\nny = 16\n";
    for (extra, needles) in [
        ("[[splats]]\ncenter = [0.5, 0.5, 7]\nradius = 0.1\n", &["splats[0].center", "takes 2 values, not 3"][..]),
        ("[initial.velocity]\nkind = \"zero\"\nbogus = 3\n", &["initial.velocity.bogus", "not a key here", "`kind`"]),
        ("[render]\nramp = [[0.0, \"#000000\", 5], [1.0, \"#ffffff\"]]\n", &["render.ramp[0]", "takes 2 values"]),
    ] {
        let e = Scene::from_toml(&format!("{base}{extra}"), "test").expect_err(extra).to_string();
        assert!(needles.iter().all(|n| e.contains(n)), "{extra}: {e}");
    }
    Scene::from_toml(&format!("{base}[initial.velocity]\nkind = \"zero\"\n"), "test").expect("a unit variant");
    // Defaults written out are keys like any other, false flags included.
    let written = "[[obstacles]]\nshape = \"circle\"\nradius = 0.1\nposition = [0.5, 0.5]\ninvert = false\n\
                   repeat = false\npath = [{ time = 0.0, position = [0.5, 0.5] }, { time = 1.0, position = [0.4, 0.5] }]\n";
    Scene::from_toml(&format!("{base}{written}"), "test").expect("false flags written out");
}

/// Messages quote at most a few hundred characters of a value, wherever it came from, and
/// large f32 values in scientific notation.
#[test]
fn messages_stay_short_and_numbers_readable() {
    let huge = "x".repeat(1_000_000);
    let text = format!("[grid]\nnx = 16\nny = 16\n[params]\ndt = \"{huge}\"\n");
    let e = Scene::from_toml(&text, "test").expect_err("a string dt").to_string();
    assert!(e.len() < 2000 && e.contains("1000011 characters") && e.contains("line 5"), "{}", &e[..e.len().min(3000)]);
    let e = Scene::preset_with("smoke", &[parse_override(&format!("params.dt=\"{huge}\"")).expect("override")])
        .expect_err("a string dt")
        .to_string();
    assert!(e.len() < 2000, "{} bytes", e.len());
    let e = Scene::preset_with("smoke", &[parse_override("render.scale=-1e30").expect("override")])
        .and_then(|s| s.check_render())
        .expect_err("negative scale")
        .to_string();
    assert!(e.contains("-1e30"), "{e}");
    // What a user typed stays as typed.
    assert!(Error::invalid("k", "99999999999999999999", "typed").to_string().contains("99999999999999999999"));
    let e = Scene::preset_with(
        "smoke",
        &[parse_override("render.ramp=[[0.0, \"#000000\"], [1.5, \"#ffffff\"]]").expect("override")],
    )
    .and_then(|s| s.check_render())
    .expect_err("a stop past 1")
    .to_string();
    assert!(e.contains("render.ramp[1]") && e.contains("[0, 1]"), "{e}");
    // Keys, indices and values quoted in the reasons are cut too.
    let long = "k".repeat(100_000);
    for item in [
        format!("params={long}"),
        format!("emitters.{long}.radius=1"),
        format!("{long}.0=1"),
        format!("params.{long}=1"),
    ] {
        let e = Scene::preset_with("smoke", &[parse_override(&item).expect("override")]).expect_err("bad").to_string();
        assert!(e.len() < 2000, "{}: {} bytes", &item[..20], e.len());
    }
    let text = format!("[grid]\nnx = 16\nny = 16\n[initial.velocity]\nkind = \"zero\"\n{long} = 1\n");
    let e = Scene::from_toml(&text, "test").expect_err("unknown key").to_string();
    assert!(e.len() < 2000, "{} bytes", e.len());
    // Numbers inside arrays print as f32 does in Debug form, 1e30 not 31 digits.
    let e = Scene::preset_with("smoke", &[parse_override("emitters.0.center=[1e30, 0.5]").expect("override")])
        .expect_err("far away")
        .to_string();
    assert!(e.contains("1e30") && !e.contains("0000000000"), "{e}");
}

/// A scene with `obstacles` (TOML of `[[obstacles]]` entries) and the SOR solver.
fn with_obstacles(obstacles: &str) -> Result<Scene> {
    let text = format!("[grid]\nnx = 40\nny = 20\n[params.pressure]\nsolver = \"sor\"\n{obstacles}");
    Scene::from_toml(&text, "test")
}

/// Obstacles are written in fractions of the box (position by width and height, sizes by
/// height), angles in degrees; each shape takes its own keys.
#[test]
fn obstacles_read_in_box_fractions_and_degrees() {
    let s = with_obstacles(
        "[[obstacles]]\nshape = \"box\"\nposition = [0.25, 0.5]\nsize = [0.4, 0.2]\nangle = 90\n\
         velocity = [1.0, 0.0]\nangular_velocity = 180\n\
         [[obstacles]]\nshape = \"capsule\"\nlength = 0.5\nradius = 0.1\n\
         [[obstacles]]\nshape = \"polygon\"\nposition = [0.8, 0.5]\npoints = [[0, 0], [0.1, 0], [0, 0.1]]\n",
    )
    .expect("scene");
    let grid = s.grid().expect("grid");
    assert!(grid.solids);
    let o = s.obstacles().expect("obstacles");
    assert_eq!(o[0].pose.position, [0.5, 0.5]);
    assert_eq!(o[0].shape, crate::frame::solid::Shape::Rect { half_size: [0.2, 0.1] });
    assert!((o[0].pose.angle - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
    assert!((o[0].motion.angular_velocity - std::f32::consts::PI).abs() < 1e-6);
    assert_eq!(o[1].shape, crate::frame::solid::Shape::Capsule { half_length: 0.25, radius: 0.1 });
    assert_eq!(o[1].pose.position, [1.0, 0.5]);
    assert_eq!(o[2].shape, crate::frame::solid::Shape::Polygon { points: vec![[0.0, 0.0], [0.1, 0.0], [0.0, 0.1]] });
    let text = toml::to_string(&s).expect("serialise");
    assert_eq!(Scene::from_toml(&text, "again").expect("reads back"), s);
}

/// Bad geometry is refused with the key and the reason.
#[test]
fn bad_obstacles_are_refused_by_name() {
    let circle = |rest: &str| format!("[[obstacles]]\nshape = \"circle\"\n{rest}\n");
    let cases = [
        (circle(""), "obstacles[0].radius", "needs `radius`"),
        (circle("radius = 0.1\nsize = [0.1, 0.1]"), "obstacles[0].size", "remove `size`"),
        (circle("radius = 0.0"), "obstacles[0].radius", "> 0"),
        (circle("radius = 0.1\nangle = nan"), "obstacles[0].angle", "finite"),
        (circle("radius = 0.1\nvelocity = [inf, 0]"), "obstacles[0].velocity", "finite"),
        (circle("radius = 0.1\nposition = [3.0, 0.5]"), "obstacles[0].position", "outside the box"),
        (circle("radius = 5.0"), "obstacles", "cover the whole box"),
        ("[[obstacles]]\nshape = \"box\"\nsize = [0.1, -1]\n".into(), "obstacles[0].size[1]", "> 0"),
        ("[[obstacles]]\nshape = \"polygon\"\npoints = [[0, 0], [1, 1]]\n".into(), "obstacles[0].points", "3 to"),
        ("[[obstacles]]\nshape = \"polygon\"\npoints = []\n".into(), "obstacles[0].points", "3 to"),
        ("[[obstacles]]\nshape = \"capsule\"\nradius = 0.1\n".into(), "obstacles[0].length", "needs `length`"),
    ];
    for (toml, key, why) in cases {
        let e = with_obstacles(&toml).expect_err(&toml).to_string();
        assert!(e.contains(key) && e.contains(why), "{toml}: {e}");
    }
    let e = with_obstacles("[[obstacles]]\nshape = \"star\"\n").expect_err("unknown shape").to_string();
    assert!(e.contains("star") && e.contains("circle"), "{e}");
    let hot =
        "[params.fields]\ntemperature = false\n[[obstacles]]\nshape = \"circle\"\nradius = 0.1\ntemperature = 2.0\n";
    let e = with_obstacles(hot).expect_err("held without a temperature field").to_string();
    assert!(e.contains("obstacles[0].temperature") && e.contains("params.fields.temperature"), "{e}");
    let e = with_obstacles(&circle("radius = 0.1\ntemperature = nan")).expect_err("NaN").to_string();
    assert!(e.contains("obstacles[0].temperature") && e.contains("finite"), "{e}");
    let held = with_obstacles(&circle("radius = 0.1\ntemperature = 2.0")).expect("held");
    assert!(held.grid().expect("grid").held);
    assert_eq!(held.obstacles().expect("obstacles")[0].temperature, Some(2.0));
    let many: String = (0..=MAX_OBSTACLES).map(|_| circle("radius = 0.01")).collect();
    let e = with_obstacles(&many).expect_err("too many").to_string();
    assert!(e.contains("at most 64 obstacles"), "{e}");
}

/// Solvers that do not weight the faces by their open fraction refuse obstacles, by name.
#[test]
fn solvers_without_face_weights_refuse_obstacles() {
    let text = "[grid]\nnx = 16\nny = 16\n[params.pressure]\nsolver = \"jacobi-multisweep\"\n\
                [[obstacles]]\nshape = \"circle\"\nradius = 0.1\n";
    let e = Scene::from_toml(text, "test").expect_err("refused").to_string();
    assert!(e.contains("params.pressure.solver") && e.contains("jacobi-multisweep") && e.contains("obstacles"), "{e}");
}

/// `--set 'obstacles=[]'` clears a preset's obstacles (the key exists even when empty).
#[test]
fn obstacles_can_be_cleared_and_set_by_override() {
    let none = Scene::preset_with("obstacles", &[parse_override("obstacles=[]").expect("parse")]).expect("cleared");
    assert!(none.obstacles.is_empty() && !none.grid().expect("grid").solids);
    let one = parse_override("obstacles=[{shape = \"circle\", radius = 0.1}]").expect("parse");
    let s = Scene::preset_with("smoke", &[one]).expect("set");
    assert_eq!(s.obstacles.len(), 1);
}

/// `grid.dye_factor` and `grid.density_factor` are refused by name outside 1..=8, without
/// their field, with a sharper scheme, or past the size limits; a good one gives the field its
/// finer grid.
#[test]
fn the_fine_factors_are_checked() {
    let scene = |grid: &str, params: &str| {
        Scene::from_toml(&format!("[grid]\nnx = 64\nny = 32\n{grid}\n[params]\n{params}\n"), "test")
    };
    for field in ["dye", "density"] {
        let key = format!("{field}_factor");
        let on = format!("fields = {{ {field} = true }}");
        let cases = [
            (0, on.clone(), "1 to 8".to_string()),
            (9, on.clone(), "1 to 8".to_string()),
            (2, format!("fields = {{ {field} = false }}"), format!("params.fields.{field}")),
            (2, format!("{on}\nadvection = {{ scheme = \"maccormack\" }}"), "semi-lagrangian".to_string()),
            (2, format!("{on}\nadvection = {{ interpolation = \"monotone-cubic\" }}"), "bilinear".to_string()),
        ];
        for (f, params, why) in cases {
            let grid = format!("{key} = {f}");
            let e = scene(&grid, &params).expect_err(&grid).to_string();
            assert!(e.contains(&format!("grid.{key}")) && e.contains(&why), "{grid} {params}: {e}");
        }
        let big = format!("[grid]\nnx = 8192\nny = 8192\n{key} = 8\n[params]\n{on}\n");
        assert!(Scene::from_toml(&big, "big").expect_err("too large").to_string().contains("limits"));
    }
    // Written out at its default, it is a key like any other.
    assert_eq!(scene("dye_factor = 1", "fields = { dye = false }").expect("the default").grid.dye_factor, 1);
    let s = scene("dye_factor = 3", "fields = { dye = true }").expect("a finer dye");
    let grid = s.grid().expect("grid");
    assert_eq!(grid.dye_dims(), (192, 96));
    assert_eq!(grid.len(FieldId::Dye), 4 * 192 * 96);
    assert_eq!(grid.shape(FieldId::Dye), vec![96, 192, 4]);
    let text = toml::to_string(&s).expect("serialise");
    assert_eq!(Scene::from_toml(&text, "again").expect("reads back").grid.dye_factor, 3);
    let s = scene("density_factor = 2", "fields = { density = true }").expect("a finer density");
    let grid = s.grid().expect("grid");
    assert_eq!(grid.density_dims(), (128, 64));
    assert_eq!(grid.len(FieldId::Density), 128 * 64);
    assert_eq!(grid.len(FieldId::DensityCoarse), 64 * 32);
    assert_eq!(grid.shape(FieldId::Density), vec![64, 128]);
    let text = toml::to_string(&s).expect("serialise");
    assert_eq!(Scene::from_toml(&text, "again").expect("reads back").grid.density_factor, 2);
}

/// A fresh folder of its own for a test.
fn folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fluid-core-scene-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("folder");
    dir
}

/// A scene of one mask obstacle whose `image` is `image`.
fn masked(image: &str) -> String {
    format!(
        "[grid]\nnx = 32\nny = 32\n[params.pressure]\nsolver = \"sor\"\n\
         [[obstacles]]\nshape = \"mask\"\nimage = {image:?}\nsize = [0.6, 0.2]\n"
    )
}

/// A scene file reads images from its own folder or below it: `..`, an absolute path or a
/// symbolic link leading out is refused, naming the key; `--set` may name a file anywhere;
/// a bare built-in name with no file beside the scene is the built-in image, and each file
/// is kept by its canonical path (so a checkpoint reads it from any working folder).
#[test]
fn a_scene_file_reads_images_from_its_own_folder_only() {
    let dir = folder("image-folder");
    let home = dir.join("scene");
    std::fs::create_dir_all(home.join("art")).expect("folder");
    let grate = PRESET_IMAGES[0].1;
    let outside = dir.join("outside.png");
    std::fs::write(&outside, grate).expect("write");
    std::fs::write(home.join("art/slats.png"), grate).expect("write");
    std::os::unix::fs::symlink(&outside, home.join("link.png")).expect("symlink");
    let file = home.join("masked.toml");
    let read = |text: String, overrides: &[(String, toml::Value)]| {
        std::fs::write(&file, text).expect("write");
        Scene::from_file(&file, overrides)
    };
    let outside_text = outside.to_str().expect("utf8").to_string();
    for image in ["../outside.png", outside_text.as_str(), "link.png", "art/../../outside.png"] {
        let e = read(masked(image), &[]).expect_err(image).to_string();
        assert!(e.contains("`obstacles[0].image`") && e.contains("outside the scene file's folder"), "{image}: {e}");
    }
    let background = format!("{}[render]\nbackground_image = \"../outside.png\"\n", masked("art/slats.png"));
    let e = read(background, &[]).expect_err("background").to_string();
    assert!(e.contains("`render.background_image`") && e.contains("outside"), "{e}");
    // Inside, by any path: kept canonical.
    let s = read(masked("art/../art/slats.png"), &[]).expect("inside");
    let canonical = std::fs::canonicalize(home.join("art/slats.png")).expect("canonical");
    assert_eq!(s.obstacles[0].image.as_deref(), canonical.to_str());
    // Named on the command line, a file may lie anywhere.
    let set = parse_override(&format!("obstacles.0.image={outside_text}")).expect("override");
    let s = read(masked("art/slats.png"), &[set]).expect("--set");
    assert_eq!(s.obstacles[0].image.as_deref(), std::fs::canonicalize(&outside).expect("canonical").to_str());
    // No file beside it: the built-in image. A file there is read instead, and a link
    // leading out is no way round the rule.
    let s = read(masked("grate.png"), &[]).expect("built in");
    assert_eq!(s.obstacles[0].image.as_deref(), Some("grate.png"));
    std::os::unix::fs::symlink(&outside, home.join("grate.png")).expect("symlink");
    let e = read(masked("grate.png"), &[]).expect_err("link out").to_string();
    assert!(e.contains("outside the scene file's folder"), "{e}");
    let missing = read(masked("art/none.png"), &[]).expect_err("missing").to_string();
    assert!(missing.contains("`obstacles[0].image`") && missing.contains("(no such file)"), "{missing}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without a file (a preset, text handed to the library), a bare built-in name is the
/// built-in image, never a file of that name in the working folder; another relative path
/// is taken from the working folder and kept absolute.
#[test]
fn text_without_a_folder_names_built_in_images_by_their_bare_names() {
    let s = Scene::preset("obstacles").expect("preset");
    assert!(s.obstacles.iter().filter_map(|o| o.image.as_deref()).all(|i| i == "grate.png"), "{:?}", s.obstacles);
    let e = Scene::from_toml(&masked("no/such/image.png"), "text").expect_err("missing").to_string();
    let absolute = std::path::absolute("no/such/image.png").expect("absolute");
    assert!(e.contains(&format!("{} (no such file)", absolute.display())), "{e}");
}

/// At most `MAX_SPLATS` splats a step, emitters included: the scene's emitters and initial
/// splats are counted together.
#[test]
fn emitters_and_splats_are_counted_together() {
    let most = crate::splat::MAX_SPLATS;
    let mut s = Scene::preset("ink").expect("ink");
    let one = s.emitters[0];
    s.emitters = vec![one; most];
    s.splats = vec![one; most];
    let e = s.validate().expect_err("too many").to_string();
    assert!(e.contains(&format!("{most} emitters and {most} splats")) && e.contains("together"), "{e}");
    s.emitters = vec![one; 1];
    assert!(s.validate().is_err(), "1 emitter and {most} splats");
    s.emitters = vec![one; most / 2];
    s.splats = vec![one; most / 2];
    s.validate().expect("half and half");
}

/// A value that is not a word, where a key takes one of a few, is named with the key, the
/// value and the words it takes, from a file and from `--set`.
#[test]
fn a_word_key_given_something_else_names_the_words() {
    let set = |item: &str| Scene::preset_with("smoke", &[parse_override(item).expect("override")]);
    for (item, key, words) in [
        ("params.advection.backtrace=7", "`params.advection.backtrace`: 7", "`euler`, `rk2`, `rk3`"),
        ("params.pressure.solver=[1]", "`params.pressure.solver`: [1]", "`multigrid`"),
        ("emitters.0.falloff=1.5", "`emitters[0].falloff`: 1.5", "`linear`, `gaussian`, `constant`"),
    ] {
        let e = set(item).expect_err(item).to_string();
        assert!(e.contains(key) && e.contains(words) && !e.contains("string only"), "{item}: {e}");
    }
    let text = "[grid]\nnx = 8\nny = 8\n[params.advection]\nbacktrace = 7\n";
    let e = Scene::from_toml(text, "file").expect_err("a number").to_string();
    assert!(e.contains("`params.advection.backtrace`: 7") && e.contains("`rk3`"), "{e}");
    let e = set("storage.budget=[1]").expect_err("an array").to_string();
    assert!(e.contains("a whole number of bytes") && e.contains("256 MiB") && !e.contains("untagged"), "{e}");
}

/// A fill outside its container is shown as the scene writes it, not as Rust prints it.
#[test]
fn a_fill_outside_the_container_is_shown_as_written() {
    let set = parse_override("particles.fill.1.center=[0.9,0.9]").expect("override");
    let s = Scene::preset_with("splash", &[set]).expect("the scene reads");
    let spec = s.particles.as_ref().expect("a liquid");
    let e = spec.validate(&s.grid().expect("grid"), &[]).expect_err("outside").to_string();
    assert!(e.contains("particles.fill[1]") && e.contains("shape = \"circle\"") && e.contains("[0.9, 0.9]"), "{e}");
    assert!(!e.contains("Circle {") && !e.contains("None"), "{e}");
}

/// A scene file is read only when it is a regular file of at most `MAX_SCENE_BYTES`.
#[test]
fn scene_files_are_regular_and_size_capped() {
    let dir = folder("scene-file");
    let sparse = dir.join("huge.toml");
    std::fs::File::create(&sparse).and_then(|f| f.set_len(1 << 30)).expect("sparse");
    let t0 = std::time::Instant::now();
    let e = Scene::from_file(&sparse, &[]).expect_err("huge").to_string();
    assert!(e.contains("1073741824 bytes") && e.contains(&MAX_SCENE_BYTES.to_string()), "{e}");
    assert!(t0.elapsed().as_secs_f64() < 1.0, "{:?}", t0.elapsed());
    let fifo = dir.join("pipe.toml");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let e = Scene::from_file(&fifo, &[]).expect_err("fifo").to_string();
    assert!(e.contains("a FIFO") && e.contains("not a scene file"), "{e}");
    let e = Scene::from_file(&dir, &[]).expect_err("folder").to_string();
    assert!(e.contains("a folder") && e.contains("not a scene file"), "{e}");
    let e = Scene::from_file(&dir.join("none.toml"), &[]).expect_err("missing").to_string();
    assert!(e.contains("no such file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `[storage]` section as scenes write it.
mod storage {
    use crate::scene::Scene;
    use crate::storage::{BudgetPolicy, Bytes, FieldGroup, StoreFormat};

    #[test]
    fn a_scene_says_its_budget_and_policy() {
        let with = |extra: &str| Scene::from_toml(&format!("[grid]\nnx = 8\nny = 8\n{extra}"), "test");
        let s = with("[storage]\nbudget = \"64 MiB\"\npolicy = \"downscale\"").expect("scene");
        assert_eq!((s.storage.budget, s.storage.policy), (Some(Bytes(64 << 20)), BudgetPolicy::Downscale));
        let s = with("[storage]\nbudget = 4096").expect("scene");
        assert_eq!((s.storage.budget, s.storage.policy), (Some(Bytes(4096)), BudgetPolicy::Refuse));
        assert_eq!(with("").expect("scene").storage.budget, None);
        for bad in [
            "budget = 0",
            "budget = -5",
            "budget = \"lots\"",
            "policy = \"shrink\"",
            "format = \"f8\"",
            "fields = { pressure = \"f16\" }",
        ] {
            let e = with(&format!("[storage]\n{bad}")).expect_err(bad).to_string();
            assert!(e.contains("storage") || e.contains(bad), "{bad}: {e}");
        }
        // f16 for every field that may take it, but the temperature.
        let s = with("[storage]\nformat = \"f16\"\nfields = { temperature = \"f32\" }").expect("scene");
        for group in FieldGroup::ALL {
            let want = if group == FieldGroup::Temperature { StoreFormat::F32 } else { StoreFormat::F16 };
            assert_eq!(s.storage.format_of(group), want, "{group:?}");
        }
        let fields = crate::grid::GridFields::declare(&s.grid().expect("grid"), &s.params).stored(&s.storage);
        for f in crate::grid::FieldId::STATE_AND_SCRATCH {
            let half = fields.desc(*f).format.is_half();
            let group = FieldGroup::ALL.into_iter().find(|g| crate::grid::fields::group_fields(*g).contains(f));
            assert_eq!(half, group.is_some_and(|g| g != FieldGroup::Temperature), "{}", f.name());
        }
        // Written back (a checkpoint's header), the budget reads the same.
        let s = with("[storage]\nbudget = \"1.5 GiB\"").expect("scene");
        let again = Scene::from_toml(&toml::to_string(&s).expect("toml"), "again").expect("scene");
        assert_eq!(again.storage, s.storage);
    }

    #[test]
    fn sizes_read_with_their_units() {
        let b = |t: &str| Bytes::parse("k", t).map(|b| b.0);
        assert_eq!(b("4096").ok(), Some(4096));
        assert_eq!(b("256 MiB").ok(), Some(256 << 20));
        assert_eq!(b("1.5GB").ok(), Some(1_500_000_000));
        assert_eq!(b(" 2 KiB ").ok(), Some(2048));
        for bad in ["", "MiB", "-1 MiB", "0", "1 parsec", "1e999 GB", "nan GB", "0.1"] {
            let e = b(bad).expect_err(bad).to_string();
            assert!(e.contains("`k`"), "{bad}: {e}");
        }
    }
}

/// A step is at most `MAX_DISPATCHES` dispatches: Jacobi at its most iterations (100 000
/// sweeps) fits; MGPCG at as many (eight dispatches an iteration) is refused naming the key,
/// the count and the bound, before anything is allocated.
#[test]
fn a_step_of_too_many_dispatches_is_refused_by_its_key() {
    use crate::grid::model::MAX_DISPATCHES;
    use crate::params::MAX_ITERATIONS;
    let with = |solver: &str| {
        let ov: Vec<_> = ["grid.nx=16", "grid.ny=16", &format!("params.pressure.solver={solver}")]
            .iter()
            .chain(&[format!("params.pressure.iterations={MAX_ITERATIONS}").as_str()])
            .map(|s| parse_override(s).expect("override"))
            .collect();
        Scene::preset_with("smoke", &ov).expect("scene").model()
    };
    let model = with("jacobi").expect("the most Jacobi sweeps fit");
    assert!(model.schedules().iter().all(|s| s.dispatches().count() <= MAX_DISPATCHES));
    let e = with("mgpcg").expect_err("too many dispatches").to_string();
    assert!(e.contains("params.pressure.iterations") && e.contains("dispatches"), "{e}");
    assert!(e.contains(&MAX_DISPATCHES.to_string()) && e.contains("100000"), "{e}");
}

#[test]
fn a_misspelt_key_names_the_nearest_one() {
    let e = Scene::preset_with("smoke", &[parse_override("params.vorticty=3").expect("override")])
        .expect_err("misspelt")
        .to_string();
    assert!(e.contains("did you mean `vorticity`?"), "{e}");
    let text = "[grid]\nnx = 16\nny = 16\nnz = 3\n";
    let e = Scene::from_toml(text, "test").expect_err("misspelt").to_string();
    assert!(e.contains("did you mean `nx`?") || e.contains("did you mean `ny`?"), "{e}");
}

/// A no-slip side with no viscosity is refused, naming the side and what to change: the
/// viscous step holds it, so it would run as free slip without a word.
#[test]
fn a_no_slip_side_without_viscosity_is_refused() {
    let with = |items: &[&str]| {
        let ov: Vec<_> = items.iter().map(|s| parse_override(s).expect("override")).collect();
        Scene::preset_with("cavity", &ov)
    };
    let e = with(&["params.viscosity=0"]).expect_err("no viscosity").to_string();
    assert!(e.contains("params.boundary.") && e.contains("no-slip") && e.contains("params.viscosity > 0"), "{e}");
    let free =
        ["params.viscosity=0", "params.boundary.top={type=\"wall\", velocity=0.0}", "params.boundary.bottom=\"wall\""];
    let free = [&free[..], &["params.boundary.left=\"wall\"", "params.boundary.right=\"wall\""]].concat();
    with(&free).expect("free-slip walls need no viscosity");
    with(&[]).expect("the cavity as it is");
}
