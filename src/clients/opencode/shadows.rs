//! What else OpenCode takes a server name from, merging it with the user entry: the other
//! user files, project files, the `OPENCODE_CONFIG*` variables, the managed directory,
//! remote organisation defaults, and plugins and substitutions that may rewrite the entry.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{config_dir, project_dirs, substituted, USER_FILES};
use crate::clients::{file_backed, ClientError};

/// Where else OpenCode takes a server `name` from, merging it with the user entry of
/// `config`; one description each. Read-only, no binary needed.
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = substitution_hazards("the user config", config, name);
    let mut seen = std::collections::HashSet::new();
    let mut look = |what: &str, file: PathBuf| {
        if !seen.insert(file.clone()) {
            return;
        }
        found.extend(plugins_named_in(what, &file));
        if file == *config {
            return;
        }
        found.extend(substitution_hazards(what, &file, name));
        let read = file_backed::read_servers(&file, "mcp");
        crate::clients::kit::shadows::note(&mut found, what, &file, read, name, "OpenCode");
    };
    let dir = config
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(config_dir);
    for f in USER_FILES {
        look("user config merged with it", dir.join(f));
    }
    if let Some(f) = crate::dirs::var("OPENCODE_CONFIG") {
        look("OPENCODE_CONFIG", PathBuf::from(f));
    }
    let mut dirs: Vec<(&str, PathBuf)> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        if crate::dirs::var("OPENCODE_DISABLE_PROJECT_CONFIG").is_none() {
            for d in project_dirs(&cwd) {
                dirs.push(("project config", d.clone()));
                dirs.push(("project config", d.join(".opencode")));
            }
        }
    }
    dirs.push(("config", crate::dirs::home().join(".opencode")));
    if let Some(d) = crate::dirs::var("OPENCODE_CONFIG_DIR") {
        dirs.push(("OPENCODE_CONFIG_DIR", PathBuf::from(d)));
    }
    let managed = crate::dirs::var("OPENCODE_TEST_MANAGED_CONFIG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/opencode"));
    dirs.push(("managed config", managed));
    let mut plugin_dirs = vec![dir.clone()];
    // OpenCode's config directories (not a project's own `plugin/` folder).
    plugin_dirs.extend(
        dirs.iter()
            .filter(|(what, d)| d.ends_with(".opencode") || *what == "OPENCODE_CONFIG_DIR")
            .map(|(_, d)| d.clone()),
    );
    for (what, d) in dirs {
        for f in ["opencode.json", "opencode.jsonc"] {
            if std::fs::symlink_metadata(d.join(f)).is_ok() {
                look(what, d.join(f));
            }
        }
    }
    // Plugin files of every config directory OpenCode loads (and so runs).
    for d in plugin_dirs {
        for sub in ["plugin", "plugins"] {
            let pd = d.join(sub);
            // OpenCode loads `{plugin,plugins}/*.{ts,js}` (dot files and links included).
            let any = std::fs::read_dir(&pd).is_ok_and(|r| {
                r.filter_map(Result::ok).any(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.ends_with(".ts") || n.ends_with(".js")
                })
            });
            if any {
                found.push(format!(
                    "plugin directory {} (OpenCode runs its plugins when it starts, and a \
                     plugin can rewrite any server; mcp-deploy does not run them, so it counts)",
                    pd.display()
                ));
            }
        }
    }
    if let Some(content) = crate::dirs::var("OPENCODE_CONFIG_CONTENT") {
        let text = content.to_string_lossy().into_owned();
        match file_backed::parse_value(&text) {
            Some(d)
                if d.get("mcp").and_then(|m| m.get(name)).is_none()
                    && d.get("plugin").is_none_or(empty) => {}
            Some(_) => found.push("OPENCODE_CONFIG_CONTENT".into()),
            None => found.push(
                "OPENCODE_CONFIG_CONTENT (mcp-deploy cannot read it; OpenCode may, so it counts)"
                    .into(),
            ),
        }
    }
    found.extend(remote_defaults());
    Ok(found)
}

/// Whether a `plugin` value names no plugin.
fn empty(v: &Value) -> bool {
    v.is_null() || v.as_array().is_some_and(|a| a.is_empty())
}

