//! The particle liquid as a scene writes it (`[particles]`): the interaction radius and the
//! stiffnesses of Clavet, Beaudoin & Poulin's double density relaxation (SCA 2005), viscosity,
//! gravity, the container, and the regions filled with particles at the start. Positions are
//! fractions of the box's width and height, lengths fractions of its height (world units when
//! `grid.h` is left to its default, which makes the box one unit tall):
//!
//! ```toml
//! [particles]
//! radius = 0.03             # interaction radius h
//! rest_density = 4.0        # ρ0: Σ (1 − r/h)² over the neighbours at rest
//! stiffness = 600.0         # k (1/s²)
//! near_stiffness = 2000.0   # k_near (1/s²)
//! viscosity = 0.0           # σ, linear (1/s... per unit of h)
//! quadratic_viscosity = 0.5 # β
//! gravity = [0.0, -9.8]
//! substeps = 4              # each step is this many of the paper's steps
//! container = { shape = "box" }   # or { shape = "circle", center = [0.5, 0.5], radius = 0.45 }
//! stickiness = 0.0          # k_stick (1/s²), toward walls and obstacles within reach
//! stick_distance = 0.5      # the reach, in radii
//! lattice = "square"        # or "hex": how fills are packed
//!
//! [particles.springs]       # optional: viscoelastic springs
//! stiffness = 8000.0        # k_spring (1/s²)
//! yield_ratio = 0.1         # γ
//! plasticity = 10.0         # α (1/s)
//! max_per_particle = 16     # the lists' bound, 1 to 32
//!
//! [[particles.fill]]
//! shape = "box"             # or "circle" with center and radius
//! min = [0.0, 0.0]
//! max = [0.3, 0.8]
//! spacing = 0.01            # default: radius / 3
//! ```

use serde::{Deserialize, Serialize};

use crate::frame::Frame;
use crate::frame::solid::{Obstacle, nearest};
use swirly_ir::{Error, Result};

/// Most particles a scene may hold (positions are indexed in `u32` on every backend, and the
/// GPU backends dispatch at most 65 535 workgroups of 256 along one axis).
pub const MAX_PARTICLES: u64 = 16_000_000;

/// Most cells of the neighbour hash (the box over the interaction radius, per axis): the
/// prefix sum of its counts runs in two levels of 1024.
pub const MAX_HASH_CELLS: u64 = 1 << 20;

/// Most relaxation passes and substeps a scene may ask for.
pub const MAX_PASSES: u32 = 64;

/// The container the particles stay in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Container {
    /// The whole box of the grid.
    #[default]
    Box,
    /// A circle (a round bowl): centre as fractions of the box's width and height,
    /// radius a fraction of its height.
    Circle {
        /// Centre, fractions of the width and height.
        center: [f32; 2],
        /// Radius, a fraction of the height.
        radius: f32,
    },
}

/// A region filled with particles at the start, on a square lattice.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fill {
    /// An axis-aligned box between two corners (fractions of the width and height).
    Box {
        /// Lower-left corner.
        min: [f32; 2],
        /// Upper-right corner.
        max: [f32; 2],
        /// Lattice spacing, a fraction of the height (default: a third of the radius).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spacing: Option<f32>,
        /// Initial velocity, world units per second.
        #[serde(default)]
        velocity: [f32; 2],
    },
    /// A disc.
    Circle {
        /// Centre, fractions of the width and height.
        center: [f32; 2],
        /// Radius, a fraction of the height.
        radius: f32,
        /// Lattice spacing, a fraction of the height (default: a third of the radius).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spacing: Option<f32>,
        /// Initial velocity, world units per second.
        #[serde(default)]
        velocity: [f32; 2],
    },
}

impl Fill {
    /// The region as a scene writes it, for messages: `{ shape = "circle", center = [0.9,
    /// 0.9], radius = 0.1 }`, with `spacing` and `velocity` where they are set.
    fn written(&self) -> String {
        let (mut keys, spacing, velocity) = match *self {
            Fill::Box { min, max, spacing, velocity } => {
                (vec![format!("shape = \"box\", min = {min:?}, max = {max:?}")], spacing, velocity)
            }
            Fill::Circle { center, radius, spacing, velocity } => {
                (vec![format!("shape = \"circle\", center = {center:?}, radius = {radius:?}")], spacing, velocity)
            }
        };
        if let Some(s) = spacing {
            keys.push(format!("spacing = {s:?}"));
        }
        if velocity != [0.0; 2] {
            keys.push(format!("velocity = {velocity:?}"));
        }
        format!("{{ {} }}", keys.join(", "))
    }
}

