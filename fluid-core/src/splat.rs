//! Splats: local additions of density, heat, dye, fuel and velocity, in world units
//! ([`Splat`]) or as a scene writes them ([`SplatSpec`]), and the records the kernels read.

use serde::{Deserialize, Serialize};

use crate::frame::finite;
use crate::frame::uniform::{FALLOFF_CONSTANT, FALLOFF_GAUSSIAN, FALLOFF_LINEAR, SplatGpu};
use crate::frame::{Boundary, Frame};
use swirly_ir::{Error, Result};

/// How a splat's weight falls off with distance `d` from its centre.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Falloff {
    /// `1 − d/r`, zero beyond the radius: a cone.
    #[default]
    Linear,
    /// `exp(−d²/r²)` (GPU Gems ch. 38), cut to zero beyond 4 radii.
    Gaussian,
    /// 1 within the radius, 0 beyond: a hard disc, every point inside given the whole amount.
    Constant,
}

impl Falloff {
    /// Every falloff, in the order menus list them.
    pub const ALL: [Falloff; 3] = [Falloff::Gaussian, Falloff::Linear, Falloff::Constant];
}

/// One splat, in world units. Every amount is added once, multiplied by the falloff weight.
///
/// World units: the box spans `[0, nx·h] × [0, ny·h]` ([`Frame::width`],
/// [`Frame::height`]); with a scene's default `h = 1/ny` it is one unit tall. A scene's
/// emitters and splats ([`SplatSpec`]) give centres as fractions of the box and
/// radii as fractions of its height instead; the simulation converts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Splat {
    /// Centre (x, y), world units.
    pub center: [f32; 2],
    /// Radius (> 0), world units.
    pub radius: f32,
    /// Falloff shape.
    pub falloff: Falloff,
    /// Velocity added at the centre.
    pub velocity: [f32; 2],
    /// Density added at the centre.
    pub density: f32,
    /// Temperature added at the centre.
    pub temperature: f32,
    /// RGBA dye added at the centre.
    pub dye: [f32; 4],
    /// Fuel added at the centre (burns with `params.combustion`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fuel: f32,
}

fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

impl Splat {
    /// Refuse NaN, infinities and non-positive radii.
    pub fn validate(&self, key: &str) -> Result<()> {
        finite(&format!("{key}.center[0]"), self.center[0])?;
        finite(&format!("{key}.center[1]"), self.center[1])?;
        finite(&format!("{key}.radius"), self.radius)?;
        if self.radius <= 0.0 {
            return Err(Error::invalid(format!("{key}.radius"), self.radius, "must be > 0"));
        }
        for (k, x) in [
            ("velocity[0]", self.velocity[0]),
            ("velocity[1]", self.velocity[1]),
            ("density", self.density),
            ("temperature", self.temperature),
            ("dye[0]", self.dye[0]),
            ("dye[1]", self.dye[1]),
            ("dye[2]", self.dye[2]),
            ("dye[3]", self.dye[3]),
            ("fuel", self.fuel),
        ] {
            finite(&format!("{key}.{k}"), x)?;
        }
        Ok(())
    }

    /// How far from its centre the splat adds anything: its radius with linear or constant
    /// falloff, [`GAUSSIAN_CUTOFF`] radii with gaussian.
    pub fn reach(&self) -> f32 {
        match self.falloff {
            Falloff::Linear | Falloff::Constant => self.radius,
            Falloff::Gaussian => GAUSSIAN_CUTOFF * self.radius,
        }
    }

    /// The same splat with every amount multiplied by `s` (emitters use `s = dt`).
    pub fn scaled(&self, s: f32) -> Splat {
        Splat {
            velocity: self.velocity.map(|x| x * s),
            density: self.density * s,
            temperature: self.temperature * s,
            dye: self.dye.map(|x| x * s),
            fuel: self.fuel * s,
            ..*self
        }
    }

    /// The kernels' layout.
    pub(crate) fn to_gpu(self) -> SplatGpu {
        SplatGpu {
            center: self.center,
            radius: self.radius,
            falloff: match self.falloff {
                Falloff::Linear => FALLOFF_LINEAR,
                Falloff::Gaussian => FALLOFF_GAUSSIAN,
                Falloff::Constant => FALLOFF_CONSTANT,
            },
            velocity: self.velocity,
            density: self.density,
            temperature: self.temperature,
            dye: self.dye,
            fuel: self.fuel,
            _pad: [0.0; 3],
        }
    }
}

