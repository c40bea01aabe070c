//! `status`: for each server and client, does everything agree? Read-only: it makes no client
//! call and writes nothing. The checks are [`crate::identity::drift`]'s.

use crate::cli::StatusArgs;
use crate::clients::{claude_managed, ClientOptions};
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::drift;
use crate::identity::report::Report;
use crate::output::Style;
use crate::registration::plan::shadow_check;
use crate::registration::session::open_named;

pub(crate) fn status(args: &StatusArgs, style: &Style) -> Result<Exit, Error> {
    let mut selection = super::selection(&args.selection)?;
    selection.skip_absent(super::root(&args.selection.which), &crate::output::notice)?;
    let (selected, flat_document) = (&selection.servers, &selection.flat_document);
    let flat = crate::registration::flat_document::read_if_exists(flat_document)?;
    // Status reads the clients' config files only: no binary, no call, so no timeout.
    let clients = open_named(&args.client.clients, &ClientOptions::files_only())?;
    // Running processes: one scan per release layout, its row shown with each client's report.
    let processes: std::collections::HashMap<_, _> = selected
        .iter()
        .filter(|s| s.server.layout == crate::deployment::declaration::Layout::Release)
        .filter_map(|s| {
            crate::promotion::running::status_check(&s.prefix, args.strict.strict)
                .map(|c| (s.prefix.clone(), c))
        })
        .collect();
    let mut reports = Vec::new();
    for client in &clients {
        let entries = client.user_entries()?;
        let recorded_servers = flat.as_ref().map(|f| f.servers(client.name()));
        for s in selected {
            // A name the document records in claude's managed file is looked for there.
            let managed = client.name() == "claude"
                && flat.as_ref().is_some_and(|f| {
                    f.scope(client.name(), &s.registered_name) == crate::clients::Scope::Managed
                });
            let entries = match managed {
                true => &claude_managed::read_entries(&claude_managed::path())?,
                false => &entries,
            };
            let mut report = drift::server_status(
                s,
                client.name(),
                entries,
                recorded_servers.as_ref(),
                flat_document,
            )?;
            if let Some(journal) = crate::promotion::prefix::interrupted(&s.prefix) {
                report.checks.push(crate::identity::report::Check {
                    check: "promote",
                    ok: false,
                    detail: format!(
                        "an interrupted promote is journalled in {}: `current` may still be \
                         switched; run `mcp-deploy promote` or `rollback` on this prefix to \
                         undo it",
                        journal.display()
                    ),
                });
            }
            if let Some(c) = processes.get(&s.prefix) {
                report.checks.push(c.clone());
            }
            // What the agent runs, with every layer the client applies to the entry.
            let declared = crate::deployment::render::render(&s.server, &s.prefix)
                .ok()
                .map(|r| r.entry);
            if let Some(declared) = declared {
                let findings =
                    super::install::layers_of(client.name(), &s.registered_name, &declared);
                if !findings.is_empty() {
                    report
                        .checks
                        .push(crate::registration::reconcile::layers_check(
                            &s.registered_name,
                            &findings,
                            args.strict.strict,
                        ));
                }
            }
            let shadows = client.shadows(&s.registered_name)?;
            if !shadows.is_empty() {
                report.checks.push(shadow_check(
                    &s.registered_name,
                    &shadows,
                    args.strict.strict,
                    &crate::output::notice,
                ));
            }
            reports.push(report);
        }
    }
    let mut report = Report::new(reports, Some(flat_document.display().to_string()));
    report.clients = clients
        .iter()
        .map(|c| crate::identity::report::ClientRelease {
            client: c.name().to_string(),
            version: c.version().map(|v| v.to_string()),
        })
        .collect();
    let exit = Exit::from_checks(report.ok);
    crate::output::print(&report, style, exit);
    Ok(exit)
}
