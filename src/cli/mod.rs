//! The command line, as clap derive structs. The spellings are the design's contract
//! (`docs/design.md`); validation beyond clap's happens in [`crate::deployment::selection`] before any
//! work starts, so a bad argument never leaves a half-done install behind.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::clients::{ClientKind, Scope};
use crate::format::Format;
use crate::usage::UsageError;

pub(crate) mod duration;
pub(crate) mod man;
pub mod manual;

/// The help headings every command groups its flags under, in the manner of cargo and uv:
/// which servers and where, what is checked, which clients and how they are called, how the
/// result is printed. A flag under none (`--dry-run`, `--ledger`, `--lock-timeout`) is listed
/// under "Options".
pub(crate) const SELECTION: &str = "Selection";
pub(crate) const CHECKS: &str = "Checks";
pub(crate) const CLIENTS: &str = "Clients";
pub(crate) const OUTPUT: &str = "Output";

#[derive(Debug, Parser)]
#[command(
    name = "mcp-deploy",
    version = crate::VERSION,
    about = "Register deployed MCP servers with coding-agent clients, and prove what is registered."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// `--color` before the command, as it was spelled when it was global: still accepted,
    /// hidden (the report commands list it as their own; elsewhere nothing is coloured).
    #[arg(long, value_name = "WHEN", hide = true)]
    pub color: Option<clap::ColorChoice>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write <prefix>/mcp/<name>.mcp.json from the server's template.
    RenderMcp(RenderArgs),
    /// Check that a deployed release is the expected commit and the registration is the declared one.
    VerifyIdentity(VerifyArgs),
    /// Render, register at user scope through the client CLI, record, and verify.
    Install(InstallArgs),
    /// Remove the registrations that `install` with the same options makes.
    Uninstall(UninstallArgs),
    /// Show, per server, the deployed release, the rendered document, the registered entry and
    /// the flat document, and whether they agree; exit 1 on drift.
    Status(StatusArgs),
    /// Lay out the built-in sample deployment (codetools and orchestrata) under a directory.
    Sample(SampleArgs),
    /// Create or verify a release's content manifest (MANIFEST.sha256).
    Manifest(ManifestArgs),
    /// Check vendored tarballs against their .sha256 sidecars, the SDK's release manifest
    /// and the npm lockfile's integrity.
    VerifyVendor(VerifyVendorArgs),
    /// Write TARBALL.sha256, after checking the release manifest when one is given.
    PinVendor(PinVendorArgs),
    /// Print a shell completion script, e.g. `mcp-deploy completions bash > /etc/bash_completion.d/mcp-deploy`.
    Completions(CompletionsArgs),
    /// Print a man page (roff): mcp-deploy(1), or with COMMAND e.g. mcp-deploy-install(1).
    Man(ManArgs),
    /// Make releases/<SHA> the live release: check it, switch `current` atomically, register
    /// and verify, all undone on failure.
    Promote(PromoteArgs),
    /// Make the release live before the current one live again (or --to SHA), the way
    /// promote does.
    Rollback(RollbackArgs),
    /// Remove old releases, never the live one, the rollback target, or one a registration
    /// points into.
    Prune(PruneArgs),
    /// Derive each client's allowlist from the declaration (the stable command paths, with
    /// their args where the client pins them, each http server's URL; gemini: the names) and
    /// print it, or write it into the client's managed policy file.
    Policy(PolicyArgs),
    /// Check as status does (changing nothing); install only what drifted, and say what was
    /// healed.
    Reconcile(InstallArgs),
    /// List every client mcp-deploy knows: its binary, npm package, supported range and
    /// config file, and on this host the binary found, its release and whether it is supported.
    Clients(ClientsArgs),
    /// A checked launch: verify the release against its pin and manifest, then execute the
    /// very file hashed with the declared environment (what a client runs instead of the server).
    Exec(ExecArgs),
    /// Merge many hosts' JSON reports (status, verify-identity, install, reconcile ... --json)
    /// into one table, host by server: release, commit, each check's verdict, drift; exit 1
    /// when any host fails.
    Report(ReportArgs),
}

impl Command {
    /// How the command prints its result (`--format`, `--json`, `-q`, `-v`, `--color`), so
    /// that even an error comes out in the chosen format. `None`: the output is the artifact
    /// itself (a completion script, a man page).
    pub fn output(&self) -> Option<OutputChoice> {
        Some(match self {
            Command::RenderMcp(a) => a.output.choice(),
            Command::VerifyIdentity(a) => a.output.choice(),
            Command::Install(a) => a.change.output.choice(),
            Command::Uninstall(a) => a.change.output.choice(),
            Command::Status(a) => a.output.choice(),
            Command::Sample(a) => a.output.choice(),
            Command::Manifest(a) => match &a.command {
                ManifestCommand::Create(c) => c.output.choice(),
                ManifestCommand::Verify(v) => v.output.choice(),
            },
            Command::VerifyVendor(a) => a.output.choice(),
            Command::PinVendor(a) => a.output.choice(),
            Command::Promote(a) => a.transition.change.output.choice(),
            Command::Rollback(a) => a.transition.change.output.choice(),
            Command::Prune(a) => a.output.choice(),
            Command::Policy(a) => a.output_choice(),
            Command::Reconcile(a) => a.change.output.choice(),
            Command::Report(a) => a.output.choice(),
            Command::Clients(a) => a.output.choice(),
            Command::Completions(_) | Command::Man(_) | Command::Exec(_) => return None,
        })
    }

