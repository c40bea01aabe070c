//! Secret hygiene. A registration tells an agent which program to run; it must not also carry
//! a credential in clear. An env value, header value or argument holds a *literal secret* when
//! its name says it is one (token, secret, key, password, authorization, credential...) or its
//! value looks like one (a known token prefix, a JWT, a private key, a bearer credential, a long
//! random-looking string), unless it is a *reference* the client resolves at run time: `${VAR}`
//! (optionally after a scheme word: `Bearer ${TOKEN}`).
//!
//! Findings name where the secret is (`env API_TOKEN`, `header Authorization`, `arg 3`), never
//! its value, so that they can be printed, logged and journalled.
//!
//! Everything mcp-deploy shows goes through the one redaction of this module: structured
//! values through [`shown_args`] and [`shown_value`], free text (a client's stderr, a server's
//! answer) through [`redact`] with the values that must not appear ([`secret_values`]). Each
//! puts [`REDACTED`] where a value was.

use serde_json::{Map, Value};

use super::Entry;

/// What a value that must not be shown is replaced by.
pub(crate) const REDACTED: &str = "<redacted>";

/// Values shorter than this are not replaced in free text: replacing "1" would garble every
/// message, and a value that short is no secret.
const MIN_REDACT: usize = 4;

/// Where in `entry` a literal secret sits, one description each; empty when there is none.
pub(crate) fn literal_secrets(entry: &Entry) -> Vec<String> {
    let mut found = Vec::new();
    for (field, label) in [("env", "env"), ("headers", "header")] {
        if let Some(map) = entry.raw.get(field).and_then(Value::as_object) {
            for (k, v) in map {
                let v = v.as_str().unwrap_or_default();
                let literal = !v.is_empty()
                    && !is_reference(v)
                    && (names_a_secret(k) || looks_like_secret(v));
                if literal || secret_default(v, names_a_secret(k)) {
                    found.push(format!("{label} {k}"));
                }
            }
        }
    }
    if let Some(args) = entry.raw.get("args").and_then(Value::as_array) {
        let args: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
        for i in secret_args(&args) {
            found.push(format!(
                "arg {} (after {:?})",
                i + 1,
                i.checked_sub(1).map_or("", |p| args[p])
            ));
        }
    }
    if let Some(url) = entry.raw.get("url").and_then(Value::as_str) {
        if secret_default(url, false) {
            found.push("url (a ${VAR:-…} default)".to_string());
        }
        // ?api_key=VALUE: a credential in the query string, in clear.
        let query = url
            .split_once('?')
            .map(|(_, q)| q.split('#').next().unwrap_or(q));
        for pair in query.unwrap_or_default().split('&') {
            if let Some((k, v)) = pair.split_once('=') {
                if !v.is_empty() && !is_reference(v) && (names_a_secret(k) || looks_like_secret(v))
                {
                    found.push(format!("url query parameter {k}"));
                }
            } else if looks_like_secret(pair) {
                found.push("url query".to_string());
            }
        }
        // https://user:PASSWORD@host, and a token as a path segment (/api/mcp/s/<token>/mcp).
        let (userinfo, path) = url_userinfo_and_path(url);
        if userinfo.is_some_and(|u| !is_reference(u) && (u.contains(':') || looks_like_secret(u))) {
            found.push("url credentials".to_string());
        }
        if path.split('/').any(looks_like_secret) {
            found.push("url path".to_string());
        }
    }
    found
}

/// Every `${NAME:-DEFAULT}` in `value`, as `(NAME, DEFAULT)`.
fn reference_defaults(value: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        if let Some((name, default)) = after[..end].split_once(":-") {
            out.push((name, default));
        }
        rest = &after[end + 1..];
    }
    out
}

/// The indexes of `args` that hold a literal secret (`--api-key VALUE`, `--token=VALUE`, a
/// value that looks like a credential).
fn secret_args(args: &[&str]) -> Vec<usize> {
    let mut found = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let flagged = match arg.split_once('=') {
            // --api-key=VALUE
            Some((flag, value)) if flag.starts_with('-') => {
                !value.is_empty()
                    && !is_reference(value)
                    && (names_a_secret(flag) || looks_like_secret(value))
            }
            _ => {
                // --api-key VALUE: the value is the next argument.
                let after_secret_flag = i > 0
                    && args[i - 1].starts_with('-')
                    && !args[i - 1].contains('=')
                    && names_a_secret(args[i - 1]);
                !arg.starts_with('-')
                    && !is_reference(arg)
                    && (after_secret_flag || looks_like_secret(arg))
            }
        };
        // A `${VAR:-default}` anywhere in the argument: the default is used as is when VAR
        // is unset, so a secret-looking one (or any, after a secret flag) is literal.
        let flag_names_secret = match arg.split_once('=') {
            Some((flag, _)) if flag.starts_with('-') => names_a_secret(flag),
            _ => i > 0 && args[i - 1].starts_with('-') && names_a_secret(args[i - 1]),
        };
        if flagged || secret_default(arg, flag_names_secret) {
            found.push(i);
        }
    }
    found
}

