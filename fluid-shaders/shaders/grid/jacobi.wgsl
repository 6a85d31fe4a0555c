// #include pressure
// #include solid
// #include pressure_solid
// One invocation: one weighted-Jacobi sweep of lap p = div / dt at cell (i, j):
// p <- p + omega ((sum p_nbr + b) / n - p), b = -h^2 div / dt, over the n non-wall neighbours;
// with obstacles each neighbour is weighted by the open fraction of the face between, n their sum.
// With zero_initial the previous iterate is taken as zero: p <- omega b / n.

@group(0) @binding(2) var<uniform> params: JacobiParams;
@group(1) @binding(0) var<storage, read> pressure: array<f32>;
@group(1) @binding(1) var<storage, read> divergence: array<f32>;
@group(1) @binding(2) var<storage, read_write> pressure_out: array<f32>;
@group(1) @binding(3) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(4) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn jacobi(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let c = ci(i, j);
    let scale = -grid.h * grid.h / inputs.dt;
    let nb = sweep_neighbours(i, j);
    if (params.zero_initial != 0u) {
        pressure_out[c] = select(params.omega * scale * divergence[c] / nb.n, 0.0, nb.n == 0.0);
        return;
    }
    let p = pressure[c];
    if (nb.n == 0.0) {
        pressure_out[c] = p;
        return;
    }
    let pj = (nb.sum + scale * divergence[c]) / nb.n;
    pressure_out[c] = p + params.omega * (pj - p);
}
