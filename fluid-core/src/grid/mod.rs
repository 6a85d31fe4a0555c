//! The MAC (staggered) grid and the fields that live on it.
//!
//! # Layout
//!
//! The domain is `nx × ny` square cells of side `h` (world units), so it spans
//! `[0, nx·h] × [0, ny·h]` with the origin at the **bottom-left** and `y` pointing **up**.
//! Every field is one flat `f32` array in **row-major** order, row `j` (a fixed `y`) after row
//! `j − 1`, starting with the bottom row:
//!
//! | field kind | shape `[rows, cols]` | sample `(i, j)` sits at | index |
//! |---|---|---|---|
//! | cell (scalars) | `[ny, nx]` | `((i + ½)h, (j + ½)h)` | `j·nx + i` |
//! | u (x-faces) | `[ny, nx + 1]` | `(i·h, (j + ½)h)` | `j·(nx+1) + i` |
//! | v (y-faces) | `[ny + 1, nx]` | `((i + ½)h, j·h)` | `j·nx + i` |
//! | dye (RGBA per cell) | `[ny, nx, 4]` | cell centre | `4·(j·nx + i) + c` |
//!
//! With periodic boundaries along x, the face `i = nx` is the same face as `i = 0` and every
//! kernel writes the same value to both; likewise for v along y.

pub(crate) mod builder;
pub mod fields;
pub mod kernels;
pub mod model;
#[cfg(test)]
mod plans;
pub mod pressure;
pub mod solid;
pub mod solid_set;
pub mod step;
pub mod uniforms;

use serde::{Deserialize, Serialize};

pub use fields::GridFields;

use crate::{Error, Result};

/// What happens at the two ends of one axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Boundary {
    /// Solid wall: no flow through it (normal velocity zero), free slip along it.
    #[default]
    Wall,
    /// Outflow: fluid leaves, nothing wraps, the pressure is zero past the side.
    Open,
    /// The axis wraps: what leaves one side enters the other.
    Periodic,
}

impl Boundary {
    /// The code used in GPU uniforms.
    pub fn code(self) -> u32 {
        match self {
            Boundary::Wall => 0,
            Boundary::Open => 1,
            Boundary::Periodic => 2,
        }
    }

    /// Decode a uniform code.
    pub fn from_code(code: u32) -> Boundary {
        match code {
            1 => Boundary::Open,
            2 => Boundary::Periodic,
            _ => Boundary::Wall,
        }
    }
}

/// One side of the box as the velocity sees it. The sides of a periodic axis are
/// [`Side::Periodic`]; [`Grid::with_sides`] sets the others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    /// A solid wall: nothing crosses it. Free slip, or no slip holding the tangential
    /// velocity at `speed` (along +x on the bottom and top, +y on the left and right: a
    /// moving lid); the viscous step and the velocity's sampling near the wall honour it.
    Wall {
        /// Whether the fluid sticks to it.
        no_slip: bool,
        /// Tangential velocity of a no-slip wall, world units per second.
        speed: f32,
        /// The temperature the wall holds through heat diffusion (`None`: it insulates).
        temperature: Option<f32>,
    },
    /// Outflow: the pressure is zero past the side; what reaches it leaves.
    Open,
    /// Fluid enters, carrying smoke, heat and dye ([`Inflow`]).
    Inflow(Inflow),
    /// The paired side's neighbour: the axis wraps.
    Periodic,
}

/// An inflow side: fluid enters at `speed` (world units per second, along the inward normal),
/// uniformly across the side or in a parabola peaking at `speed` mid-side and zero at its
/// ends, carrying `density`, `temperature` and `dye` in (all across the side, or in `stripes`
/// equal bands with gaps between: streaklines).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inflow {
    /// Inward normal velocity (its peak for a parabola).
    pub speed: f32,
    /// The parabolic profile instead of a uniform one.
    pub parabolic: bool,
    /// Smoke density carried in.
    pub density: f32,
    /// Temperature carried in.
    pub temperature: f32,
    /// Dye (RGBA) carried in.
    pub dye: [f32; 4],
    /// 0: carried in across the whole side; n: in n bands, each followed by a gap as wide.
    pub stripes: u32,
}

/// The four sides, in the order of [`Grid::sides`].
pub const SIDE_NAMES: [&str; 4] = ["left", "right", "bottom", "top"];

impl Side {
    /// The side as its axis' [`Boundary`] gives it.
    pub fn of(boundary: Boundary) -> Side {
        match boundary {
            Boundary::Wall => Side::Wall { no_slip: false, speed: 0.0, temperature: None },
            Boundary::Open => Side::Open,
            Boundary::Periodic => Side::Periodic,
        }
    }

