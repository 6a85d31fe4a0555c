//! Layers: a field through a colour ramp, composed onto the picture by a blend mode; and the
//! looks, named stacks of layers.
//!
//! Everything here works in linear light on premultiplied RGBA (`[r α, g α, b α, α]`), so the
//! blend modes are the short formulas of [`Blend::apply`] and a layer's opacity scales all four
//! channels alike.

use serde::{Deserialize, Serialize};

use super::colour::Colour;

/// Which field a layer shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenderField {
    /// Density through the ramp (a particle liquid's drawn density).
    #[default]
    Density,
    /// Temperature above ambient through the ramp.
    Temperature,
    /// The RGBA dye (premultiplied), drawn as it is.
    Dye,
    /// |vorticity| through the ramp.
    Curl,
    /// Unburnt fuel through the ramp.
    Fuel,
    /// A debug view: the velocity at each cell as a colour, its direction as the hue (+x red,
    /// +y yellow-green, −x cyan, −y violet) and its speed as the value (full at `scale`), where
    /// there is fluid (a particle liquid's drawn density; all of a grid's box).
    Velocity,
    /// The speed |u| at each cell centre through the ramp.
    Speed,
    /// A debug view: the pressure, signed: ramp position `0.5 + 0.5 p / scale`.
    Pressure,
    /// A debug view: the divergence of the velocity, signed as the pressure.
    Divergence,
    /// A debug view: each cell's solid fraction (0 to 1) through the ramp.
    Obstacles,
}

impl RenderField {
    /// The name of the stored field a layer reads: for the velocity and speed views, the
    /// grid's `u` (they read `v` too, or a particle liquid's velocities).
    pub fn source(self) -> &'static str {
        match self {
            RenderField::Density => "density",
            RenderField::Temperature => "temperature",
            RenderField::Dye => "dye",
            RenderField::Curl => "curl",
            RenderField::Fuel => "fuel",
            RenderField::Velocity | RenderField::Speed => "u",
            RenderField::Pressure => "pressure",
            RenderField::Divergence => "divergence",
            RenderField::Obstacles => "solid",
        }
    }

    /// Whether its values are signed, so that zero sits at the ramp's middle.
    pub fn signed(self) -> bool {
        matches!(self, RenderField::Pressure | RenderField::Divergence)
    }

    /// Whether the layer draws colours of its own (the dye, the velocity view) rather than a
    /// value through a ramp.
    pub fn coloured(self) -> bool {
        matches!(self, RenderField::Dye | RenderField::Velocity)
    }

    /// The ramp a layer of this field gets when it names none: blue through black to red for
    /// the signed views, transparent black to white otherwise.
    pub(crate) fn default_ramp(self) -> Vec<(f32, Colour)> {
        if self.signed() {
            vec![
                (0.0, Colour([0x3b, 0x6e, 0xd8, 255])),
                (0.5, Colour([0, 0, 0, 255])),
                (1.0, Colour([0xe0, 0x4a, 0x2e, 255])),
            ]
        } else {
            vec![(0.0, Colour([0, 0, 0, 0])), (1.0, Colour([255, 255, 255, 255]))]
        }
    }
}

/// How a layer is laid onto what lies below it (`d`), its own colour `s`; both premultiplied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Blend {
    /// Porter–Duff `over`: `s + d (1 − α_s)`.
    #[default]
    Alpha,
    /// Light added (fire, glow): `s + d`, alpha `min(1, α_s + α_d)`.
    #[serde(alias = "additive")]
    Add,
    /// Screen, a softer lightening: `s + d − s d`.
    Screen,
    /// Multiply, a darkening (smoke staining what is below):
    /// `s (1 − α_d) + d (1 − α_s) + s d`.
    Multiply,
}

impl Blend {
    /// `s` laid onto `d` by this mode, premultiplied in and out: the separable modes of the W3C
    /// compositing specification (source-over with a blend function) in premultiplied form, and
    /// `add` as its `plus-lighter`. Alpha is `α_s + α_d (1 − α_s)` but for `add`.
    pub fn apply(self, s: [f32; 4], d: [f32; 4]) -> [f32; 4] {
        let over_alpha = s[3] + d[3] * (1.0 - s[3]);
        match self {
            Blend::Alpha => {
                let mut o: [f32; 4] = std::array::from_fn(|k| s[k] + d[k] * (1.0 - s[3]));
                o[3] = over_alpha;
                o
            }
            Blend::Add => {
                let mut o: [f32; 4] = std::array::from_fn(|k| s[k] + d[k]);
                o[3] = (s[3] + d[3]).min(1.0);
                o
            }
            Blend::Screen => {
                let mut o: [f32; 4] = std::array::from_fn(|k| s[k] + d[k] - s[k] * d[k]);
                o[3] = over_alpha;
                o
            }
            Blend::Multiply => {
                let mut o: [f32; 4] = std::array::from_fn(|k| s[k] * (1.0 - d[3]) + d[k] * (1.0 - s[3]) + s[k] * d[k]);
                o[3] = over_alpha;
                o
            }
        }
    }
}

