//! `rasterise_solids`: the obstacles of the table where they stand at the step's end
//! (`time + dt`), onto the faces (open fraction, solid velocity) and cells (solid fraction);
//! a cell wholly inside holds no density or dye and the ambient temperature. The arithmetic is
//! the host reference's, [`swirly_core::frame::solid::rasterise`], over parallel rows (tested
//! bit-equal).

use rayon::prelude::*;
use swirly_core::frame::solid::{self, Obstacle, cell_solid, nearest, open_fraction};
use swirly_core::grid::uniforms::{ADVECT_DENSITY, ADVECT_DYE, ADVECT_TEMPERATURE, AdvectParams, CARRY_FUEL};
use swirly_core::{Boundary, Grid};

use super::common::{G, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The fields the kernel writes.
pub struct Outputs<'a> {
    /// Per x-face: open fraction, solid x-velocity.
    pub u_faces: &'a mut [f32],
    /// Per y-face: open fraction, solid y-velocity.
    pub v_faces: &'a mut [f32],
    /// Per cell: solid fraction.
    pub solid: &'a mut [f32],
    /// Density (empty when not carried).
    pub density: &'a mut [f32],
    /// Temperature (empty when not carried).
    pub temperature: &'a mut [f32],
    /// Dye (empty when not carried).
    pub dye: &'a mut [f32],
    /// Fuel (empty when not carried).
    pub fuel: &'a mut [f32],
}

/// Rasterise the table `rows` at time `t` into `out`.
pub fn run(g: &G, params: &AdvectParams, rows: &[f32], t: f32, out: Outputs<'_>) {
    let Some((grid, obstacles)) = placed(g, rows, t) else { return };
    let (nx, ny, h) = (g.nx, g.ny, g.h);
    let canon = |k: usize, n: usize, periodic: bool| if periodic && k == n { 0 } else { k };
    let mut nodes = vec![0.0f32; (nx + 1) * (ny + 1)];
    nodes.par_chunks_mut(nx + 1).enumerate().for_each(|(y, row)| {
        let y = canon(y, ny, g.py);
        for (x, d) in row.iter_mut().enumerate() {
            let x = canon(x, nx, g.px);
            *d = nearest(&grid, &obstacles, [x as f32 * h, y as f32 * h]).0;
        }
    });
    let node = |x: usize, y: usize| nodes[y * (nx + 1) + x];
    let velocity = |p: [f32; 2], axis: usize| match nearest(&grid, &obstacles, p) {
        (_, Some(o)) => o.velocity_at(p)[axis],
        _ => 0.0,
    };
    for_each_face_row(out.u_faces, 2 * (nx + 1), |j, row| {
        for (i, f) in row.chunks_exact_mut(2).enumerate() {
            let i = canon(i, nx, g.px);
            let open = open_fraction(node(i, j), node(i, j + 1));
            let p = [i as f32 * h, (j as f32 + 0.5) * h];
            f[0] = open;
            f[1] = if open < 1.0 { velocity(p, 0) } else { 0.0 };
        }
    });
    for_each_face_row(out.v_faces, 2 * nx, |j, row| {
        let j = canon(j, ny, g.py);
        for (i, f) in row.chunks_exact_mut(2).enumerate() {
            let open = open_fraction(node(i, j), node(i + 1, j));
            let p = [(i as f32 + 0.5) * h, j as f32 * h];
            f[0] = open;
            f[1] = if open < 1.0 { velocity(p, 1) } else { 0.0 };
        }
    });
    let solid_at = |i: usize, j: usize| {
        let (n00, n10, n01, n11) = (node(i, j), node(i + 1, j), node(i, j + 1), node(i + 1, j + 1));
        let u = open_fraction(n00, n01) + open_fraction(n10, n11);
        let v = open_fraction(n00, n10) + open_fraction(n01, n11);
        cell_solid(u, v)
    };
    for_each_row(out.solid, nx, |j, row| {
        for (i, s) in row.iter_mut().enumerate() {
            *s = solid_at(i, j);
        }
    });
    let inside = |c: usize| out.solid[c] == 1.0;
    let fields = params.fields;
    if fields & ADVECT_DENSITY != 0 {
        out.density.par_iter_mut().enumerate().filter(|(c, _)| inside(*c)).for_each(|(_, x)| *x = 0.0);
    }
    if fields & ADVECT_TEMPERATURE != 0 {
        let ambient = params.ambient_temperature;
        out.temperature.par_iter_mut().enumerate().filter(|(c, _)| inside(*c)).for_each(|(_, x)| *x = ambient);
    }
    if fields & ADVECT_DYE != 0 {
        out.dye.par_chunks_mut(4).enumerate().filter(|(c, _)| inside(*c)).for_each(|(_, x)| x.fill(0.0));
    }
    if fields & CARRY_FUEL != 0 {
        out.fuel.par_iter_mut().enumerate().filter(|(c, _)| inside(*c)).for_each(|(_, x)| *x = 0.0);
    }
}

