//! Step 6 of the transition ([`super::transition`]): register the release in a registration
//! session ([`crate::registration::session`]), journal what was committed, verify; and the
//! undo of registration changes that were committed, which both a failed step 6 and the
//! recovery of an interrupted promote ([`super::recovery`]) run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::clients::Client;
use crate::deployment::layout::Sha;
use crate::deployment::render;
use crate::identity::report::ServerReport;
use crate::notice::{Notice, Notify};
use crate::promotion::prefix::{Committed, Journal};
use crate::promotion::transition::{usage, Run, TransitionError};
use crate::registration::flat_document::FlatDocument;
use crate::registration::plan::{plan_client, ClientPlan};
use crate::registration::session::{
    self, agree_recovered, Opening, Recovered, Session, SessionError, Then, Write,
};
use crate::registration::transaction::{self, Change, Transaction};
use crate::registration::verify::{self, Verify};

/// Step 6's result when it ran to the end.
pub(super) struct Registration {
    /// A report per name and client, in the `--client` order.
    pub(super) reports: Vec<ServerReport>,
    /// Registered and verified. Else a check failed, and the registration changes are undone.
    pub(super) verified: bool,
    /// Whether there were registration changes (undone when not `verified`).
    pub(super) changed: bool,
}

/// Step 6. `Err`: a step failed and its changes are undone (the error says how each name
/// ended).
pub(super) fn register_and_verify(
    run: &Run,
    switched: bool,
    journal: &mut Journal,
    journal_path: &Path,
) -> Result<Registration, TransitionError> {
    let (mut session, plans) = register(run)?;
    let committed = committed(&plans);
    if switched && !committed.is_empty() {
        journal.committed = committed.clone();
        if let Err(e) = journal.write(journal_path) {
            let e: TransitionError = e.into();
            return Err(undo_registrations(run, &committed, session.flat_mut(), e));
        }
    }
    transaction::checkpoint("after-register");
    session.ledger(&verify::change_records(&plans));

    let mut reports = verify_registrations(run, &plans, &session, &journal.to)?;
    if crate::process::interrupted() {
        let failure = usage(
            format!("the {} was interrupted (SIGINT or SIGTERM)", run.action),
            "run it again when it may finish",
        );
        if committed.is_empty() {
            return Err(failure);
        }
        return Err(undo_registrations(
            run,
            &committed,
            session.flat_mut(),
            failure,
        ));
    }
    let ok = all_ok(&mut reports);
    if !ok && !committed.is_empty() {
        let failure = usage(
            format!(
                "the {} failed its checks after the registration",
                run.action
            ),
            "see the checks above",
        );
        let undone = undo_registrations(run, &committed, session.flat_mut(), failure);
        // Say how the names ended; the verdict stays "a check failed".
        (run.notify)(Notice::Recovery(undone.to_string()));
    }
    Ok(Registration {
        reports,
        verified: ok,
        changed: !committed.is_empty(),
    })
}

/// Re-render, then in a registration session (the client and flat-document locks, journal,
/// apply and observe side by side, record, commit) install into the selected clients.
fn register<'a>(run: &'a Run<'a>) -> Result<(Session<'a>, Vec<ClientPlan<'a>>), TransitionError> {
    for c in &run.candidates {
        render::write_rendered(&c.rendered, &c.selected.prefix)?;
    }
    let mut session = Session::open(
        run.clients,
        &Opening {
            document: &run.flat_document,
            ledger: &run.ledger_file,
            lock_timeout: run.t.lock_timeout,
            dry_run: false,
            missing_is_empty: true,
        },
        run.notify,
    )?;
    let plans: Vec<ClientPlan> = run
        .clients
        .iter()
        .map(|c| plan_client(c.as_ref(), &run.candidates))
        .collect::<Result<_, _>>()
        .map_err(SessionError::from)?;
    session.apply(
        &plans,
        run.candidates.iter().map(|c| &c.selected),
        Then::Observe,
        Write::WhenChangedOrMissing,
    )?;
    Ok((session, plans))
}

/// What the session committed, per client that changed: what the journal records, and what
/// an undo puts back.
fn committed(plans: &[ClientPlan]) -> Vec<Committed> {
    plans
        .iter()
        .filter(|p| !p.changes.is_empty())
        .map(|p| Committed {
            client: p.client.name().to_string(),
            changes: p.changes.clone(),
        })
        .collect()
}