/// The `[particles]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParticleSpec {
    /// Interaction radius h, a fraction of the box's height (required).
    pub radius: f32,
    /// Rest density ρ0: the sum of (1 − r/h)² over a particle's neighbours at rest (default 4,
    /// about what a square lattice at a third of the radius gives).
    #[serde(default = "default_rest_density")]
    pub rest_density: f32,
    /// Stiffness k of the pressure `k (ρ − ρ0)`, 1/s² (default 600).
    #[serde(default = "default_stiffness")]
    pub stiffness: f32,
    /// Stiffness of the near-pressure `k_near ρ_near`, 1/s² (default 2000).
    #[serde(default = "default_near_stiffness")]
    pub near_stiffness: f32,
    /// Linear viscosity σ of the pair impulses, per unit of h (default 0).
    #[serde(default)]
    pub viscosity: f32,
    /// Quadratic viscosity β of the pair impulses, per world unit (default 0).
    #[serde(default)]
    pub quadratic_viscosity: f32,
    /// Gravity, world units per second² (default `[0, −9.8]`).
    #[serde(default = "default_gravity")]
    pub gravity: [f32; 2],
    /// Steps of the paper's algorithm per simulation step, each of `dt / substeps` (default 1).
    #[serde(default = "one")]
    pub substeps: u32,
    /// Relaxation passes per substep (default 1).
    #[serde(default = "one")]
    pub iterations: u32,
    /// Where the particles stay (default: the box).
    #[serde(default)]
    pub container: Container,
    /// Friction at the container: the part of the tangential speed a particle touching it
    /// loses each substep, 0 to 1 (default 0).
    #[serde(default)]
    pub friction: f32,
    /// Anti-stick at the container: the speed, in radii per second, a
    /// particle touching it gets away from it, so particles do not pile on its edge
    /// (default 0).
    #[serde(default)]
    pub anti_stick: f32,
    /// Stickiness k_stick (the paper's section 5.3), 1/s²: a particle within
    /// `stick_distance` of the container or an obstacle is pulled toward it by
    /// `dt k_stick d (1 − d / stick_distance)` each substep, d its distance (default 0).
    #[serde(default)]
    pub stickiness: f32,
    /// How far stickiness reaches, in radii (default 0.5; at most 1).
    #[serde(default = "default_stick_distance")]
    pub stick_distance: f32,
    /// The fill's lattice: `"square"` (default) or `"hex"`, rows `spacing × √3/2` apart, every
    /// other one shifted by half a spacing: the packing the liquid relaxes to, so a filled
    /// region starts without the voids a square lattice opens as it rearranges (which springs
    /// would keep).
    #[serde(default)]
    pub lattice: Lattice,
    /// Viscoelastic springs (the paper's section 5.1–5.2; absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub springs: Option<SpringSpec>,
    /// The regions filled at the start.
    #[serde(default)]
    pub fill: Vec<Fill>,
    /// Faucets that add particles as the liquid runs.
    #[serde(default)]
    pub emitters: Vec<ParticleEmitter>,
}

/// `[[particles.emitters]]`: a faucet. Its nozzle is a segment `width` long across its
/// `velocity`, centred on `center`; it lets out a row of particles `spacing` apart each time
/// the last row has moved `spacing`, from `start` until `stop` or until it has let out
/// `max_particles` (the budget the device's buffers are sized for).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParticleEmitter {
    /// The nozzle's centre, fractions of the box's width and height.
    pub center: [f32; 2],
    /// The nozzle's width across the flow, a fraction of the height.
    pub width: f32,
    /// The speed and direction of the flow out of it, world units per second (not zero).
    pub velocity: [f32; 2],
    /// Spacing of its particles, a fraction of the height (default: a third of the radius).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spacing: Option<f32>,
    /// When it opens, seconds (default 0).
    #[serde(default)]
    pub start: f32,
    /// When it closes, seconds (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<f32>,
    /// Most particles it lets out (required).
    pub max_particles: u32,
}

