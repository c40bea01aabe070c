//! Cursor: no Cursor CLI that manages MCP servers can be installed here, so mcp-deploy edits
//! its documented user file `~/.cursor/mcp.json` itself ([`super::file_backed`]).
//!
//! - The file holds `mcpServers`, entries in the claude shape: `command`/`args`/`env` (Cursor
//!   also knows `type: "stdio"` and `envFile`), or `url`/`headers` for a remote server, whose
//!   transport Cursor chooses itself (streamable HTTP, then SSE): claude's `type: http` is
//!   written as `url`/`headers` with no `type`, and `sse` is refused.
//! - Cursor interpolates `${env:NAME}`, `${userHome}`, `${workspaceFolder}`,
//!   `${workspaceFolderBasename}` and `${pathSeparator}` in `command`, `args`, `env`, `url`
//!   and `headers`: claude's `${NAME}` is written as `${env:NAME}` and read back; a
//!   `${NAME:-default}` is refused (Cursor has none), and an entry holding any other `${...}`
//!   is read as it is plus the key `cursor-interpolation`, which no check accepts.
//! - A project `.cursor/mcp.json` (in the working directory or above) with the same name wins
//!   over the user entry: reported as shadowing.
//! - No real Cursor runs in the tests: the file is checked against the documented examples.

pub(crate) mod layers;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::file_backed::{self, map_refs};
use super::file_written::Format;
use super::kit::node_json;
use super::ClientError;
use crate::entry::{Entry, Transport};

/// Cursor's format ([`super::file_written`]).
pub(crate) struct Cursor;

impl Format for Cursor {
    const KIND: &'static dyn super::table::Kind = &CursorKind;
    const KEY: &'static str = "mcpServers";
    const NEW_FILE: &'static str = "{\n  \"mcpServers\": {}\n}\n";
    const TO_CLAUDE: fn(&Value) -> Value = to_claude;
    const TO_CLIENT: fn(&str, &Entry) -> Result<Value, ClientError> = to_cursor;
}

/// `~/.cursor/mcp.json`.
pub(crate) fn config_path() -> PathBuf {
    crate::dirs::home().join(".cursor").join("mcp.json")
}

/// The user entries of `path` in the claude shape.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    super::file_written::read_user_entries::<Cursor>(path)
}

/// A project `.cursor/mcp.json` in the working directory or above naming `name`.
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = Vec::new();
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(found);
    };
    for dir in cwd.ancestors() {
        let file = dir.join(".cursor").join("mcp.json");
        if file == *config {
            continue;
        }
        let read = file_backed::read_servers(&file, "mcpServers");
        super::kit::shadows::note(&mut found, "project config", &file, read, name, "Cursor");
    }
    Ok(found)
}

/// A Cursor entry in the claude shape: a remote one (`url`, no `command`) gains `type: http`,
/// `type: "stdio"` is dropped, `${env:NAME}` becomes `${NAME}`. Another interpolation keeps
/// the entry as it is, marked with `cursor-interpolation`.
pub(crate) fn to_claude(v: &Value) -> Value {
    let Some(m) = v.as_object() else {
        return v.clone();
    };
    let mut other = false;
    let mut out = Map::new();
    let remote = m.contains_key("url") && !m.contains_key("command");
    if remote && !m.contains_key("type") {
        out.insert("type".into(), "http".into());
    }
    for (k, x) in m {
        match k.as_str() {
            "type" if x == "stdio" && !remote => {}
            "command" | "args" | "env" | "url" | "headers" => {
                out.insert(k.clone(), file_backed::unmap_value(x, "env:", &mut other));
            }
            _ => {
                out.insert(k.clone(), x.clone());
            }
        }
    }
    if other {
        let mut kept = m.clone();
        kept.insert(
            "cursor-interpolation".into(),
            "a ${...} that is not ${env:NAME}".into(),
        );
        return Value::Object(kept);
    }
    Value::Object(out)
}

