//! The registration transaction: changes to a client's user-scope entries that either all
//! happen or are all undone, and survive a crash in between.
//!
//! The client CLI has no "replace": `remove` then `add-json` leaves a window in which a name is
//! not registered. So:
//! 1. Before the first mutating call, a journal is written (atomically, mode 0600) in the
//!    client's state directory (`<home>/.mcp-deploy/<client>.journal.json`, see
//!    [`crate::state`]): for each name, its previous entry (or none) and its target (or none).
//! 2. The changes are applied one call at a time.
//! 3. When anything fails, every name is brought back to its previous entry, in reverse order,
//!    and the error says which state every name ended in. Restoring calls are retried, since
//!    losing a registration is the one outcome this exists to prevent.
//! 4. On success the journal is removed (the commit point).
//! 5. A run that finds a journal (its writer crashed, was killed or lost power) first rolls
//!    every journalled name back to its previous entry and says so; the run then proceeds, so
//!    an interrupted install followed by any install ends where an uninterrupted one would.
//!
//! Every restore (3 and 5) is a compare-and-swap, and proves itself:
//! - A name is restored only while its entry is still one the interrupted or failing run
//!   could have left: its target, or absent while the journal says the run had it removed
//!   (`absent`: the journal is rewritten to name it before the `remove` of a replace or of a
//!   restore, and again once the `add` after it is done). Anything else was changed by someone
//!   else since (a person, another program that ignores our lock): it is left alone, reported
//!   "changed since the interrupted run: not restored" (or "removed since…"), kept in the
//!   journal, and the run exits 2. A journal of an earlier version has no `absent`: a replaced
//!   name found absent cannot be told to be the run's doing, and is kept the same way.
//! - Client files are compared entry by entry, never as whole files: the clients rewrite their
//!   own files (claude's `.claude.json` keeps per-project history), and a run only ever adds or
//!   removes its own names. The journal holds the entries themselves, as it always has, since
//!   they are what a restore puts back (a secret-bearing entry is refused before it, see
//!   [`crate::registration::plan`]).
//! - After a restoring call the entry is read back and compared with the journalled previous
//!   entry. A client may store less than it is given (`claude mcp add-json` drops keys it does
//!   not know); then the name is reported NOT restored, naming the missing keys, and kept in
//!   the journal, which holds the full entry for a person to put back.
//! - Restores are recorded in the ledger (action `restored`).
//!
//! Callers hold the client's lock ([`crate::registration::lock`]) around all of this.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clients::{Client, ClientError};
use crate::entry::Entry;
use crate::fsio;
use crate::notice::{Notice, Notify};
use crate::registration::ledger;

/// How often a restoring call is tried before the name is reported lost (and left to the
/// journal for the next run).
const RESTORE_ATTEMPTS: usize = 3;

/// One name's change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Change {
    pub(crate) name: String,
    /// The entry before, exactly as the client config held it; `None`: absent.
    pub(crate) previous: Option<Map<String, Value>>,
    /// The entry after; `None`: remove.
    pub(crate) target: Option<Map<String, Value>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    journal: u32,
    pid: u32,
    client: String,
    config: PathBuf,
    changes: Vec<Change>,
    /// The names the run may have left absent (between the `remove` and the `add` of a
    /// replace or a restore): only these are restored from absence. `None`: a journal of a
    /// version before it was recorded, which cannot tell.
    #[serde(default)]
    absent: Option<BTreeSet<String>>,
}

impl Journal {
    fn new(client: &dyn Client, changes: Vec<Change>, absent: BTreeSet<String>) -> Journal {
        Journal {
            journal: 1,
            pid: std::process::id(),
            client: client.name().to_string(),
            config: client.config_path().to_path_buf(),
            changes,
            absent: Some(absent),
        }
    }
}

