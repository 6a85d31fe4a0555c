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

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// What happens at the two ends of one axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Boundary {
    /// Solid wall: no flow through it (normal velocity zero), free slip along it.
    #[default]
    Wall,
    /// Outflow: fluid may leave but does not wrap. Not supported yet (returns `Unsupported`).
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
                nx,
                ny,
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
                format!("the cell size must lie in [{:?}, {:?}] world units (f32 arithmetic)", H_RANGE.0, H_RANGE.1),
            ));
        }
        for (key, b, n) in [("grid.boundary_x", boundary_x, nx), ("grid.boundary_y", boundary_y, ny)] {
            if b == Boundary::Periodic && n < 2 {
                return Err(Error::invalid(key, "periodic", "a periodic axis needs at least 2 cells"));
            }
        }
        Ok(Grid { nx, ny, h, boundary_x, boundary_y })
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.nx as usize * self.ny as usize
    }

    /// Domain width `nx·h`.
    pub fn width(&self) -> f32 {
        self.nx as f32 * self.h
    }

    /// Domain height `ny·h`.
    pub fn height(&self) -> f32 {
        self.ny as f32 * self.h
    }

    /// Number of `f32` values of a field.
    pub fn len(&self, field: FieldId) -> usize {
        field.len_for(self.nx, self.ny)
    }

    /// Shape `[rows, cols]` (and `4` channels for dye) of a field, as written to `.npy`.
    pub fn shape(&self, field: FieldId) -> Vec<usize> {
        let (nx, ny) = (self.nx as usize, self.ny as usize);
        match field.kind() {
            FieldKind::Cell => vec![ny, nx],
            FieldKind::Dye => vec![ny, nx, 4],
            FieldKind::U => vec![ny, nx + 1],
            FieldKind::V => vec![ny + 1, nx],
            FieldKind::Levels => vec![self.len(field)],
        }
    }

    /// Bytes all state and scratch fields need.
    pub fn bytes(&self) -> u64 {
        FieldId::STATE_AND_SCRATCH.iter().map(|f| self.len(*f) as u64 * 4).sum()
    }

    /// The uniform block every kernel receives.
    pub fn uniform(&self) -> crate::uniforms::GridUniform {
        crate::uniforms::GridUniform {
            nx: self.nx,
            ny: self.ny,
            h: self.h,
            inv_h: 1.0 / self.h,
            boundary_x: self.boundary_x.code(),
            boundary_y: self.boundary_y.code(),
            zero: 0,
            _pad: 0,
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
    /// The packed multigrid hierarchy ([`crate::multigrid`]): a flat array.
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
        }
    };
}

fields! {
    /// x-velocity on x-faces.
    U = "u", U, true;
    /// y-velocity on y-faces.
    V = "v", V, true;
    /// Pressure of the last projection (scaled so that `u -= dt ∇p`, unit density).
    Pressure = "pressure", Cell, true;
    /// Divergence of the velocity that entered the last projection (the Poisson right-hand side).
    Divergence = "divergence", Cell, true;
    /// Smoke density.
    Density = "density", Cell, true;
    /// Temperature (absolute; relaxes towards the ambient temperature).
    Temperature = "temperature", Cell, true;
    /// RGBA dye.
    Dye = "dye", Dye, true;
    /// Solid mask: 1 inside obstacles, 0 in fluid.
    Solid = "solid", Cell, true;
    /// Vorticity ω = ∂v/∂x − ∂u/∂y at cell centres (scratch of vorticity confinement).
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
    /// Ping-pong partner of `temperature`.
    TemperatureTmp = "temperature_tmp", Cell, false;
    /// Ping-pong partner of `dye`.
    DyeTmp = "dye_tmp", Dye, false;
    /// Cell scratch for diagnostics (the divergence after projection, residuals).
    Scratch = "scratch", Cell, false;
    /// The multigrid solver's levels, packed (see [`crate::multigrid`]).
    Multigrid = "multigrid", Levels, false;
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
            FieldKind::Levels => crate::multigrid::buffer_len(nx as u32, ny as u32),
        }
    }

    /// Position of the dense index in [`FieldId::STATE_AND_SCRATCH`] (for backends' buffer tables).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Number of field ids.
    pub const COUNT: usize = FieldId::STATE_AND_SCRATCH.len();
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
        assert_eq!(FieldId::public().count(), 9);
    }
}
