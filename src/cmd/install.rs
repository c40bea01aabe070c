//! `install`: its arguments into [`InstallOptions`], the domain's install
//! ([`crate::registration::install`], where the algorithm is), the report to `output`.

use crate::cli::InstallArgs;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::registration::install::{self, InstallOptions, Installed};
use crate::registration::session::{self, ledger_path};

pub(crate) fn install(args: &InstallArgs, style: &Style) -> Result<Exit, Error> {
    session::check_scope(&args.client.clients, args.scope.scope)?;
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
        crate::output::refused_at_gate(&install::refused(gated.gate), style);
        return Ok(Exit::CheckFailed);
    }
    let gate_ok = gated.ok;
    let (clients, missing) = super::open_in_scope(
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