    /// The command's name as typed (`manifest verify` for a subcommand's), for the titles of
    /// the machine formats.
    pub fn name(&self) -> &'static str {
        match self {
            Command::RenderMcp(_) => "render-mcp",
            Command::Exec(_) => "exec",
            Command::VerifyIdentity(_) => "verify-identity",
            Command::Install(_) => "install",
            Command::Uninstall(_) => "uninstall",
            Command::Status(_) => "status",
            Command::Sample(_) => "sample",
            Command::Manifest(a) => match &a.command {
                ManifestCommand::Create(_) => "manifest create",
                ManifestCommand::Verify(_) => "manifest verify",
            },
            Command::VerifyVendor(_) => "verify-vendor",
            Command::PinVendor(_) => "pin-vendor",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
            Command::Promote(_) => "promote",
            Command::Rollback(_) => "rollback",
            Command::Prune(_) => "prune",
            Command::Policy(_) => "policy",
            Command::Reconcile(_) => "reconcile",
            Command::Report(_) => "report",
            Command::Clients(_) => "clients",
        }
    }
}

/// What `--format`, `--json`, `-q`, `-v` and `--color` ask for, as given: the command layer
/// checks it (`--json` with another `--format` is a usage error) and turns it into the
/// output layer's style.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutputChoice {
    pub format: Option<Format>,
    pub json: bool,
    pub quiet: bool,
    pub verbose: bool,
    /// `None`: not given to the command (or the command colours nothing).
    pub color: Option<clap::ColorChoice>,
}

/// The commands whose report is a state worth sampling (`--format prometheus`).
pub(crate) const PROMETHEUS_COMMANDS: [&str; 3] = ["status", "verify-identity", "reconcile"];

impl OutputChoice {
    /// The one format asked for by `command`'s `--format` and `--json`. `--json` is `--format
    /// json`; with another `--format` it is a usage error, and so is `--format prometheus`
    /// for a command whose report is not a state: both before anything runs.
    pub(crate) fn resolve_format(&self, command: &str) -> Result<Format, UsageError> {
        match (self.format, self.json) {
            (None, false) => Ok(Format::Human),
            (None, true) | (Some(Format::Json), _) => Ok(Format::Json),
            (Some(other), true) => {
                let other = format!("{other:?}").to_lowercase();
                Err(UsageError::new(
                    format!("--json and --format {other} ask for two formats"),
                    format!(
                        "give one: --json is --format json, or drop --json for --format {other}"
                    ),
                ))
            }
            (Some(Format::Prometheus), false) if !PROMETHEUS_COMMANDS.contains(&command) => {
                Err(UsageError::new(
                    format!("{command} has no --format prometheus"),
                    "status, verify-identity and reconcile print prometheus samples; give --format json, \
                     junit or github here",
                ))
            }
            (Some(format), false) => Ok(format),
        }
    }
}

impl Cli {
    /// `--color` given to the command, else the old spelling before it, else auto.
    pub(crate) fn colour(&self) -> clap::ColorChoice {
        let choice = self.command.output().unwrap_or_default();
        choice
            .color
            .or(self.color)
            .unwrap_or(clap::ColorChoice::Auto)
    }
}

/// `--format`, `--json`, `-q`, `-v`, `--color`: how a check report is printed (verify-identity,
/// install, uninstall, status, promote, rollback, verify-vendor, manifest verify).
#[derive(Debug, Args, Clone)]
pub struct ReportOutputArgs {
    /// How to print the report: human; json (one object); junit (JUnit XML, a test suite per
    /// server and client, a test case per check); github (GitHub Actions workflow commands,
    /// an ::error annotation per failed check); prometheus (status, verify-identity and
    /// reconcile: samples for node_exporter's textfile collector) [default: human].
    #[arg(long, value_name = "FORMAT", value_enum, hide_possible_values = true, help_heading = OUTPUT)]
    pub format: Option<Format>,
    /// Print the report as one JSON object (the same as --format json).
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,
    /// Print only the failed checks and the verdict; on stderr only warnings and errors.
    #[arg(short, long, conflicts_with = "verbose", help_heading = OUTPUT)]
    pub quiet: bool,
    /// Also say on stderr every client call made (its exit status and time) and the
    /// progress lines, even when stderr is not a terminal.
    #[arg(short, long, help_heading = OUTPUT)]
    pub verbose: bool,
    /// When to colour the report's ok and FAIL: auto (stdout is a terminal, NO_COLOR is not
    /// set, TERM is not dumb), always, never [default: auto].
    #[arg(long, value_name = "WHEN", help_heading = OUTPUT)]
    pub color: Option<clap::ColorChoice>,
}

