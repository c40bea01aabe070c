//! What a client is: one [`Kind`] per client, implemented once in its folder
//! (`<name>/mod.rs`) and registered once in [`super::CLIENTS`], with its metadata as data
//! ([`About`]). Everything that differs between clients and is not its folder's own code
//! derives from it: `--client`'s values ([`ClientKind`], clap's `ValueEnum`), the binary flags
//! and their environment variables ([`crate::cli::ClientArgs`]), [`ClientOptions`], opening a
//! client, reading its live entry, shadows, layers and every scope without its binary, its
//! supported release range, and its optional capabilities (a managed scope, a policy
//! writer). Adding a client is its folder and one line in the list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use super::layers::{Context, Finding, Loaded};
use super::scopes::Found;
use super::version::Supported;
use super::{Client, ClientError, Op, Shadow};
use crate::entry::{Entry, Transport};
use serde_json::{Map, Value};

/// One client: what mcp-deploy knows of it and does with it that is not the opened client's
/// own calls ([`Client`]). Each reading that can fail says why ([`ClientError`]: "not known,
/// because ..."), never an empty answer in its place.
pub(crate) trait Kind: Sync {
    /// Its metadata: name, binary, supported range, http, how it is written.
    fn about(&self) -> &'static About;
    /// Open it for calls (or, with `calls_binary` unset, for reading its files only).
    fn open(&self, options: &ClientOptions) -> Result<Box<dyn Client>, ClientError>;
    /// Its user config file on this host, found without its binary (whether or not it
    /// exists: that is [`Kind::read_entries`]'s to say).
    fn user_config(&self) -> PathBuf;
    /// The user-scope entries of such a file, each in the claude shape.
    fn read_entries(&self, path: &Path) -> Result<Map<String, Value>, ClientError>;
    /// Where a same-name entry of another scope wins over the user entry `name` of the user
    /// config `config`, read without its binary, each call reading the files.
    fn shadows_in(&self, config: &Path, name: &str) -> Result<Vec<Shadow>, ClientError>;
    /// The shadowing files of `config` read once for a whole run, when this client reads them
    /// that way; `None`: a run asks [`Kind::shadows_in`] per name.
    fn load_shadows(&self, _config: &Path) -> Result<Option<Box<dyn LoadedShadows>>, ClientError> {
        Ok(None)
    }
    /// Every layer it applies to a user-scope entry ([`super::layers`]), reading the files.
    fn layers(&self, cx: &Context) -> Vec<Finding>;
    /// Its layer files read once for a whole run, when this client reads them that way;
    /// `None`: a run asks [`Kind::layers`] per name.
    fn load_layers(&self, _user_config: &Path) -> Option<Box<dyn Loaded>> {
        None
    }
    /// Every registration of every scope it reads, for prune ([`super::scopes`]); a file
    /// that cannot be read is [`super::scopes::Unreadable`], never none.
    fn scopes(&self, found: &mut Found, cwd: Option<&Path>);
    /// An optional capability: a scope every user's client loads, which root writes
    /// (claude's managed-mcp.json, `--scope managed`); `None` for a client without one.
    fn managed(&self) -> Option<&'static dyn Managed> {
        None
    }
    /// An optional capability: the policy file it enforces an allowlist from, and its edit
    /// (`mcp-deploy policy`, [`super::policy`]); `None` for a client `policy` cannot write for.
    fn policy(&self) -> Option<&'static dyn super::policy::PolicyWriter> {
        None
    }
    /// An optional capability: its own CLI's answer to whether it accepts its whole
    /// configuration on this host, asked of `binary` (else the binary its row finds) — the
    /// oracle that settles a doubt of its layer reader ([`super::oracle`]); `None`: it cannot
    /// be asked.
    fn loads_config(&self, _binary: Option<&Path>) -> Option<super::oracle::Answer> {
        None
    }
    /// Whether the release on this host certainly applies the keep-out evidence of `finding`
    /// (a deny, a disable, an allowlist: `--only-deployed`), where releases differ in it
    /// (issue 35, item 9; docs/clients.md, "Rules per release"). `Err`: why it does not count
    /// for certain. By default no release is known to differ.
    fn keeps_out_here(&self, _finding: &Finding) -> Result<(), String> {
        Ok(())
    }
}

