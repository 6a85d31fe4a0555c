//! The `fluid` program on the GPU backends: runs with timings, adapters and devices, shader
//! overrides, and clear errors for the settings that pick them.
#![cfg(any(feature = "wgpu", feature = "vulkan"))]

mod common;

use std::process::Command;

use common::*;

#[cfg(feature = "wgpu")]
mod wgpu {
    use std::path::Path;
    use std::process::Output;

    use super::*;

    #[test]
    fn info_lists_the_adapters() {
        let out = fluid(&["info"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let s = text(&out.stdout);
        assert!(s.contains("wgpu adapters:"), "{s}");
        assert!(s.contains("Vulkan"), "an adapter through Vulkan (lavapipe in CI): {s}");
        // How f16 fields run there: lavapipe has shader-f16.
        let adapter = s.split("wgpu adapters:").nth(1).and_then(|t| t.lines().nth(2)).unwrap_or_default();
        assert!(s.contains(" f16 ") && adapter.contains(" native "), "{s}");
    }

    #[test]
    fn runs_on_wgpu_with_timings_and_json() {
        runs_on_gpu_with_timings_and_json("wgpu");
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
    // lavapipe and the H100 have shaderFloat16 and 16-bit storage: f16 fields run natively.
    assert!(device.contains(" native "), "f16: {s}");
}

/// The most iterations a solve may ask for run on both GPU backends: 100 000 Jacobi sweeps make
/// a step of 100 005 dispatches, past the ~65 000 after which lavapipe's executor faults on one
/// command buffer (each backend records such a step into several); and a step past
/// `MAX_DISPATCHES` (MGPCG at as many iterations) is refused naming the key, before anything
/// runs.
#[test]
fn the_most_iterations_allowed_run_on_the_gpu_backends() {
    let mut backends = Vec::new();
    if cfg!(feature = "wgpu") {
        backends.push("wgpu");
    }
    if cfg!(feature = "vulkan") {
        backends.push("vulkan");
    }
    for backend in backends {
        let solve = |solver: &str| {
            let (solver, n) = (format!("params.pressure.solver={solver}"), "params.pressure.iterations=100000");
            let args =
                ["run", "smoke", "--backend", backend, "--steps", "1", "--set", "grid.nx=8", "--set", "grid.ny=8"];
            let mut all = args.to_vec();
            all.extend_from_slice(&["--set", &solver, "--set", n]);
            fluid_in(&all, &std::env::temp_dir(), std::time::Duration::from_secs(300))
        };
        let out = solve("jacobi");
        assert_eq!(out.status.code(), Some(0), "{backend}: {}", text(&out.stderr));
        let out = solve("mgpcg");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{backend}: {err}");
        assert!(err.contains("params.pressure.iterations") && err.contains("dispatches"), "{backend}: {err}");
    }
}
