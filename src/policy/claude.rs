//! Claude Code's policy file: `/etc/claude-code/managed-settings.json`, key
//! `allowedMcpServers` (read as claude 2.1.332 reads it, [`crate::clients::layers::claude`]).
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
//! The write ([`write`]): under a lock (`/etc/claude-code/.mcp-deploy/policy.lock`), the old
//! text journalled first (`policy.journal.json` beside it: an interrupted run is rolled back
//! by the next), then the file replaced atomically (temp file, fsync, rename, directory
//! fsync), read back and compared; on any failure the old text is put back.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstRootNode;
use jsonc_parser::ParseOptions;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{Allowlist, PolicyError};
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
pub(crate) fn fragment(list: &Allowlist) -> Value {
    let entries: Vec<Value> = list.servers.iter().map(|s| s.entry.clone()).collect();
    json!({ LIST: entries, ONLY: true, OURS: entries })
}

/// What `--write` changes in the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Change {
    pub(crate) file: PathBuf,
    pub(crate) added: Vec<Value>,
    pub(crate) removed: Vec<Value>,
    /// `allowManagedMcpServersOnly` set to true.
    pub(crate) managed_only: bool,
    /// Only the record of what mcp-deploy made changes (an entry it made that someone else
    /// also lists, or one it made and finds already there).
    pub(crate) record: bool,
}

impl Change {
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && !self.managed_only && !self.record
    }
}

fn strict() -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_trailing_commas: false,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
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
    let mut change = Change {
        file: path.to_path_buf(),
        ..Change::default()
    };
    // Ours no longer derived go; everything else stays, in its order.
    let mut new_list: Vec<Value> = Vec::new();
    for e in &list {
        if ours.contains(e) && !wanted.contains(e) {
            change.removed.push(e.clone());
        } else {
            new_list.push(e.clone());
        }
    }
    // An entry someone else wrote stays theirs; ours are those we add or had made.
    let mut new_ours = Vec::new();
    for w in wanted {
        let present = new_list.contains(w);
        if !present {
            new_list.push(w.clone());
            change.added.push(w.clone());
        }
        if !present || ours.contains(w) {
            new_ours.push(w.clone());
        }
    }
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
        let input = crate::clients::file_backed::to_input(&value);
        if doc.get(key) == Some(&value) {
            continue;
        }
        match top.get(key) {
            Some(prop) => prop.set_value(input),
            None => {
                top.append(key, input);
            }
        }
    }
    let new_text = match source.starts_with('\u{feff}') {
        true => format!("\u{feff}{root}"),
        false => root.to_string(),
    };
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

/// The journal of a write under way: the file and its text before (`None`: it did not exist).
#[derive(serde::Serialize, serde::Deserialize)]
struct Journal {
    file: PathBuf,
    old: Option<String>,
}

/// What [`write`] needs besides the entries.
pub(crate) struct WriteOptions<'a> {
    /// The managed directory (`/etc/claude-code`; a test's own in unit tests).
    pub(crate) dir: &'a Path,
    pub(crate) dry_run: bool,
    pub(crate) lock_timeout: std::time::Duration,
}

