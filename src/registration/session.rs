//! The registration session: what every run that changes registrations does, written once
//! and used by install, uninstall, promote and rollback. [`Session`] owns, in order:
//!
//! 1. lock: every lock the run needs, each once and in path order (waiting up to
//!    `--lock-timeout`): each client's, and the flat document's, which every run writing that
//!    document takes whatever its clients;
//! 2. recover: roll back what an interrupted earlier run journalled, saying so; the flat
//!    document is read only now, under its lock, and its lines for the recovered names are
//!    brought back in agreement with the client (the interrupted run may have written them
//!    just before it was stopped);
//! 3. plan: the caller's ([`crate::registration::plan`]), from what each client holds now;
//! 4. apply: one transaction per client (journal first, then one mutating call at a time);
//! 5. observe: ask each client what it now has (all names side by side);
//! 6. record: the flat document, written from what the clients reported;
//! 7. commit, or on a failure in 4–6 for ANY client, roll EVERY client back;
//! 8. ledger: after the commit, a ledger that cannot be written is a warning;
//! 9. verify ([`crate::registration::verify`]), against what was recorded.
//!
//! Steps 4 and 5 run side by side, a thread per client: each client has its own lock, journal
//! and config file, so one client's calls never wait for another's. The rest is in the
//! `--client` order: the transactions are kept in that order whichever finished first, the
//! flat document is written from them in that order, and the rollback of a failure is the
//! same as one after a sequential run (the last client first). A SIGINT or SIGTERM stops the
//! call in progress in every thread ([`crate::process`]), which fails that client's step and
//! so rolls every client back. A crash leaves each client's journal for the next run's step 2.

use crate::clients::{self, Client, ClientError, ClientKind, ClientOptions, Scope};
use crate::deployment::selection::{Selected, Selection};
use crate::entry::Entry;
use crate::fsio::IoError;
use crate::notice::{Notice, Notify};
use crate::registration::flat_document::{self, FlatDocument, FlatDocumentError};
use crate::registration::ledger::{self, Record};
use crate::registration::lock::{self, Lock, LockError};
use crate::registration::plan::{observe_all, ClientPlan, PlanError};
use crate::registration::transaction::Admits;
use crate::registration::transaction::{self, Change, Failure, Transaction, TransactionError};
use crate::usage::UsageError;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Why a session step failed: the locks, a recovery, a client, or the flat document.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Transaction(#[from] TransactionError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    FlatDocument(#[from] FlatDocumentError),
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// What a run does after applying a client's changes.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Then {
    /// install, promote: ask the client what it now has and record that.
    Observe,
    /// uninstall: forget the removed names in the flat document.
    Forget,
}

/// When the flat document is written after the changes.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Write {
    /// install: every run (unchanged bytes leave the file alone, see [`FlatDocument::write`]).
    Always,
    /// promote, rollback: when a line changed, or there is no document yet.
    WhenChangedOrMissing,
    /// uninstall: only when a line was removed; a missing document stays missing.
    WhenChanged,
}

/// A client's plan, as the session applies it: install's and promote's [`ClientPlan`],
/// uninstall's removals.
pub(crate) trait Changes<'a> {
    fn client(&self) -> &'a dyn Client;
    fn changes(&self) -> &[Change];
}

impl<'a> Changes<'a> for ClientPlan<'a> {
    fn client(&self) -> &'a dyn Client {
        self.client
    }
    fn changes(&self) -> &[Change] {
        &self.changes
    }
}

/// One client's changes in a session.
struct Work<'a> {
    pub(crate) client: &'a dyn Client,
    pub(crate) changes: Vec<Change>,
    pub(crate) admits: Option<Admits>,
}

/// Steps 1–2 done, 4–8 to do: the locks held and the flat document read under them.
pub(crate) struct Session<'a> {
    document: PathBuf,
    ledger: PathBuf,
    notify: Notify<'a>,
    locks: Vec<Lock>,
    flat: Option<FlatDocument>,
}

/// What every run that changes the registrations of a selection is given (install, reconcile,
/// and uninstall, which takes nothing more).
#[derive(Clone)]
pub(crate) struct ChangeOptions<'a> {
    pub(crate) selection: &'a Selection,
    pub(crate) dry_run: bool,
    pub(crate) lock_timeout: std::time::Duration,
    pub(crate) ledger: PathBuf,
}

