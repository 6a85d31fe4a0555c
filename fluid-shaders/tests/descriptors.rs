//! Every kernel's descriptor against its WGSL, by naga's reflection: the shader file parses and
//! validates, declares the entry point, its storage bindings (slot by slot: index, whether it
//! writes, element type), its uniforms (the model's and the step's, the parameter block of the
//! named struct and size, the splats) and its workgroup size. A kernel added with a descriptor
//! that does not say what its shader declares fails here, on every machine.

use swirly_core::ir::kernel::{Element, Workgroup};

fn parse(stem: &str) -> naga::Module {
    let src = swirly_shaders::source(stem).unwrap_or_else(|| panic!("no shader file {stem}.wgsl"));
    let module =
        naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{stem}.wgsl: {}", e.emit_to_string(&src)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{stem}.wgsl: {}", e.emit_to_string(&src)));
    module
}

/// The global at `@group(group) @binding(binding)`, if any.
fn global(module: &naga::Module, group: u32, binding: u32) -> Option<&naga::GlobalVariable> {
    module
        .global_variables
        .iter()
        .map(|(_, g)| g)
        .find(|g| g.binding.as_ref().is_some_and(|b| b.group == group && b.binding == binding))
}

/// A storage binding's (writable, element type).
fn storage(module: &naga::Module, g: &naga::GlobalVariable) -> (bool, Option<Element>) {
    let writable = match g.space {
        naga::AddressSpace::Storage { access } => access.contains(naga::StorageAccess::STORE),
        _ => panic!("a group-1 binding that is not storage"),
    };
    let element = match &module.types[g.ty].inner {
        naga::TypeInner::Array { base, .. } => match &module.types[*base].inner {
            naga::TypeInner::Scalar(s) if s.kind == naga::ScalarKind::Float && s.width == 4 => Some(Element::F32),
            naga::TypeInner::Scalar(s) if s.kind == naga::ScalarKind::Uint && s.width == 4 => Some(Element::U32),
            naga::TypeInner::Atomic(s) if s.kind == naga::ScalarKind::Uint && s.width == 4 => Some(Element::AtomicU32),
            naga::TypeInner::Vector { size: naga::VectorSize::Quad, scalar }
                if scalar.kind == naga::ScalarKind::Float =>
            {
                Some(Element::Vec4F32)
            }
            naga::TypeInner::Vector { size: naga::VectorSize::Bi, scalar }
                if scalar.kind == naga::ScalarKind::Float =>
            {
                Some(Element::Vec2F32)
            }
            _ => None,
        },
        _ => None,
    };
    (writable, element)
}

/// A uniform binding's struct name and size.
fn uniform(module: &naga::Module, g: &naga::GlobalVariable) -> (String, u32) {
    assert_eq!(g.space, naga::AddressSpace::Uniform, "not a uniform");
    let ty = &module.types[g.ty];
    match ty.inner {
        naga::TypeInner::Struct { span, .. } => (ty.name.clone().unwrap_or_default(), span),
        _ => panic!("a uniform that is not a struct"),
    }
}