/// What made a transaction roll back: any error that can say what the user can do about it
/// (the run's error in practice). A trait, so that the domain does not depend on the run's
/// error type, which sits above it.
pub(crate) trait Failure: std::error::Error + Send + Sync + 'static {
    fn help(&self) -> Option<String>;
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum TransactionError {
    #[error("{failure}\n{states}")]
    RolledBack {
        failure: Box<dyn Failure>,
        states: String,
        /// Whether every name is back at its previous entry (else the journal keeps some).
        restored: bool,
    },
    #[error("the journal {path} of an interrupted run cannot be read: {reason}")]
    BadJournal { path: PathBuf, reason: String },
    #[error(transparent)]
    Io(#[from] fsio::IoError),
    #[error("recovering the interrupted run journalled in {path} failed: {failure}")]
    Recovery {
        path: PathBuf,
        failure: Box<ClientError>,
    },
    #[error(
        "recovering the interrupted run journalled in {path} left names not restored:\n{states}"
    )]
    NotRestored { path: PathBuf, states: String },
}

impl TransactionError {
    pub(crate) fn help(&self) -> Option<String> {
        match self {
            TransactionError::RolledBack {
                restored: false, ..
            } => Some(
                "the journal keeps each name that is not restored with its previous entry; put \
                 it back by hand if you want it, then delete the journal (the next run stops \
                 until then)"
                    .into(),
            ),
            TransactionError::RolledBack { failure, .. } => failure.help(),
            TransactionError::BadJournal { .. } => Some(
                "it lists the entries to restore; restore them with the client by hand, then delete it"
                    .into(),
            ),
            TransactionError::Recovery { .. } => {
                Some("the journal is kept; fix the client and run again to finish recovery".into())
            }
            TransactionError::NotRestored { path, .. } => Some(format!(
                "the journal {} keeps each such name's previous entry; put back what you want by \
                 hand (`claude mcp add-json -s user NAME '<entry>'`), then delete the journal",
                path.display()
            )),
            TransactionError::Io(e) => e.help(),
        }
    }
}

/// Where the journal of `client` lives: `<home>/.mcp-deploy/<client>.journal.json`.
pub(crate) fn journal_path(client: &dyn Client) -> Result<PathBuf, fsio::IoError> {
    crate::state::file(&client.home(), &format!("{}.journal.json", client.name()))
}

/// Where versions before the state directory wrote the journal: beside the config file.
fn legacy_journal_path(client: &dyn Client) -> PathBuf {
    client
        .config_path()
        .parent()
        .unwrap_or(Path::new("."))
        .join(".mcp-deploy.journal.json")
}

// The crash points live with the process supervisor (a leaf, so that a check below
// `registration` can have one too); named here as the callers have always named them.
pub(crate) use crate::process::{checkpoint, injected_failure};

/// What a recovery did.
#[derive(Debug, Default)]
pub(crate) struct Recovered {
    /// A line per name, headed by the journal's; empty when there was no journal.
    pub(crate) lines: Vec<String>,
    /// Each recovered name and its entry in the client now (`None`: absent). The interrupted
    /// run may have written the flat document already (it does so just before its commit):
    /// the caller brings the document's lines for these names back in agreement.
    pub(crate) names: Vec<(String, Option<Map<String, Value>>)>,
}

/// Step 5: roll back what an interrupted run journalled (also at the location older versions
/// used). A name that cannot be restored stays in the journal and the run stops (exit 2).
pub(crate) fn recover(
    client: &dyn Client,
    ledger: &Path,
    notify: Notify,
) -> Result<Recovered, TransactionError> {
    let mut out = Recovered::default();
    let mut names = Vec::new();
    for path in [legacy_journal_path(client), journal_path(client)?] {
        let (lines, recovered) = recover_one(client, &path, ledger, notify)?;
        out.lines.extend(lines);
        names.extend(recovered);
    }
    if !names.is_empty() {
        let now = client
            .user_entries()
            .map_err(|failure| TransactionError::Recovery {
                path: client.config_path().to_path_buf(),
                failure: Box::new(failure),
            })?;
        out.names = names
            .into_iter()
            .map(|n| {
                let entry = now.get(&n).and_then(|v| v.as_object().cloned());
                (n, entry)
            })
            .collect();
    }
    Ok(out)
}