/// The readings of a [`Kind`] that every client's folder names alike: its metadata (the
/// static given), its `config_path()`, `read_user_entries(path)`, `shadows_in(config, name)`
/// and `scopes(found, cwd)`, and the layer reader given. Written inside the folder's
/// `impl Kind`, so that the names resolve there.
macro_rules! folder_readings {
    (about: $about:path, layers: $layers:path) => {
        fn about(&self) -> &'static $crate::clients::About {
            &$about
        }
        fn user_config(&self) -> std::path::PathBuf {
            config_path()
        }
        fn read_entries(
            &self,
            path: &std::path::Path,
        ) -> Result<serde_json::Map<String, serde_json::Value>, $crate::clients::ClientError> {
            read_user_entries(path)
        }
        fn shadows_in(
            &self,
            config: &std::path::Path,
            name: &str,
        ) -> Result<Vec<$crate::clients::Shadow>, $crate::clients::ClientError> {
            // A folder's reader gives places (each wins here) or typed shadows.
            shadows_in(config, name).map(|v| v.into_iter().map(Into::into).collect())
        }
        fn layers(
            &self,
            cx: &$crate::clients::layers::Context,
        ) -> Vec<$crate::clients::layers::Finding> {
            $layers(cx)
        }
        fn scopes(
            &self,
            found: &mut $crate::clients::scopes::Found,
            cwd: Option<&std::path::Path>,
        ) {
            scopes(found, cwd)
        }
    };
}
pub(crate) use folder_readings;

/// A folder's whole `impl Kind` when it is its readings ([`folder_readings`]), its opening and
/// at most a policy writer: `opens: open` for a CLI-driven client, the folder's
/// `open(&About, &ClientOptions)`; `writes: Format` for a file-written one
/// ([`super::file_written::open`] over the folder's format).
macro_rules! folder_kind {
    ($kind:ident, about: $about:path, layers: $layers:path, $how:ident: $what:tt
     $(, policy: $policy:expr)? $(, loads_config: $args:expr)? $(, load_layers: $load:path)?
     $(, keeps_out: $keeps:path)?) => {
        impl $crate::clients::table::Kind for $kind {
            $crate::clients::table::folder_readings!(about: $about, layers: $layers);
            fn open(
                &self,
                options: &$crate::clients::ClientOptions,
            ) -> Result<Box<dyn $crate::clients::Client>, $crate::clients::ClientError> {
                $crate::clients::table::folder_kind!(@open $how $what, &$about, options)
            }
            $(fn policy(&self) -> Option<&'static dyn $crate::clients::PolicyWriter> {
                Some(&$policy)
            })?
            $(fn loads_config(
                &self,
                binary: Option<&std::path::Path>,
            ) -> Option<$crate::clients::oracle::Answer> {
                Some($args(binary))
            })?
            $(fn load_layers(
                &self,
                user_config: &std::path::Path,
            ) -> Option<Box<dyn $crate::clients::layers::Loaded>> {
                Some(Box::new($load(user_config)))
            })?
            $(fn keeps_out_here(
                &self,
                finding: &$crate::clients::layers::Finding,
            ) -> Result<(), String> {
                $keeps(finding)
            })?
        }
    };
    (@open opens $open:expr, $about:expr, $options:ident) => {
        Ok(Box::new($open($about, $options)?))
    };
    (@open writes $format:ty, $about:expr, $options:ident) => {
        $crate::clients::file_written::open::<$format>($about, $options)
    };
}
pub(crate) use folder_kind;

/// A client's managed scope: one file every user's client loads ([`Kind::managed`]).
pub(crate) trait Managed: Sync {
    /// The file.
    fn path(&self) -> PathBuf;
    /// Open the client for that file.
    fn open(&self, options: &ClientOptions) -> Result<Box<dyn Client>, ClientError>;
    /// Its entries as the client reads them; a missing file has none.
    fn read_entries(&self, path: &Path) -> Result<Map<String, Value>, ClientError>;
}

