//! The reference renderer: the scene's layers (each a field through a colour ramp, or its own
//! colours) composed by their blend modes over a background, in linear light and
//! premultiplied throughout, to RGBA8, top row first. The GPU render kernels are held to it.

mod colour;
pub mod kernels;
mod layer;

use serde::{Deserialize, Serialize};

pub use colour::Colour;
pub(crate) use colour::{hsv, linear_to_srgb, srgb_to_linear};
pub use layer::{Blend, Layer, Look, RenderField};
use layer::{linear_stops, ramp_at};

use crate::frame::{Frame, finite};
use crate::model::FieldInfo;
use swirly_ir::schedule::UNIFORM_BYTES;
use swirly_ir::{Error, Result};

mod renderer;
pub use renderer::{Renderer, Shot};

/// A frame drawn by [`crate::Simulation::render`]: RGBA8 pixels, top row first, sRGB with
/// straight alpha, with the size they were drawn at. The size is the dye's or the density's
/// own when a layer shows a finer one, so it can be larger than the grid (`paddle`: 512² for
/// a 256² grid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// `4 · width · height` bytes: R, G, B, A of each pixel, row by row from the top.
    pub rgba: Vec<u8>,
}

/// What a picture is drawn on: a model's box (the canvas derefs to it), the uniform its
/// schedules carry (the render kernels' schedules carry it too, so a frame rewrites no
/// uniform), and how much finer than the box's cells each field it may draw lies.
#[derive(Clone, Debug, PartialEq)]
pub struct Canvas {
    /// The box.
    pub frame: Frame,
    /// The model's uniform.
    pub uniform: [u8; UNIFORM_BYTES],
    /// The fields on a finer lattice than the box's cells, with their factors.
    factors: Vec<(&'static str, u32)>,
}

impl std::ops::Deref for Canvas {
    type Target = Frame;
    fn deref(&self) -> &Frame {
        &self.frame
    }
}

impl Canvas {
    /// The canvas of a model on `frame` with `uniform` and readable `fields`.
    pub fn new(frame: Frame, uniform: [u8; UNIFORM_BYTES], fields: &[FieldInfo]) -> Canvas {
        let factors = fields.iter().filter(|f| f.factor() > 1).map(|f| (f.name, f.factor())).collect();
        Canvas { frame, uniform, factors }
    }

    /// A canvas of `frame` with every field on its cells (the frame's uniform without face
    /// weights).
    pub fn plain(frame: Frame) -> Canvas {
        Canvas { frame, uniform: frame.uniform_bytes(false), factors: Vec::new() }
    }

    /// This canvas with the field `name` `factor` times finer than the box's cells.
    pub(crate) fn with_factor(mut self, name: &'static str, factor: u32) -> Canvas {
        self.factors.retain(|(n, _)| *n != name);
        if factor > 1 {
            self.factors.push((name, factor));
        }
        self
    }

    /// Cells across and down of the field a layer of `field` draws: a finer dye's or
    /// density's own lattice, the box's otherwise.
    pub fn dims(&self, field: RenderField) -> (u32, u32) {
        let f = self.factors.iter().find(|(n, _)| *n == field.source()).map_or(1, |(_, f)| *f);
        (self.frame.nx * f, self.frame.ny * f)
    }
}

/// The most layers a picture stacks.
pub const MAX_LAYERS: usize = 8;

/// How a scene is drawn: one field through a ramp (`field`, `ramp`, `scale`), or a stack of
/// `layers`, or a named `look`; over the background, with the obstacles on top.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderSpec {
    /// The field shown when the scene names no `layers` or `look` (default: `density`).
    pub field: RenderField,
    /// Ramp stops `[position, "#rrggbbaa"]` of that field, positions rising in `[0, 1]`
    /// (default: transparent black → white).
    pub ramp: Vec<(f32, Colour)>,
    /// Background under the layers (default: `"#000000"`). Its alpha is kept: below 1
    /// the picture is that transparent where nothing is drawn (`"#00000000"`: fully).
    pub background: Colour,
    /// A PNG laid over the background colour, under the layers, stretched over the picture
    /// (a path relative to the scene file's folder; default: none). Its alpha is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_image: Option<String>,
    /// Field value shown as ramp position 1 (default: `1`); with a `look`, its main field's.
    pub scale: f32,
    /// Colour of the obstacles, laid over the fluid by each cell's solid fraction, so their
    /// edges are smooth (default: `"#5c6370"`; alpha 0 hides them).
    pub obstacle: Colour,
    /// Layers, bottom first, each laid over those below by its blend mode; when given, they
    /// replace `field` and `ramp` (at most [`MAX_LAYERS`]), so a scene's own picture can be
    /// changed by `--set render.layers=…` alone.
    pub layers: Vec<Layer>,
    /// A named stack of layers ([`Look`]); it replaces `field`, `ramp` and `layers`, so any
    /// scene takes a look by `--set render.look=fire` alone.
    pub look: Option<Look>,
}

