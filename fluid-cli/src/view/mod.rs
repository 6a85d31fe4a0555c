//! `fluid view`: a scene in a window (winit, drawn by wgpu) with a parameter panel (egui on
//! the same wgpu). Drag to stir; the panel and the keys pause, step, reset, switch look, view,
//! preset and backend, take a screenshot, record a GIF. `--drag`, `--frames` and
//! `--screenshot` script a run for tests: the drag goes through the same [`Session::drag`] as
//! the mouse (a finger on a touch screen drives the same pointer, through egui-winit).
//! `--headless` runs the frames without a window and reports their time.

mod session;

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{Arc, mpsc};
use std::time::Instant;

use egui::{ViewportId, load::SizedTexture};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, KeyEvent, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

use crate::{Failure, load_scene};
pub(crate) use session::Session;
use session::{LOOKS, VIEWS};

/// What `fluid view` was asked for.
#[derive(Debug)]
pub(crate) struct ViewConfig {
    pub scene: String,
    pub overrides: Vec<String>,
    pub backend: String,
    pub threads: usize,
    /// A scripted drag: from and to, fractions of the box, over the first frames.
    pub drag: Option<([f32; 2], [f32; 2])>,
    /// Close after this many frames.
    pub frames: Option<u64>,
    /// Where a screenshot of the window goes (`S`, and at the end of a scripted run); a GIF
    /// recorded with `G` goes beside it, as `.gif`.
    pub screenshot: PathBuf,
    /// Record every frame's picture to this GIF from the start.
    pub gif: Option<PathBuf>,
    /// Run the frames without a window and report their time.
    pub headless: bool,
    /// Start paused (frames draw the picture without stepping).
    pub paused: bool,
    /// With `headless`: report each kernel's device time per frame too.
    pub timings: bool,
}

/// Frames a scripted drag lasts.
const DRAG_FRAMES: u64 = 12;

/// Open the window and run until it is closed (or `frames` have been drawn); with
/// `headless`, run the frames without one ([`headless`]).
pub(crate) fn view(config: ViewConfig) -> Result<(), Failure> {
    let scene = load_scene(&config.scene, &config.overrides)?;
    let mut session = Session::new(scene, &config.backend, config.threads)?;
    session.paused = config.paused;
    if let Some(path) = &config.gif {
        session.start_gif(path)?;
    }
    if config.headless {
        return headless(&config, session);
    }
    let event_loop = EventLoop::new().map_err(|e| window_failure(format!("no window system here: {e}")))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App { config, session, gui: None, failure: None, frames: 0, last_frame: Instant::now() };
    event_loop.run_app(&mut app).map_err(|e| window_failure(e.to_string()))?;
    if let Some(f) = app.failure {
        return Err(f);
    }
    finish_gif(&mut app.session)
}

/// Finish a GIF still recording, saying where it went.
fn finish_gif(session: &mut Session) -> Result<(), Failure> {
    if let Some((path, frames)) = session.stop_gif()? {
        println!("wrote {} ({frames} frames)", path.display());
    }
    Ok(())
}

/// The scripted drag's move at frame `k` (from 1): from and to, over the first
/// [`DRAG_FRAMES`] frames.
fn scripted(config: &ViewConfig, k: u64) -> Option<([f32; 2], [f32; 2])> {
    let (from, to) = config.drag?;
    let at = |k: u64| {
        let s = k as f32 / DRAG_FRAMES as f32;
        [from[0] + (to[0] - from[0]) * s, from[1] + (to[1] - from[1]) * s]
    };
    (k <= DRAG_FRAMES).then(|| (at(k - 1), at(k)))
}

