use super::colour::{linear_to_srgb_exact, srgb_thresholds};
use super::*;
use crate::frame::{Boundary, Frame};

/// A background image is stretched over the picture (nearest pixel), laid over the
/// background colour by its alpha, and lies under the layers; one that cannot be read is
/// refused by key.
#[test]
fn a_background_image_lies_under_the_layers() {
    // 2 x 1 pixels: opaque red, then transparent.
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, 2, 1);
    encoder.set_color(png::ColorType::Rgba);
    encoder.write_header().and_then(|mut w| w.write_image_data(&[255, 0, 0, 255, 0, 0, 0, 0])).expect("png");
    let path = std::env::temp_dir().join(format!("fluid-backdrop-{}.png", std::process::id()));
    std::fs::write(&path, &png).expect("write");
    let spec = RenderSpec {
        background: Colour([0, 0, 255, 255]),
        background_image: Some(path.display().to_string()),
        ..RenderSpec::default()
    };
    spec.validate().expect("valid");
    // 4 x 2 cells: the image's left half red, its right half the blue background; the
    // density (white, by its value) over both, in the top row's second cell only.
    let g = Canvas::plain(Frame::new(4, 2, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let backdrop = spec.backdrop(&g).expect("backdrop").expect("an image");
    assert_eq!(backdrop.len(), 8);
    let density = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let img = spec.compose_over(Some(&backdrop), &g, &[&density], None, 0.0, None);
    let px = |row: usize, i: usize| &img[4 * (row * 4 + i)..4 * (row * 4 + i) + 4];
    for row in 0..2 {
        assert_eq!(px(row, 0), &[255, 0, 0, 255], "row {row}: red from the image");
        assert_eq!(px(row, 3), &[0, 0, 255, 255], "row {row}: the background colour through the image");
    }
    assert_eq!(px(0, 1), &[255, 255, 255, 255], "the density over the image");
    let _ = std::fs::remove_file(&path);
    let missing = RenderSpec { background_image: Some("no/such.png".into()), ..RenderSpec::default() };
    let e = missing.validate().expect_err("missing image");
    assert!(e.to_string().contains("render.background_image"), "{e}");
}

/// The velocity view: direction as hue (+x red, +y between yellow and green at 90°, −x
/// cyan, −y violet), speed over `scale` as value, coverage as alpha (premultiplied).
#[test]
fn velocity_is_drawn_as_hue_and_value() {
    let spec = Layer { field: RenderField::Velocity, scale: 2.0, ..Layer::default() };
    let v = [[2.0, 0.0], [0.0, 4.0], [-1.0, 0.0], [0.0, -2.0], [1.0, 1.0], [3.0, 0.0]];
    let c = spec.velocity_colours(&v, &[1.0, 1.0, 1.0, 1.0, 1.0, 0.5]);
    let px = |k: usize| [c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]];
    assert_eq!(px(0), [1.0, 0.0, 0.0, 1.0], "+x at full speed: red");
    // 90°: hue 1/4, between yellow (1/6) and green (1/3): green full, red half way.
    let up = px(1);
    assert!(up[1] == 1.0 && up[2] == 0.0 && (up[0] - srgb_to_linear(128)).abs() < 0.01, "{up:?}");
    let left = px(2);
    let half = srgb_to_linear(128);
    assert!(left[0] == 0.0 && (left[1] - half).abs() < 1e-6 && (left[2] - half).abs() < 1e-6, "{left:?}");
    let down = px(3);
    assert!(down[1] == 0.0 && down[2] == 1.0 && (down[0] - half).abs() < 0.01, "{down:?}");
    // 45°, speed √2 of 2: orange-yellow at 71 % value.
    let diag = px(4);
    assert!(diag[0] > diag[1] && diag[1] > 0.0 && diag[2] == 0.0, "{diag:?}");
    assert_eq!(px(5), [0.5, 0.0, 0.0, 0.5], "clamped to full value, half covered");
}

#[test]
fn colours_parse() {
    assert_eq!(Colour::try_from("#ff8000".to_string()), Ok(Colour([255, 128, 0, 255])));
    assert_eq!(Colour::try_from("#ff800040".to_string()), Ok(Colour([255, 128, 0, 64])));
    assert!(Colour::try_from("#ff80".to_string()).is_err());
    assert!(Colour::try_from("#gg8000".to_string()).is_err());
}

