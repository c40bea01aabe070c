//! `install`: make the clients' user-scope registrations follow the deployed releases, through
//! each client's own CLI (or its file, for the clients without one), as one transaction.
//!
//! The install algorithm:
//! 1. Validate everything first (the command does the arguments): the declaration, the
//!    selected servers and their registered names, `--expect-commit NAME=SHA`, the flat
//!    document (a malformed one is refused, never overwritten), and that each prefix holds a
//!    deployed server. 1b. The gate ([`crate::registration::gate`]): the deployment is checked
//!    before anything is written or registered. When it passes, the handshake gate starts
//!    every server (unless `--no-handshake`), each on a thread, while steps 2–5 open and read
//!    the clients. In step 6 a server's answer is waited for before its own first mutating
//!    call (so a server is never registered before its gate passed, and one server's
//!    handshake runs beside another's client calls), and every `handshake` and `tools` row
//!    before step 8 records anything: a refusal rolls back what the run changed and refuses
//!    the install with the rows. When nothing is to change, the rows are waited for beside
//!    step 7's reads.
//! 2. The session ([`crate::registration::session`]) takes every lock the run needs and rolls
//!    back what an interrupted earlier run journalled, saying so; the flat document is read
//!    only now, under its lock.
//! 3. Read each client's current user-scope entries, read-only, from its config file.
//! 4. Plan each name: `unchanged` when the entry already equals the rendered one, `added` when
//!    there is none, `updated` otherwise. Note same-name entries in other scopes that would
//!    shadow it (a warning; a failed check with `--strict`).
//! 5. Write each server's rendered document, `<prefix>/mcp/<name>.mcp.json`.
//! 6. In one transaction per client (journal first), the clients side by side: apply the plan
//!    one mutating call at a time — `remove` (only when present), then `add`.
//! 7. Ask each client what it now has (`claude mcp get`, all names side by side): each must be
//!    at user scope and agree with the config file, whose exact entry is what we record.
//! 8. Write the flat registration document (other names in it are kept), then commit (remove
//!    the journals). A failure in 6–8, for any client, rolls every name of every client back to
//!    its previous entry and reports the state of each. SIGINT or SIGTERM is such a failure:
//!    the client calls in progress are stopped and everything rolled back. After the commit, a
//!    ledger that cannot be written is a warning: the registration is made.
//! 9. Verify identity for each server against what was recorded, and report a registration
//!    line and the checks per server, in the `--client` order.
//!
//! A second install with nothing changed makes no mutating client call and writes no journal.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::clients::{Client, ClientError, ClientKind, Op, Scope};
use crate::deployment::layout::Sha;
use crate::deployment::render::{self, RenderError};
use crate::fsio::IoError;
use crate::identity::report::{Check, Report, ServerReport};
use crate::notice::{Notice, Notify};
use crate::registration::flat_document::{FlatDocument, FlatDocumentError};
use crate::registration::gate::{self, Candidate, Gate};
use crate::registration::ledger;
use crate::registration::plan::{plan_client, Action, ClientPlan, DryRun, PlannedStep};
use crate::registration::session::{
    self, ChangeOptions, ClientChoice, Session, SessionError, Then, Write,
};
use crate::registration::transaction::Admits;
use crate::registration::verify::{self, Verify};
use crate::trust::{TrustFlags, TrustLoadError};

/// An install, its arguments validated.
pub(crate) struct InstallOptions<'a> {
    /// The selection, `--dry-run`, `--lock-timeout` and `--ledger`.
    pub(crate) change: ChangeOptions<'a>,
    /// `--expect-commit`, by server name.
    pub(crate) expected: BTreeMap<String, Sha>,
    /// `--trusted-signers`, `--trusted-builder`, `--trusted-root`.
    pub(crate) trust: TrustFlags<'a>,
    /// The clients of `--client`, in its order (named in the gate's report).
    pub(crate) clients: &'a [ClientKind],
    pub(crate) content: bool,
    pub(crate) strict: bool,
    /// The handshake gate and the tool surface (`--accept-tools`); `None` is
    /// `--no-handshake`.
    pub(crate) tools: Option<gate::ToolsGate>,
}

