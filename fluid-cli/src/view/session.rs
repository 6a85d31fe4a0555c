//! What the viewer does to the simulation, apart from the window: step, drag, change a
//! parameter, reset, switch look, preset or backend, take a picture. The window's panel and
//! its scripted input call these, and the tests call them the same way.

use std::path::{Path, PathBuf};
use std::time::Instant;

use swirly::{Falloff, Layer, Look, RenderField, RenderSpec, Scene, Simulation, Splat};

use crate::Failure;
use crate::frames::GifWriter;

/// Fields and debug views the viewer shows alone (`V`), after the look's or scene's own
/// layers (`None`).
pub(crate) const VIEWS: [Option<RenderField>; 11] = [
    None,
    Some(RenderField::Velocity),
    Some(RenderField::Speed),
    Some(RenderField::Curl),
    Some(RenderField::Pressure),
    Some(RenderField::Divergence),
    Some(RenderField::Density),
    Some(RenderField::Temperature),
    Some(RenderField::Fuel),
    Some(RenderField::Dye),
    Some(RenderField::Obstacles),
];

/// A GIF being recorded from the pictures drawn.
pub(crate) struct Recording {
    pub(crate) path: PathBuf,
    gif: GifWriter,
    size: (u32, u32),
    pub(crate) frames: u64,
    /// When recording began: the GIF plays at the pace the window showed.
    began: Instant,
}

/// Looks the viewer cycles through (`L`), after the scene's own picture (`None`).
pub(crate) const LOOKS: [Option<Look>; 6] =
    [None, Some(Look::Smoke), Some(Look::Fire), Some(Look::Ink), Some(Look::Trails), Some(Look::Liquid)];

/// What a drag splats: its radius (a fraction of the box's shorter side), its strength (the
/// share of the pointer's speed it gives the fluid) and its falloff. Kept across resets,
/// presets and backends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Brush {
    pub(crate) radius: f32,
    pub(crate) strength: f32,
    pub(crate) falloff: Falloff,
}

impl Brush {
    /// The panel's ranges: a radius of 0.5 % to 25 % of the box, a strength up to 4.
    pub(crate) const RADIUS: std::ops::RangeInclusive<f32> = 0.005..=0.25;
    pub(crate) const STRENGTH: std::ops::RangeInclusive<f32> = 0.0..=4.0;
}

impl Default for Brush {
    /// A soft brush of 3 % of the box at half the pointer's speed: a pointer that moved a box
    /// width in a tenth of a second stirs without breaking the scenes' own dt.
    fn default() -> Brush {
        Brush { radius: 0.03, strength: 0.5, falloff: Falloff::Gaussian }
    }
}

/// A simulation in the viewer, with what the panel shows of it.
pub(crate) struct Session {
    pub(crate) sim: Simulation,
    pub(crate) brush: Brush,
    pub(crate) backend: String,
    pub(crate) threads: usize,
    pub(crate) paused: bool,
    /// Host milliseconds of the last step (a GPU backend's include waiting for the picture's
    /// read, which follows it).
    pub(crate) step_ms: f64,
    /// The last error of a panel action or step, shown in the panel.
    pub(crate) message: Option<String>,
    /// Which of [`LOOKS`] is drawn.
    pub(crate) look: usize,
    /// Which of [`VIEWS`] is drawn, and the picture to go back to from a view.
    pub(crate) view: usize,
    before_view: Option<RenderSpec>,
    /// The GIF every picture is added to, while recording.
    pub(crate) recording: Option<Recording>,
    frame: u64,
}

impl Session {
    /// `scene` on the backend named, paused or not.
    pub(crate) fn new(scene: Scene, backend: &str, threads: usize) -> Result<Session, Failure> {
        let sim = Simulation::new(scene, swirly::backend_with_threads(backend, threads)?)?;
        Ok(Session {
            sim,
            brush: Brush::default(),
            backend: backend.to_string(),
            threads,
            paused: false,
            step_ms: 0.0,
            message: None,
            look: 0,
            view: 0,
            before_view: None,
            recording: None,
            frame: 0,
        })
    }

