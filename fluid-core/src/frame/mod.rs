//! The frame every model lives in: the box (`nx × ny` square cells of side `h`, origin
//! bottom-left, `y` up), its four sides, the solids in it ([`solid`], `solid_set`), the
//! uniform every kernel reads ([`uniform`]) and bilinear samples of a field on one of the
//! box's lattices ([`Lattice`]). Below the models: the grid fluid and the particle liquid
//! share it, and nothing here knows either.

pub mod solid;
pub(crate) mod solid_set;
pub mod uniform;

use serde::{Deserialize, Serialize};

use swirly_ir::{Error, Result};

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

/// [`Boundary::code`] of a periodic axis (`BOUNDARY_PERIODIC` in the kernels).
pub const BOUNDARY_PERIODIC: u32 = 2;
/// [`Boundary::code`] of an axis with open sides.
pub const BOUNDARY_OPEN: u32 = 1;

impl Boundary {
    /// The code used in GPU uniforms.
    pub fn code(self) -> u32 {
        match self {
            Boundary::Wall => 0,
            Boundary::Open => BOUNDARY_OPEN,
            Boundary::Periodic => BOUNDARY_PERIODIC,
        }
    }

    /// Decode a uniform code.
    pub fn from_code(code: u32) -> Boundary {
        match code {
            BOUNDARY_OPEN => Boundary::Open,
            BOUNDARY_PERIODIC => Boundary::Periodic,
            _ => Boundary::Wall,
        }
    }
}

/// [`Side::code`] of an open side (`SIDE_OPEN` in the kernels).
pub const SIDE_OPEN: u32 = 1;
/// [`Side::code`] of a side of a periodic axis.
pub const SIDE_PERIODIC: u32 = 2;
/// [`Side::code`] of an inflow with a uniform profile.
pub const SIDE_INFLOW: u32 = 3;
/// [`Side::code`] of a no-slip wall.
pub const SIDE_NO_SLIP: u32 = 4;
/// [`Side::code`] of an inflow with a parabolic profile.
pub const SIDE_INFLOW_PARABOLIC: u32 = 5;

/// One side of the box as the velocity sees it. The sides of a periodic axis are
/// [`Side::Periodic`]; [`Frame::with_sides`] sets the others.
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

/// The four sides, in the order of [`Frame::sides`].
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

    /// Its code in the grid uniform ([`SIDE_OPEN`] and its siblings; a free-slip wall is 0).
    pub fn code(self) -> u32 {
        match self {
            Side::Wall { no_slip: false, .. } => 0,
            Side::Open => SIDE_OPEN,
            Side::Periodic => SIDE_PERIODIC,
            Side::Inflow(Inflow { parabolic: false, .. }) => SIDE_INFLOW,
            Side::Wall { no_slip: true, .. } => SIDE_NO_SLIP,
            Side::Inflow(Inflow { parabolic: true, .. }) => SIDE_INFLOW_PARABOLIC,
        }
    }

    /// The speed the grid uniform carries: a no-slip wall's tangential one, an inflow's.
    pub fn speed(self) -> f32 {
        match self {
            Side::Wall { no_slip: true, speed, .. } | Side::Inflow(Inflow { speed, .. }) => speed,
            _ => 0.0,
        }
    }

    /// Whether the kernels must weigh faces (the grid's `solids`) for it: an outflow's
    /// boundary faces are unknowns of the pressure solve, an inflow's carry its velocity.
    pub(crate) fn needs_faces(self) -> bool {
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

/// Refuse NaN and infinities, naming the key.
pub fn finite(key: &str, x: f32) -> Result<()> {
    if x.is_finite() { Ok(()) } else { Err(Error::invalid(key, x, "must be a finite number")) }
}

/// The box a model lives in: its cells and their side, what each axis does at its ends, and
/// each side's kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
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
    /// Left, right, bottom and top sides ([`Frame::with_sides`]); by default each is what its
    /// axis' boundary says ([`Side::of`]).
    pub sides: [Side; 4],
}

impl Frame {
    /// A checked box: positive sizes within [`MAX_AXIS`] and [`MAX_CELLS`], `h` within
    /// [`H_RANGE`], at least two cells along a periodic axis.
    pub fn new(nx: u32, ny: u32, h: f32, boundary_x: Boundary, boundary_y: Boundary) -> Result<Frame> {
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
                bytes: 4 * cells,
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
        Ok(Frame { nx, ny, h, boundary_x, boundary_y, sides })
    }

    /// This box with its sides set one by one (left, right, bottom, top). A side of a
    /// periodic axis must be [`Side::Periodic`] and only there; speeds and what an inflow
    /// carries must be finite.
    pub fn with_sides(self, sides: [Side; 4]) -> Result<Frame> {
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
        Ok(Frame { sides, ..self })
    }

    /// Whether some side needs the face kernels' weighted paths ([`Side::needs_faces`]).
    pub(crate) fn needs_faces(&self) -> bool {
        self.sides.iter().any(|s| s.needs_faces())
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.nx as usize * self.ny as usize
    }