/// A client's shadowing files as one run read them.
pub(crate) trait LoadedShadows {
    /// Same-name entries that win over the user-scope entry `name`.
    fn of(&self, name: &str) -> Vec<Shadow>;
}

/// A client's metadata, as data: its name and what the command line, the listing and the
/// refusals say of it.
pub(crate) struct About {
    /// The name on the command line (`--client`), in reports and in the flat document.
    pub(crate) name: &'static str,
    /// Its CLI, when it has one (Cursor has none).
    pub(crate) binary: Option<Binary>,
    /// How a registration is changed: through the client's CLI, or by mcp-deploy writing its
    /// file (a client whose CLI cannot register a server, opened as
    /// [`super::file_written::FileWritten`]; its binary, if any, only confirms each write, as
    /// [`About::install_help`] says).
    pub(crate) writes: Writes,
    /// Whether it can hold a remote (HTTP or SSE) server; one that cannot refuses it on `add`,
    /// before any call ([`About::refuse_unheld`]).
    pub(crate) http: Http,
    /// The releases supported ([`super::version`]); `None` for a client without a binary.
    pub(crate) supported: Option<Supported>,
}

/// A client's CLI and how the command line names another one than the one on PATH.
pub(crate) struct Binary {
    /// The executable looked up on PATH, and the flag that overrides it (`--codex`).
    pub(crate) name: &'static str,
    /// What its package is called where a missing binary says how to install it ("Gemini
    /// CLI").
    pub(crate) product: &'static str,
    /// The variable the flag reads when it is not given (`MCP_DEPLOY_CODEX`).
    pub(crate) env: &'static str,
    /// The flag's help text.
    pub(crate) help: &'static str,
}

/// Whether a client can hold a remote server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Http {
    Supported,
    /// Not at all, for this reason (naming the release and what it lacks).
    Refused(&'static str),
}

/// How a client's registrations are changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writes {
    /// Through its own CLI (`<bin> mcp add` and `remove`); its file is only read.
    Cli,
    /// By mcp-deploy, comment-preserving and atomically ([`super::file_backed`]).
    File,
}

/// A client's row ([`About`]) from what is its own, the rest derived: its name (the flag,
/// the binary and the client in the supported range alike), the product, the variable naming
/// another binary, whether it is registered through its CLI (`cli`) or by mcp-deploy writing
/// its file (`file`, the binary only confirming each write, as its help says), and the npm
/// packages with the oldest and newest releases supported. A client without a binary is
/// `about!(file cursor)`. What is not the usual (a native install, no `--version`, no remote
/// server) is said after it: [`About::native`], [`About::without_version_flag`],
/// [`About::remote`].
macro_rules! about {
    ($writes:ident $name:ident $product:literal $env:ident,
     npm [$($package:literal),+] ($($oldest:literal),+) ..= ($($newest:literal),+)) => {
        $crate::clients::table::About {
            name: stringify!($name),
            binary: Some($crate::clients::table::Binary {
                name: stringify!($name),
                product: $product,
                env: stringify!($env),
                help: $crate::clients::table::about!(@help $writes $name),
            }),
            writes: $crate::clients::table::about!(@writes $writes),
            http: $crate::clients::table::Http::Supported,
            supported: Some($crate::clients::version::Supported {
                client: stringify!($name),
                packages: &[$($package),+],
                oldest: $crate::clients::version::Version::new($($oldest),+),
                newest_tested: $crate::clients::version::Version::new($($newest),+),
                version_flag: true,
                native: None,
            }),
        }
    };
    ($writes:ident $name:ident) => {
        $crate::clients::table::About {
            name: stringify!($name),
            binary: None,
            writes: $crate::clients::table::about!(@writes $writes),
            http: $crate::clients::table::Http::Supported,
            supported: None,
        }
    };
    (@help cli $name:ident) => {
        concat!("The ", stringify!($name), " binary [default: `", stringify!($name), "` on PATH]")
    };
    (@help file $name:ident) => {
        concat!(
            "The ", stringify!($name), " binary, run to confirm each write of its config ",
            "[default: `", stringify!($name), "` on PATH]"
        )
    };
    (@writes cli) => { $crate::clients::table::Writes::Cli };
    (@writes file) => { $crate::clients::table::Writes::File };
}
pub(crate) use about;

