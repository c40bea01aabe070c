//! The layers copilot applies to a user-scope entry ([`super`]), read once a run ([`load`]):
//!
//! - **The whole user config, per release.** Copilot 1.0.22 refuses its whole
//!   `mcp-config.json` ("Failed to read configuration", no server runs) over one entry its
//!   schema does not take: an unknown key (`cwd`, `timeout`, `foo`), a local server without
//!   `args` or with `args` not a list, a remote one without `type`, an entry that is not an
//!   object; 1.0.102 skips such an entry and runs the others (both seen with `copilot mcp
//!   list --json`). mcp-deploy carries neither schema, so on a release before
//!   [`ENTRIES_SKIPPED_SINCE`] (or one not known) a file holding any entry beyond the plain
//!   shape every release takes ([`plain`]) is a doubt put to copilot ([`loads_config`]).
//! - `disabledMcpServers` of `$COPILOT_HOME/settings.json` (what `copilot mcp disable` writes)
//!   stops the server; the managed policy file `/etc/github-copilot/managed-settings.json`
//!   (`allowedMcpServers`, `deniedMcpServers`, `strictPluginOnlyCustomization`,
//!   `allowManagedMcpServersOnly`) and the same keys in the user settings;
//!   `/etc/github-copilot/policy.d`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::clients::file_backed;
use crate::clients::layers::{Context, Effect, Finding};
use crate::clients::oracle::{ask_cli, Answer};
use crate::clients::version::Version;
use crate::fsio;
use crate::identity::layer::Doubt;

/// The first release known to skip an entry its schema does not take (1.0.102); 1.0.22
/// refuses the whole file over one.
pub(crate) const ENTRIES_SKIPPED_SINCE: Version = Version::new(1, 0, 102);

/// The managed policy file copilot reads on Linux.
const MANAGED: &str = "/etc/github-copilot/managed-settings.json";
/// The directory of policy helper registrations beside it.
const POLICY_D: &str = "/etc/github-copilot/policy.d";

/// The MCP keys of copilot's policy (managed settings, and the user's settings).
const POLICY_KEYS: &[&str] = &[
    "allowedMcpServers",
    "deniedMcpServers",
    "strictPluginOnlyCustomization",
    "allowManagedMcpServersOnly",
];

/// Every layer copilot applies to the user entry `cx.name` ([`super::super::layers`]), its
/// files read for this name alone.
pub(crate) fn read(cx: &Context) -> Vec<Finding> {
    load(cx.user_config).findings_of(cx)
}

/// Copilot's layer files as one run reads them, for the user config `user_config`.
pub(crate) fn load(user_config: &Path) -> Files {
    let home = user_config.parent().unwrap_or(Path::new("/"));
    let settings = home.join("settings.json");
    let mut whole = Vec::new();
    whole.extend(whole_file(
        user_config,
        &crate::clients::version::on_host(&super::ABOUT),
    ));
    let policy_d = Path::new(POLICY_D);
    if std::fs::read_dir(policy_d).is_ok_and(|mut d| d.next().is_some()) {
        whole.push(Finding::new(
            policy_d.display(),
            Effect::not_compared(
                "copilot runs the policy helpers registered there for managed settings, which \
                 mcp-deploy cannot evaluate",
            ),
        ));
    }
    Files {
        user: read_settings(&settings, "copilot reads its user settings"),
        settings,
        managed: read_settings(
            Path::new(MANAGED),
            "copilot applies it as enterprise policy",
        ),
        whole,
    }
}

/// The files copilot's layers are read from, once a run ([`load`]).
pub(crate) struct Files {
    /// What holds whatever the name: the user config refused as a whole (or in doubt), the
    /// policy helpers.
    whole: Vec<Finding>,
    /// `$COPILOT_HOME/settings.json`, and what it holds.
    settings: PathBuf,
    user: Result<Option<Map<String, Value>>, Finding>,
    /// The managed policy file's document.
    managed: Result<Option<Map<String, Value>>, Finding>,
}

impl Files {
    fn findings_of(&self, cx: &Context) -> Vec<Finding> {
        let mut found = self.whole.clone();
        match &self.user {
            Err(f) => found.push(f.clone()),
            Ok(None) => {}
            Ok(Some(doc)) => {
                let disabled = doc
                    .get("disabledMcpServers")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|n| n == cx.name));
                if disabled {
                    found.push(Finding::new(
                        format!("{} disabledMcpServers", self.settings.display()),
                        Effect::Blocked(format!(
                            "copilot does not start {} (`copilot mcp enable {}` undoes it)",
                            cx.name, cx.name
                        )),
                    ));
                }
                found.extend(policy(&self.settings, doc, cx));
            }
        }
        match &self.managed {
            Err(f) => found.push(f.clone()),
            Ok(None) => {}
            Ok(Some(doc)) => found.extend(policy(Path::new(MANAGED), doc, cx)),
        }
        found
    }
}