/// The viewer's frames without a window: the scripted drag, the step and the picture read
/// back, as the window does them, timed; the medians are printed. Drawing the window (the
/// picture's texture and the panel) is not included.
fn headless(config: &ViewConfig, mut session: Session) -> Result<(), Failure> {
    let frames = config.frames.unwrap_or(300);
    if config.timings {
        session.sim.backend_mut().set_timing(true)?;
    }
    let (mut whole, mut steps, mut pictures) = (Vec::new(), Vec::new(), Vec::new());
    for k in 1..=frames {
        let start = Instant::now();
        if let Some((from, to)) = scripted(config, k) {
            session.drag(from, to, 1.0 / 60.0);
        }
        session.frame();
        if let Some(m) = session.message.take().filter(|_| session.paused) {
            return Err(Failure { code: 1, message: format!("frame {k}: {m}") });
        }
        let drawn = Instant::now();
        session.picture()?;
        let end = Instant::now();
        whole.push(end.duration_since(start).as_secs_f64() * 1e3);
        steps.push(drawn.duration_since(start).as_secs_f64() * 1e3);
        pictures.push(end.duration_since(drawn).as_secs_f64() * 1e3);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (w, h) = session.sim.picture_size();
    let grid = *session.sim.frame();
    let ms = median(&mut whole);
    println!(
        "{} {}x{} on {} ({}): {frames} frames, median {ms:.3} ms a frame (step {:.3} ms, {w}x{h} picture {:.3} ms), \
         {:.0} frames/s without the window's drawing",
        session.sim.scene().name,
        grid.nx,
        grid.ny,
        session.backend,
        session.sim.backend().device(),
        median(&mut steps),
        median(&mut pictures),
        1e3 / ms
    );
    if config.timings {
        for t in session.sim.backend_mut().take_timings()? {
            let each = t.ms * 1e3 / f64::from(t.invocations.max(1));
            let per_frame = f64::from(t.invocations) / frames as f64;
            println!("  {:<26} {per_frame:>6.2} a frame, {each:>9.2} µs each", t.label);
        }
    }
    finish_gif(&mut session)
}

/// What to do when no graphics driver can draw into a window.
const NO_SURFACE_HINT: &str = "The viewer draws through a Vulkan or OpenGL driver: install one (Debian or \
Ubuntu: `apt-get install mesa-vulkan-drivers libvulkan1`, software Vulkan if there is no GPU), or \
render without a window: `fluid run <scene> --png`";

fn window_failure(message: String) -> Failure {
    Failure { code: 1, message: format!("fluid view: {message}") }
}

/// The window and what draws into it.
struct Gui {
    window: Arc<Window>,
    painter: egui_wgpu::winit::Painter,
    input: egui_winit::State,
    ctx: egui::Context,
    picture: Option<egui::TextureHandle>,
    /// Where the last drag was, in fractions of the box.
    pointer: Option<[f32; 2]>,
    /// A screenshot asked for, and where its pixels arrive.
    shots: Option<mpsc::Receiver<Arc<egui::ColorImage>>>,
    shot_asked: bool,
}

struct App {
    config: ViewConfig,
    session: Session,
    gui: Option<Gui>,
    failure: Option<Failure>,
    frames: u64,
    last_frame: Instant,
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, failure: Failure) {
        self.failure = Some(failure);
        event_loop.exit();
    }

    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<Gui, Failure> {
        let attributes = Window::default_attributes()
            .with_title(format!("fluid view: {}", self.session.sim.scene().name))
            .with_inner_size(winit::dpi::LogicalSize::new(1000.0, 720.0));
        let window = Arc::new(event_loop.create_window(attributes).map_err(|e| window_failure(e.to_string()))?);
        let ctx = egui::Context::default();
        let config = egui_wgpu::WgpuConfiguration {
            wgpu_setup: egui_wgpu::WgpuSetup::from_display_handle(event_loop.owned_display_handle()),
            ..Default::default()
        };
        let mut painter = pollster::block_on(egui_wgpu::winit::Painter::new(
            ctx.clone(),
            config,
            false,
            egui_wgpu::RendererOptions::default(),
        ));
        pollster::block_on(painter.set_window(ViewportId::ROOT, Some(window.clone())))
            .map_err(|e| window_failure(format!("cannot draw into the window: {e}. {NO_SURFACE_HINT}")))?;
        let input = egui_winit::State::new(
            ctx.clone(),
            ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            painter.max_texture_side(),
        );
        Ok(Gui { window, painter, input, ctx, picture: None, pointer: None, shots: None, shot_asked: false })
    }

    /// One frame: the scripted input, a step, the picture, the panel, and the paint.
    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        let now = Instant::now();
        let wall = now.duration_since(self.last_frame).as_secs_f32();
        self.last_frame = now;
        self.frames += 1;
        if let Some((from, to)) = scripted(&self.config, self.frames) {
            // Scripted frames are a 60th of a second apart, whatever the machine's pace.
            self.session.drag(from, to, 1.0 / 60.0);
        }
        self.session.frame();
        let picture = match self.session.picture() {
            Ok(p) => p,
            Err(f) => return self.fail(event_loop, f),
        };
        let last = self.config.frames.is_some_and(|n| self.frames >= n);
        let Some(gui) = self.gui.as_mut() else { return };
        let image = egui::ColorImage::from_rgba_unmultiplied([picture.0 as usize, picture.1 as usize], &picture.2);
        match &mut gui.picture {
            Some(t) => t.set(image, egui::TextureOptions::LINEAR),
            None => gui.picture = Some(gui.ctx.load_texture("fluid", image, egui::TextureOptions::LINEAR)),
        }
        let raw = gui.input.take_egui_input(&gui.window);
        let mut actions = Vec::new();
        let texture = gui.picture.as_ref().map(|t| (t.id(), picture.0, picture.1));
        let mut drag = None;
        let full = gui.ctx.run_ui(raw, |ui| {
            panel(ui, &self.session, &mut actions);
            egui::CentralPanel::default().show(ui, |ui| {
                let Some((id, w, h)) = texture else { return };
                let room = ui.available_size();
                let scale = (room.x / w as f32).min(room.y / h as f32).max(0.01);
                let size = egui::vec2(w as f32 * scale, h as f32 * scale);
                let response = ui
                    .centered_and_justified(|ui| {
                        ui.add(egui::Image::from_texture(SizedTexture::new(id, size)).sense(egui::Sense::drag()))
                    })
                    .inner;
                if response.dragged()
                    && let Some(p) = response.interact_pointer_pos()
                {
                    let r = response.rect;
                    drag = Some([(p.x - r.left()) / r.width(), (r.bottom() - p.y) / r.height()]);
                }
            });
        });
        match drag {
            Some(here) => {
                let from = gui.pointer.unwrap_or(here);
                gui.pointer = Some(here);
                self.session.drag(from, here, wall);
            }
            None => gui.pointer = None,
        }
        gui.input.handle_platform_output(&gui.window, full.platform_output);
        let primitives = gui.ctx.tessellate(full.shapes, full.pixels_per_point);
        let mut captures = Vec::new();
        if (gui.shot_asked || last) && gui.shots.is_none() {
            let (tx, rx) = mpsc::channel();
            captures.push(egui::ScreenshotCallback::new(move |image| {
                let _ = tx.send(image);
            }));
            gui.shots = Some(rx);
            gui.shot_asked = false;
        }
        let mut delta = full.textures_delta;
        gui.painter.paint_and_update_textures(
            ViewportId::ROOT,
            full.pixels_per_point,
            [0.0, 0.0, 0.0, 1.0],
            &primitives,
            &mut delta,
            captures,
            &gui.window,
        );
        if let Some(rx) = &gui.shots
            && let Ok(image) = rx.try_recv()
        {
            gui.shots = None;
            let path = self.config.screenshot.clone();
            let rgba: Vec<u8> = image.pixels.iter().flat_map(|p| p.to_srgba_unmultiplied()).collect();
            let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
            let saved = folder
                .map_or(Ok(()), |p| std::fs::create_dir_all(p).map_err(|e| crate::io_failure(p, e)))
                .and_then(|()| crate::frames::save_png(&path, image.size[0] as u32, image.size[1] as u32, &rgba));
            match saved {
                Ok(()) => println!("wrote {}", path.display()),
                Err(f) if last => return self.fail(event_loop, f),
                Err(f) => self.session.message = Some(f.message),
            }
            if last {
                return event_loop.exit();
            }
        }
        for action in actions {
            self.act(action);
        }
        // A scripted run waits for its screenshot before closing.
        if last && self.gui.as_ref().is_some_and(|g| g.shots.is_none()) && self.config.frames.is_some() {
            event_loop.exit();
        }
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::Pause => self.session.paused = !self.session.paused,
            Action::Step => {
                self.session.paused = true;
                self.session.step();
            }
            Action::Reset => self.session.reset(),
            Action::Look(k) => self.session.set_look(k),
            Action::View(k) => self.session.set_view(k),
            Action::Screenshot => {
                if let Some(g) = self.gui.as_mut() {
                    g.shot_asked = true;
                }
            }
            Action::Gif => self.session.toggle_gif(&self.config.screenshot.with_extension("gif")),
            Action::Set(key, value) => self.session.set_shown(&key, &value),
            Action::Preset(name) => match load_scene(&name, &[]) {
                Ok(scene) => self.session.open(scene),
                Err(f) => self.session.message = Some(f.message),
            },
            Action::Backend(name) => self.session.switch_backend(&name),
            Action::Brush(brush) => self.session.brush = brush,
        }
    }

    fn key(&mut self, event_loop: &ActiveEventLoop, key: &Key) {
        let action = match key {
            Key::Named(NamedKey::Space) => Action::Pause,
            Key::Named(NamedKey::Escape) => return event_loop.exit(),
            Key::Character(c) => match c.to_lowercase().as_str() {
                "n" => Action::Step,
                "r" => Action::Reset,
                "l" => Action::Look(self.session.look + 1),
                "v" => Action::View(self.session.view + 1),
                "s" => Action::Screenshot,
                "g" => Action::Gif,
                _ => return,
            },
            _ => return,
        };
        self.act(action);
    }
}