    /// Its kind as a scene names it.
    pub fn name(self) -> &'static str {
        match self {
            Side::Wall { no_slip: false, .. } => "wall",
            Side::Wall { no_slip: true, .. } => "no-slip",
            Side::Open => "open",
            Side::Inflow(_) => "inflow",
            Side::Periodic => "periodic",
        }
    }

    /// Its code in the grid uniform (`SIDE_*` in `common.wgsl`).
    pub fn code(self) -> u32 {
        match self {
            Side::Wall { no_slip: false, .. } => 0,
            Side::Open => 1,
            Side::Periodic => 2,
            Side::Inflow(Inflow { parabolic: false, .. }) => 3,
            Side::Wall { no_slip: true, .. } => 4,
            Side::Inflow(Inflow { parabolic: true, .. }) => 5,
        }
    }

    /// The speed the grid uniform carries: a no-slip wall's tangential one, an inflow's.
    pub fn speed(self) -> f32 {
        match self {
            Side::Wall { no_slip: true, speed, .. } | Side::Inflow(Inflow { speed, .. }) => speed,
            _ => 0.0,
        }
    }

    /// Whether the kernels must weigh faces ([`Grid::solids`]) for it: an outflow's
    /// boundary faces are unknowns of the pressure solve, an inflow's carry its velocity.
    pub fn needs_faces(self) -> bool {
        matches!(self, Side::Open | Side::Inflow(_))
    }

    /// What an inflow carries in, as the grid uniform holds it: `[density, temperature,
    /// stripes, 0]` and the dye; a wall held at a temperature `[0, temperature, 0, 1]` (the
    /// last value says it is held); zeros for other sides.
    pub fn carry(self) -> ([f32; 4], [f32; 4]) {
        match self {
            Side::Inflow(f) => ([f.density, f.temperature, f.stripes as f32, 0.0], f.dye),
            Side::Wall { temperature: Some(t), .. } => ([0.0, t, 0.0, 1.0], [0.0; 4]),
            _ => ([0.0; 4], [0.0; 4]),
        }
    }
}

/// Largest number of cells along one axis. Keeps every index of every field inside `u32`
/// (GPU kernels index with 32-bit integers).
pub const MAX_AXIS: u32 = 1 << 15;

/// Largest number of cells of one grid (2^28, i.e. 16384²): the largest dye field is then
/// 4 GiB, the most a GPU storage binding can address.
pub const MAX_CELLS: u64 = 1 << 28;

/// Smallest and largest cell side, world units. The arithmetic is `f32`: squared lengths of a
/// domain of up to [`MAX_AXIS`] cells must neither underflow nor overflow (outside about
/// 1e-20 and 1e18 splats came out empty or the flow went to infinity), with margin.
pub const H_RANGE: (f32, f32) = (1e-12, 1e12);

/// The size and shape of the simulation grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// Cells along x.
    pub nx: u32,
    /// Cells along y.
    pub ny: u32,
    /// Cell side in world units.
    pub h: f32,
    /// Boundary along x (left and right sides).
    pub boundary_x: Boundary,
    /// Boundary along y (bottom and top sides).
    pub boundary_y: Boundary,
    /// Whether obstacles cut its faces: the kernels then weight each face by its open
    /// fraction (the `u_faces` and `v_faces` fields) and a closed face takes the solid's
    /// velocity ([`solid`]).
    pub solids: bool,
    /// Whether some obstacle is held at a temperature: each step then marks the cells whose
    /// centre lies inside one (`held`), which keep its temperature and conduct heat to their
    /// neighbours.
    pub held: bool,
    /// The dye's cells per velocity cell along each axis (1 by default): the dye lives on a
    /// grid this many times finer, `dye_factor·nx × dye_factor·ny` ([`Grid::dye_dims`]).
    pub dye_factor: u32,
    /// The smoke density's cells per velocity cell along each axis (1 by default): above 1
    /// `density` lives on its own finer grid ([`Grid::density_dims`]), averaged onto the
    /// velocity's cells (`density_coarse`) where the forces and combustion read it.
    pub density_factor: u32,
    /// Left, right, bottom and top sides ([`Grid::with_sides`]); by default each is what its
    /// axis' boundary says ([`Side::of`]).
    pub sides: [Side; 4],
    /// The particle liquid's particles, when this grid is the frame of a particle scene (the
    /// length of its `positions` and `velocities`); 0 for the grid fluid.
    pub particles: u32,
}

