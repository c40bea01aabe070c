//! Claude Code's managed MCP file, `/etc/claude-code/managed-mcp.json`: one registration for
//! every user of the host (`install --scope managed`). Claude has no CLI that writes it, so
//! mcp-deploy edits it itself ([`crate::clients::file_backed`]: under the lock, one entry added or
//! removed, every other byte kept, atomic, checked) and confirms each entry with the real
//! `claude mcp get NAME`, which must report it from this file.
//!
//! What claude 2.1.332 does with the file (its bundle, `strings` on the native binary, and
//! tests/it/managed_scope.rs with the real CLI under a private `/etc`):
//! - When the file exists at all (even `{}`, even unreadable) claude loads only its servers:
//!   every user's own servers (user, project, local scope) stop loading ("an enterprise MCP
//!   config (managed-mcp.json) is present and has exclusive control over MCP servers").
//! - It holds `{"mcpServers": {NAME: entry}}`, each entry in the shape of `claude mcp
//!   add-json`; `claude mcp get NAME` labels such a server `Scope: Enterprise config (managed
//!   by your organization)`, and `claude mcp list` lists it beside no user server.
//! - It is strict JSON: a comment or a trailing comma makes claude load none of its servers
//!   (and still none of the users'). Such a file is refused here, unchanged.
//! - Every user's claude must read it: a file created here is mode 0644, in `/etc/claude-code`
//!   (0755). Writing there takes root; without it the run stops before any change (exit 2).
//!
//! Which entries are mcp-deploy's is recorded beside the lock and journal, in
//! `/etc/claude-code/.mcp-deploy/managed-mcp.owned.json` (`{"created_file", "names"}`): an
//! entry an administrator wrote is never replaced or removed, and the file itself is removed
//! by the uninstall that leaves nothing in a file mcp-deploy created, since even an empty one
//! keeps every user's own servers from loading.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clients::claude::{Claude, Witness, MANAGED_SCOPE};
use crate::clients::file_backed::JsoncFile;
use crate::clients::{Client, ClientError, ClientKind, ClientOptions, Op};
use crate::entry::Entry;

/// Claude Code's managed directory on Linux.
pub(crate) const DIR: &str = "/etc/claude-code";
/// The file's name in it.
const FILE: &str = "managed-mcp.json";
/// What a missing file is created with, before the server is added.
const NEW_FILE: &str = "{\n  \"mcpServers\": {}\n}\n";
/// The record of which entries are mcp-deploy's, in the state directory.
const OWNED: &str = "managed-mcp.owned.json";

/// `/etc/claude-code/managed-mcp.json`.
pub(crate) fn path() -> PathBuf {
    Path::new(DIR).join(FILE)
}

/// Claude's managed scope, the capability its kind gives ([`crate::clients::table::Kind::managed`]).
pub(crate) struct Scope;

impl crate::clients::table::Managed for Scope {
    fn path(&self) -> PathBuf {
        path()
    }
    fn open(&self, options: &ClientOptions) -> Result<Box<dyn Client>, ClientError> {
        open(options)
    }
    fn read_entries(&self, path: &Path) -> Result<Map<String, Value>, ClientError> {
        read_entries(path)
    }
}

/// The managed file as a client: claude's binary to confirm, the file to edit.
pub(crate) struct ClaudeManaged {
    claude: Claude,
    file: JsoncFile,
}

/// Open claude for its managed file. A run that writes (`calls_binary`) must be able to
/// write in `/etc/claude-code` (or create it): else it stops here, before any lock or change.
pub(crate) fn open(options: &ClientOptions) -> Result<Box<dyn Client>, ClientError> {
    let row = ClientKind::named("claude")
        .expect("claude is a row of the table")
        .row();
    if options.calls_binary {
        may_write()?;
    }
    let claude = Claude::open(row, options)?;
    Ok(Box::new(crate::clients::table::FromRow {
        row,
        client: Box::new(ClaudeManaged {
            claude,
            file: JsoncFile {
                path: path(),
                key: "mcpServers",
                new_file: NEW_FILE,
                new_mode: 0o644,
            },
        }),
    }))
}

