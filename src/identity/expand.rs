//! References in an entry, expanded as Claude Code expands them when it starts a server
//! (found in its 2.1.332 CLI): the handshake starts the server the same way, and the claude
//! client uses the same rules to read what older releases print for `mcp get`.

/// Expand `${VAR}` and `${VAR:-default}` in `text` the way Claude Code does for a stdio
/// entry's command, args and env values (and a remote one's url and headers):
/// - a reference is `${` NAME [`:-` DEFAULT] `}`, NAME `[A-Za-z_][A-Za-z0-9_]*`, DEFAULT any
///   text without `}`; `$VAR` and `${1X}` are left as written;
/// - a variable that is set, even to the empty string, gives its value (unlike the shell's
///   `:-`, an empty value does not select the default);
/// - an unset variable gives DEFAULT when there is one (`${X:-}` gives ""), else the reference
///   stays as written (`${UNSET}` reaches the server literally).
///
/// `lookup` reads a variable of the environment claude runs in.
pub(crate) fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            // Not a reference: keep "${" and look again just after it.
            out.push_str("${");
            rest = after;
            continue;
        }
        match (lookup(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(d)) => out.push_str(d),
            (None, None) => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_follows_claudes_rules() {
        let env = |name: &str| match name {
            "SET" => Some("val".to_string()),
            "EMPTY" => Some(String::new()),
            "lower" => Some("lo".to_string()),
            _ => None,
        };
        for (text, want) in [
            ("${SET}", "val"),
            ("${SET:-d}", "val"),
            ("${EMPTY:-d}", ""),
            ("${UNSET:-d}", "d"),
            ("${UNSET}", "${UNSET}"),
            ("${UNSET:-}", ""),
            ("pre-${SET}-post", "pre-val-post"),
            ("$SET", "$SET"),
            ("${SET:-a}b}", "valb}"),
            ("${lower}", "lo"),
            ("${1X}", "${1X}"),
            ("${SET", "${SET"),
            ("${${SET}}", "${val}"),
        ] {
            assert_eq!(expand(text, &env), want, "{text}");
        }
    }
}
