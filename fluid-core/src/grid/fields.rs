//! The grid model's resources for one scene: a resource per [`FieldId`] (its id is the field's
//! index), each declared with its shape and lifetime, empty where the scene does not need it.

use crate::frame::solid::{self, Obstacle};
use crate::grid::params::{PressureSolver, SimParams};
use crate::grid::{FieldId, FieldKind, Grid};
use swirly_ir::resource::{Format, Lifetime, ResourceDesc, ResourceId, Shape};

impl From<FieldId> for ResourceId {
    fn from(f: FieldId) -> ResourceId {
        ResourceId(f.index() as u32)
    }
}

impl FieldId {
    /// The field whose resource `id` is, in a grid model's list.
    pub fn from_resource(id: ResourceId) -> Option<FieldId> {
        FieldId::STATE_AND_SCRATCH.get(id.index()).copied()
    }
}

/// The sharing group of the grid's transient resources.
pub const TRANSIENT_GROUP: &str = "workspace";

/// The resources of a grid scene, in [`FieldId`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct GridFields {
    grid: Grid,
    resources: Vec<ResourceDesc>,
}

impl GridFields {
    /// What a scene with `params` on `grid` needs: density, temperature and dye only where
    /// `params.fields` carries them, the second velocity scratch pair only with viscosity,
    /// the pressure's ping-pong partner only for the sweeps that swap with it, and the
    /// workspace of the chosen pressure solver only (none for the sweeps). The diagnostics'
    /// `scratch` is transient, and so is the multigrid solver's workspace (each run loads its
    /// levels from the pressure): the two share memory (`TRANSIENT_GROUP`).
    pub fn declare(grid: &Grid, params: &SimParams) -> GridFields {
        GridFields::declare_with(grid, params, &[])
    }

    /// [`GridFields::declare`] for a scene with `obstacles`: then also the solid fractions
    /// (`solid`, `u_faces`, `v_faces`) and the obstacle table, as long as they need.
    pub(crate) fn declare_with(grid: &Grid, params: &SimParams, obstacles: &[Obstacle]) -> GridFields {
        let solids = grid.solids || !obstacles.is_empty();
        let carried = |f: FieldId| params.fields.carries(f);
        let solver = params.pressure.solver;
        let sweeps = matches!(solver, PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::Sor);
        let needed = |f: FieldId| match f {
            FieldId::DensityCoarse => carried(FieldId::Density) && grid.density_factor > 1,
            FieldId::Expansion => params.expands(),
            FieldId::UBack | FieldId::VBack => params.advection.velocity_scheme().round_trip(),
            FieldId::Back => {
                params.advection.scheme.round_trip()
                    && (carried(FieldId::Density) || carried(FieldId::Temperature) || carried(FieldId::Fuel))
            }
            FieldId::DyeBack => params.advection.scheme.round_trip() && carried(FieldId::Dye),
            FieldId::UTmp2 | FieldId::VTmp2 => params.viscosity > 0.0,
            FieldId::PressureTmp => sweeps,
            FieldId::Solid | FieldId::UFaces | FieldId::VFaces => solids,
            FieldId::Held => grid.held,
            // A carried field and its ping-pong partner, and everything else.
            _ => carried(f.owner()),
        };
        let table = solid::table_len(obstacles) as u64;
        let workspace = workspace_len(grid, params);
        let mut fields = GridFields::build(grid, |f| {
            if f == FieldId::Multigrid {
                workspace
            } else if f == FieldId::Obstacles {
                Some(table)
            } else if f == FieldId::MgFaces {
                let levels = matches!(solver, PressureSolver::Multigrid | PressureSolver::Mgpcg);
                let (nx, ny) = (grid.nx, grid.ny);
                Some(if solids && levels { mg_faces_len(nx, ny) } else { 0 })
            } else if needed(f) {
                None
            } else {
                Some(0)
            }
        });
        let transient = Lifetime::Transient { shares: TRANSIENT_GROUP };
        fields.resources[FieldId::Scratch.index()].lifetime = transient;
        if solver == PressureSolver::Multigrid {
            fields.resources[FieldId::Multigrid.index()].lifetime = transient;
        }
        fields
    }

    /// The same resources with the fields `storage` stores in `f16` ([`crate::storage::FieldGroup`])
    /// in that format.
    pub fn stored(mut self, storage: &crate::storage::Storage) -> GridFields {
        for group in crate::storage::FieldGroup::ALL {
            if storage.format_of(group) == crate::storage::StoreFormat::F16 {
                for f in group_fields(group) {
                    let r = &mut self.resources[f.index()];
                    r.format = r.format.half();
                }
            }
        }
        self
    }

    /// Every field, and a workspace that holds every solver's: what a test of single kernels
    /// binds.
    pub fn all(grid: &Grid) -> GridFields {
        let workspace = crate::grid::pressure::layout::buffer_len(grid.nx, grid.ny) as u64;
        GridFields::build(grid, |f| (f == FieldId::Multigrid).then_some(workspace))
    }

