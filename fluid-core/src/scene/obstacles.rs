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
//! # path = [{ time = 0, position = [0.2, 0.5], angle = 0 }, { time = 2, position = [0.8, 0.5] }]
//! #                           # keyframes instead of position, angle and the velocities;
//! # repeat = false            # start over after the last key
//! ```

use serde::{Deserialize, Serialize};

use crate::frame::solid::{KeyPath, MAX_MASK_PIXELS, Motion, Obstacle, Pose, Shape};
use crate::frame::{Boundary, Frame};
use swirly_ir::{Error, Result};

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
    #[serde(default)]
    pub invert: bool,
    /// Rotation, degrees counter-clockwise (default 0). `Simulation::set_obstacle` takes a
    /// `Pose` in radians and world units instead.
    #[serde(default)]
    pub angle: f32,
    /// Velocity, world units per second (default `[0, 0]`).
    #[serde(default)]
    pub velocity: [f32; 2],
    /// Angular velocity about `position`, degrees per second counter-clockwise (default 0).
    #[serde(default)]
    pub angular_velocity: f32,
    /// A keyframed path instead of `position`, `angle`, `velocity` and `angular_velocity`:
    /// poses at times, moved between at constant speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<PathKey>>,
    /// Whether the path starts over after its last key (default false: it stops there).
    #[serde(default)]
    pub repeat: bool,
    /// The temperature the solid is held at: its cells keep it and conduct heat to the fluid
    /// (with `params.thermal_diffusivity`). Left out, the solid insulates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

/// One key of an obstacle's path.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathKey {
    /// Simulated time, seconds.
    pub time: f32,
    /// The centre then, fractions of the box's width and height.
    pub position: [f32; 2],
    /// The angle then, degrees counter-clockwise (default 0); 360 apart is a whole turn.
    #[serde(default)]
    pub angle: f32,
}

fn centre() -> [f32; 2] {
    [0.5, 0.5]
}

/// The level in 0..=1 of `channel` at a pixel; luminance weighs the channels as Rec. 709
/// does.
fn level([r, g, b, a]: [u8; 4], channel: MaskChannel) -> f32 {
    match channel {
        MaskChannel::Alpha => f32::from(a) / 255.0,
        MaskChannel::Luminance => (0.2126 * f32::from(r) + 0.7152 * f32::from(g) + 0.0722 * f32::from(b)) / 255.0,
    }
}

/// Levels sampled down box-wise as their rows come, from `from` pixels to `to`: each new
/// pixel the mean of the old ones it covers, weighted by how much of each it covers. Only
/// the new pixels are held.
struct BoxDown {
    to: (u32, u32),
    /// For each new column, the old columns it overlaps and by how much.
    columns: Vec<Vec<(usize, f32)>>,
    /// For each old row, the new rows it falls in and by how much.
    rows: Vec<Vec<(usize, f32)>>,
    sum: Vec<f32>,
    weight: Vec<f32>,
}

impl BoxDown {
    fn new(from: (u32, u32), to: (u32, u32)) -> BoxDown {
        // Per axis: for each new pixel, the old pixels it overlaps and by how much.
        let spans = |n0: u32, n: u32| -> Vec<Vec<(usize, f32)>> {
            let ratio = n0 as f32 / n as f32;
            (0..n)
                .map(|i| {
                    let (lo, hi) = (i as f32 * ratio, (i + 1) as f32 * ratio);
                    let first = lo.floor() as usize;
                    let last = (hi.ceil() as usize).min(n0 as usize);
                    (first..last).map(|k| (k, (hi.min(k as f32 + 1.0) - lo.max(k as f32)).max(0.0))).collect()
                })
                .collect()
        };
        let mut rows = vec![Vec::new(); from.1 as usize];
        for (j, span) in spans(from.1, to.1).into_iter().enumerate() {
            for (y, wy) in span {
                rows[y].push((j, wy));
            }
        }
        let n = (to.0 * to.1) as usize;
        BoxDown { to, columns: spans(from.0, to.0), rows, sum: vec![0.0; n], weight: vec![0.0; n] }
    }

