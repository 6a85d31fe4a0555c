//! The render kernels against the host composer ([`Simulation::render_reference`]): the same
//! state (restored from the CPU's checkpoint) drawn by the backend's kernels and composed on
//! the host from the CPU's fields, for every kind of layer, blend mode, trail, obstacles, the
//! finer dye and density, and the particle liquid.

use swirly::{CpuBackend, Simulation, Splat, backend::Backend};

use crate::support::small_preset_with;

/// The largest difference of a channel between the kernels' picture and the reference: the
/// GPUs' `pow` and `atan2` round differently from the host's (a byte either side), and the
/// derived views (curl, divergence, a liquid's drawn density) are computed by each backend's
/// own kernels within their tolerances.
pub const MAX_CHANNEL_DIFFERENCE: u8 = 2;

/// The cases: a preset and overrides, and the frames drawn (a step before each).
const CASES: &[(&str, &[&str], usize)] = &[
    ("smoke", &[], 1),
    ("smoke", &["render.look=\"fire\"", "render.background=\"#00000000\""], 1),
    ("smoke", &["render.look=\"trails\""], 3),
    ("smoke", &["render.background_image=\"grate.png\"", "render.background=\"#203040\""], 1),
    (
        "ink",
        &[
            "grid.dye_factor=2",
            "params.advection.scheme=\"semi-lagrangian\"",
            "params.advection.interpolation=\"bilinear\"",
            "render.look=\"ink\"",
        ],
        1,
    ),
    // The density three times finer than the heat drawn over it.
    (
        "smoke",
        &[
            "grid.density_factor=3",
            "params.advection.scheme=\"semi-lagrangian\"",
            "params.advection.interpolation=\"bilinear\"",
            "render.look=\"fire\"",
        ],
        1,
    ),
    (
        "obstacles",
        &["render.layers=[{field=\"velocity\", scale=0.5}, {field=\"speed\", blend=\"screen\", opacity=0.6}, \
             {field=\"pressure\", blend=\"multiply\", scale=0.2}, {field=\"divergence\", blend=\"add\", scale=0.01}, \
             {field=\"curl\", scale=5.0, opacity=0.5}, {field=\"obstacles\", blend=\"alpha\", opacity=0.3, trail=0.2}]"],
        2,
    ),
    ("dam-break", &["render.look=\"liquid\""], 1),
];

/// Every case's frames, drawn by `make`'s backend, match the host's reference within
/// [`MAX_CHANNEL_DIFFERENCE`] (exactly on the CPU), and the picture is not blank.
pub fn frames_match_the_reference<B: Backend>(make: impl Fn() -> B) {
    for (preset, overrides, frames) in CASES {
        let scene = small_preset_with(preset, overrides);
        let mut cpu = Simulation::new(scene, CpuBackend::new().expect("cpu backend")).expect("cpu simulation");
        let grid = cpu.scene().grid().expect("grid");
        let s = Splat {
            center: [0.4 * grid.width(), 0.5 * grid.height()],
            radius: 0.15 * grid.height(),
            velocity: [0.8, 0.4],
            ..Splat::default()
        };
        cpu.splat(s).expect("splat");
        for _ in 0..5 {
            cpu.step(cpu.scene().params.dt).expect("step");
        }
        let mut bytes = Vec::new();
        cpu.save(&mut bytes).expect("save");
        let mut other = Simulation::load(bytes.as_slice(), make()).expect("restore");
        for frame in 0..*frames {
            // A step on both before each frame (the views of the last step's scratch, the
            // divergence, are not in a checkpoint): their fields part by the backends' step
            // tolerances only.
            let dt = cpu.scene().params.dt;
            cpu.step(dt).expect("step");
            other.step(dt).expect("step");
            let want = cpu.render_reference().expect("reference");
            let got = other.render().expect("render").rgba;
            let label = format!("{preset} {overrides:?} frame {frame} on {}", other.backend().name());
            assert_eq!(want.len(), got.len(), "{label}: picture size");
            let worst = want.iter().zip(&got).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
            let differ = want.iter().zip(&got).filter(|(a, b)| a != b).count();
            // The CPU's kernels share the host's arithmetic: the same bytes.
            let limit = if other.backend().name() == "cpu" { 0 } else { MAX_CHANNEL_DIFFERENCE };
            assert!(
                worst <= limit,
                "{label}: a channel differs by {worst} (of {} channels, {differ} differ)",
                want.len()
            );
            let lit = got.chunks_exact(4).filter(|p| p[..3].iter().any(|c| *c > 8)).count();
            assert!(lit > 0, "{label}: the picture is blank");
        }
    }
}
