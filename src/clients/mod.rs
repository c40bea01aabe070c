//! Coding-agent clients, behind one trait. A client is changed only through its own CLI; its
//! config file is only ever *read*, to learn the exact current entry (CLIs print lossy forms).
//! The exception is a client with no CLI that can register a server (OpenCode, Cursor): its
//! file is edited under the lock, comment-preserving and atomically ([`file_backed`]), by the
//! one file-written client ([`file_written`]) over the client's format.
//! What differs between clients as data is their row of [`CLIENTS`] ([`table`]): adding a
//! client is its module (with its `mod` line below) and one row there.

pub(crate) mod claude;
pub(crate) mod claude_managed;
mod cli_driven;
pub(crate) mod codex;
pub(crate) mod copilot;
pub(crate) mod cursor;
pub(crate) mod file_backed;
mod file_written;
mod flow;
pub(crate) mod gemini;
mod gemini_launch;
pub(crate) mod grok;
pub(crate) mod layers;
pub(crate) mod listing;
pub(crate) mod only_deployed;
pub(crate) mod opencode;
pub(crate) mod qwen;
pub(crate) mod runner;
pub(crate) mod scopes;
mod table;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod version;
pub(crate) mod vscode;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub(crate) use crate::entry::string_map;
use crate::entry::Entry;
pub use table::ClientKind;
pub(crate) use table::{
    client_list_help, Binary, ClientOptions, Description, Http, ShadowReader, Writes,
};
use version::{Supported, Version};

