// One invocation: add every splat of the step to u-face (i, j), v-face (i, j) and cell (i, j)
// (density, temperature, dye), weighted by the splat's falloff at that sample's position.
// Distances wrap on periodic axes (the dye only when it lives on this grid, params.factor 1).
// Samples that receive nothing are left unwritten. With
// obstacles a face receives its open part of the velocity, a cell its open part of the rest.
// #include solid
// #include splat_weight

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(0) @binding(3) var<storage, read> splats: array<SplatGpu>;
@group(1) @binding(0) var<storage, read_write> u: array<f32>;
@group(1) @binding(1) var<storage, read_write> v: array<f32>;
@group(1) @binding(2) var<storage, read_write> density: array<f32>;
@group(1) @binding(3) var<storage, read_write> temperature: array<f32>;
@group(1) @binding(4) var<storage, read_write> dye: array<vec4<f32>>;
@group(1) @binding(5) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(6) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn splat(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny || inputs.splat_count == 0u) {
        return;
    }
    if (j < grid.ny && !u_on_wall(i)) {
        let p = vec2<f32>(f32(canon_u(i)) * grid.h, (f32(j) + 0.5) * grid.h);
        var add = 0.0;
        for (var k = 0u; k < inputs.splat_count; k++) {
            add += weight(splats[k], p) * splats[k].velocity.x;
        }
        if (grid.solids != 0u) {
            add *= u_open(i, j);
        }
        if (add != 0.0) {
            u[ui_(i, j)] += add;
        }
    }
    if (i < grid.nx && !v_on_wall(j)) {
        let p = vec2<f32>((f32(i) + 0.5) * grid.h, f32(canon_v(j)) * grid.h);
        var add = 0.0;
        for (var k = 0u; k < inputs.splat_count; k++) {
            add += weight(splats[k], p) * splats[k].velocity.y;
        }
        if (grid.solids != 0u) {
            add *= v_open(i, j);
        }
        if (add != 0.0) {
            v[vi_(i, j)] += add;
        }
    }
    if (i < grid.nx && j < grid.ny) {
        let p = vec2<f32>((f32(i) + 0.5) * grid.h, (f32(j) + 0.5) * grid.h);
        var d = 0.0;
        var t = 0.0;
        var c = vec4<f32>(0.0);
        for (var k = 0u; k < inputs.splat_count; k++) {
            let w = weight(splats[k], p);
            d += w * splats[k].density;
            t += w * splats[k].temperature;
            c += w * splats[k].dye;
        }
        // Untouched samples are not written: outside every splat, or for fields a splat list
        // does not feed, the kernel costs only its reads of nothing.
        if (grid.solids != 0u) {
            let open = cell_open(i, j);
            d *= open;
            t *= open;
            c *= open;
        }
        let cell = ci(i, j);
        if (d != 0.0) {
            density[cell] += d;
        }
        if (t != 0.0) {
            temperature[cell] += t;
        }
        // A finer dye (factor above 1) takes its splats in splat_fine_dye.
        if (params.factor <= 1u && any(c != vec4<f32>(0.0))) {
            dye[cell] += c;
        }
    }
}
