//! Physics checks against analytic answers, generic over the backend.
//!
//! Each function panics with a message that names the figure and its tolerance when the
//! backend fails the check; [`crate::conformance!`] turns them into `#[test]`s. By topic:
//! [`pressure`] (the solvers and the projection), [`advection`] (transport and backtraces),
//! [`forces`] (splats, forces, dissipation and vorticity), [`flows`] (whole flows with an
//! exact answer), [`obstacles`] (solids in the flow) and [`boundaries`] (inflows, outflows, no-slip
//! walls and the classical validation flows).

pub mod advection;
pub mod boundaries;
pub mod combustion;
pub mod flows;
pub mod forces;
pub mod obstacles;
pub mod pressure;

use swirly::{FieldId, Scene, backend::Backend, backend::StepInputs, model::Grid};
use swirly_core::ir::schedule::ParamBlock;

/// A scene of `nx × ny` cells of size `h` stepping by `dt`, with more `[params]` lines.
fn test_scene(name: &str, nx: u32, ny: u32, h: f64, dt: f64, params: &str) -> Scene {
    let text = format!("name = \"{name}\"\n[grid]\nnx = {nx}\nny = {ny}\nh = {h}\n[params]\ndt = {dt}\n{params}\n");
    Scene::from_toml(&text, name).expect("valid scene")
}

/// Whether sample `c` of the face field `field` is the copy of face 0 that a periodic axis
/// keeps as u-face `nx` (or v-face `ny`): sums over the faces count it once by leaving it out.
fn periodic_copy(grid: &Grid, field: FieldId, c: usize) -> bool {
    let nx = grid.nx as usize;
    match field {
        FieldId::U => grid.boundary_x == swirly::Boundary::Periodic && c % (nx + 1) == nx,
        FieldId::V => grid.boundary_y == swirly::Boundary::Periodic && c / nx == grid.ny as usize,
        _ => false,
    }
}

/// World position of sample `c` of a face field: u-face `(i, j)` at `(i h, (j + ½) h)`, v-face
/// `(i, j)` at `((i + ½) h, j h)`.
fn face_position(grid: &Grid, field: FieldId, c: usize) -> [f64; 2] {
    let (nx, h) = (grid.nx as usize, f64::from(grid.h));
    match field {
        FieldId::U => [(c % (nx + 1)) as f64 * h, ((c / (nx + 1)) as f64 + 0.5) * h],
        FieldId::V => [((c % nx) as f64 + 0.5) * h, (c / nx) as f64 * h],
        other => panic!("{} is not a face field", other.name()),
    }
}

fn taylor_green_scene(nx: u32, ny: u32, h: f64, nu: f64, dt: f64, amplitude: f64) -> Scene {
    let params = format!(
        "viscosity = {nu}\n\
         viscosity_iterations = 30\n\
         fields = {{ density = false, temperature = false, dye = false }}\n\
         boundary = {{ x = \"periodic\", y = \"periodic\" }}\n\
         advection = {{ backtrace = \"rk3\" }}\n\
         pressure = {{ iterations = 40, omega = 0.9 }}\n\
         [initial.velocity]\n\
         kind = \"taylor-green\"\n\
         amplitude = {amplitude}"
    );
    test_scene("taylor-green-test", nx, ny, h, dt, &params)
}

/// Total, centroid offset from `centre` and variance along each axis, as [`moments`] gives them.
type Moments = (f64, [f64; 2], [f64; 2]);

/// Total, centroid offset from `centre` and variance along each axis of the samples `q(index)`
/// at positions `at(index)`, index in `0..count` (any unit of length). An axis with
/// `Some(length)` is periodic: each offset is wrapped into `[−L/2, L/2)`, the nearest image.
/// The offset `d` along an axis, the nearest of its periodic images on an axis of length
/// `wrap` (`None`: not periodic).
fn offset(d: f64, wrap: Option<f64>) -> f64 {
    wrap.map_or(d, |len| (d + len / 2.0).rem_euclid(len) - len / 2.0)
}

fn moments(
    q: impl Fn(usize) -> f64,
    count: usize,
    at: impl Fn(usize) -> [f64; 2],
    centre: [f64; 2],
    wrap: [Option<f64>; 2],
) -> Moments {
    let (mut m, mut s1, mut s2) = (0.0, [0.0; 2], [0.0; 2]);
    for c in 0..count {
        let (w, p) = (q(c), at(c));
        m += w;
        for a in 0..2 {
            let d = offset(p[a] - centre[a], wrap[a]);
            s1[a] += w * d;
            s2[a] += w * d * d;
        }
    }
    let mean = [s1[0] / m, s1[1] / m];
    (m, mean, [s2[0] / m - mean[0] * mean[0], s2[1] / m - mean[1] * mean[1]])
}

/// Run one kernel alone on `grid` over `fields` (uploaded first), with `splats` as the step's,
/// and return the backend.
fn run_alone<B: Backend>(
    make: impl Fn() -> B,
    grid: &Grid,
    kernel: swirly_core::Kernel,
    params: Option<ParamBlock>,
    fields: &[(FieldId, Vec<f32>)],
    splats: Vec<swirly::Splat>,
) -> B {
    let mut b = make();
    crate::support::load(&mut b, grid, fields);
    let extent = match kernel.domain {
        swirly_core::ir::kernel::Domain::Faces => [grid.nx + 1, grid.ny + 1],
        _ => [grid.nx, grid.ny],
    };
    let ids: Vec<FieldId> = fields.iter().map(|(f, _)| *f).collect();
    let schedule = crate::support::single(grid, kernel, &ids, params, extent);
    let records = swirly_core::splat::records(&splats, grid).expect("splats");
    let inputs = StepInputs { dt: 0.1, time: 0.0, step: 0, records };
    b.run(&schedule, &inputs).expect("run");
    b
}
