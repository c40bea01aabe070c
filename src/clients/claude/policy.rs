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

use serde_json::{json, Value};

use crate::clients::policy::{JsonPolicy, Pins, PolicyWriter, Syntax};
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

/// The list, the switch and the record, in the file claude reads with `JSON.parse`.
const POLICY: JsonPolicy = JsonPolicy {
    within: None,
    list: LIST,
    named: LIST,
    names_only: false,
    ours: OURS,
    switch: Some(ONLY),
    syntax: Syntax::Json,
    help: "fix the file by hand (claude reads it with JSON.parse: no comments, no trailing \
           commas), then run policy again",
};

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
    crate::clients::policy::json_edits!(POLICY);
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
        let (text, change) = POLICY.edit(&p(), None, &wanted()).unwrap();
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
        let (text, _) = POLICY.edit(&p(), Some(start), &wanted()).unwrap();
        let text = text.unwrap();
        assert!(text.starts_with("{\n  \"model\": \"opus\",\n"), "{text}");
        let (again, change) = POLICY.edit(&p(), Some(&text), &wanted()).unwrap();
        assert_eq!(again, None);
        assert!(change.is_empty());
    }

    #[test]
    fn a_byte_order_mark_stays() {
        let (text, _) = POLICY.edit(&p(), Some("\u{feff}{}"), &wanted()).unwrap();
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
            let e = POLICY.edit(&p(), Some(bad), &wanted()).unwrap_err();
            assert!(e.message.contains("nothing was written"), "{bad}: {e}");
            assert!(e.help.contains("JSON.parse"), "{}", e.help);
        }
    }

    #[test]
    fn an_entry_someone_else_wrote_is_never_claimed_nor_removed() {
        let start = json!({LIST: wanted()}).to_string();
        let (text, change) = POLICY.edit(&p(), Some(&start), &wanted()).unwrap();
        assert!(change.added.is_empty());
        let doc: Value = serde_json::from_str(&text.unwrap()).unwrap();
        assert_eq!(doc[OURS], json!([]));
        let (text, change) = POLICY.edit(&p(), Some(&doc.to_string()), &[]).unwrap();
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
