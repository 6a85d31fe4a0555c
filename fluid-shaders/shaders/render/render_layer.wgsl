// One pixel of a layer: its colour (a value through the ramp, the dye, or the velocity's hue
// and value), its trail faded under it, laid over the image by its blend mode; premultiplied
// linear RGBA throughout (twin of fluid-cpu/src/kernels/render_layer.rs).
// #include render

@group(0) @binding(2) var<uniform> params: LayerParams;
@group(1) @binding(0) var<storage, read> a: array<f32>;
@group(1) @binding(1) var<storage, read> b: array<f32>;
@group(1) @binding(2) var<storage, read> dye: array<vec4<f32>>;
@group(1) @binding(3) var<storage, read> colours: array<vec4<f32>>;
@group(1) @binding(4) var<storage, read_write> trail: array<vec4<f32>>;
@group(1) @binding(5) var<storage, read> backdrop: array<vec4<f32>>;
@group(1) @binding(6) var<storage, read_write> image: array<vec4<f32>>;

// KIND_*, FIRST_BACKDROP and COLOUR_* are in params.wgsl.

// The ramp's premultiplied colour at t: straight colour and alpha interpolated between the
// stops, then premultiplied.
fn ramp_at(t: f32) -> vec4<f32> {
    let first = params.first_stop;
    if (t <= colours[first].x) {
        return premultiply(colours[first + 1u]);
    }
    for (var k = 0u; k + 1u < params.stops; k++) {
        let p0 = colours[first + 2u * k].x;
        let p1 = colours[first + 2u * k + 2u].x;
        if (t <= p1) {
            var s = 1.0;
            if (p1 > p0) {
                s = (t - p0) / (p1 - p0);
            }
            let c0 = colours[first + 2u * k + 1u];
            let c1 = colours[first + 2u * k + 3u];
            return premultiply(c0 + (c1 - c0) * s);
        }
    }
    return premultiply(colours[first + 2u * params.stops - 1u]);
}

fn ramp_position(x_in: f32) -> f32 {
    let signed = params.kind == KIND_SIGNED;
    var x = x_in - params.offset;
    if (params.kind == KIND_ABS) {
        x = abs(x_in);
    }
    var t = x / params.scale;
    if (signed) {
        t = 0.5 + 0.5 * x / params.scale;
    }
    if (t != t) {
        return select(0.0, 0.5, signed);
    }
    return clamp(t, 0.0, 1.0);
}

// Fully saturated hue h (0 to 1) at value v, each channel through 8 bits to linear light.
fn hue_colour(vel: vec2<f32>) -> vec4<f32> {
    var angle = atan2(vel.y, vel.x);
    if (angle < 0.0) {
        angle += TAU;
    }
    let h = angle / TAU;
    var v = clamp(length(vel) / params.scale, 0.0, 1.0);
    if (v != v) {
        v = 0.0;
    }
    let n = vec3<f32>(5.0, 3.0, 1.0);
    let k = (n + vec3<f32>(h * 6.0)) % vec3<f32>(6.0);
    let rgb = vec3<f32>(v) - vec3<f32>(v) * clamp(min(k, vec3<f32>(4.0) - k), vec3<f32>(0.0), vec3<f32>(1.0));
    return vec4<f32>(srgb_byte_to_linear(rgb.x), srgb_byte_to_linear(rgb.y), srgb_byte_to_linear(rgb.z), 1.0);
}

fn layer_colour(i: u32, j: u32) -> vec4<f32> {
    // The field's cell under the pixel, on its own grid (finer for the dye or the density).
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let si = i * fx / params.out_nx;
    let sj = j * (grid.ny * f) / params.out_ny;
    if (params.kind == KIND_DYE) {
        let d = dye[sj * fx + si];
        var alpha = clamp(d.w, 0.0, 1.0);
        if (alpha != alpha) {
            alpha = 0.0;
        }
        return vec4<f32>(max(d.xyz, vec3<f32>(0.0)), alpha);
    }
    var x = 0.0;
    if (params.kind == KIND_HUE || params.kind == KIND_SPEED) {
        let vel = vec2<f32>(0.5 * (a[ui_(si, sj)] + a[ui_(si + 1u, sj)]), 0.5 * (b[vi_(si, sj)] + b[vi_(si, sj + 1u)]));
        if (params.kind == KIND_HUE) {
            return hue_colour(vel);
        }
        x = length(vel);
    } else {
        x = a[sj * fx + si];
    }
    return ramp_at(ramp_position(x));
}

@compute @workgroup_size(WG_X, WG_Y)
fn render_layer(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= params.out_nx || j >= params.out_ny) {
        return;
    }
    let p = j * params.out_nx + i;
    var c = layer_colour(i, j);
    if (params.half_life > 0.0) {
        if (inputs.dt >= 0.0) {
            c = blend(BLEND_ALPHA, c, trail[p] * pow(0.5, inputs.dt / params.half_life));
        }
        trail[p] = c;
    }
    var d = colours[COLOUR_BACKGROUND];
    if (params.first == 0u) {
        d = image[p];
    } else if (params.first == FIRST_BACKDROP) {
        d = backdrop[p];
    }
    image[p] = blend(params.blend, c * params.opacity, d);
}
