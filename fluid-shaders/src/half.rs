//! Half-precision storage: a composed shader with some of its storage bindings held as `f16`
//! while every computation stays in `f32`, in one of two layouts ([`HalfStorage`]).
//!
//! The kernels are written once, over `f32` arrays. [`with_half`] rewrites a composed shader
//! for the bindings it names. Natively (`shader-f16`) their declarations take the `f16` element
//! type, every read of an element is widened (`f32(x[i])`) and every write narrows what it
//! stores (`x[i] = f16(..)`; `x[i] += a` becomes `x[i] = f16(f32(x[i]) + (a))`). Packed, for a
//! device without `shader-f16`, two halves share a `u32` word (`pack2x16float`), the same bytes
//! as an `array<f16>`: reads and writes go through helper functions appended to the shader, and
//! a scalar array written by the kernel is `array<atomic<u32>>`, so that two invocations writing
//! the two halves of one word never lose each other's half. The text is rewritten, not parsed:
//! the kernels index storage arrays only as `name[index]`, and naga's validation of every
//! rewritten kernel (this crate's tests) catches a use the rewrite misses.

/// How a kernel holds its half-precision bindings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HalfStorage {
    /// `array<f16>`, `array<vec4<f16>>`: needs the `shader-f16` feature (`enable f16`).
    #[default]
    Native,
    /// Two halves a `u32` word (`pack2x16float` / `unpack2x16float`), for any device; a scalar
    /// array the kernel writes is written by atomic operations.
    Packed,
}

impl HalfStorage {
    /// The layout the environment variable `FLUID_F16` asks for: `packed` (runs on any device)
    /// or `native`; `None` when it is unset (the backends then hold f16 natively where the
    /// device can). `Err` holds any other value.
    pub fn from_env() -> Result<Option<HalfStorage>, String> {
        match std::env::var_os("FLUID_F16") {
            None => Ok(None),
            Some(v) => {
                let text = v.to_string_lossy();
                HalfStorage::parse(&text).map(Some).ok_or_else(|| text.into_owned())
            }
        }
    }

    /// `packed` or `native` (any case, spaces around ignored).
    pub fn parse(text: &str) -> Option<HalfStorage> {
        match text.trim().to_ascii_lowercase().as_str() {
            "packed" => Some(HalfStorage::Packed),
            "native" => Some(HalfStorage::Native),
            _ => None,
        }
    }
}

/// A binding to rewrite: its name, its `f32` element type, and its type in the shader now.
struct Held {
    name: String,
    wide: String,
    half: &'static str,
    written: bool,
}

/// The `f16` type of an `f32` element type, when it has one, natively or packed (`written`:
/// the binding is `read_write`).
fn narrow(element: &str, storage: HalfStorage, written: bool) -> Option<&'static str> {
    Some(match (storage, element) {
        (HalfStorage::Native, "f32") => "f16",
        (HalfStorage::Native, "vec2<f32>") => "vec2<f16>",
        (HalfStorage::Native, "vec4<f32>") => "vec4<f16>",
        (HalfStorage::Packed, "f32") if written => "atomic<u32>",
        (HalfStorage::Packed, "f32" | "vec2<f32>") => "u32",
        (HalfStorage::Packed, "vec4<f32>") => "vec2<u32>",
        _ => return None,
    })
}

