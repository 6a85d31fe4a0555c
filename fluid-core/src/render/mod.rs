//! Reference renderer: a field through a colour ramp to RGBA8, top row first.

use serde::{Deserialize, Serialize};

use crate::grid::{FieldId, Grid};
use crate::params::finite;
use crate::{Error, Result};

/// An sRGB colour with alpha, written `"#rrggbb"` or `"#rrggbbaa"` in scenes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Colour(pub [u8; 4]);

impl TryFrom<String> for Colour {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Self, String> {
        let hex = s.strip_prefix('#').unwrap_or(&s);
        let bad = || format!("colour `{s}` is not #rrggbb or #rrggbbaa");
        if !(hex.len() == 6 || hex.len() == 8) || !hex.is_ascii() {
            return Err(bad());
        }
        let mut c = [255u8; 4];
        for (k, chunk) in hex.as_bytes().chunks(2).enumerate() {
            let text = std::str::from_utf8(chunk).map_err(|_| bad())?;
            c[k] = u8::from_str_radix(text, 16).map_err(|_| bad())?;
        }
        Ok(Colour(c))
    }
}

impl From<Colour> for String {
    fn from(c: Colour) -> String {
        format!("#{:02x}{:02x}{:02x}{:02x}", c.0[0], c.0[1], c.0[2], c.0[3])
    }
}

/// Which field a frame shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenderField {
    /// Density through the ramp.
    #[default]
    Density,
    /// Temperature above ambient through the ramp.
    Temperature,
    /// The RGBA dye (premultiplied) over the background.
    Dye,
    /// |vorticity| through the ramp.
    Curl,
    /// Unburnt fuel through the ramp.
    Fuel,
    /// A debug view: the velocity at each cell as a colour, its direction as the hue (+x red,
    /// +y yellow-green, −x cyan, −y violet) and its speed as the value (full at `scale`), where
    /// there is fluid (a particle liquid's drawn density; all of a grid's box).
    Velocity,
}

impl RenderField {
    /// The fields a renderer needs downloaded.
    pub fn source(self) -> FieldId {
        match self {
            RenderField::Density => FieldId::Density,
            RenderField::Temperature => FieldId::Temperature,
            RenderField::Dye => FieldId::Dye,
            RenderField::Curl => FieldId::Curl,
            RenderField::Fuel => FieldId::Fuel,
            // Built from the model's velocity ([`RenderSpec::velocity_colours`]).
            RenderField::Velocity => FieldId::U,
        }
    }
}

/// How a scene is drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderSpec {
    /// The field shown (default: `density`).
    pub field: RenderField,
    /// Ramp stops `[position, "#rrggbbaa"]`, positions rising in `[0, 1]`
    /// (default: transparent black → white).
    pub ramp: Vec<(f32, Colour)>,
    /// Background under the ramp or dye (default: `"#000000"`). Its alpha is kept: below 1
    /// the picture is that transparent where nothing is drawn (`"#00000000"`: fully), and
    /// what is drawn is laid over it by the `over` operator.
    pub background: Colour,
    /// Field value shown as ramp position 1 (default: `1`).
    pub scale: f32,
    /// Colour of the obstacles, laid over the fluid by each cell's solid fraction, so their
    /// edges are smooth (default: `"#5c6370"`; alpha 0 hides them).
    pub obstacle: Colour,
}

impl Default for RenderSpec {
    fn default() -> Self {
        RenderSpec {
            field: RenderField::Density,
            ramp: vec![(0.0, Colour([0, 0, 0, 0])), (1.0, Colour([255, 255, 255, 255]))],
            background: Colour([0, 0, 0, 255]),
            scale: 1.0,
            obstacle: Colour([0x5c, 0x63, 0x70, 255]),
        }
    }
}

/// Fully saturated sRGB of hue `h` (0 to 1, red at 0) and value `v`.
fn hsv(h: f32, v: f32) -> [f32; 3] {
    let k = |n: f32| {
        let k = (n + h * 6.0).rem_euclid(6.0);
        v - v * k.min(4.0 - k).clamp(0.0, 1.0)
    };
    [k(5.0), k(3.0), k(1.0)]
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}

/// The sRGB encoding of a linear value, rounded to 8 bits: the definition, one `powf` per
/// call. [`linear_to_srgb`] gives the same bytes through a table.
fn linear_to_srgb_exact(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    let s = if c <= 0.003_130_8 { c * 12.92 } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0 + 0.5) as u8
}