/// One layer of a picture: a field through a ramp (or its own colours), laid over the layers
/// before it by a blend mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Layer {
    /// The field shown (default: `density`).
    pub field: RenderField,
    /// Ramp stops `[position, "#rrggbbaa"]`, positions rising in `[0, 1]` (default: the
    /// field's own, `RenderField::default_ramp`). Ignored by `dye` and `velocity`.
    pub ramp: Option<Vec<(f32, Colour)>>,
    /// The value shown at ramp position 1 (signed fields: at 1, with −scale at 0); for
    /// `velocity`, the speed of full value (default: `1`).
    pub scale: f32,
    /// How the layer is laid over those before it (default: `alpha`).
    pub blend: Blend,
    /// The layer's weight, 0 to 1 (default: `1`).
    pub opacity: f32,
    /// A fading trail: the half-life in seconds of simulated time of what the layer drew
    /// before, kept under what it draws now by `over` (default: `0`, none).
    pub trail: f32,
}

impl Default for Layer {
    fn default() -> Self {
        Layer { field: RenderField::Density, ramp: None, scale: 1.0, blend: Blend::Alpha, opacity: 1.0, trail: 0.0 }
    }
}

/// A ramp's stops in linear light (straight, not premultiplied), converted once per frame.
pub(crate) fn linear_stops(ramp: &[(f32, Colour)]) -> Vec<(f32, [f32; 4])> {
    ramp.iter().map(|&(p, c)| (p, c.linear())).collect()
}

/// The premultiplied colour of a ramp at `t ∈ [0, 1]`: colour and alpha each interpolated
/// between the stops in linear light, then the colour multiplied by the alpha (so a stop of
/// transparent black darkens the colour as it fades it, as the presets' ramps are drawn for).
pub(crate) fn ramp_at(stops: &[(f32, [f32; 4])], t: f32) -> [f32; 4] {
    let premultiply = |c: [f32; 4]| [c[0] * c[3], c[1] * c[3], c[2] * c[3], c[3]];
    let first = stops[0];
    if t <= first.0 {
        return premultiply(first.1);
    }
    for w in stops.windows(2) {
        let ((p0, a), (p1, b)) = (w[0], w[1]);
        if t <= p1 {
            let s = if p1 > p0 { (t - p0) / (p1 - p0) } else { 1.0 };
            return premultiply(std::array::from_fn(|k| a[k] + (b[k] - a[k]) * s));
        }
    }
    premultiply(stops[stops.len() - 1].1)
}

/// A named look: a stack of layers that makes a scene look like smoke, fire, ink, trails or
/// a liquid. `render.scale` sets the main field's scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Look {
    /// Density through greys, laid over by `alpha`.
    Smoke,
    /// Soot (density, full at 0.5) in greys by `alpha`, then the temperature through a
    /// black-body ramp (dark red, orange, yellow, white) added as light.
    Fire,
    /// The dye as it is.
    Ink,
    /// Density in a pale blue, added, with a trail of half-life 0.5 s: what moved leaves a
    /// fading streak.
    Trails,
    /// A particle liquid's drawn density through blues: thin sheets pale, the body deep.
    Liquid,
}

/// Black body from dull red to white, transparent where cold.
const BLACK_BODY: [(f32, [u8; 4]); 6] = [
    (0.0, [0, 0, 0, 0]),
    (0.12, [0x3a, 0x08, 0x00, 0xa0]),
    (0.3, [0xa0, 0x1c, 0x04, 0xe8]),
    (0.55, [0xf0, 0x60, 0x0c, 0xff]),
    (0.8, [0xff, 0xb4, 0x3a, 0xff]),
    (1.0, [0xff, 0xf4, 0xc8, 0xff]),
];

fn stops(s: &[(f32, [u8; 4])]) -> Option<Vec<(f32, Colour)>> {
    Some(s.iter().map(|&(p, c)| (p, Colour(c))).collect())
}

impl Look {
    /// The look's layers, its main field shown at `scale`.
    pub fn layers(self, scale: f32) -> Vec<Layer> {
        let one = |field, ramp: &[(f32, [u8; 4])], blend| Layer {
            field,
            ramp: stops(ramp),
            scale,
            blend,
            ..Layer::default()
        };
        match self {
            Look::Smoke => vec![one(
                RenderField::Density,
                &[(0.0, [0, 0, 0, 0]), (0.35, [0x6c, 0x72, 0x7e, 0x90]), (1.0, [0xe6, 0xe9, 0xef, 0xff])],
                Blend::Alpha,
            )],
            Look::Fire => vec![
                Layer {
                    scale: 0.5,
                    ..one(
                        RenderField::Density,
                        &[(0.0, [0, 0, 0, 0]), (0.3, [0x22, 0x21, 0x21, 0x70]), (1.0, [0x48, 0x45, 0x44, 0xc0])],
                        Blend::Alpha,
                    )
                },
                one(RenderField::Temperature, &BLACK_BODY, Blend::Add),
            ],
            Look::Ink => vec![Layer { field: RenderField::Dye, ..Layer::default() }],
            Look::Trails => vec![Layer {
                trail: 0.5,
                ..one(
                    RenderField::Density,
                    &[(0.0, [0, 0, 0, 0]), (0.3, [0x3a, 0x8e, 0xd8, 0x60]), (1.0, [0xd8, 0xf4, 0xff, 0xff])],
                    Blend::Add,
                )
            }],
            Look::Liquid => vec![one(
                RenderField::Density,
                &[
                    (0.0, [0, 0, 0, 0]),
                    (0.1, [0xb8, 0xe4, 0xff, 0x70]),
                    (0.3, [0x6f, 0xbd, 0xf0, 0xe0]),
                    (0.6, [0x2f, 0x7f, 0xc8, 0xff]),
                    (1.0, [0x1a, 0x4f, 0x94, 0xff]),
                ],
                Blend::Alpha,
            )],
        }
    }
}
