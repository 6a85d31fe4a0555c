//! Obstacles as a scene writes them: a shape with its sizes in fractions of the box's height,
//! placed at a fraction of the box's width and height, turned by an angle in degrees, moving
//! at a velocity in world units per second and an angular velocity in degrees per second.
//!
//! ```toml
//! [[obstacles]]
//! shape = "circle"            # circle | box | capsule | polygon
//! position = [0.5, 0.4]       # fractions of the width and height (default: the centre)
//! radius = 0.08               # circle and capsule: fraction of the height
//! # size = [0.3, 0.05]        # box: its full width and height, fractions of the height
//! # length = 0.3              # capsule: its core segment, fraction of the height
//! # points = [[0, 0], ...]    # polygon: vertices about the position, fractions of the height
//! # image = "grate.png"       # mask: a PNG, relative to the scene file, stretched over `size`;
//! # threshold = 0.5           #   solid where its alpha (or `channel = "luminance"`) reaches
//! # invert = false            #   the threshold (`invert`: where it does not)
//! angle = 30.0                # degrees, counter-clockwise
//! velocity = [0.0, 0.0]       # world units / s
//! angular_velocity = 0.0      # degrees / s, counter-clockwise
//! ```

use serde::{Deserialize, Serialize};

use crate::grid::solid::{MAX_MASK_PIXELS, Motion, Obstacle, Pose, Shape};
use crate::grid::{Boundary, Grid};
use crate::{Error, Result};

/// Most obstacles of one scene (the device's rasterisation visits each for every node).
pub const MAX_OBSTACLES: usize = 64;

/// The outline of an obstacle as a scene names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeKind {
    /// A disc: `radius`.
    Circle,
    /// A rectangle: `size`.
    Box,
    /// A rounded bar: `length` and `radius`.
    Capsule,
    /// A simple polygon: `points`.
    Polygon,
    /// An image's solid pixels: `image` and `size`.
    Mask,
}

/// Which channel of a mask's image decides what is solid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaskChannel {
    /// Its alpha.
    #[default]
    Alpha,
    /// Its luminance.
    Luminance,
}

/// Images the built-in scenes use, by the name they give.
pub const PRESET_IMAGES: &[(&str, &[u8])] = &[("grate.png", include_bytes!("../../../scenes/grate.png"))];

/// One `[[obstacles]]` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObstacleSpec {
    /// Its outline.
    pub shape: ShapeKind,
    /// Its centre as fractions of the box's width and height (default: `[0.5, 0.5]`).
    #[serde(default = "centre")]
    pub position: [f32; 2],
    /// Circle and capsule: radius, a fraction of the box's height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius: Option<f32>,
    /// Box: full width and height, fractions of the box's height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<[f32; 2]>,
    /// Capsule: length of its core segment (along its x-axis), a fraction of the box's height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f32>,
    /// Polygon: its vertices in order about `position`, fractions of the box's height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<[f32; 2]>>,
    /// Mask: a PNG file (a path relative to the scene file's folder, or the name of one the
    /// built-in scenes ship), stretched over `size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Mask: the level in 0..=1 at which a pixel is solid (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f32>,
    /// Mask: the channel compared with `threshold` (default `alpha`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<MaskChannel>,
    /// Mask: solid where the channel stays below the threshold instead (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invert: bool,
    /// Rotation, degrees counter-clockwise (default 0).
    #[serde(default)]
    pub angle: f32,
    /// Velocity, world units per second (default `[0, 0]`).
    #[serde(default)]
    pub velocity: [f32; 2],
    /// Angular velocity about `position`, degrees per second counter-clockwise (default 0).
    #[serde(default)]
    pub angular_velocity: f32,
}

fn centre() -> [f32; 2] {
    [0.5, 0.5]
}