impl Default for RenderSpec {
    fn default() -> Self {
        RenderSpec {
            field: RenderField::Density,
            ramp: RenderField::Density.default_ramp(),
            background: Colour([0, 0, 0, 255]),
            background_image: None,
            scale: 1.0,
            obstacle: Colour([0x5c, 0x63, 0x70, 255]),
            layers: Vec::new(),
            look: None,
        }
    }
}

/// Check a ramp: at least one stop, positions finite, in [0, 1] and rising.
fn check_ramp(key: &str, ramp: &[(f32, Colour)]) -> Result<()> {
    if ramp.is_empty() {
        return Err(Error::invalid(key, "[]", "needs at least one stop"));
    }
    let mut last = f32::NEG_INFINITY;
    for (k, (pos, _)) in ramp.iter().enumerate() {
        finite(&format!("{key}[{k}]"), *pos)?;
        if !(0.0..=1.0).contains(pos) {
            let why = "a stop's position lies in [0, 1] (the scale maps the field onto it)";
            return Err(Error::invalid(format!("{key}[{k}]"), pos, why));
        }
        if *pos < last {
            return Err(Error::invalid(format!("{key}[{k}]"), pos, "stop positions must rise"));
        }
        last = *pos;
    }
    Ok(())
}

fn check_scale(key: &str, scale: f32) -> Result<()> {
    finite(key, scale)?;
    if scale <= 0.0 {
        return Err(Error::invalid(key, scale, "must be > 0"));
    }
    Ok(())
}

/// What a layer draws before it is blended: premultiplied linear RGBA at each cell of its
/// field, and for a trail, what it drew before faded under it.
struct LayerImage {
    layer: Layer,
    /// Cells across and down of the layer's field.
    nx: usize,
    ny: usize,
    colours: Vec<[f32; 4]>,
}

/// What the layers with trails drew at the last frame, and when: a trail fades by the
/// simulated time between frames. A [`crate::sim::Simulation`] keeps one across its frames.
#[derive(Clone, Debug, Default)]
pub struct Trails {
    time: Option<f32>,
    images: Vec<Option<Vec<[f32; 4]>>>,
}

impl Trails {
    /// Forget every trail (a reset simulation starts without them).
    pub fn clear(&mut self) {
        *self = Trails::default();
    }

    /// A frame at simulated `time`: the time since the last one, `None` for the first or one
    /// earlier than the last (a reset), which start the trails afresh. For the render
    /// kernels, which keep the trails themselves.
    pub fn advance(&mut self, time: f32) -> Option<f32> {
        let elapsed = self.time.filter(|t| time >= *t).map(|t| time - t);
        self.time = Some(time);
        self.images.clear();
        elapsed
    }
}

impl RenderSpec {
    /// Check the background image, ramps, scales, opacities and trails.
    pub fn validate(&self) -> Result<()> {
        if let Some(path) = &self.background_image {
            crate::image::check_png(path).map_err(|why| Error::invalid("render.background_image", path, why))?;
        }
        check_scale("render.scale", self.scale)?;
        check_ramp("render.ramp", &self.ramp)?;
        if self.layers.len() > MAX_LAYERS {
            let why = format!("a picture stacks at most {MAX_LAYERS} layers");
            return Err(Error::invalid("render.layers", self.layers.len(), why));
        }
        for (k, layer) in self.layers.iter().enumerate() {
            let key = |name: &str| format!("render.layers[{k}].{name}");
            check_scale(&key("scale"), layer.scale)?;
            if let Some(ramp) = &layer.ramp {
                check_ramp(&key("ramp"), ramp)?;
            }
            finite(&key("opacity"), layer.opacity)?;
            if !(0.0..=1.0).contains(&layer.opacity) {
                return Err(Error::invalid(key("opacity"), layer.opacity, "lies in [0, 1]"));
            }
            finite(&key("trail"), layer.trail)?;
            if layer.trail < 0.0 {
                return Err(Error::invalid(key("trail"), layer.trail, "is a half-life in seconds, >= 0 (0: none)"));
            }
        }
        Ok(())
    }

