//! "Did you mean …?" for a misspelt key or word in a scene: serde names the unknown field or
//! variant and lists the expected ones; the nearest of those by edit distance is named after it.

/// `message` with a hint after the unknown field or variant a line names (before the list of
/// expected names, which long messages cut short), when one expected name is close to it: an
/// edit distance of at most a third of its length, 1 to 3.
pub(super) fn with_hint(message: &str) -> String {
    let lines: Vec<String> = message
        .lines()
        .map(|line| match hint(line) {
            Some((at, near)) => format!("{} (did you mean `{near}`?){}", &line[..at], &line[at..]),
            None => line.to_string(),
        })
        .collect();
    let mut out = lines.join("\n");
    if message.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Where the unknown name that `line` names ends, and the expected name nearest it, if one is
/// near enough.
fn hint(line: &str) -> Option<(usize, &str)> {
    let at = ["unknown field `", "unknown variant `"].iter().find_map(|p| line.find(p).map(|i| i + p.len()))?;
    let rest = &line[at..];
    let end = rest.find('`')?;
    let (wrong, expected) = (&rest[..end], &rest[end + 1..]);
    let names = expected.split('`').skip(1).step_by(2);
    let allowed = (wrong.chars().count() / 3).clamp(1, 3);
    names
        .map(|name| (distance(wrong, name), name))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| (at + end + 1, name))
}

/// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbouring letters, each one edit.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut best = (d[(i - 1) * w + j] + 1).min(d[i * w + j - 1] + 1).min(d[(i - 1) * w + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * w + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_edits_and_swaps() {
        assert_eq!(distance("vorticty", "vorticity"), 1);
        assert_eq!(distance("jacboi", "jacobi"), 1);
        assert_eq!(distance("nz", "nx"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn only_a_near_name_is_suggested() {
        let line = "unknown field `vorticty`, expected one of `dt`, `vorticity`, `viscosity`";
        assert_eq!(hint(line).map(|h| h.1), Some("vorticity"));
        let line = "unknown variant `banana`, expected `jacobi` or `multigrid`";
        assert_eq!(hint(line), None);
        assert_eq!(hint("invalid type: string, expected f32"), None);
        let text = with_hint("TOML parse error at line 2\nunknown variant `jacboi`, expected `jacobi` or `mg`\n");
        assert!(text.ends_with("`jacboi` (did you mean `jacobi`?), expected `jacobi` or `mg`\n"), "{text}");
    }
}
