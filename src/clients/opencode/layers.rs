//! The layers opencode applies to a user-scope entry ([`super`]) beyond the same-name
//! entries of the files it merges (those are shadows, `clients::opencode::shadows_in`):
//! **whether it accepts its config at all.** OpenCode 1.18.33 decodes every file it merges
//! against one Effect schema (`identifier:"Config"` in the binary): unknown keys are dropped,
//! but one known key of the wrong type and it stops with "Configuration is invalid at FILE",
//! loading nothing — no server runs. So each file is checked the way the schema checks it:
//!
//! - `mcp`: an object whose every entry is a local server (`type: "local"`, `command`: array
//!   of strings, optional `cwd` string, `environment` of strings, `enabled` boolean,
//!   `timeout` integer > 0), a remote one (`type: "remote"`, `url` string, optional
//!   `headers` of strings, `enabled`, `oauth` object or `false`, `timeout`), or failing both,
//!   `{"enabled": boolean}` (which the schema takes as a toggle, whatever else it holds);
//! - the keys of a simple type: `$schema`, `shell`, `model`, `small_model`,
//!   `default_agent`, `username` (strings), `snapshot`, `autoshare` (booleans), `share`
//!   (`manual`, `auto`, `disabled`), `autoupdate` (boolean or `notify`),
//!   `disabled_providers`, `enabled_providers`, `instructions` (arrays of strings), `tools`
//!   (booleans), `watcher.ignore` (strings); `null` is no value of any of them;
//! - the other keys the schema knows (`provider`, `agent`, `permission`, `lsp`, ...) have
//!   nested schemas mcp-deploy does not carry: a file holding one is named as not compared.
//!
//! A file that is not JSON with comments is already counted by the shadow check.
//!
//! **Per release** (the release on the host, [`crate::clients::version::on_host`]): before
//! [`ENTRY_KEYS_DROPPED_SINCE`] OpenCode refuses its whole config over an `mcp` entry key its
//! schema does not have (`cwd` or `foo` beside a local server: 1.0.61 and 1.3.2 exit 1 where
//! 1.18.33 drops the key), and 1.0.61 over a toggle or an `oauth`; before
//! [`TOP_KEYS_DROPPED_SINCE`] over a top-level key it does not know (1.17.19 and 1.18.15 refuse
//! `"foo": 1`), and 1.3.2 to 1.15.13 over a byte order mark. mcp-deploy carries 1.18.33's schema only, so on such a release every key
//! beyond the ones each supported release takes is put to the client ([`super::loads_config`]).
//! A release that is not known takes these older rules.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::clients::layers::{Context, Effect, Finding};
use crate::clients::version::Version;
use crate::clients::{file_backed, opencode};
use crate::identity::layer::Doubt;

/// The first release known to drop an `mcp` entry key its schema does not have: 1.3.2 refuses
/// the whole config over one, 1.14.34 (the next release on npm) drops it.
pub(crate) const ENTRY_KEYS_DROPPED_SINCE: Version = Version::new(1, 14, 34);
/// The first release known to drop a top-level key it does not know: 1.18.14 refuses the
/// whole config over one (as 1.18.15 does), 1.18.16 drops it.
pub(crate) const TOP_KEYS_DROPPED_SINCE: Version = Version::new(1, 18, 16);
/// The keys of a local and of a remote `mcp` entry that every supported release's schema has
/// (1.0.61 knows no `cwd` and no `oauth`, and refuses a toggle).
const ENTRY_KEYS_OF_EVERY_RELEASE: [&[&str]; 2] = [
    &["type", "command", "environment", "enabled", "timeout"],
    &["type", "url", "headers", "enabled", "timeout"],
];

/// The Config keys whose nested schemas are not checked here.
const NOT_CHECKED: &[&str] = &[
    "logLevel",
    "server",
    "command",
    "skills",
    "references",
    "reference",
    "plugin",
    "subagent_depth",
    "mode",
    "agent",
    "provider",
    "formatter",
    "lsp",
    "layout",
    "permission",
    "attachment",
    "enterprise",
    "tool_output",
    "compaction",
    "experimental",
];

