//! Where a run's outputs go: each a [`Sink`] that takes what it needs after every step and
//! writes its files whole or not at all (`crate::whole`), the paths it wrote kept for the
//! summary.

use std::io::Write;

use super::*;

/// One kind of output of a run.
pub(crate) trait Sink {
    /// After step `k` (1-based) of `steps`.
    fn step(&mut self, sim: &mut Simulation, k: u32, steps: u32) -> Result<(), Failure>;

    /// After the last step: write what is left; the paths written.
    fn finish(self: Box<Self>, sim: &mut Simulation) -> Result<Vec<PathBuf>, Failure>;

    /// The run failed at step `k`: write what shows the state that failed (the dumps), if
    /// anything; the paths written.
    fn failed(&mut self, sim: &mut Simulation, k: u32) -> Result<Vec<PathBuf>, Failure> {
        let _ = (sim, k);
        Ok(Vec::new())
    }
}

/// The sinks of `outputs` for a run of `plan` on `sim`, in the order they take each step.
pub(crate) fn sinks(plan: &RunPlan, sim: &Simulation) -> Result<Vec<Box<dyn Sink>>, Failure> {
    let (out, o, name) = (&plan.out_dir, &plan.outputs, &plan.scene.name);
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if !o.probes.is_empty() {
        sinks.push(Box::new(Probes::create(out, &o.probes, sim)?));
    }
    if o.png || o.gif || !o.exr.is_empty() {
        sinks.push(Box::new(Frames::create(out, name, o, sim.picture_size())?));
    }
    if let Some(book) = o.flipbook {
        let (w, h) = sim.picture_size();
        let atlas = Atlas::create(book, w, h, out, name)?;
        sinks.push(Box::new(Book { atlas, dir: out.clone(), name: name.clone() }));
    }
    if let Some(every) = o.save_every {
        sinks.push(Box::new(Checkpoints { dir: out.clone(), every, written: Vec::new() }));
    }
    if !o.dumps.is_empty() {
        sinks.push(Box::new(Dumps { dir: out.clone(), fields: o.dumps.clone() }));
    }
    Ok(sinks)
}

/// `--png`, `--gif` and `--exr`: a frame every `every` steps and at the last.
struct Frames {
    dir: PathBuf,
    png: bool,
    gif: Option<(GifWriter, PathBuf)>,
    exr: Vec<String>,
    every: u32,
    size: (u32, u32),
    frames: usize,
    written: Vec<PathBuf>,
}

impl Frames {
    fn create(dir: &Path, name: &str, o: &Outputs, size: (u32, u32)) -> Result<Frames, Failure> {
        let gif = if o.gif {
            let path = dir.join(format!("{name}.gif"));
            Some((GifWriter::create(&path, size.0, size.1)?, path))
        } else {
            None
        };
        let (png, exr, every) = (o.png, o.exr.clone(), o.frame_every);
        Ok(Frames { dir: dir.to_path_buf(), png, gif, exr, every, size, frames: 0, written: Vec::new() })
    }
}

impl Sink for Frames {
    fn step(&mut self, sim: &mut Simulation, k: u32, steps: u32) -> Result<(), Failure> {
        if !k.is_multiple_of(self.every) && k != steps {
            return Ok(());
        }
        let n = self.frames;
        if self.png || self.gif.is_some() {
            let rgba = sim.render()?.rgba;
            if self.png {
                let path = self.dir.join(format!("frame_{n:05}.png"));
                save_png(&path, self.size.0, self.size.1, &rgba)?;
                self.written.push(path);
            }
            if let Some((gif, _)) = self.gif.as_mut() {
                gif.push(rgba, f64::from(sim.time()))?;
            }
        }
        let frame = *sim.frame();
        for field in &self.exr {
            let path = self.dir.join(format!("{field}_{n:05}.exr"));
            let shape = sim.field_info(field)?.shape(&frame);
            save_exr(&path, &shape, &sim.field(field)?)?;
            self.written.push(path);
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>, _sim: &mut Simulation) -> Result<Vec<PathBuf>, Failure> {
        if let Some((gif, path)) = self.gif.take() {
            gif.finish()?;
            self.written.push(path);
        }
        Ok(self.written)
    }
}

/// `--flipbook`: the atlas, a frame at its steps.
struct Book {
    atlas: Atlas,
    dir: PathBuf,
    name: String,
}

impl Sink for Book {
    fn step(&mut self, sim: &mut Simulation, k: u32, _steps: u32) -> Result<(), Failure> {
        if self.atlas.wants(k) { self.atlas.push(&sim.render()?.rgba) } else { Ok(()) }
    }

