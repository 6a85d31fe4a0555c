// One invocation per cell (i, j) of a lattice params.factor times finer than the velocity's
// along each axis (1: the velocity's cells): every splat's amounts added to the channels the
// dispatch carries (two scalars, each the splat's density, temperature or fuel by
// params.q*_amount, and the dye), weighted by the splat's falloff at the cell's centre. With
// obstacles a finer lattice's cell is first cleared where its velocity cell is wholly solid
// (rasterise_solids clears the velocity's cells), and what a cell receives is scaled by its
// velocity cell's open part. A cell that receives nothing is left unwritten (twin of
// fluid-cpu/src/kernels/splat_cells.rs). Splats are binned per workgroup (splat_bins).
// #include solid
// #include splat_weight
// #include splat_bins

@group(0) @binding(2) var<uniform> params: SplatParams;
@group(0) @binding(3) var<storage, read> splats: array<SplatGpu>;
@group(1) @binding(0) var<storage, read_write> q0: array<f32>;
@group(1) @binding(1) var<storage, read_write> q1: array<f32>;
@group(1) @binding(2) var<storage, read_write> rgba: array<vec4<f32>>;
@group(1) @binding(3) var<storage, read> solid: array<f32>;
@group(1) @binding(4) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read> v_faces: array<vec2<f32>>;

// CHANNEL_* and AMOUNT_* are in params.wgsl.

// The splat's amount for a scalar channel.
fn amount(s: SplatGpu, which: u32) -> f32 {
    if (which == AMOUNT_DENSITY) {
        return s.density;
    }
    if (which == AMOUNT_TEMPERATURE) {
        return s.temperature;
    }
    return s.fuel;
}

@compute @workgroup_size(WG_X, WG_Y)
fn splat_cells(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let i = id.x;
    let j = id.y;
    let inside = i < fx && j < grid.ny * f;
    let cell = j * fx + i;
    let on = params.channels;
    var open = 1.0;
    if (inside && grid.solids != 0u) {
        if (f > 1u && solid[ci(i / f, j / f)] == 1.0) {
            if ((on & CHANNEL_Q0) != 0u) {
                q0[cell] = 0.0;
            }
            if ((on & CHANNEL_Q1) != 0u) {
                q1[cell] = 0.0;
            }
            if ((on & CHANNEL_RGBA) != 0u) {
                rgba[cell] = vec4<f32>(0.0);
            }
        }
        open = cell_open(i / f, j / f);
    }
    if (inputs.records == 0u) {
        return;
    }
    let scale = f32(f);
    let p = vec2<f32>(((f32(i) + 0.5) / scale) * grid.h, ((f32(j) + 0.5) / scale) * grid.h);
    var a = 0.0;
    var b = 0.0;
    var c = vec4<f32>(0.0);
    for (var base = 0u; base < inputs.records; base += SPLAT_CHUNK) {
        let n = bin_splats(base, lane, wg.xy, grid.h / scale);
        for (var q = 0u; q < n; q++) {
            let s = splats[chunk_hits[q]];
            let w = weight(s, p);
            // Only the channels carried: the branches are uniform over the dispatch.
            if ((on & CHANNEL_Q0) != 0u) {
                a += w * amount(s, params.q0_amount);
            }
            if ((on & CHANNEL_Q1) != 0u) {
                b += w * amount(s, params.q1_amount);
            }
            if ((on & CHANNEL_RGBA) != 0u) {
                c += w * s.dye;
            }
        }
        workgroupBarrier();
    }
    if (!inside) {
        return;
    }
    a *= open;
    b *= open;
    c *= open;
    if ((on & CHANNEL_Q0) != 0u && a != 0.0) {
        q0[cell] += a;
    }
    if ((on & CHANNEL_Q1) != 0u && b != 0.0) {
        q1[cell] += b;
    }
    if ((on & CHANNEL_RGBA) != 0u && any(c != vec4<f32>(0.0))) {
        rgba[cell] += c;
    }
}
