//! Throwaway: latency of Simulation::sample (a few points) against reading the whole field and
//! sampling it (the path before download_at), per backend and size. Medians of 200 calls.
use fluid::{FieldId, Scene, Simulation};
use std::time::Instant;

fn main() -> fluid::Result<()> {
    let backends: Vec<String> = std::env::args().skip(1).collect();
    for name in &backends {
        for n in [256u32, 1024, 2048] {
            let ov: Vec<_> = [format!("grid.nx={n}"), format!("grid.ny={n}")]
                .iter()
                .map(|s| fluid::parse_override(s).expect("override"))
                .collect();
            let scene = Scene::preset_with("smoke", &ov)?;
            let dt = scene.params.dt;
            let mut sim = Simulation::new(scene, fluid::backend(name)?)?;
            for _ in 0..5 {
                sim.step(dt)?;
            }
            sim.backend_mut().finish()?;
            let g = *sim.grid();
            let pts = [
                [0.3 * g.width(), 0.2 * g.height()],
                [0.5 * g.width(), 0.6 * g.height()],
                [0.7 * g.width(), 0.4 * g.height()],
            ];
            for field in [FieldId::Density, FieldId::U] {
                let mut new = Vec::new();
                let mut old = Vec::new();
                for _ in 0..200 {
                    let t = Instant::now();
                    let a = sim.sample(field, &pts)?;
                    new.push(t.elapsed().as_secs_f64() * 1e3);
                    let t = Instant::now();
                    let d = sim.field(field)?;
                    let b = g.sample(field, &d, &pts)?;
                    old.push(t.elapsed().as_secs_f64() * 1e3);
                    assert_eq!(
                        a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                        b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                    );
                }
                let med = |v: &mut Vec<f64>| {
                    v.sort_by(f64::total_cmp);
                    v[v.len() / 2]
                };
                println!(
                    "{name:7} {n:5}^2 {:8}: sample of 3 points {:.4} ms, whole field read + sample {:.4} ms",
                    field.name(),
                    med(&mut new),
                    med(&mut old)
                );
            }
        }
    }
    Ok(())
}
