// #include pressure
// #include solid
// #include pressure_solid
// One invocation: cell (i, j) in one colour pass of red-black SOR (twin of
// fluid-cpu/src/kernels/sor.rs). Red cells have i + j even. Cells of the pass's colour are
// relaxed, p <- p + omega ((sum p_nbr + b) / n - p), b = -h^2 div / dt; the others are copied.
// Reads one buffer, writes another: race-free and deterministic.

@group(0) @binding(2) var<uniform> params: JacobiParams;
@group(1) @binding(0) var<storage, read> pressure: array<f32>;
@group(1) @binding(1) var<storage, read> divergence: array<f32>;
@group(1) @binding(2) var<storage, read_write> pressure_out: array<f32>;
@group(1) @binding(3) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(4) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn sor(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let c = ci(i, j);
    let mine = ((i + j) & 1u) == params.colour;
    let scale = -grid.h * grid.h / inputs.dt;
    let nb = sweep_neighbours(i, j);
    if (params.zero_initial != 0u) {
        pressure_out[c] = select(0.0, params.omega * scale * divergence[c] / nb.n, mine && nb.n != 0.0);
        return;
    }
    let p = pressure[c];
    if (!mine || nb.n == 0.0) {
        pressure_out[c] = p;
        return;
    }
    let pj = (nb.sum + scale * divergence[c]) / nb.n;
    pressure_out[c] = p + params.omega * (pj - p);
}
