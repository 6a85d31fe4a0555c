//! Scenes: a grid, parameters, emitters, initial conditions and a look, as TOML.
//!
//! ```toml
//! name = "smoke"
//! description = "one line"
//! [grid]
//! nx = 192          # cells along x
//! ny = 256          # cells along y
//! h = 0.00390625    # cell size, world units
//! [params]          # see SimParams; every key optional
//! dt = 0.016
//! [[emitters]]      # splats applied every step; amounts are per second
//! center = [0.5, 0.08]   # fractions of the domain width and height
//! radius = 0.05          # fraction of the domain height
//! density = 1.0
//! [[splats]]        # applied once, before the first step; amounts are absolute
//! [initial.velocity]
//! kind = "taylor-green"
//! amplitude = 1.0
//! [render]
//! field = "density"
//! ```

use serde::{Deserialize, Serialize};

use crate::frame::finite;
use crate::frame::{Frame, MAX_AXIS, MAX_CELLS};
use crate::grid::model::{GridModel, GridSetup};
use crate::grid::params::SimParams;
use crate::grid::{Boundary, FieldId, Grid};
use crate::model::Model;
use crate::particles::model::{ParticleModel, ParticleSetup};
use crate::particles::spec::ParticleSpec;
use crate::render::RenderSpec;
use crate::splat::{Falloff, GAUSSIAN_CUTOFF, Splat};
use swirly_ir::error::{shorten, shorten_lines};
use swirly_ir::{Error, Result};

pub mod image;
pub(crate) mod obstacles;
mod overrides;
mod suggest;

pub use crate::grid::initial::{Initial, InitialVelocity, SplitMix64};
pub use crate::image::PRESET_IMAGES;
pub use crate::splat::SplatSpec;
pub use obstacles::{MAX_OBSTACLES, MaskChannel, ObstacleSpec, PathKey, ShapeKind};
pub use overrides::{MAX_KEY_PARTS, parse_override};
use overrides::{apply_override, check_f32_range, check_tables_as_tables, culprit, word_expected};

/// Grid section of a scene.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// Cells along x (required).
    pub nx: u32,
    /// Cells along y (required).
    pub ny: u32,
    /// Cell side in world units (default: `1 / ny`, so the domain is one unit tall).
    #[serde(default)]
    pub h: Option<f32>,
    /// The dye's cells per cell along each axis, 1 to [`MAX_DYE_FACTOR`] (default 1): a finer
    /// dye than the velocity, advected semi-Lagrangian on its own grid.
    #[serde(default = "one")]
    pub dye_factor: u32,
    /// The smoke density's cells per cell along each axis, 1 to [`MAX_DYE_FACTOR`] (default
    /// 1): a finer density than the velocity, advected semi-Lagrangian on its own grid and
    /// averaged over each cell where the forces and combustion read it.
    #[serde(default = "one")]
    pub density_factor: u32,
}

/// The largest [`GridSpec::dye_factor`] and [`GridSpec::density_factor`].
pub const MAX_DYE_FACTOR: u32 = 8;

fn one() -> u32 {
    1
}

/// A whole scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// Short name (default: the file stem or preset name).
    #[serde(default)]
    pub name: String,
    /// One line saying what it shows.
    #[serde(default)]
    pub description: String,
    /// Steps `fluid run` takes unless told (default: none, the CLI's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// The grid (required).
    pub grid: GridSpec,
    /// Parameters (default: [`SimParams::default`]).
    #[serde(default)]
    pub params: SimParams,
    /// Splats applied every step, amounts per second.
    #[serde(default)]
    pub emitters: Vec<SplatSpec>,
    /// Splats applied once before the first step.
    #[serde(default)]
    pub splats: Vec<SplatSpec>,
    /// Initial conditions.
    #[serde(default)]
    pub initial: Initial,
    /// How frames are drawn.
    #[serde(default)]
    pub render: RenderSpec,
    /// The memory budget and what happens past it.
    #[serde(default)]
    pub storage: crate::storage::Storage,
    /// Solids in the flow (`obstacles`).
    #[serde(default)]
    pub obstacles: Vec<ObstacleSpec>,
    /// The particle liquid ([`crate::particles::spec`]): with this section the scene runs the
    /// particle model, in the box of `grid` (whose cells are then the picture's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub particles: Option<ParticleSpec>,
}