impl Grid {
    /// A checked grid: positive sizes within [`MAX_AXIS`] and [`MAX_CELLS`], `h` within [`H_RANGE`].
    pub fn new(nx: u32, ny: u32, h: f32, boundary_x: Boundary, boundary_y: Boundary) -> Result<Grid> {
        for (key, n) in [("grid.nx", nx), ("grid.ny", ny)] {
            if n == 0 {
                return Err(Error::invalid(key, n, "the grid needs at least one cell per axis"));
            }
            if n > MAX_AXIS {
                return Err(Error::invalid(key, n, format!("at most {MAX_AXIS} cells per axis")));
            }
        }
        let cells = u64::from(nx) * u64::from(ny);
        if cells > MAX_CELLS {
            return Err(Error::OutOfMemory {
                what: format!("grid {nx}x{ny}"),
                bytes: FieldId::STATE_AND_SCRATCH.iter().map(|f| f.len_for(nx, ny) as u64 * 4).sum(),
                reason: format!("more than {MAX_CELLS} cells"),
            });
        }
        if !h.is_finite() || h <= 0.0 {
            return Err(Error::invalid("grid.h", h, "the cell size must be a finite number > 0"));
        }
        if !(H_RANGE.0..=H_RANGE.1).contains(&h) {
            return Err(Error::invalid(
                "grid.h",
                format!("{h:?}"),
                format!("the cell size must lie in [{:e}, {:e}] world units (f32 arithmetic)", H_RANGE.0, H_RANGE.1),
            ));
        }
        for (key, axis, b, n) in [("grid.nx", "x", boundary_x, nx), ("grid.ny", "y", boundary_y, ny)] {
            if b == Boundary::Periodic && n < 2 {
                return Err(Error::invalid(
                    key,
                    n,
                    format!("`params.boundary.{axis}` is periodic, and a periodic axis needs at least 2 cells"),
                ));
            }
        }
        let sides = [Side::of(boundary_x), Side::of(boundary_x), Side::of(boundary_y), Side::of(boundary_y)];
        let solids = sides.iter().any(|s| s.needs_faces());
        Ok(Grid {
            nx,
            ny,
            h,
            boundary_x,
            boundary_y,
            solids,
            held: false,
            dye_factor: 1,
            density_factor: 1,
            sides,
            particles: 0,
        })
    }

    /// This grid with its sides set one by one (left, right, bottom, top). A side of a
    /// periodic axis must be [`Side::Periodic`] and only there; speeds must be finite. Open
    /// and inflow sides turn on the face weights ([`Grid::solids`]).
    pub fn with_sides(self, sides: [Side; 4]) -> Result<Grid> {
        for (k, side) in sides.iter().enumerate() {
            let key = format!("params.boundary.{}", SIDE_NAMES[k]);
            let axis = if k < 2 { self.boundary_x } else { self.boundary_y };
            let periodic = axis == Boundary::Periodic;
            if periodic != (*side == Side::Periodic) {
                let axis_key = if k < 2 { "params.boundary.x" } else { "params.boundary.y" };
                return Err(Error::invalid(
                    key,
                    side.name(),
                    if periodic {
                        format!("`{axis_key}` is periodic: its sides wrap onto each other and take no other kind")
                    } else {
                        format!("a side is periodic only when its axis is (`{axis_key} = \"periodic\"`)")
                    },
                ));
            }
            if !side.speed().is_finite() {
                return Err(Error::invalid(format!("{key}.velocity"), side.speed(), "a speed must be finite"));
            }
            let (carry, dye) = side.carry();
            if carry.iter().chain(&dye).any(|x| !x.is_finite()) {
                return Err(Error::invalid(key, side.name(), "what an inflow carries must be finite"));
            }
        }
        let faces = sides.iter().any(|s| s.needs_faces());
        Ok(Grid { sides, solids: self.solids || faces, ..self })
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.nx as usize * self.ny as usize
    }

    /// Cells along the longer side, `max(nx, ny)`.
    pub fn longest_side(&self) -> u32 {
        self.nx.max(self.ny)
    }

    /// Domain width `nx·h`.
    pub fn width(&self) -> f32 {
        self.nx as f32 * self.h
    }

    /// Domain height `ny·h`.
    pub fn height(&self) -> f32 {
        self.ny as f32 * self.h
    }

    /// The dye's cells along x and y: `dye_factor` times the grid's.
    pub fn dye_dims(&self) -> (u32, u32) {
        (self.nx * self.dye_factor, self.ny * self.dye_factor)
    }

    /// The density's cells along x and y: `density_factor` times the grid's.
    pub fn density_dims(&self) -> (u32, u32) {
        (self.nx * self.density_factor, self.ny * self.density_factor)
    }

    /// A field's cells per velocity cell along each axis: the dye's and the density's (and
    /// their ping-pong partners') own factors, 1 for every other field.
    pub fn factor(&self, field: FieldId) -> u32 {
        match field {
            _ if field.kind() == FieldKind::Dye => self.dye_factor,
            FieldId::Density | FieldId::DensityTmp => self.density_factor,
            _ => 1,
        }
    }