/// A faucet in world units: what its particle `p` (counted from its first) is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Faucet {
    /// The nozzle's centre.
    pub center: [f32; 2],
    /// From one particle of a row to the next, across the flow.
    pub across: [f32; 2],
    /// The flow's velocity.
    pub velocity: [f32; 2],
    /// Particles a row.
    pub per_row: u32,
    /// Seconds between rows.
    pub interval: f32,
    /// When it opens and closes.
    pub start: f32,
    /// When it closes (infinite: never).
    pub stop: f32,
    /// Most particles.
    pub budget: u32,
}

impl Faucet {
    /// Particles let out before time `t`: whole rows at `start + k × interval < min(t, stop)`,
    /// at most the budget.
    pub fn emitted(&self, t: f32) -> u32 {
        let open = f64::from(t.min(self.stop)) - f64::from(self.start);
        if open.is_nan() || open <= 0.0 {
            return 0;
        }
        let rows = (open / f64::from(self.interval)).ceil();
        (rows * f64::from(self.per_row)).min(f64::from(self.budget)) as u32
    }
}

/// How the filled regions' particles are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lattice {
    /// A square lattice.
    #[default]
    Square,
    /// A hexagonal lattice.
    Hex,
}

/// Most springs one particle may hold ([`SpringSpec::max_per_particle`]).
pub const MAX_SPRINGS: u32 = 32;

/// `[particles.springs]`: springs between neighbours whose rest lengths yield (Clavet et al.
/// 2005, section 5.1–5.2). A pair within the radius gets a spring of rest length `h`; its
/// rest length moves toward the pair's distance at `plasticity` once the distance leaves
/// `L (1 ± yield_ratio)`; a spring whose rest length passes `h` is removed. Each pulls its
/// pair by `dt² k (1 − L/h)(L − r)` per substep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpringSpec {
    /// Spring stiffness k_spring, 1/s² (required).
    pub stiffness: f32,
    /// Yield ratio γ: the part of its rest length a spring stretches or shrinks before it
    /// yields (default 0.1).
    #[serde(default = "default_yield_ratio")]
    pub yield_ratio: f32,
    /// Plasticity α: how fast a yielding rest length follows the distance, 1/s (default 0.3; 0
    /// is elastic).
    #[serde(default = "default_plasticity")]
    pub plasticity: f32,
    /// Most springs a particle holds, 1 to [`MAX_SPRINGS`] (default 16): the bound of the
    /// per-particle lists every backend keeps. A pair gets a spring only when both have room.
    #[serde(default = "default_max_springs")]
    pub max_per_particle: u32,
}

fn default_yield_ratio() -> f32 {
    0.1
}
fn default_plasticity() -> f32 {
    0.3
}
fn default_max_springs() -> u32 {
    16
}
fn default_stick_distance() -> f32 {
    0.5
}

fn default_rest_density() -> f32 {
    4.0
}
fn default_stiffness() -> f32 {
    600.0
}
fn default_near_stiffness() -> f32 {
    2000.0
}
fn default_gravity() -> [f32; 2] {
    [0.0, -9.8]
}
fn one() -> u32 {
    1
}

/// A container in world units: a box `[min, max]` or a circle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounds {
    /// The box from `min` to `max`.
    Box {
        /// Lower-left corner.
        min: [f32; 2],
        /// Upper-right corner.
        max: [f32; 2],
    },
    /// A circle.
    Circle {
        /// Centre.
        center: [f32; 2],
        /// Radius.
        radius: f32,
    },
}

impl Bounds {
    /// Whether `p` lies inside (or on the edge).
    pub fn contains(&self, p: [f32; 2]) -> bool {
        match *self {
            Bounds::Box { min, max } => p[0] >= min[0] && p[0] <= max[0] && p[1] >= min[1] && p[1] <= max[1],
            Bounds::Circle { center, radius } => {
                let (dx, dy) = (p[0] - center[0], p[1] - center[1]);
                dx * dx + dy * dy <= radius * radius
            }
        }
    }
}

fn finite_positive(key: &str, x: f32, what: &str) -> Result<()> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(key, x, format!("{what} must be a finite number > 0")))
    }
}

