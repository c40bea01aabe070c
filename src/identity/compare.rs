//! Entry comparison: a registered entry against the declared one, key by key, each difference
//! one problem with its evidence (values redacted: a secret is never shown).

use serde_json::{Map, Value};

use crate::entry::normalized;
use crate::entry::secrets::{shown_args, shown_url, shown_value};
use crate::identity::url::UrlParts;

/// Compare a registered entry with the declared one, key by key; one problem each, with its
/// evidence (values shown redacted). Both are in the same form: raw, or as the flat document
/// records them ([`Entry::flat`]).
pub(crate) fn compare(
    declared: &Map<String, Value>,
    registered: &Map<String, Value>,
) -> Vec<String> {
    let want = normalized(declared);
    let got = normalized(registered);
    let kind = |m: &Map<String, Value>| {
        m.get("type")
            .and_then(Value::as_str)
            .unwrap_or("stdio")
            .to_string()
    };
    let (want_kind, got_kind) = (kind(&want), kind(&got));
    let mut problems = Vec::new();
    if want_kind != got_kind {
        problems.push(format!(
            "registered as a {got_kind} server, but declared as a {want_kind} server"
        ));
    }
    let mut keys: Vec<&String> = got.keys().collect();
    keys.extend(want.keys().filter(|k| !got.contains_key(*k)));
    for key in keys {
        let (w, g) = (want.get(key), got.get(key));
        if w == g || key == "type" {
            continue;
        }
        let problem = match key.as_str() {
            "command" => format!(
                "command {} is not the declared command {}",
                text(g),
                text(w)
            ),
            "args" => format!(
                "args {} differ from the declared {}",
                args_json(g),
                args_json(w)
            ),
            "env" | "headers" => {
                problems.extend(compare_map(key, w, g));
                continue;
            }
            "url" => compare_url(&text(w), &text(g)),
            "headersHelper" => match (w, g) {
                (None, _) => format!(
                    "headersHelper {} is not declared: it is a program the client runs",
                    text(g)
                ),
                (_, None) => format!("headersHelper {} is declared but missing", text(w)),
                _ => format!("headersHelper {} is not the declared {}", text(g), text(w)),
            },
            "oauth" => match (w, g) {
                (None, _) => "oauth settings are not declared".to_string(),
                (_, None) => "the declared oauth settings are missing".to_string(),
                _ => "oauth settings differ from the declared ones".to_string(),
            },
            _ if g.is_none() => format!("key {key:?} is declared but missing"),
            _ => format!("unknown key {key}: mcp-deploy cannot vouch for it"),
        };
        problems.push(problem);
    }
    problems
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "(none)".into(),
    }
}

fn args_json(v: Option<&Value>) -> String {
    let args: Vec<String> = v
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default();
    serde_json::to_string(&shown_args(&args)).expect("strings serialize")
}

/// `env` or `headers`: every name must be declared, with the declared value or reference.
fn compare_map(key: &str, want: Option<&Value>, got: Option<&Value>) -> Vec<String> {
    let empty = Map::new();
    let want = want.and_then(Value::as_object).unwrap_or(&empty);
    let got = got.and_then(Value::as_object).unwrap_or(&empty);
    let label = if key == "env" { "env" } else { "header" };
    let shown = |v: &Value| shown_value(v.as_str().unwrap_or_default());
    let mut problems = Vec::new();
    for (name, g) in got {
        match want.get(name) {
            None => problems.push(format!("{label} {name}={} is not declared", shown(g))),
            Some(w) if w != g => problems.push(format!(
                "{label} {name} is {}, but declared as {}",
                shown(g),
                shown(w)
            )),
            Some(_) => {}
        }
    }
    for name in want.keys().filter(|n| !got.contains_key(*n)) {
        problems.push(format!("{label} {name} is declared but missing"));
    }
    problems
}

/// The whole URL must be the declared one; the evidence names the parts that differ.
fn compare_url(want: &str, got: &str) -> String {
    let (w, g) = (UrlParts::split(want), UrlParts::split(got));
    let mut parts = Vec::new();
    for (part, differs) in [
        ("scheme", w.scheme != g.scheme),
        (
            "authority (credentials, host or port)",
            w.authority != g.authority,
        ),
        ("path", w.path != g.path),
        ("query", w.query != g.query),
        ("fragment", w.fragment != g.fragment),
    ] {
        if differs {
            parts.push(part);
        }
    }
    format!(
        "url {} is not the declared {} (it differs in its {})",
        shown_url(got),
        shown_url(want),
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_compare_whole_and_name_the_differing_part() {
        let d = |w: &str, g: &str| compare_url(w, g);
        assert!(d("http://gw/mcp", "http://gw/mcp?x=1").contains("in its query"));
        assert!(d("http://gw/mcp", "http://gw/mcp#f").contains("in its fragment"));
        assert!(d("http://gw/mcp", "http://gw./mcp").contains("authority"));
        assert!(d("http://gw/mcp", "http://gw:80/mcp").contains("authority"));
        assert!(d("http://gw/mcp", "https://gw/mcp").contains("scheme"));
        assert!(d("http://gw/mcp", "http://gw/mcp/").contains("path"));
        let shown = d("http://gw/mcp?k=${K}", "http://u:pw@gw/mcp?k=s3cr3t");
        assert!(
            !shown.contains("s3cr3t") && !shown.contains("pw"),
            "{shown}"
        );
    }

    #[test]
    fn every_key_is_accounted_for() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let declared = m(serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${T}"}}));
        // What claude adds on its own is no difference.
        let same = m(
            serde_json::json!({"type": "stdio", "command": "/x", "args": ["a"], "env": {"T": "${T}"}}),
        );
        assert!(compare(&declared, &same).is_empty());
        for (registered, want) in [
            (
                serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${T}", "NODE_OPTIONS": "--require /e.js"}}),
                "env NODE_OPTIONS=<redacted> is not declared",
            ),
            (
                serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${U}"}}),
                "env T is ${U}, but declared as ${T}",
            ),
            (
                serde_json::json!({"command": "/x", "args": ["a"]}),
                "env T is declared but missing",
            ),
            (
                serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${T}"}, "cwd": "/tmp"}),
                "unknown key cwd",
            ),
            (
                serde_json::json!({"command": "/y", "args": ["a"], "env": {"T": "${T}"}}),
                "not the declared command /x",
            ),
            (
                serde_json::json!({"type": "http", "url": "http://h/", "env": {"T": "${T}"}, "args": ["a"]}),
                "declared as a stdio server",
            ),
        ] {
            let problems = compare(&declared, &m(registered.clone())).join("; ");
            assert!(problems.contains(want), "{registered}: {problems}");
            assert!(!problems.contains("/e.js"), "{problems}");
        }
    }
}
