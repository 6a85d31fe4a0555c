//! The parameters checked: each value against its range, each key named in the error.

use crate::frame::finite;
use crate::grid::Side;
use swirly_ir::{Error, Result};

use super::*;

/// The most iterations a step's pressure or viscosity solve may ask for.
///
/// A step is data: its [`swirly_ir::Schedule`] lists every dispatch, and the GPU backends record
/// each into the step's command buffer, where the driver keeps memory per dispatch (measured
/// for Jacobi sweeps: about 2 KB on lavapipe's Vulkan, 3 KB on wgpu over lavapipe, 1.2 KB on
/// either API on an H100's driver). So 10⁸ sweeps would need hundreds of GB before the first
/// one ran; 10⁵ sweeps need 100–300 MB. That is more than any real-time step spends: a solve that
/// must converge on a large grid wants `multigrid` (a few V-cycles) rather than more sweeps.
pub const MAX_ITERATIONS: u32 = 100_000;

pub(super) fn iterations(key: &str, n: u32) -> Result<()> {
    if n > MAX_ITERATIONS {
        return Err(Error::invalid(
            key,
            n,
            format!(
                "at most {MAX_ITERATIONS} per step: every iteration is recorded as dispatches the step holds in \
                 memory; for a converged solve use solver = \"multigrid\" (a few V-cycles) or a tolerance"
            ),
        ));
    }
    Ok(())
}

fn non_negative(key: &str, x: f32) -> Result<()> {
    finite(key, x)?;
    if x < 0.0 {
        return Err(Error::invalid(key, x, "must be >= 0"));
    }
    Ok(())
}

impl SimParams {
    /// Check every value; the error names the first bad key and its value.
    pub fn validate(&self) -> Result<()> {
        finite("params.dt", self.dt)?;
        if self.dt <= 0.0 {
            return Err(Error::invalid("params.dt", self.dt, "the time step must be > 0"));
        }
        self.validate_motion()?;
        self.validate_diffusion()?;
        self.pressure.validate()?;
        self.validate_sides()
    }

    /// Dissipation, combustion, turbulence and the forces; the advection's sampling; the speed
    /// limit and the substeps.
    fn validate_motion(&self) -> Result<()> {
        for (key, rate) in self.dissipation.rates() {
            non_negative(&format!("params.dissipation.{key}"), rate)?;
        }
        self.validate_combustion()?;
        self.validate_turbulence()?;
        non_negative("params.surface_tension", self.surface_tension)?;
        if self.surface_tension > 0.0 && !self.fields.density {
            let why = "surface tension pulls on the density: the scene sets params.fields.density = false";
            return Err(Error::invalid("params.surface_tension", self.surface_tension, why));
        }
        let a = &self.advection;
        if a.interpolation == Interpolation::MonotoneCubic
            && (a.scheme.round_trip() || a.velocity_scheme().round_trip())
        {
            let why = "monotone cubic sampling is a semi-Lagrangian scheme: MacCormack and BFECC sample bilinearly; \
                       choose one (params.advection.scheme, params.advection.velocity)";
            return Err(Error::invalid("params.advection.interpolation", "monotone-cubic", why));
        }
        non_negative("params.vorticity", self.vorticity)?;
        finite("params.buoyancy.density_weight", self.buoyancy.density_weight)?;
        finite("params.buoyancy.temperature_lift", self.buoyancy.temperature_lift)?;
        finite("params.buoyancy.ambient_temperature", self.buoyancy.ambient_temperature)?;
        finite("params.gravity[0]", self.gravity[0])?;
        finite("params.gravity[1]", self.gravity[1])?;
        if let Some(s) = self.max_speed {
            finite("params.max_speed", s)?;
            if s <= 0.0 {
                return Err(Error::invalid("params.max_speed", s, "must be > 0 (leave it out for no clamp)"));
            }
        }
        if let Some(c) = self.cfl {
            finite("params.cfl", c)?;
            if c <= 0.0 {
                return Err(Error::invalid("params.cfl", c, "must be > 0 (leave it out for whole steps)"));
            }
        }
        if !(1..=64).contains(&self.max_substeps) {
            return Err(Error::invalid("params.max_substeps", self.max_substeps, "must be 1 to 64"));
        }
        Ok(())
    }

    /// Viscosity and heat diffusion.
    fn validate_diffusion(&self) -> Result<()> {
        non_negative("params.viscosity", self.viscosity)?;
        if self.viscosity > 0.0 && self.viscosity_iterations == 0 {
            return Err(Error::invalid(
                "params.viscosity_iterations",
                0,
                "a viscous fluid needs at least one diffusion sweep",
            ));
        }
        iterations("params.viscosity_iterations", self.viscosity_iterations)?;
        non_negative("params.thermal_diffusivity", self.thermal_diffusivity)?;
        if self.thermal_diffusivity > 0.0 {
            if self.thermal_iterations == 0 {
                let why = "heat diffusion needs at least one sweep";
                return Err(Error::invalid("params.thermal_iterations", 0, why));
            }
            if !self.fields.temperature {
                let why = "there is no temperature to diffuse: the scene sets params.fields.temperature = false";
                return Err(Error::invalid("params.thermal_diffusivity", self.thermal_diffusivity, why));
            }
        }
        iterations("params.thermal_iterations", self.thermal_iterations)?;
        Ok(())
    }

