//! `fluid view` in a real window, under Xvfb (the test command installs it): a scripted drag
//! through the same path as the mouse's changes the window's picture where it went. A missing
//! `xvfb-run` or a window that cannot open is a failure, never a skip.
#![cfg(feature = "view")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn screenshot(dir: &Path, name: &str, drag: Option<&str>) -> image::RgbaImage {
    let path: PathBuf = dir.join(format!("{name}.png"));
    let mut args = vec![
        "-a".to_string(),
        "-s".to_string(),
        "-screen 0 1280x800x24".to_string(),
        env!("CARGO_BIN_EXE_fluid").to_string(),
        "view".to_string(),
        "ink".to_string(),
        "--frames".to_string(),
        "24".to_string(),
        "--screenshot".to_string(),
        path.to_string_lossy().into_owned(),
    ];
    for set in ["grid.nx=48", "grid.ny=48", "emitters=[]"] {
        args.extend(["--set".to_string(), set.to_string()]);
    }
    if let Some(d) = drag {
        args.extend(["--drag".to_string(), d.to_string()]);
    }
    let out = Command::new("xvfb-run").args(&args).output().expect("xvfb-run (apt-get install xvfb xauth)");
    assert!(
        out.status.success(),
        "fluid view {name}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    image::open(&path).expect("screenshot").to_rgba8()
}

/// Where two screenshots differ, right of the panel: how many pixels, and their mean row.
fn difference(a: &image::RgbaImage, b: &image::RgbaImage) -> (usize, f64) {
    assert_eq!(a.dimensions(), b.dimensions());
    let (mut n, mut rows) = (0usize, 0f64);
    for (x, y, p) in a.enumerate_pixels() {
        let q = b.get_pixel(x, y);
        let d = (0..3).map(|k| (i32::from(p[k]) - i32::from(q[k])).abs()).max().unwrap_or(0);
        if x > a.width() * 2 / 5 && d > 24 {
            n += 1;
            rows += f64::from(y);
        }
    }
    (n, if n > 0 { rows / n as f64 } else { f64::NAN })
}

#[test]
fn a_scripted_drag_changes_the_window_where_it_went() {
    let dir = std::env::temp_dir().join(format!("fluid-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let still = screenshot(&dir, "still", None);
    let high = screenshot(&dir, "high", Some("0.2,0.75:0.8,0.75"));
    let low = screenshot(&dir, "low", Some("0.2,0.25:0.8,0.25"));
    let (n_high, row_high) = difference(&still, &high);
    let (n_low, row_low) = difference(&still, &low);
    let h = f64::from(still.height());
    assert!(n_high > 500 && n_low > 500, "the drags drew {n_high} and {n_low} pixels");
    // Rows count down the window: the high drag's ink lies above the low one's, by about half
    // the picture.
    assert!(row_low - row_high > 0.2 * h, "high drag at row {row_high:.0}, low at {row_low:.0} of {h}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--headless` runs the viewer's frames without a window (no display needed): it reports the
/// frame time, and `--gif` keeps every frame's picture, the scripted drag's ink in it.
#[test]
fn headless_frames_are_timed_and_recorded() {
    let dir = std::env::temp_dir().join(format!("fluid-view-headless-{}", std::process::id()));
    let gif = dir.join("run.gif");
    let out = Command::new(env!("CARGO_BIN_EXE_fluid"))
        .args(["view", "ink", "--headless", "--frames", "16", "--drag", "0.2,0.5:0.8,0.5"])
        .args(["--set", "grid.nx=40", "--set", "grid.ny=32", "--set", "emitters=[]", "--gif"])
        .arg(&gif)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("fluid view");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("16 frames, median") && stdout.contains("frames/s"), "{stdout}");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut d = options.read_info(std::fs::File::open(&gif).expect("the GIF")).expect("a GIF");
    assert_eq!((d.width(), d.height()), (40, 32));
    let (mut frames, mut last_lit) = (0, 0);
    while let Some(f) = d.read_next_frame().expect("frame") {
        frames += 1;
        last_lit = f.buffer.chunks_exact(4).filter(|p| p[..3].iter().any(|c| *c > 40)).count();
    }
    assert_eq!(frames, 16);
    assert!(last_lit > 20, "the drag's ink shows in the last frame ({last_lit} pixels)");
    let _ = std::fs::remove_dir_all(&dir);
}
