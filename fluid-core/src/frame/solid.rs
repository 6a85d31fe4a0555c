//! Solid obstacles: shapes, their signed distance, their motion, and the open fraction of each
//! face of the MAC grid they cut (the reference the device's rasterising kernel will follow).
//!
//! A face is a segment: an x-face `(i, j)` runs from `(i·h, j·h)` to `(i·h, (j + 1)·h)`, a
//! y-face `(i, j)` from `(i·h, j·h)` to `((i + 1)·h, j·h)`. Its *open fraction* is the part of
//! that segment outside every solid, taken from the signed distance at its two ends with the
//! distance linear in between (cut cells, after Batty, Bertails & Bridson 2007): a shape that
//! moves a little changes the fractions a little, where a staircase mask would flip whole faces.
//! The pressure solve weights each face by it, and a closed face takes the solid's velocity.
//!
//! Everything is in world units and `f32`, the arithmetic a GPU kernel repeats.

use crate::frame::{Boundary, Frame};
use swirly_ir::{Error, Result};

/// Most vertices of one polygon.
pub const MAX_POLYGON_POINTS: usize = 256;

/// The outline of a solid in its own frame (centred on its position, unrotated).
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A disc.
    Circle {
        /// Radius.
        radius: f32,
    },
    /// A rectangle, rotated with its pose.
    Rect {
        /// Half its width and height.
        half_size: [f32; 2],
    },
    /// A segment along the local x-axis from `−half_length` to `half_length`, thickened by
    /// `radius` (a rounded bar, a paddle).
    Capsule {
        /// Half the length of its core segment.
        half_length: f32,
        /// Its thickness on each side of the segment.
        radius: f32,
    },
    /// A simple polygon (convex or not, either winding), its vertices in order.
    Polygon {
        /// The vertices.
        points: Vec<[f32; 2]>,
    },
    /// An image's solid pixels stretched over a rectangle ([`Shape::mask`]), as the signed
    /// distance at each pixel's centre, bilinear between them.
    Mask {
        /// Half the rectangle's width and height.
        half_size: [f32; 2],
        /// Pixels across and down.
        pixels: [u32; 2],
        /// Signed distance at each pixel's centre, world units, row by row from the top.
        sdf: Vec<f32>,
    },
}

/// Most pixels along a mask's longer side: an image is sampled down to it (its signed
/// distances live in the obstacle table, and the host computes them pixel against pixel).
pub const MAX_MASK_PIXELS: u32 = 96;

/// Where a solid is: its position (world units) and its angle (radians, counter-clockwise).
///
/// Scenes write an obstacle's position as fractions of the box and its angle in degrees
/// (`ObstacleSpec::position`, `ObstacleSpec::angle`); here both are what the kernels use:
/// `Pose { position: [0.5 * frame.width(), 0.3], angle: 30f32.to_radians() }`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pose {
    /// Position of its frame's origin.
    pub position: [f32; 2],
    /// Rotation of its frame.
    pub angle: f32,
}

/// How a solid moves: a rigid motion, the same at every instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// Velocity of its position (world units per second).
    pub velocity: [f32; 2],
    /// Angular velocity about its position (radians per second, counter-clockwise).
    pub angular_velocity: f32,
}

/// A solid: a shape at a pose, moving rigidly.
#[derive(Clone, Debug, PartialEq)]
pub struct Obstacle {
    /// Its outline.
    pub shape: Shape,
    /// Where it is at time [`Obstacle::since`].
    pub pose: Pose,
    /// How it moves.
    pub motion: Motion,
    /// The simulated time at which it stands at `pose` (seconds; 0 for a scene's obstacles).
    pub since: f32,
    /// The temperature it is held at (its cells keep it and conduct heat to the fluid); `None`
    /// for an insulating solid.
    pub temperature: Option<f32>,
}

/// A keyframed path: poses at times, an obstacle moving between each two at a constant
/// velocity and angular velocity, so that it pushes the fluid as it goes. Before the first key
/// it waits there; after the last it stays there, or with `repeat` starts over from the first
/// (give the last key the first's pose for a closed loop).
#[derive(Clone, Debug, PartialEq)]
pub struct KeyPath {
    /// `(time, pose)`: seconds of simulated time, strictly increasing, at least two keys.
    pub keys: Vec<(f32, Pose)>,
    /// Whether it starts over after its last key.
    pub repeat: bool,
}

