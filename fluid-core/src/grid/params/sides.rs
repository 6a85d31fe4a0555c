//! The box's sides as a scene writes them: each axis' boundary, and each side's own kind
//! (wall, no-slip wall, open, inflow) where it differs.

use serde::{Deserialize, Serialize};

use crate::frame::finite;
use crate::grid::{Boundary, Inflow, Side};
use swirly_ir::{Error, Result};

/// Boundary of each axis, and of each side where it differs from its axis'.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Boundaries {
    /// Left and right sides (default: `wall`).
    pub x: Boundary,
    /// Bottom and top sides (default: `wall`).
    pub y: Boundary,
    /// The left side, where not its axis' (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub left: Option<SideSpec>,
    /// The right side (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub right: Option<SideSpec>,
    /// The bottom side (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub bottom: Option<SideSpec>,
    /// The top side (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub top: Option<SideSpec>,
}

impl Boundaries {
    /// The four sides (left, right, bottom, top) for a scene whose ambient temperature is
    /// `ambient` (what an inflow carries unless told).
    pub fn sides(&self, ambient: f32) -> [Side; 4] {
        let axis = [self.x, self.x, self.y, self.y];
        let given = [self.left, self.right, self.bottom, self.top];
        std::array::from_fn(|k| given[k].map_or(Side::of(axis[k]), |s| s.side(ambient)))
    }

    pub(super) fn validate(&self) -> Result<()> {
        let given = [self.left, self.right, self.bottom, self.top];
        for (name, spec) in crate::grid::SIDE_NAMES.iter().zip(given) {
            if let Some(spec) = spec {
                spec.validate(&format!("params.boundary.{name}"))?;
            }
        }
        Ok(())
    }
}

/// A side given by its type alone (`left = "open"`) or as a table (`[params.boundary.left]`).
fn side_entry<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<SideSpec>, D::Error> {
    use serde::de::{self, IntoDeserializer, MapAccess, Visitor};
    struct Entry;
    impl<'de> Visitor<'de> for Entry {
        type Value = SideSpec;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a side type (\"wall\", \"no-slip\", \"open\" or \"inflow\") or a table with `type`")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<SideSpec, E> {
            SideType::deserialize(v.into_deserializer()).map(SideSpec::new)
        }
        fn visit_map<A: MapAccess<'de>>(self, m: A) -> std::result::Result<SideSpec, A::Error> {
            SideSpec::deserialize(de::value::MapAccessDeserializer::new(m))
        }
    }
    d.deserialize_any(Entry).map(Some)
}

/// What one side does: `"wall"`, `"no-slip"`, `"open"` or `"inflow"`, or a table with `type`
/// and the side's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SideType {
    /// A free-slip wall.
    Wall,
    /// A no-slip wall, moving tangentially at `velocity` (a lid).
    NoSlip,
    /// Outflow.
    Open,
    /// Inflow at `velocity`.
    Inflow,
}

/// How a solid surface holds the fluid beside it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Slip {
    /// The fluid moves with the surface (the viscous step sees the solid's velocity there).
    #[default]
    NoSlip,
    /// The fluid slides along it (only the normal velocity is the solid's).
    Free,
}

/// The inflow's profile across its side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// The same speed all along.
    #[default]
    Uniform,
    /// Zero at the side's ends, `velocity` at its middle.
    Parabolic,
}

/// One side in a scene (see [`Side`] for what each type does).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideSpec {
    /// What the side is.
    #[serde(rename = "type")]
    pub kind: SideType,
    /// A no-slip wall's tangential speed (along +x on the bottom and top, +y on the left and
    /// right), an inflow's inward speed, world units/s (default: `0`).
    #[serde(default)]
    pub velocity: f32,
    /// An inflow's profile (default: `uniform`).
    #[serde(default)]
    pub profile: Profile,
    /// Smoke density an inflow carries in (default: `0`).
    #[serde(default)]
    pub density: f32,
    /// Temperature an inflow carries in (default: the ambient temperature), or a wall holds
    /// through heat diffusion (default: none, the wall insulates; needs
    /// `params.thermal_diffusivity` > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Dye (RGBA) an inflow carries in (default: none).
    #[serde(default)]
    pub dye: [f32; 4],
    /// 0: an inflow carries its smoke and dye across the whole side; n: in n bands with gaps
    /// as wide between them, streaklines (default: `0`; at most 1024).
    #[serde(default)]
    pub stripes: u32,
}

impl SideSpec {
    /// A side of this type with every value at its default.
    pub fn new(kind: SideType) -> SideSpec {
        SideSpec {
            kind,
            velocity: 0.0,
            profile: Profile::Uniform,
            density: 0.0,
            temperature: None,
            dye: [0.0; 4],
            stripes: 0,
        }
    }

    /// The side the grid carries.
    pub fn side(&self, ambient: f32) -> Side {
        match self.kind {
            SideType::Wall => Side::Wall { no_slip: false, speed: 0.0, temperature: self.temperature },
            SideType::NoSlip => Side::Wall { no_slip: true, speed: self.velocity, temperature: self.temperature },
            SideType::Open => Side::Open,
            SideType::Inflow => Side::Inflow(Inflow {
                speed: self.velocity,
                parabolic: self.profile == Profile::Parabolic,
                density: self.density,
                temperature: self.temperature.unwrap_or(ambient),
                dye: self.dye,
                stripes: self.stripes,
            }),
        }
    }

    pub(super) fn validate(&self, key: &str) -> Result<()> {
        finite(&format!("{key}.velocity"), self.velocity)?;
        finite(&format!("{key}.density"), self.density)?;
        if let Some(t) = self.temperature {
            finite(&format!("{key}.temperature"), t)?;
        }
        for (c, x) in self.dye.iter().enumerate() {
            finite(&format!("{key}.dye[{c}]"), *x)?;
        }
        if self.stripes > 1024 {
            return Err(Error::invalid(format!("{key}.stripes"), self.stripes, "at most 1024 bands"));
        }
        let inflow = self.kind == SideType::Inflow;
        let carries =
            self.density != 0.0 || self.dye != [0.0; 4] || self.stripes != 0 || self.profile != Profile::Uniform;
        if !inflow && carries {
            return Err(Error::invalid(
                key,
                format!("{:?}", self.kind).to_lowercase(),
                "`profile`, `density`, `dye` and `stripes` belong to an inflow (`type = \"inflow\"`)",
            ));
        }
        if self.kind == SideType::Open
            && let Some(t) = self.temperature
        {
            let why = "an open side holds no temperature: what leaves takes its own (a wall or an inflow may hold one)";
            return Err(Error::invalid(format!("{key}.temperature"), t, why));
        }
        if matches!(self.kind, SideType::Wall | SideType::Open) && self.velocity != 0.0 {
            return Err(Error::invalid(
                format!("{key}.velocity"),
                self.velocity,
                "only a no-slip wall (a moving lid) or an inflow has a velocity; a free-slip wall cannot drag the fluid",
            ));
        }
        Ok(())
    }
}
