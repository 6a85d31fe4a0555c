//! The seam between a solver family and the engine: a [`Model`] declares its resources and
//! its readable fields, sets up its initial state, steps, and answers reads and diagnostics,
//! all through a [`Backend`]. `Simulation` runs any model and knows none: what a
//! model can do beyond the common ground it says by capabilities ([`Model::fit`],
//! [`Model::cell_velocities`], [`Model::solids`]), never by its name.

use std::any::Any;

use crate::frame::solid::{Motion, Obstacle, Pose};
use crate::frame::{Frame, Lattice};
use crate::splat::Splat;
use swirly_ir::Result;
use swirly_ir::backend::{Backend, StepInputs};
use swirly_ir::resource::{ResourceDesc, ResourceId};
use swirly_ir::schedule::Schedule;

/// A readable field of a model, as reads, samples, dumps, probes and pictures name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Its name (`density`, `u`, `positions`): what `--dump` and `Simulation::field`
    /// take, and the `.npy` file's stem.
    pub name: &'static str,
    /// Where its values sit.
    pub lattice: Lattice,
    /// Values per sample point (4 for RGBA dye, 2 for a vector).
    pub channels: u32,
}

impl FieldInfo {
    /// Its values on `frame`, in its flat layout.
    pub fn len(&self, frame: &Frame) -> usize {
        self.lattice.points(frame) * self.channels as usize
    }

    /// Whether it holds no values.
    pub fn is_empty(&self, frame: &Frame) -> bool {
        self.len(frame) == 0
    }

    /// Its `.npy` shape on `frame`: `[rows, cols]` (and its channels), `[count, channels]` for
    /// points.
    pub fn shape(&self, frame: &Frame) -> Vec<usize> {
        frame.shape(self.lattice, self.channels)
    }

    /// Its cells per box cell along each axis (1 but on a finer lattice of cells).
    pub fn factor(&self) -> u32 {
        match self.lattice {
            Lattice::Cells { factor } => factor,
            _ => 1,
        }
    }
}

/// How a model's scene can be made to fit a memory budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// The scene can run on a coarser grid of its box (finer fields coarsened first).
    Downscale,
    /// The model runs as its scene says or not at all: for the message of a scene past its
    /// budget, what it holds and what to do instead.
    Fixed {
        /// What it holds (`"1000 particles (drawn on 64x64)"`).
        what: String,
        /// What to do instead (why it is not downscaled, and what the user can change).
        advice: String,
    },
}

/// Where the picture's obstacles come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solids {
    /// No obstacles.
    None,
    /// A resource of the model holding each cell's solid fraction (the grid's `solid`).
    Held(ResourceId),
    /// The model holds none: the host rasterises [`Model::obstacles`] where they stand.
    Rasterised,
}

/// What a solver family declares and does.
pub trait Model: Send + Sync + std::fmt::Debug + Any {
    /// Its name (`grid`, `particles`): what a checkpoint records, so that a checkpoint of one
    /// model is never restored into another.
    fn family(&self) -> &'static str;

    /// The box its reads, samples and pictures use.
    fn frame(&self) -> &Frame;

    /// The fields it can be read by, with where their values sit.
    fn fields(&self) -> Vec<FieldInfo>;

    /// The uniform every schedule of it carries (its frame's, as its kernels read it): the
    /// renderer's passes over its resources carry it too.
    fn uniform(&self) -> [u8; swirly_ir::schedule::UNIFORM_BYTES];

    /// The resources its schedules use, [`ResourceId`]`(i)` the `i`-th: what the backend
    /// allocates for it.
    fn resources(&self) -> &[ResourceDesc];

    /// Every schedule it may run (set-up, step or its parts, reads, diagnostics): what a
    /// [`crate::storage::MemoryPlan`] gives the backend to bound the memory its parameter
    /// tables and scratch take.
    fn schedules(&self) -> Vec<Schedule>;

