//! `uninstall`: its arguments into [`ChangeOptions`], the domain's uninstall
//! ([`crate::registration::uninstall::run`]), the report to `output`.

use crate::cli::UninstallArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::registration::session::{ledger_path, ChangeOptions};
use crate::registration::uninstall::{self, Uninstalled};

pub(crate) fn uninstall(args: &UninstallArgs, style: &Style) -> Result<Exit, Error> {
    crate::registration::session::check_scope(&args.client.clients, args.scope.scope)?;
    let selection = super::selection(&args.selection, style)?;
    let opts = ChangeOptions {
        selection: &selection,
        dry_run: args.change.dry_run,
        lock_timeout: args.lock.lock_timeout,
        ledger: ledger_path(args.change.ledger.ledger.as_deref()),
    };
    let choice = super::client_choice(
        &args.client,
        args.scope.scope,
        std::time::Duration::ZERO,
        style,
    );
    match uninstall::run(&opts, &choice, &style.notify())? {
        Uninstalled::DryRun(plan) => crate::output::removal_plan(&plan, style, Exit::Success),
        Uninstalled::Done(report) => crate::output::print(&report, style, Exit::Success),
    }
    Ok(Exit::Success)
}
