//! OpenCode's entry shape and claude's, both ways: what mcp-deploy writes and how what OpenCode
//! holds is compared.

use serde_json::{Map, Value};

use crate::clients::file_backed::{self, map_refs};
use crate::clients::kit::node_json;
use crate::clients::ClientError;
use crate::entry::Entry;

/// An OpenCode entry in the claude shape: `local` becomes `command`/`args`/`env`, `remote`
/// becomes `type: http`/`url`/`headers`, `{env:NAME}` becomes `${NAME}`, `enabled: true` (the
/// default) is dropped. Anything else (`enabled: false`, `timeout`, `cwd`, `oauth`, an unknown key)
/// is kept, so that a check sees it. An entry that cannot be mapped exactly (a literal `${`,
/// a `{file:...}`, a `command` that is not an array of strings) is returned as it is.
pub(crate) fn to_claude(v: &Value) -> Value {
    let Some(m) = v.as_object() else {
        return v.clone();
    };
    let back = |s: &str| -> Option<String> {
        if s.contains("${") || s.contains("{file:") {
            return None;
        }
        Some(unmap_env(s))
    };
    let strings = |v: &Value| -> Option<Map<String, Value>> {
        v.as_object()?
            .iter()
            .map(|(k, x)| Some((k.clone(), Value::String(back(x.as_str()?)?))))
            .collect()
    };
    let mut out = Map::new();
    match m.get("type").and_then(Value::as_str) {
        Some("local") => {
            let Some(cmd) = m.get("command").and_then(Value::as_array) else {
                return v.clone();
            };
            let Some(cmd) = cmd
                .iter()
                .map(|x| x.as_str().and_then(back))
                .collect::<Option<Vec<String>>>()
            else {
                return v.clone();
            };
            let Some((first, rest)) = cmd.split_first() else {
                return v.clone();
            };
            out.insert("command".into(), first.clone().into());
            out.insert("args".into(), rest.to_vec().into());
            if let Some(env) = m.get("environment") {
                let Some(env) = strings(env) else {
                    return v.clone();
                };
                out.insert("env".into(), Value::Object(env));
            }
            for (k, x) in m {
                if ["type", "command", "environment"].contains(&k.as_str())
                    || (k == "enabled" && x == &Value::Bool(true))
                {
                    continue;
                }
                if ["args", "env", "url", "headers"].contains(&k.as_str()) {
                    // A key of the claude shape in an OpenCode entry: keep OpenCode's shape.
                    return v.clone();
                }
                out.insert(k.clone(), x.clone());
            }
        }
        Some("remote") => {
            let Some(url) = m.get("url").and_then(Value::as_str).and_then(back) else {
                return v.clone();
            };
            out.insert("type".into(), "http".into());
            out.insert("url".into(), url.into());
            if let Some(h) = m.get("headers") {
                let Some(h) = strings(h) else {
                    return v.clone();
                };
                out.insert("headers".into(), Value::Object(h));
            }
            for (k, x) in m {
                if ["type", "url", "headers"].contains(&k.as_str())
                    || (k == "enabled" && x == &Value::Bool(true))
                {
                    continue;
                }
                if ["command", "args", "env"].contains(&k.as_str()) {
                    return v.clone();
                }
                out.insert(k.clone(), x.clone());
            }
        }
        _ => return v.clone(),
    }
    Value::Object(out)
}

/// `{env:NAME}` back to `${NAME}`.
fn unmap_env(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("{env:") {
        let after = &rest[i + 5..];
        match after.find('}') {
            Some(end) if file_backed::is_var_name(&after[..end]) => {
                out.push_str(&rest[..i]);
                out.push_str("${");
                out.push_str(&after[..end]);
                out.push('}');
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[..i + 5]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `entry` (claude shape) as OpenCode holds it, or why it cannot hold it exactly.
pub(crate) fn to_opencode(name: &str, entry: &Entry) -> Result<Value, ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client: "opencode",
        name: name.to_string(),
        reason,
    };
    // JSON.parse keeps a "__proto__" key, but OpenCode copies its servers into plain
    // objects, where that name sets the prototype (the real OpenCode drops such a server).
    node_json::refuse_proto("opencode", name, "OpenCode", "it would not run it")?;
    let map = |what: &str, s: &str| -> Result<String, ClientError> {
        if s.contains("{env:") || s.contains("{file:") {
            return Err(refuse(format!(
                "{what} holds a literal {{env:...}} or {{file:...}}, which OpenCode would \
                 substitute"
            )));
        }
        map_refs(s, |n| format!("{{env:{n}}}"))
            .map_err(|r| refuse(format!("{what} holds {r}, which OpenCode cannot express")))
    };
    let map_object = |what: &str, v: &Value| -> Result<Value, ClientError> {
        let Some(o) = v.as_object() else {
            return Err(refuse(format!("{what} is not an object of strings")));
        };
        let mut out = Map::new();
        for (k, x) in o {
            let x = x
                .as_str()
                .ok_or_else(|| refuse(format!("{what} {k:?} is not a string")))?;
            if k.contains("{env:") || k.contains("{file:") {
                return Err(refuse(format!("a key of {what} would be substituted")));
            }
            out.insert(k.clone(), map(&format!("{what} {k:?}"), x)?.into());
        }
        Ok(Value::Object(out))
    };
    let raw = &entry.raw;
    let mut out = Map::new();
    let keys: (&[&str], &[&str]) = match &entry.transport {
        crate::entry::Transport::Stdio { command, args } => {
            out.insert("type".into(), "local".into());
            let mut cmd = vec![Value::String(map("the command", command)?)];
            for (i, a) in args.iter().enumerate() {
                cmd.push(map(&format!("argument {}", i + 1), a)?.into());
            }
            out.insert("command".into(), Value::Array(cmd));
            if let Some(env) = raw.get("env") {
                out.insert("environment".into(), map_object("env", env)?);
            }
            (
                &["type", "command", "args", "env"],
                &["enabled", "timeout", "cwd"],
            )
        }
        crate::entry::Transport::Remote { kind, url } => {
            if kind != "http" {
                return Err(refuse(format!(
                    "OpenCode chooses the transport of a remote server itself (streamable HTTP, \
                     then SSE), so type {kind:?} cannot be pinned"
                )));
            }
            out.insert("type".into(), "remote".into());
            out.insert("url".into(), map("the url", url)?.into());
            if let Some(h) = raw.get("headers") {
                out.insert("headers".into(), map_object("headers", h)?);
            }
            (
                &["type", "url", "headers"],
                &["enabled", "timeout", "oauth"],
            )
        }
    };
    // OpenCode's own optional keys, as a restore of an entry read from its file carries them.
    file_backed::extra_keys(entry, keys, "OpenCode", &refuse, |k, v| {
        out.insert(k.clone(), v.clone());
        Ok(())
    })?;
    out.entry("enabled").or_insert(Value::Bool(true));
    Ok(Value::Object(out))
}