    fn finish(self: Box<Self>, sim: &mut Simulation) -> Result<Vec<PathBuf>, Failure> {
        self.atlas.write(&self.dir, &self.name, sim.scene().params.dt)
    }
}

/// `--save-every`: a checkpoint every so many steps and after the last.
struct Checkpoints {
    dir: PathBuf,
    every: u32,
    written: Vec<PathBuf>,
}

impl Sink for Checkpoints {
    fn step(&mut self, sim: &mut Simulation, k: u32, steps: u32) -> Result<(), Failure> {
        if k.is_multiple_of(self.every) || k == steps {
            self.written.push(save_checkpoint(sim, &self.dir)?);
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _sim: &mut Simulation) -> Result<Vec<PathBuf>, Failure> {
        Ok(self.written)
    }
}

/// `--dump`: the fields after the last step, or after the step that failed.
struct Dumps {
    dir: PathBuf,
    fields: Vec<String>,
}

impl Sink for Dumps {
    fn step(&mut self, _sim: &mut Simulation, _k: u32, _steps: u32) -> Result<(), Failure> {
        Ok(())
    }

    fn finish(self: Box<Self>, sim: &mut Simulation) -> Result<Vec<PathBuf>, Failure> {
        write_dumps(sim, &self.fields, &self.dir)
    }

    fn failed(&mut self, sim: &mut Simulation, _k: u32) -> Result<Vec<PathBuf>, Failure> {
        write_dumps(sim, &self.fields, &self.dir)
    }
}

/// `DIR/<field>.npy` of each field in `dumps`; the paths written.
pub(crate) fn write_dumps(sim: &mut Simulation, dumps: &[String], out_dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let frame = *sim.frame();
    let mut written = Vec::new();
    for field in dumps {
        let shape = sim.field_info(field)?.shape(&frame);
        let data = sim.field(field)?;
        let path = out_dir.join(format!("{field}.npy"));
        npy::write_f32(&path, &shape, &data).map_err(|e| io_failure(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// `--probe`: the velocity at each point every step, a row at a time into `probes.csv.part`,
/// renamed once the run is done (a run that fails leaves no half-written table).
struct Probes {
    path: PathBuf,
    part: PathBuf,
    points: Vec<[f32; 2]>,
    /// `None` once finished.
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl Probes {
    fn create(dir: &Path, probes: &[[f32; 2]], sim: &Simulation) -> Result<Probes, Failure> {
        let path = dir.join("probes.csv");
        let part = whole::part_path(&path);
        let frame = sim.frame();
        let points = probes.iter().map(|p| [p[0] * frame.width(), p[1] * frame.height()]).collect();
        let mut out = std::io::BufWriter::new(whole::create_new(&part).map_err(|e| io_failure(&part, e))?);
        let header: Vec<String> = (0..probes.len()).map(|k| format!("u{k},v{k}")).collect();
        writeln!(out, "step,time,{}", header.join(",")).map_err(|e| io_failure(&part, e))?;
        Ok(Probes { path, part, points, out: Some(out) })
    }
}

impl Sink for Probes {
    fn step(&mut self, sim: &mut Simulation, k: u32, _steps: u32) -> Result<(), Failure> {
        let (u, v) = (sim.sample("u", &self.points)?, sim.sample("v", &self.points)?);
        let values: Vec<String> = u.iter().zip(&v).map(|(u, v)| format!("{u},{v}")).collect();
        let Some(out) = self.out.as_mut() else { return Err(io_failure(&self.part, "the table is already written")) };
        writeln!(out, "{k},{},{}", sim.time(), values.join(",")).map_err(|e| io_failure(&self.part, e))
    }

    fn finish(mut self: Box<Self>, _sim: &mut Simulation) -> Result<Vec<PathBuf>, Failure> {
        let Some(out) = self.out.take() else { return Err(io_failure(&self.part, "the table is already written")) };
        let done = out.into_inner().map_err(|e| io_failure(&self.part, e.error())).and_then(|file| {
            drop(file);
            std::fs::rename(&self.part, &self.path).map_err(|e| io_failure(&self.path, e))
        });
        if done.is_err() {
            let _ = std::fs::remove_file(&self.part);
        }
        done.map(|()| vec![self.path.clone()])
    }
}

impl Drop for Probes {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// Write DIR/checkpoint_<step>.fluid, whole or not at all.
pub(crate) fn save_checkpoint(sim: &mut Simulation, out_dir: &Path) -> Result<PathBuf, Failure> {
    let path = out_dir.join(format!("checkpoint_{:06}.fluid", sim.steps()));
    let mut failure = None;
    whole::write_whole(&path, |file| {
        let mut w = std::io::BufWriter::new(file);
        sim.save(&mut w).map_err(|e| {
            let message = e.to_string();
            failure = Some(e);
            std::io::Error::other(message)
        })?;
        w.flush()
    })
    .map_err(|e| match failure.take() {
        // The state could not be read: the backend's failure, as it is.
        Some(e @ Error::Backend { .. }) => Failure::from(e),
        _ => io_failure(&path, e),
    })?;
    Ok(path)
}
