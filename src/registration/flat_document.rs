//! The flat registration document, written from what each client itself reports:
//!
//! ```json
//! {"mcpServers": {NAME: {"command", "args"} | {"type", "url"}},
//!  "clients": {"codex": {"mcpServers": {...}}, "gemini": {"mcpServers": {...}}}}
//! ```
//! Claude's entries are the top-level `mcpServers` (the shape CI and agents already read);
//! every other client's are under `clients.<client>.mcpServers`. It lives at
//! `$CLAUDE_CONFIG_DIR/mcp-registered.json` or `~/.claude/mcp-registered.json`. Entries for
//! names mcp-deploy was not asked about are kept as they are. Env and header values are never
//! recorded. An entry registered in another scope than the user's (`install --scope managed`)
//! keeps its exact shape and has its scope beside it, `"mcpScopes": {NAME: "managed"}` (under
//! `clients.<client>` for another client): a document of user-scope entries only is
//! byte for byte what it was before scopes, and a reader that does not know the key still
//! finds every entry where it was.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::clients::Scope;
use crate::fsio;

#[derive(Debug, thiserror::Error)]
pub(crate) enum FlatDocumentError {
    #[error("the registration document {path} does not exist")]
    Missing { path: PathBuf },
    #[error("the registration document {path} is malformed: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error(transparent)]
    Io(#[from] fsio::IoError),
}

impl FlatDocumentError {
    pub(crate) fn help(&self) -> Option<String> {
        match self {
            FlatDocumentError::Missing { .. } => Some(
                "run `mcp-deploy install` first, or pass the document that holds the registration"
                    .into(),
            ),
            FlatDocumentError::Malformed { .. } => Some(
                "it must be {\"mcpServers\":{...}} (other clients under \"clients\"); move it \
                 aside (install writes a new one) or fix it"
                    .into(),
            ),
            FlatDocumentError::Io(e) => e.help(),
        }
    }
}

/// The client whose entries are the top-level `mcpServers`: the primary client.
fn primary() -> &'static str {
    crate::clients::primary_name()
}

/// The key beside `mcpServers` recording the scope of an entry not in the user's.
const SCOPES: &str = "mcpScopes";

/// The default location of the flat document.
pub(crate) fn default_path() -> PathBuf {
    crate::dirs::claude_config_dir().join("mcp-registered.json")
}

/// The flat document a command names (`--registered`, else `--mcp-json`, the seed's name for
/// it), else the default one.
pub(crate) fn given_or_default(registered: Option<&Path>, mcp_json: Option<&Path>) -> PathBuf {
    registered
        .or(mcp_json)
        .map(Path::to_path_buf)
        .unwrap_or_else(default_path)
}