    /// Cells along the longer side, `max(nx, ny)`.
    pub(crate) fn longest_side(&self) -> u32 {
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

    /// The uniform block every kernel sees (`solids`: whether the face kernels weigh faces).
    pub fn uniform(&self, solids: bool) -> uniform::GridUniform {
        uniform::GridUniform {
            nx: self.nx,
            ny: self.ny,
            h: self.h,
            inv_h: 1.0 / self.h,
            boundary_x: self.boundary_x.code(),
            boundary_y: self.boundary_y.code(),
            zero: 0,
            solids: u32::from(solids),
            sides: self.sides.map(Side::code),
            side_speed: self.sides.map(Side::speed),
            side_carry: self.sides.map(|s| s.carry().0),
            side_dye: self.sides.map(|s| s.carry().1),
        }
    }

    /// [`Frame::uniform`] as the bytes a schedule carries ([`swirly_ir::Schedule::builder`]).
    pub fn uniform_bytes(&self, solids: bool) -> [u8; swirly_ir::schedule::UNIFORM_BYTES] {
        let mut bytes = [0; swirly_ir::schedule::UNIFORM_BYTES];
        bytes.copy_from_slice(bytemuck::bytes_of(&self.uniform(solids)));
        bytes
    }

    /// The values of a field on `lattice` with `channels` values per sample point: how many
    /// and the `.npy` shape `[rows, cols, channels]` (`channels` left out when 1).
    pub fn shape(&self, lattice: Lattice, channels: u32) -> Vec<usize> {
        let (nx, ny) = (self.nx as usize, self.ny as usize);
        let mut shape = match lattice {
            Lattice::Cells { factor } => vec![ny * factor as usize, nx * factor as usize],
            Lattice::XFaces => vec![ny, nx + 1],
            Lattice::YFaces => vec![ny + 1, nx],
            Lattice::Points { count } => vec![count as usize],
            Lattice::Values { count } => return vec![count as usize],
        };
        if channels > 1 {
            shape.push(channels as usize);
        }
        shape
    }

    /// The first half of a bilinear sample of the field `name`, on `lattice` with `channels`
    /// values per point, at world positions (for a read that comes back later,
    /// [`swirly_ir::Backend::queue_download_at`]): the indices to read ([`SamplePlan::indices`])
    /// and what turns their values into the samples ([`SamplePlan::finish`]). Each field is
    /// interpolated between its own sample points (cell centres of its lattice, or x- and
    /// y-faces). Along a periodic axis the interpolation wraps; along a wall, between the wall
    /// and the first cell centre, a cell-centred field holds its first cell's value. Points
    /// must lie in the box `[0, width] × [0, height]`: another is an error naming it, never
    /// moved silently. A lattice without places in the box (points, plain values) is refused.
    pub(crate) fn sample_plan(
        &self,
        name: &'static str,
        lattice: Lattice,
        channels: u32,
        points: &[[f32; 2]],
    ) -> Result<SamplePlan> {
        let scale = match lattice {
            Lattice::Cells { factor } => factor,
            Lattice::XFaces | Lattice::YFaces => 1,
            Lattice::Points { .. } | Lattice::Values { .. } => {
                return Err(Error::invalid("field", name, "only the public fields of values can be sampled"));
            }
        };
        // The dye and the density may live on finer grids: their cells are h / factor.
        let (nx, ny) = ((self.nx * scale) as usize, (self.ny * scale) as usize);
        let h = self.h / scale as f32;
        // Sample points in cell units: cells and v sit half a cell in along x; cells and u along y.
        let (ox, oy, cols, rows) = match lattice {
            Lattice::XFaces => (0.0, 0.5, nx + 1, ny),
            Lattice::YFaces => (0.5, 0.0, nx, ny + 1),
            _ => (0.5, 0.5, nx, ny),
        };
        let channels = channels as usize;
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
        Ok(SamplePlan { field: name, channels, weights, indices })
    }
}

/// Where a field's values sit in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lattice {
    /// One sample per cell of a grid `factor` times finer than the box's along each axis
    /// (1: the box's own cells), at cell centres.
    Cells {
        /// Cells per box cell along each axis.
        factor: u32,
    },
    /// One sample per x-face of the box's cells: `(nx + 1) × ny`.
    XFaces,
    /// One sample per y-face: `nx × (ny + 1)`.
    YFaces,
    /// `count` points that move through the box (a liquid's particles), in a list.
    Points {
        /// Points live now.
        count: u32,
    },
    /// `count` values with no place in the box (a table, a solver's levels).
    Values {
        /// How many.
        count: u64,
    },
}

impl Lattice {
    /// Sample points on `frame`.
    pub fn points(self, frame: &Frame) -> usize {
        let (nx, ny) = (frame.nx as usize, frame.ny as usize);
        match self {
            Lattice::Cells { factor } => nx * ny * (factor as usize).pow(2),
            Lattice::XFaces => (nx + 1) * ny,
            Lattice::YFaces => nx * (ny + 1),
            Lattice::Points { count } => count as usize,
            Lattice::Values { count } => count as usize,
        }
    }
}

/// Bilinear samples waiting for their values (`Frame::sample_plan`).
#[derive(Clone, Debug, PartialEq)]
pub struct SamplePlan {
    field: &'static str,
    channels: usize,
    /// Each point's weights of its second corner along x and along y.
    weights: Vec<(f32, f32)>,
    indices: Vec<usize>,
}

impl SamplePlan {
    /// The field sampled.
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// The indices (into the field's flat layout) whose values [`SamplePlan::finish`] needs,
    /// four per point and channel.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The samples from the values at [`SamplePlan::indices`], in that order: one per point
    /// and channel.
    pub fn finish(&self, values: &[f32]) -> Result<Vec<f32>> {
        if values.len() != self.indices.len() {
            return Err(Error::FieldLength { field: self.field, expected: self.indices.len(), got: values.len() });
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

    /// The samples read with `fetch`, which gets [`SamplePlan::indices`] and returns their
    /// values in that order (none read for no points).
    pub fn read(&self, fetch: impl FnOnce(&[usize]) -> Result<Vec<f32>>) -> Result<Vec<f32>> {
        if self.indices.is_empty() {
            return Ok(Vec::new());
        }
        self.finish(&fetch(&self.indices)?)
    }
}
