//! Step 5 of the transition ([`super::transition`]): write the promote journal and switch
//! `current`, and the undo of that switch when step 6 fails. Every change of `current` is a
//! compare-and-swap: it is switched or put back only while it names what this run read or
//! wrote, so a change made meanwhile by someone else is kept.

use std::path::PathBuf;

use crate::promotion::prefix::{Journal, Prefix};
use crate::promotion::transition::{Run, TransitionError};
use crate::promotion::PromotionError;
use crate::registration::transaction;

/// The switch a run makes (or, `switched` false, does not: the release is already live).
pub(super) struct Switch {
    pub(super) switched: bool,
    pub(super) from: Option<String>,
    pub(super) to: String,
    pub(super) journal_path: PathBuf,
}

/// Step 5: write the journal, then switch `current`.
pub(super) fn switch(run: &Run, sw: &Switch, journal: &Journal) -> Result<(), TransitionError> {
    journal.write(&sw.journal_path)?;
    transaction::checkpoint("promote-journal-written");
    // `current` is switched only while it still names what the preflight read: a hand
    // `ln -sfn` (which takes no lock) since then is someone else's change, never
    // overwritten. (rename(2) has no compare-and-swap; this leaves a window of a few
    // system calls, not the length of the preflight.)
    let now_live = run.prefix.live_release();
    if !matches!(&now_live, Ok(l) if *l == sw.from) {
        let _ = Journal::remove(&sw.journal_path);
        return Err(PromotionError::CurrentChanged {
            path: run.prefix.current(),
            action: run.action,
            read: Prefix::describe_live(&Ok(sw.from.clone())),
            now: Prefix::describe_live(&now_live),
        }
        .into());
    }
    if let Err(e) = run.prefix.switch(Some(&sw.to)) {
        // rename(2) either happened or did not: `current` is what it was.
        let _ = Journal::remove(&sw.journal_path);
        return Err(e.into());
    }
    transaction::checkpoint("after-switch");
    Ok(())
}

/// The undo of step 5 after a failure in 6 (`why`): `current` put back, and what it says.
pub(super) fn undo_switch(run: &Run, sw: &Switch, why: &str) -> String {
    let (from, to, journal_path) = (&sw.from, &sw.to, &sw.journal_path);
    if !sw.switched {
        return format!("{why}; `current` was not switched: releases/{to} is still live");
    }
    // Compare-and-swap, as every restore: put back only while `current` still names
    // what this run switched it to. Someone else's switch since is theirs to keep.
    if !run.prefix.is_switched_to(to) {
        let _ = Journal::remove(journal_path);
        return format!(
            "{why}; `current` was NOT put back: this run switched it to releases/{to}, but \
             it is {} now, a change made since by someone else, left as it is; check \
             which release should be live",
            run.prefix.describe_link()
        );
    }
    if let Some(f) = from {
        if let Err(e) = run.prefix.check_release_dir(f) {
            return format!(
                "{why}; `current` could NOT be put back: the previous release is gone or \
                 replaced ({e}), so `current` stays at releases/{to}; the journal {} keeps \
                 what was live: restore releases/{f} and run promote or rollback, or \
                 delete the journal to keep releases/{to}",
                journal_path.display()
            );
        }
    }
    match run.prefix.switch(from.as_deref()) {
        Ok(()) => {
            let _ = Journal::remove(journal_path);
            match from {
                Some(f) => format!(
                    "{why}; `current` is back at releases/{f}: the previous release is live \
                     again"
                ),
                None => format!("{why}; `current` is removed again, as it was before"),
            }
        }
        Err(e) => format!(
            "{why}; `current` could NOT be put back ({e}); the journal {} keeps what was \
             live and the next promote or rollback puts it back",
            journal_path.display()
        ),
    }
}
