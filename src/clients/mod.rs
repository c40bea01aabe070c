//! Coding-agent clients, behind one trait. A client is changed only through its own CLI; its
//! config file is only ever *read*, to learn the exact current entry (CLIs print lossy forms).
//! The exception is a client with no CLI that can register a server (OpenCode, Cursor): its
//! file is edited under the lock, comment-preserving and atomically ([`file_backed`]).
//! Adding a client is one module here and one line in [`open`].

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod cursor;
mod file_backed;
mod flow;
pub(crate) mod gemini;
mod gemini_launch;
pub(crate) mod grok;
pub(crate) mod layers;
pub(crate) mod opencode;
pub(crate) mod runner;
pub(crate) mod scopes;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod version;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

pub(crate) use crate::entry::string_map;
use crate::entry::Entry;

/// How to reach a client's CLI.
#[derive(Debug, Clone)]
pub(crate) struct ClientOptions {
    /// An explicit claude binary (`--claude`, `MCP_DEPLOY_CLAUDE`); else found on PATH.
    pub(crate) claude: Option<PathBuf>,
    /// An explicit codex binary (`--codex`, `MCP_DEPLOY_CODEX`); else found on PATH.
    pub(crate) codex: Option<PathBuf>,
    /// An explicit gemini binary (`--gemini`, `MCP_DEPLOY_GEMINI`); else found on PATH.
    pub(crate) gemini: Option<PathBuf>,
    /// An explicit opencode binary (`--opencode`, `MCP_DEPLOY_OPENCODE`); else found on PATH.
    /// mcp-deploy writes OpenCode's file itself and runs it only to confirm each write.
    pub(crate) opencode: Option<PathBuf>,
    /// Codex's home (its config is `<home>/config.toml`); else `$CODEX_HOME`, else `~/.codex`.
    /// Passed to codex as CODEX_HOME, so that it and we read the same file.
    pub(crate) codex_home: Option<PathBuf>,
    /// Gemini's home (its config is `<home>/.gemini/settings.json`); else `$GEMINI_CLI_HOME`,
    /// else `$HOME`. Passed to gemini as GEMINI_CLI_HOME.
    pub(crate) gemini_home: Option<PathBuf>,
    /// An explicit grok binary (`--grok`, `MCP_DEPLOY_GROK`); else found on PATH.
    pub(crate) grok: Option<PathBuf>,
    /// The directory grok runs in, whose `.grok/settings.json` holds the servers it uses
    /// there; else HOME.
    pub(crate) grok_home: Option<PathBuf>,
    pub(crate) timeout: Duration,
    /// Milliseconds a health check may take (claude's MCP_TIMEOUT).
    pub(crate) mcp_timeout_ms: u64,
    /// Whether the client's CLI will be called. `status` only reads config files, so a missing
    /// binary is no error for it.
    pub(crate) calls_binary: bool,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    #[error("{binary} was not found{where_}")]
    Missing {
        binary: String,
        where_: String,
        help: String,
    },
    #[error("`{step}` could not start: {reason}")]
    Spawn { step: String, reason: String },
    #[error("`{step}` was stopped: mcp-deploy was interrupted (SIGINT or SIGTERM)")]
    Interrupted { step: String },
    #[error("`{step}` timed out after {secs} s and was killed")]
    TimedOut { step: String, secs: u64 },
    #[error("`{step}` failed ({status}): {stderr}")]
    Failed {
        step: String,
        status: String,
        stderr: String,
    },
    #[error("`{step}` printed output that cannot be read: {reason}")]
    Garbage { step: String, reason: String },
    #[error("the client's config {path} cannot be read: {reason}")]
    Config { path: PathBuf, reason: String },
    #[error("{name}: {reason}")]
    Disagrees { name: String, reason: String },
    /// The config file of a client mcp-deploy writes itself (OpenCode, Cursor) cannot be read,
    /// edited or written; the reason never quotes its text.
    #[error("the client's config {path}: {reason}")]
    File { path: PathBuf, reason: String },
    /// The client CLI cannot register this entry faithfully (it would store something else).
    /// The reason names the field or key, never a value.
    #[error("{client} cannot register {name} as declared: {reason}")]
    Unrepresentable {
        client: &'static str,
        name: String,
        reason: String,
    },
    /// `add` of a name that is registered: the client would overwrite it without a word.
    #[error("{name} is already registered at user scope in {path}")]
    AlreadyRegistered {
        client: &'static str,
        name: String,
        path: PathBuf,
    },
    /// `remove` of a name that is not registered: the client would exit 0 and do nothing.
    #[error("{name} is not registered at user scope in {path}: there is nothing to remove")]
    NotRegistered { name: String, path: PathBuf },
    /// A way of running the client that mcp-deploy does not support (an OpenCode server
    /// managed elsewhere).
    #[error("{client}: {reason}: not supported")]
    NotSupported {
        client: &'static str,
        reason: String,
        help: String,
    },
    /// The client wrote a settings file other than the one it was given (an old gemini that
    /// ignores its home): what `expected` holds no longer tells what the client did.
    #[error(
        "{client} wrote {} instead of {}: mcp-deploy reads no removal or rollback from a file \
         the client did not write",
        wrote.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        expected.display()
    )]
    WroteElsewhere {
        client: &'static str,
        expected: PathBuf,
        wrote: Vec<PathBuf>,
    },
    /// A client home named by an environment variable (CODEX_HOME) that does not exist.
    #[error("{var} is set to {path}, which does not exist")]
    HomeMissing { var: &'static str, path: PathBuf },
    /// A client release outside the supported range, or one whose version cannot be read.
    #[error(transparent)]
    Version(#[from] version::VersionError),
    /// The directory client calls run from is not ours alone and empty.
    #[error("refusing to run client calls from {path}: {reason}")]
    WorkDir { path: PathBuf, reason: String },
}

impl ClientError {
    pub(crate) fn help(&self) -> Option<String> {
        match self {
            ClientError::Missing { help, .. } => Some(help.clone()),
            ClientError::TimedOut { .. } => Some(
                "the client CLI did not answer; raise --client-timeout or check the client".into(),
            ),
            ClientError::Unrepresentable { client, .. } => Some(format!(
                "change the server's declaration to a form {client} can hold, or leave {client} \
                 out of --client"
            )),
            ClientError::AlreadyRegistered { client, .. } => Some(format!(
                "{client} would silently overwrite it; mcp-deploy removes an entry before it \
                 adds one, so another program changed it meanwhile: run again"
            )),
            ClientError::NotSupported { help, .. } => Some(help.clone()),
            ClientError::WroteElsewhere { client, wrote, .. } => Some(format!(
                "this {client} version does not write where it is told: check {} by hand for \
                 what it changed, and use a {client} version in the supported range \
                 (docs/clients.md)",
                wrote
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            ClientError::Version(e) => Some(e.help()),
            ClientError::WorkDir { path, .. } => Some(format!(
                "mcp-deploy keeps {} empty and private (0700) for its client calls: remove it \
                 (it is created again), or set TMPDIR to a private directory",
                path.display()
            )),
            ClientError::HomeMissing { var, .. } => Some(format!(
                "create that directory, or unset {var} to use the client's default"
            )),
            ClientError::Config { .. } => Some(
                "mcp-deploy never edits this file; repair it with the client, then run again"
                    .into(),
            ),
            ClientError::File { .. } => Some(
                "mcp-deploy edits this file only by adding or removing its own entry, keeping \
                 every other byte; it must be a regular file of JSON with comments: repair it, \
                 then run again"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// A mutating or observing client call, as a dry run shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Add,
    Remove,
    Observe,
}

/// One coding-agent client. Implementations must be safe to call from several threads for
/// the read-only operations (`observe`), which the installer runs side by side.
pub(crate) trait Client: Sync {
    fn name(&self) -> &'static str;
    /// The client's config file: the one the client itself reads and writes.
    fn config_path(&self) -> &Path;
    /// The client's home: its lock and journal live in `<home>/.mcp-deploy/`
    /// ([`crate::state`]). The same directory whichever file in it the client reads.
    fn home(&self) -> PathBuf {
        self.config_path()
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf()
    }
    /// Where a same-name entry in another scope (local, project) would shadow the user-scope
    /// entry `name`, one description each. Read-only.
    fn shadows(&self, name: &str) -> Result<Vec<String>, ClientError>;
    /// The user-scope entries as the client's config file holds them, read-only.
    fn user_entries(&self) -> Result<Map<String, Value>, ClientError>;
    /// Register `entry` at user scope under `name`; the name must not be registered.
    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError>;
    /// Remove the user-scope entry `name`.
    fn remove(&self, name: &str) -> Result<(), ClientError>;
    /// What the client itself reports for `name` at user scope (`None`: not registered),
    /// cross-checked against its config file so that the result is exact.
    fn observe(&self, name: &str) -> Result<Option<Entry>, ClientError>;
    /// The call that would `op` the entry `name`, as a dry run prints it (never a value).
    fn show(&self, op: Op, name: &str) -> String;
    /// The client's release, when known ([`version::detect`]); `None` for a client without a
    /// binary (Cursor) or one whose release could not be learnt without starting it.
    fn version(&self) -> Option<version::Version> {
        None
    }
}

/// The clients mcp-deploy knows: the one list, which `--client` takes (clap's `ValueEnum`)
/// and [`open`] opens. Adding a client is a variant here and a module beside this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientKind {
    Claude,
    Codex,
    Gemini,
    Opencode,
    Grok,
    Cursor,
}

impl ClientKind {
    /// The name on the command line, in reports and in the flat document.
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Claude => "claude",
            ClientKind::Codex => "codex",
            ClientKind::Gemini => "gemini",
            ClientKind::Opencode => "opencode",
            ClientKind::Grok => "grok",
            ClientKind::Cursor => "cursor",
        }
    }

    /// The kind whose [`ClientKind::name`] is `name`.
    pub(crate) fn named(name: &str) -> Option<ClientKind> {
        use clap::ValueEnum;
        ClientKind::value_variants()
            .iter()
            .copied()
            .find(|k| k.name() == name)
    }

    /// `kinds` each once, in the order first given (`--client claude,claude` is one client).
    pub(crate) fn unique(kinds: &[ClientKind]) -> Vec<ClientKind> {
        let mut out = Vec::new();
        for &k in kinds {
            if !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }
}

/// Open the client `kind`.
pub(crate) fn open(
    kind: ClientKind,
    options: &ClientOptions,
) -> Result<Box<dyn Client>, ClientError> {
    Ok(match kind {
        ClientKind::Claude => Box::new(claude::Claude::open(options)?),
        ClientKind::Codex => Box::new(codex::Codex::open(options)?),
        ClientKind::Gemini => Box::new(gemini::Gemini::open(options)?),
        ClientKind::Opencode => Box::new(opencode::Opencode::open(options)?),
        ClientKind::Grok => Box::new(grok::Grok::open(options)?),
        ClientKind::Cursor => Box::new(cursor::Cursor::open(options)?),
    })
}

/// The live user-scope registration of client `name`, read from its config file without its
/// binary (verify-identity must run where no client is installed): `None` when the client
/// keeps no config here, so that there is no live registration to compare.
pub(crate) fn read_live(
    kind: ClientKind,
) -> Result<Option<crate::identity::checks::Live>, ClientError> {
    let (path, entries) = user_config(kind);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    Ok(Some(crate::identity::checks::Live {
        entries: entries(&path)?,
        path,
        shadows: Vec::new(),
    }))
}

/// The user config file of `kind` on this host (whether or not it exists), and its reader.
pub(crate) fn user_config(kind: ClientKind) -> (PathBuf, ReadEntries) {
    match kind {
        ClientKind::Claude => (claude::config_path(), claude::read_user_entries),
        ClientKind::Codex => (codex::config_path(), codex::read_user_entries),
        ClientKind::Gemini => (gemini::config_path(), gemini::read_user_entries),
        ClientKind::Opencode => (opencode::config_path(), opencode::read_user_entries),
        ClientKind::Grok => (grok::config_path(), grok::read_user_entries),
        ClientKind::Cursor => (cursor::config_path(), cursor::read_user_entries),
    }
}

/// A reader of a client's user-scope entries from its config file.
pub(crate) type ReadEntries = fn(&Path) -> Result<Map<String, Value>, ClientError>;

/// Every layer `kind` applies to the user-scope entry `name` on this host
/// ([`layers::read`]), for the declared entry `declared`.
pub(crate) fn effective_layers(
    kind: ClientKind,
    name: &str,
    declared: &Entry,
) -> Vec<layers::Finding> {
    let (user_config, _) = user_config(kind);
    layers::read(
        kind,
        &layers::Context {
            name,
            declared,
            user_config: &user_config,
        },
    )
}

/// Same-name entries of other scopes that win over the user-scope entry `name` of `live`,
/// where the client's rules can be read without its binary. Claude: the local scope of every
/// project and `.mcp.json` in the working directory and above it ([`claude::shadows_in`]),
/// and the `.mcp.json` of every project directory claude knows (`projects` in its config)
/// and of every directory above one (claude looks from where it runs up to `/`): whether
/// the user approved that project server cannot be told from outside, so it counts. Codex: a
/// project `.codex/config.toml` from the working directory up; gemini: workspace and system
/// settings ([`codex::shadows_in`], [`gemini::shadows_in`], the rules install warns with);
/// opencode: the other user files, project files, the `OPENCODE_CONFIG*` variables, managed
/// and remote defaults ([`opencode::shadows_in`]); grok: the `.grok/settings.json` of the
/// working directory ([`grok::shadows_in`]); cursor: a project `.cursor/mcp.json`.
pub(crate) fn live_shadows(
    client: ClientKind,
    live: &crate::identity::checks::Live,
    name: &str,
) -> Result<Vec<String>, ClientError> {
    match client {
        ClientKind::Codex => return codex::shadows_in(&live.path, name),
        ClientKind::Gemini => return gemini::shadows_in(&live.path, name),
        ClientKind::Opencode => return opencode::shadows_in(&live.path, name),
        ClientKind::Grok => return grok::shadows_in(&live.path, name),
        ClientKind::Cursor => return cursor::shadows_in(&live.path, name),
        ClientKind::Claude => {}
    }
    let mut found = claude::shadows_in(&live.path, name)?;
    // shadows_in has read and parsed this file already: it is valid JSON. Read bounded again
    // all the same: it may have been replaced (by a FIFO) since.
    let projects: Vec<PathBuf> = crate::fsio::read_input_string(
        &live.path,
        "client config",
        crate::fsio::limits::CLIENT_CONFIG,
    )
    .ok()
    .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    .and_then(|doc| {
        doc.get("projects")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(PathBuf::from).collect())
    })
    .unwrap_or_default();
    // Claude looks for `.mcp.json` from the directory it runs in up to `/`: each project's
    // directory and every directory above it (those above the working directory were read
    // by shadows_in).
    let cwd = std::env::current_dir().ok();
    let mut seen: std::collections::HashSet<PathBuf> = cwd
        .iter()
        .flat_map(|c| c.ancestors().map(Path::to_path_buf))
        .collect();
    for project in projects.iter().filter(|p| p.is_absolute()) {
        for dir in project.ancestors() {
            if seen.insert(dir.to_path_buf()) {
                found.extend(claude::project_shadow(dir, name));
            }
        }
    }
    Ok(found)
}

/// The entry `name` of `entries` (a client's user entries, read from `path`), as the client
/// holds it, for the clients whose config file is their one exact witness (gemini and grok
/// print no exact form; opencode and cursor have no CLI to ask): `None` when it is absent.
pub(crate) fn entry_in(
    entries: &Map<String, Value>,
    name: &str,
    path: &Path,
) -> Result<Option<Entry>, ClientError> {
    let Some(raw) = entries.get(name) else {
        return Ok(None);
    };
    Entry::from_value(raw)
        .map(Some)
        .map_err(|e| ClientError::Disagrees {
            name: name.to_string(),
            reason: format!("its entry in {} is malformed: {e}", path.display()),
        })
}

// For the modules whose CLI takes an entry apart into flags (codex, gemini).

/// Refuse keys a CLI cannot set, naming the first.
pub(crate) fn only_keys(raw: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match raw.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("its CLI cannot set the key {k:?}")),
        None => Ok(()),
    }
}
