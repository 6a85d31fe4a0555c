//! `--set key=value` overrides of a scene's TOML, and the checks the parsed table gets
//! before it becomes a [`Scene`] (tables written as tables, `f32` values in range).

use super::Scene;
use swirly_ir::error::shorten;
use swirly_ir::{Error, Result};

/// Parse one `key=value` override: the value is TOML (`0.01`, `true`, `[0, 1]`, `"text"`);
/// anything that is not valid TOML is taken as a bare string (`jacobi`).
pub fn parse_override(item: &str) -> Result<(String, toml::Value)> {
    let (key, value) = item.split_once('=').ok_or_else(|| Error::Override {
        item: shorten(item),
        reason: "expected key=value, e.g. params.viscosity=0.01".into(),
    })?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|p| p.trim().is_empty()) {
        return Err(Error::Override { item: shorten(item), reason: "empty key".into() });
    }
    let parts = key.split('.').count();
    if parts > MAX_KEY_PARTS {
        return Err(Error::Override {
            item: format!("{}…", key.chars().take(60).collect::<String>()),
            reason: format!("the key has {parts} dotted parts; a scene key has at most {MAX_KEY_PARTS}"),
        });
    }
    let value = value.trim();
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

/// Most dotted parts in a `--set` key: deeper than any scene key, shallow enough that the
/// tables it creates cannot exhaust the stack when they are read or dropped.
pub const MAX_KEY_PARTS: usize = 16;

/// Set `key` (dot-separated; a number indexes an array, e.g. `emitters.0.radius`) in `root`.
/// Missing tables on the way are created; arrays are not grown.
pub(super) fn apply_override(root: &mut toml::Table, key: &str, value: toml::Value) -> Result<()> {
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    let fail = |reason: String| Error::Override { item: shorten(key), reason };
    let (last, path) = parts.split_last().ok_or_else(|| fail("empty key".into()))?;
    let mut node: Option<&mut toml::Value> = None;
    // A missing key is created as a table; followed by an index it was meant as an array,
    // which an override does not create element by element.
    let creatable = |t: &toml::Table, depth: usize| -> Result<()> {
        if t.contains_key(parts[depth]) || parts[depth + 1].parse::<usize>().is_err() {
            return Ok(());
        }
        let whole = shorten(&parts[..=depth].join("."));
        Err(fail(format!(
            "the scene has no `{whole}`, so it has no element {}: set the whole array, e.g. `{whole}=[{{…}}]`",
            shorten(parts[depth + 1])
        )))
    };
    if parts.len() > MAX_KEY_PARTS {
        return Err(fail(format!("the key has {} dotted parts; a scene key has at most {MAX_KEY_PARTS}", parts.len())));
    }
    for (depth, part) in path.iter().enumerate() {
        let here = shorten(&parts[..depth].join("."));
        node = Some(match node {
            None => {
                creatable(root, depth)?;
                root.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            Some(toml::Value::Table(t)) => {
                creatable(t, depth)?;
                t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            Some(toml::Value::Array(a)) => element(a, part).map_err(|r| fail(format!("`{here}` {r}")))?,
            Some(_) => return Err(fail(format!("`{here}` is not a table or an array"))),
        });
    }
    let here = shorten(&path.join("."));
    match node {
        None => set_entry(root, last, value, &parts.join(".")).map_err(fail)?,
        Some(toml::Value::Table(t)) => set_entry(t, last, value, &parts.join(".")).map_err(fail)?,
        Some(toml::Value::Array(a)) => {
            let slot = element(a, last).map_err(|r| fail(format!("`{here}` {r}")))?;
            set_value(slot, value, &parts.join(".")).map_err(fail)?
        }
        Some(_) => return Err(fail(format!("`{here}` is not a table or an array"))),
    }
    Ok(())
}

/// The error for a value that is not a word where a key takes one of a few words (`backtrace
/// = 7`), naming the key, the value and the words, where `e` is toml's message for one
/// ("invalid type: unit variant, expected string only", "wanted string or table": neither
/// names them). The key is found by putting, in turn, a word no key takes in each place of
/// `table` that holds something other than a word, until serde answers with the words that
/// place expects.
pub(super) fn word_expected(table: &toml::Table, e: &toml::de::Error) -> Option<Error> {
    const PROBE: &str = "\u{1}not-a-word";
    let message = e.to_string();
    if !(message.contains("expected string only") || message.contains("wanted string or table")) {
        return None;
    }
    #[derive(Clone)]
    enum Step {
        Key(String),
        Index(usize),
    }
    /// Every place under `value` holding neither a word nor a table, through tables and arrays
    /// of tables (no key of a scene takes a word inside an array of numbers).
    fn places(value: &toml::Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        match value {
            toml::Value::Table(t) => t.iter().for_each(|(k, v)| {
                at.push(Step::Key(k.clone()));
                places(v, at, out);
                at.pop();
            }),
            toml::Value::Array(a) if a.iter().any(toml::Value::is_table) => a.iter().enumerate().for_each(|(i, v)| {
                at.push(Step::Index(i));
                places(v, at, out);
                at.pop();
            }),
            toml::Value::String(_) => {}
            _ => out.push(at.clone()),
        }
    }
    fn slot<'a>(value: &'a mut toml::Value, path: &[Step]) -> Option<&'a mut toml::Value> {
        path.iter().try_fold(value, |v, step| match step {
            Step::Key(k) => v.get_mut(k.as_str()),
            Step::Index(i) => v.get_mut(*i),
        })
    }
    let root = toml::Value::Table(table.clone());
    let mut found = Vec::new();
    places(&root, &mut Vec::new(), &mut found);
    for path in found {
        let mut probe = root.clone();
        let value = slot(&mut probe, &path)?;
        let written = std::mem::replace(value, toml::Value::String(PROBE.to_string()));
        let Err(e) = probe.try_into::<Scene>() else { continue };
        let e = e.to_string();
        let Some(words) = e.split_once(&format!("unknown variant `{PROBE}`, expected ")).map(|(_, w)| w) else {
            continue;
        };
        let key = path.iter().fold(String::new(), |k, step| match step {
            Step::Key(name) if k.is_empty() => name.clone(),
            Step::Key(name) => format!("{k}.{name}"),
            Step::Index(i) => format!("{k}[{i}]"),
        });
        let words = words.lines().next().unwrap_or(words).trim();
        return Some(Error::invalid(key, shorten(&written.to_string()), format!("it takes {words}")));
    }
    None
}

