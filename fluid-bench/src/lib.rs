//! # swirly-bench
//!
//! The benchmarks of the fluid engine, over its public API:
//!
//! - [`scenes`]: one scene at a list of grid sizes on a list of backends (what `fluid bench`
//!   prints), each row cross-checked against the CPU backend;
//! - [`solvers`]: every pressure solver timed to a residual (`fluid bench solvers`);
//! - the criterion benchmarks of whole steps on the CPU (`benches/`), and [`workloads`], the
//!   scenes they run.
//!
//! The cross-backend conformance suite is the `swirly-conformance` crate.
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod scenes;
pub mod solvers;
pub mod workloads;
