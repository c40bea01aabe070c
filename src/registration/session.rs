//! What every run that changes registrations does first and last: open the clients of
//! `--client`, take every lock (each once, in path order), finish off what an interrupted
//! earlier run journalled, and after the commit append to the ledger.

use crate::clients::{self, Client, ClientError, ClientKind, ClientOptions};
use crate::fsio::IoError;
use crate::notice::{Notice, Notify};
use crate::registration::ledger::{self, Record};
use crate::registration::lock::{self, Lock, LockError};
use crate::registration::registered::{self, Flat};
use crate::registration::transaction::{self, Failure, TransactionError};
use serde_json::{Map, Value};
use std::path::Path;

/// Why the locks could not all be taken or an interrupted run not finished off.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Transaction(#[from] TransactionError),
}

/// What recoveries restored: `(client, name, its entry now)`.
pub(crate) type Recovered = Vec<(&'static str, String, Option<Map<String, Value>>)>;

/// Open each client of `clients` once, in the order given.
pub(crate) fn open_named(
    clients: &[ClientKind],
    options: &ClientOptions,
) -> Result<Vec<Box<dyn Client>>, ClientError> {
    ClientKind::unique(clients)
        .into_iter()
        .map(|k| clients::open(k, options))
        .collect()
}

/// Step 2: take the lock of every client and of the flat document `document` (each file
/// once), then finish off interrupted runs. A wait and each recovery are told to `notify` as
/// they happen.
pub(crate) fn lock_and_recover(
    clients: &[Box<dyn Client>],
    document: &Path,
    lock_timeout: u64,
    ledger: &Path,
    notify: Notify,
) -> Result<(Vec<Lock>, Recovered), SessionError> {
    crate::process::catch_signals();
    let mut paths = Vec::new();
    for c in clients {
        paths.push(crate::state::file(
            &c.home(),
            &format!("{}.lock", c.name()),
        )?);
    }
    paths.push(registered::lock_path(document)?);
    let locks = lock::acquire_all(
        &paths,
        std::time::Duration::from_secs(lock_timeout),
        |path, holder| {
            notify(Notice::LockWait {
                path: path.to_path_buf(),
                holder: holder.to_string(),
                timeout_s: lock_timeout,
            })
        },
    )?;
    let mut recovered = Vec::new();
    for c in clients {
        let r = transaction::recover(c.as_ref(), ledger, notify)?;
        for line in r.lines {
            notify(Notice::Recovery(line));
        }
        for (name, entry) in r.names {
            recovered.push((c.name(), name, entry));
        }
    }
    Ok((locks, recovered))
}

/// Bring the document's lines for names a recovery restored back in agreement with the
/// client: an interrupted run may have written them just before it was stopped. Only lines
/// the document holds are touched. Whether anything changed.
pub(crate) fn agree_recovered(flat: &mut Flat, recovered: &Recovered) -> bool {
    let mut changed = false;
    for (client, name, entry) in recovered {
        if !flat.servers(client).contains_key(name) {
            continue;
        }
        match entry {
            Some(e) => {
                let line = ledger::secret_free(&Value::Object(e.clone()));
                if flat.servers(client).get(name) != Some(&line) {
                    flat.set(client, name, line);
                    changed = true;
                }
            }
            None => changed |= flat.remove(client, name),
        }
    }
    changed
}

/// Append `records` after a commit: a failure is a warning, the registration stands.
pub(crate) fn ledger_after_commit(path: &Path, records: &[Record], notify: Notify) {
    if let Err(e) = ledger::append(path, records) {
        notify(Notice::CommitNotRecorded(e));
    }
}

pub(crate) fn ledger_path(explicit: Option<&Path>) -> std::path::PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(ledger::default_path)
}

/// The end of several transactions (one per client): commit them all when `outcome` is `Ok`,
/// else undo them all, the last begun first. `E` is the caller's error, which a rollback
/// carries as its cause.
pub(crate) fn finish_all<E: Failure + From<TransactionError>>(
    txs: Vec<transaction::Transaction>,
    outcome: Result<(), E>,
) -> Result<(), E> {
    match outcome {
        Err(e) => Err(transaction::roll_back_all(txs, e).into()),
        Ok(()) => {
            for tx in txs {
                tx.commit()?;
            }
            Ok(())
        }
    }
}
