//! `status`: its arguments into [`StatusOptions`], the domain's [`status::status`] (where the
//! loop over clients and servers is), its report to `output`. Read-only: it writes nothing,
//! and calls a client only to settle a doubt of its layers (`clients::kit::oracle`).

use crate::cli::StatusArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::promotion::status::{self, StatusOptions};

pub(crate) fn status(args: &StatusArgs, style: &Style) -> Result<Exit, Error> {
    let mut selection = super::selection(&args.selection, style)?;
    selection.skip_absent(super::root(&args.selection.which), &style.notify())?;
    let opts = StatusOptions {
        selection: &selection,
        clients: &args.client.clients,
        strict: args.strict.strict,
    };
    let report = status::status(&opts)?;
    let exit = Exit::from_checks(report.ok);
    crate::output::print(&report, style, exit);
    Ok(exit)
}