/// Why an install could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum InstallError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    FlatDocument(#[from] FlatDocumentError),
    #[error(transparent)]
    Trust(#[from] TrustLoadError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Session(#[from] Box<SessionError>),
}

impl From<SessionError> for InstallError {
    fn from(e: SessionError) -> Self {
        InstallError::Session(Box::new(e))
    }
}

/// Step 1 done: each server's candidate (its rendered entry and trust policies) and the
/// gate's report, one per candidate in their order.
pub(crate) struct Gated {
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) gate: Vec<ServerReport>,
    /// Whether the deployment passed the gate (and, once [`Gated::settle`]d, the handshakes).
    pub(crate) ok: bool,
    /// The handshakes under way, until [`Gated::settle`].
    pending: Option<gate::PendingTools>,
}

impl Gated {
    /// Wait for the handshakes under way and add their rows (once; later calls do nothing).
    /// Returns whether every server passed the whole gate.
    pub(crate) fn settle(&mut self, dry_run: bool, ledger: &Path) -> bool {
        if let Some(pending) = self.pending.take() {
            pending.finish(&mut self.gate, dry_run, ledger);
            self.ok = self.gate.iter().all(ServerReport::ok);
        }
        self.ok
    }
}

/// What an install ended with.
pub(crate) enum Installed {
    /// The gate refused the deployment (not a dry run): nothing changed; the gate's report,
    /// each server with its verdict ([`refused`]).
    Refused(Report),
    /// `--dry-run`: the plan.
    DryRun(DryRun),
    /// Registered (or a check failed after): the report per name and client.
    Done(Report),
}

/// `mcp-deploy install`, the numbered algorithm above: step 1 ([`check`], an interrupted
/// promote said, [`gate`]), the clients of `choice` opened (a dry run opens one whose binary
/// is missing to read its files, and its plan says so), then steps 2–9 ([`install`]).
pub(crate) fn run(
    opts: &InstallOptions,
    choice: &ClientChoice,
    notify: Notify,
) -> Result<Installed, InstallError> {
    check(opts)?;
    crate::deployment::layout::warn_interrupted(&opts.change.selection.servers, notify);
    let gated = gate(opts)?;
    if !gated.ok && !opts.change.dry_run {
        return Ok(Installed::Refused(refused(gated.gate)));
    }
    let (clients, missing) = session::open_in_scope(choice, opts.change.dry_run)?;
    let mut installed = install(opts, gated, &clients, notify)?;
    if let Installed::DryRun(plan) = &mut installed {
        plan.missing_binaries = missing;
    }
    Ok(installed)
}

/// Step 1, the flat document: validated now (a malformed one is refused before anything
/// changes), read again under its lock.
pub(crate) fn check(opts: &InstallOptions) -> Result<(), InstallError> {
    FlatDocument::read_or_empty(&opts.change.selection.flat_document)?;
    Ok(())
}

/// Steps 1 (the deployment) and 1b: validate the deployment and pass the gate (no client is
/// opened yet).
pub(crate) fn gate(opts: &InstallOptions) -> Result<Gated, InstallError> {
    let selected = &opts.change.selection.servers;
    let mut candidates = Vec::new();
    for s in selected {
        render::check_deployed(&s.server, &s.prefix)?;
        candidates.push(Candidate {
            rendered: render::render(&s.server, &s.prefix)?,
            trust: gate::trust_policies(opts.trust, &s.server)?,
            selected: s.clone(),
        });
    }
    let gate = gate::gate_reports(
        &Gate {
            clients: opts.clients,
            require_content: opts.content,
            candidate: None,
        },
        &candidates,
        &opts.expected,
    );
    let mut gate = gate;
    let ok = gate.iter().all(ServerReport::ok);
    let pending = match opts.tools {
        // A release whose deployment failed is never executed.
        Some(tools) if ok => Some(gate::start_tools(&candidates, tools)),
        Some(_) => None,
        None => {
            for r in &mut gate {
                r.checks.push(Check::skipped(
                    "handshake",
                    "not started (--no-handshake): no tool surface recorded or compared".into(),
                ));
            }
            None
        }
    };
    if ok || opts.change.dry_run {
        ledger::check_appendable(&opts.change.ledger)?;
    }
    Ok(Gated {
        candidates,
        gate,
        ok,
        pending,
    })
}

