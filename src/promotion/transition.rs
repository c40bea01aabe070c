//! The promotion transition, `promote` and `rollback`: make a release of a release layout
//! live, as one transaction: preflight, switch, register (the registration session), commit,
//! and the undo of a failure and the recovery of an interrupted run.
//!
//! The algorithm (rollback is the same with the target taken from the history):
//! 1. Validate: the server (a release layout), `--release` a full sha (so `../x` is refused
//!    before it names a path), the flat document, the ledger, the clients.
//! 2. Take the prefix lock (`<prefix>/.mcp-deploy/prefix.lock`), then undo what an
//!    interrupted promote journalled ([`crate::promotion::prefix`]), saying so.
//! 3. Read what is live (`current` must be a symlink into `releases/`, or absent) and the
//!    history (a FIFO or garbage there stops the run before anything changes).
//! 4. Preflight: install's gate ([`crate::registration::gate`]) on the new release, as if `current`
//!    already pointed at it: `release` (a directory inside `releases/`, not a link), `commit`
//!    (its VERSION is the sha), `content` (its manifest, when it has one or `--content`), and
//!    the declared command through the stable path exists, is executable and stays inside
//!    it. A failure exits 1 having changed nothing. Then, when that passed, the handshake gate
//!    ([`checks::candidate_handshake`]): the candidate's server, started as the agent will
//!    start it after the switch, must answer `initialize` and `tools/list` within
//!    `--handshake-timeout`; a failure exits 1 having changed nothing (`--no-handshake`
//!    skips it, saying so). Rollback passes the same gate: the release it returns to may
//!    have lost what it needs since it was live.
//! 5. Write the promote journal, switch `current` (new symlink, rename, directory sync).
//! 6. Re-render; in a registration session ([`crate::registration::session`]: the client and
//!    flat-document locks, journal, apply and observe side by side, record, commit), install
//!    into the selected clients; record in the journal what was committed; verify each
//!    client's registration and the release.
//! 7. Append the history record, remove the journal (the commit point); count the processes
//!    that still run the release switched away from ([`crate::promotion::running`]).
//!
//! A failure in 6 (a client, a check) undoes the registration changes (the transaction's own
//! rollback, or after its commit an inverse transaction), puts `current` back the same atomic
//! way, removes the journal, and exits non-zero saying what failed and that the previous
//! release is live again. A re-promote of the live release switches nothing, writes no
//! journal and no history, and makes no mutating client call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::clients::{Client, ClientError, ClientKind};
use crate::deployment::declaration::{validate_name, Declaration, DeclarationError, Layout};
use crate::deployment::layout::Sha;
use crate::deployment::render::{self, RenderError, Rendered};
use crate::deployment::selection::{self, Selected, SelectionError};
use crate::exit::Exit;
use crate::fsio::IoError;
use crate::identity::checks::{self, Target};
use crate::identity::report::ServerReport;
use crate::notice::{Notice, Notify};
use crate::promotion::history::{By, History, Record};
use crate::promotion::prefix::{Committed, Journal, Prefix};
use crate::promotion::{Outcome, PromotionError};
use crate::registration::flat_document::{FlatDocument, FlatDocumentError};
use crate::registration::gate::{gate_reports, trust_policies, Gate};
use crate::registration::ledger;
use crate::registration::plan::{plan_client, ClientPlan};
use crate::registration::session::{
    self, agree_recovered, lock_and_recover, Opening, Recovered, Session, SessionError, Then, Write,
};
use crate::registration::transaction::{self, Change, Transaction, TransactionError};
use crate::registration::verify::{self, Verify};
use crate::trust::allowed_signers::{Policy, PolicyError};
use crate::usage::UsageError;

