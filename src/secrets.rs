//! Secret hygiene. A registration tells an agent which program to run; it must not also carry
//! a credential in clear. An env value, header value or argument holds a *literal secret* when
//! its name says it is one (token, secret, key, password, authorization, credential...) or its
//! value looks like one (a known token prefix, a JWT, a private key, a bearer credential, a long
//! random-looking string), unless it is a *reference* the client resolves at run time: `${VAR}`
//! (optionally after a scheme word: `Bearer ${TOKEN}`).
//!
//! Findings name where the secret is (`env API_TOKEN`, `header Authorization`, `arg 3`), never
//! its value, so that they can be printed, logged and journalled.

use serde_json::Value;

use crate::entry::Entry;

/// Where in `entry` a literal secret sits, one description each; empty when there is none.
pub fn literal_secrets(entry: &Entry) -> Vec<String> {
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
            // A `${VAR:-default}` anywhere in the argument: the default is used as is when
            // VAR is unset, so a secret-looking one (or any, after a secret flag) is literal.
            let flag_names_secret = match arg.split_once('=') {
                Some((flag, _)) if flag.starts_with('-') => names_a_secret(flag),
                _ => i > 0 && args[i - 1].starts_with('-') && names_a_secret(args[i - 1]),
            };
            if flagged || secret_default(arg, flag_names_secret) {
                found.push(format!(
                    "arg {} (after {:?})",
                    i + 1,
                    i.checked_sub(1).map_or("", |p| args[p])
                ));
            }
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
            }
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

/// Whether `value` holds a `${VAR:-default}` whose default is a literal secret: non-empty and
/// either the place says it is a credential (`secret_place`), the variable's name does, or
/// the default looks like one. `${VAR:-}` and `${LOG_LEVEL:-info}` are fine.
pub fn secret_default(value: &str, secret_place: bool) -> bool {
    reference_defaults(value)
        .into_iter()
        .any(|(name, default)| {
            !default.is_empty()
                && (secret_place || names_a_secret(name) || looks_like_secret(default))
        })
}

/// `${VAR}`, `${VAR:-default}`, or a scheme word before one: the client fills it in at run
/// time, so the registration holds no secret.
pub fn is_reference(value: &str) -> bool {
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
pub fn names_a_secret(name: &str) -> bool {
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
pub fn looks_like_secret(value: &str) -> bool {
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
