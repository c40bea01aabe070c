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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{claude, codex, cursor, gemini, grok, opencode, ClientError, ClientKind};

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
        (kind.row().scopes)(&mut found, cwd.as_deref());
    }
    found
}

pub(crate) fn gemini(found: &mut Found, cwd: Option<&Path>) {
    let n = "gemini";
    let user = gemini::config_path();
    found.add(n, &user, "user", gemini::read_user_entries(&user));
    if let Some(c) = cwd {
        let f = c.join(".gemini/settings.json");
        if f != user {
            found.add(n, &f, "workspace", gemini::read_user_entries(&f));
        }
    }
    let system = std::env::var_os("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
    found.add(n, &system, "system", gemini::read_user_entries(&system));
    for (name, dir) in entries_of(&user.with_file_name("extensions")) {
        let f = dir.join("gemini-extension.json");
        found.add(
            n,
            &f,
            &format!("extension {name}"),
            gemini::read_user_entries(&f),
        );
    }
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

pub(crate) fn opencode(found: &mut Found, _cwd: Option<&Path>) {
    let user = opencode::config_path();
    found.add(
        "opencode",
        &user,
        "user",
        opencode::read_user_entries(&user),
    );
}

pub(crate) fn grok(found: &mut Found, cwd: Option<&Path>) {
    let user = grok::config_path();
    found.add("grok", &user, "user", grok::read_user_entries(&user));
    if let Some(c) = cwd {
        let f = c.join(".grok/settings.json");
        if f != user {
            found.add("grok", &f, "project", grok::read_user_entries(&f));
        }
    }
}

pub(crate) fn cursor(found: &mut Found, cwd: Option<&Path>) {
    let user = cursor::config_path();
    found.add("cursor", &user, "user", cursor::read_user_entries(&user));
    for dir in cwd.iter().flat_map(|c| c.ancestors()) {
        let f = dir.join(".cursor/mcp.json");
        if f != user {
            found.add("cursor", &f, "project", cursor::read_user_entries(&f));
        }
    }
}

pub(crate) fn claude(found: &mut Found, cwd: Option<&Path>) {
    let n = "claude";
    let config = claude::config_path();
    let mut projects: Vec<PathBuf> = Vec::new();
    match super::read_config_text(&config) {
        Ok(None) => {}
        Err(e) => found.add(n, &config, "user and local scopes", Err(e)),
        Ok(Some(text)) => match claude::parse_lenient::<Value>(&text) {
            Err(e) => found.add(
                n,
                &config,
                "user and local scopes",
                Err(ClientError::Config {
                    path: config.clone(),
                    reason: format!("not valid JSON: {e}"),
                }),
            ),
            Ok((doc, _)) => {
                found.add(n, &config, "user scope", servers(&doc, &config));
                let each = doc.get("projects").and_then(Value::as_object);
                for (dir, project) in each.into_iter().flatten() {
                    projects.push(PathBuf::from(dir));
                    // Claude shadows nothing from a project that is not an object; its
                    // servers, when they are one, are read.
                    if project.get("mcpServers").is_some() {
                        found.add(
                            n,
                            &config,
                            &format!("local scope of project {dir}"),
                            servers(project, &config),
                        );
                    }
                }
            }
        },
    }
    let mut seen = BTreeSet::new();
    let dirs = cwd
        .map(Path::to_path_buf)
        .into_iter()
        .chain(projects.into_iter().filter(|p| p.is_absolute()));
    for start in dirs {
        for dir in start.ancestors() {
            if !seen.insert(dir.to_path_buf()) {
                continue;
            }
            let f = dir.join(".mcp.json");
            if std::fs::symlink_metadata(&f).is_ok() {
                found.add(n, &f, "project scope", read_json_servers(&f));
            }
        }
    }
    let managed = PathBuf::from("/etc/claude-code/managed-mcp.json");
    if std::fs::symlink_metadata(&managed).is_ok() {
        found.add(n, &managed, "managed scope", read_json_servers(&managed));
    }
    // `managedMcpServers` of the managed settings: servers the organization delivers to
    // every user (claude 2.1.332's settings schema), read from each managed file, the
    // drop-ins in claude's order.
    let dir = Path::new("/etc/claude-code");
    let mut listing = Vec::new();
    let files = std::iter::once(dir.join("managed-settings.json")).chain(
        super::layers::claude::drop_ins(&dir.join("managed-settings.d"), &mut listing),
    );
    for f in files {
        if std::fs::symlink_metadata(&f).is_ok() {
            let read = read_json_key(&f, "managedMcpServers");
            found.add(n, &f, "managed settings managedMcpServers", read);
        }
    }
    for l in listing {
        found.unreadable.push(Unreadable {
            client: n,
            file: PathBuf::from(&l.source),
            scope: "managed settings".into(),
            why: match l.effect {
                super::layers::Effect::NotCompared(why) => why,
                other => format!("{other:?}"),
            },
        });
    }
}

pub(crate) fn codex(found: &mut Found, cwd: Option<&Path>) {
    let n = "codex";
    let user = codex::config_path();
    found.add(n, &user, "user", codex::read_user_entries(&user));
    let mut dirs: Vec<PathBuf> = cwd
        .iter()
        .flat_map(|c| c.ancestors().map(Path::to_path_buf))
        .collect();
    // The projects codex's config names (trust levels): their `.codex/config.toml` applies
    // where codex runs in them.
    if let Ok(Some(text)) = crate::fsio::read_input_if_exists(
        &user,
        "client config",
        crate::fsio::limits::CLIENT_CONFIG,
    ) {
        if let Ok(doc) = text.parse::<toml::Table>() {
            if let Some(p) = doc.get("projects").and_then(toml::Value::as_table) {
                dirs.extend(p.keys().map(PathBuf::from).filter(|p| p.is_absolute()));
            }
        }
    }
    let mut seen = BTreeSet::new();
    for dir in dirs {
        let f = dir.join(".codex/config.toml");
        if f == user || !seen.insert(f.clone()) {
            continue;
        }
        found.add(n, &f, "project", codex::read_user_entries(&f));
    }
    if let Some(home) = user.parent() {
        for (file, path) in entries_of(home) {
            if let Some(profile) = file.strip_suffix(".config.toml").filter(|p| !p.is_empty()) {
                let scope = format!("profile {profile} (codex --profile {profile})");
                found.add(n, &path, &scope, codex::read_user_entries(&path));
            }
        }
    }
    for (f, scope) in [
        ("/etc/codex/config.toml", "system"),
        ("/etc/codex/managed_config.toml", "managed"),
    ] {
        let f = PathBuf::from(f);
        found.add(n, &f, scope, codex::read_user_entries(&f));
    }
}

/// `mcpServers` of a parsed document; absent is none, another type is unreadable.
fn servers(doc: &Value, file: &Path) -> Result<Map<String, Value>, ClientError> {
    servers_at(doc, file, "mcpServers")
}

/// The servers under `key` of a parsed document; absent is none, another type is unreadable.
fn servers_at(doc: &Value, file: &Path, key: &str) -> Result<Map<String, Value>, ClientError> {
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
fn read_json_servers(file: &Path) -> Result<Map<String, Value>, ClientError> {
    read_json_key(file, "mcpServers")
}

/// The servers under `key` of a JSON file, read as [`read_json_servers`] reads it.
fn read_json_key(file: &Path, key: &str) -> Result<Map<String, Value>, ClientError> {
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
    let (doc, _) =
        claude::parse_lenient::<Value>(text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    servers_at(&doc, file, key)
}