/// `args` as they may be shown: an argument holding a literal secret is [`REDACTED`]
/// (`--token=<redacted>` keeps its flag).
pub(crate) fn shown_args(args: &[String]) -> Vec<String> {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let secret = secret_args(&refs);
    args.iter()
        .enumerate()
        .map(|(i, a)| match a.split_once('=') {
            _ if !secret.contains(&i) => a.clone(),
            Some((flag, _)) if flag.starts_with('-') => format!("{flag}={REDACTED}"),
            _ => REDACTED.to_string(),
        })
        .collect()
}

/// An env or header value as it may be shown: a `${VAR}` reference as it is, anything else
/// [`REDACTED`] (an env or header value may be a secret whatever its name).
pub(crate) fn shown_value(value: &str) -> String {
    if value.is_empty() || is_reference(value) {
        hide_defaults(value)
    } else {
        REDACTED.to_string()
    }
}

/// `value` with the default of every `${VAR:-default}` [`REDACTED`]: a reference is shown, but
/// its default is used as is when VAR is unset, and may be a credential in clear.
pub(crate) fn hide_defaults(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        out.push_str(&rest[..start + 2]);
        match after[..end].split_once(":-") {
            Some((name, default)) if !default.is_empty() => {
                out.push_str(&format!("{name}:-{REDACTED}"));
            }
            _ => out.push_str(&after[..end]),
        }
        out.push('}');
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// An env or header value as the flat document records it: a reference as it is, anything
/// else as `<sha256:HEX>` of its bytes, so that a changed value is still seen without the
/// value being written down.
pub(crate) fn recorded_value(value: &str) -> String {
    use sha2::Digest;
    if value.is_empty() || is_reference(value) || is_recorded_digest(value) {
        return value.to_string();
    }
    let hex = format!("{:x}", sha2::Sha256::digest(value.as_bytes()));
    format!("<sha256:{hex}>")
}

fn is_recorded_digest(value: &str) -> bool {
    value
        .strip_prefix("<sha256:")
        .and_then(|r| r.strip_suffix('>'))
        .is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Every value of `raw` (an entry) that must not appear in what is shown: env and header
/// values that are not references, arguments that hold a literal secret, and every string
/// under a key mcp-deploy does not know. For [`redact`].
pub(crate) fn secret_values(raw: &Map<String, Value>) -> Vec<String> {
    fn leaves(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
            Value::Object(o) => o.values().for_each(|x| leaves(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (k, v) in raw {
        match k.as_str() {
            "command" | "type" | "url" | "headersHelper" => {}
            "args" => {
                let args: Vec<&str> = v
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for i in secret_args(&args) {
                    let a = args[i];
                    out.push(match a.split_once('=') {
                        Some((flag, value)) if flag.starts_with('-') => value.to_string(),
                        _ => a.to_string(),
                    });
                }
            }
            _ => {
                let mut all = Vec::new();
                leaves(v, &mut all);
                out.extend(all.into_iter().filter(|s| !is_reference(s)));
            }
        }
    }
    out
}

/// Whether `value` holds a `${VAR:-default}` whose default is a literal secret: non-empty and
/// either the place says it is a credential (`secret_place`), the variable's name does, or
/// the default looks like one. `${VAR:-}` and `${LOG_LEVEL:-info}` are fine.
pub(crate) fn secret_default(value: &str, secret_place: bool) -> bool {
    reference_defaults(value)
        .into_iter()
        .any(|(name, default)| {
            !default.is_empty()
                && (secret_place || names_a_secret(name) || looks_like_secret(default))
        })
}

/// The userinfo (before `@` in the authority) and the path of `url`, as written.
fn url_userinfo_and_path(url: &str) -> (Option<&str>, &str) {
    let rest = url.split(['?', '#']).next().unwrap_or(url);
    let Some((_, after)) = rest.split_once("://") else {
        return (None, rest);
    };
    let end = after.find('/').unwrap_or(after.len());
    let (authority, path) = after.split_at(end);
    (authority.rsplit_once('@').map(|(u, _)| u), path)
}

/// A URL as it may be shown: credentials before the host, query values and the fragment
/// [`REDACTED`] unless they are `${VAR}` references (a token is often passed in the query).
pub(crate) fn shown_url(url: &str) -> String {
    let (rest, fragment) = match url.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (url, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let mut out = match rest.split_once("://") {
        Some((scheme, after)) => {
            let end = after.find('/').unwrap_or(after.len());
            let (authority, path) = after.split_at(end);
            // A path segment that looks like a credential is hidden like a query value.
            let path: Vec<String> = path
                .split('/')
                .map(|seg| {
                    if looks_like_secret(seg) && !is_reference(seg) {
                        REDACTED.to_string()
                    } else {
                        seg.to_string()
                    }
                })
                .collect();
            let path = path.join("/");
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://{REDACTED}@{host}{path}"),
                None => format!("{scheme}://{authority}{path}"),
            }
        }
        None => rest.to_string(),
    };
    let hide = |v: &str| {
        if v.is_empty() || is_reference(v) {
            hide_defaults(v)
        } else {
            REDACTED.to_string()
        }
    };
    if let Some(q) = query {
        let pairs: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) => format!("{k}={}", hide(v)),
                None if looks_like_secret(pair) => REDACTED.to_string(),
                None => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&hide(f));
    }
    out
}

/// `text` with every one of `values` replaced by [`REDACTED`], longest first so that a value
/// containing another is replaced whole. Values shorter than four characters are left: they
/// are no secret, and replacing them would garble the text.
pub(crate) fn redact<S: AsRef<str>>(text: &str, values: &[S]) -> String {
    replace_values(text, values, |_| REDACTED.to_string())
}

/// [`redact`], each value replaced by its [`recorded_value`] (`<sha256:HEX>`) instead: what is
/// recorded (a server's tool surface) then changes when the value does, and never holds it.
pub(crate) fn redact_as_recorded<S: AsRef<str>>(text: &str, values: &[S]) -> String {
    replace_values(text, values, recorded_value)
}

fn replace_values<S: AsRef<str>>(
    text: &str,
    values: &[S],
    with: impl Fn(&str) -> String,
) -> String {
    let mut values: Vec<&str> = values
        .iter()
        .map(AsRef::as_ref)
        .filter(|s| s.len() >= MIN_REDACT)
        .collect();
    values.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for v in values {
        out = out.replace(v, &with(v));
    }
    out
}

/// `${VAR}`, `${VAR:-default}`, or a scheme word before one: the client fills it in at run
/// time, so the registration holds no secret.
pub(crate) fn is_reference(value: &str) -> bool {
    let mut rest = value.trim();
    for scheme in ["Bearer ", "Basic ", "Token ", "token "] {
        if let Some(r) = rest.strip_prefix(scheme) {
            rest = r.trim_start();
        }
    }
    let Some(inner) = rest.strip_prefix("${").and_then(|r| r.strip_suffix('}')) else {
        return false;
    };
    let name = inner.split(":-").next().unwrap_or_default();
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !inner.contains('}')
}

/// Whether a key or flag name says its value is a credential.
pub(crate) fn names_a_secret(name: &str) -> bool {
    // camelCase words are words too: privateKey -> private_key.
    let mut split = String::new();
    let mut prev_lower = false;
    for c in name.trim_start_matches('-').chars() {
        if c.is_ascii_uppercase() && prev_lower {
            split.push('_');
        }
        prev_lower = c.is_ascii_lowercase();
        split.push(c.to_ascii_lowercase());
    }
    let lower = split;
    const WORDS: &[&str] = &[
        "token",
        "tokens",
        "secret",
        "secrets",
        "key",
        "keys",
        "apikey",
        "password",
        "passwd",
        "passphrase",
        "authorization",
        "auth",
        "credential",
        "credentials",
        "bearer",
        "cookie",
    ];
    const INSIDE: &[&str] = &[
        "token",
        "secret",
        "password",
        "apikey",
        "authorization",
        "credential",
    ];
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|seg| WORDS.contains(&seg))
        || INSIDE.iter().any(|w| lower.contains(w))
}

/// Whether a value looks like a credential whatever its name.
pub(crate) fn looks_like_secret(value: &str) -> bool {
    let v = value.trim();
    const PREFIXES: &[&str] = &[
        "sk-",
        "sk_live_",
        "sk_test_",
        "rk_live_",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "xapp-",
        "npm_",
        "AIza",
        "ya29.",
        "-----BEGIN",
    ];
    if PREFIXES.iter().any(|p| v.starts_with(p)) {
        return true;
    }
    if v.len() == 20 && v.starts_with("AKIA") && v.chars().all(|c| c.is_ascii_alphanumeric()) {
        return true;
    }
    for scheme in ["Bearer ", "Basic "] {
        if let Some(cred) = v.strip_prefix(scheme) {
            return !cred.trim().is_empty();
        }
    }
    // A JWT: three base64url parts, the first a JSON header.
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() == 3 && v.starts_with("eyJ") && parts.iter().all(|p| p.len() >= 4) {
        return true;
    }
    // A long random-looking string: all token characters, upper, lower and digits mixed. (A
    // commit sha is lowercase hex and does not count.)
    v.len() >= 32
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=_-".contains(c))
        && v.chars().any(|c| c.is_ascii_uppercase())
        && v.chars().any(|c| c.is_ascii_lowercase())
        && v.chars().any(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_references_default_is_never_shown() {
        assert_eq!(shown_value("${T}"), "${T}");
        assert_eq!(shown_value("${T:-}"), "${T:-}");
        assert_eq!(shown_value("${T:-ghp_sekrit}"), "${T:-<redacted>}");
        assert_eq!(
            shown_value("Bearer ${T:-sekrit-token}"),
            "Bearer ${T:-<redacted>}"
        );
        assert_eq!(
            hide_defaults("a ${X:-1} b ${Y} c"),
            "a ${X:-<redacted>} b ${Y} c"
        );
        assert_eq!(hide_defaults("unclosed ${X:-v"), "unclosed ${X:-v");
        assert!(!shown_url("http://h/mcp?k=${K:-sekrit}").contains("sekrit"));
        let args: Vec<String> = ["--token=${T:-abc}".to_string()].to_vec();
        assert!(!shown_args(&args)[0].contains("abc"));
    }
    use serde_json::json;

    fn found(v: Value) -> Vec<String> {
        literal_secrets(&Entry::from_value(&v).unwrap())
    }

    #[test]
    fn references_are_not_secrets() {
        for r in [
            "${TOKEN}",
            "${API_KEY:-}",
            "Bearer ${GATEWAY_TOKEN}",
            " ${X} ",
        ] {
            assert!(is_reference(r), "{r}");
        }
        for r in [
            "$TOKEN",
            "${}",
            "${1X}",
            "${A}${B}",
            "pre${A}",
            "Bearer abc",
        ] {
            assert!(!is_reference(r), "{r}");
        }
    }

    #[test]
    fn env_and_headers_by_name_and_by_value() {
        let v = json!({"command": "/x", "env": {
            "API_TOKEN": "plain", "GITHUB_PAT": "ghp_abcdefghijklmnop", "LOG_LEVEL": "debug",
            "DB_PASSWORD": "${DB_PASSWORD}", "EMPTY_SECRET": "", "HOME_DIR": "/home/x",
            "COMMIT": "0123456789abcdef0123456789abcdef01234567"
        }});
        assert_eq!(found(v), ["env API_TOKEN", "env GITHUB_PAT"]);
        let h = json!({"type": "http", "url": "http://h/mcp", "headers": {
            "Authorization": "Bearer abc", "X-Trace": "on"}});
        assert_eq!(found(h), ["header Authorization"]);
        let ok = json!({"type": "http", "url": "http://h/mcp", "headers": {
            "Authorization": "Bearer ${GATEWAY_TOKEN}"}});
        assert!(found(ok).is_empty());
    }

    #[test]
    fn args_with_secret_flags_or_secret_looking_values() {
        let v = json!({"command": "/x", "args": [
            "mcp", "serve", "--api-key", "abc", "--token=xyz", "--verbose",
            "--password", "${PW}", "sk-live-1234567890"
        ]});
        assert_eq!(
            found(v),
            [
                "arg 4 (after \"--api-key\")",
                "arg 5 (after \"abc\")",
                "arg 9 (after \"${PW}\")"
            ]
        );
        assert!(found(json!({"command": "/x", "args": ["mcp", "serve"]})).is_empty());
    }

    #[test]
    fn shown_forms_hide_values_but_keep_references_and_flags() {
        let args: Vec<String> = [
            "mcp",
            "--token=xyz",
            "--api-key",
            "abc",
            "${A}",
            "sk-live-12",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            shown_args(&args),
            [
                "mcp",
                "--token=<redacted>",
                "--api-key",
                "<redacted>",
                "${A}",
                "<redacted>"
            ]
        );
        assert_eq!(shown_value("${TOKEN}"), "${TOKEN}");
        assert_eq!(
            shown_url("https://u:p@h:1/m?a=1&b=${B}&c#frag"),
            "https://<redacted>@h:1/m?a=<redacted>&b=${B}&c#<redacted>"
        );
        assert_eq!(shown_url("http://h/mcp"), "http://h/mcp");
        assert_eq!(shown_value("--require /x.js"), "<redacted>");
        assert_eq!(recorded_value("${T}"), "${T}");
        let d = recorded_value("debug");
        assert!(d.starts_with("<sha256:") && !d.contains("debug"), "{d}");
        assert_eq!(recorded_value(&d), d);
    }

    #[test]
    fn redaction_is_longest_first_and_spares_short_values() {
        assert_eq!(
            redact(
                "bad value hunter2 and hunter, 1",
                &["hunter", "hunter2", "", "1"]
            ),
            "bad value <redacted> and <redacted>, 1"
        );
        let raw = json!({"command": "/x", "args": ["--token=xyz123", "ok"], "env": {"A": "v1v1",
            "B": "${B}"}, "odd": ["s3s3"]});
        assert_eq!(
            secret_values(raw.as_object().unwrap()),
            ["xyz123", "v1v1", "s3s3"]
        );
    }

    #[test]
    fn value_heuristics() {
        assert!(looks_like_secret(
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig123"
        ));
        assert!(looks_like_secret("AKIAIOSFODNN7EXAMPLE"));
        assert!(looks_like_secret("-----BEGIN OPENSSH PRIVATE KEY-----"));
        assert!(looks_like_secret("Zx9Qv3Lm8Tr2Wk5Yp7Hn4Bc6Df1Gj0Ks"));
        assert!(!looks_like_secret(
            "0123456789abcdef0123456789abcdef01234567"
        ));
        assert!(!looks_like_secret(
            "/opt/codetools/releases/abc/bin/codetools"
        ));
        assert!(!looks_like_secret("mcp"));
    }

    #[test]
    fn secret_names() {
        for n in [
            "API_TOKEN",
            "api-key",
            "--api-key",
            "DB_PASSWORD",
            "Authorization",
            "x_secret",
            "GITHUB_TOKEN",
            "privateKey",
        ] {
            assert!(names_a_secret(n), "{n}");
        }
        // PWD is the working directory, SESSION_DIR a place: not credentials.
        for n in [
            "LOG_LEVEL",
            "PATH",
            "--verbose",
            "HOME",
            "MONKEY_MODE",
            "PWD",
            "SESSION_DIR",
        ] {
            assert!(!names_a_secret(n), "{n}");
        }
    }

    #[test]
    fn a_reference_default_that_is_a_secret_is_a_literal_secret() {
        let v = json!({"command": "/x", "env": {
            "API_TOKEN": "${API_TOKEN:-hunter2}", "LOG_LEVEL": "${LOG_LEVEL:-info}",
            "EMPTY": "${API_KEY:-}", "GH": "${GH:-ghp_abcdefghijklmnop}",
            "PLAIN": "${SECRET_THING:-x}"
        }});
        assert_eq!(found(v), ["env API_TOKEN", "env GH", "env PLAIN"]);
        let h = json!({"type": "http", "url": "http://h/mcp", "headers": {
            "Authorization": "Bearer ${TOKEN:-abc}", "X-Trace": "${TRACE:-on}"}});
        assert_eq!(found(h), ["header Authorization"]);
        let a = json!({"command": "/x", "args": [
            "--token", "${T:-abc}", "--level=${L:-debug}", "--key=${K:-v}", "${X:-sk-live-1234}"
        ]});
        assert_eq!(
            found(a),
            [
                "arg 2 (after \"--token\")",
                "arg 4 (after \"--level=${L:-debug}\")",
                "arg 5 (after \"--key=${K:-v}\")"
            ]
        );
        let u = json!({"type": "http", "url": "https://h/mcp?k=${API_KEY:-abc123}&x=1"});
        assert_eq!(found(u), ["url (a ${VAR:-…} default)"]);
        let q = json!({"type": "http", "url": "https://h/mcp?api_key=abc&page=2&t=${T}"});
        assert_eq!(found(q), ["url query parameter api_key"]);
        assert!(found(json!({"type": "http", "url": "https://h/mcp?region=${R:-eu}"})).is_empty());
    }
}
