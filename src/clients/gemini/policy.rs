//! gemini's policy file: the system settings, `$GEMINI_CLI_SYSTEM_SETTINGS_PATH` when set
//! and not empty, else `/etc/gemini-cli/settings.json` (gemini 0.61.0's bundle,
//! `getSystemSettingsPath`), key `mcp.allowed` (read as [`crate::clients::gemini::layers`]
//! reads it).
//!
//! - `mcp.allowed` lists server names only: gemini runs a server whose name is in it,
//!   whatever its command ([`Pins::Name`]). The lists of every settings file that has one
//!   are intersected (`getConsolidatedAllowedMcpServers`): a user's or a project's own list
//!   can only narrow the system one, never admit a name it leaves out.
//! - What mcp-deploy made is recorded under `mcpDeployAllowed` at the top level (gemini's
//!   settings schema passes a key it does not know through). A re-run removes only names
//!   listed there that the declaration no longer derives, and claims none someone else
//!   wrote. Comments, every other key, and the formatting stay (a CST edit).
//! - gemini reads the file with comments stripped, then `JSON.parse`: comments are kept, a
//!   trailing comma or a top level that is not an object is refused, unchanged.
//!
//! [`Pins::Name`]: crate::clients::policy::Pins::Name

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::clients::policy::{JsonPolicy, Pins, PolicyWriter, Syntax};
use crate::entry::Entry;
use crate::usage::UsageError;

const MCP: &str = "mcp";
const LIST: &str = "allowed";
/// Where mcp-deploy records the names it put in `mcp.allowed`.
const OURS: &str = "mcpDeployAllowed";

pub(crate) fn system_settings() -> PathBuf {
    crate::dirs::var("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"))
}

/// gemini skips a system settings file that is not root's alone, or that others could
/// replace (`isFileAndDirectorySecureSync`): a policy written there would not count, so the
/// write is refused (exit 2) before anything is written.
pub(crate) fn check_counted(file: &Path) -> Result<(), UsageError> {
    if crate::clients::gemini::layers::secure_once_written(file) {
        return Ok(());
    }
    Err(UsageError::new(
        format!(
            "{}: gemini skips a system settings file that is not root's, or that a user other \
             than root could replace (it or a directory above it writable by group or others): \
             the policy would not count; nothing was written",
            file.display()
        ),
        "point GEMINI_CLI_SYSTEM_SETTINGS_PATH at a file in a directory only root can write \
         (the default is /etc/gemini-cli/settings.json), then run policy again",
    ))
}

/// The keys the policy sets, as a fragment to merge into the file (`--format file`).
pub(crate) fn fragment(names: &[Value]) -> Value {
    json!({ MCP: { LIST: names }, OURS: names })
}

/// The names in `mcp.allowed` and the record, in the file gemini reads as JSON with comments.
const POLICY: JsonPolicy = JsonPolicy {
    within: Some(MCP),
    list: LIST,
    named: "mcp.allowed",
    names_only: true,
    ours: OURS,
    switch: None,
    syntax: Syntax::JsonWithComments,
    help: "fix the file by hand (gemini reads it as JSON with comments: no trailing commas, an \
           object at the top level), then run policy again",
};

/// Gemini's policy writer, the capability its kind gives ([`crate::clients::PolicyWriter`]).
pub(crate) struct Policy;

impl PolicyWriter for Policy {
    fn check_counted(&self, file: &Path) -> Result<(), UsageError> {
        check_counted(file)
    }
    fn file(&self) -> PathBuf {
        system_settings()
    }
    fn key(&self) -> &'static str {
        "mcp.allowed"
    }
    fn pins(&self) -> Pins {
        Pins::Name
    }
    fn entry(&self, _server: &str, registered: &str, _e: &Entry) -> Result<Value, UsageError> {
        Ok(Value::String(registered.to_string()))
    }
    crate::clients::policy::json_edits!(POLICY);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> PathBuf {
        PathBuf::from("/etc/gemini-cli/settings.json")
    }

    fn wanted() -> Vec<Value> {
        vec![json!("codetools-test"), json!("orchestrata-test")]
    }

    #[test]
    fn a_missing_file_gets_the_names_and_the_record_and_a_rerun_changes_nothing() {
        let (text, change) = POLICY.edit(&p(), None, &wanted()).unwrap();
        let text = text.unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc, fragment(&wanted()));
        assert_eq!(change.added, wanted());
        let (again, change) = POLICY.edit(&p(), Some(&text), &wanted()).unwrap();
        assert_eq!(again, None);
        assert!(change.is_empty());
    }

    #[test]
    fn comments_and_other_keys_stay_and_a_name_someone_else_listed_is_never_claimed() {
        let start = "{\n  // the site's own\n  \"mcp\": {\"allowed\": [\"theirs\", \"codetools-test\"], \"excluded\": []},\n  \"ui\": {\"theme\": \"x\"} /* end */\n}\n";
        let (text, change) = POLICY.edit(&p(), Some(start), &wanted()).unwrap();
        let text = text.unwrap();
        assert!(text.contains("// the site's own"), "{text}");
        assert!(text.contains("/* end */"), "{text}");
        assert_eq!(change.added, vec![json!("orchestrata-test")]);
        let (text, change) = POLICY.edit(&p(), Some(&text), &[]).unwrap();
        assert_eq!(change.removed, vec![json!("orchestrata-test")]);
        let (doc, _) = POLICY.parse(&text.unwrap()).unwrap();
        assert_eq!(doc["mcp"]["allowed"], json!(["theirs", "codetools-test"]));
        assert_eq!(doc["mcp"]["excluded"], json!([]));
    }

    #[test]
    fn what_gemini_would_not_parse_or_a_list_of_another_type_is_refused() {
        for bad in [
            "{\"a\": 1,}",
            "[]",
            "{\"mcp\": []}",
            "{\"mcp\": {\"allowed\": \"x\"}}",
            "{\"mcp\": {\"allowed\": [1]}}",
            "{\"mcpDeployAllowed\": {}}",
        ] {
            let e = POLICY.edit(&p(), Some(bad), &wanted()).unwrap_err();
            assert!(e.message.contains("nothing was written"), "{bad}: {e}");
            assert!(e.help.contains("JSON with comments"), "{}", e.help);
        }
    }
}