fn finite_at_least_zero(key: &str, x: f32, what: &str) -> Result<()> {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(key, x, format!("{what} must be a finite number ≥ 0")))
    }
}

impl ParticleSpec {
    /// The interaction radius in world units.
    pub(crate) fn radius_world(&self, grid: &Frame) -> f32 {
        self.radius * grid.height()
    }

    /// The container in world units.
    pub fn bounds(&self, grid: &Frame) -> Bounds {
        let (w, hgt) = (grid.width(), grid.height());
        match self.container {
            Container::Box => Bounds::Box { min: [0.0, 0.0], max: [w, hgt] },
            Container::Circle { center, radius } => {
                Bounds::Circle { center: [center[0] * w, center[1] * hgt], radius: radius * hgt }
            }
        }
    }

    /// The hash's cells along x and y: the box over the interaction radius, rounded up.
    pub(crate) fn hash_cells(&self, grid: &Frame) -> [u32; 2] {
        let r = self.radius_world(grid);
        [((grid.width() / r).ceil() as u32).max(1), ((grid.height() / r).ceil() as u32).max(1)]
    }

    /// Check every value against `grid` and the scene's `obstacles` (world units); errors name
    /// the key and the value.
    pub fn validate(&self, grid: &Frame, obstacles: &[Obstacle]) -> Result<()> {
        self.check_coefficients()?;
        self.check_hash(grid)?;
        self.check_container(grid)?;
        if self.fill.is_empty() && self.emitters.is_empty() {
            return Err(Error::invalid(
                "particles.fill",
                "[]",
                "the liquid needs at least one filled region or emitter (`particles.emitters`)",
            ));
        }
        self.check_emitters(grid)?;
        let n = self.initial_count(grid, obstacles).saturating_add(self.budgets());
        if n > MAX_PARTICLES {
            return Err(Error::invalid(
                "particles.fill",
                format!("{n} particles"),
                format!(
                    "at most {MAX_PARTICLES} particles ({} bytes each on a device): a larger `spacing` \
                     (by default a third of `particles.radius`) or smaller regions",
                    crate::particles::BYTES_PER_PARTICLE
                ),
            ));
        }
        self.check_fills(grid)?;
        if n == 0 && self.emitters.is_empty() {
            return Err(Error::invalid(
                "particles.fill",
                n,
                format!(
                    "the filled regions hold no particle: each is smaller than its spacing (its \
                     `spacing`, by default a third of `particles.radius`) or lies inside `obstacles`, on \
                     this box ({} x {} world units, from `grid.nx`, `grid.ny` and `grid.h`)",
                    grid.width(),
                    grid.height()
                ),
            ));
        }
        Ok(())
    }

