//! The registration transaction: changes to a client's user-scope entries that either all
//! happen or are all undone, and survive a crash in between.
//!
//! The client CLI has no "replace": `remove` then `add-json` leaves a window in which a name is
//! not registered. So:
//! 1. Before the first mutating call, a journal is written (atomically, mode 0600) beside the
//!    client config: for each name, its previous entry (or none) and its target entry (or none).
//! 2. The changes are applied one call at a time.
//! 3. When anything fails, every name is brought back to its previous entry, in reverse order,
//!    and the error says which state every name ended in. Restoring calls are retried, since
//!    losing a registration is the one outcome this exists to prevent.
//! 4. On success the journal is removed (the commit point).
//! 5. A run that finds a journal (its writer crashed, was killed or lost power) first rolls
//!    every journalled name back to its previous entry and says so; the run then proceeds, so
//!    an interrupted install followed by any install ends where an uninterrupted one would.
//!
//! Callers hold the client-config lock ([`crate::lock`]) around all of this.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::client::{Client, ClientError};
use crate::entry::Entry;
use crate::fsio;

/// How often a restoring call is tried before the name is reported lost (and left to the
/// journal for the next run).
const RESTORE_ATTEMPTS: usize = 3;

/// One name's change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Change {
    pub name: String,
    /// The entry before, exactly as the client config held it; `None`: absent.
    pub previous: Option<Map<String, Value>>,
    /// The entry after; `None`: remove.
    pub target: Option<Map<String, Value>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    journal: u32,
    pid: u32,
    client: String,
    config: PathBuf,
    changes: Vec<Change>,
}