/// One straight stretch of a [`KeyPath`]: the pose it starts from, at `since`, and its motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg {
    /// Which stretch: changes whenever the leg does (repeats count on).
    pub id: i64,
    /// The pose at `since`.
    pub pose: Pose,
    /// The motion along it.
    pub motion: Motion,
    /// Simulated time at which it stands at `pose`.
    pub since: f32,
}

impl KeyPath {
    /// An error naming the value unless it has at least two keys, finite poses and strictly
    /// increasing finite times. `key` names it in messages (`obstacles[2]`).
    pub fn validate(&self, key: &str) -> Result<()> {
        if self.keys.len() < 2 {
            let why = "a path needs at least two keys (one pose is a still obstacle: give `position`)";
            return Err(Error::invalid(format!("{key}.path"), format!("{} keys", self.keys.len()), why));
        }
        for (k, (time, pose)) in self.keys.iter().enumerate() {
            let at = format!("path[{k}]");
            finite(key, &format!("{at}.time"), &[*time])?;
            finite(key, &format!("{at}.position"), &pose.position)?;
            finite(key, &format!("{at}.angle"), &[pose.angle])?;
            if k > 0 && *time <= self.keys[k - 1].0 {
                let why = format!("key times must increase (key {} is at {})", k - 1, self.keys[k - 1].0);
                return Err(Error::invalid(format!("{key}.{at}.time"), time, why));
            }
        }
        for (k, pair) in self.keys.windows(2).enumerate() {
            let m = motion_between(pair[0], pair[1]);
            if !(m.velocity.iter().all(|v| v.is_finite()) && m.angular_velocity.is_finite()) {
                let why = "keys so close in time for their distance that the speed between them is not a finite number";
                return Err(Error::invalid(format!("{key}.path[{}].time", k + 1), self.keys[k + 1].0, why));
            }
        }
        Ok(())
    }

    /// The leg in force at simulated time `time`.
    pub fn leg(&self, time: f32) -> Leg {
        let (first, last) = (self.keys[0], self.keys[self.keys.len() - 1]);
        let still = |id, (t, pose): (f32, Pose)| Leg { id, pose, motion: Motion::default(), since: t };
        if time < first.0 {
            return still(-1, first);
        }
        let period = last.0 - first.0;
        let (cycle, local) = if self.repeat {
            let cycle = ((time - first.0) / period).floor();
            // Rounding may leave `local` a hair past the last key: that is the next cycle's start.
            let local = (time - cycle * period).clamp(first.0, last.0);
            if local >= last.0 { (cycle + 1.0, first.0) } else { (cycle, local) }
        } else if time >= last.0 {
            return still(self.keys.len() as i64 - 1, last);
        } else {
            (0.0, time)
        };
        let k = self.keys.windows(2).position(|w| local < w[1].0).unwrap_or(self.keys.len() - 2);
        let (t0, a) = self.keys[k];
        let motion = motion_between(self.keys[k], self.keys[k + 1]);
        // Saturating: a time far past any cycle count still gives an id, never a panic.
        let id = (cycle as i64).saturating_mul(self.keys.len() as i64).saturating_add(k as i64);
        Leg { id, pose: a, motion, since: t0 + cycle * period }
    }
}

/// The constant velocity and turn that carry pose `a` at its time to `b` at its.
fn motion_between((t0, a): (f32, Pose), (t1, b): (f32, Pose)) -> Motion {
    let span = t1 - t0;
    Motion {
        velocity: [(b.position[0] - a.position[0]) / span, (b.position[1] - a.position[1]) / span],
        angular_velocity: (b.angle - a.angle) / span,
    }
}

fn finite(key: &str, what: &str, values: &[f32]) -> Result<()> {
    match values.iter().find(|x| !x.is_finite()) {
        Some(x) => Err(Error::invalid(format!("{key}.{what}"), x, "must be a finite number")),
        None => Ok(()),
    }
}