/// The flat document at `path`; `None` when it does not exist yet. A malformed one is an
/// error: it is never overwritten.
pub(crate) fn read_if_exists(path: &Path) -> Result<Option<FlatDocument>, FlatDocumentError> {
    match FlatDocument::read(path) {
        Ok(f) => Ok(Some(f)),
        Err(FlatDocumentError::Missing { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The lock every writer of the document at `path` takes: in the state directory of the
/// directory the document really lives in (a symlink followed), named after it. Every run,
/// for any client, reads, changes and writes the document only while holding it.
pub(crate) fn lock_path(path: &Path) -> Result<PathBuf, fsio::IoError> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match real.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "registered".into());
    crate::state::file(&dir, &format!("{name}.lock"))
}

/// A whole flat document.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlatDocument {
    doc: Map<String, Value>,
}

impl FlatDocument {
    /// Read and validate a document; a missing file is an error.
    pub(crate) fn read(path: &Path) -> Result<FlatDocument, FlatDocumentError> {
        let text = match fsio::read_input_if_exists(path, "flat document", fsio::limits::DOCUMENT)?
        {
            Some(t) => t,
            None => {
                return Err(FlatDocumentError::Missing {
                    path: path.to_path_buf(),
                })
            }
        };
        let malformed = |reason: String| FlatDocumentError::Malformed {
            path: path.to_path_buf(),
            reason,
        };
        let doc = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(doc)) => doc,
            Ok(_) => return Err(malformed("it is not a JSON object".into())),
            Err(e) => return Err(malformed(e.to_string())),
        };
        match doc.get("mcpServers") {
            Some(Value::Object(_)) => {}
            Some(_) => return Err(malformed("\"mcpServers\" is not an object".into())),
            None => return Err(malformed("it has no \"mcpServers\" object".into())),
        }
        if let Some(clients) = doc.get("clients") {
            let clients = clients
                .as_object()
                .ok_or_else(|| malformed("\"clients\" is not an object".into()))?;
            for (name, c) in clients {
                if !c.get("mcpServers").is_some_and(Value::is_object) {
                    return Err(malformed(format!(
                        "\"clients\".\"{name}\" has no \"mcpServers\" object"
                    )));
                }
            }
        }
        Ok(FlatDocument { doc })
    }

    /// Read the document for updating: a missing file is an empty one. A symlink to a
    /// missing file is refused: the document would be written through it, to a file that is
    /// not ours to create.
    pub(crate) fn read_or_empty(path: &Path) -> Result<FlatDocument, FlatDocumentError> {
        match FlatDocument::read(path) {
            Err(FlatDocumentError::Missing { .. })
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
            {
                Err(FlatDocumentError::Malformed {
                    path: path.to_path_buf(),
                    reason: "it is a symlink to a file that does not exist (its target must \
                             exist: mcp-deploy writes through the link, never replaces it)"
                        .into(),
                })
            }
            Err(FlatDocumentError::Missing { .. }) => Ok(FlatDocument::default()),
            other => other,
        }
    }

    /// `client`'s entries (empty when it has none).
    pub(crate) fn servers(&self, client: &str) -> Map<String, Value> {
        let servers = if client == primary() {
            self.doc.get("mcpServers")
        } else {
            self.doc
                .get("clients")
                .and_then(|c| c.get(client))
                .and_then(|c| c.get("mcpServers"))
        };
        servers
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    fn servers_mut(&mut self, client: &str) -> &mut Map<String, Value> {
        let slot = if client == primary() {
            self.doc.entry("mcpServers")
        } else {
            let clients = self
                .doc
                .entry("clients")
                .or_insert_with(|| Value::Object(Map::new()));
            clients
                .as_object_mut()
                .expect("validated as an object")
                .entry(client)
                .or_insert_with(|| serde_json::json!({}))
                .as_object_mut()
                .expect("validated as an object")
                .entry("mcpServers")
        };
        slot.or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("validated as an object")
    }

    /// Whether two documents hold the same thing (a run that changed nothing leaves the file).
    pub(crate) fn same_as(&self, other: &FlatDocument) -> bool {
        self.doc == other.doc
    }

    pub(crate) fn set(&mut self, client: &str, name: &str, entry: Value) {
        self.servers_mut(client).insert(name.to_string(), entry);
    }

    /// Remove `name` of `client` (and its scope); whether it was there.
    pub(crate) fn remove(&mut self, client: &str, name: &str) -> bool {
        self.set_scope(client, name, Scope::User);
        self.servers_mut(client).remove(name).is_some()
    }

    /// The scope `name` of `client` was registered in (no record: the user's).
    pub(crate) fn scope(&self, client: &str, name: &str) -> Scope {
        let holder = if client == primary() {
            Some(&self.doc)
        } else {
            self.doc
                .get("clients")
                .and_then(|c| c.get(client))
                .and_then(Value::as_object)
        };
        match holder
            .and_then(|h| h.get(SCOPES))
            .and_then(|s| s.get(name))
            .and_then(Value::as_str)
        {
            Some("managed") => Scope::Managed,
            _ => Scope::User,
        }
    }

    /// Record the scope of `name` of `client`: the user's is no record at all, and the key is
    /// dropped when it holds none.
    pub(crate) fn set_scope(&mut self, client: &str, name: &str, scope: Scope) {
        let holder = if client == primary() {
            &mut self.doc
        } else {
            self.servers_mut(client);
            self.doc
                .get_mut("clients")
                .and_then(|c| c.get_mut(client))
                .and_then(Value::as_object_mut)
                .expect("made by servers_mut")
        };
        match scope {
            Scope::User => {
                if let Some(Value::Object(m)) = holder.get_mut(SCOPES) {
                    m.remove(name);
                    if m.is_empty() {
                        holder.remove(SCOPES);
                    }
                }
            }
            other => {
                let m = holder
                    .entry(SCOPES)
                    .or_insert_with(|| Value::Object(Map::new()));
                if !m.is_object() {
                    *m = Value::Object(Map::new());
                }
                m.as_object_mut()
                    .expect("made an object")
                    .insert(name.to_string(), other.word().into());
            }
        }
    }

    /// Write the document atomically, mode 0600 (it says which programs an agent runs). A
    /// symlinked document stays a symlink: its target is replaced.
    pub(crate) fn write(&mut self, path: &Path) -> Result<(), FlatDocumentError> {
        let text = self.text();
        // A re-run that changed nothing leaves the file (and its mtime) alone: the caller holds
        // the document's lock, so what is read here is what would be replaced. Bounded and
        // non-blocking; anything unreadable is simply written over, as before.
        if !Self::differs(path, &text) {
            return Ok(());
        }
        fsio::write_atomic_through_links(path, text.as_bytes(), true)?;
        Ok(())
    }

    /// Whether [`FlatDocument::write`] would write `path` (a dry run's question).
    pub(crate) fn would_write(&self, path: &Path) -> bool {
        Self::differs(path, &self.clone().text())
    }

    /// The bytes [`FlatDocument::write`] writes.
    fn text(&mut self) -> String {
        self.servers_mut(primary());
        let mut text = serde_json::to_string_pretty(&self.doc).expect("a Map serializes");
        text.push('\n');
        text
    }

    fn differs(path: &Path, text: &str) -> bool {
        !fsio::read_input(path, "flat document", fsio::limits::DOCUMENT)
            .is_ok_and(|old| old == text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_managed_entry_keeps_its_shape_and_a_user_only_document_has_no_scope_key() {
        let mut f = FlatDocument::default();
        f.set("claude", "a", json!({"command": "/a", "args": []}));
        f.set_scope("claude", "a", Scope::Managed);
        f.set("codex", "b", json!({"command": "/b", "args": []}));
        assert_eq!(f.scope("claude", "a"), Scope::Managed);
        assert_eq!(f.scope("codex", "b"), Scope::User);
        assert_eq!(
            f.servers("claude")["a"],
            json!({"command": "/a", "args": []})
        );
        assert_eq!(f.doc["mcpScopes"], json!({"a": "managed"}));
        f.set_scope("claude", "a", Scope::User);
        assert!(!f.doc.contains_key("mcpScopes"), "{:?}", f.doc);
        f.set_scope("claude", "a", Scope::Managed);
        assert!(f.remove("claude", "a"));
        assert!(!f.doc.contains_key("mcpScopes"), "{:?}", f.doc);
    }

    #[test]
    fn each_client_has_its_own_entries_and_claude_stays_top_level() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("flat.json");
        let mut f = FlatDocument::read_or_empty(&p).unwrap();
        f.set("claude", "a", json!({"command": "/a"}));
        f.set("codex", "a", json!({"command": "/c"}));
        f.write(&p).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["mcpServers"]["a"]["command"], "/a");
        assert_eq!(v["clients"]["codex"]["mcpServers"]["a"]["command"], "/c");
        let f = FlatDocument::read(&p).unwrap();
        assert_eq!(f.servers("codex").len(), 1);
        assert!(f.servers("gemini").is_empty());
    }

    #[test]
    fn a_symlinked_document_stays_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real/flat.json");
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, r#"{"mcpServers":{}}"#).unwrap();
        let link = dir.path().join("flat.json");
        std::os::unix::fs::symlink("real/flat.json", &link).unwrap();
        let mut f = FlatDocument::read(&link).unwrap();
        f.set("claude", "a", json!({"command": "/a"}));
        f.write(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            FlatDocument::read(&target).unwrap().servers("claude").len(),
            1
        );
        assert_eq!(
            lock_path(&link).unwrap(),
            lock_path(&target).unwrap(),
            "one lock for both spellings"
        );
        std::fs::remove_file(&target).unwrap();
        let err = f.write(&link).unwrap_err().to_string();
        assert!(err.contains("its target must exist"), "{err}");
    }

    #[test]
    fn malformed_documents_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("flat.json");
        for bad in [
            "{",
            "[]",
            "{}",
            r#"{"mcpServers":[]}"#,
            r#"{"mcpServers":{},"clients":[]}"#,
            r#"{"mcpServers":{},"clients":{"codex":{}}}"#,
        ] {
            std::fs::write(&p, bad).unwrap();
            assert!(
                matches!(
                    FlatDocument::read(&p),
                    Err(FlatDocumentError::Malformed { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            FlatDocument::read(&dir.path().join("absent")),
            Err(FlatDocumentError::Missing { .. })
        ));
    }
}
