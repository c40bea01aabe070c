//! JSON as Node's `JSON.parse` reads it (Claude Code, Gemini CLI and the files they share
//! parse their settings with it): no nesting limit, and a lone surrogate escape kept (as
//! U+FFFD) where serde_json refuses the document.

/// Parse JSON as Node's `JSON.parse` does, which Claude Code uses: serde_json's 128-level
/// nesting limit is lifted (serde_stacker grows the stack instead of overflowing it), and a
/// lone surrogate escape, which serde_json refuses and JSON.parse keeps, is read as U+FFFD.
/// Returns the document and how many escapes were replaced. (We only ever read this file;
/// what we compare, `mcpServers`, is refused by the caller when a replacement lands in it.)
pub(crate) fn parse_lenient<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<(T, usize), serde_json::Error> {
    let fixed = replace_lone_surrogates(text);
    let text = fixed.as_ref().map_or(text, |(t, _)| t.as_str());
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = T::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok((value, fixed.map_or(0, |(_, n)| n)))
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