/// Put `wanted` into `<dir>/managed-settings.json` (see the module's header); with
/// `dry_run`, only say what would change. Returns the change and whether it was written.
pub(crate) fn write(
    opts: &WriteOptions,
    wanted: &[Value],
    notify: &impl Fn(crate::notice::Notice),
) -> Result<(Change, bool), PolicyError> {
    let path = opts.dir.join("managed-settings.json");
    if opts.dry_run {
        let (text, change) = edit(&path, read(&path)?.as_deref(), wanted)?;
        let _ = text;
        return Ok((change, false));
    }
    let denied = |e: &crate::fsio::IoError| -> UsageError {
        UsageError::new(
            format!("cannot write {}: {}", path.display(), e),
            match e.source.kind() {
                std::io::ErrorKind::PermissionDenied => format!(
                    "writing {} takes root: run `sudo mcp-deploy policy --write ...`, or print \
                     the fragment with --format file and install it with your configuration \
                     management",
                    opts.dir.display()
                ),
                _ => "check the directory, then run policy --write again".to_string(),
            },
        )
    };
    let lock_path = crate::state::file(opts.dir, "policy.lock").map_err(|e| denied(&e))?;
    let journal = crate::state::file(opts.dir, "policy.journal.json").map_err(|e| denied(&e))?;
    let _lock = crate::registration::lock::Lock::acquire(&lock_path, opts.lock_timeout, |h| {
        notify(crate::notice::Notice::LockWait {
            path: lock_path.clone(),
            holder: h.to_string(),
            timeout: opts.lock_timeout,
        })
    })?;
    if let Some(j) = read(&journal)? {
        let j: Journal = serde_json::from_str(&j)
            .map_err(|e| bad(&journal, format!("not a policy journal ({e})")))?;
        // It restores one file only: the one this run writes.
        if j.file != path {
            return Err(bad(
                &journal,
                format!("it journals {}, not this file", j.file.display()),
            )
            .into());
        }
        restore(&j, &denied)?;
        notify(crate::notice::Notice::Recovery(format!(
            "an interrupted policy --write was rolled back: {} is as it was before it",
            j.file.display()
        )));
        remove(&journal, &denied)?;
    }
    let old = read(&path)?;
    let (text, change) = edit(&path, old.as_deref(), wanted)?;
    let Some(text) = text else {
        return Ok((change, false));
    };
    let entry = Journal {
        file: path.clone(),
        old: old.clone(),
    };
    let body = serde_json::to_vec(&entry).expect("a journal serialises");
    crate::fsio::write_atomic(&journal, &body, true).map_err(|e| denied(&e))?;
    crate::registration::transaction::checkpoint("policy-journal-written");
    // Check again: a program that rewrote the file since it was read keeps its change, and
    // this run writes nothing (its edit was made on the text it read).
    if read(&path)? != old {
        remove(&journal, &denied)?;
        return Err(UsageError::new(
            format!(
                "{} changed while mcp-deploy was editing it: another program wrote it, and \
                 nothing was written over its change",
                path.display()
            ),
            "run policy --write again (it edits the file as it is then)",
        )
        .into());
    }
    let done = put(&path, Some(&text), &denied).and_then(|()| match read(&path)? {
        Some(back) if back == text => Ok(()),
        _ => Err(bad(&path, "it does not hold what was just written to it").into()),
    });
    if let Err(e) = done {
        restore(&entry, &denied)?;
        remove(&journal, &denied)?;
        return Err(e);
    }
    crate::registration::transaction::checkpoint("policy-written");
    remove(&journal, &denied)?;
    Ok((change, true))
}

fn read(path: &Path) -> Result<Option<String>, UsageError> {
    crate::fsio::read_input_if_exists(path, "managed settings", crate::fsio::limits::CLIENT_JSONC)
        .map_err(|e| bad(path, &e))
}

/// Write `text` to `path` atomically, keeping the mode of a file that is there (a new one
/// 0644: every user's claude reads it); `None`: remove it.
fn put(
    path: &Path,
    text: Option<&str>,
    denied: &impl Fn(&crate::fsio::IoError) -> UsageError,
) -> Result<(), PolicyError> {
    use std::os::unix::fs::PermissionsExt;
    let Some(text) = text else {
        return remove(path, denied);
    };
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = match std::fs::canonicalize(path) {
        Ok(t) => t,
        // A dangling link: the file it names is not ours to create.
        Err(_) if link => {
            return Err(bad(path, "it is a symlink to a file that does not exist").into())
        }
        Err(_) => path.to_path_buf(),
    };
    let mode = std::fs::metadata(&target).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    crate::fsio::write_atomic_mode(&target, text.as_bytes(), mode).map_err(|e| denied(&e))?;
    Ok(())
}

fn restore(
    j: &Journal,
    denied: &impl Fn(&crate::fsio::IoError) -> UsageError,
) -> Result<(), PolicyError> {
    put(&j.file, j.old.as_deref(), denied)
}

fn remove(
    path: &Path,
    denied: &impl Fn(&crate::fsio::IoError) -> UsageError,
) -> Result<(), PolicyError> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(denied(&crate::fsio::IoError::new("cannot remove", path, e)).into()),
    }
    if let Some(dir) = path.parent() {
        crate::fsio::sync_dir(dir).map_err(|e| denied(&e))?;
    }
    Ok(())
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
