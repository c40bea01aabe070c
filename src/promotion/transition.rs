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
//!
//! Here the orchestration, steps 1–3 and 7 and the dry run; each other step in its file:
//! 2's recovery in [`super::recovery`], 4 in [`super::preflight`], 5 and its undo in
//! [`super::switch`], 6 and the undo of registration changes in [`super::register`].

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::clients::{Client, ClientError, ClientKind};
use crate::deployment::declaration::{
    validate_name, Declaration, DeclarationError, Layout, Server, Source,
};
use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::deployment::render::{self, RenderError};
use crate::deployment::selection::{self, Selected, SelectionError};
use crate::deployment::stable_link::StableLink;
use crate::entry::Transport;
use crate::exit::Exit;
use crate::fsio::IoError;
use crate::identity::report::ServerReport;
use crate::identity::surface::{self, Seen, Surface};
use crate::notice::Notify;
use crate::promotion::history::{By, History, Record};
use crate::promotion::prefix::{Journal, Prefix};
use crate::promotion::preflight::preflight;
use crate::promotion::recovery::recover;
use crate::promotion::register::{register_and_verify, Registration};
use crate::promotion::switch::{create_links, remove_links, switch, undo_switch, Switch};
use crate::promotion::{Outcome, PromotionError};
use crate::registration::flat_document::{FlatDocument, FlatDocumentError};
use crate::registration::gate::{trust_policies, Candidate};
use crate::registration::ledger;
use crate::registration::session::{self, ClientChoice, SessionError};
use crate::registration::transaction::{self, TransactionError};
use crate::trust::{TrustFlags, TrustLoadError};
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
    Trust(#[from] TrustLoadError),
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

pub(super) fn usage(message: impl Into<String>, help: impl Into<String>) -> TransitionError {
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
    /// `--config` and `--launch`.
    pub(crate) declaration: Source<'a>,
    pub(crate) server: Option<&'a str>,
    pub(crate) name_suffix: &'a str,
    pub(crate) flat_document: PathBuf,
    pub(crate) ledger: PathBuf,
    /// `--trusted-signers`, `--trusted-builder`, `--trusted-root`.
    pub(crate) trust: TrustFlags<'a>,
    /// The clients of `--client`, in its order.
    pub(crate) clients: &'a [ClientKind],
    pub(crate) content: bool,
    pub(crate) dry_run: bool,
    pub(crate) lock_timeout: std::time::Duration,
    pub(crate) no_handshake: bool,
    pub(crate) handshake_timeout: std::time::Duration,
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
    server: Server,
    prefix: Prefix,
    /// The server as it is registered: its rendered entry and its trust policies
    /// (`--trusted-signers` and the server's own), loaded before anything is locked: a policy
    /// that cannot be read is exit 2, unchanged.
    candidates: Vec<Candidate>,
}

/// A transition under way: what every step reads.
pub(super) struct Run<'a> {
    pub(super) t: &'a TransitionOptions<'a>,
    pub(super) action: &'static str,
    pub(super) server: Server,
    pub(super) prefix: Prefix,
    pub(super) candidates: Vec<Candidate>,
    pub(super) flat_document: PathBuf,
    pub(super) ledger_file: PathBuf,
    pub(super) clients: &'a [Box<dyn Client>],
    pub(super) notify: Notify<'a>,
}

impl<'a> Run<'a> {
    fn new(prepared: Prepared<'a>, clients: &'a [Box<dyn Client>], notify: Notify<'a>) -> Self {
        let Prepared {
            t,
            server,
            prefix,
            candidates,
        } = prepared;
        Run {
            t,
            action: t.action,
            server,
            prefix,
            candidates,
            flat_document: t.flat_document.clone(),
            ledger_file: t.ledger.clone(),
            clients,
            notify,
        }
    }
}

