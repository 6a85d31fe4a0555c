//! A game's loop around a simulation: the pointer's drag becomes splats, the simulation takes
//! one step per frame, and the dye under the pointer comes back a frame late, so that no frame
//! waits for the GPU to read it. Frames are paced at 60 per second, as a game's are by its
//! display; the rest of each frame is a sleep standing for the game's other work.
//!
//! ```sh
//! cargo run --release -p swirly --example game_loop                    # on the CPU
//! cargo run --release -p swirly --features wgpu --example game_loop -- wgpu 600
//! ```
//!
//! Arguments: the backend (`cpu`, `wgpu`, `vulkan`; default `cpu`) and the number of frames
//! (default 300, five seconds). Writes `out/examples/game_loop.png` and prints what the
//! simulation cost the calling thread per frame.

use std::collections::VecDeque;
use std::f32::consts::TAU;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use swirly::{Falloff, FieldId, PendingSample, Scene, Simulation, Splat};

/// One frame at 60 frames per second.
const FRAME: Duration = Duration::from_micros(16_667);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let backend = args.next().unwrap_or_else(|| "cpu".to_string());
    let frames: u32 = match args.next() {
        Some(text) => text.parse().map_err(|e| format!("frames: `{text}` is not a count ({e})"))?,
        None => 300,
    };
    if frames == 0 {
        return Err("frames: 0 (run at least one)".into());
    }

    // The ink preset without its jets: the only ink is what the pointer puts in.
    let mut scene = Scene::preset("ink")?;
    scene.emitters.clear();
    scene.splats.clear();
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, swirly::backend(&backend)?)?;
    let (width, height) = (sim.frame().width(), sim.frame().height());

    // Pending reads of the dye under the pointer, oldest first, with the frame that asked.
    let mut asked: VecDeque<(u32, PendingSample)> = VecDeque::new();
    let mut frame_ms = Vec::with_capacity(frames as usize);
    let (mut answered, mut most_late, mut brightest) = (0u32, 0u32, 0.0f32);
    let mut last = pointer(0.0, width, height);
    for frame in 0..frames {
        let start = Instant::now();
        // Input: where the pointer is now, and how fast it moved since the last frame.
        let here = pointer(frame as f32 * dt, width, height);
        let velocity = [(here[0] - last[0]) / dt, (here[1] - last[1]) / dt];
        last = here;
        sim.splat(Splat {
            center: here,
            radius: 0.025 * height,
            falloff: Falloff::Gaussian,
            velocity: [0.5 * velocity[0], 0.5 * velocity[1]],
            dye: hue(frame as f32 / 240.0).map(|c| 0.12 * c),
            ..Splat::default()
        })?;
        sim.step(dt)?;
        // Ask for the dye under the pointer now; take the answers that have come back.
        asked.push_back((frame, sim.request_sample(FieldId::Dye, &[here])?));
        while let Some((at, pending)) = asked.front_mut() {
            let Some(rgba) = sim.poll_sample(pending)? else { break };
            answered += 1;
            most_late = most_late.max(frame - *at);
            brightest = brightest.max(rgba[0].max(rgba[1]).max(rgba[2]));
            asked.pop_front();
        }
        let spent = start.elapsed();
        frame_ms.push(spent.as_secs_f64() * 1e3);
        // The game's other work and the wait for the display.
        std::thread::sleep(FRAME.saturating_sub(spent));
    }
    // The game is closing: wait for the reads still out.
    for (_, pending) in asked {
        sim.wait_sample(pending)?;
    }

    // The picture carries its size: a finer dye draws it larger than the grid.
    let picture = sim.render()?;
    let (nx, ny) = (picture.width, picture.height);
    std::fs::create_dir_all("out/examples")?;
    image::save_buffer("out/examples/game_loop.png", &picture.rgba, nx, ny, image::ExtendedColorType::Rgba8)?;

    frame_ms.sort_by(f64::total_cmp);
    let diagnostics = sim.checked_diagnostics()?;
    println!(
        "{frames} frames of {}x{} on {backend}: the simulation took {:.3} ms of the calling thread's {:.1} ms frame (median; 90 % under {:.3})",
        nx,
        ny,
        frame_ms[frame_ms.len() / 2],
        FRAME.as_secs_f64() * 1e3,
        frame_ms[frame_ms.len() * 9 / 10]
    );
    println!(
        "dye under the pointer: {answered} of {frames} answers came back while the game ran, at most {most_late} frame(s) late; brightest {brightest:.2}"
    );
    println!(
        "max |div u| {:.1e} /s after the last step; wrote out/examples/game_loop.png",
        diagnostics.figure("max_divergence").unwrap_or(f64::NAN)
    );
    Ok(())
}

/// The pointer's position at time `t` seconds: a figure of eight across the box.
fn pointer(t: f32, width: f32, height: f32) -> [f32; 2] {
    let phase = TAU * t / 4.0;
    [width * (0.5 + 0.3 * phase.sin()), height * (0.5 + 0.25 * (2.0 * phase).sin())]
}

/// A fully saturated colour around the hue circle (`turns` = 1 is once round), premultiplied.
fn hue(turns: f32) -> [f32; 4] {
    let channel = |offset: f32| 0.5 + 0.5 * (TAU * (turns + offset)).cos();
    [channel(0.0), channel(-1.0 / 3.0), channel(1.0 / 3.0), 1.0]
}
