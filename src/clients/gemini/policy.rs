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

use jsonc_parser::cst::CstRootNode;
use jsonc_parser::ParseOptions;
use serde_json::{json, Map, Value};

use crate::clients::policy::{merge_owned, set_prop, strict, with_bom, Change, Pins, PolicyWriter};
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

/// The value the file holds (`None`: none, or one JSON cannot hold).
fn value_of(root: &CstRootNode) -> Option<Value> {
    root.value().and_then(|v| v.to_serde_value())
}

fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        ..strict()
    }
}

fn bad(path: &Path, why: impl std::fmt::Display) -> UsageError {
    UsageError::new(
        format!("{}: {why}; nothing was written", path.display()),
        "fix the file by hand (gemini reads it as JSON with comments: no trailing commas, an \
         object at the top level), then run policy again",
    )
}

fn names_of(
    doc: &Map<String, Value>,
    key: &str,
    what: &str,
    path: &Path,
) -> Result<Vec<Value>, UsageError> {
    match doc.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(a.clone()),
        Some(_) => Err(bad(path, format!("\"{what}\" is not an array of names"))),
    }
}

/// The file's new text for `wanted` (the registered names), `None` when nothing changes, and
/// the change; `text`: the file's text, `None` when it does not exist. Pure: the unit of the
/// edit.
pub(crate) fn edit(
    path: &Path,
    text: Option<&str>,
    wanted: &[Value],
) -> Result<(Option<String>, Change), UsageError> {
    let source = text.unwrap_or("{}\n");
    let root = CstRootNode::parse(source, &options())
        .map_err(|e| bad(path, format!("not JSON with comments ({})", e.kind())))?;
    let Some(Value::Object(doc)) = value_of(&root) else {
        return Err(bad(path, "the top level is not an object"));
    };
    let mcp = match doc.get(MCP) {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(bad(path, "\"mcp\" is not an object")),
    };
    let list = names_of(&mcp, LIST, "mcp.allowed", path)?;
    let ours = names_of(&doc, OURS, OURS, path)?;
    let mut change = Change::new(path);
    let (new_list, new_ours, added, removed) = merge_owned(&list, &ours, wanted);
    change.added = added;
    change.removed = removed;
    change.record = doc.get(OURS) != Some(&Value::Array(new_ours.clone()));
    let mut new_mcp = mcp.clone();
    new_mcp.insert(LIST.into(), Value::Array(new_list.clone()));
    let mut expected = doc.clone();
    expected.insert(MCP.into(), Value::Object(new_mcp));
    expected.insert(OURS.into(), Value::Array(new_ours.clone()));
    if expected == doc && text.is_some() {
        return Ok((None, change));
    }
    let top = root.object_value_or_set();
    let Some(mcp_node) = top.object_value_or_create(MCP) else {
        return Err(bad(path, "\"mcp\" is not an object"));
    };
    set_prop(&mcp_node, &mcp, LIST, &Value::Array(new_list));
    set_prop(&top, &doc, OURS, &Value::Array(new_ours));
    let new_text = with_bom(source, &root);
    let again = CstRootNode::parse(&new_text, &options())
        .ok()
        .and_then(|r| value_of(&r));
    if again != Some(Value::Object(expected)) {
        return Err(bad(
            path,
            "the edit changed more than the policy's keys: mcp-deploy's bug",
        ));
    }
    Ok((Some(new_text), change))
}

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
    crate::clients::policy::json_edits!();
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
        let (text, change) = edit(&p(), None, &wanted()).unwrap();
        let text = text.unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc, fragment(&wanted()));
        assert_eq!(change.added, wanted());
        let (again, change) = edit(&p(), Some(&text), &wanted()).unwrap();
        assert_eq!(again, None);
        assert!(change.is_empty());
    }

    #[test]
    fn comments_and_other_keys_stay_and_a_name_someone_else_listed_is_never_claimed() {
        let start = "{\n  // the site's own\n  \"mcp\": {\"allowed\": [\"theirs\", \"codetools-test\"], \"excluded\": []},\n  \"ui\": {\"theme\": \"x\"} /* end */\n}\n";
        let (text, change) = edit(&p(), Some(start), &wanted()).unwrap();
        let text = text.unwrap();
        assert!(text.contains("// the site's own"), "{text}");
        assert!(text.contains("/* end */"), "{text}");
        assert_eq!(change.added, vec![json!("orchestrata-test")]);
        let (text, change) = edit(&p(), Some(&text), &[]).unwrap();
        assert_eq!(change.removed, vec![json!("orchestrata-test")]);
        let doc = value_of(&CstRootNode::parse(&text.unwrap(), &options()).unwrap()).unwrap();
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
            let e = edit(&p(), Some(bad), &wanted()).unwrap_err();
            assert!(e.message.contains("nothing was written"), "{bad}: {e}");
            assert!(e.help.contains("JSON with comments"), "{}", e.help);
        }
    }
}