    /// The liquid's coefficients, its springs, friction, gravity and passes.
    fn check_coefficients(&self) -> Result<()> {
        finite_positive("particles.radius", self.radius, "the interaction radius")?;
        finite_positive("particles.rest_density", self.rest_density, "the rest density")?;
        finite_at_least_zero("particles.stiffness", self.stiffness, "the stiffness")?;
        finite_at_least_zero("particles.near_stiffness", self.near_stiffness, "the near stiffness")?;
        finite_at_least_zero("particles.viscosity", self.viscosity, "the linear viscosity")?;
        finite_at_least_zero("particles.quadratic_viscosity", self.quadratic_viscosity, "the quadratic viscosity")?;
        finite_at_least_zero("particles.anti_stick", self.anti_stick, "the anti-stick speed")?;
        finite_at_least_zero("particles.stickiness", self.stickiness, "the stickiness")?;
        if !(self.stick_distance.is_finite() && self.stick_distance > 0.0 && self.stick_distance <= 1.0) {
            return Err(Error::invalid(
                "particles.stick_distance",
                self.stick_distance,
                "the reach of stickiness is in radii, > 0 and at most 1",
            ));
        }
        if let Some(s) = &self.springs {
            finite_at_least_zero("particles.springs.stiffness", s.stiffness, "the spring stiffness")?;
            finite_at_least_zero("particles.springs.yield_ratio", s.yield_ratio, "the yield ratio")?;
            finite_at_least_zero("particles.springs.plasticity", s.plasticity, "the plasticity")?;
            if !(1..=MAX_SPRINGS).contains(&s.max_per_particle) {
                return Err(Error::invalid(
                    "particles.springs.max_per_particle",
                    s.max_per_particle,
                    format!("1 to {MAX_SPRINGS} springs a particle"),
                ));
            }
        }
        if !(self.friction.is_finite() && (0.0..=1.0).contains(&self.friction)) {
            return Err(Error::invalid("particles.friction", self.friction, "the friction is a fraction, 0 to 1"));
        }
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return Err(Error::invalid("particles.gravity", format!("{:?}", self.gravity), "gravity must be finite"));
        }
        for (key, n) in [("particles.substeps", self.substeps), ("particles.iterations", self.iterations)] {
            if !(1..=MAX_PASSES).contains(&n) {
                return Err(Error::invalid(key, n, format!("1 to {MAX_PASSES}")));
            }
        }
        Ok(())
    }

    /// The neighbour hash over the box stays within its cells.
    fn check_hash(&self, grid: &Frame) -> Result<()> {
        let [cx, cy] = self.hash_cells(grid);
        let cells = u64::from(cx) * u64::from(cy);
        if cells > MAX_HASH_CELLS {
            return Err(Error::invalid(
                "particles.radius",
                self.radius,
                format!(
                    "the neighbour hash over the box would have {cx}x{cy} cells, more than {MAX_HASH_CELLS}: \
                     a larger radius (or a smaller box)"
                ),
            ));
        }
        Ok(())
    }

    /// A circular container lies within the box.
    fn check_container(&self, grid: &Frame) -> Result<()> {
        if let Container::Circle { center, radius } = self.container {
            finite_positive("particles.container.radius", radius, "the container's radius")?;
            let b = self.bounds(grid);
            let Bounds::Circle { center: c, radius: r } = b else { unreachable!() };
            if !center.iter().all(|x| x.is_finite())
                || c[0] - r < -1e-4 * grid.width()
                || c[1] - r < -1e-4 * grid.height()
                || c[0] + r > grid.width() * (1.0 + 1e-4)
                || c[1] + r > grid.height() * (1.0 + 1e-4)
            {
                return Err(Error::invalid(
                    "particles.container",
                    format!("circle at {center:?}, radius {radius}"),
                    format!(
                        "the circle must lie within the box (its picture and neighbour hash), {} x {} world \
                         units from `grid.nx`, `grid.ny` and `grid.h`: its centre is a fraction of the box's \
                         width and height, its radius of the height",
                        grid.width(),
                        grid.height()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Each filled region is well formed and places its particles inside the container.
    fn check_fills(&self, grid: &Frame) -> Result<()> {
        let bounds = self.bounds(grid);
        for (k, fill) in self.fill.iter().enumerate() {
            let key = format!("particles.fill[{k}]");
            let spacing = self.spacing(fill);
            finite_positive(&format!("{key}.spacing"), spacing, "the spacing")?;
            match *fill {
                Fill::Box { min, max, velocity, .. } => {
                    if !min.iter().chain(&max).chain(&velocity).all(|x| x.is_finite())
                        || min[0] >= max[0]
                        || min[1] >= max[1]
                    {
                        return Err(Error::invalid(
                            &key,
                            format!("min {min:?}, max {max:?}, velocity {velocity:?}"),
                            "a box needs finite corners with min below max on both axes",
                        ));
                    }
                }
                Fill::Circle { center, radius, velocity, .. } => {
                    finite_positive(&format!("{key}.radius"), radius, "the radius")?;
                    if !center.iter().chain(&velocity).all(|x| x.is_finite()) {
                        return Err(Error::invalid(&key, format!("center {center:?}"), "the centre must be finite"));
                    }
                }
            }
            // Every particle it places inside the container.
            let mut outside = None;
            self.lattice(fill, grid, &[], |p, _| {
                if outside.is_none() && !bounds.contains(p) {
                    outside = Some(p);
                }
            });
            if let Some(p) = outside {
                return Err(Error::invalid(
                    &key,
                    fill.written(),
                    format!(
                        "it places particles outside the container, `particles.container` (one at {p:?}, \
                         world units, in a box of {} x {} from `grid.nx`, `grid.ny` and `grid.h`)",
                        grid.width(),
                        grid.height()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The emitters in world units.
    pub fn faucets(&self, grid: &Frame) -> Vec<Faucet> {
        let (w, hgt) = (grid.width(), grid.height());
        self.emitters
            .iter()
            .map(|e| {
                let s = e.spacing.unwrap_or(self.radius / 3.0) * hgt;
                let speed = e.velocity[0].hypot(e.velocity[1]);
                let dir = [e.velocity[0] / speed, e.velocity[1] / speed];
                Faucet {
                    center: [e.center[0] * w, e.center[1] * hgt],
                    across: [-dir[1] * s, dir[0] * s],
                    velocity: e.velocity,
                    per_row: ((e.width * hgt / s).floor() as u32).max(1),
                    interval: s / speed,
                    start: e.start,
                    stop: e.stop.unwrap_or(f32::INFINITY),
                    budget: e.max_particles,
                }
            })
            .collect()
    }

    /// Most particles the scene holds: those filled at the start and every emitter's budget.
    pub fn capacity(&self, grid: &Frame, obstacles: &[Obstacle]) -> u64 {
        self.initial_count(grid, obstacles).saturating_add(self.budgets())
    }

    /// Particles the emitters may let out, all told.
    pub fn budgets(&self) -> u64 {
        self.emitters.iter().map(|e| u64::from(e.max_particles)).sum()
    }

    /// Each emitter's values, its nozzle inside the container.
    fn check_emitters(&self, grid: &Frame) -> Result<()> {
        let bounds = self.bounds(grid);
        for (k, e) in self.emitters.iter().enumerate() {
            let key = format!("particles.emitters[{k}]");
            if !e.center.iter().all(|x| x.is_finite()) {
                return Err(Error::invalid(format!("{key}.center"), format!("{:?}", e.center), "must be finite"));
            }
            finite_positive(&format!("{key}.width"), e.width, "the nozzle's width")?;
            if let Some(sp) = e.spacing {
                finite_positive(&format!("{key}.spacing"), sp, "the spacing")?;
            }
            let speed = e.velocity[0].hypot(e.velocity[1]);
            if !(speed.is_finite() && speed > 0.0) {
                return Err(Error::invalid(
                    format!("{key}.velocity"),
                    format!("{:?}", e.velocity),
                    "the flow out of an emitter needs a finite, non-zero velocity (its direction)",
                ));
            }
            finite_at_least_zero(&format!("{key}.start"), e.start, "the opening time")?;
            if let Some(stop) = e.stop
                && !(stop.is_finite() && stop > e.start)
            {
                return Err(Error::invalid(
                    format!("{key}.stop"),
                    stop,
                    format!("must come after start ({})", e.start),
                ));
            }
            if e.max_particles == 0 {
                return Err(Error::invalid(format!("{key}.max_particles"), 0, "an emitter lets out at least one"));
            }
            let f = self.faucets(grid)[k];
            let half = 0.5 * (f.per_row - 1) as f32;
            let ends = [-half, half].map(|t| [f.center[0] + f.across[0] * t, f.center[1] + f.across[1] * t]);
            if let Some(p) = ends.iter().find(|p| !bounds.contains(**p)) {
                return Err(Error::invalid(
                    &key,
                    format!("center {:?}, width {}", e.center, e.width),
                    format!(
                        "its nozzle reaches outside the container, `particles.container` (at {p:?}, world \
                         units, in a box of {} x {} from `grid.nx`, `grid.ny` and `grid.h`)",
                        grid.width(),
                        grid.height()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A region's spacing as a fraction of the height.
    fn spacing(&self, fill: &Fill) -> f32 {
        let s = match fill {
            Fill::Box { spacing, .. } | Fill::Circle { spacing, .. } => *spacing,
        };
        s.unwrap_or(self.radius / 3.0)
    }

    /// How many particles the filled regions hold outside `obstacles` (without placing
    /// them); past twice [`MAX_PARTICLES`], the lattice points of their bounding boxes,
    /// uncounted (a disc holds more than half of its box's).
    pub(crate) fn initial_count(&self, grid: &Frame, obstacles: &[Obstacle]) -> u64 {
        let bound: u64 = self.fill.iter().map(|f| self.lattice_bound(f, grid)).fold(0, u64::saturating_add);
        if bound > 2 * MAX_PARTICLES {
            return bound;
        }
        self.fill.iter().map(|f| self.lattice(f, grid, obstacles, |_, _| {})).sum()
    }

    /// The distance between rows of the lattice of spacing `s`.
    fn row_spacing(&self, s: f32) -> f32 {
        match self.lattice {
            Lattice::Square => s,
            Lattice::Hex => s * (0.75f32).sqrt(),
        }
    }

    /// The lattice points of a region's bounding box: its corners, the spacing, columns and
    /// rows.
    fn lattice_dims(&self, fill: &Fill, grid: &Frame) -> ([f32; 2], [f32; 2], f32, u64, u64) {
        let hgt = grid.height();
        let s = self.spacing(fill) * hgt;
        let (lo, hi) = match *fill {
            Fill::Box { min, max, .. } => {
                ([min[0] * grid.width(), min[1] * hgt], [max[0] * grid.width(), max[1] * hgt])
            }
            Fill::Circle { center, radius, .. } => {
                let (c, r) = ([center[0] * grid.width(), center[1] * hgt], radius * hgt);
                ([c[0] - r, c[1] - r], [c[0] + r, c[1] + r])
            }
        };
        if !(s.is_finite() && s > 0.0) {
            return (lo, hi, s, 0, 0);
        }
        let count = |a: f32, b: f32, s: f32| {
            let n = ((b - a) / s).floor();
            if n.is_finite() && n > 0.0 { n.min(1e15) as u64 } else { 0 }
        };
        (lo, hi, s, count(lo[0], hi[0], s), count(lo[1], hi[1], self.row_spacing(s)))
    }

    fn lattice_bound(&self, fill: &Fill, grid: &Frame) -> u64 {
        let (_, _, _, cols, rows) = self.lattice_dims(fill, grid);
        cols.saturating_mul(rows)
    }

    /// The initial particles: positions and velocities in world units, region by region,
    /// row by row from the bottom, none inside `obstacles`.
    pub(crate) fn initial_particles(&self, grid: &Frame, obstacles: &[Obstacle]) -> (Vec<[f32; 2]>, Vec<[f32; 2]>) {
        let (mut x, mut v) = (Vec::new(), Vec::new());
        for f in &self.fill {
            self.lattice(f, grid, obstacles, |p, vel| {
                x.push(p);
                v.push(vel);
            });
        }
        (x, v)
    }

    /// Walk a region's lattice (square: points at `(k + ½)·spacing` from its lower-left corner;
    /// hex: see [`Lattice::Hex`]) that lie inside it and outside `obstacles`, calling `put` with each point and velocity; returns
    /// how many.
    /// A region's lattice past `2 × MAX_PARTICLES` points is not walked (its count says so
    /// before any walk: [`ParticleSpec::initial_count`]).
    fn lattice(
        &self,
        fill: &Fill,
        grid: &Frame,
        obstacles: &[Obstacle],
        mut put: impl FnMut([f32; 2], [f32; 2]),
    ) -> u64 {
        let (lo, _, s, cols, rows) = self.lattice_dims(fill, grid);
        if cols.saturating_mul(rows) > 2 * MAX_PARTICLES {
            return 0;
        }
        let hgt = grid.height();
        let (velocity, disc) = match *fill {
            Fill::Box { velocity, .. } => (velocity, None),
            Fill::Circle { center, radius, velocity, .. } => {
                (velocity, Some(([center[0] * grid.width(), center[1] * hgt], radius * hgt)))
            }
        };
        let (row_s, hex) = (self.row_spacing(s), self.lattice == Lattice::Hex);
        let mut n = 0;
        for j in 0..rows {
            // A hex lattice's odd rows sit half a spacing right, one point fewer.
            let (shift, cols) = if hex && j % 2 == 1 { (1.0, cols.saturating_sub(1)) } else { (0.5, cols) };
            for i in 0..cols {
                let p = [lo[0] + (i as f32 + shift) * s, lo[1] + (j as f32 + 0.5) * row_s];
                if let Some((c, r)) = disc {
                    let (dx, dy) = (p[0] - c[0], p[1] - c[1]);
                    if dx * dx + dy * dy > r * r {
                        continue;
                    }
                }
                if !obstacles.is_empty() && nearest(grid, obstacles, p).0 < 0.0 {
                    continue;
                }
                put(p, velocity);
                n += 1;
            }
        }
        n
    }
}
