//! Every kernel rewritten for half-precision storage ([`swirly_shaders::with_half`]), natively
//! and packed, with all its `f32`, `vec2<f32>` and `vec4<f32>` storage bindings held as `f16`,
//! parses and validates under naga: the rewrite leaves no read unwidened and no write
//! unnarrowed. The packed form validates without the `SHADER_FLOAT16` capability.

use swirly_core::ir::kernel::{Element, Kernel};
use swirly_shaders::HalfStorage;

/// The kernel's float storage binding slots.
fn float_slots(kernel: &Kernel) -> Vec<u32> {
    (0..kernel.bindings.len() as u32)
        .filter(|&b| matches!(kernel.bindings[b as usize].element, Element::F32 | Element::Vec2F32 | Element::Vec4F32))
        .collect()
}

#[test]
fn every_kernel_validates_with_its_float_bindings_in_f16() {
    for (storage, caps) in [
        (HalfStorage::Native, naga::valid::Capabilities::all()),
        (HalfStorage::Packed, naga::valid::Capabilities::all() - naga::valid::Capabilities::SHADER_FLOAT16),
    ] {
        let mut checked = 0;
        for kernel in swirly_core::kernels() {
            let slots = float_slots(&kernel);
            if slots.is_empty() {
                continue;
            }
            let src = swirly_shaders::source(kernel.module).expect("composed");
            let half = swirly_shaders::with_half(&src, &slots, storage)
                .unwrap_or_else(|| panic!("{} {storage:?}: cannot rewrite {slots:?}", kernel.name));
            let module = naga::front::wgsl::parse_str(&half)
                .unwrap_or_else(|e| panic!("{} {storage:?}: {}", kernel.name, e.emit_to_string(&half)));
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
                .validate(&module)
                .unwrap_or_else(|e| panic!("{} {storage:?}: {}", kernel.name, e.emit_to_string(&half)));
            checked += 1;
        }
        assert!(checked > 60, "{checked} kernels");
    }
}

/// The `f16` variants compile to SPIR-V as the raw Vulkan backend makes them.
#[cfg(feature = "spirv")]
#[test]
fn every_f16_variant_compiles_to_spirv() {
    for storage in [HalfStorage::Native, HalfStorage::Packed] {
        for kernel in swirly_core::kernels() {
            let src = swirly_shaders::source(kernel.module).expect("composed");
            let half = swirly_shaders::with_half(&src, &float_slots(&kernel), storage).expect("rewritten");
            let modules = swirly_shaders::spirv::compile(kernel.module, &half).unwrap_or_else(|e| panic!("{e}"));
            assert!(modules.iter().any(|(entry, _)| entry == kernel.name), "{} {storage:?}", kernel.name);
        }
    }
}
