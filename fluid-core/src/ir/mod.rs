//! The vocabulary every model and backend shares: typed resources ([`resource`]), kernels
//! described by data ([`kernel`]), the step as data ([`schedule`]), the blocks all kernels
//! share ([`uniforms`]) and the one lowering of a schedule to GPU work ([`lower`]).

pub mod kernel;
pub mod lower;
pub mod resource;
pub mod schedule;
pub mod uniforms;