pub(crate) fn read(cx: &Context) -> Vec<Finding> {
    let cwd = std::env::current_dir().ok();
    let asked = answered(cx.user_config);
    let release = crate::clients::version::on_host(&opencode::ABOUT);
    merged_files(cx.user_config, cwd.as_deref())
        .iter()
        .flat_map(|f| {
            let mut found = check_file(f, &release);
            if !asked.contains(f) {
                for finding in &mut found {
                    if let Effect::NotCompared(doubt) = &mut finding.effect {
                        doubt.ask = None;
                    }
                }
            }
            found
        })
        .collect()
}

/// The files whose doubt OpenCode's answer settles ([`super::loads_config`]): the ones its
/// scratch run reads as they are — the user files of the config directory, `~/.opencode`'s
/// own, and the managed directory's — not `OPENCODE_CONFIG`, `OPENCODE_CONFIG_DIR` or a
/// project's file (never copied, as that run loads no project). A file whose copy drops a key
/// (`plugin`, or one that `{env:...}` could turn into it) is not answered either: its doubt is
/// made unaskable where the file is read ([`check_file`]).
fn answered(config: &Path) -> Vec<PathBuf> {
    let dir = config
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(opencode::config_dir);
    let managed = PathBuf::from("/etc/opencode");
    let home = crate::dirs::home().join(".opencode");
    let mut files: Vec<PathBuf> = opencode::USER_FILES.iter().map(|f| dir.join(f)).collect();
    for d in [home, managed] {
        files.extend(["opencode.json", "opencode.jsonc"].map(|f| d.join(f)));
    }
    files
}

/// The files OpenCode merges into the config of a session started in `cwd`, as `shadows_in`
/// finds them (OpenCode's own order does not matter: any refused file stops it).
fn merged_files(config: &Path, cwd: Option<&Path>) -> Vec<PathBuf> {
    let dir = config
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(opencode::config_dir);
    let mut files: Vec<PathBuf> = opencode::USER_FILES.iter().map(|f| dir.join(f)).collect();
    if let Some(f) = crate::dirs::var("OPENCODE_CONFIG") {
        files.push(PathBuf::from(f));
    }
    let mut dirs = Vec::new();
    if let Some(cwd) = cwd {
        if crate::dirs::var("OPENCODE_DISABLE_PROJECT_CONFIG").is_none() {
            for d in opencode::project_dirs(cwd) {
                dirs.push(d.join(".opencode"));
                dirs.push(d);
            }
        }
    }
    dirs.push(crate::dirs::home().join(".opencode"));
    if let Some(d) = crate::dirs::var("OPENCODE_CONFIG_DIR") {
        dirs.push(PathBuf::from(d));
    }
    dirs.push(
        crate::dirs::var("OPENCODE_TEST_MANAGED_CONFIG_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/etc/opencode")),
    );
    for d in dirs {
        files.extend(["opencode.json", "opencode.jsonc"].map(|f| d.join(f)));
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.clone()));
    files
}

