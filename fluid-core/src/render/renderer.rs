//! [`Renderer`]: a simulation's frames, drawn by the render kernels where the fields are, or
//! composed on the host from the fields read back (the reference, and what a model that
//! cannot draw on the device takes). It owns what lives from frame to frame: the trails and
//! the backdrop.

use super::kernels::{FramePlan, Solids as Source, Source as Input};
use super::{Canvas, RenderField, RenderSpec, Trails};
use crate::model::{Model, Solids};
use crate::storage::{Bytes, MemoryPlan};
use swirly_ir::backend::{Backend, StepInputs};
use swirly_ir::resource::ResourceId;
use swirly_ir::{Error, Result};

/// What a backdrop is made of: the image's path, the background colour, the picture's size.
type BackdropKey = (String, [u8; 4], (u32, u32));

/// The frames of one simulation: the trails that fade between them and the backdrop laid under
/// them (made again when its image, colour or size changes).
#[derive(Debug, Default)]
pub struct Renderer {
    trails: Trails,
    /// The backdrop ([`RenderSpec::backdrop`]) and what it was made of.
    backdrop: Option<(BackdropKey, Vec<[f32; 4]>)>,
    /// Whether the render kernels' copy of the backdrop is current.
    backdrop_on_device: bool,
}

/// One frame's inputs: the model and the backend that holds it, how the scene draws it, its
/// memory budget (a frame whose resources would pass it is composed on the host), the
/// ambient temperature (subtracted from a temperature layer), the inputs of a pass that is not
/// a step, and the simulated time (trails fade by it).
pub struct Shot<'a> {
    /// The model drawn.
    pub model: &'a mut dyn Model,
    /// The backend that holds it.
    pub backend: &'a mut dyn Backend,
    /// The look.
    pub spec: &'a RenderSpec,
    /// The scene's memory budget.
    pub budget: Option<Bytes>,
    /// Subtracted from temperature.
    pub ambient: f32,
    /// A pass's inputs (the last step's `dt`).
    pub inputs: StepInputs,
    /// Simulated seconds.
    pub time: f32,
}

impl Renderer {
    /// The canvas a model's pictures are drawn on.
    pub(crate) fn canvas(model: &dyn Model) -> Canvas {
        Canvas::new(*model.frame(), model.uniform(), &model.fields())
    }

    /// Drop the trails (a simulation reset starts its pictures afresh).
    pub fn clear(&mut self) {
        self.trails.clear();
    }

    /// The current frame as RGBA8, top row first, and its size: drawn by the render kernels
    /// on the backend where it can, else composed on the host.
    pub fn render(&mut self, mut shot: Shot<'_>) -> Result<(Vec<u8>, (u32, u32))> {
        match self.draw_on_backend(&mut shot)? {
            Some(plan) => Ok((swirly_ir::backend::u32s_to_le_bytes(&shot.backend.read(plan.picture)?), plan.size)),
            None => {
                let size = shot.spec.size(&Self::canvas(shot.model));
                Ok((self.render_on_host(&mut shot)?, size))
            }
        }
    }

    /// The current frame drawn by the render kernels and left on the backend: the resource
    /// that holds it and its size, or `None` where it is composed on the host.
    pub fn render_on_device(&mut self, mut shot: Shot<'_>) -> Result<Option<(ResourceId, (u32, u32))>> {
        Ok(self.draw_on_backend(&mut shot)?.map(|plan| (plan.picture, plan.size)))
    }

    /// The current frame composed on the host from the fields read back
    /// ([`RenderSpec::compose`]): the reference the render kernels are held to. Its trails are
    /// these of the renderer: a simulation drawn both ways keeps neither's trails whole.
    pub fn render_reference(&mut self, mut shot: Shot<'_>) -> Result<Vec<u8>> {
        self.render_on_host(&mut shot)
    }

    /// The resource holding layer `k`'s field, brought up to date; an error naming the layer
    /// when the model has no such field.
    fn source(shot: &mut Shot<'_>, k: usize, field: RenderField) -> Result<ResourceId> {
        let source = field.source();
        if !shot.model.fields().iter().any(|f| f.name == source) {
            let why = format!("this scene's {} model has no {source} to draw", shot.model.family());
            return Err(Error::invalid(shot.spec.layer_key(k), source, why));
        }
        shot.model.readable(shot.backend, source, &shot.inputs)
    }

