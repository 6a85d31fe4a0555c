//! The conformance suite on the CPU backend (its parity checks compare the backend with a
//! fresh instance of itself on another thread count, which must agree bit for bit).

fn backend() -> swirly_cpu::CpuBackend {
    swirly_cpu::CpuBackend::with_threads(1).expect("cpu backend")
}

swirly_conformance::conformance!(backend());

#[test]
fn two_simulations_on_two_threads_step_as_each_does_alone() {
    swirly_conformance::api::concurrent_equals_alone(|| swirly_cpu::CpuBackend::new().expect("cpu backend"));
}

/// The kernels' copies compiled for AVX2 and FMA or AVX-512 and picked at run time where the
/// CPU has them (`swirly_cpu::simd`) compute the bits of the baseline copy on every preset. On a
/// CPU with AVX2 (CI's has) the test also checks that a vector copy is the one used.
#[test]
fn the_vector_copies_of_the_kernels_compute_the_baseline_bits() {
    use swirly_core::grid::step::STATE_FIELDS;
    #[cfg(target_arch = "x86_64")]
    {
        let v3 = [
            std::is_x86_feature_detected!("avx"),
            std::is_x86_feature_detected!("avx2"),
            std::is_x86_feature_detected!("fma"),
            std::is_x86_feature_detected!("bmi1"),
            std::is_x86_feature_detected!("bmi2"),
            std::is_x86_feature_detected!("lzcnt"),
            std::is_x86_feature_detected!("f16c"),
            std::is_x86_feature_detected!("movbe"),
        ];
        if v3.iter().all(|&has| has) {
            assert_ne!(swirly_cpu::simd::instruction_set(), "baseline", "this CPU has x86-64-v3");
            // pulp's AVX-512 copy is off (simd.rs), so x86-64-v3 is the set in use.
            assert_eq!(swirly_cpu::simd::short_name(), "AVX2");
            let backend = swirly_cpu::CpuBackend::with_threads(2).expect("cpu backend");
            assert_eq!(swirly_core::Backend::device(&backend), "2 threads, AVX2");
        }
    }
    let run = |preset: &str, baseline: bool| -> Vec<Vec<f32>> {
        swirly_cpu::simd::set_baseline_only(baseline);
        if baseline {
            assert_eq!(swirly_cpu::simd::instruction_set(), "baseline");
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(swirly_cpu::simd::short_name(), "SSE2");
                let one = swirly_cpu::CpuBackend::with_threads(1).expect("cpu backend");
                assert_eq!(swirly_core::Backend::device(&one), "1 thread, SSE2");
            }
        }
        let backend = swirly_cpu::CpuBackend::with_threads(2).expect("cpu backend");
        swirly_conformance::support::steps_with_splats(preset, backend, 12)
    };
    for preset in ["smoke", "ink", "taylor-green", "stable-fluid"] {
        let (best, baseline) = (run(preset, false), run(preset, true));
        swirly_cpu::simd::set_baseline_only(false);
        for (field, (a, b)) in STATE_FIELDS.iter().zip(best.iter().zip(&baseline)) {
            let differ = swirly_conformance::support::bits_differ(a, b);
            assert_eq!(differ, 0, "{preset}: {}: {differ} of {} values differ", field.name(), a.len());
        }
    }
}

/// `{:?}` of the backend (what an integrator's logs show) names it and its thread count.
#[test]
fn debug_names_the_backend_and_its_threads() {
    let text = format!("{:?}", swirly_cpu::CpuBackend::with_threads(3).expect("cpu backend"));
    assert!(text.starts_with("CpuBackend") && text.contains("threads: 3"), "{text}");
}

/// The vortex street behind a cylinder sheds at Williamson's Strouhal number (on the CPU
/// only: 3000 steps of a 256 × 64 channel are minutes on a software GPU).
#[test]
fn a_cylinder_sheds_at_the_strouhal_number() {
    swirly_conformance::physics::boundaries::a_cylinder_sheds_at_the_strouhal_number(|| {
        swirly_cpu::CpuBackend::new().expect("cpu backend")
    });
}

/// Every TOML block of the guide (`doc/guide/`) is a scene, alone or laid over a preset (a
/// block that shows a few keys): a misspelt key, a word or value a scene refuses, or a block
/// that no longer parses fails here, naming the chapter.
#[test]
fn the_guides_scenes_load() {
    let guide = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../doc/guide");
    let mut blocks = 0;
    for entry in std::fs::read_dir(&guide).expect("doc/guide") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("chapter");
        for block in text.split("```toml\n").skip(1).filter_map(|b| b.split_once("```").map(|(code, _)| code)) {
            blocks += 1;
            let chapter = path.file_name().expect("name").to_string_lossy();
            let alone = swirly::Scene::from_toml(block, &chapter).err();
            let Some(alone) = alone else { continue };
            let part: toml::Table = toml::from_str(block).unwrap_or_else(|e| panic!("{chapter}: {e}\n{block}"));
            let over_one = swirly::scene::PRESETS.iter().any(|(_, preset)| {
                let mut scene: toml::Table = toml::from_str(preset).expect("preset");
                merge(&mut scene, &part);
                swirly::Scene::from_toml(&toml::to_string(&scene).expect("TOML"), &chapter).is_ok()
            });
            assert!(over_one, "{chapter}: a block that is no scene, alone ({alone}) or over any preset:\n{block}");
        }
    }
    assert!(blocks >= 6, "{blocks} TOML blocks in {}", guide.display());
}

/// `part` laid over `base`: tables merge key by key, anything else replaces.
fn merge(base: &mut toml::Table, part: &toml::Table) {
    for (key, value) in part {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(p)) => merge(b, p),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}
