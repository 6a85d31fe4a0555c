//! The CPU kernels, one file per kernel, named like their WGSL twins. Each exposes a
//! per-sample function (`<kernel>_cell`, `..._u_face`, `..._v_face`) that reads like a shader
//! invocation, a `run` that drives it over rows with rayon, and a `dispatch` that takes a
//! schedule's dispatch to `run`; a table maps each kernel to its `dispatch`.

use swirly_core::Kernel;
use swirly_core::grid::kernels as k;
use swirly_core::particles::kernels as pk;
use swirly_core::render::kernels as rk;

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dispatch::KernelFn;

/// Every kernel's CPU entry.
pub(crate) const TABLE: &[(Kernel, KernelFn)] = &[
    (k::ADVECT_VELOCITY, advect_velocity::dispatch),
    (k::ADVECT_CHANNELS, advect_channels::dispatch),
    (k::BACK_VELOCITY, back_velocity::dispatch),
    (k::BACK_CELLS, back_cells::dispatch),
    (k::SHARP_VELOCITY, sharp_velocity::dispatch),
    (k::SHARP_CELLS, sharp_cells::dispatch),
    (k::CURVATURE, curvature::dispatch),
    (k::SURFACE_TENSION, surface_tension::dispatch),
    (k::BURN, burn::dispatch),
    (k::EXPAND, expand::dispatch),
    (k::SPLAT, splat::dispatch),
    (k::SPLAT_CELLS, splat_cells::dispatch),
    (k::COARSE_DENSITY, fine_density::dispatch_coarse),
    (k::FINE_SOOT, fine_density::dispatch_soot),
    (k::CURL, curl::dispatch),
    (k::APPLY_FORCES, apply_forces::dispatch),
    (k::TURBULENCE, turbulence::dispatch),
    (k::CLAMP_SPEED, clamp_speed::dispatch),
    (k::DIFFUSE_VELOCITY, diffuse_velocity::dispatch),
    (k::DIFFUSE_TEMPERATURE, diffuse_temperature::dispatch),
    (k::RASTERISE_SOLIDS, rasterise_solids::dispatch),
    (k::HOLD_HEAT, hold_heat::dispatch),
    (k::DIVERGENCE, divergence::dispatch),
    (k::JACOBI, jacobi::dispatch),
    (k::JACOBI_MULTISWEEP, jacobi_multisweep::dispatch),
    (k::SOR, sor::dispatch),
    (k::RELAX, relax::dispatch),
    (k::MG_LOAD, mg_load::dispatch),
    (k::MG_SMOOTH, mg_smooth::dispatch),
    (k::MG_SMOOTH2, mg_smooth2::dispatch),
    (k::MG_SMOOTH2_SOLID, mg_smooth2::dispatch_solid),
    (k::MG_RESTRICT, mg_restrict::dispatch),
    (k::MG_WEIGHTS, mg_weights::dispatch),
    (k::MG_PROLONG, mg_prolong::dispatch),
    (k::MG_COARSE, mg_coarse::dispatch),
    (k::MG_STORE, mg_store::dispatch),
    (k::POISSON_TAPS, poisson_taps::dispatch),
    (k::POISSON_ROWS, poisson_rows::dispatch),
    (k::POISSON_COLS, poisson_cols::dispatch),
    (k::CG_INIT, cg_init::dispatch),
    (k::CG_DOT, cg_dot::dispatch),
    (k::CG_DIRECTION, cg_direction::dispatch),
    (k::CG_APPLY, cg_apply::dispatch),
    (k::CG_UPDATE, cg_update::dispatch),
    (k::SUBTRACT_GRADIENT, subtract_gradient::dispatch),
    (k::RESIDUAL, residual::dispatch),
    (pk::PARTICLE_HASH, particle_hash::dispatch),
    (pk::PARTICLE_SCAN, particle_scan::dispatch),
    (pk::PARTICLE_SCAN_ADD, particle_scan_add::dispatch),
    (pk::PARTICLE_SCATTER, particle_scatter::dispatch),
    (pk::PARTICLE_ORDER, particle_order::dispatch),
    (pk::PARTICLE_GATHER, particle_gather::dispatch),
    (pk::PARTICLE_FORCES, particle_forces::dispatch),
    (pk::PARTICLE_DENSITY, particle_density::dispatch),
    (pk::PARTICLE_RELAX, particle_relax::dispatch),
    (pk::PARTICLE_COLLIDE, particle_collide::dispatch),
    (pk::PARTICLE_DRAW, particle_draw::dispatch),
    (pk::PARTICLE_IDS, particle_ids::dispatch),
    (pk::PARTICLE_SPRING_PROPOSE, particle_spring_propose::dispatch),
    (pk::PARTICLE_SPRING_CONFIRM, particle_spring_confirm::dispatch),
    (pk::PARTICLE_SPRING_APPLY, particle_spring_apply::dispatch),
    (pk::PARTICLE_SOLIDS, particle_solids::dispatch),
    (pk::PARTICLE_POINTER, particle_pointer::dispatch),
    (pk::PARTICLE_EMIT, particle_emit::dispatch),
    (rk::RENDER_LAYER, render_layer::dispatch),
    (rk::RENDER_FINISH, render_finish::dispatch),
];

pub mod advect_channels;
pub mod advect_velocity;
pub mod apply_forces;
#[cfg(target_arch = "x86_64")]
pub mod avx2;
pub mod back_cells;
pub mod back_velocity;
pub mod burn;
pub mod cg_apply;
pub mod cg_direction;
pub mod cg_dot;
pub mod cg_init;
pub mod cg_update;
pub mod clamp_speed;
pub mod common;
pub mod curl;
pub mod curvature;
pub mod diffuse_temperature;
pub mod diffuse_velocity;
pub mod divergence;
pub mod expand;
pub mod fine_density;
pub mod hold_heat;
pub mod jacobi;
pub mod jacobi_multisweep;
pub mod mg_coarse;
pub mod mg_load;
pub mod mg_prolong;
pub mod mg_restrict;
pub mod mg_smooth;
pub mod mg_smooth2;
pub mod mg_store;
pub mod mg_weights;
pub mod particle_collide;
pub mod particle_density;
pub mod particle_draw;
pub mod particle_emit;
pub mod particle_forces;
pub mod particle_gather;
pub mod particle_hash;
pub mod particle_ids;
pub mod particle_order;
pub mod particle_pointer;
pub mod particle_relax;
pub mod particle_scan;
pub mod particle_scan_add;
pub mod particle_scatter;
pub mod particle_solids;
pub mod particle_spring_apply;
pub mod particle_spring_confirm;
pub mod particle_spring_propose;
pub mod poisson_cols;
pub mod poisson_rows;
pub mod poisson_taps;
pub mod rasterise_solids;
pub mod relax;
pub mod render_finish;
pub mod render_layer;
pub mod residual;
pub mod sharp_cells;
pub mod sharp_velocity;
pub mod solid;
pub mod sor;
pub mod splat;
pub mod splat_cells;
pub mod subtract_gradient;
pub mod surface_tension;
pub mod turbulence;

/// The CPU entry of `kernel`, from [`TABLE`].
pub(crate) fn entry(kernel: Kernel) -> Option<KernelFn> {
    static BY_NAME: OnceLock<HashMap<&'static str, KernelFn>> = OnceLock::new();
    BY_NAME.get_or_init(|| TABLE.iter().map(|(k, f)| (k.name, *f)).collect()).get(kernel.name).copied()
}