fn positive(key: &str, what: &str, x: f32) -> Result<()> {
    finite(key, what, &[x])?;
    if x <= 0.0 {
        return Err(Error::invalid(format!("{key}.{what}"), x, "must be > 0"));
    }
    Ok(())
}

/// Twice the signed area of a polygon (positive counter-clockwise).
fn twice_area(points: &[[f32; 2]]) -> f64 {
    let n = points.len();
    (0..n)
        .map(|k| {
            let (a, b) = (points[k], points[(k + 1) % n]);
            f64::from(a[0]) * f64::from(b[1]) - f64::from(b[0]) * f64::from(a[1])
        })
        .sum()
}

/// Whether the segments `ab` and `cd` cross at a point inside both (touching ends do not count).
fn segments_cross(a: [f32; 2], b: [f32; 2], c: [f32; 2], d: [f32; 2]) -> bool {
    let orient = |p: [f32; 2], q: [f32; 2], r: [f32; 2]| {
        let v = (f64::from(q[0]) - f64::from(p[0])) * (f64::from(r[1]) - f64::from(p[1]))
            - (f64::from(q[1]) - f64::from(p[1])) * (f64::from(r[0]) - f64::from(p[0]));
        v.partial_cmp(&0.0).map_or(0, |o| o as i32)
    };
    let (o1, o2, o3, o4) = (orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b));
    o1 * o2 < 0 && o3 * o4 < 0
}

impl Shape {
    /// A mask of `solid` (`width × height` values, row by row from the top: whether each
    /// pixel is solid) stretched over a rectangle of half size `half_size`: the signed
    /// distance at each pixel's centre to the nearest pixel of the other kind, less half a
    /// pixel (the outline between them).
    pub fn mask(half_size: [f32; 2], width: u32, height: u32, solid: &[bool]) -> Shape {
        let (w, h) = (width as usize, height as usize);
        let (dx, dy) = (2.0 * half_size[0] / width as f32, 2.0 * half_size[1] / height as f32);
        let half = 0.5 * dx.min(dy);
        // Squared distances to the nearest pixel centre of the other kind, exact, in O(pixels).
        let to_solid = squared_distances(w, h, dx, dy, |k| solid[k]);
        let to_open = squared_distances(w, h, dx, dy, |k| !solid[k]);
        let sdf = (0..w * h)
            .map(|k| {
                let best = if solid[k] { to_open[k] } else { to_solid[k] };
                // All one kind: far from any outline.
                let d = if best.is_finite() { best.sqrt() as f32 - half } else { half_size[0] + half_size[1] };
                if solid[k] { -d } else { d }
            })
            .collect();
        Shape::Mask { half_size, pixels: [width, height], sdf }
    }

    /// An error naming the value unless the shape is well formed: finite numbers, positive
    /// sizes, a polygon of 3 to [`MAX_POLYGON_POINTS`] vertices enclosing an area, its edges
    /// crossing nowhere. `key` names it in messages (`obstacles[2]`).
    pub fn validate(&self, key: &str) -> Result<()> {
        match self {
            Shape::Circle { radius } => positive(key, "radius", *radius),
            Shape::Rect { half_size } => {
                positive(key, "half_size[0]", half_size[0])?;
                positive(key, "half_size[1]", half_size[1])
            }
            Shape::Capsule { half_length, radius } => {
                finite(key, "half_length", &[*half_length])?;
                if *half_length < 0.0 {
                    return Err(Error::invalid(format!("{key}.half_length"), half_length, "must be ≥ 0"));
                }
                positive(key, "radius", *radius)
            }
            Shape::Polygon { points } => {
                let n = points.len();
                if !(3..=MAX_POLYGON_POINTS).contains(&n) {
                    let why = format!("a polygon has 3 to {MAX_POLYGON_POINTS} points");
                    return Err(Error::invalid(format!("{key}.points"), format!("{n} points"), why));
                }
                for (k, p) in points.iter().enumerate() {
                    finite(key, &format!("points[{k}]"), p)?;
                }
                if twice_area(points).abs() <= 1e-12 {
                    return Err(Error::invalid(format!("{key}.points"), format!("{points:?}"), "it encloses no area"));
                }
                for a in 0..n {
                    for b in a + 2..n {
                        if a == 0 && b == n - 1 {
                            continue; // neighbours through the closing edge
                        }
                        let (p, q) = (points[a], points[(a + 1) % n]);
                        let (r, s) = (points[b], points[(b + 1) % n]);
                        if segments_cross(p, q, r, s) {
                            let why = format!("its edges {a} and {b} cross: a polygon's outline must not cross itself");
                            return Err(Error::invalid(format!("{key}.points"), format!("{n} points"), why));
                        }
                    }
                }
                Ok(())
            }
            Shape::Mask { half_size, pixels, sdf } => {
                positive(key, "size[0]", half_size[0])?;
                positive(key, "size[1]", half_size[1])?;
                if pixels[0] == 0 || pixels[1] == 0 || sdf.len() != (pixels[0] * pixels[1]) as usize {
                    return Err(Error::invalid(format!("{key}.image"), format!("{pixels:?}"), "an empty mask"));
                }
                if sdf.iter().all(|d| *d > 0.0) {
                    return Err(Error::invalid(format!("{key}.image"), "no solid pixel", "the mask has nothing solid"));
                }
                Ok(())
            }
        }
    }