/// Which override makes a scene unreadable, for its error: serde's message does not always
/// say where (an internally tagged enum, such as `initial.velocity`, reads its fields from a
/// buffer that has forgotten their path). The first override after which the table no longer
/// reads as a scene, as `--set key=value`; else "--set overrides" (only their sum fails).
pub(super) fn culprit(mut table: toml::Table, overrides: &[(String, toml::Value)]) -> String {
    for (k, v) in overrides {
        if apply_override(&mut table, k, v.clone()).is_err() || table.clone().try_into::<Scene>().is_err() {
            return format!("--set {k}={v}");
        }
    }
    "--set overrides".to_string()
}

/// Set `table[key]` to an override's value. Where `table[key]` is a table already, a table
/// value sets its keys one by one (`params={dt=0.01}` changes `params.dt` and keeps the rest)
/// and any other value is an error: a serde struct also accepts an array, so
/// `params=[]` would otherwise quietly put every parameter back to its default.
fn set_entry(table: &mut toml::Table, key: &str, value: toml::Value, path: &str) -> std::result::Result<(), String> {
    match table.get_mut(key) {
        Some(slot) => set_value(slot, value, path),
        None => {
            table.insert(key.to_string(), value);
            Ok(())
        }
    }
}

/// Set a value that is there already (a key of a table, an element of an array, such as
/// `emitters.0`) by [`set_entry`]'s rule: a table is set key by key and only by a table.
fn set_value(slot: &mut toml::Value, value: toml::Value, path: &str) -> std::result::Result<(), String> {
    match (slot, value) {
        (toml::Value::Table(old), toml::Value::Table(new)) => {
            new.into_iter().try_for_each(|(k, v)| set_entry(old, &k, v, &format!("{path}.{k}")))
        }
        (toml::Value::Table(_), value) => {
            let path = shorten(path);
            Err(format!(
                "`{path}` is a table: set its keys (`{path}.<key>=…`, or `{path}={{<key>=…}}`), not {} `{}`",
                value.type_str(),
                shorten(&value.to_string())
            ))
        }
        (slot, value) => {
            *slot = value;
            Ok(())
        }
    }
}