    /// The layers drawn, bottom first: the look's, the scene's `layers`, or the one of
    /// `field`, `ramp` and `scale`.
    pub(crate) fn effective_layers(&self) -> Vec<Layer> {
        if let Some(look) = self.look {
            return look.layers(self.scale);
        }
        if !self.layers.is_empty() {
            return self.layers.clone();
        }
        vec![Layer { field: self.field, ramp: Some(self.ramp.clone()), scale: self.scale, ..Layer::default() }]
    }

    /// The key a scene names a layer's field by, for messages.
    pub(crate) fn layer_key(&self, k: usize) -> String {
        if self.look.is_some() {
            "render.look".to_string()
        } else if self.layers.is_empty() {
            "render.field".to_string()
        } else {
            format!("render.layers[{k}].field")
        }
    }

    /// Pixels across and down of a picture on `canvas`: one per cell of the finest field
    /// drawn (the dye's or the density's own, finer grid when a layer shows it,
    /// [`Canvas::dims`]).
    pub fn size(&self, canvas: &Canvas) -> (u32, u32) {
        let dims = self.effective_layers().iter().map(|l| canvas.dims(l.field)).max_by_key(|&(x, _)| x);
        dims.unwrap_or((canvas.nx, canvas.ny))
    }

    /// Draw `data` (the field [`RenderField::source`] names) to RGBA8 with the scene's first
    /// layer alone, one pixel per cell of that field, top row first (so +y is up in the
    /// picture). `ambient` is subtracted from temperature. Colours are sRGB; alpha is linear
    /// and straight (not premultiplied), as PNG stores it.
    pub fn render(&self, grid: &Canvas, data: &[f32], ambient: f32) -> Vec<u8> {
        self.render_with_solids(grid, data, None, ambient)
    }

    /// [`RenderSpec::render`] with the obstacles drawn over the fluid: `solid` is the `solid`
    /// field (each cell's solid fraction), which weighs the obstacle colour's alpha.
    pub(crate) fn render_with_solids(
        &self,
        grid: &Canvas,
        data: &[f32],
        solid: Option<&[f32]>,
        ambient: f32,
    ) -> Vec<u8> {
        let spec = RenderSpec {
            layers: self.effective_layers()[..1].to_vec(),
            background: self.background,
            obstacle: self.obstacle,
            ..RenderSpec::default()
        };
        spec.compose(grid, &[data], solid, ambient, None)
    }

    /// What lies under the layers at each pixel of a picture of `grid`
    /// ([`RenderSpec::size`], rows from the bottom), premultiplied in linear light: the
    /// `background_image` stretched over the picture (nearest pixel) and laid over the
    /// background colour; `None` without an image. An image that cannot be read is an error
    /// naming it.
    pub fn backdrop(&self, grid: &Canvas) -> Result<Option<Vec<[f32; 4]>>> {
        let Some(path) = &self.background_image else { return Ok(None) };
        let fail = |why| Error::invalid("render.background_image", path, why);
        let bytes = crate::image::image_bytes(path).map_err(fail)?;
        let (nx, ny) = self.size(grid);
        let (nx, ny) = (nx as usize, ny as usize);
        let bg = self.background.premultiplied();
        let mut out = vec![[0.0; 4]; nx * ny];
        // Each picture row takes the nearest image row as the rows are decoded (the image is
        // never held whole). Image rows run from the top; the picture's texels from the bottom.
        let mut rows_of: Vec<Vec<usize>> = Vec::new();
        crate::image::decode_rows(&bytes, &mut |w, h, y, row| {
            let (w, h) = (w as usize, h as usize);
            if rows_of.is_empty() {
                // The picture rows that take each image row.
                rows_of = vec![Vec::new(); h];
                (0..ny).for_each(|j| rows_of[(ny - 1 - j) * h / ny].push(j));
            }
            for &j in rows_of.get(y).into_iter().flatten() {
                for i in 0..nx {
                    let c = Colour(row[i * w / nx]).premultiplied();
                    out[j * nx + i] = Blend::Alpha.apply(c, bg);
                }
            }
        })
        .map_err(fail)?;
        Ok(Some(out))
    }

