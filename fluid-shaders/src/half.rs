//! Half-precision storage: a composed shader with some of its storage bindings held as `f16`
//! (`array<f16>`, `array<vec4<f16>>`, ...) while every computation stays in `f32`.
//!
//! The kernels are written once, over `f32` arrays. [`with_half`] rewrites a composed shader
//! for the bindings it names: their declarations take the `f16` element type, every read of an
//! element is widened (`f32(x[i])`), and every write narrows what it stores (`x[i] = f16(..)`;
//! `x[i] += a` becomes `x[i] = f16(f32(x[i]) + (a))`). The text is rewritten, not parsed: the
//! kernels index storage arrays only as `name[index]`, and naga's validation of every rewritten
//! kernel (this crate's tests) catches a use the rewrite misses.

/// The `f16` type of an `f32` element type, when it has one.
fn narrow(element: &str) -> Option<&'static str> {
    match element {
        "f32" => Some("f16"),
        "vec2<f32>" => Some("vec2<f16>"),
        "vec4<f32>" => Some("vec4<f16>"),
        _ => None,
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The name of storage binding `@group(1) @binding(binding)` and where its declaration puts
/// its element type: `(name, start, end)` of the type inside `array<...>`.
fn declaration(src: &str, binding: u32) -> Option<(String, usize, usize)> {
    let at = src.find(&format!("@group(1) @binding({binding}) var<storage"))?;
    let end = at + src[at..].find(';')?;
    let decl = &src[at..end];
    let rest = decl[decl.find('>')? + 1..].trim_start();
    let name: String = rest.chars().take_while(|&c| c.is_ascii_alphanumeric() || c == '_').collect();
    let start = at + decl.find("array<")? + "array<".len();
    let stop = at + decl.rfind('>')?;
    Some((name, start, stop))
}

/// The index of the bracket closing the one at `open`.
fn matching(src: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, &c) in src.iter().enumerate().skip(open) {
        match c {
            b'[' | b'(' => depth += 1,
            b']' | b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the `;` ending the statement that goes on at `from`.
fn statement_end(src: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, &c) in src.iter().enumerate().skip(from) {
        match c {
            b'[' | b'(' => depth += 1,
            b']' | b')' => depth -= 1,
            b';' if depth == 0 => return Some(k),
            _ => {}
        }
    }
    None
}

/// `src` with its storage bindings `@group(1) @binding(b)` for each `b` of `bindings` held as
/// `f16`; `None` when one of them is not an `f32`, `vec2<f32>` or `vec4<f32>` storage array,
/// or the text cannot be rewritten.
pub fn with_half(src: &str, bindings: &[u32]) -> Option<String> {
    if bindings.is_empty() {
        return Some(src.to_string());
    }
    let mut text = src.to_string();
    let mut types = Vec::new();
    for &b in bindings {
        let (name, start, end) = declaration(&text, b)?;
        let wide = text[start..end].to_string();
        let half = narrow(&wide)?;
        text.replace_range(start..end, half);
        types.push((name, wide, half));
    }
    let body = rewrite(&text, &types)?;
    Some(format!("enable f16;\n{body}"))
}

/// Rewrite the element reads and writes of `types` (`(name, f32 type, f16 type)`) in `src`.
fn rewrite(src: &str, types: &[(String, String, &str)]) -> Option<String> {
    let bytes = src.as_bytes();
    let mut out = String::with_capacity(src.len() + src.len() / 8);
    let mut k = 0;
    while k < bytes.len() {
        let c = bytes[k];
        // Comments pass unchanged.
        if c == b'/' && bytes.get(k + 1) == Some(&b'/') {
            let end = src[k..].find('\n').map_or(bytes.len(), |e| k + e);
            out.push_str(&src[k..end]);
            k = end;
            continue;
        }
        if !is_ident(c) || (k > 0 && (is_ident(bytes[k - 1]) || bytes[k - 1] == b'.')) {
            out.push(c as char);
            k += 1;
            continue;
        }
        let word_end = k + bytes[k..].iter().take_while(|&&b| is_ident(b)).count();
        let word = &src[k..word_end];
        let open = word_end + bytes[word_end..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        let Some((_, wide, half)) = types.iter().find(|(n, _, _)| *n == word) else {
            out.push_str(word);
            k = word_end;
            continue;
        };
        if bytes.get(open) != Some(&b'[') {
            out.push_str(word);
            k = word_end;
            continue;
        }
        let close = matching(bytes, open)?;
        let index = rewrite(&src[open + 1..close], types)?;
        let element = format!("{word}[{index}]");
        // A member after the element (`x[i].y`) is written as a scalar.
        let mut after = close + 1;
        let mut member = String::new();
        if bytes.get(after) == Some(&b'.') {
            let m_end = after + 1 + bytes[after + 1..].iter().take_while(|&&b| is_ident(b)).count();
            member = src[after..m_end].to_string();
            after = m_end;
        }
        let op_at = after + bytes[after..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        let op = match (bytes.get(op_at), bytes.get(op_at + 1)) {
            (Some(b'='), Some(b'=')) => None,
            (Some(b'='), _) => Some(("", op_at + 1)),
            (Some(&o @ (b'+' | b'-' | b'*' | b'/')), Some(b'=')) => {
                Some((&src[op_at..op_at + 1], op_at + 2)).filter(|_| o != b'=')
            }
            _ => None,
        };
        let (wide_ty, half_ty) = if member.is_empty() { (wide.as_str(), *half) } else { ("f32", "f16") };
        match op {
            Some((op, rhs_at)) => {
                let end = statement_end(bytes, rhs_at)?;
                let rhs = rewrite(&src[rhs_at..end], types)?;
                let target = format!("{element}{member}");
                if op.is_empty() {
                    out.push_str(&format!("{target} = {half_ty}({})", rhs.trim()));
                } else {
                    out.push_str(&format!("{target} = {half_ty}({wide_ty}({target}) {op} ({}))", rhs.trim()));
                }
                k = end;
            }
            None => {
                out.push_str(&format!("{wide}({element}){member}"));
                k = after;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_widen_and_writes_narrow() {
        let src = "@group(1) @binding(0) var<storage, read_write> a: array<f32>;\n\
                   @group(1) @binding(1) var<storage, read> d: array<vec4<f32>>;\n\
                   @group(1) @binding(2) var<storage, read_write> b: array<f32>;\n\
                   fn f(i: u32) {\n    a[i] = a[i + 1u] * 2.0; // a[i] in a comment\n    \
                   a[u32(b[i])] += d[i].x;\n    let ok = a[i] == 1.0;\n    bb[i] = 0.0;\n}\n";
        let out = with_half(src, &[0, 1]).expect("rewritten");
        assert!(out.starts_with("enable f16;\n"));
        assert!(out.contains("var<storage, read_write> a: array<f16>;"), "{out}");
        assert!(out.contains("var<storage, read> d: array<vec4<f16>>;"), "{out}");
        assert!(out.contains("var<storage, read_write> b: array<f32>;"), "{out}");
        assert!(out.contains("a[i] = f16(f32(a[i + 1u]) * 2.0); // a[i] in a comment"), "{out}");
        assert!(out.contains("a[u32(b[i])] = f16(f32(a[u32(b[i])]) + (vec4<f32>(d[i]).x));"), "{out}");
        assert!(out.contains("let ok = f32(a[i]) == 1.0;"), "{out}");
        assert!(out.contains("bb[i] = 0.0;"), "{out}");
        assert_eq!(with_half(src, &[7]), None);
        assert_eq!(with_half(src, &[]).as_deref(), Some(src));
    }
}
