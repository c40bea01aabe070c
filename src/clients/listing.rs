//! `mcp-deploy clients`: the client table ([`super::CLIENTS`]) given out as data — each row's
//! binary, npm package, supported range and user config file — and, on this host, the binary
//! found and whether its release is supported (as `rustup show` says which toolchain is
//! active). Scripts read it instead of the source (`scripts/test.sh`, `scripts/compat.sh`,
//! `bench/clients.sh`).
//!
//! Each client is found and opened by the code every other command opens it with
//! ([`super::runner::locate`], [`super::open`]): the binary of `--<client> PATH`, else
//! `MCP_DEPLOY_<CLIENT>`, else its name on PATH, its release from its package files, the
//! cache, or `<bin> --version` under `--client-timeout`. A client that is missing, fails or
//! prints garbage is a state of its row, never an error of the run: listing always completes.

use std::path::PathBuf;

use serde::Serialize;

use super::version::VersionError;
use super::{ClientError, ClientKind, ClientOptions, Writes};

/// One row of the listing, in the words `--format json` keys it by (`name` first).
#[derive(Debug, Serialize)]
pub(crate) struct Listed {
    /// The name on the command line (`--client`).
    pub(crate) name: &'static str,
    /// The executable looked up on PATH, and its flag (`--claude`); `None`: the client has
    /// no CLI (cursor, vscode), mcp-deploy writes its file.
    pub(crate) binary: Option<&'static str>,
    /// The variable that names another binary (`MCP_DEPLOY_CLAUDE`).
    pub(crate) env: Option<&'static str>,
    /// The npm package to install it from (the first of `packages`).
    pub(crate) package: Option<&'static str>,
    /// Every npm package whose `package.json` names its release (platform packages too).
    pub(crate) packages: &'static [&'static str],
    /// The supported range, `OLDEST to MAJOR.x`.
    pub(crate) supported: Option<String>,
    pub(crate) oldest: Option<String>,
    pub(crate) newest_tested: Option<String>,
    /// How a registration is changed: `cli` (through its own CLI) or `file` (mcp-deploy
    /// edits its config file).
    pub(crate) writes: &'static str,
    /// Its user config file on this host (whether or not it exists yet).
    pub(crate) config: PathBuf,
    pub(crate) config_exists: bool,
    /// The binary found on this host.
    pub(crate) found: Option<PathBuf>,
    /// The release found (supported or not).
    pub(crate) version: Option<String>,
    pub(crate) state: State,
    /// Why, for every state but `supported`: what was missing, what is out of range, what
    /// could not be told.
    pub(crate) detail: String,
}

/// What this host has of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum State {
    /// Found, and its release is in the supported range.
    Supported,
    /// Found, and its release is outside the range: install would refuse it.
    Unsupported,
    /// Found, but its release could not be told (it failed, hung, printed garbage, or names
    /// its release nowhere it can be read).
    Unknown,
    /// Its binary is not on PATH (nor where `--<client>`/`MCP_DEPLOY_<CLIENT>` say).
    NotFound,
    /// The client has no binary (cursor, vscode): nothing to find.
    NoBinary,
}

impl State {
    /// As the human form says it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            State::Supported => "supported",
            State::Unsupported => "unsupported",
            State::Unknown => "could not tell",
            State::NotFound => "not found",
            State::NoBinary => "no binary",
        }
    }
}

/// Every client of `kinds` (each once, in the order given), with what this host has of it.
/// `options` are the binaries and the timeout of the command line; `calls_binary` is set here,
/// since telling a release may take `<bin> --version`.
pub(crate) fn list(kinds: &[ClientKind], options: &ClientOptions) -> Vec<Listed> {
    let options = ClientOptions {
        calls_binary: true,
        ..options.clone()
    };
    ClientKind::unique(kinds)
        .into_iter()
        .map(|kind| one(kind, &options))
        .collect()
}

fn one(kind: ClientKind, options: &ClientOptions) -> Listed {
    let row = kind.row();
    let config = kind.kind().user_config();
    let supported = row.supported.as_ref();
    let mut listed = Listed {
        name: row.name,
        binary: row.binary.as_ref().map(|b| b.name),
        env: row.binary.as_ref().map(|b| b.env),
        package: supported.and_then(|s| s.packages.first().copied()),
        packages: supported.map_or(&[], |s| s.packages),
        supported: supported.map(|s| format!("{} to {}.x", s.oldest, s.newest_tested.major)),
        oldest: supported.map(|s| s.oldest.to_string()),
        newest_tested: supported.map(|s| s.newest_tested.to_string()),
        writes: match row.writes {
            Writes::Cli => "cli",
            Writes::File => "file",
        },
        config_exists: std::fs::symlink_metadata(&config).is_ok(),
        config,
        found: None,
        version: None,
        state: State::NoBinary,
        detail: String::new(),
    };
    let Some(binary) = &row.binary else {
        listed.detail = "mcp-deploy writes its config file".into();
        return listed;
    };
    match super::runner::locate(binary.name, options.binary(row.name), row.install_help()) {
        Ok(path) => listed.found = Some(path),
        Err(e) => {
            listed.state = State::NotFound;
            listed.detail = e.to_string();
            return listed;
        }
    }
    let (state, version, detail) = match super::open(kind, options) {
        Ok(client) => match client.version() {
            Some(v) => (State::Supported, Some(v), String::new()),
            None => (
                State::Unknown,
                None,
                match supported.is_some_and(|s| !s.version_flag) {
                    true => format!(
                        "no package files name its release, and `{} --version` does not print \
                         it",
                        binary.name
                    ),
                    false => "no package files name its release".to_string(),
                },
            ),
        },
        Err(e) => match &e {
            ClientError::Version(
                VersionError::TooOld { found, .. } | VersionError::TooNew { found, .. },
            ) => (State::Unsupported, Some(*found), e.to_string()),
            ClientError::Missing { .. } => (State::NotFound, None, e.to_string()),
            _ => (State::Unknown, None, e.to_string()),
        },
    };
    listed.state = state;
    listed.version = version.map(|v| v.to_string());
    listed.detail = detail;
    listed
}
