//! Storage under a memory budget: the plan of what a scene needs on a backend (every resource,
//! and the backend's own working memory), and the policy when it does not fit: refuse, or run
//! the largest grid that does.

use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::ir::resource::{self, Format, Lifetime, ResourceDesc};
use crate::ir::schedule::Schedule;
use crate::model::Model;
use crate::scene::Scene;
use crate::{Error, Result};

/// A number of bytes, written in a scene as an integer or with a unit: `"256 MiB"`, `"1.5 GB"`,
/// `"4096"` (B, kB/KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Parse `text`; errors name the key `key` and the value.
    pub fn parse(key: &str, text: &str) -> Result<Bytes> {
        let t = text.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (number, unit) = (t[..split].trim(), t[split..].trim());
        let scale: u64 = match unit {
            "" | "B" => 1,
            "kB" | "KB" => 1000,
            "MB" => 1000u64.pow(2),
            "GB" => 1000u64.pow(3),
            "TB" => 1000u64.pow(4),
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "TiB" => 1 << 40,
            _ => {
                return Err(Error::invalid(key, text, "a size such as 4096, \"512 KiB\", \"256 MiB\" or \"2 GB\""));
            }
        };
        let value: f64 = number.parse().map_err(|_| Error::invalid(key, text, "a size needs a number"))?;
        let bytes = value * scale as f64;
        if !(bytes.is_finite() && bytes >= 1.0 && bytes < 2f64.powi(63)) {
            return Err(Error::invalid(key, text, "a size of at least 1 byte and below 8 EiB"));
        }
        Ok(Bytes(bytes as u64))
    }
}

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.0 as f64;
        match self.0 {
            n if n < 1 << 10 => write!(f, "{n} B"),
            n if n < 1 << 20 => write!(f, "{:.1} KiB ({n} B)", b / 1024.0),
            n if n < 1 << 30 => write!(f, "{:.1} MiB ({n} B)", b / 1048576.0),
            n => write!(f, "{:.2} GiB ({n} B)", b / 1073741824.0),
        }
    }
}

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Bytes, D::Error> {
        /// Reads a size in either of its forms, and names both when given anything else.
        struct Size;
        impl serde::de::Visitor<'_> for Size {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a size: a whole number of bytes (at least 1) or text such as \"256 MiB\" or \"2 GB\" (units B, \
                     kB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024)",
                )
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> std::result::Result<Bytes, E> {
                match u64::try_from(n) {
                    Ok(n) if n >= 1 => Ok(Bytes(n)),
                    _ => Err(E::custom(format!("a size of at least 1 byte, got {n}"))),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> std::result::Result<Bytes, E> {
                if n >= 1 { Ok(Bytes(n)) } else { Err(E::custom("a size of at least 1 byte, got 0")) }
            }
            fn visit_str<E: serde::de::Error>(self, t: &str) -> std::result::Result<Bytes, E> {
                Bytes::parse("storage.budget", t).map_err(E::custom)
            }
        }
        d.deserialize_any(Size)
    }
}

/// What happens when a scene needs more than its budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetPolicy {
    /// Fail with [`Error::OverBudget`], naming what is needed and what is allowed.
    #[default]
    Refuse,
    /// Run what fits, and say so ([`crate::Simulation::downscaled_from`]): a finer dye and
    /// density give first (`grid.dye_factor` and `grid.density_factor` lowered, the larger a
    /// step at a time, until the whole grid fits), then the grid (the largest of the same box
    /// and shape that fits, with the dye and density on it).
    Downscale,
}

/// How a field's values are stored (kernels compute in `f32` either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreFormat {
    /// 32-bit floats.
    #[default]
    F32,
    /// 16-bit floats: half the memory and bandwidth, about 3 significant digits, magnitudes
    /// up to 65504 (natively on a GPU with the `shader-f16` feature, else packed two a word).
    F16,
}

/// The storage format of each field that may be held in `f16`, where a scene sets one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FieldFormats {
    /// The velocity (its faces, and their scratch copies).
    pub velocity: Option<StoreFormat>,
    /// The smoke's density.
    pub density: Option<StoreFormat>,
    /// The temperature.
    pub temperature: Option<StoreFormat>,
    /// The dye.
    pub dye: Option<StoreFormat>,
    /// The fire's fuel.
    pub fuel: Option<StoreFormat>,
}

