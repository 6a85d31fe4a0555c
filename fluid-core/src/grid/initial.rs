//! The grid fluid's initial conditions (`[initial]` of a scene): the velocity it starts with,
//! and the fields uploaded before the first step.

use serde::{Deserialize, Serialize};

use crate::grid::params::SimParams;
use crate::grid::{FieldId, Grid};

/// The initial velocity field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum InitialVelocity {
    /// At rest.
    #[default]
    Zero,
    /// One Taylor–Green vortex period across the domain: `u = A sin(kx x) cos(ky y)`,
    /// `v = −A (Sx/Sy) cos(kx x) sin(ky y)` with `kx = 2π/width`, `ky = 2π/height`, and
    /// `Sx/Sy` the ratio of the discrete derivatives (`→ kx/ky` as h → 0), which makes it
    /// exactly divergence-free on the MAC grid. Viscosity decays its kinetic energy as
    /// `exp(−2ν(kx² + ky²) t)`.
    TaylorGreen {
        /// Peak x-velocity A, world units/s.
        amplitude: f32,
    },
    /// Uniform random face velocities in `[−amplitude, amplitude]` (not divergence-free).
    Random {
        /// Largest value.
        amplitude: f32,
        /// Generator seed.
        seed: u64,
    },
}

/// Initial conditions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Initial {
    /// Velocity (default: `zero`).
    pub velocity: InitialVelocity,
}

/// The fields the grid fluid uploads before its first step under `initial` (others start at
/// zero): the ambient temperature of `params`, the initial velocity.
pub fn fields(initial: &Initial, params: &SimParams, grid: &Grid) -> Vec<(FieldId, Vec<f32>)> {
    let mut out = Vec::new();
    let ambient = params.buoyancy.ambient_temperature;
    if ambient != 0.0 {
        out.push((FieldId::Temperature, vec![ambient; grid.cells()]));
    }
    match initial.velocity {
        InitialVelocity::Zero => {}
        InitialVelocity::TaylorGreen { amplitude } => {
            let (u, v) = taylor_green(grid, amplitude);
            out.push((FieldId::U, u));
            out.push((FieldId::V, v));
        }
        InitialVelocity::Random { amplitude, seed } => {
            let mut rng = SplitMix64(seed);
            for f in [FieldId::U, FieldId::V] {
                let data = (0..grid.len(f)).map(|_| amplitude * (2.0 * rng.next_f32() - 1.0)).collect();
                out.push((f, data));
            }
        }
    }
    out
}

/// The discrete Taylor–Green vortex described at [`InitialVelocity::TaylorGreen`].
pub(crate) fn taylor_green(grid: &Grid, amplitude: f32) -> (Vec<f32>, Vec<f32>) {
    use std::f64::consts::TAU;
    let (nx, ny, h) = (grid.nx as usize, grid.ny as usize, f64::from(grid.h));
    let kx = TAU / (nx as f64 * h);
    let ky = TAU / (ny as f64 * h);
    let sx = (kx * h / 2.0).sin();
    let sy = (ky * h / 2.0).sin();
    let a = f64::from(amplitude);
    let b = -a * sx / sy;
    let mut u = vec![0.0; grid.len(FieldId::U)];
    let mut v = vec![0.0; grid.len(FieldId::V)];
    for j in 0..ny {
        for i in 0..=nx {
            let (x, y) = ((i % nx) as f64 * h, (j as f64 + 0.5) * h);
            u[j * (nx + 1) + i] = (a * (kx * x).sin() * (ky * y).cos()) as f32;
        }
    }
    for j in 0..=ny {
        for i in 0..nx {
            let (x, y) = ((i as f64 + 0.5) * h, (j % ny) as f64 * h);
            v[j * nx + i] = (b * (kx * x).cos() * (ky * y).sin()) as f32;
        }
    }
    (u, v)
}

/// A tiny, well-known generator (SplitMix64) so scenes and tests are reproducible without a
/// dependency.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}
