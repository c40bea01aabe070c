//! Claude Code's policy file: `/etc/claude-code/managed-settings.json`, key
//! `allowedMcpServers` (read as claude 2.1.332 reads it, [`crate::clients::claude::layers`]).
//!
//! - An entry per server: `{"serverCommand": [command, ...args]}` (claude compares the array
//!   element by element with the server's), `{"serverUrl": url}` for an http server (a `*`
//!   pattern in claude; a declared URL holding `*` would admit more, and is refused).
//! - `allowManagedMcpServersOnly: true` is set beside it: without it claude merges the
//!   user's and the project's own `allowedMcpServers` into the list, and a user could admit
//!   any command.
//! - What mcp-deploy made is recorded in the same file, under `mcpDeployAllowedMcpServers`
//!   (claude ignores a key it does not know): a re-run removes only entries listed there that
//!   the declaration no longer derives, and claims none that someone else wrote. Every other
//!   key and entry, and the file's formatting, stay as they were (a CST edit).
//! - claude parses the file with `JSON.parse`: a comment makes it refuse the whole file and
//!   print "Managed settings document could not be parsed", so such a file is refused here
//!   too, unchanged.
//!
//! The write is `policy::write`'s, with the lock and journal in
//! `/etc/claude-code/.mcp-deploy/`.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstRootNode;
use serde_json::{json, Map, Value};

use crate::clients::policy::{merge_owned, set_prop, strict, with_bom, Change, Pins, PolicyWriter};
use crate::entry::{Entry, Transport};
use crate::usage::UsageError;

/// Claude Code's managed directory on Linux.
pub(crate) const MANAGED_DIR: &str = "/etc/claude-code";
const LIST: &str = "allowedMcpServers";
const ONLY: &str = "allowManagedMcpServersOnly";
/// Where mcp-deploy records the entries it made.
pub(crate) const OURS: &str = "mcpDeployAllowedMcpServers";

pub(crate) fn managed_settings() -> PathBuf {
    Path::new(MANAGED_DIR).join("managed-settings.json")
}

/// One server's `allowedMcpServers` entry.
pub(crate) fn entry(server: &str, e: &Entry) -> Result<Value, UsageError> {
    Ok(match &e.transport {
        Transport::Stdio { command, args } => {
            let mut line = vec![command.clone()];
            line.extend(args.iter().cloned());
            // claude compares serverCommand with the command line after expanding its
            // `${VAR}`s (docs/clients.md, the Claude layers): a reference written into the
            // list would never match, and the server would be refused.
            if let Some(i) = line.iter().position(|a| a.contains("${")) {
                let what = match i {
                    0 => "command".to_string(),
                    i => format!("argument {i}"),
                };
                return Err(UsageError::new(
                    format!(
                        "{server}'s {what} holds a ${{...}} reference, which claude expands \
                         before it matches serverCommand: the allowlist entry would never match"
                    ),
                    "declare that argument without a variable, or write that allowlist entry by \
                     hand with the value it has on this host",
                ));
            }
            json!({ "serverCommand": line })
        }
        Transport::Remote { url, .. } if url.contains('*') => {
            return Err(UsageError::new(
                format!("{server}'s url holds a `*`, which claude's serverUrl reads as a wildcard"),
                "declare the url without `*`, or write that allowlist entry by hand",
            ))
        }
        Transport::Remote { url, .. } => json!({ "serverUrl": url }),
    })
}

/// The keys the policy sets, as a fragment to merge into the file (`--format file`).
pub(crate) fn fragment(entries: &[Value]) -> Value {
    json!({ LIST: entries, ONLY: true, OURS: entries })
}

fn bad(path: &Path, why: impl std::fmt::Display) -> UsageError {
    UsageError::new(
        format!("{}: {why}; nothing was written", path.display()),
        "fix the file by hand (claude reads it with JSON.parse: no comments, no trailing \
         commas), then run policy again",
    )
}

fn array_of(doc: &Map<String, Value>, key: &str, path: &Path) -> Result<Vec<Value>, UsageError> {
    match doc.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(_) => Err(bad(path, format!("\"{key}\" is not an array"))),
    }
}

/// The file's new text for `wanted` (the derived entries), `None` when nothing changes, and
/// the change; `text`: the file's text, `None` when it does not exist. Pure: the unit of the
/// edit.
pub(crate) fn edit(
    path: &Path,
    text: Option<&str>,
    wanted: &[Value],
) -> Result<(Option<String>, Change), UsageError> {
    let source = text.unwrap_or("{}\n");
    let body = source.strip_prefix('\u{feff}').unwrap_or(source);
    let doc: Value =
        serde_json::from_str(body).map_err(|e| bad(path, format!("not JSON ({e})")))?;
    let Value::Object(doc) = doc else {
        return Err(bad(path, "the top level is not an object"));
    };
    let list = array_of(&doc, LIST, path)?;
    let ours = array_of(&doc, OURS, path)?;
    let mut change = Change::new(path);
    let (new_list, new_ours, added, removed) = merge_owned(&list, &ours, wanted);
    change.added = added;
    change.removed = removed;
    change.managed_only = doc.get(ONLY) != Some(&Value::Bool(true));
    let mut expected = doc.clone();
    expected.insert(LIST.into(), Value::Array(new_list.clone()));
    expected.insert(ONLY.into(), Value::Bool(true));
    expected.insert(OURS.into(), Value::Array(new_ours.clone()));
    change.record = doc.get(OURS) != Some(&Value::Array(new_ours.clone()));
    if expected == doc && text.is_some() {
        return Ok((None, change));
    }
    let root = CstRootNode::parse(body, &strict()).map_err(|e| bad(path, e.kind()))?;
    let top = root.object_value_or_set();
    for (key, value) in [
        (LIST, Value::Array(new_list)),
        (ONLY, Value::Bool(true)),
        (OURS, Value::Array(new_ours)),
    ] {
        set_prop(&top, &doc, key, &value);
    }
    let new_text = with_bom(source, &root);
    let again: Value =
        serde_json::from_str(new_text.trim_start_matches('\u{feff}')).map_err(|e| {
            bad(
                path,
                format!("the edit does not parse again ({e}): mcp-deploy's bug"),
            )
        })?;
    if again != Value::Object(expected) {
        return Err(bad(
            path,
            "the edit changed more than the policy's keys: mcp-deploy's bug",
        ));
    }
    Ok((Some(new_text), change))
}

