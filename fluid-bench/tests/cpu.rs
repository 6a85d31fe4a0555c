//! The conformance suite on the CPU backend (its parity checks compare the backend with a
//! fresh instance of itself on another thread count, which must agree bit for bit).

fn backend() -> fluid_cpu::CpuBackend {
    fluid_cpu::CpuBackend::with_threads(1).expect("cpu backend")
}

fluid_bench::conformance!(backend());
