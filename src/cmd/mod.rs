//! One file per subcommand. Each only turns its arguments into an options struct, calls the
//! domain (where every algorithm is: `registration::install`, `registration::uninstall`,
//! `promotion::transition`, ...) and hands the report to [`crate::output`]. No command
//! imports another: what two share lives in the domain, or here when it only converts
//! arguments (the selection, the clients of `--client`).

pub(crate) mod completions;
pub(crate) mod install;
pub(crate) mod man;
pub(crate) mod manifest;
pub(crate) mod pin_vendor;
pub(crate) mod promote;
pub(crate) mod prune;
pub(crate) mod render_mcp;
pub(crate) mod sample;
pub(crate) mod status;
pub(crate) mod uninstall;
pub(crate) mod verify_identity;
pub(crate) mod verify_vendor;

use crate::cli::{Cli, ClientArgs, Command, SelectionArgs};
use crate::clients::{Client, ClientOptions};
use crate::deployment::selection::Selection;
use crate::error::Error;
use crate::exit::Exit;
use std::time::Duration;

pub(crate) fn dispatch(cli: &Cli) -> Result<Exit, Error> {
    match &cli.command {
        Command::RenderMcp(args) => render_mcp::run(args),
        Command::VerifyIdentity(args) => verify_identity::run(args),
        Command::Install(args) => install::install(args),
        Command::Uninstall(args) => uninstall::uninstall(args),
        Command::Status(args) => status::status(args),
        Command::Sample(args) => sample::run(args),
        Command::Manifest(args) => manifest::run(args),
        Command::VerifyVendor(args) => verify_vendor::run(args),
        Command::PinVendor(args) => pin_vendor::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Promote(args) => promote::promote(args),
        Command::Rollback(args) => promote::rollback(args),
        Command::Prune(args) => prune::prune(args),
    }
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

/// The servers of `--prefix`/`--server`/`--name-suffix`/`--config`, and the flat document of
/// `--registered`.
pub(crate) fn selection(args: &SelectionArgs) -> Result<Selection, Error> {
    Ok(Selection::load(
        args.declaration.config.as_deref(),
        args.prefix.as_deref(),
        &args.servers,
        &args.name_suffix,
        args.flat_document
            .flat_document
            .clone()
            .unwrap_or_else(crate::registration::flat_document::default_path),
        &crate::output::notice,
    )?)
}

/// Moved to the domain ([`crate::registration::gate`]); re-exported for `verify-identity`.
pub(crate) use crate::registration::gate::trust_policies;