/// `mcp-deploy promote` or `rollback`, the numbered algorithm above: step 1 ([`prepare`]),
/// the clients of `choice` opened ([`session::check_scope`] first; a dry run calls no
/// client, and one whose binary is missing is read from its files only, the outcome saying
/// the real run needs it), then steps 2–7 ([`transition`]).
pub(crate) fn run(
    t: &TransitionOptions,
    choice: &ClientChoice,
    notify: Notify,
) -> Result<Transitioned, TransitionError> {
    let prepared = prepare(t)?;
    session::check_scope(choice.kinds, choice.scope)?;
    let (clients, missing) = session::open_in_scope(choice, t.dry_run)?;
    let mut done = transition(prepared, &clients, notify)?;
    for m in missing {
        done.outcome.result.push_str(&format!("; note: {m}"));
    }
    Ok(done)
}

/// Step 1: validate (no client is opened yet).
pub(crate) fn prepare<'a>(t: &'a TransitionOptions<'a>) -> Result<Prepared<'a>, TransitionError> {
    let decl = Declaration::load(t.declaration)?;
    let (server, given) = selection::single(&decl, t.prefix, t.server, &Default::default())?;
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
    let selected = Selected {
        server: server.clone(),
        prefix: given.clone(),
        registered_name,
    };
    FlatDocument::read_or_empty(&t.flat_document)?;
    ledger::check_appendable(&t.ledger)?;
    let prefix = Prefix::open(&given)?;
    let candidates = vec![Candidate {
        rendered: render::render(server, &given)?,
        trust: trust_policies(t.trust, server)?,
        selected,
    }];
    Ok(Prepared {
        t,
        server: server.clone(),
        prefix,
        candidates,
    })
}

/// Steps 2–7 with `clients` (opened in the `--client` order).
pub(crate) fn transition(
    prepared: Prepared,
    clients: &[Box<dyn Client>],
    notify: Notify,
) -> Result<Transitioned, TransitionError> {
    let run = Run::new(prepared, clients, notify);
    let t = run.t;

    // 2. Lock the prefix; undo an interrupted promote.
    let locked = lock_prefix(&run)?;
    // 3. What is live, what is wanted.
    let from = run.prefix.live_release()?;
    let to_sha = wanted(&run, t.want.clone(), from.as_deref(), &locked.history)?;
    let to = to_sha.to_string();

    // 4. Preflight: install's gate, on the release about to be live.
    let mut outcome = new_outcome(&run, from.clone(), to.clone(), &locked.history);
    let (gate, surfaces) = preflight(&run, &to_sha, &mut outcome);
    if !gate.iter().all(ServerReport::ok) {
        return Ok(failed_preflight(outcome, gate));
    }

    // 5. Journal, switch.
    let sw = Switch {
        switched: from.as_deref() != Some(to.as_str()),
        from,
        to,
        journal_path: locked.journal_path.clone(),
        links: planned_links(&run, &to_sha),
    };
    if t.dry_run {
        return Ok(dry_run(
            &run,
            &sw,
            outcome,
            gate,
            locked.interrupted.as_deref(),
        ));
    }
    let now = SystemTime::now();
    let mut journal = new_journal(&run, &sw, now);
    // From here SIGINT and SIGTERM are failures like any other: the run stops its client
    // calls, undoes what it did and exits 2 (a SIGKILL leaves the journal to the next run).
    crate::process::catch_signals();
    create_links(&sw)?;
    if sw.switched {
        if let Err(e) = switch(&run, &sw, &journal) {
            // `current` is as it was: the links made for it go too.
            remove_links(&sw);
            return Err(e);
        }
    }

    // 6. Register and verify; 7. commit.
    let registration = match register_and_verify(&run, sw.switched, &mut journal, &sw.journal_path)
    {
        Ok(registration) => registration,
        Err(failure) => {
            let why = format!("{} of releases/{} failed", run.action, sw.to);
            let undone = undo_switch(&run, &sw, &why);
            return Err(TransitionError::Undone {
                failure: Box::new(failure),
                undone,
            });
        }
    };
    if !registration.verified {
        return Ok(failed_checks(&run, &sw, outcome, registration));
    }
    let mut done = commit(
        &run,
        &sw,
        &journal,
        locked.history,
        now,
        registration,
        outcome,
    )?;
    record_surfaces(&run, &sw, &surfaces, &mut done.outcome);
    drop(locked.lock);
    Ok(done)
}