    /// Signed distance from `p` (in the shape's frame) to its outline: negative inside.
    pub(crate) fn local_distance(&self, p: [f32; 2]) -> f32 {
        match self {
            Shape::Circle { radius } => length(p) - radius,
            Shape::Rect { half_size } => {
                let d = [p[0].abs() - half_size[0], p[1].abs() - half_size[1]];
                length([d[0].max(0.0), d[1].max(0.0)]) + d[0].max(d[1]).min(0.0)
            }
            Shape::Capsule { half_length, radius } => {
                length([p[0] - p[0].clamp(-half_length, *half_length), p[1]]) - radius
            }
            Shape::Polygon { points } => {
                let n = points.len();
                let mut d2 = f32::INFINITY;
                let mut inside = false;
                for k in 0..n {
                    let (a, b) = (points[k], points[(k + 1) % n]);
                    d2 = d2.min(segment_distance_sq(p, a, b));
                    // Even-odd crossing of the ray to +x.
                    if (a[1] > p[1]) != (b[1] > p[1]) {
                        let x = a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]);
                        if p[0] < x {
                            inside = !inside;
                        }
                    }
                }
                if inside { -d2.sqrt() } else { d2.sqrt() }
            }
            Shape::Mask { half_size, pixels, sdf } => mask_distance(*half_size, *pixels, |k| sdf[k], p),
        }
    }
}

/// The squared distance from every pixel centre of a `w × h` image (pixels `dx × dy` apart) to
/// the nearest one where `feature` holds (infinite where none does): the separable transform of
/// Felzenszwalb & Huttenlocher (2012), a column pass then a row pass of lower envelopes of
/// parabolas.
fn squared_distances(w: usize, h: usize, dx: f32, dy: f32, feature: impl Fn(usize) -> bool) -> Vec<f64> {
    let mut grid = vec![0.0f64; w * h];
    let mut line = Vec::new();
    for x in 0..w {
        line.clear();
        line.extend((0..h).map(|y| if feature(y * w + x) { 0.0 } else { f64::INFINITY }));
        for (y, d) in envelope(&line, f64::from(dy) * f64::from(dy)).into_iter().enumerate() {
            grid[y * w + x] = d;
        }
    }
    for y in 0..h {
        let row = envelope(&grid[y * w..(y + 1) * w], f64::from(dx) * f64::from(dx));
        grid[y * w..(y + 1) * w].copy_from_slice(&row);
    }
    grid
}

