// One invocation: one Jacobi sweep of implicit viscosity (I - nu dt lap) u = u0 at u-face
// (i, j) and v-face (i, j): u <- (u0 + a sum(u_nbr)) / (1 + a n), a = nu dt / h^2, over the n
// neighbours that exist. Wall-normal faces stay zero; tangential walls are free-slip.

@group(0) @binding(2) var<uniform> params: DiffuseParams;
@group(1) @binding(0) var<storage, read> u0: array<f32>;
@group(1) @binding(1) var<storage, read> v0: array<f32>;
@group(1) @binding(2) var<storage, read> u: array<f32>;
@group(1) @binding(3) var<storage, read> v: array<f32>;
@group(1) @binding(4) var<storage, read_write> u_out: array<f32>;
@group(1) @binding(5) var<storage, read_write> v_out: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn diffuse_velocity(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let a = params.viscosity * inputs.dt * grid.inv_h * grid.inv_h;
    if (j < grid.ny) {
        var val = 0.0;
        if (!u_on_wall(i)) {
            let ic = canon_u(i);
            let il = select(grid.nx - 1u, ic - 1u, ic > 0u);
            var sum = 0.0;
            sum += u[ui_(il, j)] + u[ui_(ic + 1u, j)];
            var n = 2.0;
            let jd = prev(j, grid.ny, py());
            if (jd != NONE) {
                sum += u[ui_(ic, u32(jd))];
                n += 1.0;
            }
            let ju = next(j, grid.ny, py());
            if (ju != NONE) {
                sum += u[ui_(ic, u32(ju))];
                n += 1.0;
            }
            val = (u0[ui_(ic, j)] + a * sum) / (1.0 + a * n);
        }
        u_out[ui_(i, j)] = val;
    }
    if (i < grid.nx) {
        var val = 0.0;
        if (!v_on_wall(j)) {
            let jc = canon_v(j);
            let jd = select(grid.ny - 1u, jc - 1u, jc > 0u);
            var sum = 0.0;
            sum += v[vi_(i, jd)] + v[vi_(i, jc + 1u)];
            var n = 2.0;
            let il = prev(i, grid.nx, px());
            if (il != NONE) {
                sum += v[vi_(u32(il), jc)];
                n += 1.0;
            }
            let ir = next(i, grid.nx, px());
            if (ir != NONE) {
                sum += v[vi_(u32(ir), jc)];
                n += 1.0;
            }
            val = (v0[vi_(i, jc)] + a * sum) / (1.0 + a * n);
        }
        v_out[vi_(i, j)] = val;
    }
}
