//! The seam between a solver family and the rest of the engine: a [`Model`] declares its
//! resources, sets up its initial state, steps, and answers reads and diagnostics, all through
//! a [`Backend`]. [`crate::sim::Simulation`] runs any model; the grid fluid
//! ([`crate::grid::model::GridModel`]) is one. A second family (the particle liquid) plugs in
//! beside it: its own model type, and a branch in [`for_scene`].

use crate::Result;
use crate::backend::{Backend, StepInputs};
use crate::grid::{FieldId, Grid};
use crate::ir::resource::{ResourceDesc, ResourceId};
use crate::scene::Scene;
use crate::sim::Diagnostics;
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

    /// Set freshly allocated (zeroed) resources to the scene's initial state: initial
    /// conditions, one-off splats, whatever its solvers need written once.
    fn initialize(&mut self, backend: &mut dyn Backend) -> Result<()>;

    /// Advance by one step with `inputs` (the scene's emitters and the queued splats in
    /// `inputs.splats` already).
    fn step(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<()>;

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

    /// Whether a user's splat can be applied (its amounts go to fields the model has).
    fn check_splat(&self, splat: &Splat) -> Result<()>;
}

/// The model that runs `scene`.
pub fn for_scene(scene: Scene) -> Result<Box<dyn Model>> {
    Ok(Box::new(crate::grid::model::GridModel::new(scene)?))
}