impl ChangeOptions<'_> {
    /// How its session opens (`missing_is_empty`: see [`Opening`]).
    pub(crate) fn opening(&self, missing_is_empty: bool) -> Opening<'_> {
        Opening {
            document: &self.selection.flat_document,
            ledger: &self.ledger,
            lock_timeout: self.lock_timeout,
            dry_run: self.dry_run,
            missing_is_empty,
        }
    }
}

/// How a session opens.
pub(crate) struct Opening<'p> {
    /// The flat document.
    pub(crate) document: &'p Path,
    pub(crate) ledger: &'p Path,
    pub(crate) lock_timeout: std::time::Duration,
    /// A dry run only reads: no lock, no recovery.
    pub(crate) dry_run: bool,
    /// Whether a missing flat document is read as an empty one (install, promote) or as none
    /// (uninstall, which never creates it).
    pub(crate) missing_is_empty: bool,
}

impl<'a> Session<'a> {
    /// Steps 1–2: lock, recover, read the flat document and bring it in agreement with what
    /// was recovered.
    pub(crate) fn open(
        clients: &'a [Box<dyn Client>],
        how: &Opening,
        notify: Notify<'a>,
    ) -> Result<Session<'a>, SessionError> {
        let (locks, recovered) = if how.dry_run {
            (Vec::new(), Recovered::new())
        } else {
            lock_and_recover(clients, how.document, how.lock_timeout, how.ledger, notify)?
        };
        let mut flat = match FlatDocument::read(how.document) {
            Ok(f) => Some(f),
            Err(FlatDocumentError::Missing { .. }) if how.missing_is_empty => {
                Some(FlatDocument::read_or_empty(how.document)?)
            }
            Err(FlatDocumentError::Missing { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        if let Some(f) = flat.as_mut() {
            if agree_recovered(f, &recovered) {
                f.write(how.document)?;
            }
        }
        Ok(Session {
            document: how.document.to_path_buf(),
            ledger: how.ledger.to_path_buf(),
            notify,
            locks,
            flat,
        })
    }

    /// The flat document as read under the lock and as the run recorded it (empty when the
    /// run reads a missing one as none).
    pub(crate) fn flat(&self) -> FlatDocument {
        self.flat.clone().unwrap_or_default()
    }

    /// The flat document to change (an empty one when the run read a missing one as none).
    pub(crate) fn flat_mut(&mut self) -> &mut FlatDocument {
        self.flat.get_or_insert_with(FlatDocument::default)
    }

    /// Steps 4–7: apply each client's plan of `plans` (in the `--client` order), a thread per
    /// client, then `then` for the registered names of `selected` (observed, or forgotten in
    /// the document), record, and commit; a failure anywhere rolls every client back.
    pub(crate) fn apply<'s>(
        &mut self,
        plans: &[impl Changes<'a>],
        selected: impl IntoIterator<Item = &'s Selected>,
        then: Then,
        write: Write,
    ) -> Result<(), SessionError> {
        self.apply_gated(plans, selected, then, write, None, || true)
            .map(|_| ())
    }

    /// [`Session::apply`] behind install's handshake gate: `admits` asked before each name's
    /// first mutating call (the handshakes of the others run beside it), and `settle` (every
    /// row waited for, surfaces recorded) after every client's steps and before anything is
    /// recorded. Without `admits`, `settle` is asked first when anything is to change. A gate
    /// that says no ends the run with every change rolled back and nothing recorded:
    /// `Ok(false)`; a rollback that could not restore everything is the error it is.
    pub(crate) fn apply_gated<'s>(
        &mut self,
        plans: &[impl Changes<'a>],
        selected: impl IntoIterator<Item = &'s Selected>,
        then: Then,
        write: Write,
        admits: Option<Admits>,
        settle: impl FnOnce() -> bool,
    ) -> Result<bool, SessionError> {
        let mutates = plans.iter().any(|p| !p.changes().is_empty());
        let mut settle = Some(settle);
        if mutates && admits.is_none() && !settle.take().is_some_and(|g| g()) {
            return Ok(false);
        }
        let names: Vec<&str> = selected
            .into_iter()
            .map(|s| s.registered_name.as_str())
            .collect();
        let names = names.as_slice();
        let work: Vec<Work<'a>> = plans
            .iter()
            .map(|p| Work {
                client: p.client(),
                changes: p.changes().to_vec(),
                admits: admits.clone(),
            })
            .collect();
        let work = work.as_slice();
        let (notify, ledger) = (self.notify, self.ledger.as_path());
        let ran: Vec<Ran<'a>> = std::thread::scope(|scope| {
            let handles: Vec<_> = work
                .iter()
                .map(|w| scope.spawn(move || client_steps(w, then, names, ledger, notify)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut txs = Vec::new();
        let mut failure = None;
        let mut observed = Vec::new();
        for (w, r) in work.iter().zip(ran) {
            txs.extend(r.tx);
            match r.result {
                Ok(entries) => observed.push((w, entries)),
                // The first failure in the `--client` order is the one reported, as when the
                // clients ran one after another; every client is rolled back either way.
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        let refused = |name: String| SessionError::from(ClientError::NotAdmitted { name });
        let outcome = match failure {
            Some(e @ SessionError::Client(ClientError::NotAdmitted { .. })) => {
                return refused_rollback(txs, e)
            }
            Some(e) => Err(e),
            None if settle.take().is_some_and(|g| !g()) => {
                return refused_rollback(txs, refused("a server of this run".into()));
            }
            None => self.record(&observed, then, names, write),
        };
        finish_all(txs, outcome).map(|()| true)
    }

    /// Step 6, after every client's steps succeeded.
    fn record(
        &mut self,
        observed: &[(&Work, Vec<(String, Entry)>)],
        then: Then,
        names: &[&str],
        write: Write,
    ) -> Result<(), SessionError> {
        transaction::checkpoint("after-observe");
        if let Some(flat) = self.flat.as_mut() {
            let before = flat.clone();
            for (w, entries) in observed {
                match then {
                    Then::Observe => {
                        for (name, entry) in entries {
                            flat.set(w.client.name(), name, entry.flat());
                            flat.set_scope(w.client.name(), name, w.client.scope());
                        }
                    }
                    // Every selected name, also a line the client no longer had, when it
                    // was recorded in the scope this run removed from.
                    Then::Forget => {
                        for name in names {
                            if flat.scope(w.client.name(), name) == w.client.scope() {
                                flat.remove(w.client.name(), name);
                            }
                        }
                    }
                }
            }
            let changed = !flat.same_as(&before);
            let wanted = match write {
                Write::Always => true,
                Write::WhenChangedOrMissing => {
                    changed || !std::fs::exists(&self.document).unwrap_or(false)
                }
                Write::WhenChanged => changed,
            };
            if wanted {
                flat.write(&self.document)?;
            }
        }
        transaction::checkpoint("after-record");
        Ok(())
    }

    /// Step 8: append `records` to the ledger after the commit (a failure is a warning).
    pub(crate) fn ledger(&self, records: &[Record]) {
        ledger_after_commit(&self.ledger, records, self.notify);
    }

    /// Release the locks; the flat document as recorded.
    pub(crate) fn close(self) -> FlatDocument {
        drop(self.locks);
        self.flat.unwrap_or_default()
    }
}

/// What one client's thread did: the transaction it began (to commit or roll back with the
/// others), and what it observed or why it failed.
struct Ran<'a> {
    tx: Option<Transaction<'a>>,
    result: Result<Vec<(String, Entry)>, SessionError>,
}

/// Steps 4–5 for one client, in its own thread.
fn client_steps<'a>(
    w: &Work<'a>,
    then: Then,
    names: &[&str],
    ledger: &Path,
    notify: Notify<'a>,
) -> Ran<'a> {
    let name = w.client.name();
    let mut tx = match Transaction::begin(w.client, w.changes.clone(), ledger, notify) {
        Ok(mut tx) => {
            tx.gated(w.admits.clone());
            tx
        }
        Err(e) => {
            return Ran {
                tx: None,
                result: Err(e.into()),
            }
        }
    };
    if !tx.is_empty() {
        notify(Notice::Progress(match then {
            Then::Observe => format!("registering with {name}…"),
            Then::Forget => format!("removing from {name}…"),
        }));
    }
    let result = tx.apply().map_err(SessionError::from).and_then(|()| {
        if then != Then::Observe {
            return Ok(Vec::new());
        }
        notify(Notice::Progress(format!(
            "asking {name} what it has registered…"
        )));
        Ok(observe_all(w.client, names)?)
    });
    Ran {
        tx: Some(tx),
        result,
    }
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

/// The clients a dry run opened, and a sentence for each whose binary is missing.
pub(crate) type DryRunClients = (Vec<Box<dyn Client>>, Vec<String>);

/// `--scope managed` names claude alone: no other client has a managed file mcp-deploy writes.
pub(crate) fn check_scope(clients: &[ClientKind], scope: Scope) -> Result<(), UsageError> {
    if scope == Scope::User {
        return Ok(());
    }
    let others: Vec<&str> = ClientKind::unique(clients)
        .into_iter()
        .filter(|k| !k.has_managed_scope())
        .map(ClientKind::name)
        .collect();
    if !others.is_empty() {
        let with: Vec<&str> = ClientKind::all()
            .iter()
            .filter(|k| k.has_managed_scope())
            .map(|k| k.name())
            .collect();
        let with = with.join(",");
        return Err(UsageError::new(
            format!(
                "--scope managed is for {with} only, and --client names {}: mcp-deploy writes no \
                 managed file for another client",
                others.join(", ")
            ),
            format!(
                "run --scope managed with --client {with} alone, and register the other clients \
                 in a second run without --scope (user scope)"
            ),
        ));
    }
    Ok(())
}

/// The clients a run that registers opens: `--client` in its order, how each is run, and
/// `--scope` ([`check_scope`] has passed).
pub(crate) struct ClientChoice<'a> {
    pub(crate) kinds: &'a [ClientKind],
    pub(crate) options: ClientOptions,
    pub(crate) scope: Scope,
}

/// The clients of `choice` opened for its scope (install's, uninstall's and promote's, after
/// [`check_scope`]), and for a dry run a sentence for each whose binary is missing. `managed`
/// is claude's managed file, for `--client claude` alone: no other client has one mcp-deploy
/// writes.
pub(crate) fn open_in_scope(
    choice: &ClientChoice,
    dry_run: bool,
) -> Result<DryRunClients, ClientError> {
    let (clients, options) = (choice.kinds, &choice.options);
    if choice.scope == Scope::User {
        return match dry_run {
            true => open_for_dry_run(clients, options),
            false => Ok((open_named(clients, options)?, Vec::new())),
        };
    }
    // A dry run reads the file and calls nothing, so it needs neither root nor the binary.
    let options = ClientOptions {
        calls_binary: !dry_run,
        ..options.clone()
    };
    Ok((vec![clients::claude_managed::open(&options)?], Vec::new()))
}

/// For a dry run, which calls no client but `--version` (and that only when the binary is
/// there): open each client as [`open_named`] does, except that one whose binary is missing
/// is opened to read its files only, so that its plan is made from its config file. Each
/// such client is named in the second list, saying what the plan rests on and that the real
/// run needs the binary.
pub(crate) fn open_for_dry_run(
    clients: &[ClientKind],
    options: &ClientOptions,
) -> Result<DryRunClients, ClientError> {
    let mut opened = Vec::new();
    let mut missing = Vec::new();
    for k in ClientKind::unique(clients) {
        match clients::open(k, options) {
            Ok(c) => opened.push(c),
            Err(e @ ClientError::Missing { .. }) => {
                let files_only = ClientOptions {
                    calls_binary: false,
                    ..options.clone()
                };
                let c = clients::open(k, &files_only)?;
                missing.push(format!(
                    "{e}: this plan is read from its config file {} (its release is not \
                     checked); the real run needs the binary ({})",
                    c.config_path().display(),
                    e.help().unwrap_or_default()
                ));
                opened.push(c);
            }
            Err(e) => return Err(e),
        }
    }
    Ok((opened, missing))
}

/// Step 2: take the lock of every client and of the flat document `document` (each file
/// once), then finish off interrupted runs. A wait and each recovery are told to `notify` as
/// they happen.
pub(crate) fn lock_and_recover(
    clients: &[Box<dyn Client>],
    document: &Path,
    lock_timeout: std::time::Duration,
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
    paths.push(flat_document::lock_path(document)?);
    let locks = lock::acquire_all(&paths, lock_timeout, |path, holder| {
        notify(Notice::LockWait {
            path: path.to_path_buf(),
            holder: holder.to_string(),
            timeout: lock_timeout,
        })
    })?;
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
pub(crate) fn agree_recovered(flat: &mut FlatDocument, recovered: &Recovered) -> bool {
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

/// Roll every client back after the handshake gate refused (`e`): `Ok(false)` when every
/// name is back at its previous entry, else the rollback's error, naming what is not.
fn refused_rollback(txs: Vec<Transaction>, e: SessionError) -> Result<bool, SessionError> {
    match finish_all(txs, Err(e)) {
        Ok(())
        | Err(SessionError::Transaction(TransactionError::RolledBack { restored: true, .. })) => {
            Ok(false)
        }
        Err(e) => Err(e),
    }
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
