//! Throwaway: resident memory while a simulation steps (each step waited for).
use fluid::{FieldId, Scene, Simulation};
fn rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with("VmRSS")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1024.0
}
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a[2].parse().unwrap();
    let size = a.get(3).map_or("64", |s| s.as_str());
    let solver = a.get(4).map_or("multigrid", |s| s.as_str());
    let ov: Vec<_> = [format!("grid.nx={size}"), format!("grid.ny={size}"), format!("params.pressure.solver=\"{solver}\"")]
        .iter()
        .map(|s| fluid::parse_override(s).unwrap())
        .collect();
    let scene = Scene::preset_with("smoke", &ov).unwrap();
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, fluid::backend(&a[1]).unwrap()).unwrap();
    let mut line = format!("{} {size}^2 {solver}: RSS MB after steps", a[1]);
    let mut next = 1;
    for k in 1..=n {
        sim.step(dt).unwrap();
        sim.backend_mut().finish().unwrap();
        if k == next || k == n {
            line += &format!(" {k}:{:.0}", rss_mb());
            next *= 4;
        }
    }
    let _ = sim.field(FieldId::Density).unwrap();
    println!("{line}");
}