impl About {
    /// A client installed natively too (not by npm), keeping its releases in
    /// `<dir>/versions/<release>` ([`Supported::native`]).
    pub(crate) const fn native(mut self, dir: &'static str) -> About {
        if let Some(s) = &mut self.supported {
            s.native = Some(dir);
        }
        self
    }

    /// A client whose `--version` does not print its release ([`Supported::version_flag`]).
    pub(crate) const fn without_version_flag(mut self) -> About {
        if let Some(s) = &mut self.supported {
            s.version_flag = false;
        }
        self
    }

    /// Whether it can hold a remote server, when not.
    pub(crate) const fn remote(mut self, http: Http) -> About {
        self.http = http;
        self
    }
}

impl About {
    /// What a missing binary's `help:` says, from the row: the product, its npm package at
    /// the newest release tested, the flag and its variable; a file-written client's binary
    /// only confirms each write, and says so.
    pub(crate) fn install_help(&self) -> String {
        let Some(b) = &self.binary else {
            return String::new();
        };
        let package = match self.supported.as_ref().and_then(|s| {
            s.packages
                .first()
                .map(|p| format!("{p}@{}", s.newest_tested))
        }) {
            Some(p) => p,
            None => b.name.to_string(),
        };
        let why = match self.writes {
            Writes::File => ": it confirms each write",
            Writes::Cli => "",
        };
        format!(
            "install {} (npm install -g {package}), or pass --{} PATH (or set {}){why}",
            b.product, b.name, b.env
        )
    }
}

impl About {
    /// Refuse `entry` as `name` when this client cannot hold it by what its row says (a
    /// remote server where it has no HTTP): the one place for it, before any call.
    pub(crate) fn refuse_unheld(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        match (&entry.transport, self.http) {
            (Transport::Remote { .. }, Http::Refused(reason)) => {
                Err(ClientError::Unrepresentable {
                    client: self.name,
                    name: name.to_string(),
                    reason: reason.to_string(),
                })
            }
            _ => Ok(()),
        }
    }
}

/// A client opened from its kind ([`super::open`]): what its metadata says it cannot hold is
/// refused here, before the client's own code runs; everything else is the client's.
pub(crate) struct FromRow {
    pub(crate) row: &'static About,
    pub(crate) client: Box<dyn Client>,
}

impl Client for FromRow {
    fn name(&self) -> &'static str {
        self.client.name()
    }
    fn config_path(&self) -> &Path {
        self.client.config_path()
    }
    fn home(&self) -> PathBuf {
        self.client.home()
    }
    fn shadows(&self, name: &str) -> Result<Vec<Shadow>, ClientError> {
        self.client.shadows(name)
    }
    fn shadows_of(
        &self,
        names: &[&str],
    ) -> Result<std::collections::BTreeMap<String, Vec<Shadow>>, ClientError> {
        self.client.shadows_of(names)
    }
    fn user_entries(&self) -> Result<Map<String, Value>, ClientError> {
        self.client.user_entries()
    }
    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        self.row.refuse_unheld(name, entry)?;
        self.client.add(name, entry)
    }
    fn remove(&self, name: &str) -> Result<(), ClientError> {
        self.client.remove(name)
    }
    fn observe(&self, name: &str) -> Result<Option<Entry>, ClientError> {
        self.client.observe(name)
    }
    fn show(&self, op: Op, name: &str) -> String {
        self.client.show(op, name)
    }
    fn version(&self) -> Option<super::version::Version> {
        self.client.version()
    }
    fn scope(&self) -> super::Scope {
        self.client.scope()
    }
}

