//! `reconcile`: install's arguments into [`InstallOptions`], the domain's reconcile
//! ([`crate::registration::reconcile::run`], where the algorithm is: status's reading, then
//! install for what drifted only), the report to `output`.

use crate::cli::InstallArgs;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::registration::install::InstallOptions;
use crate::registration::reconcile::{self, Reconciled};
use crate::registration::session::ledger_path;

pub(crate) fn reconcile(args: &InstallArgs, style: &Style) -> Result<Exit, Error> {
    // Its reading is user scope's (the clients' own files): a managed registration would read
    // as drifted there, and be healed into the wrong scope.
    if args.scope.scope != crate::clients::Scope::User {
        return Err(Error::usage(
            "reconcile reads and heals user-scope registrations only; --scope managed is not \
             supported by it yet",
            "keep a managed registration with `mcp-deploy install --scope managed` (a no-op \
             when nothing changed), and check it with `verify-identity`",
        ));
    }
    let mut selection = super::selection(&args.selection, style)?;
    let given = selection::parse_expect_commits(&args.expect_commits)?;
    selection.skip_absent(super::root(&args.selection.which), &style.notify())?;
    let opts = InstallOptions {
        selection: &selection,
        expected: selection::expect_commits(&given, &selection)?,
        trusted_signers: args.trusted_signers.as_deref(),
        clients: &args.client.clients,
        content: args.content,
        strict: args.strict.strict,
        dry_run: args.dry_run,
        lock_timeout: args.lock.lock_timeout,
        ledger: ledger_path(args.ledger.ledger.as_deref()),
    };
    let options = super::client_options(&args.client, args.mcp_timeout.mcp_timeout);
    match reconcile::run(&opts, &options, &style.notify())? {
        Reconciled::Refused(report) => {
            crate::output::refused_at_gate(&report, style);
            Ok(Exit::CheckFailed)
        }
        Reconciled::Done(report) => {
            let exit = Exit::from_checks(report.ok);
            crate::output::print(&report, style, exit);
            Ok(exit)
        }
    }
}