/// One journal: its lines, and the names it held.
fn recover_one(
    client: &dyn Client,
    path: &Path,
    ledger: &Path,
    notify: Notify,
) -> Result<(Vec<String>, Vec<String>), TransactionError> {
    let bad = |reason: String| TransactionError::BadJournal {
        path: path.to_path_buf(),
        reason,
    };
    let text = match fsio::read_input_if_exists(path, "journal", fsio::limits::DOCUMENT) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(bad(e.source.to_string())),
    };
    let mut journal: Journal = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut lines = vec![format!(
        "recovered the interrupted run of pid {} journalled in {}:",
        journal.pid,
        path.display()
    )];
    let mut kept = Vec::new();
    let mut records = Vec::new();
    let changes = journal.changes.clone();
    for change in changes.iter().rev() {
        let absent = match &journal.absent {
            None => Absent::Unknown,
            Some(a) if a.contains(&change.name) => Absent::Ours,
            Some(_) => Absent::NotOurs,
        };
        let mut mark = |on: bool| {
            let a = journal.absent.get_or_insert_with(BTreeSet::new);
            if on {
                a.insert(change.name.clone());
            } else {
                a.remove(&change.name);
            }
            write_journal(path, &journal).map_err(journal_failed)
        };
        let outcome =
            crate::process::shielded(|| restore(client, change, Why::Recovery, absent, &mut mark))
                .map_err(|failure| TransactionError::Recovery {
                    path: path.to_path_buf(),
                    failure: Box::new(failure),
                })?;
        lines.push(format!("  {}: {}", change.name, outcome.describe(path)));
        if let Some(r) = outcome.record(client, change) {
            records.push(r);
        }
        if !outcome.done() {
            kept.push(change.clone());
        }
        if let (Outcome::Changed { .. }, Some(a)) = (&outcome, &mut journal.absent) {
            // Someone else's entry is there now: its absence later is not the run's doing.
            a.remove(&change.name);
        }
    }
    ledger_warn(ledger, &records, notify);
    if kept.is_empty() {
        remove_journal(path)?;
        let names = changes.iter().map(|c| c.name.clone()).collect();
        return Ok((lines, names));
    }
    kept.reverse();
    journal.changes = kept;
    write_journal(path, &journal)?;
    Err(TransactionError::NotRestored {
        path: path.to_path_buf(),
        states: lines[1..].join("\n"),
    })
}

/// Append restore records; a ledger that cannot be written is a warning, never a failure of
/// the registration it would have recorded.
fn ledger_warn(path: &Path, records: &[ledger::Record], notify: Notify) {
    if let Err(e) = ledger::append(path, records) {
        notify(Notice::RestoreNotRecorded(e));
    }
}

/// A journal that could not be rewritten, as the failure of the client step it guards.
fn journal_failed(e: fsio::IoError) -> ClientError {
    ClientError::File {
        path: e.path.clone(),
        reason: format!("cannot update the journal: {}", e.source),
    }
}

fn write_journal(path: &Path, journal: &Journal) -> Result<(), fsio::IoError> {
    let text = serde_json::to_string_pretty(journal).expect("a journal serializes");
    fsio::write_atomic(path, text.as_bytes(), true)
}

/// A transaction in progress over `changes`.
pub(crate) struct Transaction<'a> {
    client: &'a dyn Client,
    journal: PathBuf,
    ledger: PathBuf,
    /// Where a restore the ledger could not record is told.
    notify: Notify<'a>,
    changes: Vec<Change>,
    /// How many changes have been (at least partly) applied.
    started: usize,
    /// The names this run may have left absent, as the journal names them.
    absent: BTreeSet<String>,
    /// install's handshake gate, asked for each name before its first call ([`Admits`]).
    admits: Option<Admits>,
}

/// Whether a registered name passed install's handshake gate, waiting for its handshake:
/// asked before the name's first mutating call, so that one server's handshake runs beside
/// another's client calls, and a server is registered only once its own gate passed.
pub(crate) type Admits = std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>;

