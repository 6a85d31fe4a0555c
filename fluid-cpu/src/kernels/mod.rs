//! The CPU kernels, one file per kernel, named like their WGSL twins. Each exposes a
//! per-sample function (`<kernel>_cell`, `..._u_face`, `..._v_face`) that reads like a shader
//! invocation, and a `run` that drives it over rows with rayon.

pub mod advect_cells;
pub mod advect_velocity;
pub mod apply_forces;
#[cfg(target_arch = "x86_64")]
pub mod avx2;
pub mod cg_apply;
pub mod cg_direction;
pub mod cg_dot;
pub mod cg_init;
pub mod cg_update;
pub mod common;
pub mod curl;
pub mod diffuse_velocity;
pub mod divergence;
pub mod jacobi;
pub mod jacobi_multisweep;
pub mod mg_coarse;
pub mod mg_load;
pub mod mg_prolong;
pub mod mg_restrict;
pub mod mg_smooth;
pub mod mg_smooth2;
pub mod mg_store;
pub mod poisson_cols;
pub mod poisson_rows;
pub mod poisson_taps;
pub mod relax;
pub mod residual;
pub mod sor;
pub mod splat;
pub mod subtract_gradient;