/// A scene's `[storage]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Storage {
    /// The most memory the simulation may hold on its backend: its resources and the
    /// backend's working memory ([`MemoryPlan::total`]); none when absent.
    pub budget: Option<Bytes>,
    /// What happens when the scene needs more.
    pub policy: BudgetPolicy,
    /// How the velocity, density, temperature, dye and fuel are stored, unless
    /// [`Storage::fields`] says otherwise for one. The pressure, its solver's workspace and
    /// the other scratch stay `f32`: the solve needs their precision.
    pub format: StoreFormat,
    /// Per-field formats over [`Storage::format`].
    pub fields: FieldFormats,
}

impl Storage {
    /// The format of the fields of `group` (`velocity`, `density`, `temperature`, `dye`,
    /// `fuel`).
    pub fn format_of(&self, group: FieldGroup) -> StoreFormat {
        let f = &self.fields;
        let own = match group {
            FieldGroup::Velocity => f.velocity,
            FieldGroup::Density => f.density,
            FieldGroup::Temperature => f.temperature,
            FieldGroup::Dye => f.dye,
            FieldGroup::Fuel => f.fuel,
        };
        own.unwrap_or(self.format)
    }

    /// Whether any field is stored in `f16`.
    pub fn any_half(&self) -> bool {
        FieldGroup::ALL.iter().any(|&g| self.format_of(g) == StoreFormat::F16)
    }
}

/// The fields that may be stored in `f16`, each with the resources that hold it (a field and
/// the scratch it swaps with share one format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldGroup {
    /// `u`, `v` and their scratch.
    Velocity,
    /// `density` and its scratch.
    Density,
    /// `temperature` and its scratch.
    Temperature,
    /// `dye` and its scratch.
    Dye,
    /// `fuel` and its scratch.
    Fuel,
}

impl FieldGroup {
    /// Every group.
    pub const ALL: [FieldGroup; 5] =
        [FieldGroup::Velocity, FieldGroup::Density, FieldGroup::Temperature, FieldGroup::Dye, FieldGroup::Fuel];

    /// The grid fields of the group.
    pub fn fields(self) -> &'static [crate::grid::FieldId] {
        use crate::grid::FieldId as F;
        match self {
            FieldGroup::Velocity => &[F::U, F::V, F::UTmp, F::VTmp, F::UTmp2, F::VTmp2, F::UBack, F::VBack],
            FieldGroup::Density => &[F::Density, F::DensityTmp, F::DensityCoarse],
            FieldGroup::Temperature => &[F::Temperature, F::TemperatureTmp],
            FieldGroup::Dye => &[F::Dye, F::DyeTmp, F::DyeBack],
            FieldGroup::Fuel => &[F::Fuel, F::FuelTmp],
        }
    }
}

/// One resource in a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanEntry {
    /// Its name.
    pub name: &'static str,
    /// Its element format.
    pub format: Format,
    /// Its lifetime.
    pub lifetime: Lifetime,
    /// Its elements (0: the scene does not hold it).
    pub elements: u64,
    /// Bytes it takes of its own: 0 for a transient resource that lives in another's memory.
    pub bytes: u64,
}

/// What a scene needs on a backend, before anything is allocated.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryPlan {
    /// The backend.
    pub backend: &'static str,
    /// Every resource the model declares.
    pub entries: Vec<PlanEntry>,
    /// The most the backend holds besides the resources ([`Backend::working_memory`]).
    pub working: u64,
}

impl MemoryPlan {
    /// The plan of `resources`, run by `schedules`, on `backend`.
    pub fn new(resources: &[ResourceDesc], schedules: &[Schedule], backend: &dyn Backend) -> MemoryPlan {
        let owners = resource::owners(resources);
        let entries = (resources.iter().enumerate())
            .map(|(i, r)| PlanEntry {
                name: r.name,
                format: r.format,
                lifetime: r.lifetime,
                elements: r.len,
                bytes: if owners[i] == i { backend.resource_bytes(r) } else { 0 },
            })
            .collect();
        MemoryPlan { backend: backend.name(), entries, working: backend.working_memory(resources, schedules) }
    }

    /// Bytes of the resources.
    pub fn resources(&self) -> u64 {
        self.entries.iter().map(|e| e.bytes).sum()
    }

    /// Everything: the resources and the working memory.
    pub fn total(&self) -> u64 {
        self.resources() + self.working
    }

