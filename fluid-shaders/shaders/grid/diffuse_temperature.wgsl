// One invocation: one Jacobi sweep of implicit heat diffusion (I - kappa dt lap) T = T0 at
// cell (i, j): T <- (T0 + a sum(w T_nbr)) / (1 + a sum(w)), a = kappa dt / h^2 (kappa in
// DiffuseParams.viscosity), each neighbour weighted by the open fraction of the face between
// (1 without obstacles), so obstacles insulate; walls and open sides insulate too (no
// neighbour: zero flux) unless a wall is held at a temperature (`edge_term`); past an inflow
// its ghost cell holds the temperature it carries; periodic axes wrap. With params.held, a
// `held` cell (inside an obstacle held at a temperature) keeps its temperature and its faces
// conduct whole (twin of fluid-cpu/src/kernels/diffuse_temperature.rs).

@group(0) @binding(2) var<uniform> params: DiffuseParams;
@group(1) @binding(0) var<storage, read> t0: array<f32>;
@group(1) @binding(1) var<storage, read> t: array<f32>;
@group(1) @binding(2) var<storage, read_write> t_out: array<f32>;
@group(1) @binding(3) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(4) var<storage, read> v_faces: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read> held: array<f32>;

fn is_held(c: u32) -> bool {
    return params.held != 0u && held[c] != 0.0;
}

// The weight of the face to neighbour cell c: whole to a held cell.
fn conducts(w: f32, c: u32) -> f32 {
    return select(w, 1.0, is_held(c));
}

fn u_weight(i: u32, j: u32) -> f32 {
    return select(1.0, u_faces[ui_(i, j)].x, grid.solids != 0u);
}
fn v_weight(i: u32, j: u32) -> f32 {
    return select(1.0, v_faces[vi_(i, j)].x, grid.solids != 0u);
}

// What the box's edge on side k adds to (sum, n): past an inflow its ghost cell at the
// temperature it carries; past a wall held at T the ghost 2 T - T_c (the wall face at T);
// nothing past the others (no flux).
fn edge_term(k: u32) -> vec2<f32> {
    if (side_inflow(k)) {
        return vec2<f32>(grid.side_carry[k].y, 1.0);
    }
    if (grid.side_carry[k].w != 0.0) {
        return vec2<f32>(2.0 * grid.side_carry[k].y, 2.0);
    }
    return vec2<f32>(0.0);
}

@compute @workgroup_size(WG_X, WG_Y)
fn diffuse_temperature(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let c = ci(i, j);
    if (is_held(c)) {
        t_out[c] = t0[c];
        return;
    }
    let a = params.viscosity * inputs.dt * grid.inv_h * grid.inv_h;
    var sum = 0.0;
    var n = 0.0;
    let il = prev(i, grid.nx, px());
    if (il != NONE) {
        let k = ci(u32(il), j);
        let w = conducts(u_weight(i, j), k);
        sum += w * t[k];
        n += w;
    } else {
        let e = edge_term(LEFT);
        sum += e.x;
        n += e.y;
    }
    let ir = next(i, grid.nx, px());
    if (ir != NONE) {
        let k = ci(u32(ir), j);
        let w = conducts(u_weight(i + 1u, j), k);
        sum += w * t[k];
        n += w;
    } else {
        let e = edge_term(RIGHT);
        sum += e.x;
        n += e.y;
    }
    let jd = prev(j, grid.ny, py());
    if (jd != NONE) {
        let k = ci(i, u32(jd));
        let w = conducts(v_weight(i, j), k);
        sum += w * t[k];
        n += w;
    } else {
        let e = edge_term(BOTTOM);
        sum += e.x;
        n += e.y;
    }
    let ju = next(j, grid.ny, py());
    if (ju != NONE) {
        let k = ci(i, u32(ju));
        let w = conducts(v_weight(i, j + 1u), k);
        sum += w * t[k];
        n += w;
    } else {
        let e = edge_term(TOP);
        sum += e.x;
        n += e.y;
    }
    t_out[c] = (t0[c] + a * sum) / (1.0 + a * n);
}
