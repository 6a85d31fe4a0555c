//! Storage under a memory budget: the plan of what a scene needs on a backend (every resource,
//! and the backend's own working memory), and the policy when it does not fit: refuse, or run
//! the largest grid that does.

use serde::{Deserialize, Serialize};

use swirly_ir::backend::Backend;
use swirly_ir::resource::{self, Format, Lifetime, ResourceDesc};
use swirly_ir::schedule::Schedule;
use swirly_ir::{Error, Result};

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
    /// Run what fits, and say so (`Simulation::downscaled_from`): a finer dye and
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
    pub(crate) fn format_of(&self, group: FieldGroup) -> StoreFormat {
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
    pub(crate) fn any_half(&self) -> bool {
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

/// An error unless `plan` fits in `budget`; `detail` names the grid and backend, and what to do.
pub(crate) fn check_within(plan: &MemoryPlan, budget: Bytes, detail: impl FnOnce() -> String) -> Result<()> {
    if plan.total() <= budget.0 {
        return Ok(());
    }
    Err(Error::OverBudget { needed: plan.total(), allowed: budget.0, detail: detail() })
}