/// Every client mcp-deploy knows, in `--client`'s order: the one table ([`table`]).
pub(crate) static CLIENTS: &[Description] = &[
    Description {
        name: "claude",
        binary: Some(Binary {
            name: "claude",
            product: "Claude Code",
            env: "MCP_DEPLOY_CLAUDE",
            help: "The claude binary [default: `claude` on PATH]",
        }),
        writes: Writes::Cli,
        http: Http::Supported,
        supported: Some(Supported {
            client: "claude",
            packages: &["@anthropic-ai/claude-code"],
            oldest: Version::new(2, 0, 0),
            newest_tested: Version::new(2, 1, 332),
            version_flag: true,
        }),
        open: |row, o| Ok(Box::new(claude::Claude::open(row, o)?)),
        user_config: claude::config_path,
        read_entries: claude::read_user_entries,
        shadows: ShadowReader::Once(claude::load_live_shadows),
        layers: layers::Reader::Once(layers::claude::load),
        scopes: scopes::claude,
    },
    Description {
        name: "codex",
        binary: Some(Binary {
            name: "codex",
            product: "Codex",
            env: "MCP_DEPLOY_CODEX",
            help: "The codex binary [default: `codex` on PATH]",
        }),
        writes: Writes::Cli,
        http: Http::Supported,
        supported: Some(Supported {
            client: "codex",
            packages: &["@openai/codex"],
            oldest: Version::new(0, 45, 0),
            newest_tested: Version::new(0, 171, 0),
            version_flag: true,
        }),
        open: |row, o| Ok(Box::new(codex::open(row, o)?)),
        user_config: codex::config_path,
        read_entries: codex::read_user_entries,
        shadows: ShadowReader::PerName(codex::shadows_in),
        layers: layers::Reader::PerName(layers::codex::read),
        scopes: scopes::codex,
    },
    Description {
        name: "gemini",
        binary: Some(Binary {
            name: "gemini",
            product: "Gemini CLI",
            env: "MCP_DEPLOY_GEMINI",
            help: "The gemini binary [default: `gemini` on PATH]",
        }),
        writes: Writes::Cli,
        http: Http::Supported,
        // 0.6.1 to 0.8.2 cannot remove an entry (docs/clients.md, Gemini versions).
        supported: Some(Supported {
            client: "gemini",
            packages: &["@google/gemini-cli"],
            oldest: Version::new(0, 10, 0),
            newest_tested: Version::new(0, 61, 0),
            version_flag: true,
        }),
        open: |row, o| Ok(Box::new(gemini::open(row, o)?)),
        user_config: gemini::config_path,
        read_entries: gemini::read_user_entries,
        shadows: ShadowReader::PerName(gemini::shadows_in),
        layers: layers::Reader::PerName(layers::gemini::read),
        scopes: scopes::gemini,
    },
    Description {
        name: "opencode",
        binary: Some(Binary {
            name: "opencode",
            product: "OpenCode",
            env: "MCP_DEPLOY_OPENCODE",
            help: "The opencode binary, run to confirm each write of its config [default: \
                   `opencode` on PATH]",
        }),
        writes: Writes::File,
        http: Http::Supported,
        supported: Some(Supported {
            client: "opencode",
            packages: &["opencode-ai", "opencode-linux-x64", "opencode-linux-arm64"],
            // 1.0.0's bundled bun fails its default-plugin install here (docs/clients.md).
            oldest: Version::new(1, 0, 61),
            newest_tested: Version::new(1, 18, 33),
            version_flag: true,
        }),
        open: file_written::open::<opencode::Opencode>,
        user_config: opencode::config_path,
        read_entries: file_written::read_user_entries::<opencode::Opencode>,
        shadows: ShadowReader::PerName(opencode::shadows_in),
        layers: layers::Reader::PerName(layers::opencode::read),
        scopes: scopes::opencode,
    },
    Description {
        name: "grok",
        binary: Some(Binary {
            name: "grok",
            product: "Grok CLI",
            env: "MCP_DEPLOY_GROK",
            help: "The grok binary [default: `grok` on PATH]",
        }),
        writes: Writes::Cli,
        // 0.0.34 speaks no MCP HTTP transport (grok.rs).
        http: Http::Refused(grok::NO_REMOTE),
        // Its `--version` prints a fixed `1.0.1` (`.version("1.0.1")` in its dist/index.js),
        // so only its package files count.
        supported: Some(Supported {
            client: "grok",
            packages: &["@vibe-kit/grok-cli"],
            oldest: Version::new(0, 0, 34),
            newest_tested: Version::new(0, 0, 34),
            version_flag: false,
        }),
        open: |row, o| Ok(Box::new(grok::open(row, o)?)),
        user_config: grok::config_path,
        read_entries: grok::read_user_entries,
        shadows: ShadowReader::PerName(grok::shadows_in),
        layers: layers::Reader::PerName(layers::grok::read),
        scopes: scopes::grok,
    },
    Description {
        name: "cursor",
        binary: None,
        writes: Writes::File,
        http: Http::Supported,
        supported: None,
        open: file_written::open::<cursor::Cursor>,
        user_config: cursor::config_path,
        read_entries: file_written::read_user_entries::<cursor::Cursor>,
        shadows: ShadowReader::PerName(cursor::shadows_in),
        layers: layers::Reader::PerName(layers::cursor::read),
        scopes: scopes::cursor,
    },
    Description {
        name: "copilot",
        binary: Some(Binary {
            name: "copilot",
            product: "GitHub Copilot CLI",
            env: "MCP_DEPLOY_COPILOT",
            help: "The copilot binary [default: `copilot` on PATH]",
        }),
        writes: Writes::Cli,
        http: Http::Supported,
        supported: Some(Supported {
            client: "copilot",
            packages: &["@github/copilot"],
            // 1.0.22 is the first on npm with `copilot mcp` (docs/clients.md).
            oldest: Version::new(1, 0, 22),
            newest_tested: Version::new(1, 0, 102),
            version_flag: true,
        }),
        open: |row, o| Ok(Box::new(copilot::open(row, o)?)),
        user_config: copilot::config_path,
        read_entries: copilot::read_user_entries,
        shadows: ShadowReader::PerName(copilot::shadows_in),
        layers: layers::Reader::PerName(copilot::read_layers),
        scopes: copilot::scopes,
    },
    Description {
        name: "vscode",
        // No VS Code here, and `code --add-mcp` cannot remove: mcp-deploy writes its file.
        binary: None,
        writes: Writes::File,
        http: Http::Supported,
        supported: None,
        open: file_written::open::<vscode::Vscode>,
        user_config: vscode::config_path,
        read_entries: file_written::read_user_entries::<vscode::Vscode>,
        shadows: ShadowReader::PerName(vscode::shadows_in),
        layers: layers::Reader::PerName(vscode::layers),
        scopes: vscode::scopes,
    },
    Description {
        name: "qwen",
        binary: Some(Binary {
            name: "qwen",
            product: "Qwen Code",
            env: "MCP_DEPLOY_QWEN",
            help: "The qwen binary [default: `qwen` on PATH]",
        }),
        writes: Writes::Cli,
        http: Http::Supported,
        // 0.15.10's `mcp remove` can leave the entry (src/clients/qwen/mod.rs).
        supported: Some(Supported {
            client: "qwen",
            packages: &["@qwen-code/qwen-code"],
            oldest: Version::new(0, 21, 2),
            newest_tested: Version::new(0, 24, 4),
            version_flag: true,
        }),
        open: |row, o| Ok(Box::new(qwen::open(row, o)?)),
        user_config: qwen::config_path,
        read_entries: qwen::read_user_entries,
        shadows: ShadowReader::PerName(qwen::shadows_in),
        layers: layers::Reader::PerName(qwen::layers::read),
        scopes: qwen::scopes,
    },
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
    fn shadows(&self, name: &str) -> Result<Vec<String>, ClientError>;
    /// [`Client::shadows`] of each of `names`, by name: a client that can read its files once
    /// for all of them does (a run over many servers then reads them once, not per server).
    fn shadows_of(&self, names: &[&str]) -> Result<BTreeMap<String, Vec<String>>, ClientError> {
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
}

/// The binary of every client that has one, in the table's order.
pub(crate) fn binaries() -> Vec<&'static str> {
    CLIENTS
        .iter()
        .filter_map(|d| d.binary.as_ref().map(|b| b.name))
        .collect()
}

