//! The conformance suite on the CPU backend.

fluid_bench::conformance!(fluid_cpu::CpuBackend::new().expect("cpu backend"));