/// After a committed switch: record each candidate's tool surface when its release had none
/// (first seen), and say — in the outcome and the ledger — what changed from the surface
/// recorded for the release that was live before. A record or ledger line that cannot be
/// written is said in the outcome: the switch stands (it is verified), the record is not made.
fn record_surfaces(run: &Run, sw: &Switch, surfaces: &[Option<Surface>], outcome: &mut Outcome) {
    let by = ledger::Actor::me().user;
    let clients: Vec<&str> = run.clients.iter().map(|c| c.name()).collect();
    for (c, now) in run.candidates.iter().zip(surfaces) {
        let Some(now) = now else { continue };
        let s = &c.selected;
        let mut said = Vec::new();
        if let Ok(Seen::New) = surface::seen(&s.prefix, &sw.to, now) {
            match surface::record(&s.prefix, &sw.to, now, "first seen", &by) {
                Ok(_) => said.push(format!(
                    "recorded the tool surface of releases/{} ({})",
                    sw.to,
                    now.describe()
                )),
                Err(e) => said.push(format!("the tool surface was not recorded: {e}")),
            }
        }
        let before = sw.from.as_ref().and_then(|from| {
            surface::Records::read(&s.prefix)
                .ok()
                .and_then(|r| r.releases.get(from).cloned())
                .map(|r| (from.clone(), r))
        });
        if let Some((from, was)) = before {
            let changes = surface::diff(&was.surface, now);
            if !changes.is_empty() {
                said.push(format!(
                    "the tools changed from releases/{from}: {}",
                    changes.join("; ")
                ));
                let mut r = ledger::Record::now(
                    &clients.join(","),
                    &s.server.name,
                    &s.registered_name,
                    "tools changed",
                );
                r.old = Some(serde_json::json!({"release": from, "tools": was.surface.digest}));
                r.new = Some(
                    serde_json::json!({"release": sw.to, "tools": now.digest, "changes": changes}),
                );
                r.commit = Some(sw.to.clone());
                if let Err(e) = ledger::append(&run.ledger_file, &[r]) {
                    said.push(format!("the ledger was not written: {e}"));
                }
            }
        }
        for line in said {
            outcome.result.push_str("; ");
            outcome.result.push_str(&line);
        }
    }
}

/// The stable links the candidate `to` needs and the prefix lacks (the first promote of a new
/// prefix): for each server's declared command, as the preflight checked it.
fn planned_links(run: &Run, to: &Sha) -> Vec<StableLink> {
    let candidate = run.prefix.release(&to.to_string());
    run.candidates
        .iter()
        .filter_map(|c| match &c.rendered.entry.transport {
            Transport::Stdio { command, .. } => {
                let s = &c.selected;
                Release::candidate(&s.prefix, s.server.layout, &candidate)
                    .planned_link(Path::new(command))
            }
            Transport::Remote { .. } => None,
        })
        .collect()
}

/// What the outcome says before the preflight: not ok, nothing switched.
fn new_outcome(run: &Run, from: Option<String>, to: String, history: &History) -> Outcome {
    Outcome {
        dry_run: run.t.dry_run,
        ok: false,
        action: run.action,
        server: run.server.name.clone(),
        prefix: run.prefix.given.display().to_string(),
        from,
        to,
        switched: false,
        result: String::new(),
        servers: Vec::new(),
        flat_document: run.flat_document.display().to_string(),
        history: history.path.display().to_string(),
        handshake: None,
        still_running: None,
    }
}

