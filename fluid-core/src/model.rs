//! The seam between a solver family and the rest of the engine: a [`Model`] declares its
//! resources, sets up its initial state, steps, and answers reads and diagnostics, all through
//! a [`Backend`]. [`crate::sim::Simulation`] runs any model; the grid fluid
//! ([`crate::grid::model::GridModel`]) is one. A second family (the particle liquid) plugs in
//! beside it: its own model type, and a branch where `Simulation` picks the model of a scene.

use crate::Result;
use crate::backend::{Backend, StepInputs};
use crate::grid::solid::{Motion, Obstacle, Pose};
use crate::grid::step::STATE_FIELDS;
use crate::grid::{FieldId, Grid};
use crate::ir::resource::{ResourceDesc, ResourceId};
use crate::ir::schedule::Schedule;
use crate::scene::Scene;
use crate::splat::Splat;

/// What a solver family declares and does.
pub trait Model: Send + Sync + std::fmt::Debug {
    /// Its name: `grid`.
    fn family(&self) -> &'static str;

    /// The scene it runs.
    fn scene(&self) -> &Scene;

    /// The 2D frame its reads, samples and pictures use.
    fn grid(&self) -> &Grid;

    /// The resources its schedules use, [`ResourceId`]`(i)` the `i`-th: what the backend
    /// allocates for it.
    fn resources(&self) -> &[ResourceDesc];

    /// Every schedule it may run for its scene (set-up, step or its parts, reads, diagnostics):
    /// what a [`crate::storage::MemoryPlan`] gives the backend to bound the memory its
    /// parameter tables and scratch take.
    fn schedules(&self) -> Vec<Schedule>;

    /// Set freshly allocated (zeroed) resources to the scene's initial state: initial
    /// conditions, one-off splats, whatever its solvers need written once.
    fn initialize(&mut self, backend: &mut dyn Backend) -> Result<()>;

    /// Advance by one step of `inputs.dt` from `inputs.time`, applying `splats` (the scene's
    /// emitters and the queued splats, world units), which the model packs into the records
    /// its kernels read.
    fn step(&mut self, backend: &mut dyn Backend, inputs: &StepInputs, splats: &[Splat]) -> Result<()>;

    /// Iterations its last step's solve used.
    fn last_iterations(&self) -> u32;

    /// The figures of the current state (waits for the device).
    fn diagnostics(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics>;

    /// The cheap part of [`Model::diagnostics`]: the largest value of each field of the state
    /// (the projection's figures NaN).
    fn state_maxima(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics>;

    /// The resource that holds `field` now, after bringing a derived field up to date (queued
    /// behind the steps so far, not waited for); an error for a field it does not have.
    fn readable(&mut self, backend: &mut dyn Backend, field: FieldId, inputs: &StepInputs) -> Result<ResourceId>;

    /// Carry on under another scene, with the state kept (see
    /// [`crate::sim::Simulation::set_scene`]); after an error the model runs on unchanged.
    fn set_scene(&mut self, scene: Scene, backend: &mut dyn Backend) -> Result<()>;

    /// The scene's emitters for a step of `dt`, in world units.
    fn emitters(&self, dt: f32) -> Vec<Splat>;

    /// Whether the model holds `field` (a public field its scene carries).
    fn has(&self, field: FieldId) -> bool;

    /// Whether a user's splat can be applied (its amounts go to fields the model has).
    fn check_splat(&self, splat: &Splat) -> Result<()>;

    /// Obstacle `index` placed at `pose` at simulated time `now`, moving with `motion` from
    /// then on (see [`crate::sim::Simulation::set_obstacle`]).
    fn set_obstacle(
        &mut self,
        backend: &mut dyn Backend,
        index: usize,
        pose: Pose,
        motion: Motion,
        now: f32,
    ) -> Result<()>;

    /// The obstacles as they stand in the model's table (each pose holds at its `since`).
    fn obstacles(&self) -> &[Obstacle];

    /// Its state resources were just written from a checkpoint: bring what the model keeps on
    /// the host (the obstacles' table) in line with them.
    fn restored(&mut self, backend: &mut dyn Backend) -> Result<()>;
}

/// Quality figures of the current state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Diagnostics {
    /// max |∇·u| of the current velocity (1/s), i.e. after the last projection.
    pub max_divergence: f64,
    /// Relative residual ‖b − A p‖ / ‖b‖ of the last pressure solve (0 when b = 0, NaN when
    /// the state is not finite).
    pub residual: f64,
    /// The largest |u| or |v| of a face (world units per second).
    pub max_velocity: f64,
    /// Courant number of the last step: `dt · max_velocity / h`, the cells the fastest face
    /// moves in one step. The semi-Lagrangian advection is stable beyond 1, but its error grows
    /// with it; values of several cells say `dt` is large for the flow.
    pub cfl: f64,
    /// max |x| of each field of the state, in the order of [`Diagnostics::STATE_FIELDS`]: NaN
    /// when the field holds a NaN, else +inf when it holds an infinity.
    pub state_max: [f64; STATE_FIELDS.len()],
}

impl Diagnostics {
    /// The fields [`Diagnostics::state_max`] covers: u, v, pressure, density, temperature, dye.
    pub const STATE_FIELDS: [FieldId; STATE_FIELDS.len()] = STATE_FIELDS;

    /// What the fields' maxima alone tell (the projection's figures NaN): the largest velocity
    /// and its Courant number for a step of `dt` on cells of side `h`.
    pub(crate) fn from_state(state_max: [f64; STATE_FIELDS.len()], dt: f32, h: f32) -> Diagnostics {
        // NaN-propagating (f64::max would skip a NaN component).
        let max_velocity =
            if state_max[0] >= state_max[1] || state_max[0].is_nan() { state_max[0] } else { state_max[1] };
        Diagnostics {
            max_divergence: f64::NAN,
            residual: f64::NAN,
            max_velocity,
            cfl: f64::from(dt) * max_velocity / f64::from(h),
            state_max,
        }
    }

    /// The fields of the state that hold a NaN or an infinity (empty while the simulation is
    /// sound).
    pub fn non_finite(&self) -> Vec<FieldId> {
        STATE_FIELDS.into_iter().zip(self.state_max).filter(|(_, m)| !m.is_finite()).map(|(f, _)| f).collect()
    }

    /// Whether every field of the state is finite.
    pub fn is_finite(&self) -> bool {
        self.state_max.iter().all(|m| m.is_finite())
    }

    /// Whether the flow ran away: the fastest face moved farther in the last step than the
    /// grid is wide (`cfl` above [`Grid::longest_side`]). The state is finite but
    /// meaningless, on its way to infinity; [`crate::sim::Simulation::checked_diagnostics`] calls it
    /// [`crate::Error::RanAway`]. (The presets run at a Courant number of 0.5 to 5; Taichi's
    /// `stable_fluid.py` workload at about an eighth of the grid's width.)
    pub fn ran_away(&self, grid: &Grid) -> bool {
        self.cfl > f64::from(grid.longest_side())
    }
}