/// Element `index` of an override's array, or why there is none.
fn element<'a>(a: &'a mut [toml::Value], index: &str) -> std::result::Result<&'a mut toml::Value, String> {
    let len = a.len();
    index
        .parse::<usize>()
        .ok()
        .and_then(|i| a.get_mut(i))
        .ok_or_else(|| format!("is an array of {len}: `{}` is not an index in 0..{len}", shorten(index)))
}

/// Check that every table of the scene was written as a table. serde also reads a struct from
/// an array, field by field in their order, so `grid = [64, 32]` would be nx and ny and
/// `params = [0.01]` would set `dt` alone: an array where the scene has a table is an error
/// naming the key. The scene's shape comes from the scene itself, serialised back (every
/// struct becomes a table there, whatever the text wrote).
pub(super) fn check_tables_as_tables(written: &toml::Table, scene: &Scene) -> Result<()> {
    fn walk(written: &toml::Value, shape: &toml::Value, key: &str) -> Result<()> {
        match (written, shape) {
            (toml::Value::Array(_), toml::Value::Table(_)) => Err(Error::invalid(
                key,
                written,
                format!("`{key}` is a table: write its keys (`[{key}]` or `{key} = {{ … }}`), not an array"),
            )),
            (toml::Value::Table(w), toml::Value::Table(s)) => walk_table(w, s, key),
            (toml::Value::Array(w), toml::Value::Array(s)) => {
                if w.len() != s.len() {
                    return Err(Error::invalid(
                        key,
                        shorten(&written.to_string()),
                        format!("`{key}` takes {} values, not {}", s.len(), w.len()),
                    ));
                }
                w.iter().zip(s).enumerate().try_for_each(|(i, (v, shape))| walk(v, shape, &format!("{key}[{i}]")))
            }
            _ => Ok(()),
        }
    }
    fn walk_table(written: &toml::Table, shape: &toml::Table, key: &str) -> Result<()> {
        written.iter().try_for_each(|(k, v)| {
            let path = shorten(&if key.is_empty() { k.clone() } else { format!("{key}.{k}") });
            match shape.get(k) {
                Some(shape) => walk(v, shape, &path),
                // serde lets unknown keys through where `deny_unknown_fields` cannot act (a
                // unit variant of a tagged enum, such as `kind = "zero"`).
                None => Err(Error::invalid(
                    path.as_str(),
                    shorten(&v.to_string()),
                    format!(
                        "`{path}` is not a key here; {} takes {}",
                        if key.is_empty() { "a scene" } else { key },
                        shape.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    ),
                )),
            }
        })
    }
    match toml::Table::try_from(scene) {
        Ok(shape) => walk_table(written, &shape, ""),
        // Every scene that deserialised serialises; were one not to, serde's reading stands.
        Err(_) => Ok(()),
    }
}

/// Check that every float in a scene's TOML fits the `f32` the scene stores it in: a finite value
/// beyond ±3.4e38 would become infinite, a non-zero one below 1.2e-38 would lose its digits
/// or become 0. Errors name the key (`emitters[0].radius`) and the value as written.
/// Infinities and NaN pass here; [`Scene::validate`] names them.
pub(super) fn check_f32_range(table: &toml::Table) -> Result<()> {
    fn walk(value: &toml::Value, key: &str) -> Result<()> {
        match value {
            toml::Value::Float(x) if x.is_finite() => {
                let a = x.abs();
                if a > f64::from(f32::MAX) {
                    return Err(Error::invalid(key, format!("{x:e}"), "beyond f32's range of ±3.4e38"));
                }
                if a != 0.0 && a < f64::from(f32::MIN_POSITIVE) {
                    return Err(Error::invalid(
                        key,
                        format!("{x:e}"),
                        "too small for f32, whose smallest normal value is 1.2e-38; write 0 for none",
                    ));
                }
                Ok(())
            }
            toml::Value::Table(t) => {
                t.iter().try_for_each(|(k, v)| walk(v, &if key.is_empty() { k.clone() } else { format!("{key}.{k}") }))
            }
            toml::Value::Array(a) => a.iter().enumerate().try_for_each(|(i, v)| walk(v, &format!("{key}[{i}]"))),
            _ => Ok(()),
        }
    }
    table.iter().try_for_each(|(k, v)| walk(v, k))
}