/// Open the client `kind`.
pub(crate) fn open(
    kind: ClientKind,
    options: &ClientOptions,
) -> Result<Box<dyn Client>, ClientError> {
    let row = kind.row();
    let client = (row.open)(row, options)?;
    Ok(Box::new(table::FromRow { row, client }))
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
    entries: ReadEntries,
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
pub(crate) fn user_config(kind: ClientKind) -> (PathBuf, ReadEntries) {
    ((kind.row().user_config)(), kind.row().read_entries)
}

/// A reader of a client's user-scope entries from its config file.
pub(crate) type ReadEntries = fn(&Path) -> Result<Map<String, Value>, ClientError>;

/// Every layer `kind` applies to the user-scope entry `name` on this host
/// ([`layers::read`]), for the declared entry `declared`. A run over many names reads them
/// once instead, with [`Layers::read`].
pub(crate) fn effective_layers(
    kind: ClientKind,
    name: &str,
    declared: &Entry,
) -> Vec<layers::Finding> {
    Layers::read(kind).of(name, declared)
}

/// The layers a client applies on this host, for one run: a client whose reader loads its
/// files once ([`layers::Reader::Once`]) has read them here; the others read per name.
pub(crate) struct Layers {
    user_config: PathBuf,
    reader: Reading,
}

enum Reading {
    PerName(fn(&layers::Context) -> Vec<layers::Finding>),
    Loaded(Box<dyn layers::Loaded>),
}

impl Layers {
    pub(crate) fn read(kind: ClientKind) -> Layers {
        let (user_config, _) = user_config(kind);
        let reader = match kind.row().layers {
            layers::Reader::PerName(f) => Reading::PerName(f),
            layers::Reader::Once(load) => Reading::Loaded(load(&user_config)),
        };
        Layers {
            user_config,
            reader,
        }
    }

    /// Every layer applied to the user-scope entry `name`, for the declared entry `declared`.
    pub(crate) fn of(&self, name: &str, declared: &Entry) -> Vec<layers::Finding> {
        let cx = layers::Context {
            name,
            declared,
            user_config: &self.user_config,
        };
        match &self.reader {
            Reading::PerName(f) => f(&cx),
            Reading::Loaded(loaded) => loaded.findings(&cx),
        }
    }
}

/// The same-name entries of other scopes that win over a user-scope entry of the config file
/// `config`, for one run: read once here by a client whose reader loads its files once
/// ([`ShadowReader::Once`]), per name by the others.
pub(crate) struct Shadows {
    config: PathBuf,
    reader: ShadowReading,
}

enum ShadowReading {
    PerName(fn(&Path, &str) -> Result<Vec<String>, ClientError>),
    Loaded(Box<dyn table::LoadedShadows>),
}

impl Shadows {
    pub(crate) fn read(kind: ClientKind, config: &Path) -> Result<Shadows, ClientError> {
        let reader = match kind.row().shadows {
            ShadowReader::PerName(f) => ShadowReading::PerName(f),
            ShadowReader::Once(load) => ShadowReading::Loaded(load(config)?),
        };
        Ok(Shadows {
            config: config.to_path_buf(),
            reader,
        })
    }

    /// Where a same-name entry of another scope wins over the user-scope entry `name`.
    pub(crate) fn of(&self, name: &str) -> Result<Vec<String>, ClientError> {
        match &self.reader {
            ShadowReading::PerName(f) => f(&self.config, name),
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

/// The `mcpServers` of a client's strict-JSON config file (grok's and copilot's: each parses it
/// with `JSON.parse`), each object entry in the claude shape by `shape` (given its name); a
/// missing file, or one without the key, has none. No message quotes the text, which may hold
/// a secret.
pub(crate) fn read_json_servers(
    path: &Path,
    shape: impl Fn(&str, &Map<String, Value>) -> Map<String, Value>,
) -> Result<Map<String, Value>, ClientError> {
    let bad = |reason: String| ClientError::Config {
        path: path.to_path_buf(),
        reason,
    };
    let Some(text) = read_config_text(path)? else {
        return Ok(Map::new());
    };
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not valid JSON at line {}", e.line())))?;
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