/// Built-in scenes: `(name, TOML)`.
pub const PRESETS: &[(&str, &str)] = &[
    ("smoke", include_str!("../../scenes/smoke.toml")),
    ("ink", include_str!("../../scenes/ink.toml")),
    ("blobs", include_str!("../../scenes/blobs.toml")),
    ("taylor-green", include_str!("../../scenes/taylor-green.toml")),
    ("stable-fluid", include_str!("../../scenes/stable-fluid.toml")),
    ("obstacles", include_str!("../../scenes/obstacles.toml")),
    ("paddle", include_str!("../../scenes/paddle.toml")),
    ("cavity", include_str!("../../scenes/cavity.toml")),
    ("wind-tunnel", include_str!("../../scenes/wind-tunnel.toml")),
    ("convection", include_str!("../../scenes/convection.toml")),
    ("radiator", include_str!("../../scenes/radiator.toml")),
    ("fire", include_str!("../../scenes/fire.toml")),
    ("candle", include_str!("../../scenes/candle.toml")),
    ("explosion", include_str!("../../scenes/explosion.toml")),
    ("dam-break", include_str!("../../scenes/dam-break.toml")),
    ("splash", include_str!("../../scenes/splash.toml")),
    ("goo", include_str!("../../scenes/goo.toml")),
    ("faucet", include_str!("../../scenes/faucet.toml")),
];

fn preset_names() -> String {
    PRESETS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The TOML text of a preset.
pub(crate) fn preset_text(name: &str) -> Result<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| Error::UnknownPreset { name: name.to_string(), known: preset_names() })
}

/// The longest scene file read, in bytes (4 MiB: a scene is a few kilobytes, and the most
/// splats it may hold, 8192, take about 1 MiB with every key written).
pub const MAX_SCENE_BYTES: u64 = 4 << 20;

/// Largest length of a scene's name in bytes.
pub const MAX_NAME_BYTES: usize = 128;

