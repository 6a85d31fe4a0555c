//! Throwaway: where the time of a whole-field read goes on wgpu (16 MiB, as u at 2048^2),
//! phase by phase, against the backends' own download. Medians of 15.
use std::time::Instant;

fn med(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let b = fluid::WgpuBackend::new().expect("wgpu");
    let (device, queue) = (b.wgpu_device().clone(), b.wgpu_queue().clone());
    println!("adapter: {:?}", b.adapter());
    let bytes: u64 = 2049 * 2048 * 4;
    let src = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("src"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let data: Vec<f32> = (0..bytes / 4).map(|i| i as f32).collect();
    queue.write_buffer(&src, 0, bytemuck::cast_slice(&data));
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let host: Vec<u8> = bytemuck::cast_slice(&data).to_vec();
    for reuse in [false, true] {
        let kept = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kept"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut ph: [Vec<f64>; 12] = Default::default();
        for _ in 0..15 {
            let t0 = Instant::now();
            let fresh;
            let dst = if reuse {
                &kept
            } else {
                fresh = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("dst"),
                    size: bytes,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                &fresh
            };
            let t1 = Instant::now();
            let mut enc = device.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(&src, 0, dst, 0, bytes);
            queue.submit([enc.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
            let t2 = Instant::now();
            let slice = dst.slice(..);
            slice.map_async(wgpu::MapMode::Read, |r| r.unwrap());
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
            let t3 = Instant::now();
            let view = slice.get_mapped_range().unwrap();
            let t4 = Instant::now();
            let s: f64 = bytemuck::cast_slice::<u8, f32>(&view).iter().step_by(16).map(|x| f64::from(*x)).sum();
            let t5 = Instant::now();
            let v = view.to_vec();
            let t6 = Instant::now();
            let s2: f64 = bytemuck::cast_slice::<u8, f32>(&view).iter().map(|x| f64::from(*x)).sum();
            let t7 = Instant::now();
            let h = std::hint::black_box(host.to_vec());
            let t8 = Instant::now();
            let c: Vec<f32> = view.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            let t9 = Instant::now();
            let mut e: Vec<f32> = Vec::with_capacity(view.len() / 4);
            e.extend_from_slice(bytemuck::cast_slice(&view));
            let t10 = Instant::now();
            let mut z = vec![0f32; view.len() / 4];
            z.copy_from_slice(bytemuck::cast_slice(&view));
            let t11 = Instant::now();
            let w: Vec<f32> = bytemuck::cast_slice::<u8, f32>(&view).to_vec();
            let t12 = Instant::now();
            std::hint::black_box((c.len(), e.len(), z.len(), w.len()));
            drop(view);
            dst.unmap();
            std::hint::black_box((s, s2, v.len(), h.len()));
            for (k, (a, b)) in [
                (t0, t1),
                (t1, t2),
                (t2, t3),
                (t3, t4),
                (t4, t5),
                (t5, t6),
                (t6, t7),
                (t7, t8),
                (t8, t9),
                (t9, t10),
                (t10, t11),
                (t11, t12),
            ]
            .iter()
            .enumerate()
            {
                ph[k].push((*b - *a).as_secs_f64() * 1e3);
            }
        }
        let names = [
            "create",
            "copy+wait",
            "map",
            "get_range",
            "touch 1/16",
            "to_vec",
            "sum all",
            "host to_vec",
            "collect f32",
            "extend f32",
            "zeroed+copy",
            "f32 to_vec",
        ];
        print!("reuse={reuse}:");
        for (n, v) in names.iter().zip(ph) {
            print!(" {n} {:.3}", med(v));
        }
        println!(" ms");
    }
    // The backends' own whole-field reads of u at 2048^2.
    for name in ["wgpu", "vulkan"] {
        let ov: Vec<_> =
            ["grid.nx=2048", "grid.ny=2048"].iter().map(|s| fluid::parse_override(s).expect("override")).collect();
        let scene = fluid::Scene::preset_with("smoke", &ov).unwrap();
        let dt = scene.params.dt;
        let mut sim = fluid::Simulation::new(scene, fluid::backend(name).unwrap()).unwrap();
        sim.step(dt).unwrap();
        sim.backend_mut().finish().unwrap();
        let mut t = Vec::new();
        for _ in 0..15 {
            let a = Instant::now();
            let d = sim.field(fluid::FieldId::U).unwrap();
            t.push(a.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(d);
        }
        println!("{name} Simulation::field(u) at 2048^2: {:.3} ms", med(t));
    }
}
