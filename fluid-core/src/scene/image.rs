//! Which files a scene's image paths name: a scene file reads images from its own folder
//! only, a bare built-in name is the built-in image, and paths are kept canonical so a
//! checkpoint resumes anywhere (`crate::image` reads them).

/// The images a scene's table names, by the key messages give them
/// (`obstacles[2].image`, `render.background_image`).
pub(crate) fn named_in(table: &toml::Table) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(toml::Value::Array(list)) = table.get("obstacles") {
        for (k, o) in list.iter().enumerate() {
            if let Some(toml::Value::String(image)) = o.get("image") {
                out.push((format!("obstacles[{k}].image"), image.clone()));
            }
        }
    }
    if let Some(toml::Value::String(image)) = table.get("render").and_then(|r| r.get("background_image")) {
        out.push(("render.background_image".to_string(), image.clone()));
    }
    out
}

/// Every image of `scene`, by the key messages give it.
fn slots(scene: &mut super::Scene) -> Vec<(String, &mut String)> {
    let mut out: Vec<(String, &mut String)> = Vec::new();
    for (k, o) in scene.obstacles.iter_mut().enumerate() {
        if let Some(image) = o.image.as_mut() {
            out.push((format!("obstacles[{k}].image"), image));
        }
    }
    if let Some(image) = scene.render.background_image.as_mut() {
        out.push(("render.background_image".to_string(), image));
    }
    out
}

/// Give each image of `scene` the path it is read from, so that the scene reads the same
/// from any working folder (a checkpoint keeps it so).
///
/// With `folder`, the scene came from a file there, and `written` are the images that file
/// names (`named_in`): a relative path is taken from `folder`; an image the file itself
/// names must lie in `folder` or below it once `..` and symbolic links are followed (a scene
/// file may come from anyone: it reads no file of its reader's elsewhere), where one that
/// `--set` names may lie anywhere. A bare name that no file beside the scene answers to,
/// and that a built-in image has, is that built-in image. Each file's path becomes its
/// canonical one.
///
/// Without `folder` (a preset, or text handed to the library), a bare name of a built-in
/// image is that image, and any other relative path is taken from the working folder and
/// made absolute.
pub(crate) fn resolve(
    scene: &mut super::Scene,
    written: &[(String, String)],
    folder: Option<&std::path::Path>,
) -> swirly_ir::Result<()> {
    use crate::image::{built_in, io_reason};
    use std::path::{Path, PathBuf};
    use swirly_ir::Error;
    let Some(folder) = folder else {
        for (_, image) in slots(scene) {
            if built_in(image).is_none()
                && Path::new(image.as_str()).is_relative()
                && let Ok(path) = std::path::absolute(image.as_str())
                && let Some(text) = path.to_str()
            {
                *image = text.to_string();
            }
        }
        return Ok(());
    };
    let folder = if folder.as_os_str().is_empty() { Path::new(".") } else { folder };
    let home = std::fs::canonicalize(folder).map_err(|e| Error::Scene {
        origin: swirly_ir::error::shorten(&folder.display().to_string()),
        message: format!("its folder cannot be resolved: {}", io_reason(&e)),
    })?;
    for (key, image) in slots(scene) {
        let own = written.iter().any(|(k, v)| *k == key && v == image);
        let joined: PathBuf = home.join(image.as_str());
        let real = match std::fs::canonicalize(&joined) {
            Ok(real) => real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && built_in(image).is_some() => continue,
            Err(e) => return Err(Error::invalid(key, joined.display(), io_reason(&e))),
        };
        if own && !real.starts_with(&home) {
            let why = format!(
                "it lies outside the scene file's folder {} (through `..`, an absolute path or a symbolic link): a \
                 scene file reads images from its own folder only; copy the image there, or name it with --set",
                home.display()
            );
            return Err(Error::invalid(key, image.as_str(), why));
        }
        let Some(text) = real.to_str() else {
            return Err(Error::invalid(key, real.display(), "the path is not UTF-8"));
        };
        *image = text.to_string();
    }
    Ok(())
}
