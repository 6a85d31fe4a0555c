//! Output files that appear whole or not at all: written to `<name>.part`, renamed once
//! complete, the part removed when anything fails (a full disk, a name taken by a folder).

use std::path::{Path, PathBuf};

/// Where `path` is written until it is whole.
pub fn part_path(path: &Path) -> PathBuf {
    let mut part = path.as_os_str().to_owned();
    part.push(".part");
    PathBuf::from(part)
}

/// Write `path` by `write` into its part, then give it its name.
pub fn write_whole(path: &Path, write: impl FnOnce(&Path) -> std::io::Result<()>) -> std::io::Result<()> {
    let part = part_path(path);
    let written = write(&part).and_then(|()| std::fs::rename(&part, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    written
}