    /// Number of `f32` values of a field (the dye's and the density's on their own grids).
    pub fn len(&self, field: FieldId) -> usize {
        match field.kind() {
            FieldKind::Particles => 2 * self.particles as usize,
            _ => {
                let f = self.factor(field);
                field.len_for(self.nx * f, self.ny * f)
            }
        }
    }

    /// Shape `[rows, cols]` (and `4` channels for dye) of a field, as written to `.npy`.
    pub fn shape(&self, field: FieldId) -> Vec<usize> {
        let (nx, ny) = (self.nx as usize, self.ny as usize);
        let f = self.factor(field) as usize;
        match field.kind() {
            FieldKind::Cell => vec![ny * f, nx * f],
            FieldKind::Dye => vec![ny * f, nx * f, 4],
            FieldKind::U => vec![ny, nx + 1],
            FieldKind::V => vec![ny + 1, nx],
            FieldKind::UFaces => vec![ny, nx + 1, 2],
            FieldKind::VFaces => vec![ny + 1, nx, 2],
            FieldKind::Levels => vec![self.len(field)],
            FieldKind::Table => vec![0, 4],
            FieldKind::Particles => vec![self.particles as usize, 2],
        }
    }

    /// Bilinear samples of a public field (its values `data`, laid out as [`Grid::shape`]) at
    /// world positions: one value per point, four (RGBA) for dye. Each field is interpolated
    /// between its own sample points (cell centres, or x- and y-faces for u and v). Along a
    /// periodic axis the interpolation wraps; along a wall, between the wall and the first
    /// cell centre, a cell-centred field holds its first cell's value. Points must lie in the
    /// box `[0, width] × [0, height]`: another is an error naming it, never moved silently.
    pub fn sample(&self, field: FieldId, data: &[f32], points: &[[f32; 2]]) -> Result<Vec<f32>> {
        if field.is_public() && field.samples() && data.len() != self.len(field) {
            return Err(Error::FieldLength { field: field.name(), expected: self.len(field), got: data.len() });
        }
        self.sample_with(field, points, |indices| Ok(indices.iter().map(|&k| data[k]).collect()))
    }

    /// [`Grid::sample`] reading only the values it needs: `fetch` gets the indices (into the
    /// field's flat layout, each below `len(field)`) of every value the samples interpolate,
    /// four per point and channel, and returns those values in the same order. A GPU backend
    /// copies just those from the device ([`crate::Backend::download_at`]). Same arithmetic,
    /// so the same bits as [`Grid::sample`] on the whole field.
    pub fn sample_with(
        &self,
        field: FieldId,
        points: &[[f32; 2]],
        fetch: impl FnOnce(&[usize]) -> Result<Vec<f32>>,
    ) -> Result<Vec<f32>> {
        let plan = self.sample_plan(field, points)?;
        if plan.indices.is_empty() {
            return Ok(Vec::new());
        }
        let values = fetch(&plan.indices)?;
        plan.finish(&values)
    }

    /// The first half of [`Grid::sample_with`], for a read that comes back later
    /// ([`crate::Backend::queue_download_at`]): the indices to read ([`SamplePlan::indices`])
    /// and what turns their values into the samples ([`SamplePlan::finish`]).
    pub fn sample_plan(&self, field: FieldId, points: &[[f32; 2]]) -> Result<SamplePlan> {
        if !field.is_public() || !field.samples() {
            return Err(Error::invalid("field", field.name(), "only the public fields of values can be sampled"));
        }
        // The dye and the density may live on finer grids: their cells are h / factor.
        let scale = self.factor(field);
        let (nx, ny) = ((self.nx * scale) as usize, (self.ny * scale) as usize);
        let h = self.h / scale as f32;
        // Sample points in cell units: cells and v sit half a cell in along x; cells and u along y.
        let (ox, oy, cols, rows) = match field.kind() {
            FieldKind::U => (0.0, 0.5, nx + 1, ny),
            FieldKind::V => (0.5, 0.0, nx, ny + 1),
            _ => (0.5, 0.5, nx, ny),
        };
        let channels = if field.kind() == FieldKind::Dye { 4 } else { 1 };
        // The two indices and the weight of the second along one axis.
        let axis = |c: f32, n_cells: usize, count: usize, boundary: Boundary| -> (usize, usize, f32) {
            let f = c.floor();
            let t = c - f;
            let i = f as i64;
            match boundary {
                Boundary::Periodic => {
                    let n = n_cells as i64;
                    (i.rem_euclid(n) as usize, (i + 1).rem_euclid(n) as usize, t)
                }
                _ => {
                    let last = count as i64 - 1;
                    (i.clamp(0, last) as usize, (i + 1).clamp(0, last) as usize, t)
                }
            }
        };
        // Every point's weights, and the indices of its four corners per channel.
        let mut weights = Vec::with_capacity(points.len());
        let mut indices = Vec::with_capacity(points.len() * channels * 4);
        for (k, p) in points.iter().enumerate() {
            let inside = |v: f32, hi: f32| v.is_finite() && (0.0..=hi).contains(&v);
            if !inside(p[0], self.width()) || !inside(p[1], self.height()) {
                return Err(Error::invalid(
                    format!("points[{k}]"),
                    format!("[{:?}, {:?}]", p[0], p[1]),
                    format!("a sample point must lie in the box [0, {}] x [0, {}]", self.width(), self.height()),
                ));
            }
            let (i0, i1, tx) = axis(p[0] / h - ox, nx, cols, self.boundary_x);
            let (j0, j1, ty) = axis(p[1] / h - oy, ny, rows, self.boundary_y);
            weights.push((tx, ty));
            for c in 0..channels {
                let at = |i: usize, j: usize| (j * cols + i) * channels + c;
                indices.extend([at(i0, j0), at(i1, j0), at(i0, j1), at(i1, j1)]);
            }
        }
        Ok(SamplePlan { field, channels, weights, indices })
    }

