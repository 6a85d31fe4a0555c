//! The one error type of the engine's libraries.

use thiserror::Error;

/// Everything that can go wrong in the engine, typed so that callers can react.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A scene or parameter value is out of its allowed range (zero size, NaN, …).
    #[error("invalid value for `{key}`: {value} ({reason})")]
    InvalidValue {
        /// The TOML path (or API name) of the value, e.g. `grid.nx`.
        key: String,
        /// The offending value as text.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// The scene text is not valid TOML or does not match the scene schema.
    #[error("scene {origin}: {message}")]
    Scene {
        /// Where the scene came from (file path or preset name).
        origin: String,
        /// The parser's message; it names the line and column.
        message: String,
    },
    /// A preset name that does not exist.
    #[error("unknown preset `{name}` (known: {known})")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The presets that exist, comma separated.
        known: String,
    },
    /// A field name that does not exist.
    #[error("unknown field `{name}` (known: {known})")]
    UnknownField {
        /// The name asked for.
        name: String,
        /// The fields that exist, comma separated.
        known: String,
    },
    /// A `--set key=value` override that cannot be applied.
    #[error("cannot apply override `{item}`: {reason}")]
    Override {
        /// The override as given.
        item: String,
        /// Why it failed.
        reason: String,
    },
    /// The resources do not fit in memory (or in the backend's addressing limits).
    #[error("{what} needs {bytes} bytes: {reason}")]
    OutOfMemory {
        /// What was being allocated: `grid 192x256`, `resource \`u\``.
        what: String,
        /// Bytes it needs.
        bytes: u64,
        /// Why it was refused.
        reason: String,
    },
    /// A scene needs more memory than its `storage.budget` allows (policy `refuse`).
    #[error("the scene needs {needed} bytes, and storage.budget allows {allowed}: {detail}")]
    OverBudget {
        /// Bytes the plan needs.
        needed: u64,
        /// Bytes the budget allows.
        allowed: u64,
        /// The grid and backend, and what to do.
        detail: String,
    },
    /// A data buffer of the wrong length was handed to `upload` (or `write`).
    #[error("field `{field}` expects {expected} values, got {got}")]
    FieldLength {
        /// The field's (resource's) name.
        field: &'static str,
        /// Values the field holds.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// Bytes of the wrong length were handed to `write`, or a resource id that names none.
    #[error("resource `{resource}` holds {expected} bytes, got {got}")]
    ResourceLength {
        /// The resource's name.
        resource: String,
        /// Bytes it holds.
        expected: u64,
        /// Bytes given.
        got: u64,
    },
    /// An optional capability this backend does not have, or a feature a later version brings.
    #[error("{what} is not supported by {by}")]
    Unsupported {
        /// The capability.
        what: String,
        /// The backend or component that lacks it.
        by: String,
    },
    /// The backend was used before `allocate`.
    #[error("backend `{0}` has no resources allocated; call `allocate` first")]
    NotAllocated(&'static str),
    /// The state stopped being finite: the simulation blew up (found by a diagnostics pass).
    #[error(
        "the simulation blew up: after step {step} the field(s) {fields} hold NaN or infinite values \
         (dt = {dt:?}): the time step is too large for the flow or a force too strong; a smaller \
         params.dt, weaker forces or a params.max_speed clamp keep it finite"
    )]
    NonFinite {
        /// Steps taken when the check found it (it happened at this step or before).
        step: u64,
        /// The fields, comma separated.
        fields: String,
        /// The time step of the last step.
        dt: f32,
    },
    /// The state is finite but the flow ran away: the fastest face moved farther in the last
    /// step than the grid is wide (`dt · max |u| / h` above the larger of `nx` and `ny`), which
    /// no sound flow does. Typically an explicit force (vorticity confinement, buoyancy)
    /// amplifying itself step after step on its way to infinity.
    #[error(
        "the flow outran the grid: after step {step} the fastest face moves {cfl:.3e} cells per \
         step (dt = {dt:?}), more than the grid's {cells} cells across: the time step is far too \
         large for the flow or a force too strong (vorticity confinement and buoyancy act explicitly); a \
         smaller params.dt, weaker forces or a params.max_speed clamp keep it bounded"
    )]
    RanAway {
        /// Steps taken when the check found it (it happened at this step or before).
        step: u64,
        /// The Courant number of the last step, `dt · max |u| / h`.
        cfl: f64,
        /// The larger of the grid's `nx` and `ny`.
        cells: u32,
        /// The time step of the last step.
        dt: f32,
    },
    /// A checkpoint that cannot be written or restored (damaged, truncated, another version,
    /// not matching its scene).
    #[error("checkpoint: {problem}")]
    Checkpoint {
        /// What is wrong.
        problem: String,
    },
    /// A device or backend failure (lost device, driver error, …).
    #[error("backend `{backend}` failed: {message}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// What failed.
        message: String,
    },
}

/// Result alias of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for [`Error::InvalidValue`]. The key and value are shortened (`shorten`), and a number written
    /// out in more than 15 digits (how `f32` prints 1e30) is shown in scientific notation.
    pub fn invalid(key: impl Into<String>, value: impl ToString, reason: impl Into<String>) -> Self {
        Error::InvalidValue {
            key: shorten(&key.into()),
            value: shorten(&readable_number(value.to_string())),
            reason: reason.into(),
        }
    }
}

/// `text` cut to at most 200 characters, marked where it was cut with the whole length: what a
/// message echoes of a value, however long the value.
pub fn shorten(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
        None => text.to_string(),
    }
}

/// Each line of `text` [`shorten`]ed (a parser's message quotes the offending line whole).
pub fn shorten_lines(text: &str) -> String {
    text.lines().map(shorten).collect::<Vec<_>>().join("\n")
}

/// How an `f32` prints a large value (more than 15 digits, 1e30 as 1 and thirty zeros) in
/// scientific notation; any other text, what a user typed included, as it is.
fn readable_number(text: String) -> String {
    let digits = text.trim_start_matches('-');
    if digits.len() > 15
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(x) = text.parse::<f32>()
        && x.to_string() == text
    {
        return format!("{x:e}");
    }
    text
}