#[test]
fn the_srgb_table_gives_the_bytes_of_the_definition() {
    let t = srgb_thresholds();
    for (k, &th) in t.iter().enumerate() {
        let below = f32::from_bits(th.to_bits() - 1);
        assert_eq!(usize::from(linear_to_srgb_exact(th)), k + 1, "threshold {k}: {th:e}");
        assert_eq!(usize::from(linear_to_srgb_exact(below)), k, "below threshold {k}: {below:e}");
        assert_eq!(usize::from(linear_to_srgb(th)), k + 1);
        assert_eq!(usize::from(linear_to_srgb(below)), k);
    }
    // A spread of values in [0, 1] by bit pattern, and outside it.
    for bits in (0..=1.0f32.to_bits()).step_by(997) {
        let c = f32::from_bits(bits);
        assert_eq!(linear_to_srgb(c), linear_to_srgb_exact(c), "{c:e}");
    }
    for c in [-1.0, -0.0, 1.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
        assert_eq!(linear_to_srgb(c), linear_to_srgb_exact(c), "{c:e}");
    }
}

/// Every `f32` in [0, 1] (about 1.07e9; ten seconds in a release build, so not in the default
/// run): `cargo test --release -p swirly-core -- --ignored every_f32`.
#[test]
#[ignore]
fn the_srgb_table_equals_the_definition_at_every_f32() {
    let mut last = 0u8;
    for bits in 0..=1.0f32.to_bits() {
        let c = f32::from_bits(bits);
        let e = linear_to_srgb_exact(c);
        assert!(e >= last, "the definition decreases at {c:e}");
        last = e;
        assert_eq!(linear_to_srgb(c), e, "{c:e}");
    }
}