    /// Bytes every field takes when all are allocated ([`GridFields::all`]); a scene takes
    /// what [`GridFields::declare`] says, often less.
    pub fn bytes(&self) -> u64 {
        FieldId::STATE_AND_SCRATCH.iter().map(|f| self.len(*f) as u64 * 4).sum()
    }

    /// [`Grid::uniform`] as the bytes a schedule carries ([`crate::Schedule::builder`]).
    pub fn uniform_bytes(&self) -> [u8; crate::ir::schedule::UNIFORM_BYTES] {
        let mut bytes = [0; crate::ir::schedule::UNIFORM_BYTES];
        bytes.copy_from_slice(bytemuck::bytes_of(&self.uniform()));
        bytes
    }

    /// The uniform block every kernel sees.
    pub fn uniform(&self) -> uniforms::GridUniform {
        uniforms::GridUniform {
            nx: self.nx,
            ny: self.ny,
            h: self.h,
            inv_h: 1.0 / self.h,
            boundary_x: self.boundary_x.code(),
            boundary_y: self.boundary_y.code(),
            zero: 0,
            solids: u32::from(self.solids),
            sides: self.sides.map(Side::code),
            side_speed: self.sides.map(Side::speed),
            side_carry: self.sides.map(|s| s.carry().0),
            side_dye: self.sides.map(|s| s.carry().1),
        }
    }
}

/// Where a field's samples sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// One value per cell centre.
    Cell,
    /// Four values (RGBA) per cell centre.
    Dye,
    /// x-velocity on x-faces.
    U,
    /// y-velocity on y-faces.
    V,
    /// Two values per x-face: its open fraction and the solid's x-velocity there.
    UFaces,
    /// Two values per y-face: its open fraction and the solid's y-velocity there.
    VFaces,
    /// A scene's obstacle table ([`solid::table`]): four values per row, as many rows as the
    /// scene's obstacles need (none on a grid alone).
    Table,
    /// The packed multigrid hierarchy ([`crate::grid::pressure::multigrid`]): a flat array.
    Levels,
    /// Two values (x, y) per particle of the particle liquid ([`Grid::particles`]).
    Particles,
}

