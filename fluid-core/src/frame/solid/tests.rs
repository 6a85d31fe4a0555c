use super::*;
use std::f32::consts::PI;

fn at(shape: Shape, position: [f32; 2], angle: f32) -> Obstacle {
    Obstacle { shape, pose: Pose { position, angle }, motion: Motion::default(), since: 0.0, temperature: None }
}

fn close(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol
}

/// Each shape's distance at points whose answer is known by hand: inside negative, on the
/// outline zero, outside the Euclidean distance (corners included).
#[test]
fn distances_match_their_closed_forms() {
    let circle = at(Shape::Circle { radius: 2.0 }, [1.0, 1.0], 0.0);
    assert!(close(circle.distance([1.0, 1.0]), -2.0, 1e-6));
    assert!(close(circle.distance([4.0, 5.0]), 3.0, 1e-6));
    let rect = at(Shape::Rect { half_size: [2.0, 1.0] }, [0.0, 0.0], 0.0);
    assert!(close(rect.distance([0.0, 0.0]), -1.0, 1e-6));
    assert!(close(rect.distance([5.0, 0.0]), 3.0, 1e-6));
    assert!(close(rect.distance([5.0, 5.0]), 5.0, 1e-6), "{}", rect.distance([5.0, 5.0]));
    // A quarter turn swaps the rectangle's sides.
    let turned = at(Shape::Rect { half_size: [2.0, 1.0] }, [0.0, 0.0], PI / 2.0);
    assert!(close(turned.distance([0.0, 3.0]), 1.0, 1e-5) && close(turned.distance([3.0, 0.0]), 2.0, 1e-5));
    let capsule = at(Shape::Capsule { half_length: 3.0, radius: 0.5 }, [0.0, 0.0], 0.0);
    assert!(close(capsule.distance([0.0, 2.0]), 1.5, 1e-6) && close(capsule.distance([5.0, 0.0]), 1.5, 1e-6));
    assert!(close(capsule.distance([-3.0, 0.0]), -0.5, 1e-6));
}

/// A polygon of a rectangle's corners is that rectangle, in either winding; a concave one is
/// outside in its notch.
#[test]
fn polygons_agree_with_rectangles_and_know_their_notches() {
    let rect = at(Shape::Rect { half_size: [2.0, 1.0] }, [0.5, -0.5], 0.3);
    let mut corners = vec![[-2.0, -1.0], [2.0, -1.0], [2.0, 1.0], [-2.0, 1.0]];
    for _ in 0..2 {
        let poly = at(Shape::Polygon { points: corners.clone() }, [0.5, -0.5], 0.3);
        for k in 0..200 {
            let p = [-4.0 + 0.04 * k as f32, -3.0 + 0.031 * k as f32];
            assert!(close(poly.distance(p), rect.distance(p), 1e-5), "{p:?}");
        }
        corners.reverse();
    }
    // An L: the square [0,2]² without [1,2]×[1,2].
    let l = at(
        Shape::Polygon { points: vec![[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]] },
        [0.0, 0.0],
        0.0,
    );
    assert!(l.distance([1.5, 1.5]) > 0.0 && l.distance([0.5, 1.5]) < 0.0 && l.distance([1.5, 0.5]) < 0.0);
    assert!(close(l.distance([1.5, 1.5]), 0.5, 1e-6));
}