impl ReportOutputArgs {
    pub fn choice(&self) -> OutputChoice {
        OutputChoice {
            format: self.format,
            json: self.json,
            quiet: self.quiet,
            verbose: self.verbose,
            color: self.color,
        }
    }
}

/// `--format human|json` and `--json`: how a command whose result is not a check report
/// prints it (render-mcp, sample, prune, pin-vendor, manifest create). A JUnit test case or a
/// GitHub annotation would have nothing to say about it: clap refuses those, naming the two
/// values it takes.
#[derive(Debug, Args, Clone)]
pub struct PlainOutputArgs {
    /// How to print the result: human, or json (one object) [default: human].
    #[arg(long, value_name = "FORMAT", value_parser = plain_format(), help_heading = OUTPUT)]
    pub format: Option<Format>,
    /// Print the result as one JSON object (the same as --format json).
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,
}

/// `human` and `json` only: the formats of a result that is not a check report.
fn plain_format() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["human", "json"]).map(|s| match s.as_str() {
        "json" => Format::Json,
        _ => Format::Human,
    })
}

impl PlainOutputArgs {
    pub fn choice(&self) -> OutputChoice {
        OutputChoice {
            format: self.format,
            json: self.json,
            ..OutputChoice::default()
        }
    }
}

/// Which servers, where, under which names: shared by install, uninstall, status and policy.
#[derive(Debug, Args, Clone)]
pub struct ServerArgs {
    /// A directory of deployments: server S lives at ROOT/S [default: each server's declared
    /// prefix].
    #[arg(long, value_name = "ROOT", conflicts_with = "prefix", short = 'r', help_heading = SELECTION)]
    pub root: Option<PathBuf>,
    /// The same as --root (its spelling before --root), and also accepts one server's own
    /// deployment, e.g. --prefix /opt/codetools.
    #[arg(long, value_name = "ROOT", help_heading = SELECTION)]
    pub prefix: Option<PathBuf>,
    /// One server's own deployment, e.g. -p /opt/codetools, as -p is in every command (a
    /// directory of deployments is -r).
    #[arg(
        short = 'p',
        value_name = "DIR",
        conflicts_with_all = ["root", "prefix"],
        help_heading = SELECTION
    )]
    pub deployment: Option<PathBuf>,
    /// Only these servers (repeatable) [default: every declared server].
    #[arg(long = "server", value_name = "NAME", short = 's', help_heading = SELECTION)]
    pub servers: Vec<String>,
    #[command(flatten)]
    pub suffix: NameSuffixArgs,
}

/// `--name-suffix`: of [`ServerArgs`], and of promote and rollback, which word its help for
/// their one server ([`reword`]).
#[derive(Debug, Args, Clone)]
pub struct NameSuffixArgs {
    /// Register each server as NAME+SUFFIX, e.g. -test (uninstall, status and policy: the
    /// suffix install was given).
    #[arg(
        long,
        value_name = "SUFFIX",
        default_value = "",
        allow_hyphen_values = true,
        help_heading = SELECTION
    )]
    pub name_suffix: String,
}

/// [`ServerArgs`] with the flat document and the declaration: install, uninstall and status.
#[derive(Debug, Args, Clone)]
pub struct SelectionArgs {
    #[command(flatten)]
    pub which: ServerArgs,
    #[command(flatten)]
    pub flat_document: FlatDocumentArgs,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
}

/// Options that choose which servers are declared.
#[derive(Debug, Args, Clone, Default)]
pub struct DeclarationArgs {
    /// A server declaration file (JSON) that replaces the built-in one.
    #[arg(long, value_name = "FILE", help_heading = SELECTION)]
    pub config: Option<PathBuf>,
    /// How a client starts every server: `direct`, the declared command inside the release;
    /// `checked`, `mcp-deploy exec`, which checks the release at every start. Give the same
    /// to install, verify-identity, status, policy, promote and reconcile [default: each
    /// server's `launch` in the declaration, else direct]
    #[arg(long, value_enum, value_name = "HOW", help_heading = SELECTION)]
    pub launch: Option<crate::deployment::declaration::Launch>,
}

/// Options for talking to the client CLIs: `--client`, one binary flag per client of
/// [`crate::clients::CLIENTS`] that has a binary (`--codex PATH`, else `MCP_DEPLOY_CODEX`: its
/// row's `binary`), and `--client-timeout`. Its clap arguments are built from the table
/// ([`clap::Args`] below), so that a client's row is its flag.
#[derive(Debug, Clone)]
pub struct ClientArgs {
    /// The clients to act on (`--client`).
    pub clients: Vec<ClientKind>,
    /// An explicit binary per client name (`--claude`, `--codex`, ...: the flag is the
    /// binary's name).
    pub binaries: BTreeMap<&'static str, PathBuf>,
    /// How long one client call may take (`--client-timeout`).
    pub client_timeout: Duration,
}

/// The binary flags with the name of their client, in the order `--help` lists them: by
/// flag.
fn binary_flags() -> Vec<(&'static str, &'static crate::clients::Binary)> {
    let mut flags: Vec<_> = crate::clients::CLIENTS
        .iter()
        .filter_map(|d| d.about().binary.as_ref().map(|b| (d.about().name, b)))
        .collect();
    flags.sort_by_key(|(_, b)| b.name);
    flags
}