    /// [`GridFields::all`] round `obstacles`: their table, and multigrid's faces of every level.
    pub fn all_with(grid: &Grid, obstacles: &[Obstacle]) -> GridFields {
        let workspace = crate::grid::pressure::layout::buffer_len(grid.nx, grid.ny) as u64;
        GridFields::build(grid, |f| match f {
            FieldId::Multigrid => Some(workspace),
            FieldId::Obstacles => Some(solid::table_len(obstacles) as u64),
            FieldId::MgFaces if grid.solids => Some(mg_faces_len(grid.nx, grid.ny)),
            _ => None,
        })
    }

    /// `len(f)`: `Some(n)` overrides the field's length, `None` keeps it.
    fn build(grid: &Grid, len: impl Fn(FieldId) -> Option<u64>) -> GridFields {
        let resources = FieldId::STATE_AND_SCRATCH
            .iter()
            .map(|&f| {
                let (shape, format) = match f.kind() {
                    FieldKind::Cell => (Shape::Cells, Format::F32),
                    FieldKind::Dye => (Shape::Cells, Format::Vec4F32),
                    FieldKind::U => (Shape::XFaces, Format::F32),
                    FieldKind::V => (Shape::YFaces, Format::F32),
                    FieldKind::UFaces => (Shape::XFaces, Format::Vec2F32),
                    FieldKind::VFaces => (Shape::YFaces, Format::Vec2F32),
                    FieldKind::Levels => (Shape::Levels, Format::F32),
                    FieldKind::Table => (Shape::Elements, Format::Vec4F32),
                };
                let elements = match f.kind() {
                    FieldKind::Dye | FieldKind::Table => grid.len(f) as u64 / 4,
                    FieldKind::UFaces | FieldKind::VFaces => grid.len(f) as u64 / 2,
                    _ => grid.len(f) as u64,
                };
                let lifetime = if f.is_state() { Lifetime::State } else { Lifetime::Scratch };
                ResourceDesc::new(f.name(), shape, format, lifetime, len(f).unwrap_or(elements))
                    .on_grid(grid.nx, grid.ny)
            })
            .collect();
        GridFields { grid: *grid, resources }
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The resources, in [`FieldId`] order (what [`swirly_ir::Backend::allocate`] takes).
    pub fn resources(&self) -> &[ResourceDesc] {
        &self.resources
    }

    /// The resource of a field.
    pub fn id(&self, f: FieldId) -> ResourceId {
        f.into()
    }

    /// Its description.
    pub fn desc(&self, f: FieldId) -> &ResourceDesc {
        &self.resources[f.index()]
    }

    /// Whether the scene has it (it is declared with elements).
    pub fn has(&self, f: FieldId) -> bool {
        !self.desc(f).is_empty()
    }

    /// Bytes of all its resources.
    pub fn bytes(&self) -> u64 {
        self.resources.iter().map(ResourceDesc::bytes).sum()
    }
}

/// Values of the multigrid levels' face weights ([`FieldId::MgFaces`]): two per cell of every
/// level.
pub(crate) fn mg_faces_len(nx: u32, ny: u32) -> u64 {
    crate::grid::pressure::layout::levels_len(nx, ny) / 3 * 2
}

/// Values of the pressure solver's workspace (the `multigrid` resource): the level hierarchy
/// for multigrid, with MGPCG's vectors after it, the Poisson filter's intermediate arrays and
/// taps; none for the sweeps.
pub(crate) fn workspace_len(grid: &Grid, params: &SimParams) -> Option<u64> {
    use crate::grid::pressure::layout::{filter_len, levels_len, mgpcg_len};
    let (nx, ny) = (grid.nx, grid.ny);
    Some(match params.pressure.solver {
        PressureSolver::Multigrid => levels_len(nx, ny),
        PressureSolver::Mgpcg => mgpcg_len(nx, ny),
        PressureSolver::PoissonFilter => filter_len(nx, ny, params.pressure.rank),
        PressureSolver::Jacobi
        | PressureSolver::JacobiMultisweep
        | PressureSolver::Sor
        | PressureSolver::Relaxation => 0,
    })
}

/// The grid fields of a storage group (a field and the scratch that swaps with it).
pub(crate) fn group_fields(group: crate::storage::FieldGroup) -> &'static [FieldId] {
    use crate::storage::FieldGroup;
    use FieldId as F;
    match group {
        FieldGroup::Velocity => &[F::U, F::V, F::UTmp, F::VTmp, F::UTmp2, F::VTmp2, F::UBack, F::VBack],
        FieldGroup::Density => &[F::Density, F::DensityTmp, F::DensityCoarse],
        FieldGroup::Temperature => &[F::Temperature, F::TemperatureTmp],
        FieldGroup::Dye => &[F::Dye, F::DyeTmp, F::DyeBack],
        FieldGroup::Fuel => &[F::Fuel, F::FuelTmp],
    }
}
