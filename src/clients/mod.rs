//! Coding-agent clients, behind one trait. A client is changed only through its own CLI; its
//! config file is only ever *read*, to learn the exact current entry (CLIs print lossy forms).
//! The exception is a client with no CLI that can register a server (OpenCode, Cursor): its
//! file is edited under the lock, comment-preserving and atomically ([`file_backed`]), by the
//! one file-written client ([`file_written`]) over the client's format.
//! Each client is its folder (`<name>/`), which implements [`table::Kind`] once; the list of
//! them is [`CLIENTS`]: adding a client is its folder, its `mod` line below and one line
//! there. What the clients share is the kit ([`kit`]).

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod copilot;
pub(crate) mod cursor;
pub(crate) mod gemini;
pub(crate) mod grok;
mod kit;
pub(crate) mod listing;
pub(crate) mod only_deployed;
pub(crate) mod opencode;
pub(crate) mod qwen;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod vscode;

// The kit's modules, by the paths the rest of the crate (and every client) names them.
pub(crate) use crate::identity::shadow::{Reach, Shadow};
pub(crate) use kit::policy::PolicyWriter;
use kit::{cli_driven, file_written, table};
pub(crate) use kit::{
    file_backed, git_root, layers, oracle, policy, runner, scopes, upward, version,
};
// The managed scope by the name the domain calls it (a client-neutral name is the next pass's).
pub(crate) use managed as claude_managed;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub(crate) use crate::entry::string_map;
use crate::entry::Entry;
pub use table::ClientKind;

/// The primary client's name: the first of [`CLIENTS`]. It is `--client`'s default, the client
/// whose registrations are the flat document's top-level `mcpServers` (the seed's document), and
/// the one a report names without ` in <client>`. Code outside the client folders says "the
/// primary client", never its name (`clients::tests`' test holds that).
pub(crate) fn primary_name() -> &'static str {
    CLIENTS[0].about().name
}

/// Whether `client` (a name as reports carry it) is the primary client.
pub(crate) fn is_primary(client: &str) -> bool {
    client == primary_name()
}
pub(crate) use table::{client_list_help, About, Binary, ClientOptions, Managed, Writes};

/// Every client mcp-deploy knows, in `--client`'s order: the one list. Each is its folder
/// (`<name>/`), whose [`table::Kind`] says everything mcp-deploy knows of it.
pub(crate) static CLIENTS: &[&dyn table::Kind] = &[
    &claude::ClaudeKind,
    &codex::CodexKind,
    &gemini::GeminiKind,
    &opencode::OpencodeKind,
    &grok::GrokKind,
    &cursor::CursorKind,
    &copilot::CopilotKind,
    &vscode::VscodeKind,
    &qwen::QwenKind,
];

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
    /// install's handshake gate did not pass `name` (or, after the changes, the install):
    /// no call was made for it, and what was changed is rolled back.
    #[error("{name} failed the handshake gate: its registration was not made")]
    NotAdmitted { name: String },
    #[error("`{step}` timed out after {} and was killed", humantime::format_duration(*timeout))]
    TimedOut {
        step: String,
        timeout: std::time::Duration,
    },
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
    /// A file only root may write (claude's managed-mcp.json), and this run may not.
    #[error("cannot write {path}: {reason}")]
    NeedsRoot { path: PathBuf, reason: String },
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
                 (/usr/share/doc/mcp-deploy/clients.md)",
                wrote
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            ClientError::Version(e) => Some(e.help()),
            ClientError::NotAdmitted { .. } => Some(
                "its handshake and tools rows say why; --no-handshake registers without the \
                 gate"
                    .into(),
            ),
            ClientError::WorkDir { path, .. } => Some(format!(
                "mcp-deploy keeps {} empty and private (0700) for its client calls: remove it \
                 (it is created again), or set TMPDIR to a private directory",
                path.display()
            )),
            ClientError::NeedsRoot { .. } => Some(
                "--scope managed writes for every user of the host, which takes root and a \
                 writable /etc: run it as root (sudo), or leave out --scope managed to register \
                 for your own user"
                    .into(),
            ),
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
            // Listed one by one, no wildcard: a new variant is a compile error here until
            // someone decides whether the user can act on it.
            ClientError::Spawn { .. }
            | ClientError::Interrupted { .. }
            | ClientError::Failed { .. }
            | ClientError::Garbage { .. }
            | ClientError::Disagrees { .. }
            | ClientError::NotRegistered { .. } => None,
        }
    }
}

