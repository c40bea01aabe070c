//! mcp-deploy: registers deployed MCP servers with coding-agent clients through the clients'
//! own CLIs, and proves that what is registered is what was deployed.
//!
//! `main.rs` only parses arguments; [`run`] hands them to `cmd/`, one file per subcommand,
//! which calls the domain and hands its report to `output/`. The domain is a folder per
//! concept, each with a `mod.rs` saying what it holds:
//!
//! - `entry/`: one server's registration entry (the launch spec as a client holds it) and the
//!   one redaction of secrets in everything shown;
//! - `deployment/`: the server declaration, the release layout, rendering, the sample, and
//!   which servers a command acts on;
//! - `content/`: digests, the `sha256sum` format, the release manifest of contents;
//! - `vendored_sdk/`: vendored SDK tarballs, sidecars, the release manifest, npm's lockfile, SRI;
//! - `identity/`: the identity checks, drift, the MCP handshake, the check report;
//! - `trust/`: the trust policy (an OpenSSH `allowed_signers` file) and the check that a
//!   release's manifest is signed by a builder it allows;
//! - `clients/`: every client behind one trait, one row each in the client table
//!   (`clients::CLIENTS`), the generic CLI-driven client, the CLI runner
//!   and the comment-preserving file edit of the clients without a CLI for it;
//! - `registration/`: the registration session (lock, recover, apply and observe a thread
//!   per client, record, commit, ledger) that install, uninstall, promote and rollback run;
//!   install and uninstall themselves, the gate, the plan, the transaction and its journal,
//!   locks, the ledger, the flat document;
//! - `promotion/`: the promote/rollback transition (preflight, switch, undo, recovery), a
//!   release layout's `current` and its atomic switch, the prefix lock, the promote journal
//!   and history, pruning old releases;
//! - `launch/`: the checked launch (`mcp-deploy exec`): the release against its pin and
//!   manifest, the executable hashed through the handle it executes, the environment from the
//!   declaration and an allowlist;
//! - `policy/`: the allowlist a client enforces (Claude Code's managed `allowedMcpServers`),
//!   derived from the declaration and written into the client's managed file.
//!
//! Beside them, leaves every folder may use: `process.rs` (the one way a child is started and
//! stopped), `dirs.rs` (the one place that knows HOME and the clients' directories), `fsio.rs`
//! (bounded, symlink-safe file access), `state.rs` (the state directory), `notice.rs` (what the
//! domain tells the person while it works, rendered by `output/`), `usage.rs` (a request the
//! command line cannot carry out, with its help line), `text.rs` (text from outside, escaped
//! to be shown on a terminal), `exit.rs`, `format.rs` (the output format, which `--format`
//! parses into and `output/` prints in). Above the domain sits
//! `error.rs`, the run's error gathering every domain's own; only `cmd/` and this file use
//! it.
//!
//! Imports point one way (`A -> B`: A may use B, never the reverse; skipping a step is fine):
//!
//! ```text
//! cmd -> cli, output, error, the domain        output -> the domain        error -> the domain
//! cli -> clients (ClientKind, the client table), deployment (Launch, `--launch`'s values)
//! policy -> promotion -> launch -> registration -> clients -> identity -> trust -> content -> deployment -> entry
//! vendored_sdk -> content
//! any of them -> the leaves: state, notice -> fsio -> dirs; usage; process; text; exit; format
//! ```
//!
//! No domain module imports cli, cmd, output or error: a domain step that can meet several
//! kinds of error returns an enum of its own (`SelectionError`, `SampleError`, `PlanError`,
//! `SessionError`, `InstallError`, `TransitionError`, `PruneError`), which `error.rs` converts.
//! `import_direction.rs` holds this diagram as data, and its test fails on any import against
//! it, naming the file and line.

mod cli;
mod clients;
mod cmd;
mod content;
mod deployment;
mod dirs;
mod entry;
mod error;
mod exit;
mod format;
mod fsio;
mod identity;
#[cfg(test)]
mod import_direction;
mod launch;
mod notice;
mod output;
mod policy;
mod process;
#[doc(hidden)]
pub use process::{exec_child, EXEC_CHILD};

