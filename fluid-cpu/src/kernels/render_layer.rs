//! `render_layer`: one pixel of a layer — its colour (a value through the ramp, the dye, the
//! velocity's hue), its trail faded under it, laid over the image by its blend mode. The
//! colour arithmetic is the host composer's own (`swirly_core::render`), so this twin draws what
//! the reference draws.

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::render::kernels::{
    COLOUR_BACKGROUND, FIRST_BACKDROP, FIRST_COLOUR, KIND_DYE, KIND_HUE, KIND_SPEED, LayerParams, ramp_position,
};
use swirly_core::render::{Blend, dye_colour, ramp_colour, trail_fade, velocity_colour};

use super::common::G;
use crate::dispatch::{Ctx, Slots};

fn texel(x: &[f32], k: usize) -> [f32; 4] {
    [x[4 * k], x[4 * k + 1], x[4 * k + 2], x[4 * k + 3]]
}

/// The layer's own colour at picture pixel `(i, j)` (`j` from the bottom), premultiplied.
fn colour_at(
    g: &G,
    p: &LayerParams,
    stops: &[(f32, [f32; 4])],
    a: &[f32],
    b: &[f32],
    dye: &[f32],
    i: usize,
    j: usize,
) -> [f32; 4] {
    let (ox, oy) = (p.out_nx as usize, p.out_ny as usize);
    // The field's cell under the pixel, on its own grid (finer for the dye or the density).
    let f = p.factor.max(1) as usize;
    let (fx, fy) = (g.nx * f, g.ny * f);
    let (ci, cj) = (i * fx / ox, j * fy / oy);
    if p.kind == KIND_DYE {
        return dye_colour(texel(dye, cj * fx + ci));
    }
    let x = match p.kind {
        KIND_HUE | KIND_SPEED => {
            let v = [0.5 * (a[g.u(ci, cj)] + a[g.u(ci + 1, cj)]), 0.5 * (b[g.v(ci, cj)] + b[g.v(ci, cj + 1)])];
            if p.kind == KIND_HUE {
                return velocity_colour(v, 1.0, p.scale);
            }
            v[0].hypot(v[1])
        }
        _ => a[cj * fx + ci],
    };
    ramp_colour(stops, ramp_position(p.kind, x, p.offset, p.scale))
}

/// Every pixel of the picture.
pub fn run(
    g: &G,
    p: &LayerParams,
    dt: f32,
    (a, b, dye): (&[f32], &[f32], &[f32]),
    colours: &[f32],
    trail: &mut [f32],
    backdrop: &[f32],
    image: &mut [f32],
) {
    let stops: Vec<(f32, [f32; 4])> = (0..p.stops as usize)
        .map(|s| (colours[4 * (p.first_stop as usize + 2 * s)], texel(colours, p.first_stop as usize + 2 * s + 1)))
        .collect();
    let background = texel(colours, COLOUR_BACKGROUND);
    let blend = Blend::from_code(p.blend);
    let ox = p.out_nx as usize;
    let trailing = p.half_life > 0.0 && !trail.is_empty();
    let fade = if dt >= 0.0 { Some(trail_fade(dt, p.half_life)) } else { None };
    let mut trail_rows: Vec<&mut [f32]> = if trailing { trail.chunks_mut(4 * ox).collect() } else { Vec::new() };
    let image_rows = image.par_chunks_mut(4 * ox).enumerate();
    let work = |(j, row): (usize, &mut [f32]), mut kept: Option<&mut [f32]>| {
        for i in 0..ox {
            let mut c = colour_at(g, p, &stops, a, b, dye, i, j);
            if let Some(kept) = kept.as_deref_mut() {
                if let Some(fade) = fade {
                    c = Blend::Alpha.apply(c, texel(kept, i).map(|x| x * fade));
                }
                kept[4 * i..4 * i + 4].copy_from_slice(&c);
            }
            let s = c.map(|x| x * p.opacity);
            let d = match p.first {
                FIRST_COLOUR => background,
                FIRST_BACKDROP => texel(backdrop, j * ox + i),
                _ => texel(row, i),
            };
            row[4 * i..4 * i + 4].copy_from_slice(&blend.apply(s, d));
        }
    };
    if trailing {
        image_rows.zip(trail_rows.par_iter_mut()).for_each(|(r, t)| work(r, Some(t)));
    } else {
        image_rows.for_each(|r| work(r, None));
    }
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: LayerParams = d.params().unwrap_or_default();
    let (a, b, dye, colours) = (s.r("a"), s.r("b"), s.r("dye"), s.r("colours"));
    let (trail, backdrop) = (s.w("trail"), s.r("backdrop"));
    run(c.g, &p, c.dt, (a, b, dye), colours, trail, backdrop, s.w("image"));
}