/// A client of [`super::CLIENTS`], as `--client` names it.
#[derive(Clone, Copy)]
pub struct ClientKind(&'static dyn Kind);

impl ClientKind {
    /// The name on the command line, in reports and in the flat document.
    pub fn name(self) -> &'static str {
        self.0.about().name
    }

    /// Its metadata.
    pub(crate) fn row(self) -> &'static About {
        self.0.about()
    }

    /// What mcp-deploy knows of it and does with it.
    pub(crate) fn kind(self) -> &'static dyn Kind {
        self.0
    }

    /// Whether it has a managed scope (`--scope managed`, [`Kind::managed`]).
    pub(crate) fn has_managed_scope(self) -> bool {
        self.0.managed().is_some()
    }

    /// The kind whose [`ClientKind::name`] is `name`.
    pub(crate) fn named(name: &str) -> Option<ClientKind> {
        ClientKind::all().iter().copied().find(|k| k.name() == name)
    }

    /// Every client, in the table's order.
    pub(crate) fn all() -> &'static [ClientKind] {
        static ALL: LazyLock<Vec<ClientKind>> =
            LazyLock::new(|| super::CLIENTS.iter().map(|k| ClientKind(*k)).collect());
        &ALL
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

impl PartialEq for ClientKind {
    fn eq(&self, other: &ClientKind) -> bool {
        // A client's metadata is one static (a client's own type may be zero-sized, and two
        // of those can share an address).
        std::ptr::eq(self.row(), other.row())
    }
}

impl Eq for ClientKind {}

