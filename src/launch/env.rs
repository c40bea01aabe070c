//! The environment a checked launch gives the server: the declared variables, the inherited
//! ones of a documented allowlist ([`INHERITED`], and `LC_*`, `XDG_*`), and those the
//! declaration lists as inherited (`inherit_env`). Everything else the client passes —
//! `NODE_OPTIONS`, `LD_PRELOAD`, `PYTHONPATH`, a layer's variable no reader foresaw — is
//! dropped, and its name (never its value) said on stderr.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

/// The inherited variables every server gets: where it runs and for whom, its locale and
/// terminal, its temporary directory.
pub(crate) const INHERITED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TMPDIR",
];

/// Whether `name` is inherited without being declared.
pub(crate) fn allowed(name: &str, inherit: &[String]) -> bool {
    INHERITED.contains(&name)
        || name.starts_with("LC_")
        || name.starts_with("XDG_")
        || inherit.iter().any(|n| n == name)
}

/// The server's environment from the one the launcher was given (`given`), the declared
/// variables (`declared`, values as declared with `${VAR}` taken from `given`, as clients
/// expand them) and the declaration's `inherit`: the pairs, and the names dropped (sorted).
pub(crate) fn build(
    given: impl IntoIterator<Item = (OsString, OsString)>,
    declared: &serde_json::Map<String, serde_json::Value>,
    inherit: &[String],
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let given: Vec<(OsString, OsString)> = given.into_iter().collect();
    let lookup = |name: &str| {
        given
            .iter()
            .find(|(k, _)| k.as_bytes() == name.as_bytes())
            .and_then(|(_, v)| v.to_str().map(str::to_string))
    };
    let mut out = Vec::new();
    let mut dropped = Vec::new();
    for (k, v) in &given {
        let name = k.to_string_lossy();
        if declared.contains_key(name.as_ref()) {
            continue;
        }
        match k.to_str() {
            Some(n) if allowed(n, inherit) => out.push((k.clone(), v.clone())),
            _ => dropped.push(name.into_owned()),
        }
    }
    for (k, v) in declared {
        let value = crate::identity::expand::expand(v.as_str().unwrap_or_default(), &lookup);
        out.push((OsString::from(k), OsString::from(value)));
    }
    dropped.sort();
    dropped.dedup();
    (out, dropped)
}

/// `KEY=VALUE` as the kernel takes it.
pub(crate) fn pair(k: &OsStr, v: &OsStr) -> Vec<u8> {
    let mut b = k.as_bytes().to_vec();
    b.push(b'=');
    b.extend_from_slice(v.as_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_declared_allowlisted_and_inherited_variables_pass() {
        let given = [
            ("PATH", "/usr/bin"),
            ("NODE_OPTIONS", "--require /tmp/evil.js"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("LC_ALL", "C"),
            ("XDG_RUNTIME_DIR", "/run/user/1"),
            ("TOKEN", "from-the-client"),
            ("KEEP", "k"),
            ("HOME", "/home/u"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let declared = json!({"TOKEN": "declared", "WHERE": "${HOME}/x"});
        let (env, dropped) = build(given, declared.as_object().unwrap(), &["KEEP".into()]);
        let get = |n: &str| {
            env.iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(dropped, ["LD_PRELOAD", "NODE_OPTIONS"]);
        assert_eq!(get("TOKEN").as_deref(), Some("declared"));
        assert_eq!(get("WHERE").as_deref(), Some("/home/u/x"));
        for kept in ["PATH", "LC_ALL", "XDG_RUNTIME_DIR", "KEEP", "HOME"] {
            assert!(get(kept).is_some(), "{kept}");
        }
        assert_eq!(env.iter().filter(|(k, _)| k == "TOKEN").count(), 1);
    }
}