/// `min over q of f[q] + step2 · (p − q)²` for every `p`: the one-dimensional transform.
fn envelope(f: &[f64], step2: f64) -> Vec<f64> {
    let n = f.len();
    let sites: Vec<usize> = (0..n).filter(|&q| f[q].is_finite()).collect();
    if sites.is_empty() {
        return vec![f64::INFINITY; n];
    }
    // Where the parabola of `q` comes below that of `r` (r < q).
    let meet = |r: usize, q: usize| {
        let (rf, qf) = (r as f64, q as f64);
        ((f[q] / step2 + qf * qf) - (f[r] / step2 + rf * rf)) / (2.0 * (qf - rf))
    };
    let mut hull: Vec<usize> = Vec::with_capacity(sites.len());
    let mut from: Vec<f64> = Vec::with_capacity(sites.len());
    for &q in &sites {
        while let Some(&r) = hull.last() {
            if meet(r, q) <= *from.last().unwrap_or(&f64::NEG_INFINITY) {
                hull.pop();
                from.pop();
            } else {
                break;
            }
        }
        from.push(hull.last().map_or(f64::NEG_INFINITY, |&r| meet(r, q)));
        hull.push(q);
    }
    let mut k = 0;
    (0..n)
        .map(|p| {
            while k + 1 < hull.len() && from[k + 1] <= p as f64 {
                k += 1;
            }
            let q = hull[k];
            f[q] + step2 * (p as f64 - q as f64).powi(2)
        })
        .collect()
}

/// A mask's signed distance at `p` (twin of the mask branch of `rasterise_solids.wgsl`): the
/// pixels' distances bilinear at `p`'s place in the image (clamped to its edge), plus the
/// distance to the rectangle outside it.
pub(crate) fn mask_distance(half_size: [f32; 2], pixels: [u32; 2], sdf: impl Fn(usize) -> f32, p: [f32; 2]) -> f32 {
    let (w, h) = (pixels[0], pixels[1]);
    let fx = (p[0] + half_size[0]) / (2.0 * half_size[0]) * w as f32 - 0.5;
    let fy = (half_size[1] - p[1]) / (2.0 * half_size[1]) * h as f32 - 0.5;
    let cx = fx.max(0.0).min((w - 1) as f32);
    let cy = fy.max(0.0).min((h - 1) as f32);
    let (x0, y0) = (cx as u32, cy as u32);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (tx, ty) = (cx - x0 as f32, cy - y0 as f32);
    let at = |x: u32, y: u32| sdf((y * w + x) as usize);
    let a = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * tx;
    let b = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * tx;
    let inside = a + (b - a) * ty;
    let d = [p[0].abs() - half_size[0], p[1].abs() - half_size[1]];
    let outside = length([d[0].max(0.0), d[1].max(0.0)]);
    if outside > 0.0 { outside + inside.max(0.0) } else { inside }
}

fn length(p: [f32; 2]) -> f32 {
    (p[0] * p[0] + p[1] * p[1]).sqrt()
}

fn segment_distance_sq(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    let (ab, ap) = ([b[0] - a[0], b[1] - a[1]], [p[0] - a[0], p[1] - a[1]]);
    let len2 = ab[0] * ab[0] + ab[1] * ab[1];
    let t = if len2 > 0.0 { ((ap[0] * ab[0] + ap[1] * ab[1]) / len2).clamp(0.0, 1.0) } else { 0.0 };
    let d = [ap[0] - t * ab[0], ap[1] - t * ab[1]];
    d[0] * d[0] + d[1] * d[1]
}

impl Obstacle {
    /// An error naming the value unless its shape is well formed and its pose and motion finite.
    pub fn validate(&self, key: &str) -> Result<()> {
        self.shape.validate(key)?;
        finite(key, "position", &self.pose.position)?;
        finite(key, "angle", &[self.pose.angle])?;
        finite(key, "velocity", &self.motion.velocity)?;
        finite(key, "angular_velocity", &[self.motion.angular_velocity])?;
        finite(key, "temperature", self.temperature.as_slice())?;
        finite(key, "since", &[self.since])
    }

    /// Where it stands at simulated time `time`: moved by its motion from `since`.
    pub fn at(&self, time: f32) -> Obstacle {
        Obstacle { since: time, ..self.advanced(time - self.since) }
    }

    /// The radius of a disc about its position that holds it.
    pub fn bound(&self) -> f32 {
        match &self.shape {
            Shape::Circle { radius } => *radius,
            Shape::Rect { half_size } => length(*half_size),
            Shape::Capsule { half_length, radius } => half_length + radius,
            Shape::Polygon { points } => points.iter().map(|p| length(*p)).fold(0.0, f32::max),
            Shape::Mask { half_size, .. } => length(*half_size),
        }
    }

