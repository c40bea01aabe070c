//! `uninstall`: remove the names `install` with the same options registers, from every client
//! of `--client`, and their flat document entries, as one transaction (the session's steps,
//! [`crate::registration::session`], with removals for a plan). A name that is not registered
//! is not an error.

use std::path::Path;

use serde_json::{Map, Value};

use crate::clients::{Client, ClientKind, Op};
use crate::deployment::selection::Selected;
use crate::identity::report::{Report, ServerReport};
use crate::notice::{Notice, Notify};
use crate::registration::flat_document::{FlatDocument, FlatDocumentError};
use crate::registration::plan::{
    change_record, refuse_literal_secrets, refuse_opaque, DryRun, PlannedStep,
};
use crate::registration::session::{
    open_in_scope, ChangeOptions, Changes, ClientChoice, Session, SessionError, Then, Write,
};
use crate::registration::transaction::Change;

/// An uninstall, its arguments validated.
/// What an uninstall ended with.
pub(crate) enum Uninstalled {
    DryRun(DryRun),
    Done(Report),
}

/// Uninstall's plan for one client: it, its current user-scope entries, and the removals.
struct RemovalPlan<'a> {
    client: &'a dyn Client,
    current: Map<String, Value>,
    changes: Vec<Change>,
}

impl<'a> Changes<'a> for RemovalPlan<'a> {
    fn client(&self) -> &'a dyn Client {
        self.client
    }
    fn changes(&self) -> &[Change] {
        &self.changes
    }
}

/// `mcp-deploy uninstall`: [`check`], the clients of `choice` opened (a dry run opens one
/// whose binary is missing to read its files, and its plan says so), then [`uninstall`].
pub(crate) fn run(
    opts: &ChangeOptions,
    choice: &ClientChoice,
    notify: Notify,
) -> Result<Uninstalled, SessionError> {
    check(opts)?;
    let (clients, missing) = open_in_scope(choice, opts.dry_run)?;
    let mut done = uninstall(opts, &clients, notify)?;
    if let Uninstalled::DryRun(plan) = &mut done {
        plan.missing_binaries = missing;
    }
    Ok(done)
}

/// Before any client is opened: the ledger can be appended to, and the flat document (when
/// there is one) can be read.
pub(crate) fn check(opts: &ChangeOptions) -> Result<(), SessionError> {
    crate::registration::ledger::check_appendable(&opts.ledger)?;
    match FlatDocument::read(&opts.selection.flat_document) {
        Ok(_) | Err(FlatDocumentError::Missing { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Everything after [`check`], into `clients` (opened in the `--client` order).
pub(crate) fn uninstall(
    opts: &ChangeOptions,
    clients: &[Box<dyn Client>],
    notify: Notify,
) -> Result<Uninstalled, SessionError> {
    let selected = &opts.selection.servers;
    let flat_document = &opts.selection.flat_document;
    let mut session = Session::open(clients, &opts.opening(false), notify)?;
    let plans = clients
        .iter()
        .map(|c| plan_removal(c.as_ref(), selected))
        .collect::<Result<Vec<_>, _>>()?;
    if opts.dry_run {
        return Ok(Uninstalled::DryRun(dry_run(
            selected,
            &plans,
            session.flat(),
            flat_document,
            &opts.ledger,
        )));
    }
    session.apply(&plans, selected, Then::Forget, Write::WhenChanged)?;
    let mut records = Vec::new();
    let mut reports = Vec::new();
    for p in &plans {
        for s in selected {
            let removed = p.changes.iter().any(|c| c.name == s.registered_name);
            if removed {
                let old = p
                    .current
                    .get(&s.registered_name)
                    .map(crate::registration::ledger::secret_free);
                records.push(change_record(p.client, s, "removed", old, None));
            }
            reports.push(ServerReport {
                name: s.server.name.clone(),
                client: p.client.name().to_string(),
                registered_name: s.registered_name.clone(),
                prefix: s.prefix.display().to_string(),
                registration: Some(if removed { "removed" } else { "absent" }.into()),
                witnesses: None,
                deployed: Default::default(),
                checks: Vec::new(),
            });
        }
    }
    session.ledger(&records);
    still_registered(&session.flat(), clients, selected, notify);
    session.close();
    Ok(Uninstalled::Done(Report::new(
        reports,
        Some(flat_document.display().to_string()),
    )))
}

/// Say, for each selected server, which clients outside `clients` the flat document still
/// records it for: an uninstall of `--client claude` leaves codex's entry, and says so.
fn still_registered(
    flat: &FlatDocument,
    clients: &[Box<dyn Client>],
    selected: &[Selected],
    notify: Notify,
) {
    for s in selected {
        let others: Vec<String> = ClientKind::all()
            .iter()
            .map(|k| k.name())
            .filter(|k| !clients.iter().any(|c| c.name() == *k))
            .filter(|k| flat.servers(k).contains_key(&s.registered_name))
            .map(str::to_string)
            .collect();
        if !others.is_empty() {
            notify(Notice::StillRegistered {
                name: s.registered_name.clone(),
                clients: others,
            });
        }
    }
}

fn plan_removal<'a>(
    client: &'a dyn Client,
    selected: &[Selected],
) -> Result<RemovalPlan<'a>, SessionError> {
    let current = client.user_entries()?;
    refuse_opaque(client, &current, selected)
        .map_err(crate::registration::plan::PlanError::from)?;
    refuse_literal_secrets(client, &current, selected)
        .map_err(crate::registration::plan::PlanError::from)?;
    let changes = selected
        .iter()
        .filter_map(|s| {
            let previous = current.get(&s.registered_name)?.as_object()?.clone();
            Some(Change {
                name: s.registered_name.clone(),
                previous: Some(previous),
                target: None,
            })
        })
        .collect();
    Ok(RemovalPlan {
        client,
        current,
        changes,
    })
}

/// `uninstall --dry-run`: each name, whether it would be removed, and the call that would do
/// it; the flat document only when a line of it would go, the ledger only when a name would
/// be removed, as the real run writes them.
fn dry_run(
    selected: &[Selected],
    plans: &[RemovalPlan],
    flat: FlatDocument,
    flat_document: &Path,
    ledger: &Path,
) -> DryRun {
    let mut steps = Vec::new();
    let mut after = flat.clone();
    for p in plans {
        for s in selected {
            if after.scope(p.client.name(), &s.registered_name) == p.client.scope() {
                after.remove(p.client.name(), &s.registered_name);
            }
        }
    }
    let writes_flat_document = !after.same_as(&flat);
    let appends_ledger = plans
        .iter()
        .any(|p| !p.changes.is_empty())
        .then(|| ledger.display().to_string());
    let mut writes = Vec::new();
    if writes_flat_document {
        writes.push(flat_document.display().to_string());
    }
    writes.extend(appends_ledger.clone());
    for p in plans {
        for s in selected {
            let name = &s.registered_name;
            let present = p.changes.iter().any(|c| &c.name == name);
            let calls: Vec<String> = if present {
                vec![p.client.show(Op::Remove, name)]
            } else {
                Vec::new()
            };
            steps.push(PlannedStep {
                name: s.server.name.clone(),
                client: p.client.name(),
                registered_name: name.clone(),
                registration: if present { "removed" } else { "absent" },
                entry: None,
                writes: None,
                client_calls: calls,
                gate: None,
            });
        }
    }
    DryRun {
        dry_run: true,
        ok: true,
        servers: steps,
        flat_document: flat_document.display().to_string(),
        writes,
        writes_flat_document,
        appends_ledger,
        missing_binaries: Vec::new(),
    }
}