/// The report of an install (or reconcile) the gate refused: the gate's `reports`, each with
/// its verdict ([`not_changed`]).
pub(crate) fn refused(mut reports: Vec<ServerReport>) -> crate::identity::report::Report {
    not_changed(&mut reports);
    crate::identity::report::Report::new(reports, None)
}

/// A refused install's verdict for each server of the gate's `reports`, each its own: a
/// server that failed says so; one that passed says which others failed, since install
/// registers all or nothing.
pub(crate) fn not_changed(reports: &mut [ServerReport]) {
    let mut failed: Vec<String> = Vec::new();
    for r in reports.iter().filter(|r| !r.ok()) {
        if !failed.contains(&r.name) {
            failed.push(r.name.clone());
        }
    }
    let others = match failed.as_slice() {
        [one] => format!("{one} failed its checks"),
        [rest @ .., last] => format!("{} and {last} failed their checks", rest.join(", ")),
        [] => "the deployment failed its checks".into(),
    };
    for r in reports.iter_mut() {
        r.registration = Some(if r.ok() {
            format!("not changed: {others}, and install registers all or nothing")
        } else {
            "not changed: its deployment failed the checks below".into()
        });
    }
}

/// Steps 2–9 into `clients` (opened in the `--client` order), after the gate passed (or for
/// a dry run, whatever it found).
pub(crate) fn install(
    opts: &InstallOptions,
    mut gated: Gated,
    clients: &[Box<dyn Client>],
    notify: Notify,
) -> Result<Installed, InstallError> {
    let selected = &opts.change.selection.servers;
    let flat_document = &opts.change.selection.flat_document;
    // The handshakes keep their own copy: `gated` is settled while the plans hold these.
    let candidates = std::mem::take(&mut gated.candidates);
    // 2. Lock and recover, every client before any change (a dry run only reads: no lock).
    let mut session = Session::open(clients, &opts.change.opening(true), notify)?;
    // 3. Read; 4. plan.
    let plans: Vec<ClientPlan> = clients
        .iter()
        .map(|c| plan_client(c.as_ref(), &candidates))
        .collect::<Result<_, _>>()
        .map_err(SessionError::from)?;
    warn_managed(&plans, opts.change.dry_run, notify);
    let (dry, ledger_path) = (opts.change.dry_run, opts.change.ledger.as_path());
    if dry {
        gated.settle(dry, ledger_path);
        return Ok(Installed::DryRun(dry_run(
            &candidates,
            &plans,
            &gated.gate,
            session.flat(),
            flat_document,
            &opts.change.ledger,
        )));
    }
    // 5. Write the rendered documents (the declaration's, whatever the servers answer).
    for c in &candidates {
        render::write_rendered(&c.rendered, &c.selected.prefix)?;
    }
    // 6–8. The transactions: all clients change, or none does. Each server's handshake is
    // waited for before its own first mutating call (the others' run beside it), every row
    // before anything is recorded; a refusal rolls back what was changed.
    let admits: Option<Admits> = gated
        .pending
        .clone()
        .map(|pending| Arc::new(move |name: &str| pending.admits(name)) as Admits);
    let passed = session.apply_gated(
        &plans,
        selected,
        Then::Observe,
        Write::Always,
        admits,
        || gated.settle(dry, ledger_path),
    )?;
    if !passed {
        // Refused: the rows say why; nothing of this run is recorded (a dry run's wording).
        gated.settle(true, ledger_path);
        return Ok(Installed::Refused(refused(gated.gate)));
    }
    session.ledger(&verify::change_records(&plans));
    let flat = session.close();
    // 9. Verify and report.
    let reports = verify::verify_plans(
        &plans,
        &flat,
        &Verify {
            expected: &opts.expected,
            require_content: opts.content,
            shadows: true,
        },
    )?;
    let mut reports = reports;
    // The handshake gate's rows (`--handshake`) are what this install saw of each server
    // before it registered it: each server's report carries them.
    for r in reports.iter_mut() {
        let gate_rows = gated
            .gate
            .iter()
            .filter(|g| g.name == r.name)
            .flat_map(|g| g.checks.iter())
            .filter(|c| c.check == "handshake" || c.check == "tools");
        r.checks.extend(gate_rows.cloned());
    }
    Ok(Installed::Done(Report::new(
        reports,
        Some(flat_document.display().to_string()),
    )))
}

