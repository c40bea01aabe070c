//! `policy`: the selected servers and clients into [`PolicyOptions`], the domain's
//! [`crate::policy::apply::run`] (the allowlists derived, and written into each client's
//! policy file with `--write`), then printed.

use crate::cli::{PolicyArgs, PolicyFormat};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::policy::apply::{self, Policies, PolicyOptions};

pub(crate) fn run(args: &PolicyArgs, style: &Style) -> Result<Exit, Error> {
    let clients: Vec<&'static str> = args.client.clients.iter().map(|c| c.name()).collect();
    crate::policy::check_clients(&clients)?;
    let which = &args.selection.which;
    let mut selection = super::servers(
        which,
        &args.selection.declaration,
        crate::registration::flat_document::default_path(),
        style,
    )?;
    // As install: a declared server with nothing deployed is left out (and said so), so the
    // policy admits what is deployed.
    selection.skip_absent(super::root(which), &style.notify())?;
    let opts = PolicyOptions {
        clients: &clients,
        servers: &selection.servers,
        fragment: args.format == Some(PolicyFormat::File),
        write: args.write,
        dry_run: args.dry_run,
        lock_timeout: args.lock.lock_timeout,
    };
    match apply::run(&opts, &style.notify())? {
        Policies::Fragments(lists) => crate::output::policy::file(&lists, style),
        Policies::Lists { lists, changes } => {
            crate::output::policy::print(&lists, &changes, args.dry_run, style)
        }
    }
    Ok(Exit::Success)
}
