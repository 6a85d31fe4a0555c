//! `doc/guide/cli-reference.md`: every command's `--help` of the `fluid` program, written from
//! the program itself so the reference cannot drift from it; `--check` fails where the file
//! differs from what the program prints now.

use std::path::Path;
use std::process::Command;

/// Where the reference lives, from the repository's root.
pub const FILE: &str = "doc/guide/cli-reference.md";

/// The reference of the program at `fluid`, written to (or, with `check`, compared with)
/// [`FILE`] under `root`.
pub fn run(root: &Path, fluid: &str, check: bool) -> Result<(), String> {
    let text = reference(fluid)?;
    let path = root.join(FILE);
    if check {
        let now = std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        if now != text {
            return Err(format!("{FILE} is stale: `cargo xtask cli-reference` writes it from the program"));
        }
        eprintln!("xtask: {FILE} is what the program prints");
    } else {
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        eprintln!("xtask: wrote {FILE}");
    }
    Ok(())
}

/// The whole reference: `fluid --help`, then each command's, depth first.
fn reference(fluid: &str) -> Result<String, String> {
    let mut out = String::from(
        "# CLI reference\n\nEvery command of the `fluid` program, as its `--help` prints it (a build with every \
         backend and the viewer). `cargo xtask cli-reference` writes this page from the program; CI checks \
         that it is fresh.\n",
    );
    let mut pending = vec![Vec::<String>::new()];
    while let Some(path) = pending.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = help_of(fluid, &args)?;
        let name = std::iter::once("fluid").chain(path.iter().map(String::as_str)).collect::<Vec<_>>().join(" ");
        out.push_str(&format!("\n## `{name}`\n\n```text\n{}\n```\n", help.trim_end()));
        // Depth first, in the order the program lists its commands.
        for command in commands(&help).into_iter().rev() {
            let mut next = path.clone();
            next.push(command);
            pending.push(next);
        }
    }
    Ok(out)
}

fn help_of(fluid: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(fluid)
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .map_err(|e| format!("cannot start {fluid}: {e}"))?;
    if !out.status.success() {
        return Err(format!("`{fluid} {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("`{fluid} {}` printed non-UTF-8: {e}", args.join(" ")))
}

/// The commands a help text lists under `Commands:`, without `help`.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_from_the_help() {
        let help = "Usage: fluid <COMMAND>\n\nCommands:\n  run      Run a scene\n           more words\n  bench    \
                    Time it\n  help     Print this message\n\nOptions:\n  -h, --help  Print help\n";
        assert_eq!(commands(help), ["run", "bench"]);
        assert!(commands("Usage: fluid run [OPTIONS]\n").is_empty());
    }
}