/// Why a promote or rollback could not complete (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TransitionError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    #[error(transparent)]
    Selection(#[from] SelectionError),
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    FlatDocument(#[from] FlatDocumentError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Trust(#[from] PolicyError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Promotion(#[from] PromotionError),
    #[error(transparent)]
    Session(#[from] Box<SessionError>),
    #[error(transparent)]
    Transaction(#[from] Box<TransactionError>),
    /// A promote or rollback that failed after it switched `current`, and was undone: what
    /// failed, then what was put back.
    #[error("{failure}\n{undone}")]
    Undone {
        failure: Box<TransitionError>,
        undone: String,
    },
}

impl From<SessionError> for TransitionError {
    fn from(e: SessionError) -> Self {
        TransitionError::Session(Box::new(e))
    }
}

impl From<TransactionError> for TransitionError {
    fn from(e: TransactionError) -> Self {
        TransitionError::Transaction(Box::new(e))
    }
}

fn usage(message: impl Into<String>, help: impl Into<String>) -> TransitionError {
    TransitionError::Usage(UsageError::new(message, help))
}

/// A promote or rollback, its arguments parsed.
pub(crate) struct TransitionOptions<'a> {
    /// "promote" or "rollback".
    pub(crate) action: &'static str,
    /// `--release` (promote) or `--to` (rollback); `None`: the release before the live one
    /// in the history.
    pub(crate) want: Option<Sha>,
    pub(crate) prefix: &'a Path,
    pub(crate) config: Option<&'a Path>,
    pub(crate) server: Option<&'a str>,
    pub(crate) name_suffix: &'a str,
    pub(crate) flat_document: PathBuf,
    pub(crate) ledger: PathBuf,
    pub(crate) trusted_signers: Option<&'a Path>,
    /// The clients of `--client`, in its order.
    pub(crate) clients: &'a [ClientKind],
    pub(crate) content: bool,
    pub(crate) dry_run: bool,
    pub(crate) lock_timeout: u64,
    pub(crate) no_handshake: bool,
    pub(crate) handshake_timeout: u64,
}

/// What a transition ended with: its outcome and the exit that goes with it.
pub(crate) struct Transitioned {
    pub(crate) outcome: Outcome,
    pub(crate) exit: Exit,
}

/// A release is named by its full sha and nothing else: `../x`, `a/b` or an abbreviation
/// never become a path.
pub(crate) fn release_sha(flag: &str, s: &str) -> Result<Sha, UsageError> {
    Sha::parse(s).map_err(|why| {
        UsageError::new(
            format!("{flag} {s:?} is not a full commit sha: {why}"),
            "name the release by the full sha it is unpacked under, <prefix>/releases/<sha>",
        )
    })
}

/// Step 1 done: a transition validated, its clients still to open.
pub(crate) struct Prepared<'a> {
    t: &'a TransitionOptions<'a>,
    server: crate::deployment::declaration::Server,
    prefix: Prefix,
    selected: Vec<Selected>,
    rendered: Vec<Rendered>,
    /// The trust policies of each selected server (`--trusted-signers` and the server's own),
    /// loaded before anything is locked: a policy that cannot be read is exit 2, unchanged.
    trust: Vec<Vec<Policy>>,
}

struct Run<'a> {
    t: &'a TransitionOptions<'a>,
    action: &'static str,
    prefix: Prefix,
    selected: Vec<Selected>,
    rendered: Vec<Rendered>,
    flat_document: PathBuf,
    ledger_file: PathBuf,
    clients: &'a [Box<dyn Client>],
    trust: Vec<Vec<Policy>>,
    notify: Notify<'a>,
}

/// Step 1: validate (no client is opened yet).
pub(crate) fn prepare<'a>(t: &'a TransitionOptions<'a>) -> Result<Prepared<'a>, TransitionError> {
    let decl = Declaration::load(t.config)?;
    let (server, given) = selection::single(&decl, t.prefix, t.server)?;
    if server.layout != Layout::Release {
        return Err(usage(
            format!(
                "{} is declared with a prefix layout: there is no `current` to switch",
                server.name
            ),
            "promote and rollback act on release layouts (releases/<sha>, current)",
        ));
    }
    let registered_name = format!("{}{}", server.name, t.name_suffix);
    validate_name(&registered_name).map_err(|why| {
        usage(
            format!("registered name {registered_name:?} is not valid: {why}"),
            "choose a --name-suffix of letters, digits, '-' and '_'",
        )
    })?;
    let selected = vec![Selected {
        server: server.clone(),
        prefix: given.clone(),
        registered_name,
    }];
    FlatDocument::read_or_empty(&t.flat_document)?;
    ledger::check_appendable(&t.ledger)?;
    let prefix = Prefix::open(&given)?;
    let rendered = vec![render::render(server, &given)?];
    let trust = selected
        .iter()
        .map(|s| trust_policies(t.trusted_signers, &s.server))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Prepared {
        t,
        server: server.clone(),
        prefix,
        selected,
        rendered,
        trust,
    })
}