/// Claude's policy writer, the capability its kind gives ([`crate::clients::PolicyWriter`]).
pub(crate) struct Policy;

impl PolicyWriter for Policy {
    fn file(&self) -> PathBuf {
        managed_settings()
    }
    fn key(&self) -> &'static str {
        LIST
    }
    fn pins(&self) -> Pins {
        Pins::CommandLine
    }
    fn entry(&self, server: &str, _registered: &str, e: &Entry) -> Result<Value, UsageError> {
        entry(server, e)
    }
    crate::clients::policy::json_edits!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> PathBuf {
        PathBuf::from("/etc/claude-code/managed-settings.json")
    }

    fn wanted() -> Vec<Value> {
        vec![json!({"serverCommand": ["/opt/codetools/bin/codetools", "mcp", "serve"]})]
    }

    #[test]
    fn a_missing_file_gets_the_list_the_managed_only_switch_and_the_record() {
        let (text, change) = edit(&p(), None, &wanted()).unwrap();
        let doc: Value = serde_json::from_str(&text.unwrap()).unwrap();
        assert_eq!(doc[LIST], json!(wanted()));
        assert_eq!(doc[ONLY], true);
        assert_eq!(doc[OURS], json!(wanted()));
        assert_eq!(change.added, wanted());
        assert!(change.managed_only);
    }

    #[test]
    fn an_edited_file_edited_again_is_unchanged() {
        let start = "{\n  \"model\": \"opus\",\n  \"allowedMcpServers\": [\n    {\"serverName\": \"x\"}\n  ]\n}\n";
        let (text, _) = edit(&p(), Some(start), &wanted()).unwrap();
        let text = text.unwrap();
        assert!(text.starts_with("{\n  \"model\": \"opus\",\n"), "{text}");
        let (again, change) = edit(&p(), Some(&text), &wanted()).unwrap();
        assert_eq!(again, None);
        assert!(change.is_empty());
    }

    #[test]
    fn a_byte_order_mark_stays() {
        let (text, _) = edit(&p(), Some("\u{feff}{}"), &wanted()).unwrap();
        assert!(text.unwrap().starts_with('\u{feff}'));
    }

    #[test]
    fn what_claude_would_not_parse_or_a_list_of_another_type_is_refused() {
        for bad in [
            "{// note\n}",
            "{\"a\": 1,}",
            "[]",
            "{\"allowedMcpServers\": {}}",
            "{\"mcpDeployAllowedMcpServers\": 1}",
        ] {
            let e = edit(&p(), Some(bad), &wanted()).unwrap_err();
            assert!(e.message.contains("nothing was written"), "{bad}: {e}");
            assert!(e.help.contains("JSON.parse"), "{}", e.help);
        }
    }

    #[test]
    fn an_entry_someone_else_wrote_is_never_claimed_nor_removed() {
        let start = json!({LIST: wanted()}).to_string();
        let (text, change) = edit(&p(), Some(&start), &wanted()).unwrap();
        assert!(change.added.is_empty());
        let doc: Value = serde_json::from_str(&text.unwrap()).unwrap();
        assert_eq!(doc[OURS], json!([]));
        let (text, change) = edit(&p(), Some(&doc.to_string()), &[]).unwrap();
        assert!(change.removed.is_empty());
        let doc: Value = serde_json::from_str(&text.unwrap_or(doc.to_string())).unwrap();
        assert_eq!(doc[LIST], json!(wanted()));
    }

    #[test]
    fn a_variable_in_the_command_line_is_refused_naming_where() {
        let e = Entry::from_value(&json!({"command": "/opt/x/bin/x", "args": ["--t", "${T}"]}))
            .unwrap();
        let err = entry("x", &e).unwrap_err().to_string();
        assert!(
            err.contains("x's argument 2 holds a ${...} reference"),
            "{err}"
        );
        let e =
            Entry::from_value(&json!({"command": "/opt/x/bin/x", "args": ["--t", "v"]})).unwrap();
        assert_eq!(
            entry("x", &e).unwrap(),
            json!({"serverCommand": ["/opt/x/bin/x", "--t", "v"]})
        );
    }

    #[test]
    fn a_url_is_its_own_pattern_and_one_with_a_wildcard_is_refused() {
        let e = crate::entry::Entry::from_value(&json!({"type": "http", "url": "https://x/mcp"}))
            .unwrap();
        assert_eq!(
            entry("s", &e).unwrap(),
            json!({"serverUrl": "https://x/mcp"})
        );
        let e = crate::entry::Entry::from_value(&json!({"type": "http", "url": "https://*/mcp"}))
            .unwrap();
        assert!(entry("s", &e).unwrap_err().message.contains("wildcard"));
    }
}