/// The refusals and doubts of one file, under the rules of `release` (the one on the host).
fn check_file(file: &Path, release: &Result<Version, String>) -> Vec<Finding> {
    // Missing, or not JSON with comments: nothing to add here (the shadow check counts a
    // file it cannot read).
    let Ok(Some((doc, bom))) = file_backed::read_document_marked(file) else {
        return Vec::new();
    };
    let refused = |key: &str, why: String| {
        Finding::new(
            format!("{} {key}", file.display()),
            Effect::Blocked(format!(
                "OpenCode refuses the whole config (\"Configuration is invalid\") and loads no \
                 server: {why}"
            )),
        )
    };
    let Value::Object(top) = doc else {
        return vec![refused("(top level)", "it is not an object".into())];
    };
    let mut found: Vec<Finding> = Vec::new();
    for (key, value) in &top {
        if let Some(why) = simple_key(key, value) {
            found.push(refused(key, why));
        }
    }
    match top.get("mcp") {
        None => {}
        Some(Value::Object(servers)) => {
            for (name, entry) in servers {
                if let Err(why) = mcp_entry(entry) {
                    found.push(refused(&format!("mcp.{name}"), why.to_string()));
                }
            }
        }
        Some(_) => found.push(refused("mcp", "it is not an object".into())),
    }
    let unchecked: Vec<&str> = top
        .keys()
        .map(String::as_str)
        .filter(|k| NOT_CHECKED.contains(k))
        .collect();
    let mut whys = Vec::new();
    if !unchecked.is_empty() {
        whys.push(format!(
            "OpenCode refuses its whole config for one value of the wrong type, and mcp-deploy \
             does not check the schema of {}",
            unchecked.join(", ")
        ));
    }
    if let Some(why) = older_rules(&top, bom, release) {
        whys.push(why);
    }
    if !whys.is_empty() {
        let mut doubt = Doubt::loads_config(whys.join("; "));
        // The copy OpenCode answers for drops these keys ([`answered`]): its answer is not
        // this file's.
        if top
            .keys()
            .any(|k| k == "plugin" || opencode::substituted(k))
        {
            doubt.ask = None;
        }
        found.push(Finding::new(file.display(), Effect::NotCompared(doubt)));
    }
    found
}

/// Why a file is in doubt under the rules of a release older than the schema mcp-deploy
/// carries (module header): the keys it holds that such a release may refuse the whole config
/// over, and a byte order mark (1.3.2 to 1.15.13 refuse it: "InvalidSymbol at line 1, column
/// 1"; 1.0.61 and 1.18.16 read it). `None` on a release that drops unknown keys, or when
/// there are none.
fn older_rules(
    top: &Map<String, Value>,
    bom: bool,
    release: &Result<Version, String>,
) -> Option<String> {
    let (release_said, found) = match release {
        Ok(v) if *v >= TOP_KEYS_DROPPED_SINCE => return None,
        Ok(v) => (format!("OpenCode {v}"), Some(*v)),
        Err(why) => (format!("the OpenCode on this host ({why})"), None),
    };
    let mut keys: Vec<String> = bom
        .then(|| "a byte order mark".to_string())
        .into_iter()
        .collect();
    keys.extend(
        top.keys()
            .filter(|k| !matches!(k.as_str(), "$schema" | "mcp"))
            .cloned(),
    );
    if found.is_none_or(|v| v < ENTRY_KEYS_DROPPED_SINCE) {
        for (name, entry) in top
            .get("mcp")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let Some(m) = entry.as_object() else { continue };
            let known = match m.get("type").and_then(Value::as_str) {
                Some("local") => ENTRY_KEYS_OF_EVERY_RELEASE[0],
                Some("remote") => ENTRY_KEYS_OF_EVERY_RELEASE[1],
                _ => &[],
            };
            keys.extend(
                m.keys()
                    .filter(|k| !known.contains(&k.as_str()))
                    .map(|k| format!("mcp.{name}.{k}")),
            );
        }
    }
    (!keys.is_empty()).then(|| {
        format!(
            "{release_said} is older than {TOP_KEYS_DROPPED_SINCE}, whose schema mcp-deploy \
             carries, and may refuse its whole config over what it does not know: {}",
            keys.join(", ")
        )
    })
}

fn is_string_array(v: &Value) -> bool {
    v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

fn is_string_record(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|m| m.values().all(Value::is_string))
}

