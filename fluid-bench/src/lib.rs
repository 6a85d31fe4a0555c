//! # fluid-bench
//!
//! The criterion benchmarks of the fluid engine (`benches/`), and [`workloads`], the scenes they
//! run. The cross-backend conformance suite is the `fluid-conformance` crate.

pub mod workloads;
