//! The render kernels: a frame made on the backend that holds the fields, so a GPU frame leaves
//! the device as one RGBA8 picture (or not at all).
//!
//! `render_layer` lays one layer over the picture's working image (premultiplied linear RGBA,
//! one texel per pixel): its field through the ramp, the dye or the velocity colours, its
//! trail, its opacity and blend. `render_finish` lays the obstacles over it and encodes RGBA8
//! sRGB, top row first. [`FramePlan`] builds the schedule and the resources they use; the host
//! composer ([`super::RenderSpec::compose`]) is the reference both are held to.

use bytemuck::{Pod, Zeroable};

use super::Canvas;
use super::{Blend, Layer, RenderField, RenderSpec};
use swirly_ir::kernel::Access::{Read as R, ReadWrite as RW, Write as W};
use swirly_ir::kernel::{Binding, Domain, Kernel, KernelDesc, ParamsBlock, ParamsDesc, Workgroup};
use swirly_ir::resource::{Format, Lifetime, ResourceDesc, ResourceId, Shape};
use swirly_ir::schedule::{ParamBlock, Schedule};

/// [`LayerParams::kind`]: the value through the ramp, less [`LayerParams::offset`].
pub const KIND_VALUE: u32 = 0;
/// [`LayerParams::kind`]: |value| through the ramp (curl).
pub const KIND_ABS: u32 = 1;
/// [`LayerParams::kind`]: a signed value, zero at the ramp's middle (pressure, divergence).
pub const KIND_SIGNED: u32 = 2;
/// [`LayerParams::kind`]: the RGBA dye as it is.
pub const KIND_DYE: u32 = 3;
/// [`LayerParams::kind`]: the velocity at the cell centre (from the faces `a` = u, `b` = v)
/// as hue and value.
pub const KIND_HUE: u32 = 4;
/// [`LayerParams::kind`]: the speed at the cell centre through the ramp.
pub const KIND_SPEED: u32 = 5;

/// [`LayerParams::first`]: the bottom layer is laid over the background colour.
pub const FIRST_COLOUR: u32 = 1;
/// [`LayerParams::first`]: the bottom layer is laid over the `backdrop` (the background image).
pub const FIRST_BACKDROP: u32 = 2;

/// The first texels of the `colours` resource: the background, then the obstacles' colour
/// (premultiplied); each layer's ramp follows as (position, straight colour) pairs.
pub const COLOUR_BACKGROUND: usize = 0;
/// See [`COLOUR_BACKGROUND`].
pub const COLOUR_OBSTACLE: usize = 1;

swirly_ir::wgsl_struct! {
    /// One layer's pass.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct LayerParams {
        /// What the layer reads and how it colours it: `KIND_*`.
        pub kind: u32,
        /// [`Blend::code`].
        pub blend: u32,
        /// Texel of `colours` where its ramp starts (two per stop).
        pub first_stop: u32,
        /// Stops of its ramp.
        pub stops: u32,
        /// For the bottom layer, what it is laid over: [`FIRST_COLOUR`] or [`FIRST_BACKDROP`];
        /// 0 for the others (the image so far).
        pub first: u32,
        /// Pixels across and down of the picture.
        pub out_nx: u32,
        /// See `out_nx`.
        pub out_ny: u32,
        /// Subtracted from the value (the ambient temperature).
        pub offset: f32,
        /// The value at ramp position 1 (the speed of full value for the hue).
        pub scale: f32,
        /// The layer's weight.
        pub opacity: f32,
        /// Its trail's half-life in simulated seconds; 0: none. The step uniform's `dt` is the
        /// time since the last frame, negative when the trail starts afresh.
        pub half_life: f32,
        /// Cells of its field per velocity cell along each axis (the finer dye's or density's
        /// factor; 1 for the others): each pixel reads the field's cell under it.
        pub factor: u32,
    }
}

swirly_ir::wgsl_struct! {
    /// The last pass.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct FinishParams {
        /// Pixels across and down of the picture.
        pub out_nx: u32,
        /// See `out_nx`.
        pub out_ny: u32,
        /// 1 when `solid` holds each cell's solid fraction to lay the obstacles' colour by.
        pub solids: u32,
        /// Padding to 16 bytes.
        pub _pad: u32,
    }
}

impl ParamsBlock for LayerParams {}

impl ParamsBlock for FinishParams {}

static LAYER_DESC: KernelDesc = KernelDesc {
    name: "render_layer",
    module: "render_layer",
    bindings: &[
        Binding::f32("a", R).optional(),
        Binding::f32("b", R).optional(),
        Binding::vec4("dye", R).optional(),
        Binding::vec4("colours", R),
        Binding::vec4("trail", RW).optional(),
        Binding::vec4("backdrop", R).optional(),
        Binding::vec4("image", RW),
    ],
    params: Some(ParamsDesc::of::<LayerParams>()),
    records: false,
    domain: Domain::Given,
    workgroup: Workgroup::Tiled,
    doc: "one pixel: a layer's colour (its field through the ramp, the dye or the velocity's hue), \
          its trail, laid over the image by its blend mode",
};