    /// The sides, and a wall held at a temperature only where heat diffuses.
    fn validate_sides(&self) -> Result<()> {
        self.boundary.validate()?;
        let given = [self.boundary.left, self.boundary.right, self.boundary.bottom, self.boundary.top];
        for (name, spec) in crate::grid::SIDE_NAMES.iter().zip(given) {
            if let Some(spec) = spec
                && let (SideType::Wall | SideType::NoSlip, Some(t)) = (spec.kind, spec.temperature)
                && (self.thermal_diffusivity <= 0.0 || !self.fields.temperature)
            {
                let why = "a wall's temperature enters the fluid by heat diffusion: set params.thermal_diffusivity > 0 \
                           (with the temperature field on)";
                return Err(Error::invalid(format!("params.boundary.{name}.temperature"), t, why));
            }
            // The viscous step is what holds a no-slip wall; without it the wall would be free
            // slip, silently.
            if let Some(spec) = spec
                && spec.kind == SideType::NoSlip
                && self.viscosity <= 0.0
            {
                let why = "a no-slip wall is held by the viscous step, which params.viscosity = 0 turns off (it would \
                           act as a free-slip wall): set params.viscosity > 0, or make the side \"wall\"";
                return Err(Error::invalid(format!("params.boundary.{name}"), "no-slip", why));
            }
        }
        Ok(())
    }

    fn validate_turbulence(&self) -> Result<()> {
        let t = &self.turbulence;
        finite("params.turbulence.amplitude", t.amplitude)?;
        finite("params.turbulence.scale", t.scale)?;
        if t.scale <= 0.0 {
            return Err(Error::invalid("params.turbulence.scale", t.scale, "the eddies' size must be > 0"));
        }
        non_negative("params.turbulence.speed", t.speed)?;
        if !(1..=4).contains(&t.octaves) {
            return Err(Error::invalid("params.turbulence.octaves", t.octaves, "must be 1 to 4"));
        }
        finite("params.turbulence.mask_full", t.mask_full)?;
        if t.mask_full <= 0.0 {
            return Err(Error::invalid("params.turbulence.mask_full", t.mask_full, "must be > 0"));
        }
        let needs = match t.mask {
            TurbulenceMask::Density if !self.fields.density => Some("density"),
            TurbulenceMask::Temperature if !self.fields.temperature => Some("temperature"),
            _ => None,
        };
        if let (true, Some(field)) = (t.on(), needs) {
            let why = format!("the mask's field is off (params.fields.{field} = false)");
            return Err(Error::invalid("params.turbulence.mask", field, why));
        }
        Ok(())
    }

    fn validate_combustion(&self) -> Result<()> {
        let c = &self.combustion;
        non_negative("params.combustion.rate", c.rate)?;
        finite("params.combustion.ignition", c.ignition)?;
        non_negative("params.combustion.heat", c.heat)?;
        non_negative("params.combustion.soot", c.soot)?;
        non_negative("params.combustion.expansion", c.expansion)?;
        if !c.on() {
            return Ok(());
        }
        if !self.fields.fuel {
            let why = "nothing burns without fuel: set params.fields.fuel = true (and give emitters `fuel`)";
            return Err(Error::invalid("params.combustion.rate", c.rate, why));
        }
        if !self.fields.temperature {
            let why = "fuel ignites by temperature: the scene sets params.fields.temperature = false";
            return Err(Error::invalid("params.combustion.rate", c.rate, why));
        }
        if c.soot > 0.0 && !self.fields.density {
            let why = "soot is density: the scene sets params.fields.density = false";
            return Err(Error::invalid("params.combustion.soot", c.soot, why));
        }
        if c.expansion > 0.0 {
            if self.pressure.solver == PressureSolver::Relaxation {
                let why = "the relaxation solver projects the velocity in place and takes no divergence source; \
                           choose another params.pressure.solver";
                return Err(Error::invalid("params.combustion.expansion", c.expansion, why));
            }
            let sides = self.boundary.sides(self.buoyancy.ambient_temperature);
            if !sides.iter().any(|s| matches!(s, Side::Open)) {
                let why = "expanding gas needs a way out: give the box an open side (params.boundary)";
                return Err(Error::invalid("params.combustion.expansion", c.expansion, why));
            }
        }
        Ok(())
    }
}