impl ClientArgs {
    /// `--client` (with `default`, when given, and the help `what` ... `more`), the binary
    /// flags and `--client-timeout`.
    fn augment(
        cmd: clap::Command,
        default: Option<&'static str>,
        what: &str,
        more: &str,
    ) -> clap::Command {
        use clap::{Arg, ArgAction};
        let mut client = Arg::new("clients")
            .help_heading(CLIENTS)
            .long("client")
            .value_name("LIST")
            .value_delimiter(',')
            .action(ArgAction::Append)
            .value_parser(clap::value_parser!(ClientKind))
            .help(crate::clients::client_list_help(what, more));
        if let Some(default) = default {
            client = client.default_value(default);
        }
        let mut cmd = cmd.arg(client);
        let mut ids: Vec<&'static str> = vec!["clients"];
        for (_, b) in binary_flags() {
            cmd = cmd.arg(
                Arg::new(b.name)
                    .help_heading(CLIENTS)
                    .long(b.name)
                    .value_name("PATH")
                    .env(b.env)
                    .action(ArgAction::Set)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(b.help),
            );
            ids.push(b.name);
        }
        ids.push("client_timeout");
        cmd.arg(
            Arg::new("client_timeout")
                .help_heading(CLIENTS)
                .long("client-timeout")
                .value_name("DURATION")
                .default_value("60s")
                .action(ArgAction::Set)
                .value_parser(duration::seconds)
                .help(
                    "How long one client call may take before it is killed, e.g. 60s, 500ms, \
                     2m (at least 1ms; a bare number is seconds)",
                ),
        )
        .group(clap::ArgGroup::new("ClientArgs").multiple(true).args(ids))
    }
}

impl clap::Args for ClientArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        ClientArgs::augment(
            cmd,
            Some(crate::clients::primary_name()),
            "The clients to act on",
            "",
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// [`ClientArgs`] whose `--client` defaults to every client of the table (`clients`).
#[derive(Debug, Clone)]
pub struct EveryClientArgs(pub ClientArgs);

impl clap::Args for EveryClientArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        ClientArgs::augment(cmd, None, "The clients to list", " [default: every client]")
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for EveryClientArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut m.clone())
    }

    fn from_arg_matches_mut(m: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut args = ClientArgs::from_arg_matches_mut(m)?;
        if args.clients.is_empty() {
            args.clients = ClientKind::all().to_vec();
        }
        Ok(EveryClientArgs(args))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::FromArgMatches for ClientArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut m.clone())
    }

    fn from_arg_matches_mut(m: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut binaries = BTreeMap::new();
        for (client, b) in binary_flags() {
            if let Some(path) = m.remove_one::<PathBuf>(b.name) {
                binaries.insert(client, path);
            }
        }
        Ok(ClientArgs {
            clients: m
                .remove_many::<ClientKind>("clients")
                .map(Iterator::collect)
                .unwrap_or_default(),
            binaries,
            client_timeout: m.remove_one::<Duration>("client_timeout").ok_or_else(|| {
                clap::Error::raw(
                    clap::error::ErrorKind::MissingRequiredArgument,
                    "--client-timeout has no value",
                )
            })?,
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// `--ledger`: for the commands that change registrations (install, uninstall, promote,
/// rollback).
#[derive(Debug, Args, Clone)]
pub struct LedgerArgs {
    /// The audit ledger to append changes to [default: $XDG_STATE_HOME/mcp-deploy/ledger.ndjson].
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
}

/// `--content` and `--trusted-signers`: what a release must hold besides its commit
/// (verify-identity, install, reconcile, promote, rollback). The help below is
/// verify-identity's; the others word it for what they check ([`reword`]).
#[derive(Debug, Args, Clone)]
pub struct ReleaseChecksArgs {
    /// Require the release to hold a MANIFEST.sha256 that its files match.
    #[arg(long, help_heading = CHECKS)]
    pub content: bool,
    #[command(flatten)]
    pub trust: TrustArgs,
}

/// `--trusted-signers`, `--trusted-builder` and `--trusted-root`: what must vouch for a
/// release (verify-identity, install, reconcile, promote, rollback, manifest verify).
#[derive(Debug, Args, Clone)]
pub struct TrustArgs {
    /// A trust policy (OpenSSH allowed_signers): the release's MANIFEST.sha256.sig must be a
    /// signature by a signer it allows for the mcp-deploy namespace. A server's own
    /// trusted_signers must pass too.
    #[arg(long, value_name = "FILE", help_heading = CHECKS)]
    pub trusted_signers: Option<PathBuf>,
    /// A builder trust policy (TOML, one [[builder]] per allowed workflow): the release's
    /// MANIFEST.sha256.sigstore.json must be a Sigstore bundle over its MANIFEST.sha256 that
    /// verifies offline and names a build the policy allows. With --trusted-signers, both must
    /// pass.
    #[arg(long, value_name = "FILE", help_heading = CHECKS)]
    pub trusted_builder: Option<PathBuf>,
    /// The Sigstore trusted root (trusted_root.json) provenance bundles must chain to [default:
    /// the public-good instance's and GitHub's, shipped with mcp-deploy].
    #[arg(long, value_name = "FILE", help_heading = CHECKS, requires = "trusted_builder")]
    pub trusted_root: Option<PathBuf>,
}

/// `--ledger`, `--dry-run` and the report's output: for the commands that change
/// registrations (install, reconcile, uninstall, promote, rollback). The help of `--dry-run`
/// below is install's; the others say what theirs does ([`reword`]).
#[derive(Debug, Args, Clone)]
pub struct ChangeArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print what would change and change nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

/// For `#[command(mut_args(..))]`: the shared flag `id` with this command's own help
/// (`mut_arg` would move the flag to the end, out of its place in the help, the man page and
/// the completions).
fn reword(
    id: &'static str,
    help: impl Into<clap::builder::StyledStr>,
) -> impl FnMut(clap::Arg) -> clap::Arg {
    let help = help.into();
    move |a| {
        if a.get_id() == id {
            a.help(help.clone())
        } else {
            a
        }
    }
}

/// `--mcp-timeout`: for the commands that register through `claude mcp` and read back with
/// `claude mcp get` (install, promote, rollback).
#[derive(Debug, Args, Clone)]
pub struct McpTimeoutArgs {
    /// How long `claude mcp get` may spend health-checking a server, e.g. 5s, 500ms (passed
    /// to claude as MCP_TIMEOUT in milliseconds; a bare number, and MCP_TIMEOUT's value, is
    /// milliseconds).
    #[arg(
        long,
        value_name = "DURATION",
        env = "MCP_TIMEOUT",
        default_value = "5s",
        value_parser = duration::millis,
        help_heading = CLIENTS
    )]
    pub mcp_timeout: Duration,
}

/// `--registered`, and `--mcp-json` (the seed's name for it): the flat document that every
/// command reading or writing it takes (install, uninstall, status, verify-identity,
/// promote, rollback, prune).
#[derive(Debug, Args, Clone)]
pub struct FlatDocumentArgs {
    /// The flat registration document, {"mcpServers":{...}} [default:
    /// ~/.claude/mcp-registered.json, or $CLAUDE_CONFIG_DIR/mcp-registered.json].
    #[arg(long = "registered", value_name = "FILE", help_heading = SELECTION)]
    pub flat_document: Option<PathBuf>,
    /// The same as --registered (the seed's name for it).
    #[arg(
        long = "mcp-json",
        value_name = "FILE",
        conflicts_with = "flat_document",
        help_heading = SELECTION
    )]
    pub mcp_json: Option<PathBuf>,
}

