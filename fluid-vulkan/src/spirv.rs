//! The SPIR-V modules `cargo xtask shaders` generates from the WGSL kernels (`swirly-shaders`),
//! one per shader entry point, embedded in the binary.

/// The words of the module of entry point `name` (copied: `include_bytes!` data is not
/// u32-aligned).
pub fn words(name: &str) -> Option<Vec<u32>> {
    let bytes = swirly_shaders::spirv(name)?;
    ash::util::read_spv(&mut std::io::Cursor::new(bytes)).ok()
}

#[cfg(test)]
mod tests {
    /// Every kernel of every model has a module (a kernel added without `cargo xtask shaders`
    /// shows up here), and every module starts with the SPIR-V magic.
    #[test]
    fn every_entry_has_a_module_that_starts_with_the_spirv_magic() {
        let missing: Vec<&str> =
            swirly_core::kernels().into_iter().map(|k| k.name).filter(|n| super::words(n).is_none()).collect();
        assert_eq!(missing, Vec::<&str>::new());
        for (name, _) in swirly_shaders::MODULES {
            let w = super::words(name).expect("module");
            assert_eq!(w[0], 0x0723_0203, "{name}");
        }
    }
}
