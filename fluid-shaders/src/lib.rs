//! # swirly-shaders
//!
//! Every GPU kernel of the engine, as WGSL: one file per kernel under `shaders/<model>/`
//! (entry point and file stem = the kernel's name), the reductions in `shaders/reduce.wgsl`,
//! shared code in `shaders/shared/`. A kernel file names the shared snippets it needs with
//! `// #include <name>` lines; [`source`] prepends `shared/params.wgsl` (the blocks the
//! kernels read, generated from their Rust definitions by `cargo xtask shaders`),
//! `shared/common.wgsl` and those snippets.
//! The wgpu backend compiles that composed text; `cargo xtask shaders` compiles it to SPIR-V
//! (`gen/<entry point>.spv`, committed and checked fresh in CI), which the raw Vulkan backend
//! loads ([`spirv()`]). Both GPU backends therefore run the same kernels.
//!
//! The tables are made by the build script from the folders: adding a kernel's file is all
//! this crate needs.
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod tables {
    include!(concat!(env!("OUT_DIR"), "/tables.rs"));
}

pub use tables::{FILES, MODULES};

mod half;
pub use half::{HalfStorage, half_variant, with_half};

#[cfg(feature = "spirv")]
pub mod spirv;

const COMMON: &str = include_str!("../shaders/shared/common.wgsl");

/// The shared snippets a kernel file may `// #include`, by name (`params` and `common` are
/// always there).
fn shared(name: &str) -> Option<&'static str> {
    tables::SHARED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The copy kernel of the bandwidth measurement (standalone: no shared code).
pub const BANDWIDTH: &str = include_str!("../shaders/bandwidth.wgsl");

/// Entry points of the reduction shader.
pub const REDUCE_ENTRIES: [&str; 2] = ["reduce_partial", "reduce_final"];

/// The SPIR-V module of entry point `name`, as `cargo xtask shaders` generated it (a 4-byte
/// aligned copy is the caller's: `include_bytes!` data need not be).
pub fn spirv(name: &str) -> Option<&'static [u8]> {
    MODULES.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// The composed WGSL of a shader file, ready for naga or wgpu.
pub fn source(stem: &str) -> Option<String> {
    compose(FILES.iter().find(|(s, _)| *s == stem)?.1)
}

/// A kernel file's text composed with `shared/common.wgsl` and the snippets its `// #include`
/// lines name; `None` when it names an unknown snippet.
pub fn compose(text: &str) -> Option<String> {
    compose_using(text, &Overrides::default())
}

/// The names of the shared snippets (`shaders/shared/<name>.wgsl`): `params` and `common`,
/// which every shader starts with, then those a kernel file may `// #include`.
pub fn snippet_names() -> impl Iterator<Item = &'static str> {
    ["params", "common"]
        .into_iter()
        .chain(tables::SHARED.iter().map(|(name, _)| *name).filter(|n| *n != "common" && *n != "params"))
}

/// Texts that replace built-in shader files when shaders are composed: kernel files by stem,
/// shared snippets (`common` included) by name. The default replaces nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Kernel files (`<stem>.wgsl`), by stem.
    pub files: std::collections::HashMap<String, String>,
    /// Shared snippets (`shared/<name>.wgsl`), by name.
    pub snippets: std::collections::HashMap<String, String>,
}

impl Overrides {
    /// True when nothing is replaced.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.snippets.is_empty()
    }
}

/// The composed WGSL of shader file `stem`, with the texts `overrides` holds in place of the
/// built-in ones and workgroup shape `shape`; `None` for an unknown stem or snippet.
pub fn overridden_source(stem: &str, overrides: &Overrides, shape: (u32, u32)) -> Option<String> {
    let built_in = FILES.iter().find(|(s, _)| *s == stem)?.1;
    let text = overrides.files.get(stem).map_or(built_in, String::as_str);
    Some(with_workgroup(compose_using(text, overrides)?, shape))
}

fn compose_using(text: &str, overrides: &Overrides) -> Option<String> {
    let snippet = |name: &str| -> Option<&str> {
        let built_in = if name == "common" { COMMON } else { shared(name)? };
        Some(overrides.snippets.get(name).map_or(built_in, String::as_str))
    };
    let mut out = String::from(snippet("params")?);
    out.push('\n');
    out.push_str(snippet("common")?);
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("// #include ") {
            let name = name.trim();
            if name == "common" || name == "params" {
                return None;
            }
            out.push('\n');
            out.push_str(snippet(name)?);
        }
    }
    out.push('\n');
    out.push_str(text);
    Some(out)
}

/// The default workgroup shape of the 2D kernels (`WG_X`, `WG_Y` in `shared/common.wgsl`).
pub const WORKGROUP: (u32, u32) = (16, 16);

