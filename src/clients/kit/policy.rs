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

/// Set `key` of the CST object `obj` (whose value is `doc`) to `value`, leaving it untouched
/// when it already holds it, appending it when absent.
pub(crate) fn set_prop(obj: &CstObject, doc: &Map<String, Value>, key: &str, value: &Value) {
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

/// The text of `root`, with the byte order mark `source` started with.
pub(crate) fn with_bom(source: &str, root: &CstRootNode) -> String {
    match source.starts_with('\u{feff}') {
        true => format!("\u{feff}{root}"),
        false => root.to_string(),
    }
}

/// The edit and the fragment of a JSON client's [`PolicyWriter`] (claude's, gemini's): its
/// folder's `edit(path, old, entries)` and `fragment(entries)` over the allowlist entries.
/// Written inside the folder's `impl PolicyWriter`, so that those names resolve there.
macro_rules! json_edits {
    () => {
        fn edit(
            &self,
            path: &std::path::Path,
            old: Option<&str>,
            servers: &[$crate::clients::policy::Allowed],
        ) -> $crate::clients::policy::Edited {
            edit(path, old, &$crate::clients::policy::entries_of(servers))
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