impl<'a> Transaction<'a> {
    /// Step 1: write the journal, when there is anything to change. Restores are recorded in
    /// the ledger at `ledger`.
    pub(crate) fn begin(
        client: &'a dyn Client,
        changes: Vec<Change>,
        ledger: &Path,
        notify: Notify<'a>,
    ) -> Result<Transaction<'a>, TransactionError> {
        let journal = journal_path(client)?;
        if !changes.is_empty() {
            let doc = Journal::new(client, changes.clone(), BTreeSet::new());
            write_journal(&journal, &doc)?;
            checkpoint("journal-written");
        }
        Ok(Transaction {
            client,
            journal,
            ledger: ledger.to_path_buf(),
            notify,
            changes,
            started: 0,
            absent: BTreeSet::new(),
            admits: None,
        })
    }

    /// Name `name` in the journal as one this run may leave absent (`on`), or no longer.
    fn mark(&mut self, name: &str, on: bool) -> Result<(), ClientError> {
        mark_absent(
            self.client,
            &self.journal,
            &self.changes,
            &mut self.absent,
            name,
            on,
        )
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Step 2: apply every change, one call at a time.
    /// Ask `admits` before each name's first call ([`Admits`]).
    pub(crate) fn gated(&mut self, admits: Option<Admits>) {
        self.admits = admits;
    }

    pub(crate) fn apply(&mut self) -> Result<(), ClientError> {
        for i in 0..self.changes.len() {
            let c = self.changes[i].clone();
            if let Some(admits) = &self.admits {
                if !admits(&c.name) {
                    return Err(ClientError::NotAdmitted { name: c.name });
                }
            }
            self.started = i + 1;
            let replace = c.previous.is_some() && c.target.is_some();
            checkpoint(&format!("before-change:{}", c.name));
            if c.previous.is_some() {
                if replace {
                    self.mark(&c.name, true)?;
                }
                self.client.remove(&c.name)?;
                checkpoint(&format!("after-remove:{}", c.name));
            }
            if let Some(target) = &c.target {
                self.client.add(&c.name, &raw_entry(target))?;
                if replace {
                    self.mark(&c.name, false)?;
                }
                checkpoint(&format!("after-add:{}", c.name));
            }
        }
        Ok(())
    }

    /// Step 3: undo, and describe where every name ended, a line each. The journal is removed
    /// only when every name is back at its previous entry; otherwise it keeps the names that
    /// are not.
    fn undo(mut self) -> (Vec<String>, bool) {
        crate::process::shielded(|| {
            let mut lines = Vec::new();
            let mut kept = Vec::new();
            let mut records = Vec::new();
            let changes = self.changes.clone();
            for (i, c) in changes.iter().enumerate().rev() {
                let state = if i >= self.started {
                    "untouched, at its previous entry".to_string()
                } else {
                    // The change in flight when the run failed may be in any state its failed
                    // call left; the ones before it completed and must still be as they did.
                    let absent = if i + 1 == self.started {
                        Absent::InFlight
                    } else if self.absent.contains(&c.name) {
                        Absent::Ours
                    } else {
                        Absent::NotOurs
                    };
                    let (client, journal) = (self.client, self.journal.clone());
                    let all = &self.changes;
                    let marks = &mut self.absent;
                    let mut mark =
                        |on: bool| mark_absent(client, &journal, all, marks, &c.name, on);
                    match restore(self.client, c, Why::Rollback, absent, &mut mark) {
                        Ok(outcome) => {
                            if let Some(r) = outcome.record(self.client, c) {
                                records.push(r);
                            }
                            if !outcome.done() {
                                kept.push(c.clone());
                            }
                            outcome.describe(&self.journal)
                        }
                        Err(e) => {
                            kept.push(c.clone());
                            format!(
                                "NOT restored ({e}); the journal {} keeps its previous entry and the next run restores it",
                                self.journal.display()
                            )
                        }
                    }
                };
                lines.push(format!("  {}: {state}", c.name));
            }
            lines.reverse();
            let all_restored = kept.is_empty();
            ledger_warn(&self.ledger, &records, self.notify);
            if !self.changes.is_empty() {
                if kept.is_empty() {
                    let _ = remove_journal(&self.journal);
                } else if kept.len() < self.changes.len() {
                    kept.reverse();
                    let absent = kept
                        .iter()
                        .filter(|c| self.absent.contains(&c.name))
                        .map(|c| c.name.clone())
                        .collect();
                    let _ = write_journal(&self.journal, &Journal::new(self.client, kept, absent));
                }
            }
            (lines, all_restored)
        })
    }

    /// Undo this one transaction after `failure`.
    #[cfg(test)]
    pub(crate) fn roll_back(self, failure: impl Failure) -> TransactionError {
        roll_back_all(vec![self], failure)
    }

    /// Step 4: the commit point.
    pub(crate) fn commit(self) -> Result<(), TransactionError> {
        if !self.changes.is_empty() {
            remove_journal(&self.journal)?;
        }
        Ok(())
    }
}

