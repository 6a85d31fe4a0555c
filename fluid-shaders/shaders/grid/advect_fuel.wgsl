// #include velocity
// One invocation: trace cell (i, j)'s centre back along the velocity and sample the fuel
// there, with its dissipation; near an inflow side the ghost past it holds no fuel, so a point
// traced back within half a cell of the side or beyond blends toward zero (twin of
// fluid-cpu/src/kernels/advect_fuel.rs).

@group(0) @binding(2) var<uniform> params: AdvectParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> fuel: array<f32>;
@group(1) @binding(3) var<storage, read_write> fuel_out: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn advect_fuel(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let dt = inputs.dt;
    let p = vec2<f32>(f32(i) + 0.5, f32(j) + 0.5);
    let b = backtrace(p, params.order, dt * grid.inv_h);
    let sx = stencil(b.x - 0.5, grid.nx, false, px());
    let sy = stencil(b.y - 0.5, grid.ny, false, py());
    let f = lerp2(fuel[ci(sx.i0, sy.i0)], fuel[ci(sx.i1, sy.i0)], fuel[ci(sx.i0, sy.i1)], fuel[ci(sx.i1, sy.i1)], sx.t, sy.t)
        * exp(-params.fuel_dissipation * dt);
    let inflow = inflow_weight(b);
    fuel_out[ci(i, j)] = select(f, f - inflow.w * f, inflow.w > 0.0);
}