    /// Add old row `y` (rows come from the top, in order).
    fn add_row(&mut self, y: usize, levels: &[f32]) {
        for &(j, wy) in self.rows.get(y).into_iter().flatten() {
            for (i, column) in self.columns.iter().enumerate() {
                let k = j * self.to.0 as usize + i;
                for &(x, wx) in column {
                    self.sum[k] += wx * wy * levels[x];
                    self.weight[k] += wx * wy;
                }
            }
        }
    }

    fn finish(self) -> Vec<f32> {
        self.sum.iter().zip(&self.weight).map(|(s, w)| if *w > 0.0 { s / w } else { 0.0 }).collect()
    }
}

/// The size a mask of `w0` × `h0` pixels is sampled down to: at most [`MAX_MASK_PIXELS`]
/// along its longer side.
fn mask_size(w0: u32, h0: u32) -> (u32, u32) {
    let scale = (MAX_MASK_PIXELS as f32 / w0.max(h0) as f32).min(1.0);
    (((w0 as f32 * scale).round() as u32).max(1), ((h0 as f32 * scale).round() as u32).max(1))
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
        let bytes = crate::image::image_bytes(&path).map_err(|why| Error::invalid(key, &path, why))?;
        let channel = self.channel.unwrap_or_default();
        // Sampled down as the rows are decoded: the image is never held whole.
        let (mut down, mut row_levels) = (None, Vec::new());
        crate::image::decode_rows(&bytes, &mut |w0, h0, y, row| {
            let down = down.get_or_insert_with(|| BoxDown::new((w0, h0), mask_size(w0, h0)));
            row_levels.clear();
            row_levels.extend(row.iter().map(|p| level(*p, channel)));
            down.add_row(y, &row_levels);
        })
        .map_err(|why| Error::invalid(key, &path, why))?;
        let Some(down) = down else { return Err(Error::invalid(key, &path, "the image holds no pixels")) };
        let (w, h) = down.to;
        let levels = down.finish();
        let solid: Vec<bool> = levels.iter().map(|&l| (l >= threshold) != self.invert).collect();
        if !solid.contains(&true) {
            let why = format!("no pixel is solid at threshold {threshold} (check `channel`, `threshold` and `invert`)");
            return Err(Error::invalid(key, &path, why));
        }
        Ok((w, h, solid))
    }

    /// Its keyframed path in world units, checked (`None` without one). A path replaces the
    /// fixed pose and motion, so those keys must be left out. `key` names it in messages.
    pub(crate) fn to_path(&self, grid: &Frame, key: &str) -> Result<Option<KeyPath>> {
        let Some(keys) = &self.path else {
            if self.repeat {
                let why = "`repeat` belongs to a path; add `path` or remove it";
                return Err(Error::invalid(format!("{key}.repeat"), true, why));
            }
            return Ok(None);
        };
        let fixed = [
            ("position", self.position != centre()),
            ("angle", self.angle != 0.0),
            ("velocity", self.velocity != [0.0; 2]),
            ("angular_velocity", self.angular_velocity != 0.0),
        ];
        if let Some((k, _)) = fixed.iter().find(|(_, set)| *set) {
            let why = format!("a path gives the pose and motion over time; remove `{k}`");
            return Err(Error::invalid(format!("{key}.{k}"), "set", why));
        }
        let pose = |k: &PathKey| Pose {
            position: [k.position[0] * grid.width(), k.position[1] * grid.height()],
            angle: k.angle.to_radians(),
        };
        let path = KeyPath { keys: keys.iter().map(|k| (k.time, pose(k))).collect(), repeat: self.repeat };
        path.validate(key).map_err(|e| match e {
            // Positions were scaled to world units: name the value as written.
            Error::InvalidValue { key: k, reason, .. } if k.ends_with(".position") => {
                let at = k
                    .trim_end_matches(".position")
                    .rsplit('[')
                    .next()
                    .and_then(|n| n.trim_end_matches(']').parse::<usize>().ok());
                let p = at.and_then(|i| keys.get(i)).map(|k| k.position).unwrap_or_default();
                Error::invalid(k, format!("{p:?}"), reason)
            }
            e => e,
        })?;
        Ok(Some(path))
    }

    /// The solid in world units on `grid`, checked (the keys its shape needs and no others, finite
    /// values, positive sizes; `key` names it in messages, `obstacles[2]`), standing where its
    /// path has it at time 0, and [`ObstacleSpec::to_path`], the path built once.
    fn placed(&self, grid: &Frame, key: &str) -> Result<(Obstacle, Option<KeyPath>)> {
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
        let path = self.to_path(grid, key)?;
        let temperature = self.temperature;
        let obstacle = match &path {
            Some(path) => {
                let leg = path.leg(0.0);
                Obstacle { shape, pose: leg.pose, motion: leg.motion, since: leg.since, temperature }.at(0.0)
            }
            None => Obstacle { shape, pose, motion, since: 0.0, temperature },
        };
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
        Ok((obstacle, path))
    }
}

