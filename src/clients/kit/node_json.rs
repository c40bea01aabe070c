//! JSON as Node's `JSON.parse` reads it (Claude Code, Gemini CLI and the files they share
//! parse their settings with it): no nesting limit, and a lone surrogate escape kept (as
//! U+FFFD) where serde_json refuses the document.

use crate::clients::ClientError;

/// Parse JSON as Node's `JSON.parse` does, which Claude Code uses: serde_json's 128-level
/// nesting limit is lifted (serde_stacker grows the stack instead of overflowing it), and a
/// lone surrogate escape, which serde_json refuses and JSON.parse keeps, is read as U+FFFD.
/// Returns the document and how many escapes were replaced. (We only ever read this file;
/// what we compare, `mcpServers`, is refused by the caller when a replacement lands in it.)
pub(crate) fn parse_lenient<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<(T, usize), serde_json::Error> {
    if nested_deeper_than(text, MAX_DEPTH) {
        return Err(serde::de::Error::custom(format!(
            "nested deeper than {MAX_DEPTH} levels, which mcp-deploy does not read"
        )));
    }
    let fixed = replace_lone_surrogates(text);
    let text = fixed.as_ref().map_or(text, |(t, _)| t.as_str());
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = T::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok((value, fixed.map_or(0, |(_, n)| n)))
}

/// The deepest nesting read. Node's `JSON.parse` has no limit (a million levels parse), and
/// claude reads a settings file of 100 000 levels (its deny applies: attacks::layers_claude),
/// but what is read is also dropped, cloned, compared and printed, each of which recurses once
/// a level: on the main thread's 8 MiB stack, the drop of 100 000 levels aborted the run
/// (issue 35). mcp-deploy runs on a thread of 256 MiB (main.rs), which these walks fit at this
/// depth; a deeper document is refused whole, which makes it a witness that cannot be read,
/// named — never one read as empty.
pub(crate) const MAX_DEPTH: usize = 200_000;

/// Refuse the name `name` for `client`, which keeps its servers in a plain JavaScript object:
/// JSON.parse keeps a `"__proto__"` key, but in a plain object that name sets the prototype.
/// `product` is the client as the message names it, `consequence` what it then does.
pub(crate) fn refuse_proto(
    client: &'static str,
    name: &str,
    product: &str,
    consequence: &str,
) -> Result<(), ClientError> {
    if name == "__proto__" {
        return Err(ClientError::Unrepresentable {
            client,
            name: name.to_string(),
            reason: format!(
                "{product} keeps its servers in a plain JavaScript object, where \"__proto__\" \
                 is no key: {consequence}"
            ),
        });
    }
    Ok(())
}

/// Whether `text` opens more than `max` arrays or objects inside one another (outside
/// strings): one pass over the bytes, as in [`replace_lone_surrogates`].
pub(crate) fn nested_deeper_than(text: &str, max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &c in text.as_bytes() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// `text` with every `\uD800`–`\uDFFF` escape that is not half of a valid pair, inside a
/// string, rewritten to `\uFFFD`; `None` when there is none. (Multi-byte UTF-8 never holds the
/// bytes `"` or `\`, so a byte scan finds strings and escapes exactly.)
fn replace_lone_surrogates(text: &str) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let hex = |i: usize| -> Option<u16> {
        let s = text.get(i..i + 4)?;
        u16::from_str_radix(s, 16).ok()
    };
    let escape_at = |i: usize| -> Option<u16> {
        if b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
            hex(i + 2)
        } else {
            None
        }
    };
    let mut lone = Vec::new();
    let (mut i, mut in_string) = (0, false);
    while i < b.len() {
        match b[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                if let Some(u) = escape_at(i) {
                    match u {
                        0xD800..=0xDBFF => match escape_at(i + 6) {
                            Some(0xDC00..=0xDFFF) => {
                                i += 12;
                                continue;
                            }
                            _ => lone.push(i),
                        },
                        0xDC00..=0xDFFF => lone.push(i),
                        _ => {}
                    }
                    i += 6;
                    continue;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if lone.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for &at in &lone {
        out.push_str(&text[last..at]);
        out.push_str("\\ufffd");
        last = at + 6;
    }
    out.push_str(&text[last..]);
    Some((out, lone.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: 100 000 levels of `[` in an unrelated key aborted the run (the parsed
    /// document's drop overflowed the stack); past the bound it is refused, named.
    #[test]
    fn a_document_nested_past_the_bound_is_refused_not_a_stack_overflow() {
        let deep = |n: usize| format!("{{\"x\":{}1{}}}", "[".repeat(n), "]".repeat(n));
        // (A test thread's stack is not the binary's: the walks of a deep document are the
        // bounded harness's, tests/it/bounded.rs.)
        assert!(parse_lenient::<serde_json::Value>(&deep(900)).is_ok());
        let e = parse_lenient::<serde_json::Value>(&deep(MAX_DEPTH + 1)).unwrap_err();
        assert!(
            e.to_string().contains("nested deeper than 200000 levels"),
            "{e}"
        );
        // Brackets inside strings, escaped quotes included, are not nesting.
        let quoted = format!(r#"{{"x":"\"{}"}}"#, "[".repeat(20_000));
        assert!(parse_lenient::<serde_json::Value>(&quoted).is_ok());
    }
}