/// The helper functions through which a packed binding is read (`half_load_<name>`) and, when
/// `written`, written (`half_store_<name>`), indices in elements.
fn packed_helpers(h: &Held) -> String {
    let (name, wide) = (&h.name, &h.wide);
    let (load, store) = match (wide.as_str(), h.written) {
        ("f32", true) => (
            format!("unpack2x16float(atomicLoad(&{name}[half_i >> 1u]))[half_i & 1u]"),
            // Only this invocation writes its half: flip the bits that change, atomically, so
            // the other half of the word is untouched whoever writes it meanwhile.
            format!(
                "let half_shift = (half_i & 1u) * 16u;\n    let half_old = (atomicLoad(&{name}[half_i >> 1u]) >> half_shift) & 0xffffu;\n    \
                 let half_bits = pack2x16float(vec2<f32>(half_v, 0.0)) & 0xffffu;\n    \
                 atomicXor(&{name}[half_i >> 1u], (half_old ^ half_bits) << half_shift);"
            ),
        ),
        ("f32", false) => (format!("unpack2x16float({name}[half_i >> 1u])[half_i & 1u]"), String::new()),
        ("vec2<f32>", _) => {
            (format!("unpack2x16float({name}[half_i])"), format!("{name}[half_i] = pack2x16float(half_v);"))
        }
        _ => (
            format!("vec4<f32>(unpack2x16float({name}[half_i].x), unpack2x16float({name}[half_i].y))"),
            format!("{name}[half_i] = vec2<u32>(pack2x16float(half_v.xy), pack2x16float(half_v.zw));"),
        ),
    };
    let mut out = format!("\nfn half_load_{name}(half_i: u32) -> {wide} {{\n    return {load};\n}}\n");
    if h.written {
        out.push_str(&format!("\nfn half_store_{name}(half_i: u32, half_v: {wide}) {{\n    {store}\n}}\n"));
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The name of storage binding `@group(1) @binding(binding)`, where its declaration puts its
/// element type (`start..end` of the type inside `array<...>`), and whether it is `read_write`.
fn declaration(src: &str, binding: u32) -> Option<(String, usize, usize, bool)> {
    let at = src.find(&format!("@group(1) @binding({binding}) var<storage"))?;
    let end = at + src[at..].find(';')?;
    let decl = &src[at..end];
    let written = decl[..decl.find('>')?].contains("read_write");
    let rest = decl[decl.find('>')? + 1..].trim_start();
    let name: String = rest.chars().take_while(|&c| c.is_ascii_alphanumeric() || c == '_').collect();
    let start = at + decl.find("array<")? + "array<".len();
    let stop = at + decl.rfind('>')?;
    Some((name, start, stop, written))
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
/// `f16` the `storage` way; `None` when one of them is not an `f32`, `vec2<f32>` or `vec4<f32>`
/// storage array, or the text cannot be rewritten.
pub fn with_half(src: &str, bindings: &[u32], storage: HalfStorage) -> Option<String> {
    if bindings.is_empty() {
        return Some(src.to_string());
    }
    let mut text = src.to_string();
    let mut held = Vec::new();
    for &b in bindings {
        let (name, start, end, written) = declaration(&text, b)?;
        let wide = text[start..end].to_string();
        let half = narrow(&wide, storage, written)?;
        text.replace_range(start..end, half);
        held.push(Held { name, wide, half, written });
    }
    let body = rewrite(&text, &held, storage)?;
    Some(match storage {
        HalfStorage::Native => format!("enable f16;\n{body}"),
        HalfStorage::Packed => body + &held.iter().map(packed_helpers).collect::<String>(),
    })
}

/// [`with_half`] for the binding slots of `mask`, a bit each (`Invocation::half`'s form).
pub fn half_variant(src: &str, mask: u32, storage: HalfStorage) -> Option<String> {
    let slots: Vec<u32> = (0..32).filter(|b| mask & (1 << b) != 0).collect();
    with_half(src, &slots, storage)
}

/// Rewrite the element reads and writes of `held` in `src`.
fn rewrite(src: &str, held: &[Held], storage: HalfStorage) -> Option<String> {
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
            let len = src[k..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&src[k..k + len]);
            k += len;
            continue;
        }
        let word_end = k + bytes[k..].iter().take_while(|&&b| is_ident(b)).count();
        let word = &src[k..word_end];
        let open = word_end + bytes[word_end..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        let found = held.iter().find(|h| h.name == word);
        let (Some(h), Some(b'[')) = (found, bytes.get(open)) else {
            out.push_str(word);
            k = word_end;
            continue;
        };
        let close = matching(bytes, open)?;
        let index = rewrite(&src[open + 1..close], held, storage)?;
        // A member after the element (`x[i].y`) is read as a scalar.
        let mut after = close + 1;
        let mut member = "";
        if bytes.get(after) == Some(&b'.') {
            let m_end = after + 1 + bytes[after + 1..].iter().take_while(|&&b| is_ident(b)).count();
            member = &src[after..m_end];
            after = m_end;
        }
        let op_at = after + bytes[after..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        let op = match (bytes.get(op_at), bytes.get(op_at + 1)) {
            (Some(b'='), Some(b'=')) => None,
            (Some(b'='), _) => Some(("", op_at + 1)),
            (Some(b'+' | b'-' | b'*' | b'/'), Some(b'=')) => Some((&src[op_at..op_at + 1], op_at + 2)),
            _ => None,
        };
        let element = format!("{word}[{index}]");
        let load = match storage {
            HalfStorage::Native => format!("{}({element})", h.wide),
            HalfStorage::Packed => format!("half_load_{word}(u32({index}))"),
        };
        let Some((op, rhs_at)) = op else {
            out.push_str(&format!("{load}{member}"));
            k = after;
            continue;
        };
        let end = statement_end(bytes, rhs_at)?;
        let rhs = rewrite(&src[rhs_at..end], held, storage)?;
        let value =
            if op.is_empty() { rhs.trim().to_string() } else { format!("{load}{member} {op} ({})", rhs.trim()) };
        match storage {
            HalfStorage::Native => {
                let half_ty = if member.is_empty() { h.half } else { "f16" };
                out.push_str(&format!("{element}{member} = {half_ty}({value})"));
            }
            // A packed element is stored whole: a member store would need its neighbours.
            HalfStorage::Packed if !member.is_empty() => return None,
            HalfStorage::Packed => out.push_str(&format!("half_store_{word}(u32({index}), {value})")),
        }
        k = end;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "@group(1) @binding(0) var<storage, read_write> a: array<f32>;\n\
                       @group(1) @binding(1) var<storage, read> d: array<vec4<f32>>;\n\
                       @group(1) @binding(2) var<storage, read_write> b: array<f32>;\n\
                       @group(1) @binding(3) var<storage, read> c: array<f32>;\n\
                       fn f(i: u32) {\n    a[i] = a[i + 1u] * 2.0; // a[i] in a comment: é\n    \
                       a[u32(b[i])] += d[i].x;\n    let ok = a[i] == c[i]; // ü\n    bb[i] = 0.0;\n}\n";

    #[test]
    fn reads_widen_and_writes_narrow() {
        let out = with_half(SRC, &[0, 1], HalfStorage::Native).expect("rewritten");
        assert!(out.starts_with("enable f16;\n"));
        assert!(out.contains("var<storage, read_write> a: array<f16>;"), "{out}");
        assert!(out.contains("var<storage, read> d: array<vec4<f16>>;"), "{out}");
        assert!(out.contains("var<storage, read_write> b: array<f32>;"), "{out}");
        assert!(out.contains("a[i] = f16(f32(a[i + 1u]) * 2.0); // a[i] in a comment: é"), "{out}");
        assert!(out.contains("a[u32(b[i])] = f16(f32(a[u32(b[i])]) + (vec4<f32>(d[i]).x));"), "{out}");
        assert!(out.contains("let ok = f32(a[i]) == c[i]; // ü"), "{out}");
        assert!(out.contains("bb[i] = 0.0;"), "{out}");
        assert_eq!(with_half(SRC, &[7], HalfStorage::Native), None);
        assert_eq!(with_half(SRC, &[], HalfStorage::Packed).as_deref(), Some(SRC));
        assert_eq!(half_variant(SRC, 0b11, HalfStorage::Native), Some(out));
    }

    #[test]
    fn packed_halves_go_through_helpers_and_written_scalars_are_atomic() {
        let out = with_half(SRC, &[0, 1, 3], HalfStorage::Packed).expect("rewritten");
        assert!(!out.contains("enable f16"), "{out}");
        assert!(out.contains("var<storage, read_write> a: array<atomic<u32>>;"), "{out}");
        assert!(out.contains("var<storage, read> d: array<vec2<u32>>;"), "{out}");
        assert!(out.contains("var<storage, read> c: array<u32>;"), "{out}");
        assert!(out.contains("half_store_a(u32(i), half_load_a(u32(i + 1u)) * 2.0);"), "{out}");
        assert!(
            out.contains("half_store_a(u32(u32(b[i])), half_load_a(u32(u32(b[i]))) + (half_load_d(u32(i)).x));"),
            "{out}"
        );
        assert!(out.contains("let ok = half_load_a(u32(i)) == half_load_c(u32(i));"), "{out}");
        assert!(
            out.contains("fn half_store_a(half_i: u32, half_v: f32)") && out.contains("atomicXor(&a[half_i >> 1u]"),
            "{out}"
        );
        assert!(out.contains("fn half_load_d(half_i: u32) -> vec4<f32>") && !out.contains("fn half_store_d"), "{out}");
        assert!(out.contains("fn half_load_c(half_i: u32) -> f32") && !out.contains("fn half_store_c"), "{out}");
        let member = "@group(1) @binding(0) var<storage, read_write> e: array<vec4<f32>>;\nfn g() { e[0].x = 1.0; }\n";
        assert_eq!(with_half(member, &[0], HalfStorage::Packed), None);
        assert!(with_half(member, &[0], HalfStorage::Native).is_some());
    }

    #[test]
    fn the_layout_is_named_packed_or_native() {
        assert_eq!(HalfStorage::parse(" Packed "), Some(HalfStorage::Packed));
        assert_eq!(HalfStorage::parse("native"), Some(HalfStorage::Native));
        assert_eq!(HalfStorage::parse("halves"), None);
    }
}
