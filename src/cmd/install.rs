//! `install`: its arguments into [`InstallOptions`], the domain's install
//! ([`crate::registration::install`], where the algorithm is), the report to `output`.

use crate::cli::{ClientArgs, InstallArgs};
use crate::clients::{claude_managed, ClientKind, Scope};
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::registration::install::{self, InstallOptions, Installed};
use crate::registration::session::ledger_path;
use crate::registration::session::DryRunClients;

/// The layers a client applies to a name (status uses it too).
pub(crate) use crate::registration::verify::layers_of;

pub(crate) fn install(args: &InstallArgs, style: &Style) -> Result<Exit, Error> {
    check_scope(&args.client, args.scope.scope)?;
    let mut selection = super::selection(&args.selection)?;
    let given = selection::parse_expect_commits(&args.expect_commits)?;
    selection.skip_absent(super::root(&args.selection.which), &crate::output::notice)?;
    let expected = selection::expect_commits(&given, &selection)?;
    let opts = InstallOptions {
        selection: &selection,
        expected,
        trusted_signers: args.trusted_signers.as_deref(),
        clients: &args.client.clients,
        content: args.content,
        strict: args.strict.strict,
        dry_run: args.dry_run,
        lock_timeout: args.lock.lock_timeout,
        ledger: ledger_path(args.ledger.ledger.as_deref()),
    };
    install::check(&opts)?;
    crate::promotion::warn_interrupted(&selection.servers, &crate::output::notice);
    let gated = install::gate(&opts)?;
    if !gated.ok && !args.dry_run {
        return Ok(super::refused_at_gate(gated.gate, style));
    }
    let gate_ok = gated.ok;
    let (clients, missing) = open_in_scope(
        &args.client,
        args.scope.scope,
        args.mcp_timeout.mcp_timeout,
        args.dry_run,
    )?;
    match install::install(&opts, gated, &clients, &crate::output::notice)? {
        Installed::DryRun(mut plan) => {
            plan.missing_binaries = missing;
            let exit = Exit::from_checks(gate_ok);
            crate::output::install_plan(&plan, style, exit);
            Ok(exit)
        }
        Installed::Done(report) => {
            let exit = Exit::from_checks(report.ok);
            crate::output::print(&report, style, exit);
            Ok(exit)
        }
    }
}

/// The clients of `--client` opened for `--scope` (install's and uninstall's), and for a dry
/// run a sentence for each whose binary is missing. `managed` is claude's managed file, for
/// `--client claude` alone: no other client has one mcp-deploy writes.
pub(super) fn open_in_scope(
    args: &ClientArgs,
    scope: Scope,
    mcp_timeout: std::time::Duration,
    dry_run: bool,
) -> Result<DryRunClients, Error> {
    check_scope(args, scope)?;
    if scope == Scope::User {
        return match dry_run {
            true => super::open_clients_for_dry_run(args, mcp_timeout),
            false => Ok((super::open_clients(args, mcp_timeout)?, Vec::new())),
        };
    }
    // A dry run reads the file and calls nothing, so it needs neither root nor the binary.
    let options = crate::clients::ClientOptions {
        calls_binary: !dry_run,
        ..super::client_options(args, mcp_timeout)
    };
    Ok((vec![claude_managed::open(&options)?], Vec::new()))
}

/// `--scope managed` names claude alone: no other client has a managed file mcp-deploy writes.
pub(super) fn check_scope(args: &ClientArgs, scope: Scope) -> Result<(), Error> {
    if scope == Scope::User {
        return Ok(());
    }
    let others: Vec<&str> = ClientKind::unique(&args.clients)
        .into_iter()
        .map(ClientKind::name)
        .filter(|&n| n != "claude")
        .collect();
    if !others.is_empty() {
        return Err(Error::usage(
            format!(
                "--scope managed is for claude only, and --client names {}: mcp-deploy writes no \
                 managed file for another client",
                others.join(", ")
            ),
            "run --scope managed with --client claude alone, and register the other clients \
             in a second run without --scope (user scope)",
        ));
    }
    Ok(())
}