/// `--prefix` and `--server`: the one server render-mcp acts on.
#[derive(Debug, Args, Clone)]
pub struct ServerAtArgs {
    /// One deployment (the server's prefix), e.g. /opt/codetools.
    #[arg(long, value_name = "DIR", short = 'p', help_heading = SELECTION)]
    pub prefix: PathBuf,
    /// The declared server [default: the last component of --prefix].
    #[arg(long, value_name = "NAME", short = 's', help_heading = SELECTION)]
    pub server: Option<String>,
}

/// The release directory and `--jobs`: what `manifest create` and `manifest verify` hash.
#[derive(Debug, Args, Clone)]
pub struct ManifestDirArgs {
    /// The release directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Hashing threads [default: the number of CPUs].
    #[arg(long, value_name = "N", short = 'j')]
    pub jobs: Option<NonZeroUsize>,
}

/// Options of the commands that change a client's registrations (install, uninstall).
#[derive(Debug, Args, Clone)]
pub struct LockArgs {
    /// How long to wait for another run's lock on the client config before giving up, e.g.
    /// 300s, 2m (a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "300s", value_parser = duration::seconds)]
    pub lock_timeout: Duration,
}

/// `--scope`: where install registers and uninstall removes.
#[derive(Debug, Args, Clone)]
pub struct ScopeArgs {
    /// Where the registration lives: user (the client's user scope, for the user running
    /// mcp-deploy), or managed (claude only: /etc/claude-code/managed-mcp.json, one
    /// registration for every user of the host, after which claude loads only that file's
    /// servers; takes root).
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
}

/// `--strict`: for the commands that report warnings (install, status, reconcile).
#[derive(Debug, Args, Clone)]
pub struct StrictArgs {
    /// Treat a warning (a config layer that could not be compared, a process still running
    /// another release) as a failed check. A same-name entry of another scope that shadows the
    /// user-scope one fails with or without it.
    #[arg(long, help_heading = CHECKS)]
    pub strict: bool,
}