    /// A table: one line per resource held, then the working memory and the total.
    pub fn table(&self) -> String {
        let mut out =
            format!("{:<16} {:<8} {:<10} {:>12} {:>14}\n", "resource", "format", "lifetime", "elements", "bytes");
        for e in self.entries.iter().filter(|e| e.elements > 0) {
            let lifetime = match e.lifetime {
                Lifetime::State => "state".to_string(),
                Lifetime::Scratch => "scratch".to_string(),
                Lifetime::Transient { shares } => format!("in {shares}"),
            };
            let format = format!("{:?}", e.format).to_lowercase();
            out += &format!("{:<16} {:<8} {:<10} {:>12} {:>14}\n", e.name, format, lifetime, e.elements, e.bytes);
        }
        out += &format!("{:<48} {:>14}\n", format!("{} working memory (at most)", self.backend), self.working);
        out += &format!("{:<48} {:>14}  {}\n", "total", self.total(), Bytes(self.total()));
        out
    }
}

/// What `scene` needs on `backend` under its `[storage]` settings, allocating nothing: its
/// plan, and the scene that would run: as it is when it fits (or has no budget); with
/// [`BudgetPolicy::Refuse`], [`Error::OverBudget`] when it does not; with
/// [`BudgetPolicy::Downscale`], the largest grid of its box and shape that fits (an error when
/// not even a 2-cell-high one does).
pub fn plan(scene: &Scene, backend: &dyn Backend) -> Result<Fitted> {
    fit(scene, backend).map(|(fitted, _)| fitted)
}

/// A scene made to fit its budget on a backend.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// The scene to run: the one given, or its dye or grid downscaled.
    pub scene: Scene,
    /// Its plan.
    pub plan: MemoryPlan,
    /// The grid `[nx, ny]` asked for, when the grid or the dye's factor was downscaled.
    pub downscaled_from: Option<[u32; 2]>,
}

/// A scene's model (what [`crate::Simulation`] runs) and its plan on `backend`.
fn planned(scene: &Scene, backend: &dyn Backend) -> Result<(Box<dyn Model>, MemoryPlan)> {
    let model = crate::sim::model_for(scene.clone())?;
    let plan = MemoryPlan::new(model.resources(), &model.schedules(), backend);
    Ok((model, plan))
}

/// An error unless `plan` fits in `budget`; `detail` names the grid and backend, and what to do.
pub(crate) fn check_within(plan: &MemoryPlan, budget: Bytes, detail: impl FnOnce() -> String) -> Result<()> {
    if plan.total() <= budget.0 {
        return Ok(());
    }
    Err(Error::OverBudget { needed: plan.total(), allowed: budget.0, detail: detail() })
}

/// The width of the grid `m` cells high with the aspect of `nx × ny`.
fn width(nx: u32, ny: u32, m: u32) -> u32 {
    ((f64::from(nx) * f64::from(m) / f64::from(ny)).round() as u32).max(1)
}

/// `scene` with the same box on `nx × ny` cells (the box's height kept, so the width follows
/// within a cell).
fn resized(scene: &Scene, nx: u32, ny: u32) -> Result<Scene> {
    let height = scene.grid()?.height();
    let mut s = scene.clone();
    s.grid.nx = nx;
    s.grid.ny = ny;
    if scene.grid.h.is_some() {
        s.grid.h = Some(height / ny as f32);
    }
    Ok(s)
}

