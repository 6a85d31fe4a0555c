// One pixel of the picture: the obstacles' colour laid over the image by the cell's solid
// fraction, then RGBA8 sRGB with straight alpha, top row first (twin of
// fluid-cpu/src/kernels/render_finish.rs).
// #include render

@group(0) @binding(2) var<uniform> params: FinishParams;
@group(1) @binding(0) var<storage, read> image: array<vec4<f32>>;
@group(1) @binding(1) var<storage, read> solid: array<f32>;
@group(1) @binding(2) var<storage, read> colours: array<vec4<f32>>;
@group(1) @binding(3) var<storage, read_write> picture: array<u32>;

// The sRGB byte of a linear value: the definition, rounded to the nearest byte.
fn srgb_byte(c_in: f32) -> u32 {
    let c = clamp(c_in, 0.0, 1.0);
    var s = c * 12.92;
    if (c > 0.0031308) {
        s = 1.055 * pow(c, 1.0 / 2.4) - 0.055;
    }
    return min(u32(s * 255.0 + 0.5), 255u);
}

@compute @workgroup_size(WG_X, WG_Y)
fn render_finish(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let row = id.y;
    if (i >= params.out_nx || row >= params.out_ny) {
        return;
    }
    let j = params.out_ny - 1u - row;
    var d = image[j * params.out_nx + i];
    if (params.solids == 1u) {
        let f = clamp(solid[(j * grid.ny / params.out_ny) * grid.nx + i * grid.nx / params.out_nx], 0.0, 1.0);
        if (f > 0.0) {
            d = blend(BLEND_ALPHA, colours[COLOUR_OBSTACLE] * f, d);
        }
    }
    let alpha = clamp(d.w, 0.0, 1.0);
    var rgb = vec3<u32>(0u);
    if (alpha > 0.0) {
        rgb = vec3<u32>(srgb_byte(d.x / alpha), srgb_byte(d.y / alpha), srgb_byte(d.z / alpha));
    }
    let a8 = min(u32(alpha * 255.0 + 0.5), 255u);
    picture[row * params.out_nx + i] = rgb.x | (rgb.y << 8u) | (rgb.z << 16u) | (a8 << 24u);
}
