//! `reconcile`: install's arguments into its options ([`super::install::options`]), the
//! domain's reconcile ([`crate::registration::reconcile::run`], where the algorithm is:
//! status's reading, then install for what drifted only), the report to `output`.

use crate::cli::InstallArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::registration::reconcile::{self, Reconciled};

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
    // Nothing accepts a changed tool surface silently, a timer's run included.
    if args.tools.accept_tools {
        return Err(Error::usage(
            "reconcile does not accept a changed tool surface",
            "accept it with `mcp-deploy install --handshake --accept-tools`, which the ledger \
             records; reconcile --handshake then compares against it",
        ));
    }
    let (selection, given) = super::install::selected(args, style)?;
    let opts = super::install::options(args, &selection, &given)?;
    let options = super::client_options(&args.client, args.mcp_timeout.mcp_timeout, style);
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