    /// Draw the layers (`RenderSpec::effective_layers`) to RGBA8, top row first, at
    /// [`RenderSpec::size`], over the background colour. `data[k]` is layer `k`'s input: its
    /// field ([`RenderField::source`]; the speed at each cell for `speed`, the colours of
    /// `Layer::velocity_colours` for `velocity`). `trails` with the simulated time keeps the
    /// layers' trails between frames. `RenderSpec::compose_over` draws over a backdrop.
    pub fn compose(
        &self,
        grid: &Canvas,
        data: &[&[f32]],
        solid: Option<&[f32]>,
        ambient: f32,
        trails: Option<(&mut Trails, f32)>,
    ) -> Vec<u8> {
        self.compose_over(None, grid, data, solid, ambient, trails)
    }

    /// [`RenderSpec::compose`] over `backdrop` ([`RenderSpec::backdrop`]) where given.
    pub(crate) fn compose_over(
        &self,
        backdrop: Option<&[[f32; 4]]>,
        grid: &Canvas,
        data: &[&[f32]],
        solid: Option<&[f32]>,
        ambient: f32,
        trails: Option<(&mut Trails, f32)>,
    ) -> Vec<u8> {
        let layers = self.effective_layers();
        let mut images: Vec<LayerImage> =
            layers.into_iter().zip(data).map(|(layer, data)| LayerImage::new(layer, grid, data, ambient)).collect();
        if let Some((trails, time)) = trails {
            trails.apply(&mut images, time);
        }
        let (nx, ny) = self.size(grid);
        let (nx, ny) = (nx as usize, ny as usize);
        let bg = self.background.premultiplied();
        let obstacle = self.obstacle.premultiplied();
        let mut out = vec![0u8; nx * ny * 4];
        for row in 0..ny {
            let j = ny - 1 - row;
            for i in 0..nx {
                let mut d = backdrop.map_or(bg, |b| b[j * nx + i]);
                for image in &images {
                    let s = image.at(i * image.nx / nx, j * image.ny / ny);
                    let s = s.map(|x| x * image.layer.opacity);
                    d = image.layer.blend.apply(s, d);
                }
                let f = solid.map(|solid| {
                    let (gx, gy) = (grid.nx as usize, grid.ny as usize);
                    solid[(j * gy / ny) * gx + i * gx / nx]
                });
                out[4 * (row * nx + i)..4 * (row * nx + i) + 4].copy_from_slice(&finish_pixel(d, f, obstacle));
            }
        }
        out
    }
}

impl Layer {
    /// The [`RenderField::Velocity`] view's cells as premultiplied linear RGBA, from each cell's
    /// velocity and how much fluid covers it (0 to 1): the hue of the direction, the value of
    /// `speed / scale`, full saturation.
    pub(crate) fn velocity_colours(&self, velocity: &[[f32; 2]], coverage: &[f32]) -> Vec<f32> {
        velocity.iter().zip(coverage).flat_map(|(v, c)| velocity_colour(*v, *c, self.scale)).collect()
    }
}

/// One cell of the velocity view (`Layer::velocity_colours`): its velocity `v`, covered by
/// fluid to `coverage`, full value at speed `scale`.
pub fn velocity_colour(v: [f32; 2], coverage: f32, scale: f32) -> [f32; 4] {
    let a = if coverage.is_finite() { coverage.clamp(0.0, 1.0) } else { 0.0 };
    let hue = v[1].atan2(v[0]).rem_euclid(std::f32::consts::TAU) / std::f32::consts::TAU;
    let value = (v[0].hypot(v[1]) / scale).clamp(0.0, 1.0);
    let value = if value.is_nan() { 0.0 } else { value };
    let rgb = hsv(hue, value).map(|x| srgb_to_linear((x * 255.0 + 0.5) as u8) * a);
    [rgb[0], rgb[1], rgb[2], a]
}

