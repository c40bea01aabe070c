//! What a client's policy writer ([`PolicyWriter`], the optional capability
//! [`super::table::Kind::policy`]) is made of, the same for every client: an allowlist line
//! ([`Allowed`]), what a policy pins ([`Pins`]), what a write changes ([`Change`]) and the
//! merge of the entries mcp-deploy owns ([`merge_owned`]); and the strict-JSON CST edits the
//! JSON clients share ([`strict`], [`set_prop`], [`with_bom`]). The write itself (lock,
//! journal, atomic replace) is `policy::write`'s, above the clients.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::entry::Entry;
use crate::usage::UsageError;

/// A policy file's new text (`None`: nothing changes) and the change, or why it cannot be
/// edited.
pub(crate) type Edited = Result<(Option<String>, Change), UsageError>;

/// A client's policy: the allowlist it enforces, in its own file and shape.
pub(crate) trait PolicyWriter: Sync {
    /// The file `--write` puts the allowlist into.
    fn file(&self) -> PathBuf;
    /// Where in the file (`allowedMcpServers`, `mcp.allowed`...).
    fn key(&self) -> &'static str;
    /// What it pins of each stdio server.
    fn pins(&self) -> Pins;
    /// The allowlist entry of the server `server`, registered as `registered`, whose
    /// rendered entry is `entry`; or why it cannot be pinned.
    fn entry(&self, server: &str, registered: &str, entry: &Entry) -> Result<Value, UsageError>;
    /// The file's new text for its old one (`None`: it does not exist), `None` when nothing
    /// changes, and the change. Pure.
    fn edit(&self, path: &Path, old: Option<&str>, servers: &[Allowed]) -> Edited;
    /// `--format file`: the fragment of its file, as text in its format.
    fn fragment(&self, servers: &[Allowed]) -> String;
    /// Refuse, before anything is written, a policy file the client would not count (gemini
    /// skips a system settings file others could replace); every file counts by default.
    fn check_counted(&self, _file: &Path) -> Result<(), UsageError> {
        Ok(())
    }
}

/// One server's line in a client's allowlist.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Allowed {
    /// The registered name (what a name-only policy lists).
    pub(crate) name: String,
    /// The entry in the client's own shape, e.g. `{"serverCommand": [...]}`.
    pub(crate) entry: Value,
}

/// What a client's policy pins of each stdio server (an http server's URL is pinned by all
/// but a name-only policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Pins {
    /// The exact command line, program and every argument (claude's `serverCommand`).
    CommandLine,
    /// The program's path, not its arguments (codex's `identity.command`).
    Command,
    /// The server's name only (gemini's `mcp.allowed`).
    Name,
}

impl Pins {
    /// What a policy that pins this proves, in one line.
    pub(crate) fn says(self) -> &'static str {
        match self {
            Pins::CommandLine => "each entry pins the exact command line or url",
            Pins::Command => {
                "each entry pins the command path or url, not the arguments: the same program \
                 registered with other arguments runs"
            }
            Pins::Name => "names only: any command registered under an allowed name runs",
        }
    }
}

/// What `--write` changes in a policy file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Change {
    pub(crate) file: PathBuf,
    /// The entries added and removed, each in the client's own shape.
    pub(crate) added: Vec<Value>,
    pub(crate) removed: Vec<Value>,
    /// Claude's `allowManagedMcpServersOnly` set to true (always false elsewhere).
    pub(crate) managed_only: bool,
    /// Only the record of what mcp-deploy made changes (an entry it made that someone else
    /// also lists, or one it made and finds already there).
    pub(crate) record: bool,
}

