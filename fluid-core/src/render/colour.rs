//! Colours: the scene's `"#rrggbbaa"` and the sRGB transfer functions the renderer works
//! through (it composes in linear light and encodes once per pixel).

use serde::{Deserialize, Serialize};

/// An sRGB colour with alpha, written `"#rrggbb"` or `"#rrggbbaa"` in scenes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Colour(pub [u8; 4]);

impl TryFrom<String> for Colour {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
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

/// Fully saturated sRGB of hue `h` (0 to 1, red at 0) and value `v`.
pub(crate) fn hsv(h: f32, v: f32) -> [f32; 3] {
    let k = |n: f32| {
        let k = (n + h * 6.0).rem_euclid(6.0);
        v - v * k.min(4.0 - k).clamp(0.0, 1.0)
    };
    [k(5.0), k(3.0), k(1.0)]
}

pub(crate) fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}

/// The sRGB encoding of a linear value, rounded to 8 bits: the definition, one `powf` per
/// call. [`linear_to_srgb`] gives the same bytes through a table.
pub(crate) fn linear_to_srgb_exact(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    let s = if c <= 0.003_130_8 { c * 12.92 } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0 + 0.5) as u8
}

/// For each byte `k` in 1..=255, the least `f32` in [0, 1] that [`linear_to_srgb_exact`] maps to
/// `k` or above (found by bisection over the bit patterns, which order non-negative floats as
/// their values). The function is non-decreasing on [0, 1] (checked over every `f32` there by
/// the ignored test `the_srgb_table_equals_the_definition_at_every_f32`), so the number of
/// thresholds at or below `c` is its byte.
pub(crate) fn srgb_thresholds() -> &'static [f32; 255] {
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
pub(crate) fn linear_to_srgb(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    srgb_thresholds().partition_point(|&t| t <= c) as u8
}

impl Colour {
    /// The colour in linear light with its alpha, straight: `[r, g, b, α]`.
    pub(crate) fn linear(self) -> [f32; 4] {
        [srgb_to_linear(self.0[0]), srgb_to_linear(self.0[1]), srgb_to_linear(self.0[2]), f32::from(self.0[3]) / 255.0]
    }

    /// The colour in linear light, premultiplied by its alpha: `[r α, g α, b α, α]`.
    pub(crate) fn premultiplied(self) -> [f32; 4] {
        let a = f32::from(self.0[3]) / 255.0;
        [srgb_to_linear(self.0[0]) * a, srgb_to_linear(self.0[1]) * a, srgb_to_linear(self.0[2]) * a, a]
    }
}