/// The clients `status` reads (and `policy`, and verify-identity, which words their help for
/// itself: [`reword`]). It reads their config files and never calls their CLIs, so it takes no
/// binary and no timeout.
#[derive(Debug, Args, Clone)]
pub struct ClientListArgs {
    #[arg(
        help = crate::clients::client_list_help("The clients to read", ""),
        long = "client",
        value_name = "LIST",
        value_delimiter = ',',
        default_value = crate::clients::primary_name(),
        help_heading = CLIENTS
    )]
    pub clients: Vec<ClientKind>,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub at: ServerAtArgs,
    /// The server declaration file (JSON) the registration names, else the built-in one.
    #[arg(long, value_name = "FILE", help_heading = SELECTION)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// The server's arguments, as declared (a client passes them after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub at: ServerAtArgs,
    #[command(flatten)]
    pub output: PlainOutputArgs,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "The flat document (--registered) is one witness: where the client's own config \
                  exists here, its live entry is compared too; else the report says \"document \
                  only\".",
    mut_args(reword(
        "clients",
        crate::clients::client_list_help(
            "The clients whose registrations to check",
            ". claude's are the document's `mcpServers`; another client's are \
             `clients.<client>.mcpServers`",
        )
    ))
)]
pub struct VerifyArgs {
    /// One deployment, e.g. /opt/codetools.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "root",
        required_unless_present = "root",
        short = 'p',
        help_heading = SELECTION
    )]
    pub prefix: Option<PathBuf>,
    /// A directory of deployments: check every declared server deployed at ROOT/S (or those
    /// of --server), each against its --expect-commit NAME=SHA, in one report.
    #[arg(long, value_name = "ROOT", short = 'r', help_heading = SELECTION)]
    pub root: Option<PathBuf>,
    /// The declared server (repeatable with --root) [default: the last component of
    /// --prefix; with --root, every one deployed there].
    #[arg(long = "server", value_name = "NAME", short = 's', help_heading = SELECTION)]
    pub servers: Vec<String>,
    /// The full commit sha (40 or 64 hex) the deployed release must be: SHA when one server
    /// is checked, else NAME=SHA for each (repeatable).
    #[arg(long = "expect-commit", value_name = "[NAME=]SHA", required = true, short = 'e', help_heading = CHECKS)]
    pub expect_commits: Vec<String>,
    #[command(flatten)]
    pub flat_document: FlatDocumentArgs,
    /// Each server is registered as NAME+SUFFIX, e.g. -test.
    #[arg(
        long,
        value_name = "SUFFIX",
        default_value = "",
        allow_hyphen_values = true,
        conflicts_with = "name",
        help_heading = SELECTION
    )]
    pub name_suffix: String,
    /// The name the server is registered under [default: the server's name].
    #[arg(long, value_name = "REGISTERED_NAME", help_heading = SELECTION)]
    pub name: Option<String>,
    #[command(flatten)]
    pub release: ReleaseChecksArgs,
    /// Accepted for scripts written before doubt failed by itself: a source the client obeys
    /// that cannot be compared ("not compared: ...") now fails with or without it.
    #[arg(long, hide = true, help_heading = CHECKS)]
    pub strict: bool,
    /// Fail when only the document witnessed the registration: the client's own config is
    /// not on this host, so its live entry could not be compared ("document only").
    #[arg(long, help_heading = CHECKS)]
    pub require_live: bool,
    /// Fail when the client could load any server other than the declared ones: every
    /// other registration, in every scope it reads, must be kept out by a policy it obeys
    /// (named as the evidence), and every file it reads must be readable.
    #[arg(long, help_heading = CHECKS)]
    pub only_deployed: bool,
    #[command(flatten)]
    pub handshake: HandshakeArgs,
    #[command(flatten)]
    pub client: ClientListArgs,
    #[command(flatten)]
    pub output: ReportOutputArgs,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
}

#[derive(Debug, Args)]
#[command(
    mut_args(reword(
        "content",
        "Require each release to hold a MANIFEST.sha256 that its files match"
    )),
    mut_args(reword(
        "trusted_signers",
        "A trust policy (OpenSSH allowed_signers) for every selected server: each release's \
         MANIFEST.sha256.sig must be a signature by a signer it allows for the mcp-deploy \
         namespace. A server's own trusted_signers must pass too"
    ))
)]
pub struct InstallArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// The commit a server's release must be: NAME=SHA (repeatable), or SHA when one server
    /// is selected [default: its VERSION].
    #[arg(long = "expect-commit", value_name = "[NAME=]SHA", short = 'e', help_heading = CHECKS)]
    pub expect_commits: Vec<String>,
    #[command(flatten)]
    pub release: ReleaseChecksArgs,
    #[command(flatten)]
    pub tools: ToolsGateArgs,
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub mcp_timeout: McpTimeoutArgs,
    #[command(flatten)]
    pub lock: LockArgs,
    #[command(flatten)]
    pub strict: StrictArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

/// `--handshake` and `--handshake-timeout` (verify-identity; install and reconcile word the
/// first for themselves, [`ToolsGateArgs`]).
#[derive(Debug, Args, Clone)]
pub struct HandshakeArgs {
    /// Start the registered server and check that it answers MCP's initialize and tools/list,
    /// and that it hands over the tool surface recorded for its release.
    #[arg(long, help_heading = CHECKS)]
    pub handshake: bool,
    /// How long the whole handshake may take before the server is killed, e.g. 10s, 500ms (a
    /// bare number is seconds).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10s",
        requires = "handshake",
        value_parser = duration::seconds,
        help_heading = CHECKS
    )]
    pub handshake_timeout: Duration,
}

