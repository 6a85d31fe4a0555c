// One invocation: combustion at cell (i, j). At or above the ignition temperature a fraction
// 1 - exp(-rate dt) of the fuel burns; each unit burnt adds `heat` to the temperature, `soot`
// to the density and, where bound, expansion / dt to the step's divergence source (twin of
// fluid-cpu/src/kernels/burn.rs).

@group(0) @binding(2) var<uniform> params: BurnParams;
@group(1) @binding(0) var<storage, read_write> fuel: array<f32>;
@group(1) @binding(1) var<storage, read_write> temperature: array<f32>;
@group(1) @binding(2) var<storage, read_write> density: array<f32>;
@group(1) @binding(3) var<storage, read_write> expansion: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn burn(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let c = ci(i, j);
    let f = fuel[c];
    let t = temperature[c];
    var burnt = 0.0;
    if (t >= params.ignition && f > 0.0) {
        burnt = f * (1.0 - exp(-params.rate * inputs.dt));
        fuel[c] = f - burnt;
        temperature[c] = t + params.heat * burnt;
        if (params.soot != 0.0) {
            density[c] += params.soot * burnt;
        }
    }
    if (params.expansion != 0.0) {
        expansion[c] = params.expansion * burnt / inputs.dt;
    }
}