/// The obstacles of a scene in world units, checked one by one and together: at most
/// [`MAX_OBSTACLES`], each reaching into the box, and not all of the box solid.
pub fn obstacles(specs: &[ObstacleSpec], grid: &Frame) -> Result<Vec<Obstacle>> {
    if specs.len() > MAX_OBSTACLES {
        let why = format!("a scene has at most {MAX_OBSTACLES} obstacles");
        return Err(Error::invalid("obstacles", format!("{} entries", specs.len()), why));
    }
    let mut out = Vec::with_capacity(specs.len());
    for (k, spec) in specs.iter().enumerate() {
        let key = format!("obstacles[{k}]");
        let (o, path) = spec.placed(grid, &key)?;
        // Entirely past a wall it would never touch the fluid: a mistake, as for splats. A
        // path may start or end outside, so long as one of its keys reaches in.
        let reaches = |c: [f32; 2]| {
            let axes = [(grid.boundary_x, grid.width(), 0), (grid.boundary_y, grid.height(), 1)];
            axes.iter().all(|&(boundary, len, axis)| {
                boundary == Boundary::Periodic || (c[axis] + o.bound() > 0.0 && c[axis] - o.bound() < len)
            })
        };
        let outside = "it lies wholly outside the box (a position is a fraction of the box: 0 to 1 across it)";
        match path {
            Some(path) if !path.keys.iter().any(|(_, p)| reaches(p.position)) => {
                return Err(Error::invalid(format!("{key}.path"), "every key", outside));
            }
            None if !reaches(o.pose.position) => {
                let p = spec.position;
                return Err(Error::invalid(format!("{key}.position"), format!("[{:?}, {:?}]", p[0], p[1]), outside));
            }
            _ => {}
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

/// The keyframed paths of a scene's obstacles in world units, in their order (`None` for an
/// obstacle without one).
pub fn paths(specs: &[ObstacleSpec], grid: &Frame) -> Result<Vec<Option<KeyPath>>> {
    specs.iter().enumerate().map(|(k, spec)| spec.to_path(grid, &format!("obstacles[{k}]"))).collect()
}

/// Whether every point of a lattice over the box (65 × 65 and every cell centre of a grid
/// smaller than that) lies inside an obstacle.
fn covers_the_box(grid: &Frame, obstacles: &[Obstacle]) -> bool {
    let (nx, ny) = (grid.nx.min(64) as usize, grid.ny.min(64) as usize);
    (0..ny).all(|j| {
        (0..nx).all(|i| {
            let p = [(i as f32 + 0.5) / nx as f32 * grid.width(), (j as f32 + 0.5) / ny as f32 * grid.height()];
            obstacles.iter().any(|o| o.distance(p) < 0.0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(
        w: u32,
        h: u32,
        color: png::ColorType,
        depth: png::BitDepth,
        data: &[u8],
        palette: Option<&[u8]>,
    ) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, w, h);
        encoder.set_color(color);
        encoder.set_depth(depth);
        if let Some(p) = palette {
            encoder.set_palette(p.to_vec());
        }
        encoder.write_header().and_then(|mut w| w.write_image_data(data)).expect("encode a test PNG");
        bytes
    }

    /// Every PNG colour type and depth reads as the same levels: a 2×1 image, black
    /// transparent then white opaque.
    #[test]
    fn every_png_colour_type_reads_as_levels() {
        use png::{BitDepth::*, ColorType::*};
        type Case = (png::ColorType, png::BitDepth, Vec<u8>, Option<Vec<u8>>, [f32; 2]);
        let cases: Vec<Case> = vec![
            (Grayscale, Eight, vec![0, 255], None, [1.0, 1.0]),
            (Grayscale, One, vec![0b0100_0000], None, [1.0, 1.0]),
            (Grayscale, Sixteen, vec![0, 0, 255, 255], None, [1.0, 1.0]),
            (GrayscaleAlpha, Eight, vec![0, 0, 255, 255], None, [0.0, 1.0]),
            (Rgb, Eight, vec![0, 0, 0, 255, 255, 255], None, [1.0, 1.0]),
            (Rgba, Eight, vec![0, 0, 0, 0, 255, 255, 255, 255], None, [0.0, 1.0]),
            (Rgba, Sixteen, vec![0; 8].into_iter().chain([255; 8]).collect(), None, [0.0, 1.0]),
            (Indexed, Eight, vec![0, 1], Some(vec![0, 0, 0, 255, 255, 255]), [1.0, 1.0]),
        ];
        for (color, depth, data, palette, alpha) in cases {
            let bytes = encode(2, 1, color, depth, &data, palette.as_deref());
            let mut pixels = Vec::new();
            let (w, h) =
                crate::image::decode_rows(&bytes, &mut |_, _, _, row| pixels.extend_from_slice(row)).expect("decoded");
            let levels = |channel| pixels.iter().map(|p| level(*p, channel)).collect::<Vec<_>>();
            let (a, l) = (levels(MaskChannel::Alpha), levels(MaskChannel::Luminance));
            assert_eq!((w, h), (2, 1));
            assert_eq!(a, alpha, "{color:?} {depth:?} alpha");
            assert!(l[0].abs() < 1e-6 && (l[1] - 1.0).abs() < 1e-5, "{color:?} {depth:?} luminance {l:?}");
        }
        assert!(crate::image::decode_rows(b"not a png", &mut |_, _, _, _| {}).is_err());
    }

    /// `levels` (`from` pixels) sampled down to `to`, fed to [`BoxDown`] a row at a time.
    fn box_average(levels: &[f32], from: (u32, u32), to: (u32, u32)) -> Vec<f32> {
        let mut down = BoxDown::new(from, to);
        for (y, row) in levels.chunks(from.0 as usize).enumerate() {
            down.add_row(y, row);
        }
        down.finish()
    }

    /// Sampling down keeps the mean and weighs partly covered pixels by their cover.
    #[test]
    fn box_average_weighs_partly_covered_pixels() {
        let levels = [0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        let down = box_average(&levels, (3, 2), (2, 1));
        // The left half covers column 0 and half of column 1 in both rows: (0 + 0.5 + 0 + 0) / 3;
        // the right half the rest: (0.5 + 1 + 0 + 1) / 3.
        assert!((down[0] - 1.0 / 6.0).abs() < 1e-6 && (down[1] - 5.0 / 6.0).abs() < 1e-6, "{down:?}");
        assert_eq!(box_average(&levels, (3, 2), (3, 2)), levels);
        let half = box_average(&[1.0; 12], (4, 3), (2, 2));
        assert!(half.iter().all(|v| (v - 1.0).abs() < 1e-6));
    }
}