/// Steps 2–7 with `clients` (opened in the `--client` order).
pub(crate) fn transition(
    prepared: Prepared,
    clients: &[Box<dyn Client>],
    notify: Notify,
) -> Result<Transitioned, TransitionError> {
    let Prepared {
        t,
        server,
        prefix,
        selected,
        rendered,
        trust,
    } = prepared;
    let run = Run {
        t,
        action: t.action,
        prefix,
        selected,
        rendered,
        flat_document: t.flat_document.clone(),
        ledger_file: t.ledger.clone(),
        clients,
        trust,
        notify,
    };
    let (action, server) = (t.action, &server);

    // 2. Lock the prefix; undo an interrupted promote.
    let locked = lock_prefix(&run)?;
    // 3. What is live, what is wanted.
    let from = run.prefix.live_release()?;
    let to_sha = wanted(&run, t.want.clone(), from.as_deref(), &locked.history)?;
    let to = to_sha.to_string();

    // 4. Preflight: install's gate, on the release about to be live.
    let mut outcome = Outcome {
        dry_run: t.dry_run,
        ok: false,
        action,
        server: server.name.clone(),
        prefix: run.prefix.given.display().to_string(),
        from: from.clone(),
        to: to.clone(),
        switched: false,
        result: String::new(),
        servers: Vec::new(),
        flat_document: run.flat_document.display().to_string(),
        history: locked.history.path.display().to_string(),
        handshake: None,
        still_running: None,
    };
    let gate = preflight(&run, &to_sha, &mut outcome);
    if !gate.iter().all(ServerReport::ok) {
        outcome.result = format!(
            "nothing was switched or registered: releases/{to} failed the checks above, \
             made before anything changes"
        );
        outcome.servers = gate;
        return Ok(Transitioned {
            outcome,
            exit: Exit::CheckFailed,
        });
    }

    // 5. Journal, switch.
    let sw = Switch {
        switched: from.as_deref() != Some(to.as_str()),
        from,
        to,
        journal_path: locked.journal_path.clone(),
    };
    if t.dry_run {
        outcome.ok = true;
        outcome.switched = sw.switched;
        outcome.servers = gate;
        outcome.result = dry_run_result(&run, &sw, locked.interrupted.as_deref());
        return Ok(Transitioned {
            outcome,
            exit: Exit::Success,
        });
    }
    let now = std::time::SystemTime::now();
    let mut journal = Journal {
        journal: 1,
        id: format!("{}-{}", ledger::rfc3339(now), std::process::id()),
        pid: std::process::id(),
        action: action.to_string(),
        from: sw.from.clone(),
        to: sw.to.clone(),
        flat_document: run.flat_document.clone(),
        committed: Vec::new(),
    };
    // From here SIGINT and SIGTERM are failures like any other: the run stops its client
    // calls, undoes what it did and exits 2 (a SIGKILL leaves the journal to the next run).
    crate::process::catch_signals();
    if sw.switched {
        switch(&run, &sw, &journal)?;
    }

    // 6. Register and verify; 7. commit.
    let (from, to) = (&sw.from, &sw.to);
    match register_and_verify(&run, sw.switched, &mut journal, &sw.journal_path) {
        Err(failure) => {
            let undone = undo_switch(&run, &sw, &format!("{action} of releases/{to} failed"));
            Err(TransitionError::Undone {
                failure: Box::new(failure),
                undone,
            })
        }
        Ok(Registration {
            reports,
            verified: false,
            changed,
        }) => {
            outcome.servers = reports;
            let why = format!(
                "{action} of releases/{to} failed the checks above after the switch; {}",
                if changed {
                    "every registration change was undone"
                } else {
                    "no registration had changed"
                }
            );
            outcome.result = undo_switch(&run, &sw, &why);
            Ok(Transitioned {
                outcome,
                exit: Exit::CheckFailed,
            })
        }
        Ok(Registration {
            reports,
            verified: true,
            ..
        }) => {
            let mut history = locked.history;
            if sw.switched {
                history.append(Record {
                    id: journal.id.clone(),
                    time: ledger::rfc3339(now),
                    action: action.to_string(),
                    server: server.name.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    clients: run.clients.iter().map(|c| c.name().to_string()).collect(),
                    by: By::me(),
                })?;
                transaction::checkpoint("after-history");
                Journal::remove(&sw.journal_path)?;
            }
            outcome.ok = true;
            outcome.switched = sw.switched;
            outcome.servers = reports;
            if let (true, Some(f)) = (sw.switched, from) {
                outcome.still_running =
                    crate::promotion::running::StillRunning::after_switch(&run.prefix.given, f);
            }
            outcome.result = match (sw.switched, from) {
                (true, Some(f)) => {
                    format!("{action}d: releases/{f} -> releases/{to}, live and verified")
                }
                (true, None) => format!("{action}d: releases/{to} is live (the first), verified"),
                (false, _) => format!(
                    "releases/{to} is already live: nothing switched, no history written, \
                     registrations verified"
                ),
            };
            drop(locked.lock);
            Ok(Transitioned {
                outcome,
                exit: Exit::Success,
            })
        }
    }
}