/// For each byte `k` in 1..=255, the least `f32` in [0, 1] that [`linear_to_srgb_exact`] maps to
/// `k` or above (found by bisection over the bit patterns, which order non-negative floats as
/// their values). The function is non-decreasing on [0, 1] (checked over every `f32` there by
/// the ignored test `the_srgb_table_equals_the_definition_at_every_f32`), so the number of
/// thresholds at or below `c` is its byte.
fn srgb_thresholds() -> &'static [f32; 255] {
    static TABLE: std::sync::OnceLock<[f32; 255]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn(|k| {
            let want = k as u8 + 1;
            let (mut lo, mut hi) = (0u32, 1.0f32.to_bits());
            // Invariant: f(lo) < want <= f(hi).
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if linear_to_srgb_exact(f32::from_bits(mid)) >= want {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            f32::from_bits(hi)
        })
    })
}

/// [`linear_to_srgb_exact`] without a `powf` per call: a binary search in
/// [`srgb_thresholds`] (NaN, below every threshold's test, gives 0 as the definition does).
fn linear_to_srgb(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    srgb_thresholds().partition_point(|&t| t <= c) as u8
}

impl RenderSpec {
    /// Check the ramp and scale.
    pub fn validate(&self) -> Result<()> {
        finite("render.scale", self.scale)?;
        if self.scale <= 0.0 {
            return Err(Error::invalid("render.scale", self.scale, "must be > 0"));
        }
        if self.ramp.is_empty() {
            return Err(Error::invalid("render.ramp", "[]", "needs at least one stop"));
        }
        let mut last = f32::NEG_INFINITY;
        for (k, (pos, _)) in self.ramp.iter().enumerate() {
            finite(&format!("render.ramp[{k}]"), *pos)?;
            if !(0.0..=1.0).contains(pos) {
                let why = "a stop's position lies in [0, 1] (`render.scale` maps the field onto it)";
                return Err(Error::invalid(format!("render.ramp[{k}]"), pos, why));
            }
            if *pos < last {
                return Err(Error::invalid(format!("render.ramp[{k}]"), pos, "stop positions must rise"));
            }
            last = *pos;
        }
        Ok(())
    }

    /// The ramp's stops in linear-light RGBA, converted once per frame instead of per pixel.
    fn linear_stops(&self) -> Vec<(f32, [f32; 4])> {
        let lin = |c: Colour| {
            [srgb_to_linear(c.0[0]), srgb_to_linear(c.0[1]), srgb_to_linear(c.0[2]), f32::from(c.0[3]) / 255.0]
        };
        self.ramp.iter().map(|&(p, c)| (p, lin(c))).collect()
    }

    /// Linear-light RGBA of the ramp at `t ∈ [0, 1]`, from [`RenderSpec::linear_stops`].
    fn ramp_at(stops: &[(f32, [f32; 4])], t: f32) -> [f32; 4] {
        let first = stops[0];
        if t <= first.0 {
            return first.1;
        }
        for w in stops.windows(2) {
            let ((p0, a), (p1, b)) = (w[0], w[1]);
            if t <= p1 {
                let s = if p1 > p0 { (t - p0) / (p1 - p0) } else { 1.0 };
                return std::array::from_fn(|k| a[k] + (b[k] - a[k]) * s);
            }
        }
        stops[stops.len() - 1].1
    }

    /// Pixels across and down of a picture of `grid`: one per cell of the drawn field (the
    /// dye's own, finer grid for the dye, [`Grid::dye_dims`]).
    pub fn size(&self, grid: &Grid) -> (u32, u32) {
        match self.field {
            RenderField::Dye => grid.dye_dims(),
            _ => (grid.nx, grid.ny),
        }
    }

    /// Draw `data` (the field [`RenderField::source`] names) to RGBA8, one pixel per cell of
    /// that field ([`RenderSpec::size`]), top row first (so +y is up in the picture). `ambient` is subtracted from temperature. Colours
    /// are sRGB; alpha is linear and straight (not premultiplied), as PNG stores it.
    pub fn render(&self, grid: &Grid, data: &[f32], ambient: f32) -> Vec<u8> {
        self.render_with_solids(grid, data, None, ambient)
    }

