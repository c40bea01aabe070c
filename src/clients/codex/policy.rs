//! codex's policy file: `/etc/codex/requirements.toml` (read as codex 0.171.0 reads it,
//! [`crate::clients::codex::layers`]; `codex-rs/config/src/mcp_requirements.rs`).
//!
//! - An `[mcp_servers.NAME]` table per server, `identity = { command = "..." }` for a stdio
//!   server, `identity = { url = "..." }` for an http one. Once the table exists, codex
//!   disables every configured server it does not name, and one whose effective `command`
//!   (or `url`) is not the identity's, string for string (`mcp_server_matches_requirement`).
//!   The arguments are not compared: an `args` key beside `command` is ignored (tried with
//!   the real codex), so the policy pins the program, not its command line ([`Pins::Command`]).
//! - codex ignores a key it does not know, in the file and in a server's table (tried: it
//!   loads and applies the rest), so what mcp-deploy made is marked in its own table:
//!   `managed_by = "mcp-deploy"`. A re-run removes only tables so marked that the
//!   declaration no longer derives, and changes only their identity. A table someone else
//!   wrote is never claimed nor removed; one naming a registered server with another
//!   command or url would make codex disable it, so the run refuses it (exit 2) rather than
//!   leave a policy that blocks the deployment.
//! - A file codex refuses ("failed to load bootstrap configuration": not TOML, an
//!   `mcp_servers` that is not a table, a server without an `identity` holding a `command`
//!   or `url` string) is refused here too, unchanged.
//! - The edit keeps every comment, key and table it does not touch (`toml_edit`). When it
//!   removes the last server, `[mcp_servers]` stays, empty: codex then admits no server,
//!   where a file without the table would admit every one.
//!
//! [`Pins::Command`]: crate::clients::policy::Pins::Command

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toml_edit::{DocumentMut, InlineTable, Item, Table};

use crate::clients::policy::{Allowed, Change, Edited, Pins, PolicyWriter};
use crate::entry::{Entry, Transport};
use crate::usage::UsageError;

/// codex's system directory on Linux (a fixed path in its code).
pub(crate) const ETC: &str = "/etc/codex";
const SERVERS: &str = "mcp_servers";
/// The key, and its value, that marks a server's table as mcp-deploy's.
const MARK: &str = "managed_by";
const BY: &str = "mcp-deploy";

pub(crate) fn requirements() -> PathBuf {
    Path::new(ETC).join("requirements.toml")
}

/// One server's identity: `{"command": ...}` or `{"url": ...}`.
pub(crate) fn entry(e: &Entry) -> Value {
    match &e.transport {
        Transport::Stdio { command, .. } => json!({ "command": command }),
        Transport::Remote { url, .. } => json!({ "url": url }),
    }
}

/// The tables the policy sets, as TOML to merge into the file (`--format file`).
pub(crate) fn fragment(servers: &[Allowed]) -> String {
    let mut doc = DocumentMut::new();
    let mut all = Table::new();
    all.set_implicit(true);
    for s in servers {
        all.insert(&s.name, Item::Table(server_table(&s.entry)));
    }
    doc.insert(SERVERS, Item::Table(all));
    doc.to_string()
}

fn server_table(identity: &Value) -> Table {
    let mut id = InlineTable::new();
    if let Some(map) = identity.as_object() {
        for (k, v) in map {
            id.insert(k, v.as_str().unwrap_or_default().into());
        }
    }
    let mut t = Table::new();
    t.insert("identity", toml_edit::value(id));
    t.insert(MARK, toml_edit::value(BY));
    t
}

fn bad(path: &Path, why: impl std::fmt::Display) -> UsageError {
    UsageError::new(
        format!("{}: {why}; nothing was written", path.display()),
        "fix the file by hand (codex refuses to load at all when requirements.toml is not TOML, \
         or names a server without an identity holding a command or a url string), then run \
         policy again",
    )
}

/// A server of the file as codex reads it: its identity and whether mcp-deploy made it.
struct Present {
    identity: Value,
    ours: bool,
}

