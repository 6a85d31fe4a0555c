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
pub(crate) mod fields;
pub(crate) mod initial;
pub mod kernels;
pub(crate) mod model;
pub mod params;
#[cfg(test)]
#[path = "tests/plans.rs"]
mod plans;
pub mod pressure;
pub mod step;
pub mod uniforms;

pub use fields::GridFields;

pub use crate::frame::{Boundary, Frame, Inflow, Lattice, SIDE_NAMES, SamplePlan, Side};
use swirly_ir::{Error, Result};

/// The grid fluid's lattice: its [`Frame`] (the box, its sides; the grid derefs to it) and
/// what the grid model lays on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// The box.
    pub frame: Frame,
    /// Whether obstacles cut its faces, or open and inflow sides weigh them: the kernels then
    /// weight each face by its open fraction (the `u_faces` and `v_faces` fields) and a closed
    /// face takes the solid's velocity ([`crate::frame::solid`]).
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
}

impl std::ops::Deref for Grid {
    type Target = Frame;
    fn deref(&self) -> &Frame {
        &self.frame
    }
}

impl Grid {
    /// A checked grid ([`Frame::new`]) with every side its axis' kind, no obstacles and fields
    /// on the box's own cells.
    pub fn new(nx: u32, ny: u32, h: f32, boundary_x: Boundary, boundary_y: Boundary) -> Result<Grid> {
        Ok(Grid::on(Frame::new(nx, ny, h, boundary_x, boundary_y)?))
    }

    /// The grid on `frame`: no obstacles, fields on its own cells; open and inflow sides turn
    /// on the face weights ([`Grid::solids`]).
    pub fn on(frame: Frame) -> Grid {
        Grid { frame, solids: frame.needs_faces(), held: false, dye_factor: 1, density_factor: 1 }
    }

    /// This grid with its sides set one by one (left, right, bottom, top; see
    /// [`Frame::with_sides`]). Open and inflow sides turn on the face weights
    /// ([`Grid::solids`]).
    pub fn with_sides(self, sides: [Side; 4]) -> Result<Grid> {
        let frame = self.frame.with_sides(sides)?;
        Ok(Grid { frame, solids: self.solids || frame.needs_faces(), ..self })
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
        let f = self.factor(field);
        field.len_for(self.nx * f, self.ny * f)
    }