/// Most splats one step applies, emitters included. The grid's splat kernels bin them (a GPU
/// workgroup, a CPU row adds up only those that reach it), but `particle_pointer` loops over
/// every splat for each particle, and llvmpipe (lavapipe) ends a loop after 65,535 iterations
/// less two per splat (past about 21,800 splats a loop over all of them loses some). Below
/// this bound every splat applies on every backend; above it a step is an error.
pub const MAX_SPLATS: usize = 8192;

/// Where the gaussian falloff is cut to zero, in radii (its weight there is `exp(−16) ≈ 1e-7`).
pub const GAUSSIAN_CUTOFF: f32 = 4.0;

/// Falloff weight of a splat at squared distance `d2` — shared by every backend's `splat` kernel.
pub fn splat_weight(s: &SplatGpu, d2: f32) -> f32 {
    if s.falloff == FALLOFF_GAUSSIAN {
        let x = d2 / (s.radius * s.radius);
        if x < GAUSSIAN_CUTOFF * GAUSSIAN_CUTOFF { (-x).exp() } else { 0.0 }
    } else if s.falloff == FALLOFF_CONSTANT {
        if d2 < s.radius * s.radius { 1.0 } else { 0.0 }
    } else {
        (1.0 - d2.sqrt() / s.radius).max(0.0)
    }
}

/// The step's splats as the records the kernels read ([`SplatGpu`]), in `frame`:
/// on a periodic axis a centre past the box moves into it by whole box lengths (the kernels
/// measure the minimum image from a centre inside the box); a centre inside stays as it is,
/// bit for bit. More than [`MAX_SPLATS`] is an error.
pub fn records(splats: &[Splat], frame: &Frame) -> Result<swirly_ir::Records> {
    if splats.len() > MAX_SPLATS {
        return Err(Error::invalid(
            "splats",
            splats.len(),
            format!("a step applies at most {MAX_SPLATS} splats, emitters included"),
        ));
    }
    let periodic = |b: Boundary, len: f32| (b == Boundary::Periodic).then_some(len);
    let lengths = [periodic(frame.boundary_x, frame.width()), periodic(frame.boundary_y, frame.height())];
    let gpu: Vec<SplatGpu> = splats
        .iter()
        .map(|s| {
            let mut gpu = s.to_gpu();
            for (c, len) in gpu.center.iter_mut().zip(lengths) {
                if let Some(len) = len
                    && !(0.0..len).contains(c)
                {
                    // rem_euclid can round up to `len` itself, which the kernels also handle.
                    *c = c.rem_euclid(len);
                }
            }
            gpu
        })
        .collect();
    Ok(swirly_ir::Records::of(&gpu))
}

/// A splat or emitter as written in a scene: position and radius relative to the domain.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SplatSpec {
    /// Centre as fractions of the domain width and height (default: `[0.5, 0.5]`). Past a wall
    /// by more than the splat reaches ([`Splat::reach`]) is an error: it would add nothing.
    pub center: [f32; 2],
    /// Radius as a fraction of the domain height (default: `0.05`).
    pub radius: f32,
    /// Falloff (default: `linear`).
    pub falloff: Falloff,
    /// Velocity, world units/s (per second for emitters) (default: `[0, 0]`).
    pub velocity: [f32; 2],
    /// Density (per second for emitters) (default: `0`).
    pub density: f32,
    /// Temperature (per second for emitters) (default: `0`).
    pub temperature: f32,
    /// Premultiplied RGBA dye (per second for emitters) (default: `[0, 0, 0, 0]`).
    pub dye: [f32; 4],
    /// Fuel (per second for emitters) (default: `0`); burns with `params.combustion`.
    #[serde(skip_serializing_if = "is_zero")]
    pub fuel: f32,
}

impl Default for SplatSpec {
    fn default() -> Self {
        SplatSpec {
            center: [0.5, 0.5],
            radius: 0.05,
            falloff: Falloff::Linear,
            velocity: [0.0, 0.0],
            density: 0.0,
            temperature: 0.0,
            dye: [0.0; 4],
            fuel: 0.0,
        }
    }
}

impl SplatSpec {
    /// The splat in world units for `grid`.
    pub(crate) fn to_splat(self, frame: &Frame) -> Splat {
        Splat {
            center: [self.center[0] * frame.width(), self.center[1] * frame.height()],
            radius: self.radius * frame.height(),
            falloff: self.falloff,
            velocity: self.velocity,
            density: self.density,
            temperature: self.temperature,
            dye: self.dye,
            fuel: self.fuel,
        }
    }
}

/// The splats of `specs` for one step of length `dt` (emitters: amounts per second), in world
/// units of `frame`.
pub fn emitted(specs: &[SplatSpec], frame: &Frame, dt: f32) -> Vec<Splat> {
    specs.iter().map(|e| e.to_splat(frame).scaled(dt)).collect()
}