/// Undo several transactions (one per client), the last begun first, after `failure`. With
/// one client the lines name each registration; with several, each is prefixed by its client.
pub(crate) fn roll_back_all(txs: Vec<Transaction>, failure: impl Failure) -> TransactionError {
    let several = txs.len() > 1;
    let mut blocks = Vec::new();
    let mut all_restored = true;
    let mut any_changed = false;
    for tx in txs.into_iter().rev() {
        let client = tx.client.name();
        let (lines, restored) = tx.undo();
        all_restored &= restored;
        any_changed |= !lines.is_empty();
        if lines.is_empty() {
            // Nothing of this client had changed: say so, never an empty list.
            if several {
                blocks.push(format!("  {client}: nothing had changed"));
            }
        } else if several {
            blocks.push(format!(
                "  {client}:\n{}",
                lines
                    .iter()
                    .map(|l| format!("  {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        } else {
            blocks.push(lines.join("\n"));
        }
    }
    blocks.reverse();
    if !any_changed {
        return TransactionError::RolledBack {
            failure: Box::new(failure),
            states: "no registration had changed yet, so there was nothing to roll back".into(),
            restored: true,
        };
    }
    TransactionError::RolledBack {
        failure: Box::new(failure),
        states: format!(
            "{}:\n{}",
            if all_restored {
                "every change was rolled back"
            } else {
                "the changes were rolled back, except where a line says otherwise"
            },
            blocks.join("\n")
        ),
        restored: all_restored,
    }
}

/// Rewrite the journal at `path` (of `changes`) with `name` among the names the run may leave
/// absent (`on`) or not.
fn mark_absent(
    client: &dyn Client,
    path: &Path,
    changes: &[Change],
    absent: &mut BTreeSet<String>,
    name: &str,
    on: bool,
) -> Result<(), ClientError> {
    if on {
        absent.insert(name.to_string());
    } else {
        absent.remove(name);
    }
    write_journal(
        path,
        &Journal::new(client, changes.to_vec(), absent.clone()),
    )
    .map_err(journal_failed)
}

#[derive(Clone, Copy, PartialEq)]
enum Why {
    Rollback,
    Recovery,
}

/// Whether a name found absent may be one the run left so.
#[derive(Clone, Copy, PartialEq)]
enum Absent {
    /// The change in flight when the run failed: any state is the run's.
    InFlight,
    /// The journal names it: the run had removed it and not yet added it back.
    Ours,
    /// The journal does not: absent is someone else's doing (unless absence is the target).
    NotOurs,
    /// A journal of an earlier version, which does not say.
    Unknown,
}

/// Where one restore left a name.
enum Outcome {
    /// Already at its previous entry (or absent, as before): nothing done.
    AsBefore(&'static str),
    /// Put back; `now` is what it replaced (for the ledger).
    Restored {
        now: Option<Map<String, Value>>,
        word: &'static str,
    },
    /// Changed by someone else since: left alone.
    Changed { why: Why },
    /// Absent, which the run had not left it (or the journal cannot say): left alone.
    Removed { why: Why, unknown: bool },
    /// Put back, but the client stored less than the previous entry: these keys differ.
    Lossy {
        now: Option<Map<String, Value>>,
        keys: Vec<String>,
    },
}

impl Outcome {
    /// Whether the name is at its previous entry (and can leave the journal).
    fn done(&self) -> bool {
        matches!(self, Outcome::AsBefore(_) | Outcome::Restored { .. })
    }

    fn describe(&self, journal: &Path) -> String {
        match self {
            Outcome::AsBefore(s) => s.to_string(),
            Outcome::Restored { word, .. } => word.to_string(),
            Outcome::Changed { why } => format!(
                "changed since the {}: not restored (its entry is neither what that run had \
                 before nor what it was writing); the journal {} keeps its previous entry",
                match why {
                    Why::Recovery => "interrupted run",
                    Why::Rollback => "failed change began",
                },
                journal.display()
            ),
            Outcome::Removed { why, unknown } => format!(
                "removed since the {}: not restored ({}); the journal {} keeps its previous \
                 entry",
                match why {
                    Why::Recovery => "interrupted run",
                    Why::Rollback => "failed change began",
                },
                if *unknown {
                    "it is absent, and the journal, from an earlier version of mcp-deploy, does \
                     not say whether that run left it so"
                } else {
                    "it is absent, and that run had added it back"
                },
                journal.display()
            ),
            Outcome::Lossy { keys, .. } => format!(
                "NOT restored: the client stored it without {} of its previous entry; the \
                 journal {} keeps the whole previous entry",
                keys.iter()
                    .map(|k| format!("{k:?}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                journal.display()
            ),
        }
    }

    /// The ledger line of a restoring call that was made.
    fn record(&self, client: &dyn Client, c: &Change) -> Option<ledger::Record> {
        let now = match self {
            Outcome::Restored { now, .. } | Outcome::Lossy { now, .. } => now,
            _ => return None,
        };
        let mut r = ledger::Record::now(client.name(), &c.name, &c.name, "restored");
        r.client_version = client.version().map(|v| v.to_string());
        r.old = now
            .as_ref()
            .map(|m| ledger::secret_free(&Value::Object(m.clone())));
        r.new = c
            .previous
            .as_ref()
            .map(|m| ledger::secret_free(&Value::Object(m.clone())));
        Some(r)
    }
}

/// Bring one name back to its previous entry (`c`, of `client`), retrying the client calls.
/// `mark` names it in the journal as one the run may leave absent, or no longer.
fn restore(
    client: &dyn Client,
    c: &Change,
    why: Why,
    absent: Absent,
    mark: &mut dyn FnMut(bool) -> Result<(), ClientError>,
) -> Result<Outcome, ClientError> {
    let attempt = Attempt { client, c, why };
    let mut last = None;
    let mut absent = absent;
    let marked = std::cell::Cell::new(false);
    let mut noted = |on: bool| {
        mark(on)?;
        marked.set(on);
        Ok(())
    };
    for _ in 0..RESTORE_ATTEMPTS {
        match attempt.restore_once(absent, &mut noted) {
            Ok(outcome) => return Ok(outcome),
            Err(e) => {
                // A failed attempt that had journalled the name as left absent by this run
                // may have left it so: the next attempt restores it from absence.
                if marked.get() && absent != Absent::InFlight {
                    absent = Absent::Ours;
                }
                last = Some(e)
            }
        }
    }
    Err(last.expect("at least one attempt"))
}

/// One attempt of [`restore`]: the name of `c`, of `client`, brought back for `why`.
struct Attempt<'a> {
    client: &'a dyn Client,
    c: &'a Change,
    why: Why,
}

impl Attempt<'_> {
    fn restore_once(
        &self,
        absent: Absent,
        mark: &mut dyn FnMut(bool) -> Result<(), ClientError>,
    ) -> Result<Outcome, ClientError> {
        let Attempt { client, c, why } = *self;
        let now = current(client, &c.name)?;
        match (&now, &c.previous) {
            (None, None) => return Ok(Outcome::AsBefore("absent, as before")),
            (Some(n), Some(prev)) if same(n, prev) => {
                return Ok(Outcome::AsBefore("at its previous entry"))
            }
            _ => {}
        }
        // Compare-and-swap: only what this run could have left is ours to undo.
        let ours = absent == Absent::InFlight
            || match (&now, &c.target) {
                // Absence is the target (a removal), or the journal says the run left it so.
                (None, None) => true,
                (None, Some(_)) => absent == Absent::Ours,
                (Some(n), Some(t)) => same(n, t),
                (Some(_), None) => false,
            };
        if !ours {
            return Ok(match now {
                None => Outcome::Removed {
                    why,
                    unknown: absent == Absent::Unknown,
                },
                Some(_) => Outcome::Changed { why },
            });
        }
        // Between this remove and the add below the name is absent: journalled as ours first.
        let replace = now.is_some() && c.previous.is_some();
        if now.is_some() {
            if replace {
                mark(true)?;
            }
            client.remove(&c.name)?;
        }
        let Some(prev) = &c.previous else {
            return Ok(Outcome::Restored {
                now,
                word: "removed again (it was absent before)",
            });
        };
        client.add(&c.name, &raw_entry(prev))?;
        if replace || absent == Absent::Ours {
            mark(false)?;
        }
        // The proof: read it back.
        let back = current(client, &c.name)?.unwrap_or_default();
        let keys = differing_keys(prev, &back);
        if keys.is_empty() {
            Ok(Outcome::Restored {
                now,
                word: "restored to its previous entry",
            })
        } else {
            Ok(Outcome::Lossy { now, keys })
        }
    }
}

fn current(client: &dyn Client, name: &str) -> Result<Option<Map<String, Value>>, ClientError> {
    Ok(client
        .user_entries()?
        .get(name)
        .and_then(|v| v.as_object().cloned()))
}

/// Two optional entries are the same registration (both absent, or [`same`]).
pub(crate) fn same_entry(a: Option<&Map<String, Value>>, b: Option<&Map<String, Value>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => same(a, b),
        _ => false,
    }
}

/// Two entries are the same registration (defaults such as `"args": []` aside).
fn same(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    raw_entry(a).same_registration(&raw_entry(b))
}

/// The keys whose values differ between `want` and `got`, a default (`"args": []`, `"env":
/// {}`, `"type": "stdio"`) counting as absent. Only names: values may be secrets.
fn differing_keys(want: &Map<String, Value>, got: &Map<String, Value>) -> Vec<String> {
    let is_default = |k: &str, v: &Value| match (k, v) {
        ("type", Value::String(t)) => t == "stdio",
        ("args", Value::Array(a)) => a.is_empty(),
        ("env" | "headers", Value::Object(o)) => o.is_empty(),
        _ => false,
    };
    let norm = |m: &Map<String, Value>| -> Map<String, Value> {
        m.iter()
            .filter(|(k, v)| !is_default(k, v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let (want, got) = (norm(want), norm(got));
    let mut keys: Vec<String> = want
        .iter()
        .filter(|(k, v)| got.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect();
    keys.extend(got.keys().filter(|k| !want.contains_key(*k)).cloned());
    keys
}

/// An entry as the client config held it, even one we could not parse: it is put back as is.
fn raw_entry(raw: &Map<String, Value>) -> Entry {
    Entry::from_value(&Value::Object(raw.clone())).unwrap_or_else(|_| Entry {
        raw: raw.clone(),
        transport: crate::entry::Transport::Remote {
            kind: "unknown".into(),
            url: String::new(),
        },
    })
}

fn remove_journal(path: &Path) -> Result<(), fsio::IoError> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(fsio::IoError::new("cannot remove", path, e)),
    }
    if let Some(dir) = path.parent() {
        fsio::sync_dir(dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn differing_keys_name_what_the_client_dropped_and_ignore_defaults() {
        let prev = m(json!({"command": "/x", "cwd": "/tmp", "x-note": "n", "env": {}}));
        let back = m(json!({"command": "/x", "args": []}));
        assert_eq!(differing_keys(&prev, &back), ["cwd", "x-note"]);
        assert!(differing_keys(&back, &m(json!({"command": "/x"}))).is_empty());
    }
}