    /// Set freshly allocated (zeroed) resources to the initial state: initial conditions,
    /// one-off splats, whatever its solvers need written once.
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
    /// (its own figures left out).
    fn state_maxima(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics>;

    /// An error naming the field `name` and saying why the model cannot give it (a field its
    /// scene does not carry, one it has no such thing as), or `Ok` for one of
    /// [`Model::fields`].
    fn check_field(&self, name: &str) -> Result<()>;

    /// The resource that holds the field `name` (one of [`Model::fields`]) now, after bringing
    /// a derived field up to date (queued behind the steps so far, not waited for); an error
    /// naming the field for one it cannot give.
    fn readable(&mut self, backend: &mut dyn Backend, name: &str, inputs: &StepInputs) -> Result<ResourceId>;

    /// Whether the field `name` may be overwritten (`Simulation::set_field`); an
    /// error saying why not for a field it derives.
    fn check_writable(&self, name: &str) -> Result<()>;

    /// A field was just overwritten: bring what depends on it in line (the grid drops the
    /// low part of a pressure it keeps in double-float).
    fn written(&mut self, backend: &mut dyn Backend, name: &str) -> Result<()>;

    /// Carry on as `next` (a model of the same family, made from another scene), with the
    /// state kept; an error, the model unchanged, where `next` cannot take this state over
    /// (another family, another box, other formats).
    fn adopt(&mut self, next: Box<dyn Model>, backend: &mut dyn Backend) -> Result<()>;

    /// The model as [`Any`], for [`Model::adopt`] to take a model of its own type back.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;

    /// Its emitters for a step of `dt`, in world units.
    fn emitters(&self, dt: f32) -> Vec<Splat>;

    /// How many emitters it applies every step (what [`crate::splat::MAX_SPLATS`] counts
    /// besides the queued splats).
    fn emitter_count(&self) -> usize;

    /// Whether a user's splat can be applied (its amounts go to fields the model has).
    fn check_splat(&self, splat: &Splat) -> Result<()>;

    /// `splat` without the amounts this model would refuse ([`Model::check_splat`]): what a
    /// caller that splats every scene alike (a test, a script) queues.
    fn carried(&self, splat: Splat) -> Splat;

    /// What a pointer dragged through the fluid applies, from the stroke `splat`: by default
    /// [`Model::carried`]; a model whose splat amounts mean something else on a pointer
    /// (the particle liquid's density pulls) keeps only what a drag should do.
    fn pointer(&self, splat: Splat) -> Splat {
        self.carried(splat)
    }

    /// Obstacle `index` placed at `pose` at simulated time `now`, moving with `motion` from
    /// then on (see `Simulation::set_obstacle`).
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
    /// the host (the obstacles' table, a live count) in line with them.
    fn restored(&mut self, backend: &mut dyn Backend) -> Result<()>;

    /// How its scene can be made to fit a memory budget.
    fn fit(&self) -> Fit;

    /// The velocity at each cell of the frame and how much fluid covers it, for the velocity
    /// and speed views (waits for the device).
    fn cell_velocities(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<(Vec<[f32; 2]>, Vec<f32>)>;

    /// Where the picture's obstacles come from (brought up to date).
    fn solids(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Solids>;

    /// Bytes one step moves at the least: every resource each dispatch of its step binds,
    /// read once (and written once more where it writes); what a benchmark holds against the
    /// device's bandwidth.
    fn bytes_per_step(&self) -> u64;

    /// Whether its face velocities `u` and `v` can be drawn on the device (the grid's are
    /// fields of it); otherwise the velocity views are composed on the host from
    /// [`Model::cell_velocities`].
    fn draws_velocity(&self) -> bool;
}

/// Quality figures of the current state: the largest velocity and its Courant number, each
/// field's largest value, and the model's own figures by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostics {
    /// The largest velocity component of the state (world units per second).
    pub max_velocity: f64,
    /// Courant number of the last step: `dt · max_velocity / length`, the cells (the
    /// model's length: the grid's cell, the liquid's radius) the fastest value moves in one
    /// step. The semi-Lagrangian advection is stable beyond 1, but its error grows with it;
    /// values of several cells say `dt` is large for the flow.
    pub cfl: f64,
    /// max |x| of each field of the state, by name: NaN when the field holds a NaN, else +inf
    /// when it holds an infinity.
    pub maxima: Vec<(&'static str, f64)>,
    /// The model's own figures, by name (the grid's `max_divergence`, max |∇·u| of the
    /// current velocity in 1/s, and `residual`, the relative residual of the last pressure
    /// solve); NaN where [`Model::state_maxima`] leaves them out.
    pub figures: Vec<(&'static str, f64)>,
}

impl Diagnostics {
    /// What the fields' maxima alone tell: the largest velocity (the largest of the fields
    /// named in `velocity`, NaN-propagating) and its Courant number for a step of `dt` over
    /// cells of side `length`.
    pub(crate) fn from_maxima(
        maxima: Vec<(&'static str, f64)>,
        velocity: &[&str],
        dt: f32,
        length: f32,
    ) -> Diagnostics {
        // NaN-propagating (f64::max would skip a NaN component).
        let mut components = maxima.iter().filter(|(name, _)| velocity.contains(name)).map(|(_, m)| *m);
        let max_velocity = match components.next() {
            Some(first) => components.fold(first, |a, m| if a >= m || a.is_nan() { a } else { m }),
            None => 0.0,
        };
        Diagnostics { max_velocity, cfl: f64::from(dt) * max_velocity / f64::from(length), maxima, figures: Vec::new() }
    }

    /// The model's figure `name`, if it has one.
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures.iter().find(|(n, _)| *n == name).map(|(_, x)| *x)
    }

    /// The largest |x| of the field `name`, if the state holds it.
    pub fn max_of(&self, name: &str) -> Option<f64> {
        self.maxima.iter().find(|(n, _)| *n == name).map(|(_, x)| *x)
    }

    /// The fields of the state that hold a NaN or an infinity (empty while the simulation is
    /// sound).
    pub fn non_finite(&self) -> Vec<&'static str> {
        self.maxima.iter().filter(|(_, m)| !m.is_finite()).map(|(f, _)| *f).collect()
    }

    /// Whether every field of the state is finite.
    pub fn is_finite(&self) -> bool {
        self.maxima.iter().all(|(_, m)| m.is_finite())
    }

    /// Whether the flow ran away: the fastest value moved farther in the last step than the
    /// frame is wide (`cfl` above `Frame::longest_side`). The state is finite but
    /// meaningless, on its way to infinity; `Simulation::checked_diagnostics`
    /// calls it [`swirly_ir::Error::RanAway`]. (The presets run at a Courant number of 0.5 to 5;
    /// Taichi's `stable_fluid.py` workload at about an eighth of the grid's width.)
    pub fn ran_away(&self, frame: &Frame) -> bool {
        self.cfl > f64::from(frame.longest_side())
    }
}

/// A field's name as a read asks for it: a `&str` (`"density"`) or a model's own key (the
/// grid's [`crate::grid::FieldId`]).
pub trait FieldName {
    /// The name.
    fn field_name(&self) -> &str;
}

impl FieldName for &str {
    fn field_name(&self) -> &str {
        self
    }
}

impl FieldName for String {
    fn field_name(&self) -> &str {
        self
    }
}

impl FieldName for &String {
    fn field_name(&self) -> &str {
        self
    }
}
