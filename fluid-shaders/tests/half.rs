//! Every kernel rewritten for half-precision storage ([`fluid_shaders::with_half`]) with all
//! its `f32`, `vec2<f32>` and `vec4<f32>` storage bindings held as `f16` parses and validates
//! under naga: the rewrite leaves no read unwidened and no write unnarrowed.

use fluid_core::ir::kernel::Element;

#[test]
fn every_kernel_validates_with_its_float_bindings_in_f16() {
    let mut checked = 0;
    for kernel in fluid_core::kernels() {
        let names: Vec<u32> = (0..kernel.bindings.len() as u32)
            .filter(|&b| {
                matches!(kernel.bindings[b as usize].element, Element::F32 | Element::Vec2F32 | Element::Vec4F32)
            })
            .collect();
        if names.is_empty() {
            continue;
        }
        let src = fluid_shaders::source(kernel.module).expect("composed");
        let half = fluid_shaders::with_half(&src, &names)
            .unwrap_or_else(|| panic!("{}: cannot rewrite {names:?}", kernel.name));
        let module = naga::front::wgsl::parse_str(&half)
            .unwrap_or_else(|e| panic!("{} in f16: {}", kernel.name, e.emit_to_string(&half)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{} in f16: {}", kernel.name, e.emit_to_string(&half)));
        checked += 1;
    }
    assert!(checked > 60, "{checked} kernels");
}

/// The `f16` variants compile to SPIR-V as the raw Vulkan backend makes them.
#[cfg(feature = "spirv")]
#[test]
fn every_f16_variant_compiles_to_spirv() {
    for kernel in fluid_core::kernels() {
        let slots: Vec<u32> = (0..kernel.bindings.len() as u32)
            .filter(|&b| {
                matches!(kernel.bindings[b as usize].element, Element::F32 | Element::Vec2F32 | Element::Vec4F32)
            })
            .collect();
        let src = fluid_shaders::source(kernel.module).expect("composed");
        let half = fluid_shaders::with_half(&src, &slots).expect("rewritten");
        let modules = fluid_shaders::spirv::compile(kernel.module, &half).unwrap_or_else(|e| panic!("{e}"));
        assert!(modules.iter().any(|(entry, _)| entry == kernel.name), "{}", kernel.name);
    }
}
