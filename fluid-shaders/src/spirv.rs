//! WGSL to SPIR-V with naga (feature `spirv`): the modules `cargo xtask shaders` commits, and
//! those the raw Vulkan backend makes when it runs (a kernel's `f16`-storage variant).

use naga::back::spv;
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// The SPIR-V words of each entry point of shader `src` (named `name` in errors), by entry.
pub fn compile(name: &str, src: &str) -> Result<Vec<(String, Vec<u32>)>, String> {
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
        out.push((ep.name.clone(), words));
    }
    Ok(out)
}