/// [`plan`], with the model of the scene that runs (built once, for the plan and the run).
pub(crate) fn fit(scene: &Scene, backend: &dyn Backend) -> Result<(Fitted, Box<dyn Model>)> {
    let (model, plan) = planned(scene, backend)?;
    let as_is = |model, plan| Ok((Fitted { scene: scene.clone(), plan, downscaled_from: None }, model));
    let Some(budget) = scene.storage.budget else { return as_is(model, plan) };
    let (nx, ny) = (scene.grid.nx, scene.grid.ny);
    if scene.particles.is_some() {
        // The particle liquid keeps its particles: nothing to downscale.
        let count = model.grid().particles;
        check_within(&plan, budget, || {
            format!(
                "{count} particles (drawn on {nx}x{ny}) on {}; the particle liquid is not downscaled: raise the \
                 budget or fill fewer particles (a larger `spacing` in `particles.fill`)",
                backend.name()
            )
        })?;
        return as_is(model, plan);
    }
    if scene.storage.policy == BudgetPolicy::Refuse {
        check_within(&plan, budget, || {
            format!(
                "{nx}x{ny} on {}; raise the budget, shrink the grid, or set storage.policy = \"downscale\"",
                backend.name()
            )
        })?;
        return as_is(model, plan);
    }
    if plan.total() <= budget.0 {
        return as_is(model, plan);
    }
    // The finer dye and density give first, the larger factor a step at a time: the first
    // pair with which the whole grid fits.
    let with_factors = |dye: u32, density: u32| {
        let mut s = scene.clone();
        s.grid.dye_factor = dye;
        s.grid.density_factor = density;
        s
    };
    let (mut dye, mut density) = (scene.grid.dye_factor, scene.grid.density_factor);
    while (dye, density) != (1, 1) {
        if dye >= density {
            dye -= 1;
        } else {
            density -= 1;
        }
        let s = with_factors(dye, density);
        let (model, plan) = planned(&s, backend)?;
        if plan.total() <= budget.0 {
            return Ok((Fitted { scene: s, plan, downscaled_from: Some([nx, ny]) }, model));
        }
    }
    // Then the largest height whose grid fits (the plan grows with the grid), the fine fields on it;
    // the width keeps the box's aspect.
    let base = with_factors(1, 1);
    let at = |m: u32| -> Result<(Scene, Box<dyn Model>, MemoryPlan)> {
        let s = resized(&base, width(nx, ny, m), m)?;
        let (model, plan) = planned(&s, backend)?;
        Ok((s, model, plan))
    };
    let fits = |m: u32| at(m).map(|(_, _, p)| p.total() <= budget.0).unwrap_or(false);
    let (mut lo, mut hi) = (2u32, ny);
    if !fits(lo) {
        let (_, _, p) = at(lo)?;
        check_within(&p, budget, || {
            format!("even a {}x{lo} grid of its box does not fit on {}", width(nx, ny, lo), backend.name())
        })?;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (scene, model, plan) = at(lo)?;
    Ok((Fitted { scene, plan, downscaled_from: Some([nx, ny]) }, model))
}

#[cfg(test)]
mod tests {
    use super::{BudgetPolicy, Bytes, FieldGroup, StoreFormat};
    use crate::Scene;

    #[test]
    fn a_scene_says_its_budget_and_policy() {
        let with = |extra: &str| Scene::from_toml(&format!("[grid]\nnx = 8\nny = 8\n{extra}"), "test");
        let s = with("[storage]\nbudget = \"64 MiB\"\npolicy = \"downscale\"").expect("scene");
        assert_eq!((s.storage.budget, s.storage.policy), (Some(Bytes(64 << 20)), BudgetPolicy::Downscale));
        let s = with("[storage]\nbudget = 4096").expect("scene");
        assert_eq!((s.storage.budget, s.storage.policy), (Some(Bytes(4096)), BudgetPolicy::Refuse));
        assert_eq!(with("").expect("scene").storage.budget, None);
        for bad in [
            "budget = 0",
            "budget = -5",
            "budget = \"lots\"",
            "policy = \"shrink\"",
            "format = \"f8\"",
            "fields = { pressure = \"f16\" }",
        ] {
            let e = with(&format!("[storage]\n{bad}")).expect_err(bad).to_string();
            assert!(e.contains("storage") || e.contains(bad), "{bad}: {e}");
        }
        // f16 for every field that may take it, but the temperature.
        let s = with("[storage]\nformat = \"f16\"\nfields = { temperature = \"f32\" }").expect("scene");
        for group in FieldGroup::ALL {
            let want = if group == FieldGroup::Temperature { StoreFormat::F32 } else { StoreFormat::F16 };
            assert_eq!(s.storage.format_of(group), want, "{group:?}");
        }
        let fields = crate::grid::GridFields::declare(&s.grid().expect("grid"), &s.params).stored(&s.storage);
        for f in crate::grid::FieldId::STATE_AND_SCRATCH {
            let half = fields.desc(*f).format.is_half();
            let group = FieldGroup::ALL.into_iter().find(|g| g.fields().contains(f));
            assert_eq!(half, group.is_some_and(|g| g != FieldGroup::Temperature), "{}", f.name());
        }
        // Written back (a checkpoint's header), the budget reads the same.
        let s = with("[storage]\nbudget = \"1.5 GiB\"").expect("scene");
        let again = Scene::from_toml(&toml::to_string(&s).expect("toml"), "again").expect("scene");
        assert_eq!(again.storage, s.storage);
    }

    #[test]
    fn sizes_read_with_their_units() {
        let b = |t: &str| Bytes::parse("k", t).map(|b| b.0);
        assert_eq!(b("4096").ok(), Some(4096));
        assert_eq!(b("256 MiB").ok(), Some(256 << 20));
        assert_eq!(b("1.5GB").ok(), Some(1_500_000_000));
        assert_eq!(b(" 2 KiB ").ok(), Some(2048));
        for bad in ["", "MiB", "-1 MiB", "0", "1 parsec", "1e999 GB", "nan GB", "0.1"] {
            let e = b(bad).expect_err(bad).to_string();
            assert!(e.contains("`k`"), "{bad}: {e}");
        }
    }
}
