// One invocation: the curvature of the density's level sets at cell (i, j), in cell units
// (κ·h): κ = −∇·n with the unit normal n = ∇ρ/|∇ρ| taken at the cell's four corners, each from
// the 2 × 2 cells round it. Past a wall the edge cell repeats; periodic axes wrap. Twin of
// fluid-cpu/src/kernels/curvature.rs.

@group(1) @binding(0) var<storage, read> density: array<f32>;
@group(1) @binding(1) var<storage, read_write> kappa_h: array<f32>;

// The unit normal at the corner shared by cells (a0, b0), (a1, b0), (a0, b1), (a1, b1); zero
// where the density is flat.
fn corner_normal(a0: u32, a1: u32, b0: u32, b1: u32) -> vec2<f32> {
    let d00 = density[ci(a0, b0)];
    let d10 = density[ci(a1, b0)];
    let d01 = density[ci(a0, b1)];
    let d11 = density[ci(a1, b1)];
    let g = vec2<f32>((d10 + d11) - (d00 + d01), (d01 + d11) - (d00 + d10));
    let l = sqrt(g.x * g.x + g.y * g.y);
    return select(vec2<f32>(0.0), g / l, l > 1e-12);
}

@compute @workgroup_size(WG_X, WG_Y)
fn curvature(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let w = clamp_or_wrap(i, -1, grid.nx, px());
    let e = clamp_or_wrap(i, 1, grid.nx, px());
    let s = clamp_or_wrap(j, -1, grid.ny, py());
    let n = clamp_or_wrap(j, 1, grid.ny, py());
    let ne = corner_normal(i, e, j, n);
    let nw = corner_normal(w, i, j, n);
    let se = corner_normal(i, e, s, j);
    let sw = corner_normal(w, i, s, j);
    kappa_h[ci(i, j)] = -0.5 * ((ne.x + se.x - nw.x - sw.x) + (ne.y + nw.y - se.y - sw.y));
}