/// Verify, as install's step 9, against what was recorded and the live config, and the
/// release `to` (the journal's).
fn verify_registrations(
    run: &Run,
    plans: &[ClientPlan],
    session: &Session,
    to: &str,
) -> Result<Vec<ServerReport>, TransitionError> {
    let expected: BTreeMap<String, Sha> = Sha::parse(to)
        .ok()
        .map(|sha| (run.server.name.clone(), sha))
        .into_iter()
        .collect();
    Ok(verify::verify_plans(
        plans,
        &session.flat(),
        &Verify {
            expected: &expected,
            require_content: run.t.content,
            shadows: false,
        },
    )?)
}

/// Whether every check of `reports` passed; a debug build's fault injection
/// (`MCP_DEPLOY_FAIL_AT=after-verify`) fails one.
fn all_ok(reports: &mut [ServerReport]) -> bool {
    let mut ok = reports.iter().all(ServerReport::ok);
    if transaction::injected_failure("after-verify") {
        ok = false;
        if let Some(r) = reports.first_mut() {
            r.checks.push(crate::identity::report::Check {
                skipped: false,
                check: "injected",
                ok: false,
                detail: "MCP_DEPLOY_FAIL_AT=after-verify (a debug build's fault injection)".into(),
            });
        }
    }
    ok
}

/// Undo registration changes that were committed: an inverse transaction per client (which
/// rolls itself back, to the promoted entries, if it fails), then the flat document's lines
/// for those names brought back in agreement with each client.
fn undo_registrations(
    run: &Run,
    committed: &[Committed],
    flat: &mut FlatDocument,
    failure: TransitionError,
) -> TransitionError {
    match undo_changes(
        run.clients,
        committed,
        &run.ledger_file,
        flat,
        &run.flat_document,
        run.notify,
    ) {
        Ok(lines) => TransitionError::Undone {
            failure: Box::new(failure),
            undone: lines,
        },
        Err(e) => TransitionError::Undone {
            failure: Box::new(failure),
            undone: format!("undoing the registration changes failed too: {e}"),
        },
    }
}

pub(super) fn undo_changes(
    clients: &[Box<dyn Client>],
    committed: &[Committed],
    ledger_file: &Path,
    flat: &mut FlatDocument,
    flat_document: &Path,
    notify: Notify,
) -> Result<String, TransitionError> {
    let mut recovered = Recovered::new();
    let mut lines = Vec::new();
    for reg in committed {
        let Some(client) = clients.iter().find(|c| c.name() == reg.client) else {
            return Err(usage(
                format!(
                    "the interrupted run changed {}'s registrations, which this run does not open",
                    reg.client
                ),
                format!("run again with --client {}", reg.client),
            ));
        };
        // Compare-and-swap, as every restore: a name is put back only while it holds what
        // the promote wrote; one already as before is left (an undo run twice), one changed
        // by someone else since is left and said.
        let before = client.user_entries()?;
        let mut inverse: Vec<Change> = Vec::new();
        for c in &reg.changes {
            let now = before.get(&c.name).and_then(|v| v.as_object());
            if transaction::same_entry(now, c.previous.as_ref()) {
                lines.push(format!("  {}: {} already as before", reg.client, c.name));
            } else if transaction::same_entry(now, c.target.as_ref()) {
                inverse.push(Change {
                    name: c.name.clone(),
                    previous: c.target.clone(),
                    target: c.previous.clone(),
                });
            } else {
                lines.push(format!(
                    "  {}: {} changed since the promote wrote it: not put back",
                    reg.client, c.name
                ));
            }
        }
        let mut tx = Transaction::begin(client.as_ref(), inverse.clone(), ledger_file, notify)?;
        let applied = tx.apply();
        session::finish_all::<SessionError>(vec![tx], applied.map_err(SessionError::from))?;
        let now = client.user_entries()?;
        for c in &inverse {
            lines.push(format!("  {}: {} put back", reg.client, c.name));
            recovered.push((
                client.name(),
                c.name.clone(),
                now.get(&c.name).and_then(|v| v.as_object().cloned()),
            ));
        }
    }
    if agree_recovered(flat, &recovered) {
        flat.write(flat_document)?;
    }
    Ok(format!(
        "every registration change was undone:\n{}",
        lines.join("\n")
    ))
}