impl crate::clients::layers::Loaded for Files {
    fn findings(&self, cx: &Context) -> Vec<Finding> {
        self.findings_of(cx)
    }
}

/// The user config as a whole, under the rules of `release` (module header): a doubt when a
/// release that may refuse the file over one entry finds an entry beyond [`plain`]. A file
/// that cannot be read or parsed is the entry check's to name.
fn whole_file(user_config: &Path, release: &Result<Version, String>) -> Option<Finding> {
    let said = match release {
        Ok(v) if *v >= ENTRIES_SKIPPED_SINCE => return None,
        Ok(v) => format!("copilot {v}"),
        Err(why) => format!("the copilot on this host ({why})"),
    };
    let Ok(Some(Value::Object(top))) = file_backed::read_document(user_config) else {
        return None;
    };
    let odd: Vec<String> = match top.get("mcpServers") {
        Some(Value::Object(servers)) => servers
            .iter()
            .filter(|(_, e)| !plain(e))
            .map(|(name, _)| format!("mcpServers.{name}"))
            .collect(),
        _ => vec!["mcpServers".into()],
    };
    (!odd.is_empty()).then(|| {
        Finding::new(
            user_config.display(),
            Effect::NotCompared(Doubt::loads_config(format!(
                "{said} is older than {ENTRIES_SKIPPED_SINCE}, which skips an entry its schema \
                 does not take, and may refuse the whole file over one of these: {}",
                odd.join(", ")
            ))),
        )
    })
}

/// Whether every copilot release takes `entry`: a local server (`command` string, `args`
/// list of strings, optional `type` `local` or `stdio`, `env` of strings, `tools` list of
/// strings) or a remote one (`type` `http` or `sse`, `url` string, optional `headers` of
/// strings and `tools`), and no other key.
fn plain(entry: &Value) -> bool {
    let Value::Object(m) = entry else {
        return false;
    };
    let strings = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    let record = |v: &Value| {
        v.as_object()
            .is_some_and(|o| o.values().all(Value::is_string))
    };
    let ty = m.get("type").map(Value::as_str);
    let (required, optional): (&[&str], &[&str]) = match ty {
        None | Some(Some("local" | "stdio")) => (&["command", "args"], &["type", "env", "tools"]),
        Some(Some("http" | "sse")) => (&["type", "url"], &["headers", "tools"]),
        _ => return false,
    };
    required.iter().all(|k| m.contains_key(*k))
        && m.iter().all(|(k, v)| {
            (required.contains(&k.as_str()) || optional.contains(&k.as_str()))
                && match k.as_str() {
                    "command" | "url" | "type" => v.is_string(),
                    "args" | "tools" => strings(v),
                    _ => record(v),
                }
        })
}

/// `copilot mcp list --json` reads the user config as a start does, and exits 1 when it
/// refuses it (1.0.22; 1.8 s). Auto-update off: the release asked is the installed one.
pub(crate) fn loads_config(binary: Option<&Path>) -> Answer {
    ask_cli(
        &super::ABOUT,
        &["mcp", "list", "--json"],
        &[("COPILOT_AUTO_UPDATE", "false")],
        binary,
    )
}

/// A settings file as a JSON object: `Ok(None)` when missing, the `NotCompared` finding when
/// it cannot be read or parsed.
fn read_settings(path: &Path, what: &str) -> Result<Option<Map<String, Value>>, Finding> {
    let Some(text) = crate::clients::layers::read_layer(path, what, fsio::limits::DOCUMENT)? else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        _ => Err(Finding::new(
            path.display(),
            Effect::not_compared(format!(
                "{what}, and mcp-deploy cannot parse it as a JSON object"
            )),
        )),
    }
}

