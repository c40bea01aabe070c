//! `report FILE...`: the hosts' reports merged ([`crate::identity::fleet`]), printed by
//! [`crate::output::report`]; exit 1 when any host fails, 2 when a file is not a report.

use crate::cli::ReportArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::fleet;
use crate::output::Style;

pub(crate) fn report(args: &ReportArgs, style: &Style) -> Result<Exit, Error> {
    let expect = fleet::Expect {
        max_age: args.max_age,
        hosts: args.expect_hosts.clone(),
        unnamed_client: crate::clients::primary_name(),
    };
    let fleet = fleet::merge(&args.files, &expect, std::time::SystemTime::now())
        .map_err(|e| Error::usage(e.to_string(), e.help()))?;
    let exit = Exit::from_checks(fleet.ok);
    crate::output::report::print(&fleet, style, exit);
    Ok(exit)
}