    /// One frame: a step of the scene's `dt` unless paused. An error pauses the simulation
    /// and is shown, rather than closing the window.
    pub(crate) fn frame(&mut self) {
        self.frame += 1;
        if !self.paused {
            self.step();
        }
    }

    /// One step, timed.
    pub(crate) fn step(&mut self) {
        let dt = self.sim.scene().params.dt;
        let start = Instant::now();
        match self.sim.step(dt) {
            Ok(()) => self.step_ms = start.elapsed().as_secs_f64() * 1e3,
            Err(e) => self.fail(e.to_string()),
        }
    }

    fn fail(&mut self, message: String) {
        self.paused = true;
        self.message = Some(message);
    }

    /// A drag from `from` to `to` over `dt` seconds of wall time, both fractions of the box
    /// (0 to 1 across and up): a splat of the [`Brush`] at `to` pushing the fluid the way the
    /// pointer moved, adding density, heat and a dye whose hue turns with time where the scene
    /// carries them (on a particle liquid, a push).
    pub(crate) fn drag(&mut self, from: [f32; 2], to: [f32; 2], dt: f32) {
        let grid = *self.sim.frame();
        let (w, h) = (grid.width(), grid.height());
        let world = |p: [f32; 2]| [p[0] * w, p[1] * h];
        let (a, b) = (world(from), world(to));
        let dt = dt.max(1e-3);
        let k = self.brush.strength;
        let velocity = [k * (b[0] - a[0]) / dt, k * (b[1] - a[1]) / dt];
        let hue = (self.frame as f32 / 240.0).fract();
        let splat = Splat {
            center: b,
            radius: self.brush.radius * h.min(w),
            falloff: self.brush.falloff,
            velocity,
            density: 0.5,
            temperature: 0.0,
            dye: rainbow(hue).map(|c| 0.25 * c),
            ..Splat::default()
        };
        let splat = self.sim.pointer(splat);
        if let Err(e) = self.sim.splat(splat) {
            self.message = Some(e.to_string());
        }
    }

    /// Set a scene value by its TOML path, as `--set KEY=VALUE` does, and carry on with the
    /// state kept: what the panel's sliders call. A value the scene refuses is an error
    /// naming it, and the simulation runs on unchanged.
    pub(crate) fn set(&mut self, key: &str, value: &str) -> Result<(), Failure> {
        let item = swirly::scene::parse_override(&format!("{key}={value}"))?;
        let scene = self.sim.scene().with_overrides("the viewer", &[item])?;
        self.sim.set_scene(scene)?;
        Ok(())
    }

    /// [`Session::set`], its error kept for the panel.
    pub(crate) fn set_shown(&mut self, key: &str, value: &str) {
        match self.set(key, value) {
            Ok(()) => self.message = None,
            Err(f) => self.message = Some(f.message),
        }
    }

    /// Back to the scene's start.
    pub(crate) fn reset(&mut self) {
        if let Err(e) = self.sim.reset() {
            self.fail(e.to_string());
        }
    }

    /// Draw with look `k` of [`LOOKS`] (0: the scene's own picture); it ends a view.
    pub(crate) fn set_look(&mut self, k: usize) {
        let k = k % LOOKS.len();
        let value = LOOKS[k].map(|look| format!("{look:?}").to_lowercase());
        let mut scene = self.sim.scene().clone();
        if let Some(render) = self.before_view.clone() {
            scene.render = render;
        }
        scene.render.look = LOOKS[k];
        match self.sim.set_scene(scene) {
            Ok(()) => {
                self.look = k;
                self.view = 0;
                self.before_view = None;
                self.message = None;
            }
            Err(e) => self.message = Some(format!("look {}: {e}", value.unwrap_or_default())),
        }
    }