    /// Shape `[rows, cols]` (and `4` channels for dye) of a field, as written to `.npy`.
    pub fn shape(&self, field: FieldId) -> Vec<usize> {
        let (nx, ny) = (self.nx as usize, self.ny as usize);
        let f = self.factor(field) as usize;
        if field.is_vacant() {
            return vec![0];
        }
        match field.kind() {
            FieldKind::Cell => vec![ny * f, nx * f],
            FieldKind::Dye => vec![ny * f, nx * f, 4],
            FieldKind::U => vec![ny, nx + 1],
            FieldKind::V => vec![ny + 1, nx],
            FieldKind::UFaces => vec![ny, nx + 1, 2],
            FieldKind::VFaces => vec![ny + 1, nx, 2],
            FieldKind::Levels => vec![self.len(field)],
            FieldKind::Table => vec![0, 4],
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
    /// copies just those from the device ([`swirly_ir::Backend::download_at`]). Same arithmetic,
    /// so the same bits as [`Grid::sample`] on the whole field.
    pub(crate) fn sample_with(
        &self,
        field: FieldId,
        points: &[[f32; 2]],
        fetch: impl FnOnce(&[usize]) -> Result<Vec<f32>>,
    ) -> Result<Vec<f32>> {
        self.sample_plan(field, points)?.read(fetch)
    }

    /// The first half of [`Grid::sample_with`] ([`Frame::sample_plan`] on the field's lattice).
    pub(crate) fn sample_plan(&self, field: FieldId, points: &[[f32; 2]]) -> Result<SamplePlan> {
        if !field.is_public() || !field.samples() {
            return Err(Error::invalid("field", field.name(), "only the public fields of values can be sampled"));
        }
        self.frame.sample_plan(field.name(), self.lattice(field), field.channels(), points)
    }

    /// Where `field`'s values sit in the frame.
    pub fn lattice(&self, field: FieldId) -> Lattice {
        match field.kind() {
            FieldKind::Cell | FieldKind::Dye => Lattice::Cells { factor: self.factor(field) },
            FieldKind::U | FieldKind::UFaces => Lattice::XFaces,
            FieldKind::V | FieldKind::VFaces => Lattice::YFaces,
            FieldKind::Levels | FieldKind::Table => Lattice::Values { count: self.len(field) as u64 },
        }
    }

    /// Bytes every field takes when all are allocated ([`GridFields::all`]); a scene takes
    /// what [`GridFields::declare`] says, often less.
    pub fn bytes(&self) -> u64 {
        FieldId::STATE_AND_SCRATCH.iter().map(|f| self.len(*f) as u64 * 4).sum()
    }

    /// The uniform every kernel sees ([`Frame::uniform`] with this grid's face weights).
    pub fn uniform(&self) -> crate::frame::uniform::GridUniform {
        self.frame.uniform(self.solids)
    }

    /// [`Grid::uniform`] as the bytes a schedule carries.
    pub fn uniform_bytes(&self) -> [u8; swirly_ir::schedule::UNIFORM_BYTES] {
        self.frame.uniform_bytes(self.solids)
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
    /// A scene's obstacle table ([`crate::frame::solid::table`]): four values per row, as many rows as the
    /// scene's obstacles need (none on a grid alone).
    Table,
    /// The packed multigrid hierarchy ([`crate::grid::pressure::multigrid`]): a flat array.
    Levels,
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
            pub(crate) fn is_state(self) -> bool {
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
    /// The obstacles as the device reads them ([`crate::frame::solid::table`]): state, so a checkpoint
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
    /// Always empty: what a dispatch binds to the read slots it leaves unused (a channel
    /// `advect_channels` does not carry this time).
    Vacant = "vacant", Cell, false;
    /// Always empty: bound to the first write slot a dispatch leaves unused (a write slot
    /// takes a resource of its own).
    VacantOut0 = "vacant_out0", Cell, false;
    /// Always empty: the second unused write slot's.
    VacantOut1 = "vacant_out1", Cell, false;
    /// Always empty: the third unused write slot's.
    VacantOut2 = "vacant_out2", Cell, false;
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
    pub(crate) fn len_for(self, nx: u32, ny: u32) -> usize {
        let (nx, ny) = (nx as usize, ny as usize);
        if self.is_vacant() {
            return 0;
        }
        match self.kind() {
            FieldKind::Cell => nx * ny,
            FieldKind::Dye => 4 * nx * ny,
            FieldKind::U => (nx + 1) * ny,
            FieldKind::V => nx * (ny + 1),
            FieldKind::UFaces => 2 * (nx + 1) * ny,
            FieldKind::VFaces => 2 * nx * (ny + 1),
            FieldKind::Levels => pressure::layout::buffer_len(nx as u32, ny as u32),
            FieldKind::Table => 0,
        }
    }

    /// The field a ping-pong partner belongs to (`density` for `density_tmp`), else itself:
    /// the partner is declared where its field is carried.
    pub fn owner(self) -> FieldId {
        match self {
            FieldId::DensityTmp => FieldId::Density,
            FieldId::TemperatureTmp => FieldId::Temperature,
            FieldId::DyeTmp => FieldId::Dye,
            FieldId::FuelTmp => FieldId::Fuel,
            f => f,
        }
    }

    /// Whether it is one of the always empty resources bound to unused slots
    /// ([`FieldId::Vacant`] and the write slots' three).
    pub fn is_vacant(self) -> bool {
        matches!(self, FieldId::Vacant | FieldId::VacantOut0 | FieldId::VacantOut1 | FieldId::VacantOut2)
    }

    /// Values per sample point: 4 for the dye (RGBA), 2 for the faces' geometry and the
    /// particles' vectors, else 1.
    pub fn channels(self) -> u32 {
        match self.kind() {
            FieldKind::Dye => 4,
            FieldKind::UFaces | FieldKind::VFaces => 2,
            FieldKind::Table => 4,
            _ => 1,
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

impl crate::model::FieldName for FieldId {
    fn field_name(&self) -> &str {
        self.name()
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
        assert!(
            Grid::new(crate::frame::MAX_AXIS, crate::frame::MAX_AXIS, 1.0, Boundary::Wall, Boundary::Wall).is_err()
        );
        assert!(Grid::new(1, 4, 1.0, Boundary::Periodic, Boundary::Wall).is_err());
    }

    #[test]
    fn field_names_round_trip() {
        for f in FieldId::public() {
            assert_eq!(FieldId::parse(f.name()).expect("known"), f);
        }
        assert!(FieldId::parse("u_tmp").is_err());
        // The grid's own: a particle liquid names its positions and velocities itself.
        assert_eq!(FieldId::public().count(), 12);
    }
}