macro_rules! fields {
    ($( $(#[$m:meta])* $id:ident = $name:literal, $kind:ident, $public:literal; )*) => {
        /// A named field buffer. The first nine are the simulation state that users read;
        /// the rest are scratch buffers the schedule ping-pongs with.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FieldId { $( $(#[$m])* $id, )* }

        impl FieldId {
            /// Every field, state and scratch.
            pub const STATE_AND_SCRATCH: &'static [FieldId] = &[$(FieldId::$id,)*];

            /// The name used by the CLI (`--dump`), labels (`fluid.<name>`) and `.npy` files.
            pub fn name(self) -> &'static str {
                match self { $(FieldId::$id => $name,)* }
            }

            /// Where the samples sit.
            pub fn kind(self) -> FieldKind {
                match self { $(FieldId::$id => FieldKind::$kind,)* }
            }

            /// Whether users may read it (it is part of the documented state).
            pub fn is_public(self) -> bool {
                match self { $(FieldId::$id => $public,)* }
            }

            /// Whether it is part of the simulation's state (what a checkpoint saves), rather
            /// than scratch a step overwrites or a read derives.
            pub fn is_state(self) -> bool {
                matches!(
                    self,
                    FieldId::U
                        | FieldId::V
                        | FieldId::Pressure
                        | FieldId::PressureLo
                        | FieldId::Density
                        | FieldId::Temperature
                        | FieldId::Dye
                        | FieldId::Fuel
                        | FieldId::Obstacles
                )
            }
        }
    };
}

fields! {
    /// x-velocity on x-faces.
    U = "u", U, true;
    /// y-velocity on y-faces.
    V = "v", V, true;
    /// Pressure of the last projection (scaled so that `u -= dt ∇p`, unit density). With walls or
    /// periodic axes all round, only its differences are defined: two backends (or solvers) may
    /// hold it offset by a constant, so compare `p − mean(p)`.
    Pressure = "pressure", Cell, true;
    /// Divergence of the velocity that entered the last projection (the Poisson right-hand side).
    Divergence = "divergence", Cell, true;
    /// Smoke density.
    Density = "density", Cell, true;
    /// Temperature (absolute; relaxes towards the ambient temperature).
    Temperature = "temperature", Cell, true;
    /// RGBA dye.
    Dye = "dye", Dye, true;
    /// Fuel: burns above the ignition temperature into heat and smoke (`params.combustion`).
    Fuel = "fuel", Cell, true;
    /// Solid fraction of each cell: 1 − the mean open fraction of its four faces (1 inside an
    /// obstacle, 0 in open fluid). Only with obstacles; rasterised by every step.
    Solid = "solid", Cell, true;
    /// Per x-face: its open fraction (the part of it outside every obstacle) and the solid's
    /// x-velocity there. Only with obstacles.
    UFaces = "u_faces", UFaces, true;
    /// Per y-face: its open fraction and the solid's y-velocity there. Only with obstacles.
    VFaces = "v_faces", VFaces, true;
    /// The obstacles as the device reads them ([`solid::table`]): state, so a checkpoint
    /// keeps where they stand and how they move.
    Obstacles = "obstacles", Table, false;
    /// Vorticity ω = ∂v/∂x − ∂u/∂y at cell centres. `Simulation`'s reads compute it from the
    /// current velocity; in a backend it holds what the last step used for vorticity
    /// confinement (the velocity before that step's forces; nothing when confinement is off).
    Curl = "curl", Cell, true;
    /// Ping-pong partner of `u`.
    UTmp = "u_tmp", U, false;
    /// Ping-pong partner of `v`.
    VTmp = "v_tmp", V, false;
    /// Second ping-pong partner of `u` (viscous diffusion keeps the right-hand side in `u`).
    UTmp2 = "u_tmp2", U, false;
    /// Second ping-pong partner of `v`.
    VTmp2 = "v_tmp2", V, false;
    /// Ping-pong partner of `pressure`.
    PressureTmp = "pressure_tmp", Cell, false;
    /// The low part of the pressure in double-float: the pressure is `pressure + pressure_lo`,
    /// with `|pressure_lo|` at most half an ulp of `pressure`. The multigrid and MGPCG solvers
    /// write it (they converge below the resolution of an f32 pressure); the other solvers leave
    /// it zero, and every consumer of the pressure reads both.
    PressureLo = "pressure_lo", Cell, false;
    /// Ping-pong partner of `density`.
    DensityTmp = "density_tmp", Cell, false;
    /// With a finer density ([`Grid::density_factor`]), its mean over each velocity cell: what
    /// buoyancy, surface tension, combustion and the turbulence's mask read. Rebuilt by every
    /// step from `density`.
    DensityCoarse = "density_coarse", Cell, false;
    /// Ping-pong partner of `temperature`.
    TemperatureTmp = "temperature_tmp", Cell, false;
    /// Ping-pong partner of `dye`.
    DyeTmp = "dye_tmp", Dye, false;
    /// Ping-pong partner of `fuel`.
    FuelTmp = "fuel_tmp", Cell, false;
    /// The step's divergence source from combustion (volume made per second per unit area),
    /// which the projection leaves in the velocity. Only with `params.combustion.expansion`.
    Expansion = "expansion", Cell, false;
    /// Cell scratch for diagnostics (the divergence after projection, residuals).
    Scratch = "scratch", Cell, false;
    /// The multigrid solver's levels, packed (see [`crate::grid::pressure::multigrid`]).
    Multigrid = "multigrid", Levels, false;
    /// With obstacles, the open fractions of every multigrid level's faces (each cell's right
    /// and top face), laid out like the levels: the weights of their stencils.
    MgFaces = "mg_faces", Levels, false;
    /// The velocity's round trip (forward, then back) for MacCormack and BFECC advection: u.
    UBack = "u_back", U, false;
    /// The velocity's round trip: v.
    VBack = "v_back", V, false;
    /// A scalar's round trip (density, temperature and fuel in turn).
    Back = "back", Cell, false;
    /// The dye's round trip.
    DyeBack = "dye_back", Dye, false;
    /// 1 in the cells whose centre lies inside an obstacle held at a temperature, else 0
    /// (rasterised with the obstacles each step). Only when some obstacle is held.
    Held = "held", Cell, false;
    /// The particle liquid's positions (world units), one `[x, y]` per particle, in the order
    /// of the last step's sort. Only in a particle scene.
    Positions = "positions", Particles, true;
    /// The particle liquid's velocities (world units per second), in the positions' order.
    Velocities = "velocities", Particles, true;
}

impl FieldId {
    /// The fields users may read, in documentation order.
    pub fn public() -> impl Iterator<Item = FieldId> {
        FieldId::STATE_AND_SCRATCH.iter().copied().filter(|f| f.is_public())
    }

    /// Look up a public field by its name.
    pub fn parse(name: &str) -> Result<FieldId> {
        FieldId::public().find(|f| f.name() == name).ok_or_else(|| Error::UnknownField {
            name: name.to_string(),
            known: FieldId::public().map(FieldId::name).collect::<Vec<_>>().join(", "),
        })
    }

    /// Number of `f32` values for an `nx × ny` grid.
    pub fn len_for(self, nx: u32, ny: u32) -> usize {
        let (nx, ny) = (nx as usize, ny as usize);
        match self.kind() {
            FieldKind::Cell => nx * ny,
            FieldKind::Dye => 4 * nx * ny,
            FieldKind::U => (nx + 1) * ny,
            FieldKind::V => nx * (ny + 1),
            FieldKind::UFaces => 2 * (nx + 1) * ny,
            FieldKind::VFaces => 2 * nx * (ny + 1),
            FieldKind::Levels => pressure::layout::buffer_len(nx as u32, ny as u32),
            FieldKind::Table | FieldKind::Particles => 0,
        }
    }

    /// Whether it holds one value (or one RGBA colour) per sample point, which
    /// [`Grid::sample`] interpolates: not the face geometry, the levels or a table.
    pub fn samples(self) -> bool {
        matches!(self.kind(), FieldKind::Cell | FieldKind::Dye | FieldKind::U | FieldKind::V)
    }

    /// Position of the dense index in [`FieldId::STATE_AND_SCRATCH`] (for backends' buffer tables).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Number of field ids.
    pub const COUNT: usize = FieldId::STATE_AND_SCRATCH.len();
}

/// Bilinear samples waiting for their values ([`Grid::sample_plan`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SamplePlan {
    field: FieldId,
    channels: usize,
    /// Each point's weights of its second corner along x and along y.
    weights: Vec<(f32, f32)>,
    indices: Vec<usize>,
}

