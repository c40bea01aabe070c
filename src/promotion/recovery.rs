//! Step 2 of the transition ([`super::transition`]), under the prefix lock: undo what an
//! interrupted promote or rollback journalled in `<prefix>/.mcp-deploy/promote.journal.json`
//! (the registration changes it committed, then its switch of `current`), saying so, and
//! remove the journal. A journal whose run committed (its id is in the history) is only
//! removed.

use std::path::Path;

use crate::notice::Notice;
use crate::promotion::history::History;
use crate::promotion::prefix::Journal;
use crate::promotion::register::undo_changes;
use crate::promotion::transition::{Run, TransitionError};
use crate::promotion::PromotionError;
use crate::registration::flat_document::FlatDocument;
use crate::registration::session::lock_and_recover;

/// Step 2: undo what an interrupted promote journalled.
pub(super) fn recover(
    run: &Run,
    journal_path: &Path,
    history: &History,
) -> Result<(), TransitionError> {
    let notify = run.notify;
    let Some(journal) = Journal::read(journal_path)? else {
        return Ok(());
    };
    if history.has(&journal.id) {
        // It committed; only removing its journal was interrupted.
        Journal::remove(journal_path)?;
        return Ok(());
    }
    notify(Notice::Recovery(format!(
        "recovering the interrupted {} of pid {} journalled in {} (from {} to releases/{}):",
        journal.action,
        journal.pid,
        journal_path.display(),
        journal
            .from
            .as_deref()
            .map(|f| format!("releases/{f}"))
            .unwrap_or_else(|| "no current".into()),
        journal.to
    )));
    if !journal.committed.is_empty() {
        undo_registrations(run, &journal)?;
    }
    let line = put_back_current(run, &journal, journal_path)?;
    notify(Notice::Recovery(line));
    Journal::remove(journal_path)?;
    Ok(())
}

/// The registration changes the interrupted run committed, undone under the client and
/// flat-document locks (the interrupted run's own transactions recovered first).
fn undo_registrations(run: &Run, journal: &Journal) -> Result<(), TransitionError> {
    let notify = run.notify;
    let (locks, _) = lock_and_recover(
        run.clients,
        &journal.flat_document,
        run.t.lock_timeout,
        &run.ledger_file,
        notify,
    )?;
    let mut flat = FlatDocument::read_or_empty(&journal.flat_document)?;
    let lines = undo_changes(
        run.clients,
        &journal.committed,
        &run.ledger_file,
        &mut flat,
        &journal.flat_document,
        notify,
    )?;
    drop(locks);
    notify(Notice::Recovery(format!("  {lines}")));
    Ok(())
}

/// `current` put back to what was live before the interrupted run, and the line that says
/// how it ended.
fn put_back_current(
    run: &Run,
    journal: &Journal,
    journal_path: &Path,
) -> Result<String, TransitionError> {
    // The interrupted run may have died before or after its switch: what is live is the
    // old release or the new one, both of which `live_release` reads.
    // Put back only what the interrupted run switched (compare-and-swap): `current` naming
    // its new release. Naming another release, it was changed by someone else since and is
    // left; and the release it goes back to must still be a release directory (a journal
    // naming `releases/evil -> /etc`, or a release removed since, never becomes `current`).
    Ok(if run.prefix.is_switched_to(&journal.to) {
        if let Some(f) = &journal.from {
            run.prefix
                .check_release_dir(f)
                .map_err(|why| PromotionError::BadJournal {
                    path: journal_path.to_path_buf(),
                    why: format!(
                        "it names releases/{f} as the release live before, which cannot be \
                         put back: {why}; `current` is left at releases/{}",
                        journal.to
                    ),
                })?;
        }
        run.prefix.switch(journal.from.as_deref())?;
        match &journal.from {
            Some(f) => format!("  current: back at releases/{f}"),
            None => "  current: removed again (there was none before)".into(),
        }
    } else if run.prefix.live_release()? == journal.from {
        // Killed before its switch.
        match &journal.from {
            Some(f) => format!("  current: at releases/{f}, as before"),
            None => "  current: absent, as before".into(),
        }
    } else {
        format!(
            "  current: {} now, neither the release live before nor the one the \
             interrupted run switched to: changed since by someone else, left as it is",
            run.prefix.describe_link()
        )
    })
}