    /// Signed distance from the world point `p` to its outline: negative inside.
    pub fn distance(&self, p: [f32; 2]) -> f32 {
        let (s, c) = self.pose.angle.sin_cos();
        let r = [p[0] - self.pose.position[0], p[1] - self.pose.position[1]];
        // Into the shape's frame: rotate by −angle.
        self.shape.local_distance([c * r[0] + s * r[1], c * r[1] - s * r[0]])
    }

    /// Velocity of the solid's material at the world point `p`: `v + ω × r`.
    pub fn velocity_at(&self, p: [f32; 2]) -> [f32; 2] {
        let r = [p[0] - self.pose.position[0], p[1] - self.pose.position[1]];
        let (v, w) = (self.motion.velocity, self.motion.angular_velocity);
        [v[0] - w * r[1], v[1] + w * r[0]]
    }

    /// The obstacle `dt` seconds later, moved by its motion.
    pub fn advanced(&self, dt: f32) -> Obstacle {
        let (p, v) = (self.pose.position, self.motion.velocity);
        let pose = Pose {
            position: [p[0] + v[0] * dt, p[1] + v[1] * dt],
            angle: self.pose.angle + self.motion.angular_velocity * dt,
        };
        Obstacle { pose, ..self.clone() }
    }
}

/// The part of a segment outside the solid, from the signed distances `a` and `b` at its ends
/// (positive outside), the distance taken as linear in between: 1 when both ends are outside,
/// 0 when neither is.
pub fn open_fraction(a: f32, b: f32) -> f32 {
    match (a > 0.0, b > 0.0) {
        (true, true) => 1.0,
        (false, false) => 0.0,
        (true, false) => a / (a - b),
        (false, true) => b / (b - a),
    }
}

/// The faces of a grid as `obstacles` leave them, laid out as `u` and `v`, and the cells.
#[derive(Clone, Debug, PartialEq)]
pub struct SolidFaces {
    /// Open fraction of each x-face, in [0, 1].
    pub u_open: Vec<f32>,
    /// Open fraction of each y-face, in [0, 1].
    pub v_open: Vec<f32>,
    /// x-velocity of the solid at each x-face's centre (0 where the face is open).
    pub u_solid: Vec<f32>,
    /// y-velocity of the solid at each y-face's centre (0 where the face is open).
    pub v_solid: Vec<f32>,
    /// Solid fraction of each cell: 1 − the mean open fraction of its four faces (1 inside).
    pub solid: Vec<f32>,
}

/// The signed distance at `p` to the union of `obstacles` and the one nearest (or containing
/// it most deeply); along a periodic axis a solid also stands one box length to each side.
pub fn nearest<'a>(grid: &Frame, obstacles: &'a [Obstacle], p: [f32; 2]) -> (f32, Option<&'a Obstacle>) {
    let shifts = |periodic: bool, len: f32| if periodic { vec![0.0, -len, len] } else { vec![0.0] };
    let xs = shifts(grid.boundary_x == Boundary::Periodic, grid.width());
    let ys = shifts(grid.boundary_y == Boundary::Periodic, grid.height());
    let mut best = (f32::INFINITY, None);
    for o in obstacles {
        for dx in &xs {
            for dy in &ys {
                let d = o.distance([p[0] + dx, p[1] + dy]);
                if d < best.0 {
                    best = (d, Some(o));
                }
            }
        }
    }
    best
}