/// Malformed shapes are refused with the key and the value.
#[test]
fn bad_shapes_are_refused_by_name() {
    let cases: Vec<(Shape, &str)> = vec![
        (Shape::Circle { radius: 0.0 }, "obstacles[0].radius"),
        (Shape::Circle { radius: f32::NAN }, "obstacles[0].radius"),
        (Shape::Rect { half_size: [1.0, -1.0] }, "obstacles[0].half_size[1]"),
        (Shape::Capsule { half_length: -1.0, radius: 1.0 }, "obstacles[0].half_length"),
        (Shape::Polygon { points: vec![[0.0, 0.0], [1.0, 0.0]] }, "3 to 256 points"),
        (Shape::Polygon { points: vec![[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]] }, "no area"),
        (Shape::Polygon { points: vec![[0.0, 0.0], [2.0, 1.0], [2.0, 0.0], [0.0, 2.0]] }, "cross"),
        (Shape::Polygon { points: vec![[0.0, 0.0], [f32::INFINITY, 0.0], [0.0, 1.0]] }, "points[1]"),
    ];
    for (shape, needle) in cases {
        let e = shape.validate("obstacles[0]").expect_err(needle).to_string();
        assert!(e.contains(needle), "{e}");
    }
    let o = Obstacle {
        motion: Motion { velocity: [f32::NAN, 0.0], ..Motion::default() },
        ..at(Shape::Circle { radius: 1.0 }, [0.0, 0.0], 0.0)
    };
    assert!(o.validate("obstacles[3]").expect_err("NaN velocity").to_string().contains("obstacles[3].velocity"));
    Shape::Polygon { points: vec![[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]] }
        .validate("l")
        .expect("a concave polygon is fine");
}

#[test]
fn open_fractions_follow_the_zero_crossing() {
    assert_eq!(open_fraction(1.0, 2.0), 1.0);
    assert_eq!(open_fraction(-1.0, -2.0), 0.0);
    assert_eq!(open_fraction(1.0, -3.0), 0.25);
    assert_eq!(open_fraction(-3.0, 1.0), 0.25);
    assert_eq!(open_fraction(0.0, 0.0), 0.0);
}

/// The closed part of the x-faces, summed and times h, is the area the solid covers (each
/// face's closed length is the chord through it): a disc of radius 20h within 1 %.
#[test]
fn closed_faces_add_up_to_the_solid_area() {
    let grid = Frame::new(64, 64, 0.5, Boundary::Wall, Boundary::Wall).expect("grid");
    let r = 20.0 * grid.h;
    let disc = at(Shape::Circle { radius: r }, [16.3, 15.8], 0.0);
    let faces = rasterise(&grid, &[disc]);
    for (open, name) in [(&faces.u_open, "u"), (&faces.v_open, "v")] {
        let closed: f32 = open.iter().map(|o| (1.0 - o) * grid.h * grid.h).sum();
        assert!((closed / (PI * r * r) - 1.0).abs() < 0.01, "{name}: {closed} against {}", PI * r * r);
        assert!(open.iter().all(|o| (0.0..=1.0).contains(o)));
    }
}