/// The plugins `file` names in its `plugin` key (or in a key OpenCode's substitution may turn
/// into it): OpenCode runs each when it starts, and a plugin's `config` hook can rewrite any
/// server (checked with the real binary), so a verified entry is not what it would run.
fn plugins_named_in(what: &str, file: &Path) -> Vec<String> {
    match file_backed::read_document(file) {
        Ok(Some(Value::Object(doc))) => doc
            .iter()
            .filter(|(k, v)| (k.as_str() == "plugin" || substituted(k)) && !empty(v))
            .map(|(k, _)| {
                format!(
                    "plugins named by {k:?} in {what} {} (OpenCode runs them when it starts, \
                     and a plugin can rewrite any server; mcp-deploy does not run them, so \
                     they count)",
                    file.display()
                )
            })
            .collect(),
        // Not there, or reported by the look at its servers.
        _ => Vec::new(),
    }
}

/// Property names of `file` that OpenCode's text substitution (`{env:...}`, `{file:...}`,
/// done before it parses) may turn into the top-level `mcp` key or into the server `name`:
/// a later duplicate replaces ours in what OpenCode runs (checked with the real binary), and
/// what it becomes cannot be known from the file, so each counts.
fn substitution_hazards(what: &str, file: &Path, name: &str) -> Vec<String> {
    let Ok(Some(Value::Object(doc))) = file_backed::read_document(file) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for k in doc.keys().filter(|k| could_become(k, "mcp")) {
        found.push(format!(
            "the key {k:?} of {what} {}, which OpenCode's substitution may turn into \"mcp\"",
            file.display()
        ));
    }
    if let Some(Value::Object(servers)) = doc.get("mcp") {
        for k in servers.keys().filter(|k| could_become(k, name)) {
            found.push(format!(
                "the server {k:?} of {what} {}, which OpenCode's substitution may name {name:?}",
                file.display()
            ));
        }
    }
    found
}

/// Whether `key`, holding a `{env:...}` or `{file:...}` (each of which may become any text),
/// can become `target`.
pub(super) fn could_become(key: &str, target: &str) -> bool {
    if !substituted(key) {
        return false;
    }
    // The literal pieces between the substitutions, which must appear in order.
    let mut pieces = Vec::new();
    let mut rest = key;
    loop {
        let next = ["{env:", "{file:"]
            .iter()
            .filter_map(|m| rest.find(m))
            .min();
        let Some(i) = next else { break };
        match rest[i..].find('}') {
            Some(end) => {
                pieces.push(&rest[..i]);
                rest = &rest[i + end + 1..];
            }
            None => break,
        }
    }
    pieces.push(rest);
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return key == target;
    }
    if !target.starts_with(first) || target.len() < first.len() + last.len() {
        return false;
    }
    let mut at = first.len();
    let end = target.len() - last.len();
    if !target[end..].eq(last) {
        return false;
    }
    for p in &pieces[1..pieces.len() - 1] {
        match target.get(at..end).and_then(|t| t.find(p)) {
            Some(i) => at += i + p.len(),
            None => return false,
        }
    }
    true
}

/// The remote organisation defaults OpenCode would fetch: one per `wellknown` login in
/// `$XDG_DATA_HOME/opencode/auth.json`. Offline their content cannot be known, so each counts.
fn remote_defaults() -> Vec<String> {
    let data = crate::dirs::var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::dirs::home().join(".local/share"));
    let auth = data.join("opencode").join("auth.json");
    let Ok(Some(text)) = crate::fsio::read_input_if_exists(
        &auth,
        "OpenCode login file",
        crate::fsio::limits::DOCUMENT,
    ) else {
        return Vec::new();
    };
    let Ok(Value::Object(logins)) = serde_json::from_str::<Value>(&text) else {
        return vec![format!(
            "remote organisation defaults: {} cannot be read, and may name one",
            auth.display()
        )];
    };
    logins
        .iter()
        .filter(|(_, v)| v.get("type").and_then(Value::as_str) == Some("wellknown"))
        .map(|(url, _)| {
            format!(
                "remote organisation default {}/.well-known/opencode (a login in {}; it cannot \
                 be read offline, so it counts)",
                url.trim_end_matches('/'),
                auth.display()
            )
        })
        .collect()
}