    /// Show view `k` of [`VIEWS`] alone: a field or debug view, its scale the largest value it
    /// holds now (so it shows at once); 0 goes back to the look's or scene's own layers. A
    /// field the scene does not carry is refused in the panel, and the picture stays.
    pub(crate) fn set_view(&mut self, k: usize) {
        let k = k % VIEWS.len();
        let mut scene = self.sim.scene().clone();
        let before = self.before_view.clone().unwrap_or_else(|| scene.render.clone());
        scene.render = match VIEWS[k] {
            None => before.clone(),
            Some(field) => RenderSpec {
                layers: vec![Layer { field, scale: self.scale_of(field), ..Layer::default() }],
                look: None,
                ..before.clone()
            },
        };
        match scene.check_render().and_then(|()| self.sim.set_scene(scene)) {
            Ok(()) => {
                self.view = k;
                self.before_view = VIEWS[k].map(|_| before);
                self.message = None;
            }
            Err(e) => {
                let name = VIEWS[k].map(|f| format!("{f:?}").to_lowercase()).unwrap_or_default();
                self.message = Some(format!("view {name}: {e}"));
            }
        }
    }

    /// The largest magnitude `field` shows now (1 where there is none yet, or it cannot be read).
    fn scale_of(&mut self, field: RenderField) -> f32 {
        let ambient = self.sim.scene().params.buoyancy.ambient_temperature;
        let largest = |sim: &mut Simulation, id: &str, offset: f32| {
            sim.field(id).map(|v| v.iter().fold(0.0f32, |m, x| m.max((x - offset).abs()))).unwrap_or(0.0)
        };
        let m = match field {
            RenderField::Velocity | RenderField::Speed => {
                largest(&mut self.sim, "u", 0.0).max(largest(&mut self.sim, "v", 0.0))
            }
            RenderField::Temperature => largest(&mut self.sim, "temperature", ambient),
            RenderField::Dye | RenderField::Obstacles => 1.0,
            f => largest(&mut self.sim, f.source(), 0.0),
        };
        if m.is_finite() && m > 0.0 { m } else { 1.0 }
    }

    /// Another preset (or scene file), from its start, on the same backend.
    pub(crate) fn open(&mut self, scene: Scene) {
        match Session::new(scene, &self.backend, self.threads) {
            Ok(s) => *self = Session { paused: self.paused, recording: self.recording.take(), ..s },
            Err(f) => self.message = Some(f.message),
        }
    }

    /// The same state on another backend: saved as a checkpoint and restored there, so the
    /// flow carries on where it was.
    pub(crate) fn switch_backend(&mut self, name: &str) {
        let moved = (|| -> Result<Simulation, Failure> {
            let mut bytes = Vec::new();
            self.sim.save(&mut bytes)?;
            let backend = swirly::backend_with_threads(name, self.threads)?;
            Ok(Simulation::load(bytes.as_slice(), backend)?)
        })();
        match moved {
            Ok(sim) => {
                self.sim = sim;
                self.backend = name.to_string();
                self.message = None;
            }
            Err(f) => self.message = Some(f.message),
        }
    }

    /// The current picture: width, height and RGBA8 rows, top first; added to the GIF while
    /// recording (a picture of another size, after a switch of look or preset, ends the GIF).
    pub(crate) fn picture(&mut self) -> Result<(u32, u32, Vec<u8>), Failure> {
        let swirly::Picture { width: w, height: h, rgba } = self.sim.render()?;
        if let Some(r) = self.recording.as_mut() {
            if r.size == (w, h) {
                r.gif.push(rgba.clone(), r.began.elapsed().as_secs_f64())?;
                r.frames += 1;
            } else {
                let why = format!("the picture changed size to {w} x {h}");
                self.stop_gif()?;
                self.message = Some(format!("GIF stopped: {why}"));
            }
        }
        Ok((w, h, rgba))
    }

    /// Start recording every picture drawn from now on to a GIF at `path`.
    pub(crate) fn start_gif(&mut self, path: &Path) -> Result<(), Failure> {
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(|e| crate::io_failure(folder, e))?;
        }
        let size = self.sim.picture_size();
        let gif = GifWriter::create(path, size.0, size.1)?;
        self.recording = Some(Recording { path: path.to_path_buf(), gif, size, frames: 0, began: Instant::now() });
        Ok(())
    }

    /// Finish the GIF being recorded, if any: its path and frames.
    pub(crate) fn stop_gif(&mut self) -> Result<Option<(PathBuf, u64)>, Failure> {
        let Some(r) = self.recording.take() else { return Ok(None) };
        r.gif.finish()?;
        Ok(Some((r.path, r.frames)))
    }

    /// What the G key does: start recording to `path`, or finish the GIF; the outcome is
    /// shown in the panel.
    pub(crate) fn toggle_gif(&mut self, path: &Path) {
        let done =
            if self.recording.is_some() { self.stop_gif().map(Some) } else { self.start_gif(path).map(|()| None) };
        match done {
            Ok(Some(Some((path, frames)))) => {
                self.message = Some(format!("wrote {} ({frames} frames)", path.display()))
            }
            Ok(_) => self.message = None,
            Err(f) => self.message = Some(f.message),
        }
    }
}