/// The servers of `text`, refusing what codex refuses.
fn servers(path: &Path, text: &str) -> Result<Vec<(String, Present)>, UsageError> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        // Never the message: it quotes the offending line, which may hold a secret.
        let at = e
            .span()
            .map(|s| format!(" at line {}", text[..s.start].lines().count().max(1)))
            .unwrap_or_default();
        bad(path, format!("not TOML{at}"))
    })?;
    let Some(all) = doc.get(SERVERS) else {
        return Ok(Vec::new());
    };
    let Some(all) = all.as_table() else {
        return Err(bad(path, format!("{SERVERS} is not a table")));
    };
    let mut out = Vec::new();
    for (name, server) in all {
        let id = server.get("identity").and_then(toml::Value::as_table);
        let kind = |k: &str| id.and_then(|t| t.get(k)).and_then(toml::Value::as_str);
        let identity = match (kind("command"), kind("url")) {
            (Some(c), _) => json!({ "command": c }),
            (None, Some(u)) => json!({ "url": u }),
            (None, None) => {
                return Err(bad(
                    path,
                    format!("{SERVERS}.{name} has no identity with a `command` or a `url` string"),
                ))
            }
        };
        let ours = server.get(MARK).and_then(toml::Value::as_str) == Some(BY);
        out.push((name.clone(), Present { identity, ours }));
    }
    Ok(out)
}

fn reported(name: &str, identity: &Value) -> Value {
    json!({ "name": name, "identity": identity })
}

/// The file's new text for `wanted` (each server's registered name and identity), `None`
/// when nothing changes, and the change; `text`: the file's text, `None` when it does not
/// exist. Pure: the unit of the edit.
pub(crate) fn edit(
    path: &Path,
    text: Option<&str>,
    wanted: &[Allowed],
) -> Result<(Option<String>, Change), UsageError> {
    let source = text.unwrap_or("");
    let present = servers(path, source)?;
    let mut change = Change::new(path);
    let mut doc: DocumentMut = source
        .parse()
        .map_err(|_| bad(path, "not TOML as codex reads it"))?;
    let all = doc.entry(SERVERS).or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let inline = all.is_inline_table();
    let Some(all) = all.as_table_like_mut() else {
        return Err(bad(path, format!("{SERVERS} is not a table")));
    };
    for (name, p) in &present {
        if p.ours && !wanted.iter().any(|w| &w.name == name) {
            all.remove(name);
            change.removed.push(reported(name, &p.identity));
        }
    }
    for w in wanted {
        match present.iter().find(|(n, _)| n == &w.name) {
            None => {}
            Some((_, p)) if p.identity == w.entry => continue,
            Some((_, p)) if p.ours => change.removed.push(reported(&w.name, &p.identity)),
            Some((_, p)) => {
                return Err(UsageError::new(
                    format!(
                        "{}: [{SERVERS}.{}] names the identity {}, not the deployed {}, and \
                         mcp-deploy did not write it: codex would disable the deployed \
                         server; nothing was written",
                        path.display(),
                        w.name,
                        p.identity,
                        w.entry
                    ),
                    "remove that table or give it the deployed identity (mcp-deploy never \
                     changes an entry it did not make), then run policy again",
                ))
            }
        }
        let table = Item::Table(server_table(&w.entry));
        let item = match inline {
            true => table.into_value().map(Item::Value).unwrap_or(Item::None),
            false => table,
        };
        all.insert(&w.name, item);
        change.added.push(reported(&w.name, &w.entry));
    }
    if change.is_empty() {
        return Ok((None, change));
    }
    // An allowlist left empty stays one, admitting nothing: without its header codex would
    // read no allowlist at all, and admit every server.
    if let Some(t) = doc.get_mut(SERVERS).and_then(Item::as_table_mut) {
        if t.is_empty() {
            t.set_implicit(false);
        }
    }
    let new_text = doc.to_string();
    // What codex will read: every wanted server with its identity, the others as they were.
    let again = servers(path, &new_text).map_err(|e| {
        bad(
            path,
            format!("the edit does not load again ({e}): mcp-deploy's bug"),
        )
    })?;
    let mut expected: Vec<(&str, &Value)> = present
        .iter()
        .filter(|(n, p)| !p.ours || wanted.iter().any(|w| &w.name == n))
        .map(|(n, p)| (n.as_str(), &p.identity))
        .filter(|(n, _)| !wanted.iter().any(|w| w.name == *n))
        .chain(wanted.iter().map(|w| (w.name.as_str(), &w.entry)))
        .collect();
    let mut got: Vec<(&str, &Value)> = again
        .iter()
        .map(|(n, p)| (n.as_str(), &p.identity))
        .collect();
    expected.sort_by_key(|(n, _)| *n);
    got.sort_by_key(|(n, _)| *n);
    if got != expected {
        return Err(bad(
            path,
            "the edit changed more than the policy's tables: mcp-deploy's bug",
        ));
    }
    Ok((Some(new_text), change))
}

/// Codex's policy writer, the capability its kind gives ([`crate::clients::PolicyWriter`]).
pub(crate) struct Policy;

