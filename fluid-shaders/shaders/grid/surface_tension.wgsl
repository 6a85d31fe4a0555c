// One invocation: surface tension on u-face (i, j) and v-face (i, j): the velocity gains
// dt·σ·κ·∂ρ/∂n, with the curvature κ and the density's gradient across the face from its two
// cells. Past a wall the edge cell repeats, so faces on the box's edge get nothing; periodic
// axes wrap. Twin of fluid-cpu/src/kernels/surface_tension.rs.

@group(0) @binding(2) var<uniform> params: TensionParams;
@group(1) @binding(0) var<storage, read> density: array<f32>;
@group(1) @binding(1) var<storage, read> kappa_h: array<f32>;
@group(1) @binding(2) var<storage, read_write> u: array<f32>;
@group(1) @binding(3) var<storage, read_write> v: array<f32>;


// The cells either side of face k (k - 1 and k) along an axis of n cells.
fn sides_of(k: u32, n: u32, periodic: bool) -> vec2<u32> {
    return vec2<u32>(clamp_or_wrap(k, -1, n, periodic), clamp_or_wrap(k, 0, n, periodic));
}

@compute @workgroup_size(WG_X, WG_Y)
fn surface_tension(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let k = inputs.dt * params.strength * grid.inv_h * grid.inv_h;
    if (j < grid.ny) {
        let c = sides_of(i, grid.nx, px());
        let a = ci(c.x, j);
        let b = ci(c.y, j);
        let kappa = 0.5 * (kappa_h[a] + kappa_h[b]);
        u[ui_(i, j)] += k * kappa * (density[b] - density[a]);
    }
    if (i < grid.nx) {
        let c = sides_of(j, grid.ny, py());
        let a = ci(i, c.x);
        let b = ci(i, c.y);
        let kappa = 0.5 * (kappa_h[a] + kappa_h[b]);
        v[vi_(i, j)] += k * kappa * (density[b] - density[a]);
    }
}