impl std::fmt::Debug for ClientKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl clap::ValueEnum for ClientKind {
    fn value_variants<'a>() -> &'a [ClientKind] {
        ClientKind::all()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

/// `The clients to act on, comma-separated: claude, codex, ...`: a `--client` help line that
/// names every client of the table.
pub(crate) fn client_list_help(what: &str, more: &str) -> String {
    let names: Vec<&str> = super::CLIENTS.iter().map(|d| d.about().name).collect();
    format!("{what}, comma-separated: {}{more}", names.join(", "))
}

/// How to reach the clients' CLIs.
#[derive(Debug, Clone)]
pub(crate) struct ClientOptions {
    /// An explicit binary per client name (`--codex`, `MCP_DEPLOY_CODEX`: its row's
    /// [`Binary`]); a client not named here is found on PATH.
    pub(crate) binaries: BTreeMap<&'static str, PathBuf>,
    /// A client home per client name, in place of the one its environment names (tests):
    /// codex's (its config is `<home>/config.toml`; else `$CODEX_HOME`, else `~/.codex`),
    /// gemini's (`<home>/.gemini/settings.json`; else `$GEMINI_CLI_HOME`, else `$HOME`),
    /// grok's (the directory it runs in, whose `.grok/settings.json` holds its servers; else
    /// HOME), copilot's (its `COPILOT_HOME`: `<home>/mcp-config.json`; else `$COPILOT_HOME`,
    /// else `~/.copilot`). Each is passed to its client, so that it and we read the same file.
    pub(crate) homes: BTreeMap<&'static str, PathBuf>,
    pub(crate) timeout: Duration,
    /// How long a health check may take (claude's MCP_TIMEOUT, passed in milliseconds).
    pub(crate) mcp_timeout: Duration,
    /// Whether the client's CLI will be called. `status` only reads config files, so a missing
    /// binary is no error for it.
    pub(crate) calls_binary: bool,
    /// Where each client call is said as it ends (`-v`: the output layer's
    /// [`crate::output::client_calls`]); `None`: not said.
    pub(crate) said: Option<fn(crate::notice::Notice)>,
}

impl ClientOptions {
    /// For reading the clients' files only: no binary, no call, so no timeout.
    pub(crate) fn files_only() -> ClientOptions {
        ClientOptions {
            binaries: BTreeMap::new(),
            homes: BTreeMap::new(),
            timeout: Duration::from_secs(1),
            mcp_timeout: Duration::ZERO,
            calls_binary: false,
            said: None,
        }
    }

    /// The binary given for `client`, if any.
    pub(crate) fn binary(&self, client: &str) -> Option<&Path> {
        self.binaries.get(client).map(PathBuf::as_path)
    }

    /// The home given for `client`, if any.
    pub(crate) fn home(&self, client: &str) -> Option<&Path> {
        self.homes.get(client).map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_row_has_its_own_name_binary_and_variable() {
        let rows: Vec<&super::About> = super::ClientKind::all().iter().map(|k| k.row()).collect();
        for (i, a) in rows.iter().enumerate() {
            for b in &rows[i + 1..] {
                assert_ne!(a.name, b.name);
                if let (Some(x), Some(y)) = (&a.binary, &b.binary) {
                    assert_ne!(x.name, y.name);
                    assert_ne!(x.env, y.env);
                }
            }
            // A client with a binary has a supported range, and the other way round.
            assert_eq!(a.binary.is_some(), a.supported.is_some(), "{}", a.name);
            if let Some(s) = &a.supported {
                assert_eq!(s.client, a.name);
            }
        }
    }

    #[test]
    fn a_missing_binary_says_how_to_install_it_from_the_row() {
        // The texts each module wrote by hand before, byte for byte.
        for (name, want) in [
            (
                "claude",
                "install Claude Code (npm install -g @anthropic-ai/claude-code@2.1.332), or \
                 pass --claude PATH (or set MCP_DEPLOY_CLAUDE)",
            ),
            (
                "codex",
                "install Codex (npm install -g @openai/codex@0.171.0), or pass --codex PATH \
                 (or set MCP_DEPLOY_CODEX)",
            ),
            (
                "gemini",
                "install Gemini CLI (npm install -g @google/gemini-cli@0.61.0), or pass \
                 --gemini PATH (or set MCP_DEPLOY_GEMINI)",
            ),
            (
                "opencode",
                "install OpenCode (npm install -g opencode-ai@1.18.33), or pass --opencode \
                 PATH (or set MCP_DEPLOY_OPENCODE): it confirms each write",
            ),
            (
                "grok",
                "install Grok CLI (npm install -g @vibe-kit/grok-cli@0.0.34), or pass --grok \
                 PATH (or set MCP_DEPLOY_GROK)",
            ),
            ("cursor", ""),
            (
                "copilot",
                "install GitHub Copilot CLI (npm install -g @github/copilot@1.0.102), or pass \
                 --copilot PATH (or set MCP_DEPLOY_COPILOT)",
            ),
            ("vscode", ""),
        ] {
            assert_eq!(
                super::ClientKind::named(name).unwrap().row().install_help(),
                want
            );
        }
    }

    #[test]
    fn a_client_without_http_refuses_a_remote_entry_before_any_call() {
        let remote = crate::entry::Entry::from_value(
            &serde_json::json!({"type":"http","url":"http://h/mcp"}),
        )
        .unwrap();
        // Without `calls_binary`, a call would fail as a missing binary, not as this refusal.
        let options = super::ClientOptions::files_only();
        let kinds = super::ClientKind::all()
            .iter()
            .filter(|k| k.row().http != super::Http::Supported);
        let mut seen = 0;
        for &kind in kinds {
            let row = kind.row();
            let super::Http::Refused(reason) = row.http else {
                unreachable!()
            };
            let client = super::super::open(kind, &options).unwrap();
            let err = client.add("n", &remote).unwrap_err();
            assert!(
                matches!(&err, super::ClientError::Unrepresentable { client, .. }
                    if *client == row.name),
                "{}: {err}",
                row.name
            );
            assert!(err.to_string().ends_with(reason), "{}: {err}", row.name);
            seen += 1;
        }
        assert!(seen > 0, "grok holds no remote server");
    }

    #[test]
    fn one_client_gives_the_managed_scope_and_the_domain_reaches_it_through_the_list() {
        let with: Vec<&str> = super::ClientKind::all()
            .iter()
            .filter(|k| k.kind().managed().is_some())
            .map(|k| k.name())
            .collect();
        assert_eq!(with, ["claude"]);
        assert_eq!(
            super::super::managed::path(),
            std::path::Path::new("/etc/claude-code/managed-mcp.json")
        );
    }

    #[test]
    fn a_file_written_row_opens_the_file_written_client() {
        // What a dry run shows tells them apart: an edit of the file, or the client's CLI.
        let options = super::ClientOptions::files_only();
        for &kind in super::ClientKind::all() {
            let row = kind.row();
            let client = super::super::open(kind, &options).unwrap();
            let shown = client.show(super::Op::Add, "n");
            let file = format!("add n to {}", client.config_path().display());
            assert_eq!(
                row.writes == super::Writes::File,
                shown == file,
                "{}: {shown}",
                row.name
            );
        }
    }
}
