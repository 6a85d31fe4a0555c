// What the render kernels share: the blend modes on premultiplied colours (the W3C
// compositing formulas; `add` as plus-lighter) and the colour texels' layout.

const BLEND_ALPHA: u32 = 0u;
const BLEND_ADD: u32 = 1u;
const BLEND_SCREEN: u32 = 2u;
const BLEND_MULTIPLY: u32 = 3u;
const TAU: f32 = 6.283185307179586;

fn premultiply(c: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(c.xyz * c.w, c.w);
}

// s laid onto d.
fn blend(mode: u32, s: vec4<f32>, d: vec4<f32>) -> vec4<f32> {
    let over_alpha = s.w + d.w * (1.0 - s.w);
    switch mode {
        case 1u: {
            return vec4<f32>(s.xyz + d.xyz, min(s.w + d.w, 1.0));
        }
        case 2u: {
            return vec4<f32>(s.xyz + d.xyz - s.xyz * d.xyz, over_alpha);
        }
        case 3u: {
            return vec4<f32>(s.xyz * (1.0 - d.w) + d.xyz * (1.0 - s.w) + s.xyz * d.xyz, over_alpha);
        }
        default: {
            return vec4<f32>(s.xyz + d.xyz * (1.0 - s.w), over_alpha);
        }
    }
}

// A channel of 0 to 1 rounded to 8 bits, then to linear light.
fn srgb_byte_to_linear(x: f32) -> f32 {
    let c = min(floor(x * 255.0 + 0.5), 255.0) / 255.0;
    if (c <= 0.04045) {
        return c / 12.92;
    }
    return pow((c + 0.055) / 1.055, 2.4);
}