/// Whether this run may write the managed file: `/etc/claude-code` (or, when it is missing,
/// `/etc`, where it would be created) is writable by us.
fn may_write() -> Result<(), ClientError> {
    let dir = Path::new(DIR);
    let at = if std::fs::symlink_metadata(dir).is_ok() {
        dir
    } else {
        Path::new("/etc")
    };
    rustix::fs::access(at, rustix::fs::Access::WRITE_OK).map_err(|e| ClientError::NeedsRoot {
        path: path(),
        reason: format!("{} is not writable by this run ({e})", at.display()),
    })
}

/// The entries of the managed file as claude reads them (strict JSON, a byte-order mark
/// skipped); a missing file has none. Read without claude's binary (verify-identity).
pub(crate) fn read_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    match strict_document(path)? {
        None => Ok(Map::new()),
        Some(doc) => crate::clients::file_backed::servers_of(&doc, "mcpServers").map_err(|e| {
            ClientError::File {
                path: path.to_path_buf(),
                reason: format!("{e}: claude loads none of its servers"),
            }
        }),
    }
}

/// The file's document, `None` when it does not exist; refused when claude would refuse it
/// (not strict JSON, not an object), naming the line, never quoting the text.
fn strict_document(path: &Path) -> Result<Option<Value>, ClientError> {
    let bad = |reason: String| ClientError::File {
        path: path.to_path_buf(),
        reason,
    };
    let Some(text) =
        crate::fsio::read_input_if_exists(path, "client config", crate::fsio::limits::CLIENT_JSONC)
            .map_err(|e| bad(e.source.to_string()))?
    else {
        return Ok(None);
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(Some(v)),
        Ok(_) => Err(bad(
            "the top level is not an object: claude loads none of its servers".into(),
        )),
        Err(e) => Err(bad(format!(
            "not strict JSON at line {} column {} (claude reads it with JSON.parse: a comment \
             or a trailing comma makes it load none of its servers)",
            e.line(),
            e.column()
        ))),
    }
}

/// Which entries of the managed file mcp-deploy wrote, and whether it created the file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Owned {
    created_file: bool,
    names: Vec<String>,
}

impl ClaudeManaged {
    fn owned_path(&self) -> Result<PathBuf, ClientError> {
        crate::state::file(&self.home(), OWNED).map_err(|e| ClientError::File {
            path: self.file.path.clone(),
            reason: e.to_string(),
        })
    }

    fn owned(&self) -> Result<Owned, ClientError> {
        let p = self.owned_path()?;
        let bad = |reason: String| ClientError::File {
            path: p.clone(),
            reason,
        };
        match crate::fsio::read_input_if_exists(&p, "state file", crate::fsio::limits::DOCUMENT)
            .map_err(|e| bad(e.source.to_string()))?
        {
            None => Ok(Owned::default()),
            Some(t) => serde_json::from_str(&t).map_err(|e| bad(format!("malformed: {e}"))),
        }
    }

    fn save(&self, owned: &Owned) -> Result<(), ClientError> {
        let p = self.owned_path()?;
        let text = serde_json::to_vec_pretty(owned).expect("a record serialises");
        crate::fsio::write_atomic_mode(&p, &text, 0o600).map_err(|e| ClientError::File {
            path: p.clone(),
            reason: e.to_string(),
        })
    }

    fn not_ours(&self, name: &str) -> ClientError {
        ClientError::Disagrees {
            name: name.to_string(),
            reason: format!(
                "{} holds an entry of that name that mcp-deploy did not write (an \
                 administrator's): it is never replaced or removed by mcp-deploy",
                self.file.path.display()
            ),
        }
    }
}

impl Client for ClaudeManaged {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn scope(&self) -> crate::clients::Scope {
        crate::clients::Scope::Managed
    }

    fn version(&self) -> Option<crate::clients::version::Version> {
        self.claude.version()
    }

    fn config_path(&self) -> &Path {
        &self.file.path
    }

    /// Nothing wins over a managed server of the name: it is the one claude loads.
    fn shadows(&self, _name: &str) -> Result<Vec<crate::clients::Shadow>, ClientError> {
        Ok(Vec::new())
    }

