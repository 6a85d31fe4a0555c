//! Recorded sessions: every input a [`crate::sim::Simulation`] took from its start (splats, steps and their
//! `dt`, scene and parameter changes, fields set, resets), which replay the session
//! ([`crate::sim::Simulation::replay`]); on the CPU backend, bit for bit.
//!
//! ```
//! # fn main() -> swirly_core::Result<()> {
//! # fn example<B: swirly_core::Backend>(mut sim: swirly_core::Simulation<B>, other: B) -> swirly_core::Result<()> {
//! sim.start_recording()?;
//! sim.step(1.0 / 60.0)?;
//! let log = sim.recording().expect("recording").clone();
//! let text = log.to_toml()?; // a file a bug report can carry
//! let again = swirly_core::Simulation::replay(&swirly_core::replay::InputLog::from_toml(&text)?, other)?;
//! # let _ = again; Ok(()) }
//! # Ok(()) }
//! ```

use serde::{Deserialize, Serialize};

use crate::scene::Scene;
use crate::splat::Splat;
use swirly_ir::{Error, Result};

/// One input of a recorded session, in the order the simulation took it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Input {
    /// [`crate::sim::Simulation::splat`].
    Splat {
        /// The splat, world units.
        splat: Splat,
    },
    /// [`crate::sim::Simulation::step`].
    Step {
        /// Its time step.
        dt: f32,
    },
    /// [`crate::sim::Simulation::set_scene`] (and [`crate::sim::Simulation::set_params`]).
    SetScene {
        /// The new scene.
        scene: Box<Scene>,
    },
    /// [`crate::sim::Simulation::set_field`].
    SetField {
        /// The field's name.
        field: String,
        /// Its values.
        values: Vec<f32>,
    },
    /// [`crate::sim::Simulation::reset`].
    Reset,
    /// [`crate::sim::Simulation::set_obstacle`].
    SetObstacle {
        /// The obstacle's index.
        index: usize,
        /// Its position, world units.
        position: [f32; 2],
        /// Its angle, radians.
        angle: f32,
        /// Its velocity, world units per second.
        velocity: [f32; 2],
        /// Its angular velocity, radians per second.
        angular_velocity: f32,
    },
}

/// A session: the scene it started from and every input after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputLog {
    /// The scene of the simulation's start.
    pub scene: Scene,
    /// The inputs, in order.
    #[serde(default)]
    pub inputs: Vec<Input>,
}

impl InputLog {
    /// A log that starts from `scene`, with no inputs yet.
    pub fn new(scene: Scene) -> InputLog {
        InputLog { scene, inputs: Vec::new() }
    }

    /// The log as TOML (every `f32` written so that it reads back to the same bits).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::Scene { origin: "input log".into(), message: e.to_string() })
    }

    /// A log read from TOML ([`InputLog::to_toml`]).
    pub fn from_toml(text: &str) -> Result<InputLog> {
        let log: InputLog = toml::from_str(text).map_err(|e| Error::Scene {
            origin: "input log".into(),
            message: swirly_ir::error::shorten_lines(&e.to_string()),
        })?;
        log.scene.validate()?;
        Ok(log)
    }
}

impl Input {
    /// Its kind, as a log writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            Input::Splat { .. } => "splat",
            Input::Step { .. } => "step",
            Input::SetScene { .. } => "set-scene",
            Input::SetField { .. } => "set-field",
            Input::Reset => "reset",
            Input::SetObstacle { .. } => "set-obstacle",
        }
    }
}