/// Step 2's result: the prefix lock (none for a dry run), the journal's path, the history,
/// and (a dry run) the journal of an interrupted promote it only reports.
struct Locked {
    lock: Option<crate::registration::lock::Lock>,
    journal_path: PathBuf,
    history: History,
    interrupted: Option<PathBuf>,
}

/// Step 2: lock the prefix and undo an interrupted promote. A dry run only reads: no lock,
/// and an interrupted promote is only reported (`from` is then what `current` names now).
fn lock_prefix(run: &Run) -> Result<Locked, TransitionError> {
    if run.t.dry_run {
        let journal_path = run.prefix.peek_state_file("promote.journal.json")?;
        let interrupted = Journal::read(&journal_path)?
            .is_some()
            .then(|| journal_path.clone());
        let history = History::read(&run.prefix.peek_state_file("history.ndjson")?)?;
        return Ok(Locked {
            lock: None,
            journal_path,
            history,
            interrupted,
        });
    }
    let lock = run.prefix.lock(run.t.lock_timeout, run.notify)?;
    transaction::checkpoint("prefix-locked");
    let journal_path = run.prefix.journal_path()?;
    let history = History::read(&run.prefix.history_path()?)?;
    recover(run, &journal_path, &history)?;
    Ok(Locked {
        lock: Some(lock),
        journal_path,
        history,
        interrupted: None,
    })
}

/// Step 3: the release wanted: `want`, or rollback's, the one before `from` in the history.
fn wanted(
    run: &Run,
    want: Option<Sha>,
    from: Option<&str>,
    history: &History,
) -> Result<Sha, TransitionError> {
    if let Some(sha) = want {
        return Ok(sha);
    }
    let live = from.ok_or_else(|| PromotionError::NoRollbackTarget {
        why: format!("{} has no current release", run.prefix.given.display()),
    })?;
    let before = history
        .before(live)
        .map_err(|e| PromotionError::NoRollbackTarget { why: e.to_string() })?;
    Ok(
        Sha::parse(&before).map_err(|why| PromotionError::BadHistory {
            path: history.path.clone(),
            line: 0,
            why: format!("it names {before:?} as the release before {live}: {why}"),
        })?,
    )
}

/// Step 4: install's gate on the candidate release `to`, as if `current` already pointed at
/// it; then, only when that passed (a release whose content or signature failed is never
/// executed), the handshake gate: the candidate's server must answer before anything
/// switches. Says the handshake's result in `outcome`.
fn preflight(run: &Run, to: &Sha, outcome: &mut Outcome) -> Vec<ServerReport> {
    let t = run.t;
    let candidate = run.prefix.release(&to.to_string());
    let expected: BTreeMap<String, Sha> = run
        .selected
        .iter()
        .map(|s| (s.server.name.clone(), to.clone()))
        .collect();
    let mut gate = gate_reports(
        &Gate {
            clients: t.clients,
            require_content: t.content,
            candidate: Some(&candidate),
            trust: &run.trust,
        },
        &run.selected,
        &run.rendered,
        &expected,
    );
    if !gate.iter().all(ServerReport::ok) {
        return gate;
    }
    if t.no_handshake {
        outcome.handshake = Some("skipped (--no-handshake)".into());
        return gate;
    }
    (run.notify)(Notice::Progress(format!("handshaking with releases/{to}…")));
    let timeout = std::time::Duration::from_secs(t.handshake_timeout);
    for ((s, r), (report, trust)) in run
        .selected
        .iter()
        .zip(&run.rendered)
        .zip(gate.iter_mut().zip(&run.trust))
    {
        let target = Target {
            server: &s.server,
            client: &report.client,
            prefix: s.prefix.clone(),
            registered_name: s.registered_name.clone(),
            declared: r.entry.clone(),
            expected: Some(to.clone()),
            require_content: t.content,
            handshake: None,
            live: None,
            layers: Vec::new(),
            strict: false,
            candidate: Some(candidate.clone()),
            trust,
        };
        let c = crate::identity::report::Check::from_result(
            "handshake",
            checks::candidate_handshake(&target, timeout),
        );
        outcome.handshake = Some(c.detail.clone());
        report.checks.push(c);
    }
    gate
}

/// The switch a run makes (or, `switched` false, does not: the release is already live).
struct Switch {
    switched: bool,
    from: Option<String>,
    to: String,
    journal_path: PathBuf,
}