/// A fully saturated colour of hue `h` (0 to 1), linear RGB with alpha 1.
fn rainbow(h: f32) -> [f32; 4] {
    let k = |n: f32| {
        let k = (n + h * 6.0).rem_euclid(6.0);
        1.0 - k.min(4.0 - k).clamp(0.0, 1.0)
    };
    [k(5.0), k(3.0), k(1.0), 1.0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(preset: &str) -> Session {
        small_with(preset, &[])
    }

    /// `preset` at 32² with `extra` overrides, on the CPU.
    fn small_with(preset: &str, extra: &[&str]) -> Session {
        let ov: Vec<_> = ["grid.nx=32", "grid.ny=32"]
            .iter()
            .chain(extra)
            .map(|s| swirly::scene::parse_override(s).expect("override"))
            .collect();
        Session::new(Scene::preset_with(preset, &ov).expect("scene"), "cpu", 1).expect("session")
    }

    /// The panel's brush shapes every drag: a wider brush covers more cells, a stronger one
    /// pushes harder, and a constant one gives each cell it covers the whole amount.
    #[test]
    fn the_brush_shapes_a_drag() {
        let dragged = |brush: Brush| {
            let mut s = small_with("ink", &["emitters=[]", "splats=[]"]);
            s.brush = brush;
            s.drag([0.45, 0.5], [0.5, 0.5], 1.0 / 60.0);
            s.step();
            assert_eq!(s.message, None);
            let dye = s.sim.field("dye").expect("dye");
            let covered = dye.chunks_exact(4).filter(|c| c[3] > 1e-3).count();
            let full = dye.chunks_exact(4).filter(|c| c[3] > 0.2).count();
            let u = s.sim.field("u").expect("u");
            (covered, full, u.iter().fold(0.0f32, |m, x| m.max(x.abs())))
        };
        let soft = Brush::default();
        let (small_covered, _, soft_push) = dragged(soft);
        let (wide_covered, _, _) = dragged(Brush { radius: 0.15, ..soft });
        let (_, _, strong_push) = dragged(Brush { strength: 2.0, ..soft });
        assert!(wide_covered > 4 * small_covered, "{wide_covered} cells against {small_covered}");
        assert!(strong_push > 2.0 * soft_push, "{strong_push} against {soft_push}");
        let (_, disc, _) = dragged(Brush { falloff: Falloff::Constant, radius: 0.15, ..soft });
        let (_, cone, _) = dragged(Brush { falloff: Falloff::Linear, radius: 0.15, ..soft });
        assert!(disc > 3 * cone, "cells near the whole amount: a hard disc {disc}, a cone {cone}");
    }

    /// Recording: every picture drawn while recording is a frame of the GIF, of the
    /// picture's size, and the file appears whole when the recording stops.
    #[test]
    fn a_recording_keeps_every_picture_drawn() {
        let mut s = small("smoke");
        let dir = std::env::temp_dir().join(format!("fluid-view-gif-{}", std::process::id()));
        let path = dir.join("rec.gif");
        s.start_gif(&path).expect("start");
        for k in 0..5 {
            s.drag([0.3, 0.5], [0.32 + 0.02 * k as f32, 0.5], 1.0 / 60.0);
            s.frame();
            s.picture().expect("picture");
        }
        assert!(!path.exists(), "the GIF is written whole at the end");
        let (written, frames) = s.stop_gif().expect("stop").expect("was recording");
        assert_eq!((written.as_path(), frames), (path.as_path(), 5));
        let mut decoder = gif::DecodeOptions::new();
        decoder.set_color_output(gif::ColorOutput::RGBA);
        let mut d = decoder.read_info(std::fs::File::open(&path).expect("open")).expect("a GIF");
        assert_eq!((d.width(), d.height()), (32, 32));
        let mut n = 0;
        let mut lit = false;
        while let Some(f) = d.read_next_frame().expect("frame") {
            lit |= f.buffer.chunks_exact(4).any(|p| p[0] > 64);
            n += 1;
        }
        assert_eq!(n, 5);
        assert!(lit, "the drag's smoke shows in the frames");
        assert_eq!(s.stop_gif().expect("stop").map(|r| r.1), None, "nothing left to stop");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A view shows one field alone, scaled to what it holds now, and going back restores the
    /// scene's picture; a field the scene does not carry is refused and the picture stays.
    #[test]
    fn a_view_shows_one_field_and_goes_back() {
        let mut s = small("smoke");
        for _ in 0..5 {
            s.drag([0.3, 0.5], [0.5, 0.5], 1.0 / 60.0);
            s.frame();
        }
        let own = s.sim.scene().render.clone();
        let pressure = VIEWS.iter().position(|v| *v == Some(RenderField::Pressure)).expect("pressure");
        s.set_view(pressure);
        let layers = s.sim.scene().render.layers.clone();
        assert_eq!((s.view, layers.len(), layers[0].field), (pressure, 1, RenderField::Pressure));
        let p = s.sim.field("pressure").expect("pressure");
        let largest = p.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert!(largest > 0.0 && layers[0].scale == largest, "scale {} for {largest}", layers[0].scale);
        s.picture().expect("picture");
        let fuel = VIEWS.iter().position(|v| *v == Some(RenderField::Fuel)).expect("fuel");
        s.set_view(fuel);
        assert!(s.message.as_deref().is_some_and(|m| m.contains("fuel")), "{:?}", s.message);
        assert_eq!(s.view, pressure, "the picture stays");
        s.set_view(0);
        assert_eq!((s.view, &s.sim.scene().render), (0, &own));
    }

    /// The panel's path: a parameter set through [`Session::set`] is the simulation's own
    /// from then on, and a bad value is refused by name with the simulation unchanged.
    #[test]
    fn a_panel_change_reaches_the_simulation() {
        let mut s = small("smoke");
        s.set("params.viscosity", "0.0125").expect("set");
        assert_eq!(s.sim.scene().params.viscosity, 0.0125);
        let e = s.set("params.viscosity", "-1").expect_err("refused");
        assert!(e.message.contains("params.viscosity") && e.message.contains("-1"), "{}", e.message);
        assert_eq!(s.sim.scene().params.viscosity, 0.0125);
        s.set_look(2);
        assert_eq!(s.sim.scene().render.look, Some(Look::Fire));
    }

    /// A drag puts density where it went and nowhere far from it.
    #[test]
    fn a_drag_stirs_where_it_went() {
        let mut s = small("ink");
        for k in 0..5 {
            let x = 0.7 + 0.02 * k as f32;
            s.drag([x - 0.02, 0.3], [x, 0.3], 1.0 / 60.0);
            s.frame();
        }
        let dye = s.sim.field("dye").expect("dye");
        let at = |i: usize, j: usize| dye[4 * (j * 32 + i) + 3];
        assert!(at(25, 9) > 0.05, "dye under the drag: {}", at(25, 9));
        assert!(at(3, 28) < 1e-3, "dye far from it: {}", at(3, 28));
    }

    /// Switching backend keeps the state (the CPU to the CPU here: bit for bit).
    #[test]
    fn switching_backend_keeps_the_flow() {
        let mut s = small("smoke");
        for _ in 0..5 {
            s.frame();
        }
        let before = s.sim.field("density").expect("density");
        s.switch_backend("cpu");
        assert_eq!(s.message, None);
        assert_eq!(s.sim.field("density").expect("density"), before);
        s.switch_backend("metal");
        assert!(s.message.as_deref().is_some_and(|m| m.contains("metal")), "{:?}", s.message);
    }
}