/// Before a client's managed file is written (or, in a dry run, would be): what that does to
/// every user of the host, said once per client with a change to make.
fn warn_managed(plans: &[ClientPlan], dry_run: bool, notify: Notify) {
    for p in plans {
        if p.client.scope() == Scope::Managed && !p.changes.is_empty() {
            let file = p.client.config_path();
            notify(Notice::ManagedScope {
                client: p.client.name(),
                file: file.to_path_buf(),
                exists: std::fs::symlink_metadata(file).is_ok(),
                dry_run,
            });
        }
    }
}

/// `install --dry-run`: the plan, each step with the gate checks of its server, and exactly
/// what the real run would write and call: a rendered document or flat document that would
/// hold the same bytes is not written by the real run, so it is not listed (steps 5 and 8);
/// the ledger is appended to only when a registration changes.
fn dry_run(
    candidates: &[Candidate],
    plans: &[ClientPlan],
    gate: &[ServerReport],
    mut flat: FlatDocument,
    flat_document: &Path,
    ledger: &Path,
) -> DryRun {
    let mut steps = Vec::new();
    let mut writes = Vec::new();
    for c in candidates {
        let s = &c.selected;
        if render::would_write(&c.rendered, &s.prefix) {
            let file = render::rendered_path(&s.prefix, &s.server.name);
            writes.push(file.display().to_string());
        }
    }
    let mut changes = false;
    for p in plans {
        // The gate's report is the candidates', in their order, as the plan's names are.
        for (n, g) in p.names.iter().zip(gate) {
            let (s, r, action) = (&n.candidate.selected, &n.candidate.rendered, &n.action);
            let file = render::rendered_path(&s.prefix, &s.server.name);
            let file = file.display().to_string();
            let name = &s.registered_name;
            // Step 8 records what the client holds after step 7: the entry it has now when
            // unchanged, else the one it is given.
            let recorded = match action {
                Action::Unchanged => p
                    .current
                    .get(name)
                    .and_then(|raw| crate::entry::Entry::from_value(raw).ok())
                    .map(|e| e.flat()),
                Action::Add | Action::Update => Some(r.entry.flat()),
            };
            if let Some(line) = recorded {
                flat.set(p.client.name(), name, line);
                flat.set_scope(p.client.name(), name, p.client.scope());
            }
            changes |= *action != Action::Unchanged;
            let mut calls = Vec::new();
            if *action == Action::Update {
                calls.push(p.client.show(Op::Remove, name));
            }
            if *action != Action::Unchanged {
                calls.push(p.client.show(Op::Add, name));
            }
            calls.push(p.client.show(Op::Observe, name));
            steps.push(PlannedStep {
                name: s.server.name.clone(),
                client: p.client.name(),
                registered_name: name.clone(),
                registration: action.word(),
                entry: Some(r.entry.describe()),
                writes: Some(writes.iter().filter(|w| **w == file).cloned().collect()),
                client_calls: calls,
                gate: Some(g.checks.clone()),
            });
        }
    }
    let writes_flat_document = flat.would_write(flat_document);
    if writes_flat_document {
        writes.push(flat_document.display().to_string());
    }
    let mut appends_ledger = changes.then(|| ledger.display().to_string());
    writes.extend(appends_ledger.clone());
    let ok = gate.iter().all(ServerReport::ok);
    if !ok {
        // The real run stops at the gate (step 1b): it writes nothing and calls no client.
        for step in &mut steps {
            step.writes = Some(Vec::new());
            step.client_calls.clear();
        }
        writes.clear();
        appends_ledger = None;
    }
    DryRun {
        dry_run: true,
        ok,
        servers: steps,
        flat_document: flat_document.display().to_string(),
        writes,
        writes_flat_document: ok && writes_flat_document,
        appends_ledger,
        missing_binaries: Vec::new(),
    }
}