/// The open fraction and solid velocity of every face of `grid`, and every cell's solid
/// fraction, with `obstacles` where they stand now: the host reference of the rasterisation.
/// On a periodic axis the last face and node are computed as the first, so both copies agree.
pub fn rasterise(grid: &Frame, obstacles: &[Obstacle]) -> SolidFaces {
    let (nx, ny, h) = (grid.nx as usize, grid.ny as usize, grid.h);
    let (px, py) = (grid.boundary_x == Boundary::Periodic, grid.boundary_y == Boundary::Periodic);
    let canon = |k: usize, n: usize, periodic: bool| if periodic && k == n { 0 } else { k };
    let phi = |x: usize, y: usize| nearest(grid, obstacles, [x as f32 * h, y as f32 * h]).0;
    // Distances at the grid's nodes, each shared by up to four faces.
    let nodes: Vec<f32> = (0..=ny)
        .flat_map(|y| (0..=nx).map(move |x| (x, y)))
        .map(|(x, y)| phi(canon(x, nx, px), canon(y, ny, py)))
        .collect();
    let node = |x: usize, y: usize| nodes[y * (nx + 1) + x];
    let solid_velocity = |p: [f32; 2], axis: usize| match nearest(grid, obstacles, p) {
        (_, Some(o)) => o.velocity_at(p)[axis],
        _ => 0.0,
    };
    let mut faces = SolidFaces {
        u_open: Vec::with_capacity((nx + 1) * ny),
        v_open: Vec::with_capacity(nx * (ny + 1)),
        u_solid: Vec::with_capacity((nx + 1) * ny),
        v_solid: Vec::with_capacity(nx * (ny + 1)),
        solid: Vec::with_capacity(nx * ny),
    };
    for j in 0..ny {
        for i in 0..=nx {
            let i = canon(i, nx, px);
            let open = open_fraction(node(i, j), node(i, j + 1));
            faces.u_open.push(open);
            let p = [i as f32 * h, (j as f32 + 0.5) * h];
            faces.u_solid.push(if open < 1.0 { solid_velocity(p, 0) } else { 0.0 });
        }
    }
    for j in 0..=ny {
        let j = canon(j, ny, py);
        for i in 0..nx {
            let open = open_fraction(node(i, j), node(i + 1, j));
            faces.v_open.push(open);
            let p = [(i as f32 + 0.5) * h, j as f32 * h];
            faces.v_solid.push(if open < 1.0 { solid_velocity(p, 1) } else { 0.0 });
        }
    }
    for j in 0..ny {
        for i in 0..nx {
            let u = faces.u_open[j * (nx + 1) + i] + faces.u_open[j * (nx + 1) + i + 1];
            let v = faces.v_open[j * nx + i] + faces.v_open[(j + 1) * nx + i];
            faces.solid.push(cell_solid(u, v));
        }
    }
    faces
}

/// A cell's solid fraction from the sums of its x-faces' and its y-faces' open fractions
/// (the kernels' arithmetic, in this order).
pub fn cell_solid(u_open_sum: f32, v_open_sum: f32) -> f32 {
    1.0 - 0.25 * (u_open_sum + v_open_sum)
}

// The obstacle table: what the device's rasterising kernel reads.

/// `vec4` rows of one obstacle's header in the table; a polygon's points follow it, one row
/// each (`[x, y, 0, 0]`).
pub const TABLE_HEADER: usize = 4;

/// Shape codes of the table.
const CIRCLE: f32 = 0.0;
const RECT: f32 = 1.0;
const CAPSULE: f32 = 2.0;
const POLYGON: f32 = 3.0;
const MASK: f32 = 4.0;

/// Rows an entry holds after its header: a polygon's points; a mask's `[width, height, 0,
/// 0]` and its distances, four to a row.
fn extra_rows(shape: &Shape) -> usize {
    match shape {
        Shape::Polygon { points } => points.len(),
        Shape::Mask { sdf, .. } => 1 + sdf.len().div_ceil(4),
        _ => 0,
    }
}