impl SamplePlan {
    /// The field sampled.
    pub fn field(&self) -> FieldId {
        self.field
    }

    /// The indices (into the field's flat layout) whose values [`SamplePlan::finish`] needs,
    /// four per point and channel.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The samples from the values at [`SamplePlan::indices`], in that order: one per point,
    /// four (RGBA) for dye.
    pub fn finish(&self, values: &[f32]) -> Result<Vec<f32>> {
        if values.len() != self.indices.len() {
            return Err(Error::FieldLength {
                field: self.field.name(),
                expected: self.indices.len(),
                got: values.len(),
            });
        }
        let mut out = Vec::with_capacity(self.weights.len() * self.channels);
        for (corners, &(tx, ty)) in values.chunks_exact(4 * self.channels).zip(&self.weights) {
            for c in corners.chunks_exact(4) {
                let bottom = c[0] + tx * (c[1] - c[0]);
                let top = c[2] + tx * (c[3] - c[2]);
                out.push(bottom + ty * (top - bottom));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_match_lengths() {
        let g = Grid::new(5, 3, 0.5, Boundary::Wall, Boundary::Periodic).expect("grid");
        for f in FieldId::STATE_AND_SCRATCH {
            assert_eq!(g.shape(*f).iter().product::<usize>(), g.len(*f), "{}", f.name());
        }
        assert_eq!(g.shape(FieldId::U), vec![3, 6]);
        assert_eq!(g.shape(FieldId::V), vec![4, 5]);
        assert_eq!(g.width(), 2.5);
    }

    /// A field's values of `f(x, y)` at its own sample points (world units).
    fn fill(g: &Grid, field: FieldId, f: impl Fn(f32, f32) -> f32) -> Vec<f32> {
        let (ox, oy) = match field.kind() {
            FieldKind::U => (0.0, 0.5),
            FieldKind::V => (0.5, 0.0),
            _ => (0.5, 0.5),
        };
        let shape = g.shape(field);
        let mut out = Vec::new();
        for j in 0..shape[0] {
            for i in 0..shape[1] {
                let v = f((i as f32 + ox) * g.h, (j as f32 + oy) * g.h);
                if field.kind() == FieldKind::Dye {
                    out.extend([v, 2.0 * v, -v, 1.0]);
                } else {
                    out.push(v);
                }
            }
        }
        out
    }

    #[test]
    fn samples_reproduce_a_linear_field_between_each_fields_own_points() {
        let g = Grid::new(7, 5, 0.25, Boundary::Wall, Boundary::Wall).expect("grid");
        let lin = |x: f32, y: f32| 1.0 + 3.0 * x - 2.0 * y;
        // Inside the cell centres' hull every field is exact; u and v also out to their walls.
        let points = [[0.2, 0.6], [1.01, 0.37], [0.5, 0.5], [1.6, 1.1]];
        for field in [FieldId::U, FieldId::V, FieldId::Density, FieldId::Dye] {
            let data = fill(&g, field, lin);
            let got = g.sample(field, &data, &points).expect("sample");
            let per = if field == FieldId::Dye { 4 } else { 1 };
            assert_eq!(got.len(), points.len() * per);
            for (k, p) in points.iter().enumerate() {
                let want = lin(p[0], p[1]);
                assert!((got[k * per] - want).abs() < 1e-5, "{} at {p:?}: {} vs {want}", field.name(), got[k * per]);
                if per == 4 {
                    assert!((got[k * 4 + 1] - 2.0 * want).abs() < 1e-5 && got[k * 4 + 3] == 1.0, "dye channels");
                }
            }
        }
        // u along x reaches the walls exactly (its faces lie on them); a cell-centred field
        // holds its first cell's value between the wall and that centre.
        let u = fill(&g, FieldId::U, lin);
        assert!((g.sample(FieldId::U, &u, &[[0.0, 0.6]]).expect("u")[0] - lin(0.0, 0.6)).abs() < 1e-5);
        let d = fill(&g, FieldId::Density, lin);
        let edge = g.sample(FieldId::Density, &d, &[[0.0, 0.625]]).expect("density")[0];
        assert!((edge - lin(0.125, 0.625)).abs() < 1e-5, "{edge}");
    }

    #[test]
    fn samples_wrap_along_a_periodic_axis() {
        let g = Grid::new(8, 4, 0.5, Boundary::Periodic, Boundary::Wall).expect("grid");
        let mut d = vec![0.0; g.len(FieldId::Density)];
        // Row 1: the first cell 10, the last 30; at x = 0 the wrap averages them.
        d[8] = 10.0;
        d[15] = 30.0;
        let got = g.sample(FieldId::Density, &d, &[[0.0, 0.75], [4.0, 0.75]]).expect("sample");
        assert_eq!(got, vec![20.0, 20.0]);
        // u on a periodic x axis: face nx is face 0.
        let mut u = vec![0.0; g.len(FieldId::U)];
        u[9 + 7] = 4.0; // row 1, face 7
        let got = g.sample(FieldId::U, &u, &[[3.75, 0.75]]).expect("sample");
        assert_eq!(got, vec![2.0]);
    }

    #[test]
    fn bad_samples_are_refused_by_name() {
        let g = Grid::new(4, 4, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let d = vec![0.0; g.len(FieldId::Density)];
        for (p, needle) in [([4.5, 1.0], "points[1]"), ([f32::NAN, 1.0], "NaN"), ([1.0, -0.1], "-0.1")] {
            let e = g.sample(FieldId::Density, &d, &[[1.0, 1.0], p]).expect_err("outside");
            assert!(e.to_string().contains(needle) && e.to_string().contains("[0, 4]"), "{e}");
        }
        assert!(g.sample(FieldId::Density, &d[1..], &[[1.0, 1.0]]).is_err(), "wrong length");
        let levels = vec![0.0; g.len(FieldId::Multigrid)];
        assert!(g.sample(FieldId::Multigrid, &levels, &[[1.0, 1.0]]).is_err(), "a private field");
    }

    #[test]
    fn bad_grids_are_refused() {
        assert!(Grid::new(0, 4, 1.0, Boundary::Wall, Boundary::Wall).is_err());
        assert!(Grid::new(4, 4, f32::NAN, Boundary::Wall, Boundary::Wall).is_err());
        assert!(Grid::new(4, 4, -1.0, Boundary::Wall, Boundary::Wall).is_err());
        assert!(Grid::new(MAX_AXIS, MAX_AXIS, 1.0, Boundary::Wall, Boundary::Wall).is_err());
        assert!(Grid::new(1, 4, 1.0, Boundary::Periodic, Boundary::Wall).is_err());
    }

    #[test]
    fn field_names_round_trip() {
        for f in FieldId::public() {
            assert_eq!(FieldId::parse(f.name()).expect("known"), f);
        }
        assert!(FieldId::parse("u_tmp").is_err());
        assert_eq!(FieldId::public().count(), 14);
    }
}