fn with_workgroup(composed: String, shape: (u32, u32)) -> String {
    let (dx, dy) = WORKGROUP;
    composed.replacen(&format!("const WG_X: u32 = {dx}u;"), &format!("const WG_X: u32 = {}u;", shape.0), 1).replacen(
        &format!("const WG_Y: u32 = {dy}u;"),
        &format!("const WG_Y: u32 = {}u;", shape.1),
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Overrides replace exactly the texts they name: a kernel file in its own shader only, a
    /// snippet in every shader that includes it (`params` and `common` in all), and nothing else; with none,
    /// every shader is the built-in one.
    #[test]
    fn overrides_replace_the_files_they_name() {
        let none = Overrides::default();
        for (stem, _) in FILES {
            assert_eq!(overridden_source(stem, &none, WORKGROUP), source(stem), "{stem}");
        }
        assert_eq!(overridden_source("no_such_kernel", &none, WORKGROUP), None);
        let marker = |name: &str| format!("// replaced {name}\n");
        let mut overrides = Overrides::default();
        overrides.files.insert("divergence".into(), marker("divergence"));
        for name in ["common", "pressure"] {
            overrides.snippets.insert(name.into(), marker(name));
        }
        let pressure = shared("pressure").expect("the pressure snippet");
        for (stem, text) in FILES {
            let src = overridden_source(stem, &overrides, WORKGROUP).expect("composed");
            let params = shared("params").expect("the blocks");
            assert!(src.starts_with(&format!("{params}\n{}", marker("common"))), "{stem}: the blocks, then common");
            assert!(!src.contains(COMMON), "{stem}: common");
            let includes = text.lines().any(|l| l.trim() == "// #include pressure");
            assert_eq!(src.contains(&marker("pressure")), includes, "{stem}: pressure");
            assert!(!src.contains(pressure), "{stem}: the built-in pressure snippet");
            assert_eq!(src.ends_with(&marker("divergence")), *stem == "divergence", "{stem}: its file");
            assert_eq!(src.contains(text), *stem != "divergence", "{stem}: its file");
        }
        assert!(FILES.iter().filter(|(_, t)| t.contains("// #include pressure")).count() >= 2);
        assert_eq!(snippet_names().count(), tables::SHARED.len());
        let mut unknown = Overrides::default();
        unknown.files.insert("divergence".into(), "// #include no_such_snippet\n".into());
        assert_eq!(overridden_source("divergence", &unknown, WORKGROUP), None);
    }

    /// The tile and halo of `jacobi_multisweep.wgsl` are those `swirly-core` dispatches with,
    /// and its derived sizes follow from them.
    #[test]
    fn multisweep_constants_match_the_core() {
        use swirly_core::grid::uniforms::{MULTISWEEP_MAX, MULTISWEEP_TILE};
        let src = source("jacobi_multisweep").expect("composed");
        let side = MULTISWEEP_TILE + 2 * MULTISWEEP_MAX;
        assert_eq!(side * side % 256, 0, "the region splits evenly over 256 threads");
        let rows = side * side / 256;
        assert_eq!(256 % side, 0, "whole columns of strips");
        for line in [
            format!("const MS_TILE: u32 = {MULTISWEEP_TILE}u;"),
            format!("const MS_HALO: u32 = {MULTISWEEP_MAX}u;"),
            format!("const MS_SIDE: u32 = {side}u;"),
            "const MS_THREADS: u32 = 256u;".to_string(),
            format!("const MS_ROWS: u32 = {rows}u;"),
            format!("var<workgroup> region: array<f32, {}>;", side * side),
            "@workgroup_size(256)".to_string(),
        ] {
            assert!(src.contains(&line), "jacobi_multisweep.wgsl lacks `{line}`");
        }
        // One call per row of the strip, in each of the four phases.
        for phase in ["fetch({r}u)", "relax({r}u)", "publish({r}u)", "emit({r}u)"] {
            for r in 0..rows {
                let call = phase.replace("{r}", &r.to_string());
                assert_eq!(src.matches(&format!("{call};")).count(), 1, "jacobi_multisweep.wgsl: `{call}`");
            }
        }
        use swirly_core::ir::kernel::Workgroup::Covers;
        let k = swirly_core::grid::kernels::JACOBI_MULTISWEEP;
        assert_eq!(k.workgroup, Covers(MULTISWEEP_TILE, MULTISWEEP_TILE));
    }

    /// The tile of `mg_smooth2.wgsl` is the one `swirly-core` dispatches with; its halo covers
    /// its four passes and the residual; every row of a thread's strip is visited in each
    /// phase.
    #[test]
    fn smooth2_constants_match_the_core() {
        use swirly_core::grid::pressure::multigrid::{self, SMOOTH2_TILE};
        let src = source("mg_smooth2").expect("composed");
        let side = SMOOTH2_TILE + 2 * 5;
        let rows = side * side / 256;
        assert_eq!((side * side % 256, 256 % side), (0, 0));
        for line in [
            format!("const S2_TILE: u32 = {SMOOTH2_TILE}u;"),
            "const S2_HALO: u32 = 5u;".to_string(),
            format!("const S2_RESTRICT: u32 = {}u;", multigrid::SMOOTH2_RESTRICT),
            format!("const S2_ACCUMULATE: u32 = {}u;", multigrid::SMOOTH2_ACCUMULATE),
            format!("const S2_LOAD_RESIDUAL: u32 = {}u;", multigrid::SMOOTH2_LOAD_RESIDUAL),
            format!("const S2_SIDE: u32 = {side}u;"),
            format!("const S2_ROWS: u32 = {rows}u;"),
            format!("var<workgroup> region: array<f32, {}>;", side * side),
            "@workgroup_size(256)".to_string(),
        ] {
            assert!(src.contains(&line), "mg_smooth2.wgsl lacks `{line}`");
        }
        for phase in ["fetch({r}u)", "relax({r}u, colour)", "publish({r}u)", "emit({r}u)", "residual_row({r}u)"] {
            for r in 0..rows {
                let call = phase.replace("{r}", &r.to_string());
                assert_eq!(src.matches(&format!("{call};")).count(), 1, "mg_smooth2.wgsl: `{call}`");
            }
        }
        assert_eq!(src.matches("pass_of(").count(), 5, "four passes");
        use swirly_core::ir::kernel::Workgroup::Covers;
        assert_eq!(swirly_core::grid::kernels::MG_SMOOTH2.workgroup, Covers(SMOOTH2_TILE, SMOOTH2_TILE));
    }
}