#[test]
fn every_descriptor_says_what_its_shader_declares() {
    let kernels = swirly_core::kernels();
    for k in &kernels {
        let module = parse(k.module);
        let ep = module
            .entry_points
            .iter()
            .find(|e| e.name == k.name)
            .unwrap_or_else(|| panic!("{}.wgsl has no entry point {}", k.module, k.name));
        // Storage slots, in order, and nothing else in group 1.
        for (i, b) in k.bindings.iter().enumerate() {
            let g = global(&module, 1, i as u32).unwrap_or_else(|| panic!("{}: no binding {i} ({})", k.name, b.name));
            assert_eq!(storage(&module, g), (b.access.writes(), Some(b.element)), "{}: slot {i} ({})", k.name, b.name);
        }
        let group1 = module.global_variables.iter().filter(|(_, g)| g.binding.as_ref().is_some_and(|b| b.group == 1));
        assert_eq!(group1.count(), k.bindings.len(), "{}: group 1 bindings", k.name);
        // Group 0: the model's uniform, the step's, the parameter block, the splats.
        let model = global(&module, 0, 0).unwrap_or_else(|| panic!("{}: no model uniform", k.name));
        assert_eq!(uniform(&module, model), ("GridUniform".to_string(), 192), "{}: binding 0", k.name);
        let step = global(&module, 0, 1).unwrap_or_else(|| panic!("{}: no step uniform", k.name));
        assert_eq!(uniform(&module, step), ("StepUniform".to_string(), 16), "{}: binding 1", k.name);
        match (k.params, global(&module, 0, 2)) {
            (Some(p), Some(g)) => assert_eq!(uniform(&module, g), (p.name.to_string(), p.size), "{}: params", k.name),
            (None, None) => {}
            (p, g) => panic!("{}: parameter block {p:?} in the descriptor, {} in the shader", k.name, g.is_some()),
        }
        assert_eq!(global(&module, 0, 3).is_some(), k.records, "{}: the records", k.name);
        // What a workgroup covers: the backend's 2D shape, or as many invocations as its
        // threads along x (`mg_coarse` runs them as 16 × 16); a tile of cells is the constants
        // tests' to check.
        let [x, y, z] = ep.workgroup_size;
        match k.workgroup {
            Workgroup::Tiled => {
                assert_eq!([x, y, z], [swirly_shaders::WORKGROUP.0, swirly_shaders::WORKGROUP.1, 1], "{}", k.name)
            }
            Workgroup::Covers(n, 1) => assert_eq!(x * y * z, n, "{}: threads of a workgroup", k.name),
            Workgroup::Covers(..) => assert_eq!(x * y * z, 256, "{}: threads of a tile's workgroup", k.name),
        }
    }
    // Every shader file holds kernels, every module a kernel.
    for (stem, _) in swirly_shaders::FILES {
        assert!(kernels.iter().any(|k| k.module == *stem), "{stem}.wgsl has no descriptor");
    }
    for (name, _) in swirly_shaders::MODULES {
        assert!(*name == "bandwidth" || kernels.iter().any(|k| k.name == *name), "gen/{name}.spv has no kernel");
    }
    let module = naga::front::wgsl::parse_str(swirly_shaders::BANDWIDTH).expect("bandwidth.wgsl parses");
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .expect("bandwidth.wgsl validates");
}

/// Every block the kernels read is declared by the composed shaders with its Rust definition's
/// members at its Rust offsets and with its size (`params.wgsl` is generated from those
/// definitions; this checks WGSL's own layout rules keep them, e.g. a `vec2` member at an
/// offset that is not a multiple of 8, or a `vec4` one off 16, would move).
#[test]
fn every_block_has_its_rust_layout_in_the_shaders() {
    let module = parse("divergence");
    for layout in swirly_core::wgsl_layouts() {
        let ty = module
            .types
            .iter()
            .map(|(_, t)| t)
            .find(|t| t.name.as_deref() == Some(layout.name))
            .unwrap_or_else(|| panic!("the shaders declare no struct {}", layout.name));
        let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("{} is not a struct", layout.name) };
        let rust: Vec<(String, u32)> =
            layout.members.iter().flat_map(|m| m.declared()).map(|(n, _, o)| (n, o as u32)).collect();
        let wgsl: Vec<(String, u32)> = members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset)).collect();
        assert_eq!(wgsl, rust, "{}: members and offsets, WGSL against Rust", layout.name);
        assert_eq!(*span as usize, layout.size, "{}: size", layout.name);
    }
}

/// `params.wgsl` is the declarations the Rust definitions give (what `cargo xtask shaders`
/// writes and `--check` keeps fresh in CI).
#[test]
fn the_blocks_file_is_generated_from_the_rust_definitions() {
    let committed = include_str!("../shaders/shared/params.wgsl");
    assert_eq!(committed, swirly_core::params_wgsl(), "run `cargo xtask shaders`");
}
