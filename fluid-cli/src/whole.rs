//! Output files that appear whole or not at all, and never through a planted link: each is
//! written to `<name>.part`, created anew (a file or link already there under that name is
//! removed first, never followed), and renamed over its name once complete (a link there is
//! replaced, not followed); the part is removed when anything fails (a full disk, a name
//! taken by a folder).

use std::fs::File;
use std::path::{Path, PathBuf};

/// Where `path` is written until it is whole.
pub fn part_path(path: &Path) -> PathBuf {
    let mut part = path.as_os_str().to_owned();
    part.push(".part");
    PathBuf::from(part)
}

/// `path` created anew for writing: a file or link already there is removed first (a link is
/// removed itself, never followed), and one that appears again between the two is an error.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    let open = || std::fs::OpenOptions::new().write(true).create_new(true).open(path);
    match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                return Err(e);
            }
            std::fs::remove_file(path)?;
            open()
        }
        other => other,
    }
}

/// Write `path` by `write` into its part (a new file, [`create_new`]), then give it its name.
pub fn write_whole(path: &Path, write: impl FnOnce(&mut File) -> std::io::Result<()>) -> std::io::Result<()> {
    let part = part_path(path);
    let written = create_new(&part).and_then(|mut file| {
        write(&mut file)?;
        drop(file);
        std::fs::rename(&part, path)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    written
}

/// An error unless files can be made in `dir` (made if missing): a probe file is created there
/// and removed, so that an output folder that cannot be written is found before the first
/// step, not after the last.
pub fn check_writable(dir: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(std::io::Error::other("exists and is not a directory"));
    }
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".fluid-write-check-{}", std::process::id()));
    create_new(&probe)?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link planted under a part's name or an output's name is replaced, and the file it
    /// points to is left as it was.
    #[test]
    fn planted_links_are_replaced_never_followed() {
        let dir = std::env::temp_dir().join(format!("fluid-whole-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("folder");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").expect("victim");
        for (name, link) in [("a.npy", "a.npy.part"), ("b.npy", "b.npy")] {
            std::os::unix::fs::symlink(&victim, dir.join(link)).expect("link");
            write_whole(&dir.join(name), |f| std::io::Write::write_all(f, b"new")).expect("write");
            assert_eq!(std::fs::read(dir.join(name)).expect("read"), b"new");
            assert_eq!(std::fs::read(&victim).expect("victim"), b"keep", "{link} was followed");
            assert!(!std::fs::symlink_metadata(dir.join(name)).expect("meta").file_type().is_symlink());
        }
        assert!(!dir.join("a.npy.part").exists());
        check_writable(&dir).expect("writable");
        assert!(check_writable(&victim).is_err(), "a file is not a folder");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