impl PolicyWriter for Policy {
    fn file(&self) -> PathBuf {
        requirements()
    }
    fn key(&self) -> &'static str {
        "[mcp_servers.NAME.identity]"
    }
    fn pins(&self) -> Pins {
        Pins::Command
    }
    fn entry(&self, _server: &str, _registered: &str, e: &Entry) -> Result<Value, UsageError> {
        Ok(entry(e))
    }
    fn edit(&self, path: &Path, old: Option<&str>, servers: &[Allowed]) -> Edited {
        edit(path, old, servers)
    }
    fn fragment(&self, servers: &[Allowed]) -> String {
        fragment(servers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> PathBuf {
        requirements()
    }

    fn wanted() -> Vec<Allowed> {
        vec![
            Allowed {
                name: "codetools-test".into(),
                entry: json!({"command": "/opt/codetools/bin/codetools"}),
            },
            Allowed {
                name: "web".into(),
                entry: json!({"url": "https://x/mcp"}),
            },
        ]
    }

    #[test]
    fn a_missing_file_gets_a_marked_table_per_server() {
        let (text, change) = edit(&p(), None, &wanted()).unwrap();
        let text = text.unwrap();
        assert_eq!(text, fragment(&wanted()));
        assert!(
            text.contains(
                "[mcp_servers.codetools-test]\nidentity = { command = \"/opt/codetools/bin/codetools\" }\nmanaged_by = \"mcp-deploy\"\n"
            ),
            "{text}"
        );
        assert_eq!(change.added.len(), 2);
        let (again, change) = edit(&p(), Some(&text), &wanted()).unwrap();
        assert_eq!(again, None);
        assert!(change.is_empty());
    }

    #[test]
    fn comments_other_keys_and_tables_stay_and_an_equal_entry_of_someone_else_is_not_claimed() {
        let start = "# site policy\nallowed_approval_policies = [\"never\"] # inline\n\n[mcp_servers.theirs.identity]\ncommand = \"/bin/cat\"\n\n[mcp_servers.web.identity]\nurl = \"https://x/mcp\"\n";
        let (text, change) = edit(&p(), Some(start), &wanted()).unwrap();
        let text = text.unwrap();
        assert!(text.starts_with(start), "{text}");
        assert_eq!(change.added.len(), 1, "{change:?}");
        // Without codetools wanted, only its table goes; theirs and web stay.
        let (text, change) = edit(&p(), Some(&text), &[]).unwrap();
        assert_eq!(text.unwrap(), start);
        assert_eq!(change.removed.len(), 1);
    }

    #[test]
    fn an_entry_of_ours_follows_the_declaration() {
        let (text, _) = edit(&p(), None, &wanted()).unwrap();
        let mut moved = wanted();
        moved[0].entry = json!({"command": "/opt/codetools/bin/other"});
        let (text, change) = edit(&p(), Some(&text.unwrap()), &moved).unwrap();
        assert!(text.unwrap().contains("/opt/codetools/bin/other"));
        assert_eq!((change.added.len(), change.removed.len()), (1, 1));
    }

    #[test]
    fn an_entry_of_someone_else_naming_another_command_is_refused() {
        let start = "[mcp_servers.codetools-test.identity]\ncommand = \"/usr/bin/evil\"\n";
        let e = edit(&p(), Some(start), &wanted()).unwrap_err();
        assert!(e.message.contains("mcp-deploy did not write it"), "{e}");
    }

    #[test]
    fn what_codex_refuses_is_refused() {
        for bad in [
            "mcp_servers = 1",
            "[mcp_servers.x]\nenabled = true\n",
            "[mcp_servers.x.identity]\ncommand = 5\n",
            "not toml [",
        ] {
            let e = edit(&p(), Some(bad), &wanted()).unwrap_err();
            assert!(e.message.contains("nothing was written"), "{bad}: {e}");
            assert!(e.help.contains("codex refuses"), "{}", e.help);
        }
    }

    #[test]
    fn removing_the_last_server_leaves_an_empty_allowlist_not_none() {
        let (text, _) = edit(&p(), None, &wanted()).unwrap();
        let (text, change) = edit(&p(), Some(&text.unwrap()), &[]).unwrap();
        assert_eq!(change.removed.len(), 2);
        let text = text.unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(
            doc["mcp_servers"].as_table().map(|t| t.len()),
            Some(0),
            "{text}"
        );
    }

    #[test]
    fn an_inline_servers_table_gets_inline_entries() {
        let start = "mcp_servers = { theirs = { identity = { command = \"/bin/cat\" } } }\n";
        let (text, _) = edit(&p(), Some(start), &wanted()).unwrap();
        let text = text.unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(doc["mcp_servers"].as_table().unwrap().len(), 3, "{text}");
    }
}
