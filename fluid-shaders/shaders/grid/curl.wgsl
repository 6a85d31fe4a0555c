// One invocation: the vorticity w = dv/dx - du/dy of cell (i, j), from the cell-centred
// velocities of its neighbours (central differences; one-sided at walls).

@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read_write> curl_out: array<f32>;

fn u_centre(i: u32, j: u32) -> f32 { return 0.5 * (u[ui_(i, j)] + u[ui_(i + 1u, j)]); }
fn v_centre(i: u32, j: u32) -> f32 { return 0.5 * (v[vi_(i, j)] + v[vi_(i, j + 1u)]); }

@compute @workgroup_size(WG_X, WG_Y)
fn curl(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let pl = prev(i, grid.nx, px());
    let nr = next(i, grid.nx, px());
    let pd = prev(j, grid.ny, py());
    let nu = next(j, grid.ny, py());
    let il = select(u32(pl), i, pl == NONE);
    let ir = select(u32(nr), i, nr == NONE);
    let jd = select(u32(pd), j, pd == NONE);
    let ju = select(u32(nu), j, nu == NONE);
    let sx = select(f32(i32(ir) - i32(il)), 2.0, px());
    let sy = select(f32(i32(ju) - i32(jd)), 2.0, py());
    var dvdx = 0.0;
    if (sx > 0.0) {
        dvdx = (v_centre(ir, j) - v_centre(il, j)) / (sx * grid.h);
    }
    var dudy = 0.0;
    if (sy > 0.0) {
        dudy = (u_centre(i, ju) - u_centre(i, jd)) / (sy * grid.h);
    }
    curl_out[ci(i, j)] = dvdx - dudy;
}
