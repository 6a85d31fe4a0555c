//! A scene's obstacles as a model keeps them: the list the device's table holds (poses at
//! their `since`), the keyframed paths some follow, and the moves a user makes by hand. The
//! grid fluid and the particle liquid share it; each names the resource its table lives in.

use crate::frame::solid::{self, KeyPath, Motion, Obstacle, Pose};
use swirly_ir::backend::Backend;
use swirly_ir::resource::ResourceId;
use swirly_ir::{Error, Result};

/// An obstacle's keyframed path and the leg the table holds (`None`: none yet).
type Followed = Option<(KeyPath, Option<i64>)>;

/// The obstacles of a running model.
#[derive(Debug, Clone, PartialEq)]
pub struct SolidSet {
    table: ResourceId,
    obstacles: Vec<Obstacle>,
    paths: Vec<Followed>,
}

impl SolidSet {
    /// `obstacles` (world units), each following its path in `paths` if it has one, their
    /// table in resource `table`.
    pub fn new(obstacles: Vec<Obstacle>, paths: &[Option<KeyPath>], table: ResourceId) -> SolidSet {
        SolidSet { table, obstacles, paths: paths.iter().map(|p| p.clone().map(|p| (p, None))).collect() }
    }

    /// The obstacles as the table holds them.
    pub fn obstacles(&self) -> &[Obstacle] {
        &self.obstacles
    }

    /// Write the table (nothing without obstacles).
    pub fn write(&self, backend: &mut dyn Backend) -> Result<()> {
        if self.obstacles.is_empty() {
            return Ok(());
        }
        let rows = solid::table(&self.obstacles);
        backend.write(self.table, bytemuck::cast_slice(&rows))
    }

    /// Obstacles on a path take the leg in force at the middle of the step from `time` to
    /// `time + dt`; the table is written only when a leg changes.
    pub fn follow(&mut self, backend: &mut dyn Backend, time: f32, dt: f32) -> Result<()> {
        let mut changed = false;
        for (obstacle, path) in self.obstacles.iter_mut().zip(&mut self.paths) {
            let Some((path, current)) = path else { continue };
            let leg = path.leg(time + 0.5 * dt);
            if *current != Some(leg.id) {
                *current = Some(leg.id);
                (obstacle.pose, obstacle.motion, obstacle.since) = (leg.pose, leg.motion, leg.since);
                changed = true;
            }
        }
        if changed { self.write(backend) } else { Ok(()) }
    }

    /// Place obstacle `index` by hand at `pose`, moving at `motion` from time `now` (it
    /// leaves its path).
    pub fn set(&mut self, backend: &mut dyn Backend, index: usize, pose: Pose, motion: Motion, now: f32) -> Result<()> {
        let count = self.obstacles.len();
        let Some(old) = self.obstacles.get(index) else {
            let why = match count {
                0 => "the scene has no obstacles".to_string(),
                n => format!("the scene has {n} obstacles (indices 0 to {})", n - 1),
            };
            return Err(Error::invalid("obstacle", index, why));
        };
        let moved = Obstacle { pose, motion, since: now, ..old.clone() };
        moved.validate(&format!("obstacles[{index}]"))?;
        self.obstacles[index] = moved;
        if let Some(path) = self.paths.get_mut(index) {
            *path = None;
        }
        self.write(backend)
    }

    /// Read the obstacles back from a restored table; paths take their leg at the next step.
    pub fn restored(&mut self, backend: &mut dyn Backend) -> Result<()> {
        if self.obstacles.is_empty() {
            return Ok(());
        }
        let words = backend.read(self.table)?;
        let values: Vec<f32> = words.into_iter().map(f32::from_bits).collect();
        let rows: Vec<[f32; 4]> = values.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        self.obstacles = solid::from_table(&rows, self.obstacles.len()).ok_or_else(|| Error::Checkpoint {
            problem: "its obstacle table does not hold the scene's obstacles".into(),
        })?;
        for (_, leg) in self.paths.iter_mut().flatten() {
            *leg = None;
        }
        Ok(())
    }
}
