//! Step 5 of the transition ([`super::transition`]): write the promote journal and switch
//! `current`, and the undo of that switch when step 6 fails. Every change of `current` is a
//! compare-and-swap: it is switched or put back only while it names what this run read or
//! wrote, so a change made meanwhile by someone else is kept.

use std::path::PathBuf;

use crate::deployment::stable_link::StableLink;
use crate::fsio::IoError;
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
    /// The stable links the deployment lacks, which this run creates before it switches
    /// ([`StableLink::missing`]: the first promote of a new prefix), and removes again when it
    /// undoes the promote.
    pub(super) links: Vec<StableLink>,
}

/// Step 5's first part: create the stable links the preflight planned (checked there as they
/// will resolve). A link is made only where nothing is: one that appeared meanwhile fails the
/// run, with the links already made removed again.
pub(super) fn create_links(sw: &Switch) -> Result<(), TransitionError> {
    for (i, link) in sw.links.iter().enumerate() {
        if let Err(e) = link.create() {
            for made in &sw.links[..i] {
                made.remove_if_ours();
            }
            return Err(IoError::new("cannot create the stable link", &link.path, e).into());
        }
    }
    transaction::checkpoint("after-stable-links");
    Ok(())
}

/// The undo of [`create_links`]: each link this run made that is still as it made it.
pub(super) fn remove_links(sw: &Switch) -> String {
    let removed: Vec<String> = sw
        .links
        .iter()
        .filter(|l| l.remove_if_ours())
        .map(|l| l.path.display().to_string())
        .collect();
    match removed.is_empty() {
        true => String::new(),
        false => format!(
            "; the stable link {} it created is removed again",
            removed.join(", ")
        ),
    }
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
        return format!(
            "{why}; `current` was not switched: releases/{to} is still live{}",
            remove_links(sw)
        );
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
                     again{}",
                    remove_links(sw)
                ),
                None => format!(
                    "{why}; `current` is removed again, as it was before{}",
                    remove_links(sw)
                ),
            }
        }
        Err(e) => format!(
            "{why}; `current` could NOT be put back ({e}); the journal {} keeps what was \
             live and the next promote or rollback puts it back",
            journal_path.display()
        ),
    }
}