/// A dye texel as a layer draws it: negative colour and alpha outside [0, 1] cut (NaN alpha: 0).
pub fn dye_colour(d: [f32; 4]) -> [f32; 4] {
    let a = d[3].clamp(0.0, 1.0);
    [d[0].max(0.0), d[1].max(0.0), d[2].max(0.0), if a.is_nan() { 0.0 } else { a }]
}

/// The colour of a ramp (stops in linear light, straight: sRGB decoded, alpha 0 to 1) at
/// position `t`, premultiplied.
pub fn ramp_colour(stops: &[(f32, [f32; 4])], t: f32) -> [f32; 4] {
    ramp_at(stops, t)
}

/// What a trail keeps of its last frame after `dt` simulated seconds: `0.5^(dt / half_life)`.
pub fn trail_fade(dt: f32, half_life: f32) -> f32 {
    0.5f32.powf(dt / half_life)
}

/// A finished pixel: the obstacles' colour (premultiplied) laid over `d` by the cell's solid
/// fraction `solid` (cut to [0, 1]), then RGBA8 sRGB with straight alpha.
pub fn finish_pixel(mut d: [f32; 4], solid: Option<f32>, obstacle: [f32; 4]) -> [u8; 4] {
    if let Some(f) = solid {
        let f = f.clamp(0.0, 1.0);
        if f > 0.0 {
            d = Blend::Alpha.apply(obstacle.map(|x| x * f), d);
        }
    }
    let mut px = [0u8; 4];
    let alpha = d[3].clamp(0.0, 1.0);
    if alpha > 0.0 {
        for k in 0..3 {
            px[k] = linear_to_srgb(d[k] / alpha);
        }
    }
    px[3] = (alpha * 255.0 + 0.5) as u8;
    px
}

impl LayerImage {
    /// The layer's colours from its input: the dye and velocity colours as they are
    /// (negative colour and alpha outside [0, 1] cut), a value through the ramp otherwise.
    fn new(layer: Layer, grid: &Canvas, data: &[f32], ambient: f32) -> LayerImage {
        let (nx, ny) = grid.dims(layer.field);
        let (nx, ny) = (nx as usize, ny as usize);
        let colours = if layer.field.coloured() {
            data.chunks_exact(4).map(|d| dye_colour([d[0], d[1], d[2], d[3]])).collect()
        } else {
            let ramp = layer.ramp.clone().unwrap_or_else(|| layer.field.default_ramp());
            let stops = linear_stops(&ramp);
            let kind = match layer.field {
                RenderField::Curl => kernels::KIND_ABS,
                f if f.signed() => kernels::KIND_SIGNED,
                _ => kernels::KIND_VALUE,
            };
            let offset = if layer.field == RenderField::Temperature { ambient } else { 0.0 };
            data.iter().map(|&x| ramp_at(&stops, kernels::ramp_position(kind, x, offset, layer.scale))).collect()
        };
        LayerImage { layer, nx, ny, colours }
    }

    fn at(&self, i: usize, j: usize) -> [f32; 4] {
        self.colours[j * self.nx + i]
    }
}

impl Trails {
    /// Lay what each trailing layer drew before, faded by `0.5^(Δt / half-life)`, under what it
    /// draws now (`over`), and keep the result for the next frame. A frame at an earlier time
    /// than the last (a reset) starts the trails afresh.
    fn apply(&mut self, images: &mut [LayerImage], time: f32) {
        let elapsed = match self.time {
            Some(t) if time >= t => Some(time - t),
            _ => None,
        };
        self.images.resize(images.len(), None);
        for (image, kept) in images.iter_mut().zip(&mut self.images) {
            if image.layer.trail <= 0.0 {
                *kept = None;
                continue;
            }
            if let (Some(dt), Some(before)) = (elapsed, kept.as_ref())
                && before.len() == image.colours.len()
            {
                let fade = trail_fade(dt, image.layer.trail);
                for (c, b) in image.colours.iter_mut().zip(before) {
                    *c = Blend::Alpha.apply(*c, b.map(|x| x * fade));
                }
            }
            *kept = Some(image.colours.clone());
        }
        self.time = Some(time);
    }
}

#[cfg(test)]
mod tests;
