//! `render_finish`: one pixel of the picture — the obstacles' colour laid over the image by
//! the cell's solid fraction, encoded to RGBA8 sRGB with straight alpha, top row first (the
//! host composer's own arithmetic, `swirly_core::render::finish_pixel`).

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::render::finish_pixel;
use swirly_core::render::kernels::{COLOUR_OBSTACLE, FinishParams};

use super::common::G;
use crate::dispatch::{Ctx, Slots};

/// Every pixel: `picture` holds one little-endian RGBA8 word per pixel (as `f32` bits).
pub fn run(g: &G, p: &FinishParams, image: &[f32], solid: &[f32], colours: &[f32], picture: &mut [f32]) {
    let (ox, oy) = (p.out_nx as usize, p.out_ny as usize);
    let k = 4 * COLOUR_OBSTACLE;
    let obstacle = [colours[k], colours[k + 1], colours[k + 2], colours[k + 3]];
    picture.par_chunks_mut(ox).enumerate().for_each(|(row, out)| {
        let j = oy - 1 - row;
        for (i, o) in out.iter_mut().enumerate() {
            let t = 4 * (j * ox + i);
            let d = [image[t], image[t + 1], image[t + 2], image[t + 3]];
            let f = (p.solids == 1).then(|| solid[(j * g.ny / oy) * g.nx + i * g.nx / ox]);
            *o = f32::from_bits(u32::from_le_bytes(finish_pixel(d, f, obstacle)));
        }
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: FinishParams = d.params().unwrap_or_default();
    let (image, solid, colours) = (s.r("image"), s.r("solid"), s.r("colours"));
    run(c.g, &p, image, solid, colours, s.w("picture"));
}