/// The grid of `g` and the obstacles of the table `rows` where they stand at time `t` (`None`
/// for a grid the host cannot build, which no schedule gives).
pub fn placed(g: &G, rows: &[f32], t: f32) -> Option<(Grid, Vec<Obstacle>)> {
    let table: Vec<[f32; 4]> = rows.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let obstacles = solid::decode(&table).iter().map(|o| o.at(t)).collect();
    let b = |p: bool| if p { Boundary::Periodic } else { Boundary::Wall };
    let grid = Grid::new(g.nx as u32, g.ny as u32, g.h, b(g.px), b(g.py)).ok()?;
    Some((grid, obstacles))
}

/// Rows of `cols` values of `out`, in parallel (`f` gets the row index).
fn for_each_face_row(out: &mut [f32], cols: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    out.par_chunks_mut(cols).enumerate().for_each(|(j, row)| f(j, row));
}

/// The table's entry: a dispatch of `rasterise_solids` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let params: AdvectParams = d.params().unwrap_or_default();
    let rows = s.r("obstacles");
    let out = Outputs {
        u_faces: s.w("u_faces"),
        v_faces: s.w("v_faces"),
        solid: s.w("solid"),
        density: s.w("density"),
        temperature: s.w("temperature"),
        dye: s.w("dye"),
        fuel: s.w("fuel"),
    };
    run(c.g, &params, rows, c.time + c.dt, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::frame::solid::{Motion, Pose, Shape};

    /// The kernel gives the host reference's bits at the step's end, on walls and periodic
    /// axes, for every shape, moving, with the cells wholly inside cleared.
    #[test]
    fn equals_the_host_reference_at_the_steps_end() {
        let shapes = [
            Shape::Circle { radius: 3.3 },
            Shape::Rect { half_size: [4.0, 1.5] },
            Shape::Capsule { half_length: 3.0, radius: 1.2 },
            Shape::Polygon { points: vec![[-3.0, -2.0], [4.0, -1.0], [0.5, 3.5]] },
        ];
        let obstacles: Vec<Obstacle> = shapes
            .into_iter()
            .enumerate()
            .map(|(k, shape)| Obstacle {
                shape,
                pose: Pose { position: [3.0 + 6.5 * k as f32, 9.0 - k as f32], angle: 0.3 * k as f32 },
                motion: Motion { velocity: [0.5, -0.25], angular_velocity: 0.7 },
                since: 0.25,
                temperature: None,
            })
            .collect();
        for (bx, by) in [(Boundary::Wall, Boundary::Wall), (Boundary::Periodic, Boundary::Periodic)] {
            let grid = Grid::new(27, 19, 1.0, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let rows: Vec<f32> = solid::table(&obstacles).into_iter().flatten().collect();
            let (nu, nv, nc) = ((28 * 19) * 2, (27 * 20) * 2, 27 * 19);
            let (mut uf, mut vf, mut s, mut d) = (vec![9.0; nu], vec![9.0; nv], vec![9.0; nc], vec![1.0; nc]);
            let params = AdvectParams { fields: ADVECT_DENSITY, ..AdvectParams::default() };
            let out = Outputs {
                u_faces: &mut uf,
                v_faces: &mut vf,
                solid: &mut s,
                density: &mut d,
                temperature: &mut [],
                dye: &mut [],
                fuel: &mut [],
            };
            run(&g, &params, &rows, 1.5, out);
            let at: Vec<Obstacle> = obstacles.iter().map(|o| o.at(1.5)).collect();
            let want = solid::rasterise(&grid, &at);
            let pairs =
                |open: &[f32], vel: &[f32]| open.iter().zip(vel).flat_map(|(a, b)| [*a, *b]).collect::<Vec<_>>();
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&uf), bits(&pairs(&want.u_open, &want.u_solid)), "{bx:?}");
            assert_eq!(bits(&vf), bits(&pairs(&want.v_open, &want.v_solid)), "{bx:?}");
            assert_eq!(bits(&s), bits(&want.solid), "{bx:?}");
            assert!(s.contains(&1.0) && s.contains(&0.0) && s.iter().any(|x| *x > 0.0 && *x < 1.0));
            for (c, x) in d.iter().enumerate() {
                assert_eq!(*x, if s[c] == 1.0 { 0.0 } else { 1.0 }, "cell {c}");
            }
        }
    }
}