/// The MCP policy keys of a settings document, for the user entry `cx.name`: a deny entry
/// naming it is `Blocked`; any other MCP policy is `NotCompared` (copilot matches stdio
/// servers by exact command and remote ones by URL wildcard, and merges the sources by rules
/// mcp-deploy does not reproduce).
fn policy(file: &Path, doc: &Map<String, Value>, cx: &Context) -> Vec<Finding> {
    let denied_by_name = doc
        .get("deniedMcpServers")
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter()
                .any(|m| m.get("serverName") == Some(&cx.name.into()))
        });
    if denied_by_name {
        return vec![Finding::new(
            format!("{} deniedMcpServers", file.display()),
            Effect::Blocked(format!("a serverName entry denies {}", cx.name)),
        )];
    }
    let keys: Vec<&str> = POLICY_KEYS
        .iter()
        .copied()
        .filter(|k| doc.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    if keys.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        format!("{} {}", file.display(), keys.join(", ")),
        Effect::not_compared("copilot's MCP allow/deny policy, which mcp-deploy does not evaluate"),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::entry;
    use serde_json::json;

    /// Issue 35, item 9: copilot 1.0.22 refuses its whole user config over one entry its
    /// schema does not take (each seen with `copilot mcp list --json` exiting 1), 1.0.102
    /// skips it; tests/it/differential.rs runs the harness at both.
    #[test]
    fn an_odd_entry_is_a_doubt_under_a_release_that_refuses_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("mcp-config.json");
        let old: Result<Version, String> = Ok(Version::new(1, 0, 22));
        let plain_file = json!({"mcpServers": {
            "a": {"command": "/x", "args": ["s"]},
            "b": {"type": "local", "command": "/x", "args": [], "env": {}, "tools": ["*"]},
            "c": {"type": "http", "url": "http://x", "headers": {"a": "b"}},
        }});
        std::fs::write(&config, plain_file.to_string()).unwrap();
        assert!(whole_file(&config, &old).is_none());
        for odd in [
            json!({"command": "/x", "args": [], "cwd": "/tmp"}),
            json!({"command": "/x", "args": [], "timeout": 5}),
            json!({"command": "/x"}),
            json!({"command": "/x", "args": "s"}),
            json!({"command": "/x", "args": [], "env": {"A": 1}}),
            json!({"url": "http://x"}),
            json!({"type": "weird", "command": "/x", "args": []}),
            json!(5),
        ] {
            let mut doc = plain_file.clone();
            doc["mcpServers"]["odd"] = odd.clone();
            std::fs::write(&config, doc.to_string()).unwrap();
            let found = whole_file(&config, &old);
            assert!(
                matches!(&found, Some(Finding { effect: Effect::NotCompared(d), .. })
                    if d.ask.is_some() && d.why.contains("mcpServers.odd")),
                "{odd}: {found:?}"
            );
            // The release that skips it, not asked; one not known, asked.
            assert!(whole_file(&config, &Ok(Version::new(1, 0, 102))).is_none());
            assert!(whole_file(&config, &Err("not found".into())).is_some());
        }
    }

    #[test]
    fn disabled_and_denied_by_name_block_and_other_policy_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("mcp-config.json");
        let declared = entry(json!({"command":"/x"}));
        let cx = Context {
            name: "ct",
            declared: &declared,
            user_config: &config,
        };
        let settings = dir.path().join("settings.json");
        let user_only = |cx: &Context| -> Vec<Finding> {
            read(cx)
                .into_iter()
                .filter(|f| f.source.starts_with(&dir.path().display().to_string()))
                .collect()
        };
        assert!(user_only(&cx).is_empty());
        std::fs::write(&settings, r#"{"disabledMcpServers":["other"]}"#).unwrap();
        assert!(user_only(&cx).is_empty());
        std::fs::write(&settings, r#"{"disabledMcpServers":["ct"]}"#).unwrap();
        let f = user_only(&cx);
        assert!(
            matches!(&f[..], [Finding { effect: Effect::Blocked(_), source }]
                if source.ends_with("settings.json disabledMcpServers")),
            "{f:?}"
        );
        std::fs::write(&settings, r#"{"deniedMcpServers":[{"serverName":"ct"}]}"#).unwrap();
        assert!(matches!(
            &user_only(&cx)[..],
            [Finding {
                effect: Effect::Blocked(_),
                ..
            }]
        ));
        std::fs::write(
            &settings,
            r#"{"allowedMcpServers":[{"serverCommand":["/y"]}]}"#,
        )
        .unwrap();
        assert!(matches!(
            &user_only(&cx)[..],
            [Finding {
                effect: Effect::NotCompared(_),
                ..
            }]
        ));
        std::fs::write(&settings, "{").unwrap();
        assert!(matches!(
            &user_only(&cx)[..],
            [Finding {
                effect: Effect::NotCompared(_),
                ..
            }]
        ));
    }
}
