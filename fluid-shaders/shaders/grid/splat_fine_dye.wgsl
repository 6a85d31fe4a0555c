// One invocation per cell (i, j) of the finer dye (params.factor cells per cell along each
// axis): with obstacles, cleared when its cell is wholly solid, and what it receives scaled by
// its cell's open part; then every splat's dye added, weighted by the splat's falloff at its
// centre. A cell that receives nothing is left unwritten (twin of `run_fine_dye` in
// fluid-cpu/src/kernels/splat.rs).
// #include solid
// #include splat_weight

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(0) @binding(3) var<storage, read> splats: array<SplatGpu>;
@group(1) @binding(0) var<storage, read_write> dye: array<vec4<f32>>;
@group(1) @binding(1) var<storage, read> solid: array<f32>;
@group(1) @binding(2) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(3) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn splat_fine_dye(@builtin(global_invocation_id) id: vec3<u32>) {
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let i = id.x;
    let j = id.y;
    if (i >= fx || j >= grid.ny * f) {
        return;
    }
    let ic = i / f;
    let jc = j / f;
    let cell = j * fx + i;
    var open = 1.0;
    if (grid.solids != 0u) {
        if (solid[ci(ic, jc)] == 1.0) {
            dye[cell] = vec4<f32>(0.0);
        }
        open = cell_open(ic, jc);
    }
    if (inputs.splat_count == 0u) {
        return;
    }
    let scale = f32(f);
    let p = vec2<f32>(((f32(i) + 0.5) / scale) * grid.h, ((f32(j) + 0.5) / scale) * grid.h);
    var c = vec4<f32>(0.0);
    for (var k = 0u; k < inputs.splat_count; k++) {
        c += weight(splats[k], p) * splats[k].dye;
    }
    c *= open;
    if (any(c != vec4<f32>(0.0))) {
        dye[cell] += c;
    }
}
