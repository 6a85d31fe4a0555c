//! The public API of every published library, one listing per crate in `doc/api/`, so that a
//! change to what the crates export shows in review and a breaking one is a decision:
//! `--check` fails where a listing differs from the code and names the items added and gone.
//!
//! The listings are made from rustdoc's JSON (an unstable rustdoc output, enabled on the stable
//! toolchain with `RUSTC_BOOTSTRAP=1`) by the `public-api` crate, with every feature on, as
//! docs.rs documents the crates. Only rustdoc sees `RUSTC_BOOTSTRAP`: this program stands in
//! for it ([`as_rustdoc`]) and sets it for rustdoc alone: rustc and build scripts record it, so
//! set for all of cargo it rebuilt the proc macros, and with them every dependency, each time.
//! Blanket, auto-trait and derived impls are left out: they follow from the types listed.

use std::collections::BTreeSet;
use std::path::Path;

/// Where the listings live, from the repository's root.
pub const DIR: &str = "doc/api";

/// Write (or, with `check`, compare) the listing of every crate of `libraries`.
pub fn run(root: &Path, target: &Path, libraries: &[&str], check: bool) -> Result<(), String> {
    let mut stale = Vec::new();
    for name in libraries {
        let text = listing(name, target)?;
        let path = root.join(DIR).join(format!("{name}.txt"));
        // A crate without a listing yet shows as all added; any other read error is an error.
        let now = match std::fs::read_to_string(&path) {
            Ok(now) => now,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("reading {}: {e}", path.display())),
        };
        if now == text {
            continue;
        }
        if check {
            stale.push(format!("{name}:\n{}", difference(&now, &text)));
        } else {
            std::fs::create_dir_all(root.join(DIR)).map_err(|e| format!("creating {DIR}: {e}"))?;
            std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
            eprintln!("xtask: wrote {DIR}/{name}.txt");
        }
    }
    if !stale.is_empty() {
        return Err(format!(
            "the public API differs from {DIR}/ (`cargo xtask api` writes it; commit it if the change is meant, and \
             say in CHANGELOG.md what breaks):\n{}",
            stale.join("\n")
        ));
    }
    eprintln!("xtask: the public API of {} crates is what {DIR}/ lists", libraries.len());
    Ok(())
}

/// The listing of crate `name`: one line per public item, sorted.
fn listing(name: &str, target: &Path) -> Result<String, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let me = me.to_str().ok_or("this program's path is not UTF-8")?;
    let args = ["rustdoc", "--quiet", "-p", name, "--lib", "--all-features", "--"];
    let json_args = ["-Z", "unstable-options", "--output-format", "json"];
    let all: Vec<&str> = args.iter().chain(&json_args).copied().collect();
    crate::run("cargo", &all, &[("RUSTDOC", me), (AS_RUSTDOC, "rustdoc")])?;
    let json = target.join("doc").join(format!("{}.json", name.replace('-', "_")));
    let api = public_api::Builder::from_rustdoc_json(&json)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .omit_auto_derived_impls(true)
        .build()
        .map_err(|e| format!("reading {}: {e}", json.display()))?;
    Ok(api.to_string())
}

/// Set (to the rustdoc to run) when cargo starts this program as its rustdoc.
pub const AS_RUSTDOC: &str = "SWIRLY_XTASK_AS_RUSTDOC";

/// When cargo runs this program as rustdoc for [`listing`]: the real rustdoc, with its
/// arguments and unstable options allowed, and its exit status.
pub fn as_rustdoc() -> Option<std::process::ExitCode> {
    let rustdoc = std::env::var_os(AS_RUSTDOC)?;
    let status = std::process::Command::new(&rustdoc)
        .args(std::env::args_os().skip(1))
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove(AS_RUSTDOC)
        .status();
    Some(match status {
        Ok(s) if s.success() => std::process::ExitCode::SUCCESS,
        Ok(s) => std::process::ExitCode::from(s.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1)),
        Err(e) => {
            eprintln!("xtask: cannot start {}: {e}", rustdoc.to_string_lossy());
            std::process::ExitCode::FAILURE
        }
    })
}

/// The lines only in `old` (`-`) and only in `new` (`+`), at most 40 of them.
fn difference(old: &str, new: &str) -> String {
    let (old, new): (BTreeSet<&str>, BTreeSet<&str>) = (old.lines().collect(), new.lines().collect());
    let gone = old.difference(&new).map(|l| format!("  - {l}"));
    let added = new.difference(&old).map(|l| format!("  + {l}"));
    let all: Vec<String> = gone.chain(added).collect();
    let shown = all.iter().take(40).cloned().collect::<Vec<_>>().join("\n");
    if all.len() > 40 { format!("{shown}\n  … and {} more", all.len() - 40) } else { shown }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_difference_names_what_went_and_what_came() {
        let d = difference("pub fn a()\npub fn b()\n", "pub fn b()\npub fn c()\n");
        assert_eq!(d, "  - pub fn a()\n  + pub fn c()");
    }
}
