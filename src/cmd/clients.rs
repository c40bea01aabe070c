//! `clients`: every client of the table ([`crate::clients::listing`]), with what this host
//! has of it, printed by [`crate::output::clients`]. A client missing or failing is a row's
//! state, not an error: exit 0 unless the command could not run at all.

use crate::cli::ClientsArgs;
use crate::clients::listing;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;

pub(crate) fn run(args: &ClientsArgs, style: &Style) -> Result<Exit, Error> {
    let client = &args.client.0;
    // Only `--version` is ever run: no health check, so no MCP timeout.
    let options = super::client_options(client, std::time::Duration::ZERO, style);
    let listed = listing::list(&client.clients, &options);
    crate::output::clients::print(&listed, style);
    Ok(Exit::Success)
}