/// The managed scope (`--scope managed`): the capability ([`table::Kind::managed`]) of the client
/// that has one, claude's managed-mcp.json ([`claude::managed`]).
pub(crate) mod managed {
    use std::path::{Path, PathBuf};

    use serde_json::{Map, Value};

    use super::{Client, ClientError, ClientKind, ClientOptions, Managed};

    /// The one managed scope of the list. The list is static: a test holds that one client
    /// gives it (kit/table.rs).
    fn scope() -> &'static dyn Managed {
        ClientKind::all()
            .iter()
            .find_map(|k| k.kind().managed())
            .expect("a client of the list has a managed scope")
    }

    /// The managed file.
    pub(crate) fn path() -> PathBuf {
        scope().path()
    }

    /// Open its client for the managed file.
    pub(crate) fn open(options: &ClientOptions) -> Result<Box<dyn Client>, ClientError> {
        scope().open(options)
    }

    /// The managed file's entries as its client reads them; a missing file has none.
    pub(crate) fn read_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
        scope().read_entries(path)
    }

    /// The live witness of a managed registration for verify-identity: the managed file's
    /// entries; `None` when there is no file.
    pub(crate) fn read_live() -> Result<Option<crate::identity::checks::Live>, ClientError> {
        super::live_at(path(), read_entries)
    }
}

/// A mutating or observing client call, as a dry run shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Add,
    Remove,
    Observe,
}

/// Where a registration lives: the user's own scope (the default), or a file every user's
/// client loads (`--scope managed`: claude's managed-mcp.json, [`claude_managed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Scope {
    #[default]
    User,
    Managed,
}

impl Scope {
    /// As the command line and the flat document spell it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Managed => "managed",
        }
    }
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
    fn shadows(&self, name: &str) -> Result<Vec<Shadow>, ClientError>;
    /// [`Client::shadows`] of each of `names`, by name: a client that can read its files once
    /// for all of them does (a run over many servers then reads them once, not per server).
    fn shadows_of(&self, names: &[&str]) -> Result<BTreeMap<String, Vec<Shadow>>, ClientError> {
        names
            .iter()
            .map(|n| Ok((n.to_string(), self.shadows(n)?)))
            .collect()
    }
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
    /// The scope its registrations are made in ([`Scope::User`] but for claude's managed file).
    fn scope(&self) -> Scope {
        Scope::User
    }
    /// The client's release, when known ([`version::detect`]); `None` for a client without a
    /// binary (Cursor) or one whose release could not be learnt without starting it.
    fn version(&self) -> Option<version::Version> {
        None
    }
    /// The binary its calls run, when it has one and it was found: the one a doubt of its
    /// layers is put to ([`kit::oracle`]).
    fn binary(&self) -> Option<&Path> {
        None
    }
}

/// The binary of every client that has one, in the table's order.
pub(crate) fn binaries() -> Vec<&'static str> {
    CLIENTS
        .iter()
        .filter_map(|d| d.about().binary.as_ref().map(|b| b.name))
        .collect()
}

/// Open the client `kind`.
pub(crate) fn open(
    kind: ClientKind,
    options: &ClientOptions,
) -> Result<Box<dyn Client>, ClientError> {
    let client = kind.kind().open(options)?;
    Ok(Box::new(table::FromRow {
        row: kind.row(),
        client,
    }))
}

