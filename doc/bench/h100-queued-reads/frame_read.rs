//! Throwaway: what a frame pays to read samples, blocking (`sample`) or not (`request_sample`
//! then `poll_sample` on later frames). Frames paced by a sleep, as a game's would be.
use fluid::{FieldId, Scene, Simulation, Splat};
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> fluid::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("cpu", |s| s.as_str());
    let n: usize = args.get(2).map_or(256, |s| s.parse().unwrap());
    let frames: usize = args.get(3).map_or(400, |s| s.parse().unwrap());
    let pace = Duration::from_micros(args.get(4).map_or(2000, |s| s.parse().unwrap()));
    let ov: Vec<_> =
        [format!("grid.nx={n}"), format!("grid.ny={n}")].iter().map(|s| fluid::parse_override(s).unwrap()).collect();
    let scene = Scene::preset_with("smoke", &ov)?;
    let dt = scene.params.dt;
    let points: Vec<[f32; 2]> = (0..16).map(|k| [0.1 + 0.05 * k as f32, 0.3]).collect();
    let mut sim = Simulation::new(scene, fluid::backend(name)?)?;
    let splat = Splat { center: [0.5, 0.2], radius: 0.05, density: 1.0, velocity: [0.0, 1.0], ..Splat::default() };
    for _ in 0..50 {
        sim.step(dt)?;
    }
    sim.backend_mut().finish()?;
    for round in 0..2 {
        // Blocking: step, then this frame's samples.
        let (mut step_ms, mut frame_ms) = (Vec::new(), Vec::new());
        for _ in 0..frames {
            std::thread::sleep(pace);
            let t = Instant::now();
            sim.splat(splat)?;
            sim.step(dt)?;
            let s = t.elapsed().as_secs_f64() * 1e3;
            let v = sim.sample(FieldId::Density, &points)?;
            std::hint::black_box(v);
            step_ms.push(s);
            frame_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "{name} {n}^2 round {round} blocking: step call {:.4} ms, step + sample {:.4} ms (medians of {frames})",
            median(step_ms),
            median(frame_ms)
        );
        // Queued: step, ask for this frame's samples, poll the ones asked for before.
        let (mut step_ms, mut frame_ms, mut late, mut req_ms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut asked: std::collections::VecDeque<(usize, fluid::PendingSample)> = Default::default();
        for f in 0..frames {
            std::thread::sleep(pace);
            let t = Instant::now();
            sim.splat(splat)?;
            sim.step(dt)?;
            let s = t.elapsed().as_secs_f64() * 1e3;
            asked.push_back((f, sim.request_sample(FieldId::Density, &points)?));
            let r = t.elapsed().as_secs_f64() * 1e3 - s;
            req_ms.push(r);
            while let Some((at, p)) = asked.front_mut() {
                match sim.poll_sample(p)? {
                    Some(v) => {
                        std::hint::black_box(v);
                        late.push((f - *at) as f64);
                        asked.pop_front();
                    }
                    None => break,
                }
            }
            step_ms.push(s);
            frame_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut sorted = req_ms.clone();
        sorted.sort_by(f64::total_cmp);
        println!("  request call: median {:.4} ms, min {:.4}, p90 {:.4}", median(req_ms), sorted[0], sorted[sorted.len() * 9 / 10]);
        let (mut l0, mut l1, mut l2) = (0, 0, 0);
        for &l in &late {
            match l as usize {
                0 => l0 += 1,
                1 => l1 += 1,
                _ => l2 += 1,
            }
        }
        println!(
            "{name} {n}^2 round {round} queued: step call {:.4} ms, step + request + poll {:.4} ms; samples back after 0 / 1 / 2+ frames: {l0} / {l1} / {l2}; {} still out, {} held",
            median(step_ms),
            median(frame_ms),
            asked.len(),
            sim.backend().queued_reads()
        );
        drop(asked);
        sim.backend_mut().finish()?;
    }
    Ok(())
}