/// Why a top-level key of a simple type has a value OpenCode refuses, if it does.
fn simple_key(key: &str, v: &Value) -> Option<String> {
    let ok = match key {
        "$schema" | "shell" | "model" | "small_model" | "default_agent" | "username" => {
            v.is_string()
        }
        "snapshot" | "autoshare" => v.is_boolean(),
        "share" => matches!(v.as_str(), Some("manual" | "auto" | "disabled")),
        "autoupdate" => v.is_boolean() || v == "notify",
        "disabled_providers" | "enabled_providers" | "instructions" => is_string_array(v),
        "tools" => v
            .as_object()
            .is_some_and(|m| m.values().all(Value::is_boolean)),
        "watcher" => v
            .as_object()
            .is_some_and(|m| m.get("ignore").is_none_or(is_string_array)),
        _ => true,
    };
    (!ok).then(|| format!("{key} is not of the type its schema has"))
}

fn positive_int(v: &Value) -> bool {
    v.as_u64().is_some_and(|n| n > 0) || v.as_f64().is_some_and(|f| f > 0.0 && f.fract() == 0.0)
}

/// Why OpenCode's schema refuses an `mcp` entry (naming the key, never a value).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum SchemaError {
    #[error("the entry is not an object")]
    NotObject,
    #[error("its type is neither \"local\" nor \"remote\"")]
    NoType,
    #[error("its command is not an array of strings")]
    Command,
    #[error("its url is not a string")]
    Url,
    #[error("its {key} is not of the type the schema has")]
    Type { key: &'static str },
}

/// Whether OpenCode's schema takes an `mcp` entry: `Ok` when it does.
fn mcp_entry(v: &Value) -> Result<(), SchemaError> {
    let Value::Object(m) = v else {
        return Err(SchemaError::NotObject);
    };
    let server = match m.get("type").and_then(Value::as_str) {
        Some("local") => local(m),
        Some("remote") => remote(m),
        _ => Err(SchemaError::NoType),
    };
    match server {
        Ok(()) => Ok(()),
        // The union's second member: a toggle.
        Err(_) if m.get("enabled").is_some_and(Value::is_boolean) => Ok(()),
        Err(why) => Err(why),
    }
}

fn optional(
    m: &Map<String, Value>,
    key: &'static str,
    ok: fn(&Value) -> bool,
) -> Result<(), SchemaError> {
    match m.get(key) {
        Some(v) if !ok(v) => Err(SchemaError::Type { key }),
        _ => Ok(()),
    }
}

fn local(m: &Map<String, Value>) -> Result<(), SchemaError> {
    if !m.get("command").is_some_and(is_string_array) {
        return Err(SchemaError::Command);
    }
    optional(m, "cwd", Value::is_string)?;
    optional(m, "environment", is_string_record)?;
    optional(m, "enabled", Value::is_boolean)?;
    optional(m, "timeout", positive_int)
}

