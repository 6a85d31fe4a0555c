// One invocation: one Jacobi sweep of implicit viscosity (I - nu dt lap) u = u0 at u-face
// (i, j) and v-face (i, j): u <- (u0 + a sum(u_nbr)) / (1 + a n), a = nu dt / h^2, over the n
// neighbours that exist (none past an open side: zero gradient). Wall faces keep their given
// velocity; past a no-slip wall or an inflow the tangential neighbour is the ghost
// 2 v_side - v (n += 2, sum += 2 v_side), past the others it is absent (free slip). With
// obstacles a face one closes keeps the solid's velocity, and as a neighbour it counts as that
// velocity (no slip) or not at all (free slip): a staircase of the surface.

@group(0) @binding(2) var<uniform> params: DiffuseParams;
@group(1) @binding(0) var<storage, read> u0: array<f32>;
@group(1) @binding(1) var<storage, read> v0: array<f32>;
@group(1) @binding(2) var<storage, read> u: array<f32>;
@group(1) @binding(3) var<storage, read> v: array<f32>;
@group(1) @binding(4) var<storage, read_write> u_out: array<f32>;
@group(1) @binding(5) var<storage, read_write> v_out: array<f32>;
@group(1) @binding(6) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(7) var<storage, read> v_faces: array<vec2<f32>>;

// Whether an obstacle closes u-face (i, j) / v-face (i, j) (never an edge face).
fn u_closed(i: u32, j: u32) -> bool {
    return grid.solids != 0u && !u_on_edge(i) && u_faces[ui_(i, j)].x == 0.0;
}
fn v_closed(i: u32, j: u32) -> bool {
    return grid.solids != 0u && !v_on_edge(j) && v_faces[vi_(i, j)].x == 0.0;
}

// A neighbour's (value, count) in the sums: a closed face is the solid's velocity (no slip) or
// absent (free slip).
fn u_term(i: u32, j: u32) -> vec2<f32> {
    if (u_closed(i, j)) {
        return select(vec2<f32>(0.0), vec2<f32>(u_faces[ui_(i, j)].y, 1.0), params.no_slip != 0u);
    }
    return vec2<f32>(u[ui_(i, j)], 1.0);
}
fn v_term(i: u32, j: u32) -> vec2<f32> {
    if (v_closed(i, j)) {
        return select(vec2<f32>(0.0), vec2<f32>(v_faces[vi_(i, j)].y, 1.0), params.no_slip != 0u);
    }
    return vec2<f32>(v[vi_(i, j)], 1.0);
}

@compute @workgroup_size(WG_X, WG_Y)
fn diffuse_velocity(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let a = params.viscosity * inputs.dt * grid.inv_h * grid.inv_h;
    if (j < grid.ny) {
        var val = wall_u(i, j);
        if (u_closed(canon_u(i), j)) {
            val = u_faces[ui_(canon_u(i), j)].y;
        } else if (!u_on_wall(i)) {
            let ic = canon_u(i);
            var sum = 0.0;
            var n = 0.0;
            if (ic > 0u || px()) {
                let t = u_term(select(grid.nx - 1u, ic - 1u, ic > 0u), j);
                sum += t.x;
                n += t.y;
            }
            if (ic < grid.nx) {
                let t = u_term(ic + 1u, j);
                sum += t.x;
                n += t.y;
            }
            let jd = prev(j, grid.ny, py());
            if (jd != NONE) {
                let t = u_term(ic, u32(jd));
                sum += t.x;
                n += t.y;
            } else if (holds_tangent(BOTTOM)) {
                sum += 2.0 * tangent_speed(BOTTOM);
                n += 2.0;
            }
            let ju = next(j, grid.ny, py());
            if (ju != NONE) {
                let t = u_term(ic, u32(ju));
                sum += t.x;
                n += t.y;
            } else if (holds_tangent(TOP)) {
                sum += 2.0 * tangent_speed(TOP);
                n += 2.0;
            }
            val = (u0[ui_(ic, j)] + a * sum) / (1.0 + a * n);
        }
        u_out[ui_(i, j)] = val;
    }
    if (i < grid.nx) {
        var val = wall_v(i, j);
        if (v_closed(i, canon_v(j))) {
            val = v_faces[vi_(i, canon_v(j))].y;
        } else if (!v_on_wall(j)) {
            let jc = canon_v(j);
            var sum = 0.0;
            var n = 0.0;
            if (jc > 0u || py()) {
                let t = v_term(i, select(grid.ny - 1u, jc - 1u, jc > 0u));
                sum += t.x;
                n += t.y;
            }
            if (jc < grid.ny) {
                let t = v_term(i, jc + 1u);
                sum += t.x;
                n += t.y;
            }
            let il = prev(i, grid.nx, px());
            if (il != NONE) {
                let t = v_term(u32(il), jc);
                sum += t.x;
                n += t.y;
            } else if (holds_tangent(LEFT)) {
                sum += 2.0 * tangent_speed(LEFT);
                n += 2.0;
            }
            let ir = next(i, grid.nx, px());
            if (ir != NONE) {
                let t = v_term(u32(ir), jc);
                sum += t.x;
                n += t.y;
            } else if (holds_tangent(RIGHT)) {
                sum += 2.0 * tangent_speed(RIGHT);
                n += 2.0;
            }
            val = (v0[vi_(i, jc)] + a * sum) / (1.0 + a * n);
        }
        v_out[vi_(i, j)] = val;
    }
}
