//! One file per subcommand. Each only turns its arguments into an options struct, calls the
//! domain (where every algorithm is: `registration::install`, `registration::uninstall`,
//! `promotion::transition`, ...) and hands the report to [`crate::output`]. No command
//! imports another: what two share lives in the domain, or here when it only converts
//! arguments (the selection, the clients of `--client`).

pub(crate) mod clients;
pub(crate) mod completions;
pub(crate) mod install;
pub(crate) mod man;
pub(crate) mod manifest;
pub(crate) mod pin_vendor;
pub(crate) mod policy;
pub(crate) mod promote;
pub(crate) mod prune;
pub(crate) mod reconcile;
pub(crate) mod render_mcp;
pub(crate) mod report;
pub(crate) mod sample;
pub(crate) mod status;
pub(crate) mod uninstall;
pub(crate) mod verify_identity;
pub(crate) mod verify_vendor;

use crate::cli::{
    Cli, ClientArgs, Command, DeclarationArgs, FlatDocumentArgs, SelectionArgs, ServerArgs,
};
use crate::clients::{Client, ClientOptions};
use crate::deployment::selection::{Root, Selection};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::{Format, Style, Verbosity};
use crate::usage::UsageError;
use std::time::Duration;

pub(crate) fn dispatch(cli: &Cli, style: &Style) -> Result<Exit, Error> {
    match &cli.command {
        Command::RenderMcp(args) => render_mcp::run(args, style),
        Command::VerifyIdentity(args) => verify_identity::run(args, style),
        Command::Install(args) => install::install(args, style),
        Command::Uninstall(args) => uninstall::uninstall(args, style),
        Command::Status(args) => status::status(args, style),
        Command::Sample(args) => sample::run(args, style),
        Command::Manifest(args) => manifest::run(args, style),
        Command::VerifyVendor(args) => verify_vendor::run(args, style),
        Command::PinVendor(args) => pin_vendor::run(args, style),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Promote(args) => promote::promote(args, style),
        Command::Rollback(args) => promote::rollback(args, style),
        Command::Prune(args) => prune::prune(args, style),
        Command::Policy(args) => policy::run(args, style),
        Command::Reconcile(args) => reconcile::reconcile(args, style),
        Command::Report(args) => report::report(args, style),
        Command::Clients(args) => clients::run(args, style),
    }
}

/// The commands whose report is a state worth sampling (`--format prometheus`).
const PROMETHEUS_COMMANDS: [&str; 3] = ["status", "verify-identity", "reconcile"];

/// How the run prints, from `--format`, `--json`, `-q`, `-v` and `--color` (the command's, or
/// the old spelling before the command), and the colour choice. `--json` is `--format json`;
/// with another `--format` it is a usage error, before anything runs.
pub(crate) fn style(cli: &Cli) -> Result<(Style, clap::ColorChoice), UsageError> {
    let choice = cli.command.output().unwrap_or_default();
    let format = match (choice.format, choice.json) {
        (None, false) => Format::Human,
        (None, true) | (Some(crate::cli::Format::Json), _) => Format::Json,
        (Some(other), true) => {
            let other = format!("{other:?}").to_lowercase();
            return Err(UsageError::new(
                format!("--json and --format {other} ask for two formats"),
                format!("give one: --json is --format json, or drop --json for --format {other}"),
            ));
        }
        (Some(crate::cli::Format::Human), false) => Format::Human,
        (Some(crate::cli::Format::Junit), false) => Format::Junit,
        (Some(crate::cli::Format::Github), false) => Format::Github,
        (Some(crate::cli::Format::Prometheus), false) => {
            let command = cli.command.name();
            if !PROMETHEUS_COMMANDS.contains(&command) {
                return Err(UsageError::new(
                    format!("{command} has no --format prometheus"),
                    "status, verify-identity and reconcile print prometheus samples; give                      --format json, junit or github here",
                ));
            }
            Format::Prometheus
        }
    };
    let verbosity = match (choice.quiet, choice.verbose) {
        (true, _) => Verbosity::Quiet,
        (false, true) => Verbosity::Verbose,
        (false, false) => Verbosity::Normal,
    };
    let colour = choice
        .color
        .or(cli.color)
        .unwrap_or(clap::ColorChoice::Auto);
    Ok((
        Style {
            command: cli.command.name(),
            format,
            verbosity,
        },
        colour,
    ))
}