fn remote(m: &Map<String, Value>) -> Result<(), SchemaError> {
    if !m.get("url").is_some_and(Value::is_string) {
        return Err(SchemaError::Url);
    }
    optional(m, "headers", is_string_record)?;
    optional(m, "enabled", Value::is_boolean)?;
    optional(m, "oauth", |v| v.is_object() || v == &Value::Bool(false))?;
    optional(m, "timeout", positive_int)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_as_the_schema_takes_them() {
        for ok in [
            json!({"type": "local", "command": ["/x"], "timeout": 5, "environment": {"A": "1"}}),
            json!({"type": "remote", "url": "u", "oauth": false}),
            json!({"enabled": false, "anything": 1}),
            // Not a server, but the schema takes it as a toggle.
            json!({"type": "local", "command": "/x", "enabled": true}),
        ] {
            assert!(mcp_entry(&ok).is_ok(), "{ok}");
        }
        for bad in [
            json!({"type": "local", "command": ["/x"], "timeout": 0}),
            json!({"type": "local", "command": ["/x"], "timeout": 1.5}),
            json!({"type": "local", "command": [], "environment": {"A": 1}}),
            json!({"type": "weird"}),
            json!({"type": "remote", "url": "u", "oauth": true}),
            json!([]),
        ] {
            assert!(mcp_entry(&bad).is_err(), "{bad}");
        }
    }

    /// Issue 35, item 9: OpenCode 1.0.61 and 1.3.2 refuse the whole config over an entry key
    /// 1.18.33 drops (`cwd`, `foo`), 1.17.19 and 1.18.14 over an unknown top-level key; each
    /// seen with `opencode debug config` (tests/it/differential.rs runs the harness at
    /// 1.0.61, 1.3.2 and the pinned release).
    #[test]
    fn an_older_release_puts_every_key_it_may_not_know_to_opencode() {
        let doc = json!({"$schema": "s", "theme": "x", "mcp": {
            "ours": {"type": "local", "command": ["/x"], "environment": {}, "timeout": 5},
            "other": {"type": "local", "command": ["/y"], "cwd": "/tmp"},
            "toggle": {"enabled": false},
            "remote": {"type": "remote", "url": "u", "oauth": false},
        }});
        let top = doc.as_object().unwrap();
        let at = |v: Result<Version, String>| older_rules(top, false, &v).unwrap_or_default();
        let oldest = at(Ok(Version::new(1, 3, 2)));
        for key in [
            "theme",
            "mcp.other.cwd",
            "mcp.toggle.enabled",
            "mcp.remote.oauth",
        ] {
            assert!(oldest.contains(key), "{key}: {oldest}");
        }
        assert!(!oldest.contains("mcp.ours"), "{oldest}");
        let middle = at(Ok(Version::new(1, 17, 19)));
        assert!(
            middle.contains("theme") && !middle.contains("mcp."),
            "{middle}"
        );
        assert_eq!(at(Ok(Version::new(1, 18, 16))), "");
        assert_eq!(at(Ok(Version::new(1, 18, 33))), "");
        // Not known: the oldest rules, and why it is not known.
        let unknown = at(Err("no opencode on PATH".into()));
        assert!(unknown.contains("mcp.other.cwd") && unknown.contains("no opencode on PATH"));
        let plain = json!({"mcp": {"ours": {"type": "local", "command": ["/x"]}}});
        let plain = plain.as_object().unwrap();
        assert_eq!(older_rules(plain, false, &Ok(Version::new(1, 0, 61))), None);
        // A byte order mark: 1.3.2 to 1.15.13 refuse the file.
        let bom = older_rules(plain, true, &Ok(Version::new(1, 15, 13))).unwrap_or_default();
        assert!(bom.contains("byte order mark"), "{bom}");
        assert_eq!(older_rules(plain, true, &Ok(Version::new(1, 18, 16))), None);
    }

    #[test]
    fn a_refused_file_blocks_and_unchecked_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("opencode.json");
        std::fs::write(
            &f,
            r#"{"model": 1, "share": "auto", "bogus": {}, "mcp": {"x": {"type": "no"}}}"#,
        )
        .unwrap();
        let newest = Ok(Version::new(1, 18, 33));
        let found = check_file(&f, &newest);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].source.ends_with("opencode.json model"),
            "{found:?}"
        );
        assert!(
            found[1].source.ends_with("opencode.json mcp.x"),
            "{found:?}"
        );
        std::fs::write(&f, r#"{"provider": {}, "mcp": {}}"#).unwrap();
        assert!(
            matches!(&check_file(&f, &newest)[..], [Finding { effect: Effect::NotCompared(w), .. }] if w.why.contains("provider") && w.ask.is_some())
        );
        // Beside a `plugin` key, which the copy OpenCode answers for drops, it is not asked.
        std::fs::write(&f, r#"{"plugin": [], "provider": {}, "mcp": {}}"#).unwrap();
        assert!(
            matches!(&check_file(&f, &newest)[..], [Finding { effect: Effect::NotCompared(w), .. }] if w.ask.is_none())
        );
        // Deep nesting neither overflows the stack nor counts as refused here.
        let deep = format!("{{\"x\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        std::fs::write(&f, deep).unwrap();
        let _ = check_file(&f, &newest);
        // A top level that is not an object the file reader refuses itself: the shadow check
        // counts such a file.
        std::fs::write(&f, "[]").unwrap();
        assert!(file_backed::read_document(&f).is_err());
    }
}
