//! `policy`: the selected servers and clients into [`crate::policy::derive`], then printed, or
//! written into each client's policy file ([`crate::policy::write::write`]).

use crate::cli::{PolicyArgs, PolicyFormat};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::policy::{self, write};

pub(crate) fn run(args: &PolicyArgs, style: &Style) -> Result<Exit, Error> {
    let clients: Vec<&'static str> = args.client.clients.iter().map(|c| c.name()).collect();
    policy::check_clients(&clients)?;
    let which = &args.selection.which;
    let mut selection = super::servers(
        which,
        &args.selection.declaration,
        crate::registration::flat_document::default_path(),
    )?;
    // As install: a declared server with nothing deployed is left out (and said so), so the
    // policy admits what is deployed.
    selection.skip_absent(super::root(which), &crate::output::notice)?;
    let mut lists = Vec::new();
    for client in clients {
        lists.push(policy::derive(client, &selection.servers)?);
    }
    if args.format == Some(PolicyFormat::File) {
        if args.write || args.dry_run {
            return Err(crate::usage::UsageError::new(
                "--format file prints the fragment; it does not say what --write changed",
                "drop --format file to see the change, or --write/--dry-run to only print",
            )
            .into());
        }
        crate::output::policy::file(&lists);
        return Ok(Exit::Success);
    }
    let mut changes = Vec::new();
    if args.write || args.dry_run {
        for list in &lists {
            if list.client == "gemini" {
                policy::gemini::check_counted(&list.file)?;
            }
            let opts = write::WriteOptions {
                file: &list.file,
                dir: list
                    .file
                    .parent()
                    .expect("the policy file is in a directory"),
                dry_run: args.dry_run,
                lock_timeout: args.lock.lock_timeout,
            };
            let edit = |path: &std::path::Path, old: Option<&str>| policy::edit(list, path, old);
            changes.push(write::write(&opts, &edit, &crate::output::notice)?);
        }
    }
    crate::output::policy::print(&lists, &changes, args.dry_run, style);
    Ok(Exit::Success)
}