    /// [`RenderSpec::render`] with the obstacles drawn over the fluid: `solid` is the `solid`
    /// field (each cell's solid fraction), which weighs the obstacle colour's alpha.
    pub fn render_with_solids(&self, grid: &Grid, data: &[f32], solid: Option<&[f32]>, ambient: f32) -> Vec<u8> {
        let (nx, ny) = self.size(grid);
        let (nx, ny) = (nx as usize, ny as usize);
        // Pixels per cell of the grid the solid fractions live on.
        let f = nx / grid.nx.max(1) as usize;
        let bg = [
            srgb_to_linear(self.background.0[0]),
            srgb_to_linear(self.background.0[1]),
            srgb_to_linear(self.background.0[2]),
        ];
        let bg_alpha = f32::from(self.background.0[3]) / 255.0;
        let opaque = self.background.0[3] == 255;
        let stops = self.linear_stops();
        let obstacle = [
            srgb_to_linear(self.obstacle.0[0]),
            srgb_to_linear(self.obstacle.0[1]),
            srgb_to_linear(self.obstacle.0[2]),
        ];
        let obstacle_alpha = f32::from(self.obstacle.0[3]) / 255.0;
        let mut out = vec![0u8; nx * ny * 4];
        for row in 0..ny {
            let j = ny - 1 - row;
            for i in 0..nx {
                let (src, a) = self.source(&stops, data, j * nx + i, ambient);
                let px = &mut out[4 * (row * nx + i)..4 * (row * nx + i) + 4];
                let s = solid.map_or(0.0, |s| s[(j / f) * (nx / f) + i / f].clamp(0.0, 1.0)) * obstacle_alpha;
                if s > 0.0 {
                    // The fluid over the background, then the obstacle over both (premultiplied).
                    let alpha = a + bg_alpha * (1.0 - a);
                    let out_alpha = s + alpha * (1.0 - s);
                    for k in 0..3 {
                        let fluid = src[k] + bg[k] * bg_alpha * (1.0 - a);
                        px[k] = linear_to_srgb((obstacle[k] * s + fluid * (1.0 - s)) / out_alpha);
                    }
                    px[3] = (out_alpha.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
                    continue;
                }
                if opaque {
                    for k in 0..3 {
                        px[k] = linear_to_srgb(src[k] + bg[k] * (1.0 - a));
                    }
                    px[3] = 255;
                    continue;
                }
                // Premultiplied `over` in linear light (`p = src + bg·α_bg·(1 − α_src)`,
                // `α = α_src + α_bg·(1 − α_src)`), the colour then divided by its alpha.
                let alpha = a + bg_alpha * (1.0 - a);
                if alpha > 0.0 {
                    for k in 0..3 {
                        px[k] = linear_to_srgb((src[k] + bg[k] * bg_alpha * (1.0 - a)) / alpha);
                    }
                }
                px[3] = (alpha.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
            }
        }
        out
    }

    /// The [`RenderField::Velocity`] view's cells as premultiplied linear RGBA, from each cell's
    /// velocity and how much fluid covers it (0 to 1): the hue of the direction, the value of
    /// `speed / scale`, full saturation.
    pub fn velocity_colours(&self, velocity: &[[f32; 2]], coverage: &[f32]) -> Vec<f32> {
        let mut out = Vec::with_capacity(4 * velocity.len());
        for (v, c) in velocity.iter().zip(coverage) {
            let a = if c.is_finite() { c.clamp(0.0, 1.0) } else { 0.0 };
            let hue = v[1].atan2(v[0]).rem_euclid(std::f32::consts::TAU) / std::f32::consts::TAU;
            let value = (v[0].hypot(v[1]) / self.scale).clamp(0.0, 1.0);
            let value = if value.is_nan() { 0.0 } else { value };
            let rgb = hsv(hue, value);
            out.extend(rgb.map(|x| srgb_to_linear((x * 255.0 + 0.5) as u8) * a));
            out.push(a);
        }
        out
    }

    /// What cell `c` draws, premultiplied in linear light, and its alpha: the dye as it is
    /// (premultiplied by its coverage), or the field through the ramp.
    fn source(&self, stops: &[(f32, [f32; 4])], data: &[f32], c: usize, ambient: f32) -> ([f32; 3], f32) {
        match self.field {
            RenderField::Dye | RenderField::Velocity => {
                let d = &data[4 * c..4 * c + 4];
                (std::array::from_fn(|k| d[k].max(0.0)), d[3].clamp(0.0, 1.0))
            }
            field => {
                let x = match field {
                    RenderField::Temperature => data[c] - ambient,
                    RenderField::Curl => data[c].abs(),
                    _ => data[c],
                };
                let t = (x / self.scale).clamp(0.0, 1.0);
                let t = if t.is_nan() { 0.0 } else { t };
                let r = RenderSpec::ramp_at(stops, t);
                (std::array::from_fn(|k| r[k] * r[3]), r[3])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Boundary;

    /// The velocity view: direction as hue (+x red, +y between yellow and green at 90°, −x
    /// cyan, −y violet), speed over `scale` as value, coverage as alpha (premultiplied).
    #[test]
    fn velocity_is_drawn_as_hue_and_value() {
        let spec = RenderSpec { field: RenderField::Velocity, scale: 2.0, ..RenderSpec::default() };
        let v = [[2.0, 0.0], [0.0, 4.0], [-1.0, 0.0], [0.0, -2.0], [1.0, 1.0], [3.0, 0.0]];
        let c = spec.velocity_colours(&v, &[1.0, 1.0, 1.0, 1.0, 1.0, 0.5]);
        let px = |k: usize| [c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]];
        assert_eq!(px(0), [1.0, 0.0, 0.0, 1.0], "+x at full speed: red");
        // 90°: hue 1/4, between yellow (1/6) and green (1/3): green full, red half way.
        let up = px(1);
        assert!(up[1] == 1.0 && up[2] == 0.0 && (up[0] - srgb_to_linear(128)).abs() < 0.01, "{up:?}");
        let left = px(2);
        let half = srgb_to_linear(128);
        assert!(left[0] == 0.0 && (left[1] - half).abs() < 1e-6 && (left[2] - half).abs() < 1e-6, "{left:?}");
        let down = px(3);
        assert!(down[1] == 0.0 && down[2] == 1.0 && (down[0] - half).abs() < 0.01, "{down:?}");
        // 45°, speed √2 of 2: orange-yellow at 71 % value.
        let diag = px(4);
        assert!(diag[0] > diag[1] && diag[1] > 0.0 && diag[2] == 0.0, "{diag:?}");
        assert_eq!(px(5), [0.5, 0.0, 0.0, 0.5], "clamped to full value, half covered");
    }

    #[test]
    fn colours_parse() {
        assert_eq!(Colour::try_from("#ff8000".to_string()), Ok(Colour([255, 128, 0, 255])));
        assert_eq!(Colour::try_from("#ff800040".to_string()), Ok(Colour([255, 128, 0, 64])));
        assert!(Colour::try_from("#ff80".to_string()).is_err());
        assert!(Colour::try_from("#gg8000".to_string()).is_err());
    }

    #[test]
    fn the_srgb_table_gives_the_bytes_of_the_definition() {
        let t = srgb_thresholds();
        for (k, &th) in t.iter().enumerate() {
            let below = f32::from_bits(th.to_bits() - 1);
            assert_eq!(usize::from(linear_to_srgb_exact(th)), k + 1, "threshold {k}: {th:e}");
            assert_eq!(usize::from(linear_to_srgb_exact(below)), k, "below threshold {k}: {below:e}");
            assert_eq!(usize::from(linear_to_srgb(th)), k + 1);
            assert_eq!(usize::from(linear_to_srgb(below)), k);
        }
        // A spread of values in [0, 1] by bit pattern, and outside it.
        for bits in (0..=1.0f32.to_bits()).step_by(997) {
            let c = f32::from_bits(bits);
            assert_eq!(linear_to_srgb(c), linear_to_srgb_exact(c), "{c:e}");
        }
        for c in [-1.0, -0.0, 1.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            assert_eq!(linear_to_srgb(c), linear_to_srgb_exact(c), "{c:e}");
        }
    }

    /// Every `f32` in [0, 1] (about 1.07e9; ten seconds in a release build, so not in the default
    /// run): `cargo test --release -p fluid-core -- --ignored every_f32`.
    #[test]
    #[ignore]
    fn the_srgb_table_equals_the_definition_at_every_f32() {
        let mut last = 0u8;
        for bits in 0..=1.0f32.to_bits() {
            let c = f32::from_bits(bits);
            let e = linear_to_srgb_exact(c);
            assert!(e >= last, "the definition decreases at {c:e}");
            last = e;
            assert_eq!(linear_to_srgb(c), e, "{c:e}");
        }
    }

    #[test]
    fn ramp_ends_and_row_order() {
        let g = Grid::new(2, 2, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let spec = RenderSpec::default();
        // bottom row empty, top row full: the picture's first row is the top.
        let img = spec.render(&g, &[0.0, 0.0, 1.0, 5.0], 0.0);
        assert_eq!(&img[0..4], &[255, 255, 255, 255]);
        assert_eq!(&img[8..12], &[0, 0, 0, 255]);
    }

    /// Over a transparent background the picture's alpha is the ramp's (zero where nothing is
    /// drawn) and its colour the ramp's own; over a half-transparent one, `α = a + α_bg (1 − a)`
    /// with the colours mixed by their weights; the dye likewise by its coverage.
    #[test]
    fn a_transparent_background_leaves_alpha_where_nothing_is_drawn() {
        let g = Grid::new(3, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let spec = RenderSpec {
            ramp: vec![(0.0, Colour([0, 0, 0, 0])), (1.0, Colour([255, 128, 0, 255]))],
            background: Colour([20, 40, 60, 0]),
            ..RenderSpec::default()
        };
        let img = spec.render(&g, &[0.0, 0.5, 1.0], 0.0);
        assert_eq!(img[3], 0, "nothing drawn: transparent");
        assert_eq!(&img[8..12], &[255, 128, 0, 255], "fully drawn: the ramp's colour, opaque");
        // Half way: alpha 0.5 and the colour of the ramp there (premultiplied, divided back).
        assert_eq!(img[7], 128);
        let half = RenderSpec { background: Colour([255, 255, 255, 128]), ..spec.clone() };
        let img = half.render(&g, &[0.0, 0.5, 1.0], 0.0);
        assert_eq!(&img[0..4], &[255, 255, 255, 128], "the background alone");
        let a = 0.5 + (128.0 / 255.0) * 0.5;
        assert_eq!(img[7], (a * 255.0f32 + 0.5) as u8);
        // The dye: premultiplied colour d over nothing is d / a at alpha a.
        let dye = RenderSpec { field: RenderField::Dye, ..spec };
        let img = dye.render(&g, &[0.0, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0], 0.0);
        assert_eq!(img[3], 0);
        assert_eq!(img[7], 128);
        assert_eq!(img[4], linear_to_srgb(0.5));
    }

    /// The sRGB definitions in f64, written out here rather than taken from the renderer.
    fn decode(c: u8) -> f64 {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    }
    fn encode(c: f64) -> f64 {
        255.0 * if c <= 0.0031308 { 12.92 * c } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 }
    }

    /// A ramp colour is laid over the background by its alpha, and the (premultiplied) dye by
    /// its own, in linear light: `c α + bg (1 − α)` and `d + bg (1 − a)`, then sRGB-encoded.
    /// On a grey background, which the default black one would hide.
    #[test]
    fn ramps_and_dye_composite_over_the_background() {
        let g = Grid::new(3, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let grey = Colour([128, 96, 64, 255]);
        let bg = grey.0.map(decode);
        let close = |got: &[u8], want: [f64; 3], what: &str| {
            for k in 0..3 {
                assert!(
                    (f64::from(got[k]) - encode(want[k])).abs() <= 0.5 + 1e-3,
                    "{what}, channel {k}: {} against {:.3}",
                    got[k],
                    encode(want[k])
                );
            }
            assert_eq!(got[3], 255, "{what}: the picture is opaque");
        };
        // Transparent black to a half-transparent orange; the density's ramp positions 0, 0.5, 1.
        let orange = Colour([255, 128, 0, 128]);
        let spec = RenderSpec {
            ramp: vec![(0.0, Colour([0, 0, 0, 0])), (1.0, orange)],
            background: grey,
            scale: 2.0,
            ..RenderSpec::default()
        };
        let img = spec.render(&g, &[0.0, 1.0, 2.0], 0.0);
        let o = orange.0.map(decode);
        for (i, s) in [0.0, 0.5, 1.0].into_iter().enumerate() {
            let alpha = s * 128.0 / 255.0;
            let want = std::array::from_fn(|k| s * o[k] * alpha + bg[k] * (1.0 - alpha));
            close(&img[4 * i..4 * i + 4], want, &format!("ramp at {s}"));
        }
        // Dye: premultiplied colour plus the background through what its alpha leaves.
        let spec = RenderSpec { field: RenderField::Dye, background: grey, ..RenderSpec::default() };
        let dye = [0.0, 0.0, 0.0, 0.0, 0.3, 0.1, 0.05, 0.5, 0.6, 0.2, 0.1, 1.0];
        let img = spec.render(&g, &dye, 0.0);
        for i in 0..3 {
            let d = &dye[4 * i..4 * i + 4];
            let want = std::array::from_fn(|k| f64::from(d[k]) + bg[k] * (1.0 - f64::from(d[3])));
            close(&img[4 * i..4 * i + 4], want, &format!("dye {d:?}"));
        }
    }
}