/// An error unless `name` can name a scene: it becomes the default output folder `out/<name>`,
/// so it must be one plain path component that stays inside `out/` — not empty, no `/`, `\`,
/// `:` or control characters, not `.` or `..`, at most [`MAX_NAME_BYTES`] bytes.
pub fn check_name(name: &str) -> Result<()> {
    let shown = || format!("{:?}", name.chars().take(60).collect::<String>());
    let bad = |why: &str| {
        Err(Error::invalid(
            "name",
            shown(),
            format!("{why}: a scene's name is its output folder under out/ (letters, digits, `-`, `_`, `.`, spaces)"),
        ))
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_BYTES {
        return bad(&format!("it is {} bytes long, more than {MAX_NAME_BYTES}", name.len()));
    }
    if name == "." || name == ".." {
        return bad("it names a folder, not one inside out/");
    }
    if let Some(c) = name.chars().find(|c| matches!(c, '/' | '\\' | ':') || c.is_control()) {
        return bad(&format!("it contains {c:?}, which would leave the output folder or is not allowed in a path"));
    }
    Ok(())
}

impl Scene {
    /// Parse a scene from TOML text; `origin` names it in errors (a path or `preset smoke`).
    ///
    /// ```
    /// use swirly_core::Scene;
    /// # fn main() -> swirly_core::Result<()> {
    /// let scene = Scene::from_toml("[grid]\nnx = 128\nny = 64\n[params]\nvorticity = 6.0", "my scene")?;
    /// assert_eq!((scene.grid.nx, scene.params.vorticity), (128, 6.0));
    /// // A misspelt key is refused, naming the scene, the key and the nearest one.
    /// let e = Scene::from_toml("[params]\nvorticty = 6.0", "my scene").unwrap_err().to_string();
    /// assert!(e.contains("my scene") && e.contains("vorticty") && e.contains("did you mean `vorticity`"));
    /// # Ok(()) }
    /// ```
    pub fn from_toml(text: &str, origin: &str) -> Result<Scene> {
        Scene::from_toml_with(text, origin, &[])
    }

    /// Read a scene file and apply `key=value` overrides before checking it. Only a regular
    /// file of at most [`MAX_SCENE_BYTES`] is read (a FIFO, a device, a folder or a longer
    /// file is refused, saying which). The images it names (an obstacle's `image`,
    /// `render.background_image`) are found relative to the file's folder and must lie in it;
    /// a bare name of a built-in image ([`PRESET_IMAGES`]) with no file of that name beside
    /// the scene is the built-in image.
    pub fn from_file(path: &std::path::Path, overrides: &[(String, toml::Value)]) -> Result<Scene> {
        let origin = || shorten(&path.display().to_string());
        let bytes = crate::image::regular_file(path, MAX_SCENE_BYTES, "a scene file")
            .map_err(|message| Error::Scene { origin: origin(), message })?;
        let text = String::from_utf8(bytes)
            .map_err(|e| Error::Scene { origin: origin(), message: format!("it is not UTF-8 text: {e}") })?;
        Scene::parse(&text, &path.display().to_string(), overrides, Some(path.parent().unwrap_or(path)))
    }

    /// Parse a scene and apply `key=value` overrides (see [`parse_override`]) before checking it.
    /// A bare name of a built-in image ([`PRESET_IMAGES`]) is that image, never a file; any
    /// other relative `image` is read from the working folder (and kept as an absolute path).
    pub(crate) fn from_toml_with(text: &str, origin: &str, overrides: &[(String, toml::Value)]) -> Result<Scene> {
        Scene::parse(text, origin, overrides, None)
    }

    fn parse(
        text: &str,
        origin: &str,
        overrides: &[(String, toml::Value)],
        folder: Option<&std::path::Path>,
    ) -> Result<Scene> {
        let scene_err = |e: toml::de::Error| Error::Scene {
            origin: shorten(origin),
            message: shorten_lines(&suggest::with_hint(&e.to_string())),
        };
        let mut table: toml::Table = toml::from_str(text).map_err(scene_err)?;
        let written = image::named_in(&table);
        let scene: Scene = if overrides.is_empty() {
            check_f32_range(&table)?;
            // Deserialised from the text rather than the table, so that errors keep their line.
            toml::from_str(text).map_err(|e| word_expected(&table, &e).unwrap_or_else(|| scene_err(e)))?
        } else {
            let original = table.clone();
            for (k, v) in overrides {
                apply_override(&mut table, k, v.clone())?;
            }
            check_f32_range(&table)?;
            table.clone().try_into().map_err(|e: toml::de::Error| {
                word_expected(&table, &e).unwrap_or_else(|| Error::Scene {
                    origin: shorten(&format!("{origin} (after {})", culprit(original, overrides))),
                    message: shorten_lines(&suggest::with_hint(e.to_string().trim())),
                })
            })?
        };
        check_tables_as_tables(&table, &scene)?;
        let mut scene = scene;
        image::resolve(&mut scene, &written, folder)?;
        scene.validate()?;
        Ok(scene)
    }

    /// This scene with `key=value` overrides applied (see [`parse_override`]) and checked, as
    /// when they are given with a file; `origin` names it in errors.
    pub fn with_overrides(&self, origin: &str, overrides: &[(String, toml::Value)]) -> Result<Scene> {
        if overrides.is_empty() {
            self.validate()?;
            return Ok(self.clone());
        }
        let text = toml::to_string(self)
            .map_err(|e| Error::Scene { origin: shorten(origin), message: shorten_lines(&e.to_string()) })?;
        Scene::from_toml_with(&text, origin, overrides)
    }

    /// A built-in scene by name.
    pub fn preset(name: &str) -> Result<Scene> {
        Scene::preset_with(name, &[])
    }

    /// A built-in scene with overrides.
    ///
    /// ```
    /// use swirly_core::Scene;
    /// use swirly_core::scene::parse_override;
    /// # fn main() -> swirly_core::Result<()> {
    /// let overrides = [parse_override("grid.nx=96")?, parse_override("params.pressure.solver=mgpcg")?];
    /// let scene = Scene::preset_with("smoke", &overrides)?;
    /// assert_eq!(scene.grid.nx, 96);
    /// assert!(Scene::preset_with("smoke", &[parse_override("grid.nx=0")?]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn preset_with(name: &str, overrides: &[(String, toml::Value)]) -> Result<Scene> {
        let mut s = Scene::from_toml_with(preset_text(name)?, &format!("preset `{name}`"), overrides)?;
        if s.name.is_empty() {
            s.name = name.to_string();
        }
        Ok(s)
    }

    /// The checked grid of this scene: its box, sides, obstacles and finer fields.
    pub fn grid(&self) -> Result<Grid> {
        let h = match self.grid.h {
            Some(h) => h,
            None if self.grid.ny > 0 => 1.0 / self.grid.ny as f32,
            None => 1.0,
        };
        let b = &self.params.boundary;
        let grid = Grid::new(self.grid.nx, self.grid.ny, h, b.x, b.y)?;
        let held = self.params.fields.temperature && self.obstacles.iter().any(|o| o.temperature.is_some());
        let (dye_factor, density_factor) = (self.fine_factor(false)?, self.fine_factor(true)?);
        let grid = Grid { solids: !self.obstacles.is_empty(), held, dye_factor, density_factor, ..grid };
        grid.with_sides(b.sides(self.params.buoyancy.ambient_temperature))
    }

    /// The checked box of this scene and its sides (what every model lives in).
    pub fn frame(&self) -> Result<Frame> {
        Ok(self.grid()?.frame)
    }

    /// The model this scene runs, made from its sections: the particle liquid for a scene
    /// with a `[particles]` section, else the grid fluid. The one place the engine tells the
    /// models apart.
    pub fn model(&self) -> Result<Box<dyn Model>> {
        match &self.particles {
            Some(spec) => Ok(Box::new(ParticleModel::new(self.particle_setup(spec)?)?)),
            None => Ok(Box::new(GridModel::new(self.grid_setup()?)?)),
        }
    }

    /// What the grid fluid of this scene is made from, checked ([`Scene::validate`]).
    pub(crate) fn grid_setup(&self) -> Result<GridSetup> {
        self.validate()?;
        let grid = self.grid()?;
        Ok(GridSetup {
            grid,
            params: self.params.clone(),
            obstacles: self.obstacles()?,
            paths: self.obstacle_paths()?,
            initial: self.initial,
            emitters: self.emitters.clone(),
            splats: self.splats.clone(),
            storage: self.storage,
        })
    }

    /// What the particle liquid of this scene (its `[particles]` section, `spec`) is made
    /// from, checked: the liquid against the box and the obstacles, and none of the grid's
    /// inputs that a liquid has no use for.
    pub fn particle_setup(&self, spec: &ParticleSpec) -> Result<ParticleSetup> {
        let frame = self.frame()?;
        let obstacles = self.obstacles()?;
        spec.validate(&frame, &obstacles)?;
        self.check_particle_inputs()?;
        Ok(ParticleSetup { frame, spec: spec.clone(), obstacles, paths: self.obstacle_paths()? })
    }

    /// `grid.dye_factor` or `grid.density_factor` (`density`), checked: 1 to
    /// [`MAX_DYE_FACTOR`]; above 1 only with the field on, semi-Lagrangian bilinear advection,
    /// and a fine grid within the size limits.
    fn fine_factor(&self, density: bool) -> Result<u32> {
        let (f, key, field, on) = if density {
            (self.grid.density_factor, "grid.density_factor", "density", self.params.fields.density)
        } else {
            (self.grid.dye_factor, "grid.dye_factor", "dye", self.params.fields.dye)
        };
        if !(1..=MAX_DYE_FACTOR).contains(&f) {
            return Err(Error::invalid(key, f, format!("the {field}'s cells per cell, 1 to {MAX_DYE_FACTOR}")));
        }
        if f == 1 {
            return Ok(1);
        }
        if !on {
            return Err(Error::invalid(key, f, format!("a finer {field} needs it (`params.fields.{field} = true`)")));
        }
        let a = &self.params.advection;
        if a.scheme != crate::grid::params::AdvectionScheme::SemiLagrangian
            || a.interpolation != crate::grid::params::Interpolation::Bilinear
        {
            let why = format!(
                "the finer {field} is advected semi-Lagrangian with bilinear sampling: set \
                 `params.advection.scheme = \"semi-lagrangian\"` and `interpolation = \"bilinear\"`, or `{key} = 1`"
            );
            return Err(Error::invalid(key, f, why));
        }
        let (x, y) = (u64::from(self.grid.nx) * u64::from(f), u64::from(self.grid.ny) * u64::from(f));
        if x > u64::from(MAX_AXIS) || y > u64::from(MAX_AXIS) || x * y > MAX_CELLS {
            let why = format!("the {field}'s grid {x}x{y} passes the limits ({MAX_AXIS} per axis, {MAX_CELLS} cells)");
            return Err(Error::invalid(key, f, why));
        }
        Ok(f)
    }

    /// The scene's obstacles in world units, checked (`obstacles::obstacles`).
    pub fn obstacles(&self) -> Result<Vec<crate::frame::solid::Obstacle>> {
        obstacles::obstacles(&self.obstacles, &self.frame()?)
    }

    /// The keyframed paths of the scene's obstacles in world units, in their order
    /// ([`obstacles::paths`]).
    pub(crate) fn obstacle_paths(&self) -> Result<Vec<Option<crate::frame::solid::KeyPath>>> {
        obstacles::paths(&self.obstacles, &self.frame()?)
    }

    /// Pixels across and down of this scene's pictures ([`crate::render::RenderSpec::size`]):
    /// the box's cells, or a finer dye's or density's when a layer shows it.
    pub fn picture_size(&self) -> Result<(u32, u32)> {
        let grid = self.grid()?;
        let canvas = crate::render::Canvas::plain(grid.frame)
            .with_factor("dye", grid.dye_factor)
            .with_factor("density", grid.density_factor);
        Ok(self.render.size(&canvas))
    }

    /// Check every value; errors name the key and the value.
    pub fn validate(&self) -> Result<()> {
        if !self.name.is_empty() {
            check_name(&self.name)?;
        }
        // The parameters first: the grid's sides take the ambient temperature from them.
        self.params.validate()?;
        self.grid()?;
        if self.steps == Some(0) {
            return Err(Error::invalid("steps", 0, "a scene's default run takes at least one step"));
        }
        let grid = self.grid()?;
        let (emitters, splats, most) = (self.emitters.len(), self.splats.len(), crate::splat::MAX_SPLATS);
        if emitters + splats > most {
            let why = format!(
                "a step applies at most {most} splats, emitters included: a scene's `emitters` and `splats` \
                 together are at most {most}"
            );
            let value = format!("{emitters} emitters and {splats} splats, {} in all", emitters + splats);
            return Err(Error::invalid("emitters and splats", value, why));
        }
        for (list, key) in [(&self.emitters, "emitters"), (&self.splats, "splats")] {
            for (i, s) in list.iter().enumerate() {
                let splat = s.to_splat(&grid);
                splat.validate(&format!("{key}[{i}]"))?;
                // Past a wall by more than its reach, it would never add anything: a mistake
                // (periodic axes wrap it into the box).
                let axes = [(grid.boundary_x, grid.width(), "x"), (grid.boundary_y, grid.height(), "y")];
                for (k, (boundary, len, axis)) in axes.into_iter().enumerate() {
                    let c = splat.center[k];
                    if boundary != Boundary::Periodic && (-c >= splat.reach() || c - len >= splat.reach()) {
                        return Err(Error::invalid(
                            format!("{key}[{i}].center"),
                            format!("[{:?}, {:?}]", s.center[0], s.center[1]),
                            format!(
                                "it lies past the box's wall along {axis} by more than its falloff reaches ({}), \
                                 so it would add nothing (a centre is a fraction of the box: 0 to 1 across it)",
                                match s.falloff {
                                    Falloff::Linear => "its radius, linear".to_string(),
                                    Falloff::Constant => "its radius, constant".to_string(),
                                    Falloff::Gaussian => format!("{GAUSSIAN_CUTOFF} radii, gaussian"),
                                }
                            ),
                        ));
                    }
                }
            }
        }
        match self.initial.velocity {
            InitialVelocity::Zero => {}
            InitialVelocity::TaylorGreen { amplitude } | InitialVelocity::Random { amplitude, .. } => {
                finite("initial.velocity.amplitude", amplitude)?;
            }
        }
        if let InitialVelocity::TaylorGreen { .. } = self.initial.velocity
            && (self.params.boundary.x != Boundary::Periodic || self.params.boundary.y != Boundary::Periodic)
        {
            return Err(Error::invalid(
                "initial.velocity.kind",
                "taylor-green",
                "the Taylor-Green vortex needs periodic boundaries on both axes",
            ));
        }
        self.render.validate()?;
        self.check_carried()?;
        self.obstacles()?;
        if let Some(k) = self.obstacles.iter().position(|o| o.temperature.is_some())
            && !self.params.fields.temperature
        {
            let why = "a solid held at a temperature needs the temperature field (`params.fields.temperature = true`)";
            return Err(Error::invalid(
                format!("obstacles[{k}].temperature"),
                self.obstacles[k].temperature.unwrap_or(0.0),
                why,
            ));
        }
        self.check_solver_with_obstacles()?;
        Ok(())
    }

    /// The pressure solvers that weight faces by their open fraction are multigrid, MGPCG,
    /// Jacobi and SOR; the others are refused with obstacles, open or inflow sides, by name.
    fn check_solver_with_obstacles(&self) -> Result<()> {
        use crate::grid::params::PressureSolver as P;
        let solver = self.params.pressure.solver;
        if !self.grid()?.solids || matches!(solver, P::Jacobi | P::Sor | P::Multigrid | P::Mgpcg) {
            return Ok(());
        }
        let name = toml::Value::try_from(solver).ok().and_then(|v| v.as_str().map(str::to_string));
        let what = if self.obstacles.is_empty() { "open or inflow sides" } else { "obstacles" };
        Err(Error::invalid(
            "params.pressure.solver",
            name.unwrap_or_else(|| format!("{solver:?}")),
            format!(
                "this solver does not weight faces by their open fraction (it was derived for a closed or periodic \
                 box), so it cannot honour {what}; use \"multigrid\", \"mgpcg\", \"sor\" or \"jacobi\""
            ),
        ))
    }

    /// Refuse settings that act on a cell field `params.fields` switches off, since they would
    /// do nothing without a word: buoyancy from density or heat, and emitters and initial
    /// splats that add it.
    fn check_carried(&self) -> Result<()> {
        let fields = &self.params.fields;
        let refuse = |key: String, value: String, field: FieldId| -> Result<()> {
            match fields.not_carried(field) {
                Some(why) => Err(Error::invalid(key, value, format!("{why}: set that to true, or leave this out"))),
                None => Ok(()),
            }
        };
        let b = &self.params.buoyancy;
        if b.density_weight != 0.0 {
            refuse("params.buoyancy.density_weight".into(), b.density_weight.to_string(), FieldId::Density)?;
        }
        if b.temperature_lift != 0.0 {
            refuse("params.buoyancy.temperature_lift".into(), b.temperature_lift.to_string(), FieldId::Temperature)?;
        }
        for (list, key) in [(&self.emitters, "emitters"), (&self.splats, "splats")] {
            for (i, s) in list.iter().enumerate() {
                if s.density != 0.0 {
                    refuse(format!("{key}[{i}].density"), s.density.to_string(), FieldId::Density)?;
                }
                if s.temperature != 0.0 {
                    refuse(format!("{key}[{i}].temperature"), s.temperature.to_string(), FieldId::Temperature)?;
                }
                if s.dye != [0.0; 4] {
                    refuse(format!("{key}[{i}].dye"), format!("{:?}", s.dye), FieldId::Dye)?;
                }
                if s.fuel != 0.0 {
                    refuse(format!("{key}[{i}].fuel"), s.fuel.to_string(), FieldId::Fuel)?;
                }
            }
        }
        Ok(())
    }

    /// Refuse to draw a cell field `params.fields` switches off (the picture would be blank):
    /// [`Scene::validate`] leaves this to whoever draws, since `render.field` defaults to
    /// `density` and a scene that never draws need not set it.
    pub fn check_render(&self) -> Result<()> {
        use crate::render::RenderField;
        for (k, layer) in self.render.effective_layers().iter().enumerate() {
            if matches!(layer.field, RenderField::Velocity | RenderField::Speed | RenderField::Obstacles) {
                continue;
            }
            let Ok(shown) = FieldId::parse(layer.field.source()) else { continue };
            if let Some(why) = self.params.fields.not_carried(shown) {
                return Err(Error::invalid(
                    self.render.layer_key(k),
                    shown.name(),
                    format!(
                        "{why}, so the picture would be blank: draw a field the scene carries, or set that to true"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// An error naming the first input of a grid scene that a particle scene has no use for:
    /// emitters and splats of grid fields, obstacles held at a temperature, a finer dye or
    /// density (the liquid is drawn on the grid itself).
    fn check_particle_inputs(&self) -> Result<()> {
        let scene = self;
        for (key, f) in [("grid.dye_factor", scene.grid.dye_factor), ("grid.density_factor", scene.grid.density_factor)]
        {
            if f != 1 {
                return Err(Error::invalid(key, f, "a particle scene is drawn on its grid: it has no finer fields"));
            }
        }
        if scene.storage.any_half() {
            return Err(Error::invalid(
                "storage.format",
                "f16",
                "a particle scene stores its particles and grid in f32 (positions need its precision)",
            ));
        }
        let why = "a particle scene has no grid fields to emit into (its liquid comes from `particles.fill`)";
        if !scene.emitters.is_empty() {
            return Err(Error::invalid("emitters", format!("{} emitters", scene.emitters.len()), why));
        }
        if !scene.splats.is_empty() {
            return Err(Error::invalid("splats", format!("{} splats", scene.splats.len()), why));
        }
        if let Some(k) = scene.obstacles.iter().position(|o| o.temperature.is_some()) {
            return Err(Error::invalid(
                format!("obstacles[{k}].temperature"),
                scene.obstacles[k].temperature.unwrap_or(0.0),
                "a particle scene has no temperature: its obstacles are colliders only",
            ));
        }
        Ok(())
    }

    /// Fields to upload before the first step (others start at zero): the grid fluid's
    /// initial conditions (`crate::grid::initial::fields`).
    pub fn initial_fields(&self, grid: &Grid) -> Vec<(FieldId, Vec<f32>)> {
        crate::grid::initial::fields(&self.initial, &self.params, grid)
    }

    /// The emitters of one step of length `dt`, in world units.
    pub fn emitter_splats(&self, grid: &Grid, dt: f32) -> Vec<Splat> {
        crate::splat::emitted(&self.emitters, grid, dt)
    }

    /// The one-off initial splats in world units.
    pub fn initial_splats(&self, grid: &Grid) -> Vec<Splat> {
        self.splats.iter().map(|s| s.to_splat(grid)).collect()
    }
}

#[cfg(test)]
mod tests;