static FINISH_DESC: KernelDesc = KernelDesc {
    name: "render_finish",
    module: "render_finish",
    bindings: &[
        Binding::vec4("image", R),
        Binding::f32("solid", R).optional(),
        Binding::vec4("colours", R),
        Binding::u32("picture", W),
    ],
    params: Some(ParamsDesc::of::<FinishParams>()),
    records: false,
    domain: Domain::Given,
    workgroup: Workgroup::Tiled,
    doc: "one pixel: the obstacles laid over the image, encoded to RGBA8 sRGB with straight alpha, top row first",
};

/// `render_layer`.
pub const RENDER_LAYER: Kernel = Kernel(&LAYER_DESC);
/// `render_finish`.
pub const RENDER_FINISH: Kernel = Kernel(&FINISH_DESC);
/// Every render kernel.
pub const ALL: &[Kernel] = &[RENDER_LAYER, RENDER_FINISH];

impl Blend {
    /// Its code in [`LayerParams::blend`].
    pub fn code(self) -> u32 {
        match self {
            Blend::Alpha => 0,
            Blend::Add => 1,
            Blend::Screen => 2,
            Blend::Multiply => 3,
        }
    }

    /// The mode of a code (alpha for an unknown one).
    pub fn from_code(code: u32) -> Blend {
        match code {
            1 => Blend::Add,
            2 => Blend::Screen,
            3 => Blend::Multiply,
            _ => Blend::Alpha,
        }
    }
}

/// Where a layer's input lives on the backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A value per cell of the grid.
    Cells(ResourceId),
    /// The dye, at its own lattice ([`super::Canvas::dims`]).
    Dye(ResourceId),
    /// The grid's face velocities `u` and `v`.
    Faces(ResourceId, ResourceId),
    /// Each cell's solid fraction, from the frame's [`Solids`] (zero without obstacles).
    Solid,
}

/// Where the obstacles' solid fractions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solids {
    /// No obstacles.
    None,
    /// A resource of the model (the grid's `solid`).
    Held(ResourceId),
    /// Written by the host before each frame into [`FramePlan::solid`].
    Uploaded,
}

/// A frame's work: the resources the render kernels add to the model's (from id `base` on),
/// the schedule, and what the host writes before running it.
#[derive(Clone, Debug)]
pub struct FramePlan {
    /// The render resources, [`ResourceId`]`(base + k)` the `k`-th.
    pub resources: Vec<ResourceDesc>,
    /// The layers' passes and the finish.
    pub schedule: Schedule,
    /// The `colours` resource and its values (background, obstacle, ramps).
    pub colours: (ResourceId, Vec<f32>),
    /// The resource the host writes the solid fractions to before each frame: with
    /// [`Solids::Uploaded`], or zeros for a [`Source::Solid`] layer with [`Solids::None`].
    pub solid: Option<ResourceId>,
    /// The RGBA8 picture, one word per pixel, top row first.
    pub picture: ResourceId,
    /// The resource the host writes the backdrop to ([`super::RenderSpec::backdrop`]), when
    /// the frame has one.
    pub backdrop: Option<ResourceId>,
    /// Pixels across and down.
    pub size: (u32, u32),
}

