//! One file per subcommand. Each only turns its arguments into an options struct, calls the
//! domain (where every algorithm is: `registration::install`, `registration::uninstall`,
//! `promotion::transition`, ...) and hands the report to [`crate::output`]. No command
//! imports another: what two share lives in the domain, or here when it only converts
//! arguments (the selection, the clients of `--client`).

pub(crate) mod clients;
pub(crate) mod completions;
pub(crate) mod exec;
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
use crate::clients::{ClientOptions, Scope};
use crate::deployment::declaration::Source;
use crate::deployment::selection::{Root, Selection};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::{Style, Verbosity};
use crate::registration::flat_document;
use crate::registration::session::ClientChoice;
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
        Command::Completions(args) => completions::run(args, style),
        Command::Man(args) => man::run(args, style),
        Command::Promote(args) => promote::promote(args, style),
        Command::Rollback(args) => promote::rollback(args, style),
        Command::Prune(args) => prune::prune(args, style),
        Command::Policy(args) => policy::run(args, style),
        Command::Reconcile(args) => reconcile::reconcile(args, style),
        Command::Report(args) => report::report(args, style),
        Command::Clients(args) => clients::run(args, style),
        Command::Exec(args) => exec::run(args),
    }
}

/// How the run prints, from `--format`, `--json`, `-q`, `-v` and `--color` (the command's, or
/// the old spelling before the command; the choices are [`crate::cli`]'s): the run's output
/// context, which every command passes down.
pub(crate) fn style(cli: &Cli) -> Result<Style, UsageError> {
    let choice = cli.command.output().unwrap_or_default();
    let command = cli.command.name();
    Ok(Style {
        command,
        format: choice.resolve_format(command)?,
        verbosity: Verbosity::from_flags(choice.quiet, choice.verbose),
        colour: crate::output::colour(cli.colour()),
        write_error: Default::default(),
    })
}

/// `mcp_timeout`: `--mcp-timeout` of install, promote and rollback (the commands that call
/// `claude mcp get`); zero for the others. With `-v` (`style`), each client call is said as it
/// ends. The parser refuses a --client-timeout under 1ms.
pub(crate) fn client_options(
    args: &ClientArgs,
    mcp_timeout: Duration,
    style: &Style,
) -> ClientOptions {
    ClientOptions {
        binaries: args.binaries.clone(),
        homes: Default::default(),
        timeout: args.client_timeout,
        mcp_timeout,
        calls_binary: true,
        said: crate::output::client_calls(style.verbosity),
    }
}

/// The clients of `--client` for `--scope` (install, uninstall, promote, rollback), which the
/// use case opens ([`crate::registration::session::open_in_scope`]).
pub(crate) fn client_choice<'a>(
    args: &'a ClientArgs,
    scope: Scope,
    mcp_timeout: Duration,
    style: &Style,
) -> ClientChoice<'a> {
    ClientChoice {
        kinds: &args.clients,
        options: client_options(args, mcp_timeout, style),
        scope,
    }
}

/// The servers of `--root`/`--server`/`--config`..., the flat document of `--registered`.
pub(crate) fn selection(args: &SelectionArgs, style: &Style) -> Result<Selection, Error> {
    servers(
        &args.which,
        &args.declaration,
        flat_document(&args.flat_document),
        style,
    )
}

/// The servers of `which` and `declaration`, with the flat document `flat` (policy passes the
/// default one, which it never reads).
pub(crate) fn servers(
    which: &ServerArgs,
    declaration: &DeclarationArgs,
    flat: std::path::PathBuf,
    style: &Style,
) -> Result<Selection, Error> {
    Ok(Selection::load(
        self::declaration(declaration),
        root(which),
        &which.servers,
        &which.suffix.name_suffix,
        flat,
        &style.notify(),
    )?)
}

/// `--trusted-signers`, `--trusted-builder` and `--trusted-root`.
pub(crate) fn trust_flags(args: &crate::cli::TrustArgs) -> crate::trust::TrustFlags<'_> {
    crate::trust::TrustFlags {
        signers: args.trusted_signers.as_deref(),
        builder: args.trusted_builder.as_deref(),
        root: args.trusted_root.as_deref(),
    }
}

/// The declaration of `--config` (else the built-in one), with `--launch` over it.
pub(crate) fn declaration(args: &DeclarationArgs) -> Source<'_> {
    Source {
        file: args.config.as_deref(),
        launch: args.launch,
    }
}

/// `--root`, else `--prefix`, else `-p` ([`Root::from_flags`]).
pub(crate) fn root(args: &ServerArgs) -> Option<Root<'_>> {
    Root::from_flags(
        args.root.as_deref(),
        args.prefix.as_deref(),
        args.deployment.as_deref(),
    )
}

/// The flat document of `--registered` or `--mcp-json`, else the default one
/// ([`flat_document::given_or_default`]).
pub(crate) fn flat_document(args: &FlatDocumentArgs) -> std::path::PathBuf {
    flat_document::given_or_default(args.flat_document.as_deref(), args.mcp_json.as_deref())
}