/// The rows of `obstacles` in the table, one after another: `[shape, a, b, bound]`,
/// `[x, y, angle, since]`, `[vx, vy, ω, extra]`, `[held, temperature, 0, 0]` (`held` 1 for a
/// solid held at `temperature`, 0 for an insulating one), then `extra` rows: a polygon's
/// points, or a mask's `[width, height, 0, 0]` and its distances, four to a row. `a, b` are the radius
/// (circle), the half sizes (box, mask), the half length and radius (capsule); `bound` the
/// radius of a disc about the position that holds the shape, which lets a kernel skip it.
pub fn table(obstacles: &[Obstacle]) -> Vec<[f32; 4]> {
    let mut rows = Vec::new();
    for o in obstacles {
        let (code, a, b) = match &o.shape {
            Shape::Circle { radius } => (CIRCLE, *radius, 0.0),
            Shape::Rect { half_size } => (RECT, half_size[0], half_size[1]),
            Shape::Capsule { half_length, radius } => (CAPSULE, *half_length, *radius),
            Shape::Polygon { .. } => (POLYGON, 0.0, 0.0),
            Shape::Mask { half_size, .. } => (MASK, half_size[0], half_size[1]),
        };
        rows.push([code, a, b, o.bound()]);
        rows.push([o.pose.position[0], o.pose.position[1], o.pose.angle, o.since]);
        let m = o.motion;
        rows.push([m.velocity[0], m.velocity[1], m.angular_velocity, extra_rows(&o.shape) as f32]);
        let held = o.temperature.map_or([0.0; 2], |t| [1.0, t]);
        rows.push([held[0], held[1], 0.0, 0.0]);
        match &o.shape {
            Shape::Polygon { points } => rows.extend(points.iter().map(|p| [p[0], p[1], 0.0, 0.0])),
            Shape::Mask { pixels, sdf, .. } => {
                rows.push([pixels[0] as f32, pixels[1] as f32, 0.0, 0.0]);
                rows.extend(sdf.chunks(4).map(|c| std::array::from_fn(|k| c.get(k).copied().unwrap_or(0.0))));
            }
            _ => {}
        }
    }
    rows
}

/// Rows of the table of `obstacles`.
pub(crate) fn table_len(obstacles: &[Obstacle]) -> usize {
    let rows: usize = obstacles.iter().map(|o| TABLE_HEADER + extra_rows(&o.shape)).sum();
    // One empty row without obstacles (open or inflow sides still rasterise the faces): a
    // binding cannot be empty, and a row too short for an entry ends the walk.
    rows.max(1)
}

/// Every obstacle of a table, to its end (an entry cut short ends it).
pub fn decode(rows: &[[f32; 4]]) -> Vec<Obstacle> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + TABLE_HEADER <= rows.len() {
        let points = if rows[at][0] == POLYGON || rows[at][0] == MASK { rows[at + 2][3] as usize } else { 0 };
        match from_table(&rows[at..], 1) {
            Some(mut one) => out.append(&mut one),
            None => break,
        }
        at += TABLE_HEADER + points;
    }
    out
}

/// The obstacles of the first `count` entries of a table ([`table`]'s inverse); `None` when
/// the rows do not hold that many well-formed entries.
pub(crate) fn from_table(rows: &[[f32; 4]], count: usize) -> Option<Vec<Obstacle>> {
    let mut out = Vec::with_capacity(count);
    let mut at = 0;
    for _ in 0..count {
        let [code, a, b, _] = *rows.get(at)?;
        let [x, y, angle, since] = *rows.get(at + 1)?;
        let [vx, vy, w, n] = *rows.get(at + 2)?;
        let [held, t, _, _] = *rows.get(at + 3)?;
        at += TABLE_HEADER;
        let shape = match code {
            CIRCLE => Shape::Circle { radius: a },
            RECT => Shape::Rect { half_size: [a, b] },
            CAPSULE => Shape::Capsule { half_length: a, radius: b },
            POLYGON => {
                let n = n as usize;
                let points = rows.get(at..at + n)?.iter().map(|r| [r[0], r[1]]).collect();
                at += n;
                Shape::Polygon { points }
            }
            MASK => {
                let [w, h, _, _] = *rows.get(at)?;
                let (w, h) = (w as u32, h as u32);
                let count = (w * h) as usize;
                let rows_of = count.div_ceil(4);
                let sdf = rows.get(at + 1..at + 1 + rows_of)?.iter().flatten().take(count).copied().collect();
                at += 1 + rows_of;
                Shape::Mask { half_size: [a, b], pixels: [w, h], sdf }
            }
            _ => return None,
        };
        let pose = Pose { position: [x, y], angle };
        let motion = Motion { velocity: [vx, vy], angular_velocity: w };
        let temperature = (held != 0.0).then_some(t);
        out.push(Obstacle { shape, pose, motion, since, temperature });
    }
    Some(out)
}

#[cfg(test)]
mod tests;
