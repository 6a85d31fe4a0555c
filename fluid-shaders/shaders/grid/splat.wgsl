// One invocation: add every splat of the step to u-face (i, j), v-face (i, j) and cell (i, j)
// (density, temperature, dye), weighted by the splat's falloff at that sample's position.
// Distances wrap on periodic axes (the dye only when it lives on this grid, params.factor 1).
// Samples that receive nothing are left unwritten. With
// obstacles a face receives its open part of the velocity, a cell its open part of the rest.
// Splats are binned per workgroup (splat_bins).
// #include solid
// #include splat_weight
// #include splat_bins

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
fn splat(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    if (inputs.records == 0u) {
        return;
    }
    let i = id.x;
    let j = id.y;
    let on_u = i <= grid.nx && j < grid.ny && !u_on_wall(i);
    let on_v = i < grid.nx && j <= grid.ny && !v_on_wall(j);
    let on_cell = i < grid.nx && j < grid.ny;
    let pu = vec2<f32>(f32(canon_u(i)) * grid.h, (f32(j) + 0.5) * grid.h);
    let pv = vec2<f32>((f32(i) + 0.5) * grid.h, f32(canon_v(j)) * grid.h);
    let pc = vec2<f32>((f32(i) + 0.5) * grid.h, (f32(j) + 0.5) * grid.h);
    var add_u = 0.0;
    var add_v = 0.0;
    var d = 0.0;
    var t = 0.0;
    var c = vec4<f32>(0.0);
    for (var base = 0u; base < inputs.records; base += SPLAT_CHUNK) {
        let n = bin_splats(base, lane, wg.xy, grid.h);
        for (var q = 0u; q < n; q++) {
            let s = splats[chunk_hits[q]];
            if (on_u) {
                add_u += weight(s, pu) * s.velocity.x;
            }
            if (on_v) {
                add_v += weight(s, pv) * s.velocity.y;
            }
            if (on_cell) {
                let w = weight(s, pc);
                d += w * s.density;
                t += w * s.temperature;
                c += w * s.dye;
            }
        }
        workgroupBarrier();
    }
    if (on_u) {
        if (grid.solids != 0u) {
            add_u *= u_open(i, j);
        }
        if (add_u != 0.0) {
            u[ui_(i, j)] += add_u;
        }
    }
    if (on_v) {
        if (grid.solids != 0u) {
            add_v *= v_open(i, j);
        }
        if (add_v != 0.0) {
            v[vi_(i, j)] += add_v;
        }
    }
    if (on_cell) {
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
        // A finer dye (factor above 1) takes its splats in splat_cells.
        if (params.factor <= 1u && any(c != vec4<f32>(0.0))) {
            dye[cell] += c;
        }
    }
}