/// What the panel asked for this frame, done after it is drawn.
enum Action {
    Pause,
    Step,
    Reset,
    Look(usize),
    View(usize),
    Screenshot,
    Gif,
    Set(String, String),
    Preset(String),
    Backend(String),
    Brush(session::Brush),
}

/// The scene's numbers the panel offers, by TOML path: every number of `params` and
/// `particles` (tables within them too), as the scene holds them now, and whether it is an
/// integer (a count: iterations, substeps).
fn numbers(scene: &swirly::Scene) -> Vec<(String, f64, bool)> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, f64, bool)>) {
        match v {
            serde_json::Value::Number(x) => out.extend(x.as_f64().map(|v| (prefix.to_string(), v, !x.is_f64()))),
            serde_json::Value::Object(t) => {
                for (k, v) in t {
                    walk(&format!("{prefix}.{k}"), v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(serde_json::Value::Object(t)) = serde_json::to_value(scene) {
        for section in ["params", "particles"] {
            if let Some(v) = t.get(section) {
                walk(section, v, &mut out);
            }
        }
    }
    out
}

/// The drag's brush: falloff, radius (a fraction of the box) and strength.
fn brush_row(ui: &mut egui::Ui, brush: session::Brush, actions: &mut Vec<Action>) {
    use swirly::Falloff;
    let mut b = brush;
    ui.horizontal(|ui| {
        ui.label("Brush");
        let name = |f: Falloff| format!("{f:?}").to_lowercase();
        egui::ComboBox::from_id_salt("brush").selected_text(name(b.falloff)).show_ui(ui, |ui| {
            for f in Falloff::ALL {
                ui.selectable_value(&mut b.falloff, f, name(f));
            }
        });
        ui.add(egui::DragValue::new(&mut b.radius).range(session::Brush::RADIUS).speed(0.001).prefix("radius "));
        ui.add(egui::DragValue::new(&mut b.strength).range(session::Brush::STRENGTH).speed(0.01).prefix("strength "));
    });
    if b != brush {
        actions.push(Action::Brush(b));
    }
}

/// The side panel: state, figures, controls and the scene's numbers.
fn panel(ui: &mut egui::Ui, s: &Session, actions: &mut Vec<Action>) {
    egui::Panel::left("panel").default_size(300.0).show(ui, |ui| {
        let scene = s.sim.scene();
        ui.heading(format!("{} on {}", scene.name, s.backend));
        let grid = s.sim.frame();
        ui.label(format!(
            "{}×{} · step {} · t = {:.2} s · {:.2} ms/step · {} solver iterations",
            grid.nx,
            grid.ny,
            s.sim.steps(),
            s.sim.time(),
            s.step_ms,
            s.sim.last_iterations()
        ));
        ui.horizontal(|ui| {
            if ui.button(if s.paused { "Run" } else { "Pause" }).clicked() {
                actions.push(Action::Pause);
            }
            if ui.button("Step").clicked() {
                actions.push(Action::Step);
            }
            if ui.button("Reset").clicked() {
                actions.push(Action::Reset);
            }
            if ui.button("Screenshot").clicked() {
                actions.push(Action::Screenshot);
            }
            if ui.button(if s.recording.is_some() { "Stop GIF" } else { "Record GIF" }).clicked() {
                actions.push(Action::Gif);
            }
        });
        ui.horizontal(|ui| {
            ui.label("Look");
            let name = |k: usize| LOOKS[k].map_or("the scene's".to_string(), |l| format!("{l:?}").to_lowercase());
            egui::ComboBox::from_id_salt("look").selected_text(name(s.look)).show_ui(ui, |ui| {
                for k in 0..LOOKS.len() {
                    if ui.selectable_label(k == s.look, name(k)).clicked() {
                        actions.push(Action::Look(k));
                    }
                }
            });
        });
        ui.horizontal(|ui| {
            ui.label("View");
            let name = |k: usize| VIEWS[k].map_or("the look's".to_string(), |f| format!("{f:?}").to_lowercase());
            egui::ComboBox::from_id_salt("view").selected_text(name(s.view)).show_ui(ui, |ui| {
                for k in 0..VIEWS.len() {
                    if ui.selectable_label(k == s.view, name(k)).clicked() {
                        actions.push(Action::View(k));
                    }
                }
            });
        });
        ui.horizontal(|ui| {
            ui.label("Preset");
            egui::ComboBox::from_id_salt("preset").selected_text(scene.name.clone()).show_ui(ui, |ui| {
                for (name, _) in swirly::scene::PRESETS {
                    if ui.selectable_label(*name == scene.name, *name).clicked() {
                        actions.push(Action::Preset(name.to_string()));
                    }
                }
            });
        });
        ui.horizontal(|ui| {
            ui.label("Backend");
            for name in swirly::BACKENDS {
                if ui.selectable_label(*name == s.backend, *name).clicked() && *name != s.backend {
                    actions.push(Action::Backend(name.to_string()));
                }
            }
        });
        brush_row(ui, s.brush, actions);
        if let Some(m) = &s.message {
            ui.colored_label(egui::Color32::from_rgb(240, 120, 90), m);
        }
        ui.separator();
        ui.small(crate::VIEW_KEYS);
        ui.separator();
        egui::ScrollArea::vertical().show(ui, |ui| {
            for (key, value, integer) in numbers(scene) {
                let mut v = value;
                ui.horizontal(|ui| {
                    let drag = if integer {
                        egui::DragValue::new(&mut v).speed(0.2).fixed_decimals(0)
                    } else {
                        egui::DragValue::new(&mut v).speed((value.abs() * 0.01).max(1e-4))
                    };
                    if ui.add(drag).changed() && v != value {
                        let text = if integer { format!("{}", v.round() as i64) } else { format!("{v}") };
                        actions.push(Action::Set(key.clone(), text));
                    }
                    ui.label(&key);
                });
            }
        });
    });
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gui.is_some() {
            return;
        }
        match self.open(event_loop) {
            Ok(gui) => {
                gui.window.request_redraw();
                self.gui = Some(gui);
            }
            Err(f) => self.fail(event_loop, f),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some(gui) = self.gui.as_mut() else { return };
        let response = gui.input.on_window_event(&gui.window, &event);
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let (Some(w), Some(h)) = (NonZeroU32::new(size.width), NonZeroU32::new(size.height)) {
                    gui.painter.on_window_resized(ViewportId::ROOT, w, h);
                }
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            WindowEvent::KeyboardInput {
                event: KeyEvent { logical_key, state: ElementState::Pressed, .. }, ..
            } if !response.consumed => {
                self.key(event_loop, &logical_key);
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        if let Some(gui) = &self.gui {
            gui.window.request_redraw();
        }
    }
}