/// `entry` (claude shape) as Cursor holds it, or why it cannot hold it exactly.
pub(crate) fn to_cursor(name: &str, entry: &Entry) -> Result<Value, ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client: "cursor",
        name: name.to_string(),
        reason,
    };
    // JSON.parse keeps a "__proto__" key, but Cursor copies its servers into plain
    // objects, where that name sets the prototype (the real OpenCode drops such a server).
    node_json::refuse_proto("cursor", name, "Cursor", "it would not run it")?;
    let map = |what: String, s: &str| -> Result<String, ClientError> {
        map_refs(s, |n| format!("${{env:{n}}}"))
            .map_err(|r| refuse(format!("{what} holds {r}, which Cursor cannot express")))
    };
    let mut out = Map::new();
    let keys: (&[&str], &[&str]) = match &entry.transport {
        Transport::Stdio { command, args } => {
            file_backed::map_command(entry, command, args, &mut out, &map)?;
            (&["type", "command", "args", "env"], &["envFile"])
        }
        Transport::Remote { kind, url } => {
            if kind != "http" {
                return Err(refuse(format!(
                    "Cursor chooses the transport of a remote server itself (streamable HTTP, \
                     then SSE), so type {kind:?} cannot be pinned"
                )));
            }
            out.insert("url".into(), map("the url".into(), url)?.into());
            (&["type", "url", "headers"], &["auth"])
        }
    };
    file_backed::map_env_and_headers(entry, &mut out, &map, &refuse)?;
    file_backed::extra_keys(entry, keys, "Cursor", &refuse, |k, v| {
        out.insert(k.clone(), v.clone());
        Ok(())
    })?;
    Ok(Value::Object(out))
}

/// Every registration cursor reads, for prune ([`super::scopes`]): `~/.cursor/mcp.json` and `.cursor/mcp.json` from the working directory up.
pub(crate) fn scopes(found: &mut super::scopes::Found, cwd: Option<&std::path::Path>) {
    let user = config_path();
    found.add("cursor", &user, "user", read_user_entries(&user));
    for dir in cwd.iter().flat_map(|c| c.ancestors()) {
        let f = dir.join(".cursor/mcp.json");
        if f != user {
            found.add("cursor", &f, "project", read_user_entries(&f));
        }
    }
}

/// Cursor, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct CursorKind;

static ABOUT: super::table::About = super::table::about!(file cursor);

super::table::folder_kind!(CursorKind, about: ABOUT, layers: layers::read, writes: Cursor);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::{assert_refused, entry};
    use serde_json::json;

    /// The examples of Cursor's MCP page (docs.cursor.com/context/mcp, "Using mcp.json"), as
    /// published: a stdio server with `env`, a remote one with `headers` and `${env:...}`.
    const DOCUMENTED: &str = r#"{
  "mcpServers": {
    "server-name": {
      "command": "npx",
      "args": ["-y", "mcp-server"],
      "env": {
        "API_KEY": "value"
      }
    },
    "remote-server": {
      "url": "http://localhost:3000/mcp",
      "headers": {
        "Authorization": "Bearer ${env:MY_SERVICE_TOKEN}"
      }
    }
  }
}"#;

    #[test]
    fn the_documented_examples_read_in_the_claude_shape() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mcp.json");
        std::fs::write(&p, DOCUMENTED).unwrap();
        let m = read_user_entries(&p).unwrap();
        assert_eq!(
            m["server-name"],
            json!({"command":"npx","args":["-y","mcp-server"],"env":{"API_KEY":"value"}})
        );
        assert_eq!(
            m["remote-server"],
            json!({"type":"http","url":"http://localhost:3000/mcp",
                   "headers":{"Authorization":"Bearer ${MY_SERVICE_TOKEN}"}})
        );
        // And what mcp-deploy writes for them is the documented text's entries again.
        let doc: Value = serde_json::from_str(DOCUMENTED).unwrap();
        for (k, v) in &m {
            assert_eq!(
                to_cursor(k, &entry(v.clone())).unwrap(),
                doc["mcpServers"][k]
            );
        }
    }

    #[test]
    fn interpolation_maps_and_the_rest_is_refused_or_marked() {
        assert_eq!(
            to_cursor(
                "n",
                &entry(json!({"command":"/x","args":["${A}"],"env":{"T":"${T}"}}))
            )
            .unwrap(),
            json!({"command":"/x","args":["${env:A}"],"env":{"T":"${env:T}"}})
        );
        assert_refused(
            |e| to_cursor("n", e),
            [
                (
                    json!({"command":"/x","env":{"T":"${T:-hunter2}"}}),
                    "NAME:-default",
                ),
                (json!({"type":"sse","url":"https://h"}), "cannot be pinned"),
                (json!({"command":"/x","cwd":"/"}), "no key \"cwd\""),
            ],
        );
        let err = to_cursor("__proto__", &entry(json!({"command":"/x"}))).unwrap_err();
        assert!(err.to_string().contains("would not run it"), "{err}");
        let marked = to_claude(&json!({"command":"${userHome}/bin/x"}));
        assert!(marked.get("cursor-interpolation").is_some(), "{marked}");
        assert_eq!(
            to_claude(&json!({"type":"stdio","command":"/x"})),
            json!({"command":"/x"})
        );
    }
}
