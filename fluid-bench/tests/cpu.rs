//! The conformance suite on the CPU backend (its parity checks compare the backend with a
//! fresh instance of itself on another thread count, which must agree bit for bit).

fn backend() -> fluid_cpu::CpuBackend {
    fluid_cpu::CpuBackend::with_threads(1).expect("cpu backend")
}

fluid_bench::conformance!(backend());

#[test]
fn two_simulations_on_two_threads_step_as_each_does_alone() {
    fluid_bench::parity::concurrent_equals_alone(|| fluid_cpu::CpuBackend::new().expect("cpu backend"));
}