impl FramePlan {
    /// The frame of `spec` on `grid` with the layers' inputs `sources` (one per
    /// `RenderSpec::effective_layers` layer) and the obstacles from `solids`; `ambient` is
    /// subtracted from temperature; with `backdrop`, the bottom layer lies over one the host
    /// writes. `None` when a layer's source does not suit its field (the caller composes on
    /// the host then).
    pub fn new(
        spec: &RenderSpec,
        grid: &Canvas,
        sources: &[Source],
        solids: Solids,
        ambient: f32,
        backdrop: bool,
        base: u32,
    ) -> Option<FramePlan> {
        let layers = spec.effective_layers();
        if layers.len() != sources.len() {
            return None;
        }
        let (ox, oy) = spec.size(grid);
        let pixels = u64::from(ox) * u64::from(oy);
        let id = |k: usize| ResourceId(base + k as u32);
        let elements = |name, format, len| ResourceDesc::new(name, Shape::Elements, format, Lifetime::Scratch, len);
        let mut colours: Vec<f32> = Vec::new();
        colours.extend(spec.background.premultiplied());
        colours.extend(spec.obstacle.premultiplied());
        let mut resources = vec![
            elements("render_none", Format::F32, 0),
            elements("render_colours", Format::Vec4F32, 0),
            elements("render_image", Format::Vec4F32, pixels),
            elements("render_picture", Format::Rgba8, pixels),
            ResourceDesc::new("render_solid", Shape::Cells, Format::F32, Lifetime::Scratch, 0)
                .on_grid(grid.nx, grid.ny),
            // A written slot binds a buffer of its own: the trail slot of a layer without one.
            elements("render_no_trail", Format::Vec4F32, 0),
            elements("render_backdrop", Format::Vec4F32, if backdrop { pixels } else { 0 }),
        ];
        let (none, colours_id, image, picture, upload, no_trail) = (id(0), id(1), id(2), id(3), id(4), id(5));
        let backdrop_id = id(6);
        let uploaded = match solids {
            Solids::Uploaded => true,
            Solids::None => sources.contains(&Source::Solid),
            Solids::Held(_) => false,
        };
        if uploaded {
            resources[4].len = grid.cells() as u64;
        }
        let solid = match solids {
            Solids::None => None,
            Solids::Held(r) => Some(r),
            Solids::Uploaded => Some(upload),
        };
        let mut b = Schedule::builder(grid.uniform, [grid.nx, grid.ny]);
        for (k, (layer, source)) in layers.iter().zip(sources).enumerate() {
            let kind = layer_kind(layer, *source)?;
            let first_stop = (colours.len() / 4) as u32;
            let ramp = layer.ramp.clone().unwrap_or_else(|| layer.field.default_ramp());
            let mut stops = 0;
            if !layer.field.coloured() {
                for (pos, c) in super::linear_stops(&ramp) {
                    colours.extend([pos, 0.0, 0.0, 0.0]);
                    colours.extend(c);
                    stops += 1;
                }
            }
            let trail = if layer.trail > 0.0 {
                resources.push(elements("render_trail", Format::Vec4F32, pixels));
                id(resources.len() - 1)
            } else {
                no_trail
            };
            let p = LayerParams {
                kind,
                blend: layer.blend.code(),
                first_stop,
                stops,
                first: match (k, backdrop) {
                    (0, true) => FIRST_BACKDROP,
                    (0, false) => FIRST_COLOUR,
                    _ => 0,
                },
                out_nx: ox,
                out_ny: oy,
                offset: if layer.field == RenderField::Temperature { ambient } else { 0.0 },
                scale: layer.scale,
                opacity: layer.opacity,
                half_life: layer.trail,
                factor: grid.dims(layer.field).0 / grid.nx,
            };
            let (a, bb, dye) = match *source {
                Source::Cells(r) => (r, none, none),
                Source::Solid => (solid.unwrap_or(upload), none, none),
                Source::Dye(r) => (none, none, r),
                Source::Faces(u, v) => (u, v, none),
            };
            let under = if backdrop { backdrop_id } else { none };
            let bound = [a, bb, dye, colours_id, trail, under, image];
            b.dispatch(RENDER_LAYER, &bound, Some(ParamBlock::new(&p)), [ox, oy]);
        }
        let p = FinishParams { out_nx: ox, out_ny: oy, solids: u32::from(solid.is_some()), _pad: 0 };
        b.dispatch(
            RENDER_FINISH,
            &[image, solid.unwrap_or(none), colours_id, picture],
            Some(ParamBlock::new(&p)),
            [ox, oy],
        );
        resources[1].len = (colours.len() / 4) as u64;
        Some(FramePlan {
            resources,
            schedule: b.build(),
            colours: (colours_id, colours),
            solid: uploaded.then_some(upload),
            picture,
            backdrop: backdrop.then_some(backdrop_id),
            size: (ox, oy),
        })
    }
}

/// The kernel's reading of a layer, or `None` when its source does not suit it.
fn layer_kind(layer: &Layer, source: Source) -> Option<u32> {
    Some(match (layer.field, source) {
        (RenderField::Dye, Source::Dye(_)) => KIND_DYE,
        (RenderField::Velocity, Source::Faces(..)) => KIND_HUE,
        (RenderField::Speed, Source::Faces(..)) => KIND_SPEED,
        (RenderField::Obstacles, Source::Solid) => KIND_VALUE,
        (RenderField::Curl, Source::Cells(_)) => KIND_ABS,
        (f, Source::Cells(_)) if f.signed() => KIND_SIGNED,
        (RenderField::Dye | RenderField::Velocity | RenderField::Speed | RenderField::Obstacles, _)
        | (_, Source::Dye(_) | Source::Faces(..) | Source::Solid) => {
            return None;
        }
        (_, Source::Cells(_)) => KIND_VALUE,
    })
}

/// The ramp position of a value `x` of a layer of kind `kind` (`KIND_VALUE`, `KIND_ABS`,
/// `KIND_SIGNED`, `KIND_SPEED`): what both the host composer and the kernels compute.
pub fn ramp_position(kind: u32, x: f32, offset: f32, scale: f32) -> f32 {
    let signed = kind == KIND_SIGNED;
    let x = match kind {
        KIND_ABS => x.abs(),
        _ => x - offset,
    };
    let t = if signed { 0.5 + 0.5 * x / scale } else { x / scale };
    if t.is_nan() { if signed { 0.5 } else { 0.0 } } else { t.clamp(0.0, 1.0) }
}