impl ObstacleSpec {
    /// A mask's pixels, sampled down to at most [`MAX_MASK_PIXELS`] along its longer side:
    /// `(width, height, solid)`, rows from the top. `key` names the image in messages.
    fn load_mask(&self, key: &str) -> Result<(u32, u32, Vec<bool>)> {
        let path = self.image.clone().unwrap_or_default();
        let threshold = self.threshold.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&threshold) {
            let why = "a level from 0 to 1 (the share of the channel's full value)";
            return Err(Error::invalid(key.replace("image", "threshold"), threshold, why));
        }
        // A bare name no file answers to may be one the built-in scenes ship; a path (a scene
        // file's images are joined to its folder) is only ever that file.
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => match PRESET_IMAGES.iter().find(|(n, _)| *n == path) {
                Some((_, bytes)) => bytes.to_vec(),
                None => return Err(Error::invalid(key, &path, format!("cannot read it: {e}"))),
            },
        };
        let image = image::load_from_memory(&bytes)
            .map_err(|e| Error::invalid(key, &path, format!("not an image this program reads: {e}")))?;
        let (w0, h0) = (image.width(), image.height());
        let scale = (MAX_MASK_PIXELS as f32 / w0.max(h0) as f32).min(1.0);
        let (w, h) = (((w0 as f32 * scale).round() as u32).max(1), ((h0 as f32 * scale).round() as u32).max(1));
        let image =
            if (w, h) == (w0, h0) { image } else { image.resize_exact(w, h, image::imageops::FilterType::Triangle) };
        let rgba = image.to_rgba8();
        let level = |p: &image::Rgba<u8>| match self.channel.unwrap_or_default() {
            MaskChannel::Alpha => f32::from(p[3]) / 255.0,
            MaskChannel::Luminance => {
                (0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2])) / 255.0
            }
        };
        let solid: Vec<bool> = rgba.pixels().map(|p| (level(p) >= threshold) != self.invert).collect();
        if !solid.contains(&true) {
            let why = format!("no pixel is solid at threshold {threshold} (check `channel`, `threshold` and `invert`)");
            return Err(Error::invalid(key, &path, why));
        }
        Ok((w, h, solid))
    }

    /// The solid in world units on `grid`, checked: the keys its shape needs and no others,
    /// finite values, positive sizes. `key` names it in messages (`obstacles[2]`).
    pub fn to_obstacle(&self, grid: &Grid, key: &str) -> Result<Obstacle> {
        let height = grid.height();
        let name = |k: &str| format!("{key}.{k}");
        let shape_name = match self.shape {
            ShapeKind::Circle => "circle",
            ShapeKind::Box => "box",
            ShapeKind::Capsule => "capsule",
            ShapeKind::Polygon => "polygon",
            ShapeKind::Mask => "mask",
        };
        let needs: &[&str] = match self.shape {
            ShapeKind::Circle => &["radius"],
            ShapeKind::Box => &["size"],
            ShapeKind::Capsule => &["length", "radius"],
            ShapeKind::Polygon => &["points"],
            ShapeKind::Mask => &["image", "size"],
        };
        let mask_only = self.threshold.is_some() || self.channel.is_some() || self.invert;
        if mask_only && self.shape != ShapeKind::Mask {
            let why = format!("`threshold`, `channel` and `invert` belong to a mask; a {shape_name} takes none");
            return Err(Error::invalid(name("threshold"), "set", why));
        }
        let given = [
            ("radius", self.radius.is_some()),
            ("size", self.size.is_some()),
            ("length", self.length.is_some()),
            ("points", self.points.is_some()),
            ("image", self.image.is_some()),
        ];
        for (k, present) in given {
            if present && !needs.contains(&k) {
                let why = format!("a {shape_name} is given by {}; remove `{k}`", needs.join(" and "));
                return Err(Error::invalid(name(k), "set", why));
            }
            if !present && needs.contains(&k) {
                return Err(Error::invalid(name(k), "missing", format!("a {shape_name} needs `{k}`")));
            }
        }
        let half_size = || -> Result<[f32; 2]> {
            let s = self.size.unwrap_or([0.0; 2]);
            for (k, v) in s.iter().enumerate() {
                if !(v.is_finite() && *v > 0.0) {
                    return Err(Error::invalid(name(&format!("size[{k}]")), v, "must be a finite number > 0"));
                }
            }
            Ok([0.5 * s[0] * height, 0.5 * s[1] * height])
        };
        let shape = match self.shape {
            ShapeKind::Circle => Shape::Circle { radius: self.radius.unwrap_or(0.0) * height },
            ShapeKind::Box => Shape::Rect { half_size: half_size()? },
            ShapeKind::Mask => {
                let half_size = half_size()?;
                let (w, h, solid) = self.load_mask(&name("image"))?;
                Shape::mask(half_size, w, h, &solid)
            }
            ShapeKind::Capsule => Shape::Capsule {
                half_length: 0.5 * self.length.unwrap_or(0.0) * height,
                radius: self.radius.unwrap_or(0.0) * height,
            },
            ShapeKind::Polygon => Shape::Polygon {
                points: self.points.iter().flatten().map(|p| [p[0] * height, p[1] * height]).collect(),
            },
        };
        let pose = Pose {
            position: [self.position[0] * grid.width(), self.position[1] * height],
            angle: self.angle.to_radians(),
        };
        let motion = Motion { velocity: self.velocity, angular_velocity: self.angular_velocity.to_radians() };
        let obstacle = Obstacle { shape, pose, motion, since: 0.0 };
        obstacle.validate(key).map_err(|e| match (e, self.shape) {
            // Sizes were scaled to world units: name the value as written.
            (Error::InvalidValue { key: k, reason, .. }, ShapeKind::Circle | ShapeKind::Capsule)
                if k.ends_with(".radius") =>
            {
                Error::invalid(k, self.radius.unwrap_or(0.0), reason)
            }
            (Error::InvalidValue { key: k, reason, .. }, ShapeKind::Capsule) if k.ends_with(".half_length") => {
                Error::invalid(name("length"), self.length.unwrap_or(0.0), reason)
            }
            (e, _) => e,
        })?;
        Ok(obstacle)
    }
}