/// install's and reconcile's handshake gate and the tool surface it records: on unless
/// `--no-handshake`.
#[derive(Debug, Args, Clone)]
pub struct ToolsGateArgs {
    /// Do not start the servers before registering them (the handshake gate: each must answer
    /// MCP's initialize and tools/list, and hand over the tool surface recorded for its
    /// release, or have it recorded when there is none): nothing is recorded or compared, and
    /// the report says so.
    #[arg(long, help_heading = CHECKS)]
    pub no_handshake: bool,
    /// The handshake gate is on by default; accepted for scripts written when it was not.
    #[arg(long, hide = true, conflicts_with = "no_handshake")]
    pub handshake: bool,
    /// How long each server's handshake may take before it is killed and the install
    /// refused, e.g. 10s, 500ms (a bare number is seconds).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10s",
        conflicts_with = "no_handshake",
        value_parser = duration::seconds,
        help_heading = CHECKS
    )]
    pub handshake_timeout: Duration,
    /// Record a tool surface that differs from the one recorded for the same release, on
    /// purpose: the ledger says who accepted which change (install only).
    #[arg(long, conflicts_with = "no_handshake", help_heading = CHECKS)]
    pub accept_tools: bool,
}

#[derive(Debug, Args)]
#[command(mut_args(reword("dry_run", "Print what would be removed and change nothing")))]
pub struct UninstallArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub lock: LockArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,
    #[command(flatten)]
    pub output: ReportOutputArgs,
    #[command(flatten)]
    pub client: ClientListArgs,
    #[command(flatten)]
    pub strict: StrictArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The hosts' JSON reports (each carries its "host", "at" and "machine"); - reads one from
    /// stdin. Of one machine's reports the newer wins; at one second none does, and any that
    /// fails fails the host; one dated more than 5m ahead of this clock fails as clock ahead.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// A host whose newest report is older than this fails as stale, e.g. 30m, 2h (a bare
    /// number is seconds): a host that stopped reporting does not pass on its last report.
    #[arg(long, value_name = "DURATION", value_parser = duration::seconds)]
    pub max_age: Option<Duration>,
    /// A host that must have a report, as its reports name it (its hostname); repeatable or
    /// comma-separated. One without a report fails as missing.
    #[arg(
        long = "expect-host",
        value_name = "HOST",
        value_delimiter = ',',
        value_parser = clap::builder::NonEmptyStringValueParser::new()
    )]
    pub expect_hosts: Vec<String>,
    #[command(flatten)]
    pub output: PlainOutputArgs,
}

#[derive(Debug, Args)]
pub struct ClientsArgs {
    #[command(flatten)]
    pub client: EveryClientArgs,
    #[command(flatten)]
    pub output: PlainOutputArgs,
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    /// The directory to lay the sample deployment out in (ROOT/codetools, ROOT/orchestrata).
    #[arg(value_name = "ROOT")]
    pub root: PathBuf,
    #[command(flatten)]
    pub output: PlainOutputArgs,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print, e.g. `install` or `manifest verify` [default: the
    /// top-level page].
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ManifestArgs {
    #[command(subcommand)]
    pub command: ManifestCommand,
}

#[derive(Debug, Subcommand)]
pub enum ManifestCommand {
    /// Write DIR/MANIFEST.sha256: the SHA-256 of every regular file in the release.
    Create(ManifestCreateArgs),
    /// Check DIR against its MANIFEST.sha256: modified, missing, added files, escaping symlinks.
    Verify(ManifestVerifyArgs),
}

#[derive(Debug, Args)]
pub struct ManifestCreateArgs {
    #[command(flatten)]
    pub release: ManifestDirArgs,
    #[command(flatten)]
    pub output: PlainOutputArgs,
}

#[derive(Debug, Args)]
pub struct ManifestVerifyArgs {
    #[command(flatten)]
    pub release: ManifestDirArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

#[derive(Debug, Args)]
pub struct VerifyVendorArgs {
    /// The vendor directory to walk.
    #[arg(value_name = "DIR", default_value = "vendor")]
    pub dir: PathBuf,
    /// The SDK's release manifest: JSON {"artifacts":[{name,version,file,sha256}]} or sha256sum format.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// The npm project (directory with package.json) [default: the nearest one above DIR,
    /// not above the repository root].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

#[derive(Debug, Args)]
pub struct PinVendorArgs {
    /// The vendored tarball; its sidecar is TARBALL.sha256.
    #[arg(value_name = "TARBALL")]
    pub tarball: PathBuf,
    /// The SDK's release manifest, which must list the tarball with the same sha256.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    #[command(flatten)]
    pub output: PlainOutputArgs,
}

/// What promote and rollback share: the server, its registration, and install's options.
#[derive(Debug, Args)]
#[command(
    mut_args(reword("name_suffix", "Register the server as NAME+SUFFIX, e.g. -test")),
    mut_args(reword(
        "trusted_signers",
        "A trust policy (OpenSSH allowed_signers): the release to make live must carry a \
         MANIFEST.sha256.sig by a signer it allows for the mcp-deploy namespace, checked before \
         anything switches. A server's own trusted_signers must pass too"
    )),
    mut_args(reword(
        "dry_run",
        "Check the release and say whether `current` would switch; lock, switch, register and \
         write nothing"
    ))
)]
pub struct TransitionArgs {
    /// The declared server [default: the last component of --prefix].
    #[arg(long, value_name = "NAME", short = 's', help_heading = SELECTION)]
    pub server: Option<String>,
    #[command(flatten)]
    pub suffix: NameSuffixArgs,
    #[command(flatten)]
    pub flat_document: FlatDocumentArgs,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
    #[command(flatten)]
    pub release: ReleaseChecksArgs,
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub mcp_timeout: McpTimeoutArgs,
    /// How long to wait for another run's lock (the prefix's, then the client config's), e.g.
    /// 300s, 2m (a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "300s", value_parser = duration::seconds)]
    pub lock_timeout: Duration,
    /// Do not start the release's server before the switch (the handshake gate: it must
    /// answer MCP's initialize and tools/list); the report says it was skipped.
    #[arg(long, help_heading = CHECKS)]
    pub no_handshake: bool,
    /// How long the gate's handshake may take before the server is killed and the switch
    /// refused, e.g. 10s, 500ms (a bare number is seconds).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10s",
        conflicts_with = "no_handshake",
        value_parser = duration::seconds,
        help_heading = CHECKS
    )]
    pub handshake_timeout: Duration,
}

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// One deployment (the server's prefix), a release layout, e.g. /opt/codetools.
    #[arg(long, value_name = "DIR", short = 'p', help_heading = SELECTION)]
    pub prefix: PathBuf,
    /// The release to make live: <prefix>/releases/<SHA>, the full commit sha.
    #[arg(long, value_name = "SHA", help_heading = SELECTION)]
    pub release: String,
    #[command(flatten)]
    pub transition: TransitionArgs,
}