/// The live user-scope registration of client `name`, read from its config file without its
/// binary (verify-identity must run where no client is installed): `None` when the client
/// keeps no config here, so that there is no live registration to compare.
pub(crate) fn read_live(
    kind: ClientKind,
) -> Result<Option<crate::identity::checks::Live>, ClientError> {
    let (path, entries) = user_config(kind);
    live_at(path, entries)
}

/// The live registration the file `path` holds, read by `entries`; `None` when there is no
/// such file.
pub(crate) fn live_at(
    path: PathBuf,
    entries: impl Fn(&Path) -> Result<Map<String, Value>, ClientError>,
) -> Result<Option<crate::identity::checks::Live>, ClientError> {
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    Ok(Some(crate::identity::checks::Live {
        entries: std::sync::Arc::new(entries(&path)?),
        path,
        shadows: Vec::new(),
    }))
}

/// The user config file of `kind` on this host (whether or not it exists), and its reader.
pub(crate) fn user_config(
    kind: ClientKind,
) -> (
    PathBuf,
    impl Fn(&Path) -> Result<Map<String, Value>, ClientError>,
) {
    (kind.kind().user_config(), move |p: &Path| {
        kind.kind().read_entries(p)
    })
}

/// The layers a client applies on this host, for one run: a client whose reader loads its
/// files once ([`table::Kind::load_layers`]) has read them here; the others read per name.
/// A doubt the client can settle is put to it once a run, on the first finding that holds one
/// ([`kit::oracle::asked`]), and every name's finding is settled by that one answer.
pub(crate) struct Layers {
    kind: ClientKind,
    user_config: PathBuf,
    reader: Reading,
    /// The binary to ask: the one the run's options give, else the client's as its row finds
    /// it.
    binary: Option<PathBuf>,
}

enum Reading {
    PerName(ClientKind),
    Loaded(Box<dyn layers::Loaded>),
}

impl Layers {
    pub(crate) fn read(kind: ClientKind) -> Layers {
        let (user_config, _) = user_config(kind);
        let reader = match kind.kind().load_layers(&user_config) {
            None => Reading::PerName(kind),
            Some(loaded) => Reading::Loaded(loaded),
        };
        Layers {
            kind,
            user_config,
            reader,
            binary: None,
        }
    }

    /// [`Layers::read`], asking the binary `binary` (the opened client's) when a doubt is put
    /// to the client.
    pub(crate) fn read_asking(kind: ClientKind, binary: Option<&Path>) -> Layers {
        Layers {
            binary: binary.map(Path::to_path_buf),
            ..Layers::read(kind)
        }
    }

    /// Every layer applied to the user-scope entry `name`, for the declared entry `declared`.
    pub(crate) fn of(&self, name: &str, declared: &Entry) -> Vec<layers::Finding> {
        let cx = layers::Context {
            name,
            declared,
            user_config: &self.user_config,
        };
        let found = match &self.reader {
            Reading::PerName(kind) => kind.kind().layers(&cx),
            Reading::Loaded(loaded) => loaded.findings(&cx),
        };
        found
            .into_iter()
            .map(|f| {
                kit::oracle::settle(f, || {
                    kit::oracle::asked(self.kind.kind(), self.binary.as_deref())
                })
            })
            .collect()
    }
}

/// The same-name entries of other scopes that win over a user-scope entry of the config file
/// `config`, for one run: read once here by a client whose reader loads its files once
/// ([`table::Kind::load_shadows`]), per name by the others.
pub(crate) struct Shadows {
    config: PathBuf,
    reader: ShadowReading,
}

enum ShadowReading {
    PerName(ClientKind),
    Loaded(Box<dyn table::LoadedShadows>),
}

impl Shadows {
    pub(crate) fn read(kind: ClientKind, config: &Path) -> Result<Shadows, ClientError> {
        let reader = match kind.kind().load_shadows(config)? {
            None => ShadowReading::PerName(kind),
            Some(loaded) => ShadowReading::Loaded(loaded),
        };
        Ok(Shadows {
            config: config.to_path_buf(),
            reader,
        })
    }

