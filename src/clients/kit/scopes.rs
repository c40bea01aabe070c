//! Every registration a client reads on this host, in every scope it reads — for prune,
//! which must not remove a release that any of them points into, whatever its name and
//! whoever wrote it. Read-only, without the clients' binaries; each file read bounded by the
//! reader its client module already has.
//!
//! The files are those the shadow readers (each row's `shadows` in [`super::CLIENTS`]) look at, each read whole
//! rather than for one name:
//! - claude: `mcpServers` of its config (user scope) and `projects.<dir>.mcpServers` (local
//!   scope, every project); `.mcp.json` (project scope) of every known project directory, of
//!   the working directory, and of every directory above them (claude looks up to `/`);
//!   `managed-mcp.json` in `/etc/claude-code` (managed scope).
//! - codex: `mcp_servers` of its `config.toml`, of `.codex/config.toml` in the working
//!   directory and above and in every project its config names (`projects`), of
//!   `/etc/codex/config.toml` and `/etc/codex/managed_config.toml`, and of each profile file
//!   `$CODEX_HOME/NAME.config.toml` (layered on when codex runs with `--profile NAME`).
//! - gemini: user settings, the working directory's `.gemini/settings.json`, the system
//!   settings (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else `/etc/gemini-cli/settings.json`), and
//!   the `mcpServers` of each installed extension (`~/.gemini/extensions/*/gemini-extension.json`).
//! - opencode: its user config. grok: its user settings and the working directory's
//!   `.grok/settings.json`. cursor: `~/.cursor/mcp.json` and `.cursor/mcp.json` from the
//!   working directory up.
//!
//! A file that exists and cannot be read or parsed is returned as [`Unreadable`], never as
//! "no registrations": the client may read it (Node accepts what serde_json refuses).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ClientError, ClientKind};

/// One registered server, as a file of some scope holds it.
#[derive(Debug, Clone)]
pub(crate) struct Registration {
    pub(crate) client: &'static str,
    pub(crate) file: PathBuf,
    pub(crate) scope: String,
    pub(crate) name: String,
    pub(crate) entry: Value,
}

impl Registration {
    /// `codetools-test in /h/.claude.json (claude, local scope of project /p)`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} in {} ({}, {})",
            self.name,
            self.file.display(),
            self.client,
            self.scope
        )
    }
}

/// A file the client reads that mcp-deploy could not.
#[derive(Debug, Clone)]
pub(crate) struct Unreadable {
    pub(crate) client: &'static str,
    pub(crate) file: PathBuf,
    pub(crate) scope: String,
    pub(crate) why: String,
}

impl Unreadable {
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} ({}, {}): {}",
            self.file.display(),
            self.client,
            self.scope,
            self.why
        )
    }
}

#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) registrations: Vec<Registration>,
    pub(crate) unreadable: Vec<Unreadable>,
}

impl Found {
    pub(crate) fn add(
        &mut self,
        client: &'static str,
        file: &Path,
        scope: &str,
        read: Result<Map<String, Value>, ClientError>,
    ) {
        match read {
            Ok(m) => self
                .registrations
                .extend(m.into_iter().map(|(name, entry)| Registration {
                    client,
                    file: file.to_path_buf(),
                    scope: scope.to_string(),
                    name,
                    entry,
                })),
            // A reader that found nothing there returns an empty map; an error on a file
            // that is not there (a dangling link) is nothing there too.
            Err(_) if std::fs::symlink_metadata(file).is_err() => {}
            Err(e) => self.unreadable.push(Unreadable {
                client,
                file: file.to_path_buf(),
                scope: scope.to_string(),
                why: e.to_string(),
            }),
        }
    }
}

/// Every registration of every client in `kinds`, in every scope listed above (each row's
/// `scopes`).
pub(crate) fn every_registration(kinds: &[ClientKind]) -> Found {
    let mut found = Found::default();
    let cwd = std::env::current_dir().ok();
    for kind in kinds {
        kind.kind().scopes(&mut found, cwd.as_deref());
    }
    found
}

/// The entries of directory `dir` (name and path), sorted by name; none when it cannot be
/// listed.
pub(crate) fn entries_of(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort();
    out
}

/// `mcpServers` of a parsed document; absent is none, another type is unreadable.
pub(crate) fn servers(doc: &Value, file: &Path) -> Result<Map<String, Value>, ClientError> {
    servers_at(doc, file, "mcpServers")
}

/// The servers under `key` of a parsed document; absent is none, another type is unreadable.
pub(crate) fn servers_at(
    doc: &Value,
    file: &Path,
    key: &str,
) -> Result<Map<String, Value>, ClientError> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(ClientError::Config {
            path: file.to_path_buf(),
            reason: format!("{key:?} is not an object"),
        }),
    }
}

/// `mcpServers` of a JSON file (a project `.mcp.json`, `managed-mcp.json`), bounded, a
/// byte-order mark stripped as claude strips it.
pub(crate) fn read_json_servers(file: &Path) -> Result<Map<String, Value>, ClientError> {
    read_json_key(file, "mcpServers")
}

/// The servers under `key` of a JSON file, read as [`read_json_servers`] reads it.
pub(crate) fn read_json_key(file: &Path, key: &str) -> Result<Map<String, Value>, ClientError> {
    let bad = |reason: String| ClientError::Config {
        path: file.to_path_buf(),
        reason,
    };
    let text = match crate::fsio::read_input_if_exists(
        file,
        "MCP servers file",
        crate::fsio::limits::DOCUMENT,
    ) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Map::new()),
        Err(e) => return Err(bad(e.source.to_string())),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let (doc, _) = super::node_json::parse_lenient::<Value>(text)
        .map_err(|e| bad(format!("not valid JSON: {e}")))?;
    servers_at(&doc, file, key)
}
