//! `cargo xtask shaders [--check]`: write the WGSL declarations of the blocks the kernels read
//! from their Rust definitions (`fluid-shaders/shaders/shared/params.wgsl`, from
//! `swirly_core::params_wgsl`), and compile every WGSL kernel, composed with them, to SPIR-V
//! with naga (wgsl-in, spv-out) into `fluid-shaders/gen/<entry point>.spv`, one module per
//! entry point, so the Vulkan backend runs exactly the shaders the wgpu backend runs. `--check`
//! regenerates in memory and fails when a committed file is missing, stale or extra.

use std::path::{Path, PathBuf};

/// Where the generated SPIR-V lives.
pub const GEN_DIR: &str = "fluid-shaders/gen";
/// The generated WGSL declarations of the blocks.
pub const PARAMS_FILE: &str = "fluid-shaders/shaders/shared/params.wgsl";

fn compile(name: &str, src: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    let modules = swirly_shaders::spirv::compile(name, src)?;
    Ok(modules
        .into_iter()
        .map(|(entry, words)| (format!("{entry}.spv"), words.iter().flat_map(|w| w.to_le_bytes()).collect()))
        .collect())
}

/// Every generated file: `(file name, bytes)`, sorted by name.
/// The kernels are composed with the blocks as the Rust definitions give them now, not with
/// the `params.wgsl` this program was built with.
pub fn generate() -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    let mut blocks = swirly_shaders::Overrides::default();
    blocks.snippets.insert("params".into(), swirly_core::params_wgsl());
    for (stem, _) in swirly_shaders::FILES {
        let src = swirly_shaders::overridden_source(stem, &blocks, swirly_shaders::WORKGROUP)
            .ok_or_else(|| format!("cannot compose {stem}.wgsl"))?;
        files.extend(compile(stem, &src)?);
    }
    files.extend(compile("bandwidth", swirly_shaders::BANDWIDTH)?);
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
    let params = root.join(PARAMS_FILE);
    let text = swirly_core::params_wgsl();
    if std::fs::read_to_string(&params).ok().as_deref() != Some(text.as_str()) {
        if check {
            problems.push(format!("{} is stale (the blocks' Rust definitions changed)", params.display()));
        } else {
            if let Some(parent) = params.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
            }
            std::fs::write(&params, &text).map_err(|e| format!("writing {}: {e}", params.display()))?;
            eprintln!("xtask: wrote {}", params.display());
        }
    }
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
        return Err(format!("shaders out of date (run `cargo xtask shaders`):\n  {}", problems.join("\n  ")));
    }
    eprintln!("xtask: {} SPIR-V modules {}", files.len(), if check { "up to date" } else { "generated" });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch root of its own for each test, removed first.
    fn scratch(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("fluid-xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        root
    }

    /// The committed SPIR-V is what the WGSL compiles to now (what CI's `--check` runs).
    #[test]
    fn the_committed_modules_are_up_to_date() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        run(&root, true).expect("committed SPIR-V");
    }

    /// `--check` fails on a missing, a stale and an extra module, naming each; a plain run
    /// writes the missing, rewrites the stale and removes the extra, after which the check passes.
    #[test]
    fn the_check_finds_missing_stale_and_extra_modules() {
        let root = scratch("check");
        let err = run(&root, true).expect_err("an empty folder");
        let files = generate().expect("generate");
        assert_eq!(err.matches(" is missing").count(), files.len(), "{err}");
        run(&root, false).expect("generate into the folder");
        run(&root, true).expect("just generated");

        let dir = root.join(GEN_DIR);
        let (stale, bytes) = &files[files.len() / 2];
        let mut changed = bytes.clone();
        let last = changed.len() - 1;
        changed[last] ^= 1;
        std::fs::write(dir.join(stale), changed).expect("write");
        std::fs::write(dir.join("gone.spv"), b"old").expect("write");
        std::fs::remove_file(dir.join(&files[0].0)).expect("remove");
        let err = run(&root, true).expect_err("three problems");
        assert!(err.contains(&format!("{stale} is stale")), "{err}");
        assert!(err.contains("gone.spv has no WGSL source any more"), "{err}");
        assert!(err.contains(&format!("{} is missing", files[0].0)), "{err}");
        assert_eq!(err.lines().count(), 4, "a heading and three problems: {err}");

        run(&root, false).expect("repair");
        run(&root, true).expect("repaired");
        assert!(!dir.join("gone.spv").exists());
        assert_eq!(std::fs::read(dir.join(stale)).expect("read"), *bytes);
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// Each module is SPIR-V 1.3 (what Vulkan 1.1 takes) with one compute entry point, named
    /// as its file, and no debug names (the bytes must not depend on how xtask was built).
    #[test]
    fn each_module_is_spirv_1_3_with_one_entry_point() {
        let files = generate().expect("generate");
        assert!(files.len() > 30, "{} modules", files.len());
        for (name, bytes) in &files {
            assert_eq!(bytes.len() % 4, 0, "{name}");
            let words: Vec<u32> = bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
            assert_eq!(words[0], 0x0723_0203, "{name}: the SPIR-V magic number");
            assert_eq!(words[1], 0x0001_0300, "{name}: version 1.3");
            // Instructions after the five header words: (word count << 16) | opcode.
            let (mut at, mut entry_points, mut names) = (5, Vec::new(), 0);
            while at < words.len() {
                let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
                assert!(count > 0 && at + count <= words.len(), "{name}: a malformed instruction at word {at}");
                match opcode {
                    // OpEntryPoint: execution model (5 = GLCompute), id, then the name's words.
                    15 => {
                        assert_eq!(words[at + 1], 5, "{name}: not a compute entry point");
                        let text: Vec<u8> = words[at + 3..at + count].iter().flat_map(|w| w.to_le_bytes()).collect();
                        let end = text.iter().position(|b| *b == 0).expect("a terminated name");
                        entry_points.push(String::from_utf8(text[..end].to_vec()).expect("utf8"));
                    }
                    // OpName, OpMemberName, OpSource, OpLine.
                    5 | 6 | 3 | 8 => names += 1,
                    _ => {}
                }
                at += count;
            }
            assert_eq!(entry_points, vec![name.trim_end_matches(".spv").to_string()], "{name}");
            assert_eq!(names, 0, "{name}: debug names or source lines");
        }
    }
}