impl Change {
    pub(crate) fn new(file: &Path) -> Change {
        Change {
            file: file.to_path_buf(),
            ..Change::default()
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && !self.managed_only && !self.record
    }
}

/// `list` (the entries the file holds), `ours` (those mcp-deploy recorded as its own) and
/// `wanted` (those derived now) into the new list, the new record, and what was added and
/// removed: an entry of ours no longer wanted goes; a wanted one missing is added and
/// recorded; one someone else wrote stays theirs (never recorded, never removed). Order kept.
pub(crate) fn merge_owned<T: Clone + PartialEq>(
    list: &[T],
    ours: &[T],
    wanted: &[T],
) -> (Vec<T>, Vec<T>, Vec<T>, Vec<T>) {
    let mut new_list = Vec::new();
    let mut removed = Vec::new();
    for e in list {
        if ours.contains(e) && !wanted.contains(e) {
            removed.push(e.clone());
        } else {
            new_list.push(e.clone());
        }
    }
    let mut new_ours = Vec::new();
    let mut added = Vec::new();
    for w in wanted {
        let present = new_list.contains(w);
        if !present {
            new_list.push(w.clone());
            added.push(w.clone());
        }
        if !present || ours.contains(w) {
            new_ours.push(w.clone());
        }
    }
    (new_list, new_ours, added, removed)
}

/// Strict JSON, as `JSON.parse` reads it.
pub(crate) fn strict() -> ParseOptions {
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

/// How a client reads its JSON policy file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// `JSON.parse` after a byte order mark (claude's managed settings): a comment or a
    /// trailing comma refuses the whole file.
    Json,
    /// Comments stripped, then `JSON.parse` (gemini's system settings).
    JsonWithComments,
}

/// A client's allowlist in a JSON settings file, and mcp-deploy's record of the entries it
/// made there: what claude's and gemini's policy writers share. [`JsonPolicy::edit`] changes
/// the list, the record and the switch and nothing else (a CST edit: comments, every other
/// key and the formatting stay), and checks that it did.
pub(crate) struct JsonPolicy {
    /// The object holding the list: the top level, or the object at this key of it.
    pub(crate) within: Option<&'static str>,
    pub(crate) list: &'static str,
    /// The list as a message names it.
    pub(crate) named: &'static str,
    /// The list holds names only (strings), not entries.
    pub(crate) names_only: bool,
    /// Where, at the top level, mcp-deploy records the entries it made.
    pub(crate) ours: &'static str,
    /// A key set to `true` at the top level beside the list (claude's
    /// `allowManagedMcpServersOnly`), reported as [`Change::managed_only`].
    pub(crate) switch: Option<&'static str>,
    pub(crate) syntax: Syntax,
    /// What to do when the file cannot be edited: fix it by hand, read as the client reads it.
    pub(crate) help: &'static str,
}

impl JsonPolicy {
    /// The file's new text for `wanted` (the derived entries), `None` when nothing changes,
    /// and the change; `text`: the file's text, `None` when it does not exist. Pure: the
    /// unit of the edit.
    pub(crate) fn edit(
        &self,
        path: &Path,
        text: Option<&str>,
        wanted: &[Value],
    ) -> Result<(Option<String>, Change), UsageError> {
        let bad = |why: &dyn std::fmt::Display| {
            UsageError::new(
                format!("{}: {why}; nothing was written", path.display()),
                self.help,
            )
        };
        let source = text.unwrap_or("{}\n");
        let (doc, parsed) = self.parse(source).map_err(|e| bad(&e))?;
        let Value::Object(doc) = doc else {
            return Err(bad(&"the top level is not an object"));
        };
        let holder = match self.within {
            None => doc.clone(),
            Some(key) => match doc.get(key) {
                None => Map::new(),
                Some(Value::Object(m)) => m.clone(),
                Some(_) => return Err(bad(&format!("\"{key}\" is not an object"))),
            },
        };
        let array = |m: &Map<String, Value>, key: &str, named: &str| match m.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) if !self.names_only || a.iter().all(Value::is_string) => {
                Ok(a.clone())
            }
            Some(_) if self.names_only => {
                Err(bad(&format!("\"{named}\" is not an array of names")))
            }
            Some(_) => Err(bad(&format!("\"{named}\" is not an array"))),
        };
        let list = array(&holder, self.list, self.named)?;
        let ours = array(&doc, self.ours, self.ours)?;
        let (new_list, new_ours, added, removed) = merge_owned(&list, &ours, wanted);
        let switched = self
            .switch
            .is_some_and(|k| doc.get(k) != Some(&Value::Bool(true)));
        let change = Change {
            added,
            removed,
            managed_only: switched,
            record: doc.get(self.ours) != Some(&Value::Array(new_ours.clone())),
            ..Change::new(path)
        };
        let mut new_holder = holder.clone();
        new_holder.insert(self.list.into(), Value::Array(new_list));
        let mut expected = doc.clone();
        let mut sets = Vec::new();
        match self.within {
            None => expected = new_holder.clone(),
            Some(key) => {
                expected.insert(key.into(), Value::Object(new_holder.clone()));
            }
        }
        if let Some(key) = self.switch {
            expected.insert(key.into(), Value::Bool(true));
            sets.push((key, Value::Bool(true)));
        }
        expected.insert(self.ours.into(), Value::Array(new_ours.clone()));
        sets.push((self.ours, Value::Array(new_ours)));
        if expected == doc && text.is_some() {
            return Ok((None, change));
        }
        let root = match parsed {
            Some(root) => root,
            None => {
                CstRootNode::parse(body(source), &self.options()).map_err(|e| bad(&e.kind()))?
            }
        };
        let top = root.object_value_or_set();
        let list_in = match self.within {
            None => top.clone(),
            Some(key) => top
                .object_value_or_create(key)
                .ok_or_else(|| bad(&format!("\"{key}\" is not an object")))?,
        };
        set_prop(&list_in, &holder, self.list, &new_holder[self.list]);
        for (key, value) in sets {
            set_prop(&top, &doc, key, &value);
        }
        let new_text = match source.starts_with('\u{feff}') {
            true => format!("\u{feff}{root}"),
            false => root.to_string(),
        };
        let again = self.parse(&new_text).map_err(|e| {
            bad(&format!(
                "the edit does not parse again ({e}): mcp-deploy's bug"
            ))
        })?;
        if again.0 != Value::Object(expected) {
            return Err(bad(
                &"the edit changed more than the policy's keys: mcp-deploy's bug",
            ));
        }
        Ok((Some(new_text), change))
    }

    fn options(&self) -> ParseOptions {
        ParseOptions {
            allow_comments: self.syntax == Syntax::JsonWithComments,
            ..strict()
        }
    }

    /// The file's value as the client reads it, and its CST when that is how it was read.
    pub(crate) fn parse(&self, source: &str) -> Result<(Value, Option<CstRootNode>), String> {
        match self.syntax {
            Syntax::Json => serde_json::from_str(body(source))
                .map(|v| (v, None))
                .map_err(|e| format!("not JSON ({e})")),
            Syntax::JsonWithComments => {
                let root = CstRootNode::parse(source, &self.options())
                    .map_err(|e| format!("not JSON with comments ({})", e.kind()))?;
                let value = root.value().and_then(|v| v.to_serde_value());
                Ok((value.unwrap_or(Value::Null), Some(root)))
            }
        }
    }
}