/// What a dry run that passed the preflight would do.
fn dry_run_result(run: &Run, sw: &Switch, interrupted: Option<&Path>) -> String {
    let (action, to) = (run.action, &sw.to);
    let mut result = match (&sw.from, sw.switched) {
        (_, false) => format!("dry run: releases/{to} is already live; nothing would switch"),
        (Some(f), true) => format!(
            "dry run: releases/{to} passed the preflight; {action} would switch \
             releases/{f} -> releases/{to}, then register and verify"
        ),
        (None, true) => format!(
            "dry run: releases/{to} passed the preflight; {action} would make it live (the \
             first), then register and verify"
        ),
    };
    if let Some(j) = interrupted {
        result.push_str(&format!(
            "; first it would undo the interrupted promote journalled in {}",
            j.display()
        ));
    }
    result
}

/// Step 5: write the journal, then switch `current`.
fn switch(run: &Run, sw: &Switch, journal: &Journal) -> Result<(), TransitionError> {
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
fn undo_switch(run: &Run, sw: &Switch, why: &str) -> String {
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

/// Step 6's result when it ran to the end.
struct Registration {
    /// A report per name and client, in the `--client` order.
    reports: Vec<ServerReport>,
    /// Registered and verified. Else a check failed, and the registration changes are undone.
    verified: bool,
    /// Whether there were registration changes (undone when not `verified`).
    changed: bool,
}

/// Step 6. `Err`: a step failed and its changes are undone (the error says how each name
/// ended).
fn register_and_verify(
    run: &Run,
    switched: bool,
    journal: &mut Journal,
    journal_path: &Path,
) -> Result<Registration, TransitionError> {
    let notify = run.notify;
    for (s, r) in run.selected.iter().zip(&run.rendered) {
        render::write_rendered(r, &s.prefix)?;
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
        notify,
    )?;
    let plans: Vec<ClientPlan> = run
        .clients
        .iter()
        .map(|c| plan_client(c.as_ref(), &run.selected, &run.rendered))
        .collect::<Result<_, _>>()
        .map_err(SessionError::from)?;
    session.apply(
        &plans,
        &run.selected,
        Then::Observe,
        Write::WhenChangedOrMissing,
    )?;
    let committed: Vec<Committed> = plans
        .iter()
        .filter(|p| !p.changes.is_empty())
        .map(|p| Committed {
            client: p.client.name().to_string(),
            changes: p.changes.clone(),
        })
        .collect();
    if switched && !committed.is_empty() {
        journal.committed = committed.clone();
        if let Err(e) = journal.write(journal_path) {
            let e: TransitionError = e.into();
            return Err(undo_registrations(run, &committed, session.flat_mut(), e));
        }
    }
    transaction::checkpoint("after-register");
    session.ledger(&verify::change_records(
        &plans,
        &run.selected,
        &run.rendered,
    ));

    // Verify, as install's step 9, against what was recorded and the live config.
    let expected: BTreeMap<String, Sha> = Sha::parse(&journal.to)
        .ok()
        .map(|sha| (run.selected[0].server.name.clone(), sha))
        .into_iter()
        .collect();
    let mut reports = verify::verify_plans(
        &plans,
        &session.flat(),
        &Verify {
            selected: &run.selected,
            rendered: &run.rendered,
            trust: &run.trust,
            expected: &expected,
            require_content: run.t.content,
            strict: false,
            shadows: false,
        },
        notify,
    )?;
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
    let mut ok = reports.iter().all(ServerReport::ok);
    if transaction::injected_failure("after-verify") {
        ok = false;
        if let Some(r) = reports.first_mut() {
            r.checks.push(crate::identity::report::Check {
                check: "injected",
                ok: false,
                detail: "MCP_DEPLOY_FAIL_AT=after-verify (a debug build's fault injection)".into(),
            });
        }
    }
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
        notify(Notice::Recovery(undone.to_string()));
    }
    Ok(Registration {
        reports,
        verified: ok,
        changed: !committed.is_empty(),
    })
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

fn undo_changes(
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

/// Step 2: undo what an interrupted promote journalled.
fn recover(run: &Run, journal_path: &Path, history: &History) -> Result<(), TransitionError> {
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
    }
    // The interrupted run may have died before or after its switch: what is live is the
    // old release or the new one, both of which `live_release` reads.
    // Put back only what the interrupted run switched (compare-and-swap): `current` naming
    // its new release. Naming another release, it was changed by someone else since and is
    // left; and the release it goes back to must still be a release directory (a journal
    // naming `releases/evil -> /etc`, or a release removed since, never becomes `current`).
    let line = if run.prefix.is_switched_to(&journal.to) {
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
    };
    notify(Notice::Recovery(line));
    Journal::remove(journal_path)?;
    Ok(())
}
