// One invocation: u-face (i, j), v-face (i, j) and cell (i, j) of one iteration of the MAC
// seed's relaxation (twin of fluid-cpu/src/kernels/relax.rs): each cell's net inflow over its
// open faces, d = (u_left - u_right + v_down - v_up) / n; each face takes the average of its two
// cells' requests, u += omega (d_left - d_right) / 2; edge faces keep their velocity; the cell
// accumulates the equivalent pressure omega h d / (2 dt).

@group(0) @binding(2) var<uniform> params: JacobiParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read_write> pressure: array<f32>;
@group(1) @binding(3) var<storage, read_write> u_out: array<f32>;
@group(1) @binding(4) var<storage, read_write> v_out: array<f32>;

fn neighbour_count(i: u32, j: u32) -> f32 {
    var n = 0.0;
    if (prev(i, grid.nx, px()) != NONE) { n += 1.0; }
    if (next(i, grid.nx, px()) != NONE) { n += 1.0; }
    if (prev(j, grid.ny, py()) != NONE) { n += 1.0; }
    if (next(j, grid.ny, py()) != NONE) { n += 1.0; }
    return n;
}

fn inflow(i: u32, j: u32) -> f32 {
    let n = neighbour_count(i, j);
    if (n == 0.0) {
        return 0.0;
    }
    return (u[ui_(i, j)] - u[ui_(i + 1u, j)] + v[vi_(i, j)] - v[vi_(i, j + 1u)]) / n;
}

@compute @workgroup_size(WG_X, WG_Y)
fn relax(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let omega = params.omega;
    if (j < grid.ny) {
        let f = ui_(i, j);
        if (u_on_edge(i)) {
            u_out[f] = u[f];
        } else {
            let right = canon_u(i);
            let left = select(grid.nx - 1u, right - 1u, right > 0u);
            u_out[f] = u[f] + omega * (inflow(left, j) - inflow(right, j)) * 0.5;
        }
    }
    if (i < grid.nx) {
        let f = vi_(i, j);
        if (v_on_edge(j)) {
            v_out[f] = v[f];
        } else {
            let up = canon_v(j);
            let down = select(grid.ny - 1u, up - 1u, up > 0u);
            v_out[f] = v[f] + omega * (inflow(i, down) - inflow(i, up)) * 0.5;
        }
    }
    if (i < grid.nx && j < grid.ny) {
        let c = ci(i, j);
        let k = omega * grid.h / (2.0 * inputs.dt);
        pressure[c] = select(pressure[c], 0.0, params.zero_initial != 0u) + k * inflow(i, j);
    }
}