#[test]
fn ramp_ends_and_row_order() {
    let g = Canvas::plain(Frame::new(2, 2, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let spec = RenderSpec::default();
    // bottom row empty, top row full: the picture's first row is the top.
    let img = spec.render(&g, &[0.0, 0.0, 1.0, 5.0], 0.0);
    assert_eq!(&img[0..4], &[255, 255, 255, 255]);
    assert_eq!(&img[8..12], &[0, 0, 0, 255]);
}

/// Over a transparent background the picture's alpha is the ramp's (zero where nothing is
/// drawn) and its colour the ramp's own; over a half-transparent one, `α = a + α_bg (1 − a)`
/// with the colours mixed by their weights; the dye likewise by its coverage.
#[test]
fn a_transparent_background_leaves_alpha_where_nothing_is_drawn() {
    let g = Canvas::plain(Frame::new(3, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let spec = RenderSpec {
        ramp: vec![(0.0, Colour([0, 0, 0, 0])), (1.0, Colour([255, 128, 0, 255]))],
        background: Colour([20, 40, 60, 0]),
        ..RenderSpec::default()
    };
    let img = spec.render(&g, &[0.0, 0.5, 1.0], 0.0);
    assert_eq!(img[3], 0, "nothing drawn: transparent");
    assert_eq!(&img[8..12], &[255, 128, 0, 255], "fully drawn: the ramp's colour, opaque");
    // Half way: alpha 0.5 and the colour of the ramp there (premultiplied, divided back).
    assert_eq!(img[7], 128);
    let half = RenderSpec { background: Colour([255, 255, 255, 128]), ..spec.clone() };
    let img = half.render(&g, &[0.0, 0.5, 1.0], 0.0);
    assert_eq!(&img[0..4], &[255, 255, 255, 128], "the background alone");
    let a = 0.5 + (128.0 / 255.0) * 0.5;
    assert_eq!(img[7], (a * 255.0f32 + 0.5) as u8);
    // The dye: premultiplied colour d over nothing is d / a at alpha a.
    let dye = RenderSpec { field: RenderField::Dye, ..spec };
    let img = dye.render(&g, &[0.0, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0], 0.0);
    assert_eq!(img[3], 0);
    assert_eq!(img[7], 128);
    assert_eq!(img[4], linear_to_srgb(0.5));
}

/// The sRGB definitions in f64, written out here rather than taken from the renderer.
fn decode(c: u8) -> f64 {
    let c = f64::from(c) / 255.0;
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}
fn encode(c: f64) -> f64 {
    255.0 * if c <= 0.0031308 { 12.92 * c } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 }
}

/// A ramp colour is laid over the background by its alpha, and the (premultiplied) dye by
/// its own, in linear light: `c α + bg (1 − α)` and `d + bg (1 − a)`, then sRGB-encoded.
/// On a grey background, which the default black one would hide.
#[test]
fn ramps_and_dye_composite_over_the_background() {
    let g = Canvas::plain(Frame::new(3, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let grey = Colour([128, 96, 64, 255]);
    let bg = grey.0.map(decode);
    let close = |got: &[u8], want: [f64; 3], what: &str| {
        for k in 0..3 {
            assert!(
                (f64::from(got[k]) - encode(want[k])).abs() <= 0.5 + 1e-3,
                "{what}, channel {k}: {} against {:.3}",
                got[k],
                encode(want[k])
            );
        }
        assert_eq!(got[3], 255, "{what}: the picture is opaque");
    };
    // Transparent black to a half-transparent orange; the density's ramp positions 0, 0.5, 1.
    let orange = Colour([255, 128, 0, 128]);
    let spec = RenderSpec {
        ramp: vec![(0.0, Colour([0, 0, 0, 0])), (1.0, orange)],
        background: grey,
        scale: 2.0,
        ..RenderSpec::default()
    };
    let img = spec.render(&g, &[0.0, 1.0, 2.0], 0.0);
    let o = orange.0.map(decode);
    for (i, s) in [0.0, 0.5, 1.0].into_iter().enumerate() {
        let alpha = s * 128.0 / 255.0;
        let want = std::array::from_fn(|k| s * o[k] * alpha + bg[k] * (1.0 - alpha));
        close(&img[4 * i..4 * i + 4], want, &format!("ramp at {s}"));
    }
    // Dye: premultiplied colour plus the background through what its alpha leaves.
    let spec = RenderSpec { field: RenderField::Dye, background: grey, ..RenderSpec::default() };
    let dye = [0.0, 0.0, 0.0, 0.0, 0.3, 0.1, 0.05, 0.5, 0.6, 0.2, 0.1, 1.0];
    let img = spec.render(&g, &dye, 0.0);
    for i in 0..3 {
        let d = &dye[4 * i..4 * i + 4];
        let want = std::array::from_fn(|k| f64::from(d[k]) + bg[k] * (1.0 - f64::from(d[3])));
        close(&img[4 * i..4 * i + 4], want, &format!("dye {d:?}"));
    }
}

/// Each blend mode against its formula, written out here in f64 on premultiplied inputs:
/// alpha `s + d(1 − α_s)`, add `s + d` (alpha capped at 1), screen `s + d − s d`, multiply
/// `s(1 − α_d) + d(1 − α_s) + s d`; alpha `α_s + α_d(1 − α_s)` but for add.
#[test]
fn every_blend_mode_follows_its_formula() {
    let s = [0.30f32, 0.12, 0.05, 0.6];
    let d = [0.20f32, 0.35, 0.50, 0.8];
    let (sf, df) = (s.map(f64::from), d.map(f64::from));
    let over_a = sf[3] + df[3] * (1.0 - sf[3]);
    let cases: [(Blend, [f64; 4]); 4] = [
        (Blend::Alpha, std::array::from_fn(|k| if k == 3 { over_a } else { sf[k] + df[k] * (1.0 - sf[3]) })),
        (Blend::Add, std::array::from_fn(|k| if k == 3 { (sf[3] + df[3]).min(1.0) } else { sf[k] + df[k] })),
        (Blend::Screen, std::array::from_fn(|k| if k == 3 { over_a } else { sf[k] + df[k] - sf[k] * df[k] })),
        (
            Blend::Multiply,
            std::array::from_fn(|k| {
                if k == 3 { over_a } else { sf[k] * (1.0 - df[3]) + df[k] * (1.0 - sf[3]) + sf[k] * df[k] }
            }),
        ),
    ];
    for (mode, want) in cases {
        let got = mode.apply(s, d);
        for k in 0..4 {
            assert!((f64::from(got[k]) - want[k]).abs() < 1e-6, "{mode:?} channel {k}: {} against {}", got[k], want[k]);
        }
    }
    // What each mode means on opaque colours: multiply by white and screen with black
    // change nothing, add sums, alpha covers.
    let (white, black, c) = ([1.0f32; 4], [0.0, 0.0, 0.0, 1.0], [0.25f32, 0.5, 0.75, 1.0]);
    assert_eq!(Blend::Multiply.apply(c, white), c);
    assert_eq!(Blend::Screen.apply(c, black), c);
    assert_eq!(Blend::Add.apply(c, black), c);
    assert_eq!(Blend::Alpha.apply(c, white), c);
    assert_eq!(Blend::Multiply.apply(c, c), [0.0625, 0.25, 0.5625, 1.0]);
    // Nothing (all zero) laid on by any mode leaves what was there.
    for mode in [Blend::Alpha, Blend::Add, Blend::Screen, Blend::Multiply] {
        assert_eq!(mode.apply([0.0; 4], d), d, "{mode:?}");
    }
}

/// Two layers, smoke then heat added, over an opaque background: each pixel is the
/// formula of the two blends on the ramps' colours, in linear light, then sRGB-encoded.
/// The picture takes the dye's or the density's finer size when a layer shows it.
#[test]
fn layers_stack_by_their_blend_modes() {
    let g = Canvas::plain(Frame::new(2, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let grey = Colour([100, 100, 110, 200]);
    let orange = Colour([255, 140, 20, 255]);
    let spec = RenderSpec {
        background: Colour([10, 20, 30, 255]),
        layers: vec![
            Layer { field: RenderField::Density, ramp: Some(vec![(0.0, grey), (1.0, grey)]), ..Layer::default() },
            Layer {
                field: RenderField::Temperature,
                ramp: Some(vec![(0.0, Colour([0, 0, 0, 0])), (1.0, orange)]),
                scale: 2.0,
                blend: Blend::Add,
                opacity: 0.5,
                ..Layer::default()
            },
        ],
        ..RenderSpec::default()
    };
    spec.validate().expect("valid");
    let density = [1.0, 0.0];
    let temperature = [2.0 + 0.5, 0.5]; // ambient 0.5: 2 above it, then none
    let img = spec.compose(&g, &[&density, &temperature], None, 0.5, None);
    let bg = [10u8, 20, 30].map(decode);
    let (gr, or) = (grey.0.map(decode), orange.0.map(decode));
    let ga = 200.0 / 255.0;
    for k in 0..3 {
        // Cell 0: grey over the background, then half the orange added.
        let want = gr[k] * ga + bg[k] * (1.0 - ga) + 0.5 * or[k];
        let want = encode(want.min(1.0));
        assert!((f64::from(img[k]) - want).abs() <= 0.5 + 1e-3, "cell 0 channel {k}: {} against {want}", img[k]);
        // Cell 1: the grey ramp is flat, so grey still; no heat.
        let want = encode(gr[k] * ga + bg[k] * (1.0 - ga));
        assert!((f64::from(img[4 + k]) - want).abs() <= 0.5 + 1e-3, "cell 1 channel {k}");
    }
    assert_eq!((img[3], img[7]), (255, 255));
    let mut with_dye = spec.clone();
    with_dye.layers.push(Layer { field: RenderField::Dye, ..Layer::default() });
    let g2 = g.clone().with_factor("dye", 2);
    assert_eq!(with_dye.size(&g2), (4, 2));
    let dye = vec![0.0; 4 * 8];
    assert_eq!(with_dye.compose(&g2, &[&density, &temperature, &dye], None, 0.5, None).len(), 4 * 8);
    // A density three times finer: the picture takes its size; each pixel's heat is its
    // cell's. Fine cells under cell 0 hold no smoke, those under cell 1 all of it: the
    // picture is cell 1's drawing above, mirrored.
    let g3 = g.clone().with_factor("density", 3);
    assert_eq!(spec.size(&g3), (6, 3));
    let fine: Vec<f32> = (0..18).map(|k| if k % 6 < 3 { 0.0 } else { 1.0 }).collect();
    let img3 = spec.compose(&g3, &[&fine, &temperature], None, 0.5, None);
    assert_eq!(img3.len(), 4 * 18);
    let flat = spec.compose(&g, &[&[1.0, 1.0], &temperature], None, 0.5, None);
    let bare = spec.compose(&g, &[&[0.0, 0.0], &temperature], None, 0.5, None);
    for row in 0..3 {
        for i in 0..6 {
            let want = if i < 3 { &bare[0..4] } else { &flat[4..8] };
            assert_eq!(&img3[4 * (row * 6 + i)..4 * (row * 6 + i) + 4], want, "pixel ({i}, {row})");
        }
    }
}

/// Over a transparent background, layers added where nothing is drawn leave alpha zero;
/// where one draws, the alpha is its own.
#[test]
fn added_layers_keep_the_picture_transparent_where_nothing_is_drawn() {
    let g = Canvas::plain(Frame::new(2, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let spec =
        RenderSpec { background: Colour([7, 8, 12, 0]), look: Some(Look::Fire), scale: 2.0, ..RenderSpec::default() };
    spec.validate().expect("valid");
    let img = spec.compose(&g, &[&[0.0, 0.0], &[0.0, 2.0]], None, 0.0, None);
    assert_eq!(img[3], 0, "cold, no soot: transparent");
    assert_eq!(&img[4..8], &[255, 244, 200, 255], "the black body's white-hot end, opaque");
}

/// A signed view puts zero at the ramp's middle: −scale blue, 0 black, +scale red.
#[test]
fn signed_views_centre_zero() {
    let g = Canvas::plain(Frame::new(3, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let spec = RenderSpec {
        layers: vec![Layer { field: RenderField::Pressure, scale: 4.0, ..Layer::default() }],
        ..RenderSpec::default()
    };
    let img = spec.compose(&g, &[&[-4.0, 0.0, 8.0]], None, 0.0, None);
    assert_eq!(&img[0..4], &[0x3b, 0x6e, 0xd8, 255]);
    assert_eq!(&img[4..8], &[0, 0, 0, 255]);
    assert_eq!(&img[8..12], &[0xe0, 0x4a, 0x2e, 255], "beyond the scale: the end of the ramp");
}

/// A trail keeps what the layer drew, faded by half every half-life of simulated time,
/// under what it draws now; a frame at an earlier time (a reset) starts it afresh.
#[test]
fn trails_fade_by_their_half_life() {
    let g = Canvas::plain(Frame::new(2, 1, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let spec = RenderSpec {
        background: Colour([0, 0, 0, 0]),
        layers: vec![Layer { trail: 0.5, ..Layer::default() }],
        ..RenderSpec::default()
    };
    let mut trails = Trails::default();
    let first = spec.compose(&g, &[&[1.0, 0.0]], None, 0.0, Some((&mut trails, 1.0)));
    assert_eq!(&first[0..8], &[255, 255, 255, 255, 0, 0, 0, 0]);
    // One half-life on, the density gone from cell 0: half of it is left (alpha 1/2).
    let second = spec.compose(&g, &[&[0.0, 0.0]], None, 0.0, Some((&mut trails, 1.5)));
    assert_eq!(second[3], 128);
    assert_eq!(second[0], 255, "the faded colour divided by its alpha: white");
    // Two more half-lives: a quarter of that.
    let third = spec.compose(&g, &[&[0.0, 0.0]], None, 0.0, Some((&mut trails, 2.5)));
    assert_eq!(third[3], (0.125f32 * 255.0 + 0.5) as u8);
    // What is drawn now covers the trail: full density gives full white again.
    let fourth = spec.compose(&g, &[&[0.0, 1.0]], None, 0.0, Some((&mut trails, 2.5)));
    assert_eq!(&fourth[4..8], &[255, 255, 255, 255]);
    // Back in time: the trail is forgotten.
    let reset = spec.compose(&g, &[&[0.0, 0.0]], None, 0.0, Some((&mut trails, 0.0)));
    assert_eq!(&reset[0..8], &[0; 8]);
}

#[test]
fn bad_layers_are_refused_by_key() {
    let layer = Layer::default();
    let refused = |spec: RenderSpec, words: &[&str]| {
        let e = spec.validate().expect_err("refused").to_string();
        for w in words {
            assert!(e.contains(w), "`{e}` lacks `{w}`");
        }
    };
    refused(RenderSpec { layers: vec![layer.clone(); 9], ..RenderSpec::default() }, &["render.layers", "9", "8"]);
    let opacity = Layer { opacity: 1.5, ..layer.clone() };
    refused(
        RenderSpec { layers: vec![layer.clone(), opacity], ..RenderSpec::default() },
        &["render.layers[1].opacity", "1.5"],
    );
    let trail = Layer { trail: -1.0, ..layer.clone() };
    refused(RenderSpec { layers: vec![trail], ..RenderSpec::default() }, &["render.layers[0].trail", "-1"]);
    let scale = Layer { scale: 0.0, ..layer.clone() };
    refused(RenderSpec { layers: vec![scale], ..RenderSpec::default() }, &["render.layers[0].scale", "> 0"]);
    let ramp = Layer { ramp: Some(vec![(0.5, Colour([0; 4])), (0.2, Colour([0; 4]))]), ..layer.clone() };
    refused(RenderSpec { layers: vec![ramp], ..RenderSpec::default() }, &["render.layers[0].ramp[1]", "rise"]);
    // Precedence, so `--set` changes a scene's picture alone: a look over layers, layers
    // over `field` and `ramp`.
    let curl = Layer { field: RenderField::Curl, ..layer };
    let both = RenderSpec { field: RenderField::Fuel, layers: vec![curl.clone()], ..RenderSpec::default() };
    both.validate().expect("valid");
    assert_eq!(both.effective_layers(), vec![curl.clone()]);
    let all = RenderSpec { look: Some(Look::Ink), ..both };
    assert_eq!(all.effective_layers(), Look::Ink.layers(1.0));
}