/// `mcp_timeout`: `--mcp-timeout` of install, promote and rollback (the commands that call
/// `claude mcp get`); zero for the others.
pub(crate) fn client_options(args: &ClientArgs, mcp_timeout: Duration) -> ClientOptions {
    ClientOptions {
        binaries: args.binaries.clone(),
        homes: Default::default(),
        // The parser refuses a --client-timeout under 1ms.
        timeout: args.client_timeout,
        mcp_timeout,
        calls_binary: true,
    }
}

/// Open every client of `--client`, each once, in the order given.
pub(crate) fn open_clients(
    args: &ClientArgs,
    mcp_timeout: Duration,
) -> Result<Vec<Box<dyn Client>>, Error> {
    Ok(crate::registration::session::open_named(
        &args.clients,
        &client_options(args, mcp_timeout),
    )?)
}

/// [`open_clients`] for a dry run: a client whose binary is missing is opened to read its
/// files only; the second list says so, one sentence per such client.
pub(crate) fn open_clients_for_dry_run(
    args: &ClientArgs,
    mcp_timeout: Duration,
) -> Result<crate::registration::session::DryRunClients, Error> {
    Ok(crate::registration::session::open_for_dry_run(
        &args.clients,
        &client_options(args, mcp_timeout),
    )?)
}

/// The servers of `--root` (or `--prefix`)/`--server`/`--name-suffix`/`--config`, and the flat
/// document of `--registered` (or `--mcp-json`).
pub(crate) fn selection(args: &SelectionArgs) -> Result<Selection, Error> {
    servers(
        &args.which,
        &args.declaration,
        flat_document(&args.flat_document),
    )
}

/// The servers of `which` and `declaration`, with the flat document `flat` (policy passes the
/// default one, which it never reads).
pub(crate) fn servers(
    which: &ServerArgs,
    declaration: &DeclarationArgs,
    flat: std::path::PathBuf,
) -> Result<Selection, Error> {
    Ok(Selection::load(
        declaration.config.as_deref(),
        root(which),
        &which.servers,
        &which.name_suffix,
        flat,
        &crate::output::notice,
    )?)
}

/// `--root`, else `--prefix`: where the servers are.
pub(crate) fn root(args: &ServerArgs) -> Option<Root<'_>> {
    match (&args.root, &args.prefix) {
        (Some(r), _) => Some(Root::Root(r)),
        (None, Some(p)) => Some(Root::Prefix(p)),
        (None, None) => None,
    }
}

/// The flat document of `--registered` or `--mcp-json`, else the default one.
pub(crate) fn flat_document(args: &FlatDocumentArgs) -> std::path::PathBuf {
    args.flat_document
        .clone()
        .or_else(|| args.mcp_json.clone())
        .unwrap_or_else(crate::registration::flat_document::default_path)
}

/// Moved to the domain ([`crate::registration::gate`]); re-exported for `verify-identity`.
pub(crate) use crate::registration::gate::trust_policies;

/// install's (and reconcile's) refusal when the deployment failed the gate: each server's
/// verdict, then why nothing changed; exit 1.
pub(crate) fn refused_at_gate(
    mut servers: Vec<crate::identity::report::ServerReport>,
    style: &Style,
) -> Exit {
    crate::registration::install::not_changed(&mut servers);
    let report = crate::identity::report::Report::new(servers, None);
    crate::output::print(&report, style, Exit::CheckFailed);
    // The line is human text: in a machine format it goes to stderr.
    if style.format != Format::Human {
        eprintln!("{GATE_LINE}");
    } else {
        crate::output::emit(&format!("{GATE_LINE}\n"));
    }
    Exit::CheckFailed
}

/// What a gate failure says, after the failed checks.
const GATE_LINE: &str = "no registration was changed: install checks the deployment before it \
                         registers anything, and the deployment failed the checks above";