/// `source` after the byte order mark it may start with.
fn body(source: &str) -> &str {
    source.strip_prefix('\u{feff}').unwrap_or(source)
}

/// Set `key` of the CST object `obj` (whose value is `doc`) to `value`, leaving it untouched
/// when it already holds it, appending it when absent.
fn set_prop(obj: &CstObject, doc: &Map<String, Value>, key: &str, value: &Value) {
    if doc.get(key) == Some(value) {
        return;
    }
    let input = crate::clients::file_backed::to_input(value);
    match obj.get(key) {
        Some(prop) => prop.set_value(input),
        None => {
            obj.append(key, input);
        }
    }
}

/// The edit and the fragment of a JSON client's [`PolicyWriter`] (claude's, gemini's): the
/// edit of its [`JsonPolicy`] and its folder's `fragment(entries)` over the allowlist entries.
/// Written inside the folder's `impl PolicyWriter`, so that `fragment` resolves there.
macro_rules! json_edits {
    ($policy:expr) => {
        fn edit(
            &self,
            path: &std::path::Path,
            old: Option<&str>,
            servers: &[$crate::clients::policy::Allowed],
        ) -> $crate::clients::policy::Edited {
            $policy.edit(path, old, &$crate::clients::policy::entries_of(servers))
        }
        fn fragment(&self, servers: &[$crate::clients::policy::Allowed]) -> String {
            $crate::clients::policy::pretty(&fragment(&$crate::clients::policy::entries_of(
                servers,
            )))
        }
    };
}
pub(crate) use json_edits;

/// The entries of `servers`, each in the client's own shape.
pub(crate) fn entries_of(servers: &[Allowed]) -> Vec<Value> {
    servers.iter().map(|s| s.entry.clone()).collect()
}

/// A JSON fragment as `--format file` prints it.
pub(crate) fn pretty(json: &Value) -> String {
    format!(
        "{}\n",
        serde_json::to_string_pretty(json).expect("JSON serialises")
    )
}