#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// One deployment (the server's prefix), a release layout, e.g. /opt/codetools.
    #[arg(long, value_name = "DIR", short = 'p', help_heading = SELECTION)]
    pub prefix: PathBuf,
    /// The release to go back to [default: the one live before the current one, from the
    /// promote history].
    #[arg(long = "to", value_name = "SHA", help_heading = SELECTION)]
    pub to: Option<String>,
    #[command(flatten)]
    pub transition: TransitionArgs,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// One deployment (the server's prefix), a release layout, e.g. /opt/codetools.
    #[arg(long, value_name = "DIR", short = 'p', help_heading = SELECTION)]
    pub prefix: PathBuf,
    /// How many of the newest releases to keep, besides those that must stay.
    #[arg(long, value_name = "N")]
    pub keep: usize,
    /// List what would be removed and why the others stay; remove nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    // Its entries protect releases.
    #[command(flatten)]
    pub flat_document: FlatDocumentArgs,
    /// How long to wait for another run's lock on the prefix, e.g. 300s, 2m (a bare number is
    /// seconds).
    #[arg(long, value_name = "DURATION", default_value = "300s", value_parser = duration::seconds)]
    pub lock_timeout: Duration,
    #[command(flatten)]
    pub output: PlainOutputArgs,
}

/// How `policy` prints: for people, as one JSON object, or as the client's own file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyFormat {
    /// Lines for people.
    Human,
    /// One JSON object: the derived allowlist of each client.
    Json,
    /// The client's own policy file format: the fragment to merge into it.
    File,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Clients: claude (managed-settings.json allowedMcpServers, with \
                  allowManagedMcpServersOnly: pins the exact command line), codex \
                  (requirements.toml [mcp_servers.NAME.identity]: pins the command path, not its \
                  arguments), gemini (the system settings' mcp.allowed: names only)."
)]
pub struct PolicyArgs {
    #[command(flatten)]
    pub selection: PolicySelectionArgs,
    #[command(flatten)]
    pub client: ClientListArgs,
    /// Put the allowlist into the client's managed policy file (root is needed for /etc),
    /// keeping every other key and every entry mcp-deploy did not make.
    #[arg(long)]
    pub write: bool,
    /// Say what --write would change in the policy file, and write nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    #[command(flatten)]
    pub lock: LockArgs,
    /// How to print: human; json (one object); file (the fragment of the client's own policy
    /// file, to merge into it) [default: human].
    #[arg(long, value_name = "FORMAT", value_enum, hide_possible_values = true, help_heading = OUTPUT)]
    pub format: Option<PolicyFormat>,
    /// Print the result as one JSON object (the same as --format json).
    #[arg(long, conflicts_with = "format", help_heading = OUTPUT)]
    pub json: bool,
}

/// [`SelectionArgs`] without the flat document, which a policy does not read.
#[derive(Debug, Args, Clone)]
pub struct PolicySelectionArgs {
    #[command(flatten)]
    pub which: ServerArgs,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
}

impl PolicyArgs {
    pub fn output_choice(&self) -> OutputChoice {
        OutputChoice {
            format: match (self.format, self.json) {
                (Some(PolicyFormat::Json), _) | (_, true) => Some(Format::Json),
                _ => None,
            },
            ..OutputChoice::default()
        }
    }
}