    /// Run the render kernels for the current frame, or `None` where the host must compose it.
    fn draw_on_backend(&mut self, shot: &mut Shot<'_>) -> Result<Option<FramePlan>> {
        let spec = shot.spec;
        let solids = match shot.model.solids(shot.backend, &shot.inputs)? {
            Solids::None => Source::None,
            Solids::Held(id) => Source::Held(id),
            Solids::Rasterised => Source::Uploaded,
        };
        let mut sources = Vec::new();
        for (k, layer) in spec.effective_layers().iter().enumerate() {
            sources.push(match layer.field {
                RenderField::Velocity | RenderField::Speed if !shot.model.draws_velocity() => return Ok(None),
                RenderField::Velocity | RenderField::Speed => Input::Faces(
                    shot.model.readable(shot.backend, "u", &shot.inputs)?,
                    shot.model.readable(shot.backend, "v", &shot.inputs)?,
                ),
                RenderField::Obstacles => Input::Solid,
                field => {
                    let id = Self::source(shot, k, field)?;
                    if field == RenderField::Dye { Input::Dye(id) } else { Input::Cells(id) }
                }
            });
        }
        let canvas = Self::canvas(shot.model);
        let base = shot.model.resources().len() as u32;
        self.refresh_backdrop(spec, &canvas)?;
        let backdrop = self.backdrop.is_some();
        let Some(plan) = FramePlan::new(spec, &canvas, &sources, solids, shot.ambient, backdrop, base) else {
            return Ok(None);
        };
        let mut all = shot.model.resources().to_vec();
        all.extend(plan.resources.iter().cloned());
        if shot.backend.resources() != all.as_slice() {
            if let Some(budget) = shot.budget {
                let mut schedules = shot.model.schedules();
                schedules.push(plan.schedule.clone());
                if MemoryPlan::new(&all, &schedules, shot.backend).total() > budget.0 {
                    return Ok(None);
                }
            }
            shot.backend.allocate(&all)?;
            self.backdrop_on_device = false;
        }
        if let (Some(id), Some((_, texels))) = (plan.backdrop, &self.backdrop)
            && !self.backdrop_on_device
        {
            shot.backend.upload(id, bytemuck::cast_slice(texels))?;
            self.backdrop_on_device = true;
        }
        shot.backend.upload(plan.colours.0, &plan.colours.1)?;
        if let Some(id) = plan.solid {
            let solid = if solids == Source::Uploaded {
                let placed: Vec<_> = shot.model.obstacles().iter().map(|o| o.at(shot.time)).collect();
                crate::frame::solid::rasterise(&canvas, &placed).solid
            } else {
                vec![0.0; canvas.cells()]
            };
            shot.backend.upload(id, &solid)?;
        }
        let dt = self.trails.advance(shot.time).unwrap_or(-1.0);
        shot.backend.run(&plan.schedule, &StepInputs { dt, ..shot.inputs.clone() })?;
        Ok(Some(plan))
    }

    /// Bring the backdrop in line with `spec` (made again when its image, background colour
    /// or picture size changed).
    fn refresh_backdrop(&mut self, spec: &RenderSpec, canvas: &Canvas) -> Result<()> {
        let Some(path) = spec.background_image.clone() else {
            self.backdrop = None;
            return Ok(());
        };
        let key = (path, spec.background.0, spec.size(canvas));
        if self.backdrop.as_ref().is_some_and(|(k, _)| *k == key) {
            return Ok(());
        }
        let texels = spec.backdrop(canvas)?.unwrap_or_default();
        self.backdrop = Some((key, texels));
        self.backdrop_on_device = false;
        Ok(())
    }

    fn render_on_host(&mut self, shot: &mut Shot<'_>) -> Result<Vec<u8>> {
        let canvas = Self::canvas(shot.model);
        let spec = shot.spec;
        self.refresh_backdrop(spec, &canvas)?;
        let layers = spec.effective_layers();
        let read = |shot: &mut Shot<'_>, id: ResourceId| shot.backend.download(id);
        let solid = match shot.model.solids(shot.backend, &shot.inputs)? {
            Solids::None => None,
            Solids::Held(id) => Some(read(shot, id)?),
            Solids::Rasterised => {
                // A model without solid cells: its obstacles where they stand now.
                let placed: Vec<_> = shot.model.obstacles().iter().map(|o| o.at(shot.time)).collect();
                Some(crate::frame::solid::rasterise(&canvas, &placed).solid)
            }
        };
        let mut data = Vec::with_capacity(layers.len());
        for (k, layer) in layers.iter().enumerate() {
            data.push(match layer.field {
                RenderField::Velocity => {
                    let (cells, coverage) = shot.model.cell_velocities(shot.backend, &shot.inputs)?;
                    layer.velocity_colours(&cells, &coverage)
                }
                RenderField::Speed => {
                    let (cells, _) = shot.model.cell_velocities(shot.backend, &shot.inputs)?;
                    cells.iter().map(|v| v[0].hypot(v[1])).collect()
                }
                RenderField::Obstacles => solid.clone().unwrap_or_else(|| vec![0.0; canvas.cells()]),
                field => {
                    let id = Self::source(shot, k, field)?;
                    read(shot, id)?
                }
            });
        }
        let inputs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
        let backdrop = self.backdrop.as_ref().map(|(_, t)| t.as_slice());
        let trails = Some((&mut self.trails, shot.time));
        Ok(spec.compose_over(backdrop, &canvas, &inputs, solid.as_deref(), shot.ambient, trails))
    }
}
