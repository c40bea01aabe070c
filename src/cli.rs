//! The command line, as clap derive structs. The spellings are the design's contract
//! (`../shared/design.md`); validation beyond clap's happens in [`crate::config`] before any
//! work starts, so a bad argument never leaves a half-done install behind.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "mcp-deploy",
    version,
    about = "Register deployed MCP servers with coding-agent clients, and prove what is registered.",
    after_help = "Exit status: 0 every check passed, 1 a check failed, 2 could not run."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write <prefix>/mcp/<name>.mcp.json from the server's template.
    RenderMcp(RenderArgs),
    /// Check that a deployed release is the expected commit and the registration points into it.
    VerifyIdentity(VerifyArgs),
    /// Render, register at user scope through the client CLI, record, and verify.
    Install(InstallArgs),
    /// Remove the registrations that `install` with the same options makes.
    Uninstall(UninstallArgs),
    /// Lay out the built-in sample deployment (codetools and orchestrata) under a directory.
    Sample(SampleArgs),
    /// Create or verify a release's content manifest (MANIFEST.sha256).
    Manifest(ManifestArgs),
}

/// Options that choose which servers are declared.
#[derive(Debug, Args, Clone, Default)]
pub struct DeclarationArgs {
    /// A server declaration file (JSON) that replaces the built-in one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Options for talking to the client CLI.
#[derive(Debug, Args, Clone)]
pub struct ClientArgs {
    /// The claude binary [default: `claude` on PATH].
    #[arg(long, value_name = "PATH", env = "MCP_DEPLOY_CLAUDE")]
    pub claude: Option<PathBuf>,
    /// The codex binary [default: `codex` on PATH].
    #[arg(long, value_name = "PATH", env = "MCP_DEPLOY_CODEX")]
    pub codex: Option<PathBuf>,
    /// The gemini binary [default: `gemini` on PATH].
    #[arg(long, value_name = "PATH", env = "MCP_DEPLOY_GEMINI")]
    pub gemini: Option<PathBuf>,
    /// Seconds one client call may take before it is killed.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub client_timeout: u64,
    /// Milliseconds `claude mcp get` may spend health-checking a server (passed as MCP_TIMEOUT).
    #[arg(long, value_name = "MS", env = "MCP_TIMEOUT", default_value_t = 5000)]
    pub mcp_timeout: u64,
    /// Seconds to wait for another run's lock on the client config before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub lock_timeout: u64,
    /// Treat a same-name local- or project-scope entry that shadows the user-scope one as a
    /// failed check, not a warning.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The server's prefix, e.g. /opt/codetools.
    #[arg(long, value_name = "DIR")]
    pub prefix: PathBuf,
    /// The declared server [default: the last component of --prefix].
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The server's prefix, e.g. /opt/codetools.
    #[arg(long, value_name = "DIR")]
    pub prefix: PathBuf,
    /// The declared server [default: the last component of --prefix].
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// The full commit sha (40 or 64 hex) the deployed release must be.
    #[arg(long, value_name = "SHA")]
    pub expect_commit: String,
    /// The document that holds the registration: {"mcpServers":{...}}.
    #[arg(long, value_name = "FILE")]
    pub mcp_json: PathBuf,
    /// The name the server is registered under [default: the server's name].
    #[arg(long, value_name = "REGISTERED_NAME")]
    pub name: Option<String>,
    /// Require the release to hold a MANIFEST.sha256 that its files match.
    #[arg(long)]
    pub content: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Put server S at ROOT/S [default: each server's declared prefix].
    #[arg(long, value_name = "ROOT")]
    pub prefix: Option<PathBuf>,
    /// Install only these servers (repeatable) [default: every declared server].
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Register each server as NAME+SUFFIX, e.g. -test.
    #[arg(
        long,
        value_name = "SUFFIX",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub name_suffix: String,
    /// The flat registration document [default: ~/.claude/mcp-registered.json].
    #[arg(long, value_name = "FILE")]
    pub registered: Option<PathBuf>,
    /// The commit a server's release must be, NAME=SHA (repeatable) [default: its VERSION].
    #[arg(long = "expect-commit", value_name = "NAME=SHA")]
    pub expect_commits: Vec<String>,
    /// Require each release to hold a MANIFEST.sha256 that its files match.
    #[arg(long)]
    pub content: bool,
    /// Print what would change and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Servers live at ROOT/S [default: each server's declared prefix].
    #[arg(long, value_name = "ROOT")]
    pub prefix: Option<PathBuf>,
    /// Uninstall only these servers (repeatable) [default: every declared server].
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// The suffix `install` was given.
    #[arg(
        long,
        value_name = "SUFFIX",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub name_suffix: String,
    /// The flat registration document [default: ~/.claude/mcp-registered.json].
    #[arg(long, value_name = "FILE")]
    pub registered: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub declaration: DeclarationArgs,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    /// The directory to lay the sample deployment out in (ROOT/codetools, ROOT/orchestrata).
    #[arg(value_name = "ROOT")]
    pub root: PathBuf,
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
    /// The release directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Hashing threads [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    pub jobs: Option<NonZeroUsize>,
}

#[derive(Debug, Args)]
#[command(after_help = "Exit status: 0 the release matches, 1 it does not, 2 could not check.")]
pub struct ManifestVerifyArgs {
    /// The release directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Hashing threads [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    pub jobs: Option<NonZeroUsize>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}