/// The obstacles of a scene in world units, checked one by one and together: at most
/// [`MAX_OBSTACLES`], each reaching into the box, and not all of the box solid.
pub fn obstacles(specs: &[ObstacleSpec], grid: &Grid) -> Result<Vec<Obstacle>> {
    if specs.len() > MAX_OBSTACLES {
        let why = format!("a scene has at most {MAX_OBSTACLES} obstacles");
        return Err(Error::invalid("obstacles", format!("{} entries", specs.len()), why));
    }
    let mut out = Vec::with_capacity(specs.len());
    for (k, spec) in specs.iter().enumerate() {
        let key = format!("obstacles[{k}]");
        let o = spec.to_obstacle(grid, &key)?;
        // Entirely past a wall it would never touch the fluid: a mistake, as for splats.
        let axes = [(grid.boundary_x, grid.width(), 0), (grid.boundary_y, grid.height(), 1)];
        for (boundary, len, axis) in axes {
            let c = o.pose.position[axis];
            if boundary != Boundary::Periodic && (c + o.bound() <= 0.0 || c - o.bound() >= len) {
                let p = spec.position;
                return Err(Error::invalid(
                    format!("{key}.position"),
                    format!("[{}, {}]", p[0], p[1]),
                    "it lies wholly outside the box (a position is a fraction of the box: 0 to 1 across it)",
                ));
            }
        }
        out.push(o);
    }
    if !out.is_empty() && covers_the_box(grid, &out) {
        return Err(Error::invalid(
            "obstacles",
            format!("{} entries", out.len()),
            "together they cover the whole box, leaving no fluid",
        ));
    }
    Ok(out)
}

/// Whether every point of a lattice over the box (65 × 65 and every cell centre of a grid
/// smaller than that) lies inside an obstacle.
fn covers_the_box(grid: &Grid, obstacles: &[Obstacle]) -> bool {
    let (nx, ny) = (grid.nx.min(64) as usize, grid.ny.min(64) as usize);
    (0..ny).all(|j| {
        (0..nx).all(|i| {
            let p = [(i as f32 + 0.5) / nx as f32 * grid.width(), (j as f32 + 0.5) / ny as f32 * grid.height()];
            obstacles.iter().any(|o| o.distance(p) < 0.0)
        })
    })
}