    /// Where a same-name entry of another scope wins over the user-scope entry `name`.
    pub(crate) fn of(&self, name: &str) -> Result<Vec<Shadow>, ClientError> {
        match &self.reader {
            ShadowReading::PerName(kind) => kind.kind().shadows_in(&self.config, name),
            ShadowReading::Loaded(loaded) => Ok(loaded.of(name)),
        }
    }
}

/// A client's config file read bounded (FIFO-safe): `None` when it does not exist, else its
/// text, or why it cannot be read (never quoting it).
pub(crate) fn read_config_text(path: &Path) -> Result<Option<String>, ClientError> {
    crate::fsio::read_input_if_exists(path, "client config", crate::fsio::limits::CLIENT_CONFIG)
        .map_err(|e| ClientError::Config {
            path: path.to_path_buf(),
            reason: e.source.to_string(),
        })
}

/// The `mcpServers` of a client's strict-JSON config file (grok's: it parses it with
/// `JSON.parse`), each object entry in the claude shape by `shape` (given its name); a
/// missing file, or one without the key, has none. No message quotes the text, which may hold
/// a secret.
pub(crate) fn read_json_servers(
    path: &Path,
    shape: impl Fn(&str, &Map<String, Value>) -> Map<String, Value>,
) -> Result<Map<String, Value>, ClientError> {
    read_servers_as(path, shape, |text| {
        serde_json::from_str(text).map_err(|e| format!("not valid JSON at line {}", e.line()))
    })
}

/// [`read_json_servers`] for a client that reads its file past a byte order mark, comments
/// and trailing commas (copilot's), and nothing looser; a key given twice, the last wins, as
/// in `JSON.parse`.
pub(crate) fn read_jsonc_servers(
    path: &Path,
    shape: impl Fn(&str, &Map<String, Value>) -> Map<String, Value>,
) -> Result<Map<String, Value>, ClientError> {
    read_servers_as(path, shape, |text| {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let options = jsonc_parser::ParseOptions {
            allow_comments: true,
            allow_trailing_commas: true,
            ..policy::strict()
        };
        let root = jsonc_parser::cst::CstRootNode::parse(text, &options)
            .map_err(|e| format!("not valid JSON with comments at line {}", e.line_display()))?;
        Ok(root.to_serde_value().unwrap_or(Value::Null))
    })
}

fn read_servers_as(
    path: &Path,
    shape: impl Fn(&str, &Map<String, Value>) -> Map<String, Value>,
    parse: impl Fn(&str) -> Result<Value, String>,
) -> Result<Map<String, Value>, ClientError> {
    let bad = |reason: String| ClientError::Config {
        path: path.to_path_buf(),
        reason,
    };
    let Some(text) = read_config_text(path)? else {
        return Ok(Map::new());
    };
    let doc = parse(&text).map_err(bad)?;
    let Value::Object(doc) = doc else {
        return Err(bad("not a JSON object".into()));
    };
    let servers = match doc.get("mcpServers") {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(bad("\"mcpServers\" is not an object".into())),
    };
    Ok(servers
        .iter()
        .map(|(k, v)| {
            let shaped = match v {
                Value::Object(m) => Value::Object(shape(k, m)),
                other => other.clone(),
            };
            (k.clone(), shaped)
        })
        .collect())
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

/// A key of an entry that a client's CLI has no flag for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("its CLI cannot set the key {key:?}")]
pub(crate) struct UnsettableKey {
    pub(crate) key: String,
}

/// Refuse keys a CLI cannot set, naming the first.
pub(crate) fn only_keys(raw: &Map<String, Value>, allowed: &[&str]) -> Result<(), UnsettableKey> {
    match raw.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(UnsettableKey { key: k.clone() }),
        None => Ok(()),
    }
}