    fn user_entries(&self) -> Result<Map<String, Value>, ClientError> {
        read_entries(&self.file.path)
    }

    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        let existed = strict_document(&self.file.path)?.is_some();
        let mut owned = self.owned()?;
        let before = (owned.created_file, owned.names.clone());
        if !existed {
            match std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(DIR)
            {
                Ok(()) => {}
                Err(e) => {
                    return Err(ClientError::File {
                        path: self.file.path.clone(),
                        reason: format!("cannot create {DIR}: {e}"),
                    })
                }
            }
            owned.created_file = true;
        }
        // Claimed before the write: a crash between leaves a claim on an entry that is not
        // there, never an entry of ours that a later run would take for an administrator's.
        if !owned.names.iter().any(|n| n == name) {
            owned.names.push(name.to_string());
        }
        self.save(&owned)?;
        // Typed for a claude whose `mcp get` would not show an untyped entry's command.
        let raw = crate::clients::claude::typed_for(entry, self.claude.version())
            .unwrap_or_else(|| entry.raw.clone());
        let written = self.file.add("claude", name, &Value::Object(raw));
        if written.is_err() {
            (owned.created_file, owned.names) = before;
            let _ = self.save(&owned);
        }
        written
    }

    fn remove(&self, name: &str) -> Result<(), ClientError> {
        strict_document(&self.file.path)?;
        let mut owned = self.owned()?;
        if !owned.names.iter().any(|n| n == name) {
            return Err(self.not_ours(name));
        }
        self.file.remove(name)?;
        owned.names.retain(|n| n != name);
        // A file mcp-deploy created, left with nothing: removed, since its mere presence
        // keeps every user's own servers from loading.
        let empty = serde_json::json!({"mcpServers": {}});
        if owned.created_file && strict_document(&self.file.path)?.as_ref() == Some(&empty) {
            std::fs::remove_file(&self.file.path).map_err(|e| ClientError::File {
                path: self.file.path.clone(),
                reason: format!("cannot remove it: {e}"),
            })?;
            owned.created_file = false;
        }
        self.save(&owned)
    }

    fn observe(&self, name: &str) -> Result<Option<Entry>, ClientError> {
        self.claude.observe_in(
            name,
            &Witness {
                scope: MANAGED_SCOPE,
                not_there: "not from the managed file",
                path: &self.file.path,
                entries: &|| read_entries(&self.file.path),
            },
        )
    }

    fn show(&self, op: Op, name: &str) -> String {
        match op {
            Op::Observe => format!("claude mcp get {name}"),
            _ => self.file.show(op, name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_or_trailing_comma_is_refused_naming_the_line_not_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE);
        for text in [
            "{\"mcpServers\": {\"x\": {\"command\": \"/s3cret\"}}, // c\n}",
            "{\"mcpServers\": {\"x\": {\"command\": \"/s3cret\",}}}",
            "[1]",
        ] {
            std::fs::write(&p, text).unwrap();
            let err = read_entries(&p).unwrap_err().to_string();
            assert!(err.contains("none of its servers"), "{err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
        std::fs::write(
            &p,
            "\u{feff}{\"mcpServers\": {\"x\": {\"command\": \"/y\"}}}",
        )
        .unwrap();
        assert_eq!(read_entries(&p).unwrap()["x"]["command"], "/y");
    }

    #[test]
    fn an_entry_added_to_a_strict_file_leaves_it_strict_json() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE);
        std::fs::write(
            &p,
            "{\n  \"mcpServers\": {\n    \"admin\": {\"command\": \"/a\"}\n  }\n}\n",
        )
        .unwrap();
        let f = JsoncFile {
            path: p.clone(),
            key: "mcpServers",
            new_file: NEW_FILE,
            new_mode: 0o644,
        };
        f.add(
            "claude",
            "ours",
            &serde_json::json!({"command": "/o", "args": []}),
        )
        .unwrap();
        let m = read_entries(&p).unwrap();
        assert_eq!(m.len(), 2);
        f.remove("admin").unwrap();
        f.remove("ours").unwrap();
        assert_eq!(
            strict_document(&p).unwrap(),
            Some(serde_json::json!({"mcpServers": {}}))
        );
    }
}
