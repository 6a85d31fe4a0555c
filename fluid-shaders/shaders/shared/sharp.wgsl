// Shared by the sharper advection passes (back_velocity, back_cells, sharp_velocity,
// sharp_cells): the bilinear stencil of a point on any of the grid's three lattices, its
// four-sample extension for cubic sampling, and monotone cubic interpolation. Twin of
// fluid-cpu/src/kernels/common/sharp.rs.

const LATTICE_CELLS: u32 = 0u;
const LATTICE_U: u32 = 1u;
const LATTICE_V: u32 = 2u;

struct Window {
    sx: Stencil,
    sy: Stencil,
}

// The bilinear stencil of point b (cell units) on lattice k: cell centres, u-faces or v-faces.
fn window(k: u32, b: vec2<f32>) -> Window {
    var w: Window;
    w.sx = stencil(b.x - select(0.5, 0.0, k == LATTICE_U), grid.nx, k == LATTICE_U, px());
    w.sy = stencil(b.y - select(0.5, 0.0, k == LATTICE_V), grid.ny, k == LATTICE_V, py());
    return w;
}

// The index of sample (i, j) of lattice k.
fn lattice_index(k: u32, i: u32, j: u32) -> u32 {
    return j * (grid.nx + select(0u, 1u, k == LATTICE_U)) + i;
}

// The samples before and after a stencil's pair along an axis of n cells (faces: samples at
// 0..=n): walls repeat the end sample, periodic axes wrap.
fn outer(s: Stencil, n: u32, faces: bool, periodic: bool) -> vec2<u32> {
    let count = select(select(n, n + 1u, faces), n, periodic);
    return vec2<u32>(clamp_or_wrap(s.i0, -1, count, periodic), clamp_or_wrap(s.i1, 1, count, periodic));
}

// Cubic Hermite between f1 (t = 0) and f2 (t = 1) with central slopes limited to the
// Fritsch–Carlson region (zero against the step's sign, at most three times it): the result
// stays between f1 and f2 (Fedkiw, Stam & Jensen 2001).
fn mono_cubic(f0: f32, f1: f32, f2: f32, f3: f32, t: f32) -> f32 {
    let delta = f2 - f1;
    let sg = select(-1.0, 1.0, delta >= 0.0);
    let lim = 3.0 * abs(delta);
    let d1 = sg * clamp(sg * 0.5 * (f2 - f0), 0.0, lim);
    let d2 = sg * clamp(sg * 0.5 * (f3 - f1), 0.0, lim);
    let c2 = 3.0 * delta - 2.0 * d1 - d2;
    let c3 = d1 + d2 - 2.0 * delta;
    return f1 + t * (d1 + t * (c2 + t * c3));
}

// The dissipation map of a scalar relaxing to `ambient`.
fn dissipate(x: f32, ambient: f32, decay: f32) -> f32 {
    return ambient + (x - ambient) * decay;
}