/// A solid moved by about a hundredth of a cell changes the faces by about that much in all:
/// no face flips from open to closed as a staircase mask's would, and the total change (the
/// closed length gained and lost, in cells) is of the order of the outline's length times the
/// move, here under 1 where a mask flipping one face would already add 1.
#[test]
fn a_small_move_changes_the_fractions_a_little() {
    let grid = Frame::new(48, 40, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let shapes = [
        Shape::Circle { radius: 7.3 },
        Shape::Rect { half_size: [6.0, 3.5] },
        Shape::Capsule { half_length: 8.0, radius: 2.2 },
        Shape::Polygon { points: vec![[-5.0, -4.0], [6.0, -3.0], [1.0, 5.0]] },
    ];
    for shape in shapes {
        let mut o = at(shape, [23.7, 19.2], 0.4);
        o.motion = Motion { velocity: [1.0, 0.5], angular_velocity: 0.1 };
        let a = rasterise(&grid, std::slice::from_ref(&o));
        let b = rasterise(&grid, &[o.advanced(0.01)]);
        let changes: Vec<f32> =
            a.u_open.iter().zip(&b.u_open).chain(a.v_open.iter().zip(&b.v_open)).map(|(x, y)| (x - y).abs()).collect();
        let (worst, total) = (changes.iter().fold(0.0f32, |m, c| m.max(*c)), changes.iter().sum::<f32>());
        assert!(worst < 0.5 && total > 0.0 && total < 1.0, "{:?}: worst {worst}, total {total}", o.shape);
    }
}

/// A closed face carries the solid's velocity there, v + ω × r; open faces carry none; a solid
/// across a periodic edge closes faces on both sides.
#[test]
fn closed_faces_carry_the_solids_velocity_and_wrap() {
    let grid = Frame::new(32, 32, 1.0, Boundary::Periodic, Boundary::Wall).expect("grid");
    let mut o = at(Shape::Circle { radius: 5.0 }, [1.0, 16.0], 0.0);
    o.motion = Motion { velocity: [0.5, -0.25], angular_velocity: 2.0 };
    let faces = rasterise(&grid, std::slice::from_ref(&o));
    let u = |i: usize, j: usize| (faces.u_open[j * 33 + i], faces.u_solid[j * 33 + i]);
    // x-face (2, 15) at (2, 15.5): inside; r = (1, −0.5): u = 0.5 − 2·(−0.5) = 1.5.
    assert_eq!(u(2, 15), (0.0, 1.5));
    // Across the periodic edge: x-face (30, 15) lies 3 from the disc's image at (33, 16).
    assert_eq!(u(30, 15).0, 0.0, "the disc wraps round");
    assert_eq!(u(15, 15), (1.0, 0.0), "far away: open, no solid velocity");
}

/// A mask of a filled rectangle (with a margin of empty pixels) is that rectangle within 0.15
/// (three quarters of a pixel) over the image, and on the right side of it everywhere round
/// it; its table entry comes back whole.
#[test]
fn a_mask_of_a_rectangle_is_that_rectangle() {
    // 20 × 10 pixels of 0.2 over [-2, 2] × [-1, 1]; solid: columns 5..15, rows 2..8.
    let solid: Vec<bool> = (0..200).map(|k| (5..15).contains(&(k % 20)) && (2..8).contains(&(k / 20))).collect();
    let mask = Shape::mask([2.0, 1.0], 20, 10, &solid);
    let rect = Shape::Rect { half_size: [1.0, 0.6] };
    let mut worst = 0.0f32;
    for j in 0..=60 {
        for i in 0..=100 {
            let p = [-2.5 + 0.05 * i as f32, -1.5 + 0.05 * j as f32];
            let (m, r) = (mask.local_distance(p), rect.local_distance(p));
            if p[0].abs() <= 2.0 && p[1].abs() <= 1.0 {
                worst = worst.max((m - r).abs());
            }
            assert!(r.abs() < 0.15 || (m > 0.0) == (r > 0.0), "at {p:?} the mask says {m}, the rectangle {r}");
        }
    }
    assert!(worst < 0.15, "over the image the mask is up to {worst} from the rectangle it draws");
    // Held at a temperature, which the table keeps too.
    let pose = Pose { position: [3.0, 2.0], angle: 0.4 };
    let o = Obstacle { shape: mask, pose, temperature: Some(1.25), ..at(rect, [0.0; 2], 0.0) };
    let rows = table(std::slice::from_ref(&o));
    assert_eq!(rows.len(), table_len(std::slice::from_ref(&o)));
    assert_eq!(from_table(&rows, 1), Some(vec![o.clone()]));
    assert_eq!(decode(&rows), vec![o]);
}

/// The mask's distance transform equals the distance to the nearest pixel of the other kind
/// found by visiting every pixel, on random masks of uneven sizes and pixel aspect.
#[test]
fn mask_distances_match_a_search_of_every_pixel() {
    let mut state = 0x9e37_79b9_u32;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    for (w, h, half_size) in [(1, 1, [1.0, 1.0]), (7, 3, [2.0, 0.5]), (13, 17, [1.0, 3.0]), (32, 24, [4.0, 4.0])] {
        for density in [1, 8, 50] {
            let solid: Vec<bool> = (0..w * h).map(|_| next() % 100 < density).collect();
            if !solid.contains(&true) {
                continue;
            }
            let Shape::Mask { sdf, .. } = Shape::mask(half_size, w as u32, h as u32, &solid) else { unreachable!() };
            let (dx, dy) = (2.0 * half_size[0] / w as f32, 2.0 * half_size[1] / h as f32);
            for k in 0..w * h {
                let mut best = f32::INFINITY;
                for m in 0..w * h {
                    if solid[m] != solid[k] {
                        let (ox, oy) = ((m % w) as f32 - (k % w) as f32, (m / w) as f32 - (k / w) as f32);
                        best = best.min((ox * dx).powi(2) + (oy * dy).powi(2));
                    }
                }
                let d = if best.is_finite() { best.sqrt() - 0.5 * dx.min(dy) } else { half_size[0] + half_size[1] };
                let want = if solid[k] { -d } else { d };
                assert!(close(sdf[k], want, 1e-5 * (1.0 + want.abs())), "{w}x{h} pixel {k}: {} vs {want}", sdf[k]);
            }
        }
    }
}

/// A path's legs move the obstacle through every key at its time, wait before the first,
/// stop at the last or start over with `repeat`.
#[test]
fn key_paths_pass_through_their_keys() {
    let pose = |x: f32, y: f32, angle: f32| Pose { position: [x, y], angle };
    let keys = vec![(1.0, pose(0.0, 0.0, 0.0)), (2.0, pose(2.0, 0.0, 1.0)), (4.0, pose(2.0, 4.0, 1.0))];
    let mut path = KeyPath { keys: keys.clone(), repeat: false };
    path.validate("obstacles[0]").expect("a good path");
    let circle = at(Shape::Circle { radius: 1.0 }, [0.0, 0.0], 0.0);
    let where_at = |path: &KeyPath, t: f32| {
        let leg = path.leg(t);
        let o = Obstacle { pose: leg.pose, motion: leg.motion, since: leg.since, ..circle.clone() }.at(t);
        (o.pose.position, o.pose.angle, leg.id)
    };
    for (t, want, angle) in [
        (0.0, [0.0, 0.0], 0.0),
        (1.5, [1.0, 0.0], 0.5),
        (2.0, [2.0, 0.0], 1.0),
        (3.0, [2.0, 2.0], 1.0),
        (9.0, [2.0, 4.0], 1.0),
    ] {
        let (p, a, _) = where_at(&path, t);
        assert!(close(p[0], want[0], 1e-5) && close(p[1], want[1], 1e-5) && close(a, angle, 1e-6), "t={t}: {p:?} {a}");
    }
    assert_eq!(path.leg(9.0).motion, Motion::default());
    assert_ne!(path.leg(1.5).id, path.leg(2.5).id);
    path.repeat = true;
    // Period 3 s: t = 5.5 is t = 2.5 again, on the second leg of the second cycle.
    let (p, _, id) = where_at(&path, 5.5);
    assert!(close(p[0], 2.0, 1e-5) && close(p[1], 1.0, 1e-5), "{p:?}");
    assert_ne!(id, path.leg(2.5).id);
    let (p, _, _) = where_at(&path, 7.0);
    assert!(close(p[0], 0.0, 1e-5) && close(p[1], 0.0, 1e-5), "a cycle's end starts over: {p:?}");
    for (bad, name) in [
        (KeyPath { keys: keys[..1].to_vec(), repeat: false }, "obstacles[0].path"),
        (KeyPath { keys: vec![keys[0], keys[0]], repeat: false }, "obstacles[0].path[1].time"),
        (
            KeyPath { keys: vec![keys[0], (3.0, pose(f32::NAN, 0.0, 0.0))], repeat: false },
            "obstacles[0].path[1].position",
        ),
    ] {
        match bad.validate("obstacles[0]") {
            Err(Error::InvalidValue { key, .. }) => assert_eq!(key, name),
            other => panic!("{name}: {other:?}"),
        }
    }
}