#[derive(Debug, thiserror::Error)]
pub enum TransactionError {
    #[error("{failure}\n{states}")]
    RolledBack {
        failure: Box<crate::error::Error>,
        states: String,
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
}

impl TransactionError {
    pub fn help(&self) -> Option<String> {
        match self {
            TransactionError::RolledBack { failure, .. } => failure.help(),
            TransactionError::BadJournal { .. } => Some(
                "it lists the entries to restore; restore them with the client by hand, then delete it"
                    .into(),
            ),
            TransactionError::Recovery { .. } => {
                Some("the journal is kept; fix the client and run again to finish recovery".into())
            }
            TransactionError::Io(e) => e.help(),
        }
    }
}

/// Where the journal of a client config lives.
pub fn journal_path(config: &Path) -> PathBuf {
    let dir = config.parent().unwrap_or(Path::new("."));
    dir.join(".mcp-deploy.journal.json")
}

/// Crash points for the tests (debug builds only, like rustup's): when
/// `MCP_DEPLOY_CRASH_AT` names this point, the process aborts here, as a SIGKILL would stop it.
pub fn checkpoint(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("MCP_DEPLOY_CRASH_AT").is_ok_and(|p| p == point) {
        eprintln!("mcp-deploy: crashing at checkpoint {point} (MCP_DEPLOY_CRASH_AT)");
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

/// Step 5: roll back what an interrupted run journalled. Returns a line per name, or nothing
/// when there was no journal.
pub fn recover(client: &dyn Client, config: &Path) -> Result<Vec<String>, TransactionError> {
    let path = journal_path(config);
    let text = match fsio::read_input_if_exists(&path, "journal", fsio::limits::DOCUMENT) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => {
            return Err(TransactionError::BadJournal {
                path,
                reason: e.source.to_string(),
            })
        }
    };
    let journal: Journal =
        serde_json::from_str(&text).map_err(|e| TransactionError::BadJournal {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    let mut lines = vec![format!(
        "recovered the interrupted run of pid {} journalled in {}:",
        journal.pid,
        path.display()
    )];
    for change in journal.changes.iter().rev() {
        let state = restore(client, change).map_err(|failure| TransactionError::Recovery {
            path: path.clone(),
            failure: Box::new(failure),
        })?;
        lines.push(format!("  {}: {state}", change.name));
    }
    remove_journal(&path)?;
    Ok(lines)
}

/// A transaction in progress over `changes`.
pub struct Transaction<'a> {
    client: &'a dyn Client,
    journal: PathBuf,
    changes: Vec<Change>,
    /// How many changes have been (at least partly) applied.
    started: usize,
}

impl<'a> Transaction<'a> {
    /// Step 1: write the journal, when there is anything to change.
    pub fn begin(
        client: &'a dyn Client,
        config: &Path,
        changes: Vec<Change>,
    ) -> Result<Transaction<'a>, TransactionError> {
        let journal = journal_path(config);
        if !changes.is_empty() {
            let doc = Journal {
                journal: 1,
                pid: std::process::id(),
                client: client.name().to_string(),
                config: config.to_path_buf(),
                changes: changes.clone(),
            };
            let text = serde_json::to_string_pretty(&doc).expect("a journal serializes");
            fsio::write_atomic(&journal, text.as_bytes(), true)?;
            checkpoint("journal-written");
        }
        Ok(Transaction {
            client,
            journal,
            changes,
            started: 0,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Step 2: apply every change, one call at a time.
    pub fn apply(&mut self) -> Result<(), ClientError> {
        for i in 0..self.changes.len() {
            self.started = i + 1;
            let c = &self.changes[i];
            if c.previous.is_some() {
                self.client.remove(&c.name)?;
                checkpoint(&format!("after-remove:{}", c.name));
            }
            if let Some(target) = &c.target {
                self.client.add(&c.name, &raw_entry(target))?;
                checkpoint(&format!("after-add:{}", c.name));
            }
        }
        Ok(())
    }

    /// Step 3: undo, and describe where every name ended, a line each. The journal is removed
    /// only when every name is back at its previous entry.
    fn undo(self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut all_restored = true;
        for (i, c) in self.changes.iter().enumerate().rev() {
            let state = if i >= self.started {
                "untouched, at its previous entry".to_string()
            } else {
                match restore(self.client, c) {
                    Ok(s) => s,
                    Err(e) => {
                        all_restored = false;
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
        if all_restored && !self.changes.is_empty() {
            let _ = remove_journal(&self.journal);
        }
        lines
    }

    /// Undo this one transaction after `failure`.
    pub fn roll_back(self, failure: crate::error::Error) -> TransactionError {
        roll_back_all(vec![self], failure)
    }

    /// Step 4: the commit point.
    pub fn commit(self) -> Result<(), TransactionError> {
        if !self.changes.is_empty() {
            remove_journal(&self.journal)?;
        }
        Ok(())
    }
}

/// The end of several transactions (one per client): commit them all when `outcome` is `Ok`,
/// else undo them all, the last begun first.
pub fn finish_all(
    txs: Vec<Transaction>,
    outcome: Result<(), crate::error::Error>,
) -> Result<(), crate::error::Error> {
    match outcome {
        Err(e) => Err(roll_back_all(txs, e).into()),
        Ok(()) => {
            for tx in txs {
                tx.commit()?;
            }
            Ok(())
        }
    }
}

/// Undo several transactions (one per client), the last begun first, after `failure`. With
/// one client the lines name each registration; with several, each is prefixed by its client.
pub fn roll_back_all(txs: Vec<Transaction>, failure: crate::error::Error) -> TransactionError {
    let several = txs.len() > 1;
    let mut blocks = Vec::new();
    for tx in txs.into_iter().rev() {
        let client = tx.client.name();
        let lines = tx.undo();
        if several {
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
    TransactionError::RolledBack {
        failure: Box::new(failure),
        states: format!("every change was rolled back:\n{}", blocks.join("\n")),
    }
}

/// Bring one name back to its previous entry, retrying the client calls. Returns its state.
fn restore(client: &dyn Client, c: &Change) -> Result<String, ClientError> {
    let mut last = None;
    for _ in 0..RESTORE_ATTEMPTS {
        match restore_once(client, c) {
            Ok(state) => return Ok(state),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("at least one attempt"))
}

fn restore_once(client: &dyn Client, c: &Change) -> Result<String, ClientError> {
    let current = client.user_entries()?.get(&c.name).cloned();
    let current = current.and_then(|v| v.as_object().cloned());
    match (&current, &c.previous) {
        (None, None) => Ok("absent, as before".into()),
        (Some(now), Some(prev)) if raw_entry(now).same_registration(&raw_entry(prev)) => {
            Ok("at its previous entry".into())
        }
        (Some(_), None) => {
            client.remove(&c.name)?;
            Ok("removed again (it was absent before)".into())
        }
        (now, Some(prev)) => {
            if now.is_some() {
                client.remove(&c.name)?;
            }
            client.add(&c.name, &raw_entry(prev))?;
            Ok("restored to its previous entry".into())
        }
    }
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