/// Step 4 failed: exit 1, nothing changed.
fn failed_preflight(mut outcome: Outcome, gate: Vec<ServerReport>) -> Transitioned {
    let to = &outcome.to;
    outcome.result = format!(
        "nothing was switched or registered: releases/{to} failed the checks above, \
         made before anything changes"
    );
    outcome.servers = gate;
    Transitioned {
        outcome,
        exit: Exit::CheckFailed,
    }
}

/// Step 5's journal: what the next run needs to undo this one if it is interrupted.
fn new_journal(run: &Run, sw: &Switch, now: SystemTime) -> Journal {
    Journal {
        journal: 1,
        id: format!("{}-{}", ledger::rfc3339(now), std::process::id()),
        pid: std::process::id(),
        action: run.action.to_string(),
        from: sw.from.clone(),
        to: sw.to.clone(),
        flat_document: run.flat_document.clone(),
        committed: Vec::new(),
    }
}

/// Step 6 failed a check after the switch (its registration changes undone): `current` put
/// back, exit 1.
fn failed_checks(
    run: &Run,
    sw: &Switch,
    mut outcome: Outcome,
    registration: Registration,
) -> Transitioned {
    let (action, to) = (run.action, &sw.to);
    outcome.servers = registration.reports;
    let why = format!(
        "{action} of releases/{to} failed the checks above after the switch; {}",
        if registration.changed {
            "every registration change was undone"
        } else {
            "no registration had changed"
        }
    );
    outcome.result = undo_switch(run, sw, &why);
    Transitioned {
        outcome,
        exit: Exit::CheckFailed,
    }
}

/// Step 7: append the history record, remove the journal (the commit point); count the
/// processes that still run the release switched away from.
fn commit(
    run: &Run,
    sw: &Switch,
    journal: &Journal,
    mut history: History,
    now: SystemTime,
    registration: Registration,
    mut outcome: Outcome,
) -> Result<Transitioned, TransitionError> {
    let (action, from, to) = (run.action, &sw.from, &sw.to);
    if sw.switched {
        history.append(Record {
            id: journal.id.clone(),
            time: ledger::rfc3339(now),
            action: action.to_string(),
            server: run.server.name.clone(),
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
    outcome.servers = registration.reports;
    if let (true, Some(f)) = (sw.switched, from) {
        outcome.still_running =
            crate::promotion::running::StillRunning::after_switch(&run.prefix.given, f);
    }
    // "promoted", "rolled back": `{action}d` made "rollbackd" of a rollback (issue 23).
    let done = match action {
        "rollback" => "rolled back",
        _ => "promoted",
    };
    outcome.result = match (sw.switched, from) {
        (true, Some(f)) => {
            format!("{done}: releases/{f} -> releases/{to}, live and verified")
        }
        (true, None) => format!("{done}: releases/{to} is live (the first), verified"),
        (false, _) => format!(
            "releases/{to} is already live: nothing switched, no history written, \
             registrations verified"
        ),
    };
    for link in &sw.links {
        outcome.result.push_str(&format!(
            "; created the stable link {}",
            link.describe(&run.prefix.given)
        ));
    }
    Ok(Transitioned {
        outcome,
        exit: Exit::Success,
    })
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

/// A dry run that passed the preflight: what it would do (nothing was locked, switched or
/// written).
fn dry_run(
    run: &Run,
    sw: &Switch,
    mut outcome: Outcome,
    gate: Vec<ServerReport>,
    interrupted: Option<&Path>,
) -> Transitioned {
    outcome.ok = true;
    outcome.switched = sw.switched;
    outcome.servers = gate;
    outcome.result = dry_run_result(run, sw, interrupted);
    Transitioned {
        outcome,
        exit: Exit::Success,
    }
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
    for link in &sw.links {
        result.push_str(&format!(
            "; it would create the stable link {}",
            link.describe(&run.prefix.given)
        ));
    }
    result
}
