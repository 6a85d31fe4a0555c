//! `cargo xtask shaders [--check]`: compile every WGSL kernel to SPIR-V with naga (wgsl-in,
//! spv-out) into `fluid-vulkan/shaders/gen/<entry point>.spv`, one module per entry point, so the
//! Vulkan backend runs exactly the shaders the wgpu backend runs. `--check` regenerates in memory
//! and fails when a committed file is missing, stale or extra.

use std::path::{Path, PathBuf};

use naga::back::spv;
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// Where the generated SPIR-V lives.
pub const GEN_DIR: &str = "fluid-vulkan/shaders/gen";

fn compile(name: &str, src: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    let module = naga::front::wgsl::parse_str(src).map_err(|e| format!("{name}.wgsl: {}", e.emit_to_string(src)))?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .map_err(|e| format!("{name}.wgsl: {}", e.emit_to_string(src)))?;
    let checks = naga::proc::BoundsCheckPolicies {
        index: naga::proc::BoundsCheckPolicy::Restrict,
        buffer: naga::proc::BoundsCheckPolicy::Restrict,
        image_load: naga::proc::BoundsCheckPolicy::Restrict,
        binding_array: naga::proc::BoundsCheckPolicy::Restrict,
    };
    // SPIR-V 1.3 (Vulkan 1.1), no debug info: the output must not depend on how xtask was built.
    // Our own shaders are trusted, so two guards naga adds for untrusted WGSL are left out:
    // - loop bounding (a 64-bit iteration counter in every loop), which keeps drivers from
    //   unrolling loops; every loop of ours ends by construction;
    // - zero-initialising workgroup memory, which naga's polyfill does with one invocation
    //   storing whole arrays (2304 serial stores in `jacobi_multisweep`); every kernel with
    //   workgroup memory (`reduce`, `cg_dot`, `jacobi_multisweep`) writes it before it reads it.
    let options = spv::Options {
        lang_version: (1, 3),
        flags: spv::WriterFlags::empty(),
        bounds_check_policies: checks,
        zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::None,
        force_loop_bounding: false,
        ..spv::Options::default()
    };
    let mut out = Vec::new();
    for ep in &module.entry_points {
        let pipeline = spv::PipelineOptions { shader_stage: ep.stage, entry_point: ep.name.clone() };
        let words = spv::write_vec(&module, &info, &options, Some(&pipeline))
            .map_err(|e| format!("{name}.wgsl, entry {}: {e}", ep.name))?;
        let bytes = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        out.push((format!("{}.spv", ep.name), bytes));
    }
    Ok(out)
}

/// Every generated file: `(file name, bytes)`, sorted by name.
pub fn generate() -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    for (stem, _) in fluid_wgpu::shaders::FILES {
        let src = fluid_wgpu::shaders::source(stem).ok_or_else(|| format!("cannot compose {stem}.wgsl"))?;
        files.extend(compile(stem, &src)?);
    }
    files.extend(compile("bandwidth", fluid_wgpu::shaders::BANDWIDTH)?);
    files.sort();
    Ok(files)
}

fn committed(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut paths = Vec::new();
    for e in entries {
        let p = e.map_err(|e| format!("reading {}: {e}", dir.display()))?.path();
        if p.extension().is_some_and(|x| x == "spv") {
            paths.push(p);
        }
    }
    Ok(paths)
}

/// Write (or with `check`, verify) the generated SPIR-V under `root`.
pub fn run(root: &Path, check: bool) -> Result<(), String> {
    let dir = root.join(GEN_DIR);
    let files = generate()?;
    let mut problems = Vec::new();
    for (name, bytes) in &files {
        let path = dir.join(name);
        let current = std::fs::read(&path).ok();
        if current.as_deref() == Some(&bytes[..]) {
            continue;
        }
        if check {
            problems.push(format!("{} is {}", path.display(), if current.is_some() { "stale" } else { "missing" }));
        } else {
            std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
            std::fs::write(&path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
            eprintln!("xtask: wrote {}", path.display());
        }
    }
    for path in committed(&dir)? {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !files.iter().any(|(n, _)| *n == name) {
            if check {
                problems.push(format!("{} has no WGSL source any more", path.display()));
            } else {
                std::fs::remove_file(&path).map_err(|e| format!("removing {}: {e}", path.display()))?;
                eprintln!("xtask: removed {}", path.display());
            }
        }
    }
    if !problems.is_empty() {
        return Err(format!("SPIR-V out of date (run `cargo xtask shaders`):\n  {}", problems.join("\n  ")));
    }
    eprintln!("xtask: {} SPIR-V modules {}", files.len(), if check { "up to date" } else { "generated" });
    Ok(())
}
