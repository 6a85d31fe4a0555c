//! How another backend's fields are compared with the CPU backend's: the measures of their
//! difference, the tolerance they are held to, and pictures of a failure.
//!
//! Set `FLUID_CONFORMANCE_REPORT=1` to print every measured difference.
//!
//! A failing comparison writes the CPU field, the other backend's field and their difference as
//! PNG under `target/conformance/` before it panics, so a person can look.

use std::path::PathBuf;

use swirly::{FieldId, model::Grid};

/// How close another backend must come to the CPU backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Largest |difference|, relative to the largest |value| of the CPU field.
    pub max_abs: f64,
    /// ‖difference‖₂ / ‖CPU field‖₂.
    pub rel_l2: f64,
}

/// Differences between two fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    /// Largest |a − b| / max |a|.
    pub max_abs: f64,
    /// ‖a − b‖ / ‖a‖.
    pub rel_l2: f64,
}

/// Compare `b` against the reference `a`.
pub fn difference(a: &[f32], b: &[f32]) -> Difference {
    let wide = |v: &[f32]| -> Vec<f64> { v.iter().map(|x| f64::from(*x)).collect() };
    difference_f64(&wide(a), &wide(b))
}

/// [`difference`] of values held in f64 (double-float sums).
pub fn difference_f64(a: &[f64], b: &[f64]) -> Difference {
    assert_eq!(a.len(), b.len());
    let (mut d2, mut a2, mut dmax, mut amax) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (*x, *y);
        let d = if x.is_finite() && y.is_finite() { (x - y).abs() } else { f64::INFINITY };
        d2 += d * d;
        a2 += x * x;
        dmax = dmax.max(d);
        amax = amax.max(x.abs());
    }
    let scale = |n: f64, d: f64| {
        if d > 0.0 {
            n / d
        } else if n > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    };
    Difference { max_abs: scale(dmax, amax), rel_l2: scale(d2.sqrt(), a2.sqrt()) }
}

fn conformance_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("target"));
    target.join("conformance")
}

/// A field as an RGB picture, +y up; dye shows its four channels side by side.
fn picture(grid: &Grid, field: FieldId, data: &[f32], scale: f32) -> (u32, u32, Vec<u8>) {
    let shape = grid.shape(field);
    let (rows, cols) = (shape[0], shape.iter().skip(1).product::<usize>());
    let mut px = Vec::with_capacity(rows * cols * 3);
    for r in (0..rows).rev() {
        for c in 0..cols {
            let x = data[r * cols + c] / scale;
            // Diverging: blue for negative, red for positive, black at zero.
            let t = x.clamp(-1.0, 1.0);
            let (red, blue) = if t >= 0.0 { (t, 0.0) } else { (0.0, -t) };
            px.extend_from_slice(&[(red * 255.0) as u8, (0.25 * (1.0 - t.abs()) * 255.0) as u8, (blue * 255.0) as u8]);
        }
    }
    (cols as u32, rows as u32, px)
}

fn write_failure_pictures(name: &str, grid: &Grid, field: FieldId, cpu: &[f32], other: &[f32]) -> String {
    let dir = conformance_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return "(could not create target/conformance)".into();
    }
    let scale = cpu.iter().fold(1e-30f32, |m, x| m.max(x.abs()));
    let diff: Vec<f32> = cpu.iter().zip(other).map(|(a, b)| b - a).collect();
    let dscale = diff.iter().fold(1e-30f32, |m, x| m.max(x.abs()));
    let mut written = Vec::new();
    for (suffix, data, s) in [("cpu", cpu, scale), ("other", other, scale), ("diff", &diff[..], dscale)] {
        let (w, h, px) = picture(grid, field, data, s);
        let path = dir.join(format!("{name}-{}-{suffix}.png", field.name()));
        if image::save_buffer(&path, &px, w, h, image::ExtendedColorType::Rgb8).is_ok() {
            written.push(path.display().to_string());
        }
    }
    written.join(", ")
}

pub(crate) fn check(name: &str, grid: &Grid, field: FieldId, cpu: &[f32], other: &[f32], tol: Tolerance) {
    let d = difference(cpu, other);
    if std::env::var_os("FLUID_CONFORMANCE_REPORT").is_some() {
        eprintln!("conformance {name} {}: max-abs {:.2e} rel-L2 {:.2e}", field.name(), d.max_abs, d.rel_l2);
    }
    if d.max_abs <= tol.max_abs && d.rel_l2 <= tol.rel_l2 {
        return;
    }
    let pictures = write_failure_pictures(name, grid, field, cpu, other);
    panic!(
        "{name}: field `{}` differs from the CPU backend: max-abs {:.3e} (tolerance {:.0e}), relative L2 {:.3e} \
         (tolerance {:.0e}); pictures: {pictures}",
        field.name(),
        d.max_abs,
        tol.max_abs,
        d.rel_l2,
        tol.rel_l2
    );
}

/// The double-float pressure `pressure + pressure_lo` against the CPU's (no pictures: the
/// `pressure` check before it draws them).
pub(crate) fn check_f64(name: &str, cpu: &[f64], other: &[f64], tol: Tolerance) {
    let d = difference_f64(cpu, other);
    assert!(
        d.max_abs <= tol.max_abs && d.rel_l2 <= tol.rel_l2,
        "{name}: pressure + pressure_lo differs from the CPU backend: max-abs {:.3e} (tolerance {:.0e}), relative \
         L2 {:.3e} (tolerance {:.0e})",
        d.max_abs,
        tol.max_abs,
        d.rel_l2,
        tol.rel_l2
    );
}
