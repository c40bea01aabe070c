//! `install`: its arguments into [`InstallOptions`], the domain's install
//! ([`crate::registration::install::run`], where the algorithm is), the report to `output`.

use crate::cli::InstallArgs;
use crate::deployment::selection::{self, ExpectCommit, Selection};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::registration::install::{self, InstallOptions, Installed};
use crate::registration::session::{self, ledger_path, ChangeOptions};

pub(crate) fn install(args: &InstallArgs, style: &Style) -> Result<Exit, Error> {
    session::check_scope(&args.client.clients, args.scope.scope)?;
    let (selection, given) = selected(args, style)?;
    let opts = options(args, &selection, &given)?;
    let choice = super::client_choice(
        &args.client,
        args.scope.scope,
        args.mcp_timeout.mcp_timeout,
        style,
    );
    match install::run(&opts, &choice, &style.notify())? {
        Installed::Refused(report) => {
            crate::output::refused_at_gate(&report, style);
            Ok(Exit::CheckFailed)
        }
        Installed::DryRun(plan) => {
            let exit = Exit::from_checks(plan.ok);
            crate::output::install_plan(&plan, style, exit);
            Ok(exit)
        }
        Installed::Done(report) => {
            let exit = Exit::from_checks(report.ok);
            if report.ok {
                crate::launch::record_pins(
                    selection
                        .servers
                        .iter()
                        .map(|s| (&s.server, s.prefix.as_path())),
                    "install",
                    &style.notify(),
                );
            }
            crate::output::print(&report, style, exit);
            Ok(exit)
        }
    }
}

/// install's and reconcile's selection: the declared servers of the command line, then
/// (after `--expect-commit` is parsed, so that a bad one is said first) those not deployed
/// skipped, saying so.
pub(crate) fn selected(
    args: &InstallArgs,
    style: &Style,
) -> Result<(Selection, Vec<ExpectCommit>), Error> {
    let mut selection = super::selection(&args.selection, style)?;
    let given = selection::parse_expect_commits(&args.expect_commits)?;
    selection.skip_absent(super::root(&args.selection.which), &style.notify())?;
    Ok((selection, given))
}

/// install's and reconcile's options over `selection`.
pub(crate) fn options<'a>(
    args: &'a InstallArgs,
    selection: &'a Selection,
    given: &[ExpectCommit],
) -> Result<InstallOptions<'a>, Error> {
    Ok(InstallOptions {
        change: ChangeOptions {
            selection,
            dry_run: args.change.dry_run,
            lock_timeout: args.lock.lock_timeout,
            ledger: ledger_path(args.change.ledger.ledger.as_deref()),
        },
        expected: selection::expect_commits(given, selection)?,
        trust: super::trust_flags(&args.release.trust),
        clients: &args.client.clients,
        content: args.release.content,
        strict: args.strict.strict,
        tools: (!args.tools.no_handshake).then_some(crate::registration::gate::ToolsGate {
            timeout: args.tools.handshake_timeout,
            accept: args.tools.accept_tools,
        }),
    })
}
