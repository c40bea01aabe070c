//! `status`'s use case: for each client and each selected server, does everything agree?
//! Read-only: it makes no client call and writes nothing. It sits in `promotion` because two
//! of its checks are promotion's (an interrupted promote, processes still running a release);
//! the rest are [`crate::identity::drift`]'s and registration's.
//!
//! 1. Read the flat document, if there is one; open the clients to read their files only.
//! 2. Scan the running processes once per release layout.
//! 3. For each client, then each server: its drift report ([`drift::server_status`]) against
//!    the client's user entries (claude's managed file for a name the document records
//!    there), then the interrupted promote, the running processes, the layers the client
//!    applies to the declared entry and the entries that shadow the name.
//! 4. One report, with each client's release.

use std::collections::HashMap;

use crate::clients::{claude_managed, ClientError, ClientKind, ClientOptions, Scope};
use crate::deployment::declaration::Layout;
use crate::deployment::render::{self, RenderError};
use crate::deployment::selection::Selection;
use crate::identity::drift;
use crate::identity::report::{Check, ClientRelease, Report};
use crate::promotion::running;
use crate::registration::flat_document::{self, FlatDocumentError};
use crate::registration::plan::shadow_check;
use crate::registration::reconcile::layers_check;
use crate::registration::session::open_named;
use crate::registration::verify::{findings, layers_of};

/// What a status run looks at, resolved from its command line.
pub(crate) struct StatusOptions<'a> {
    /// The servers (those absent already skipped), and the flat document.
    pub(crate) selection: &'a Selection,
    /// `--client`, in the order given.
    pub(crate) clients: &'a [ClientKind],
    /// `--strict`: a warning (running processes, layers, shadows) fails its check.
    pub(crate) strict: bool,
}

/// Why status could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum StatusError {
    #[error(transparent)]
    FlatDocument(#[from] FlatDocumentError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// The status of every server of `opts.selection` for every client of `opts.clients` (the
/// numbered steps above).
pub(crate) fn status(opts: &StatusOptions) -> Result<Report, StatusError> {
    let (selected, flat_document) = (&opts.selection.servers, &opts.selection.flat_document);
    let flat = flat_document::read_if_exists(flat_document)?;
    // Status reads the clients' config files only: no binary, no call, so no timeout.
    let clients = open_named(opts.clients, &ClientOptions::files_only())?;
    // Running processes: one scan per release layout, its row shown with each client's report.
    let processes: HashMap<_, _> = selected
        .iter()
        .filter(|s| s.server.layout == Layout::Release)
        .filter_map(|s| {
            running::status_check(&s.prefix, opts.strict).map(|c| (s.prefix.clone(), c))
        })
        .collect();
    let mut reports = Vec::new();
    let names: Vec<&str> = selected
        .iter()
        .map(|s| s.registered_name.as_str())
        .collect();
    for client in &clients {
        let layers = layers_of(client.as_ref());
        let entries = client.user_entries()?;
        let shadows_of = client.shadows_of(&names)?;
        let recorded_servers = flat.as_ref().map(|f| f.servers(client.name()));
        for s in selected {
            // A name the document records in claude's managed file is looked for there.
            let managed = ClientKind::named(client.name())
                .is_some_and(ClientKind::has_managed_scope)
                && flat
                    .as_ref()
                    .is_some_and(|f| f.scope(client.name(), &s.registered_name) == Scope::Managed);
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
            if let Some(journal) = crate::deployment::layout::interrupted_promote(&s.prefix) {
                report.checks.push(Check {
                    skipped: false,
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
            let declared = render::render(&s.server, &s.prefix).ok().map(|r| r.entry);
            if let Some(declared) = declared {
                let findings = findings(layers.as_ref(), &s.registered_name, &declared);
                if !findings.is_empty() {
                    report
                        .checks
                        .push(layers_check(&s.registered_name, &findings));
                }
            }
            let shadows = shadows_of
                .get(&s.registered_name)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if !shadows.is_empty() {
                report
                    .checks
                    .push(shadow_check(&s.registered_name, shadows));
            }
            reports.push(report);
        }
    }
    let mut report = Report::new(reports, Some(flat_document.display().to_string()));
    report.clients = clients
        .iter()
        .map(|c| ClientRelease {
            client: c.name().to_string(),
            version: c.version().map(|v| v.to_string()),
        })
        .collect();
    Ok(report)
}