/// The client binaries mcp-deploy can run, one per row of the client table that has one
/// (`clients::CLIENTS`): the test harness and `scripts/test.sh --fast` trap each, so that a new
/// client's row is all they need.
#[doc(hidden)]
pub fn client_binaries() -> Vec<&'static str> {
    clients::binaries()
}

/// The tool-surface digest ([`identity::surface`]) of a server whose `tools/list` answered
/// `tools`: for `benches/surface_digest.rs` (bench/surface.sh), which times it beside the
/// handshake.
#[doc(hidden)]
pub fn surface_digest(tools: &[serde_json::Value]) -> String {
    identity::surface::Surface::of("bench", "0", &serde_json::Value::Null, tools, &[]).digest
}

/// Every client's name, in the client table's order (`--client`'s values): what the tests
/// mean by "every client".
#[doc(hidden)]
pub fn client_names() -> Vec<&'static str> {
    clients::ClientKind::all()
        .iter()
        .map(|k| k.name())
        .collect()
}
mod promotion;
mod registration;
mod state;
mod text;
mod trust;
mod usage;
mod vendored_sdk;
// build.rs compiles version.rs for `--version`; the library holds it only for its tests.
#[cfg(test)]
mod version;

pub use cli::manual::try_parse as parse_args;
pub use cli::Cli;

/// The version line `--version` prints: the package version and the commit the binary was
/// built from (see [`version`]).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("MCP_DEPLOY_GIT"), ")");
pub use exit::Exit;

/// Run one parsed command line and return its exit status. Errors are printed here, once.
pub fn run(cli: Cli) -> Exit {
    // `--json` with another `--format`: which format the error itself should take is the
    // very question, so it is said on stderr only.
    let style = match cmd::style(&cli) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("help: {}", e.help);
            return Exit::CouldNotRun;
        }
    };
    let outcome =
        cmd::dispatch(&cli, &style).and_then(|exit| match output::take_write_error(&style) {
            Some(e) => {
                Err(fsio::IoError::new("cannot write", std::path::Path::new("<stdout>"), e).into())
            }
            None => Ok(exit),
        });
    match outcome {
        Ok(exit) => exit,
        Err(err) => {
            let help = err.help();
            eprintln!("error: {err}");
            if let Some(help) = &help {
                eprintln!("help: {help}");
            }
            // On stdout too, in the run's format (JSON's error object, a JUnit <error>, a
            // GitHub ::error), for the tool that reads only stdout.
            if cli.command.output().is_some() {
                output::error(&style, &err.to_string(), help.as_deref());
            }
            Exit::CouldNotRun
        }
    }
}

/// A command line clap refused (exit 2, with a `help:` line like every other exit 2), or
/// `--help`/`--version` (exit 0).
pub fn usage_error(e: clap::Error) -> Exit {
    use clap::error::ErrorKind;
    let _ = e.print();
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                eprintln!("help: name a command, e.g. `mcp-deploy status`");
                return Exit::CouldNotRun;
            }
            Exit::Success
        }
        _ => {
            // The subcommand the user typed, for a help line that names its own --help.
            let sub = std::env::args()
                .skip(1)
                .find(|a| !a.starts_with('-'))
                .filter(|a| {
                    use clap::CommandFactory;
                    Cli::command().find_subcommand(a).is_some()
                });
            // `sample --format junit`: the formats of a check report asked of a result that
            // is not one.
            let format_refused = e.kind() == ErrorKind::InvalidValue
                && e.get(clap::error::ContextKind::InvalidArg)
                    .is_some_and(|a| a.to_string().starts_with("--format"))
                && e.get(clap::error::ContextKind::InvalidValue)
                    .is_some_and(|v| matches!(v.to_string().as_str(), "junit" | "github"));
            match sub {
                Some(sub) if format_refused => eprintln!(
                    "help: junit and github are the formats of a check report, which {sub} \
                     does not print: give --format human or --format json"
                ),
                Some(sub) => {
                    eprintln!("help: `mcp-deploy {sub} --help` lists the options {sub} takes")
                }
                None => eprintln!("help: `mcp-deploy --help` lists the commands"),
            }
            Exit::CouldNotRun
        }
    }
}
