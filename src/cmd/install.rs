//! `install` and `uninstall`: make the client's user-scope registrations follow the deployed
//! releases, through the client's own CLI, as one transaction.
//!
//! The install algorithm:
//! 1. Validate everything first: the declaration, the selected servers and their registered
//!    names, `--expect-commit NAME=SHA`, the flat document (a malformed one is refused, never
//!    overwritten), and that each prefix holds a deployed server.
//! 2. Take every lock the run needs, each once and in path order (waiting up to
//!    `--lock-timeout`): each client's of `--client` (claude by default; codex, gemini, grok), and
//!    the flat document's, which every run writing that document takes whatever its clients.
//!    Then roll back what an interrupted earlier run journalled, saying so. The flat document
//!    is read only now, under its lock, so no run writes back a copy another run has changed;
//!    its lines for the recovered names are brought back in agreement with the client (the
//!    interrupted run may have written them just before it was stopped).
//! 3. Read the client's current user-scope entries, read-only, from its config file.
//! 4. Plan each name: `unchanged` when the entry already equals the rendered one, `added` when
//!    there is none, `updated` otherwise. Note same-name entries in other scopes that would
//!    shadow it (a warning; a failed check with `--strict`).
//! 5. Write each server's rendered document, `<prefix>/mcp/<name>.mcp.json`.
//! 6. In one transaction per client (journal first): apply the plan one mutating call at a
//!    time — `remove` (only when present), then `add`.
//! 7. Ask each client what it now has (`claude mcp get`, all names side by side): each must be
//!    at user scope and agree with the config file, whose exact entry is what we record.
//! 8. Write the flat registration document (other names in it are kept), then commit (remove
//!    the journals). A failure in 6–8, for any client, rolls every name of every client back to
//!    its previous entry and reports the state of each. SIGINT or SIGTERM is such a failure:
//!    the client call in progress is stopped and everything rolled back. After the commit, a
//!    ledger that cannot be written is a warning: the registration is made.
//! 9. Verify identity for each server against what was recorded, and report a registration
//!    line and the checks per server; exit 0 only if all passed.
//!
//! A second install with nothing changed makes no mutating client call and writes no journal.

use std::path::Path;

use super::open_clients;
use crate::cli::InstallArgs;
use crate::clients::Op;
use crate::deployment::render::{self, Rendered};
use crate::deployment::selection::{self, Selected};
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::checks::{self, Target};
use crate::identity::report::{Report, ServerReport};
use crate::output::{emit, progress};
use crate::registration::ledger::{self};
use crate::registration::plan::{
    change_record, observe_all, plan_client, shadow_check, Action, ClientPlan, DryRun, PlannedStep,
};
use crate::registration::registered::Flat;
use crate::registration::session::{
    self, agree_recovered, ledger_after_commit, ledger_path, lock_and_recover, Recovered,
};
use crate::registration::transaction::{self, Transaction};

pub(crate) fn install(args: &InstallArgs) -> Result<Exit, Error> {
    // 1. Validate.
    let mut selection = super::selection(&args.selection)?;
    selection.skip_absent(args.selection.prefix.as_deref(), &crate::output::notice)?;
    let (selected, registered_path) = (&selection.servers, &selection.registered);
    let expected = selection::expect_commits(&args.expect_commits, &selection)?;
    // Validated now (a malformed one is refused before anything changes), read again under
    // its lock below.
    Flat::read_or_empty(registered_path)?;
    let ledger_file = ledger_path(args.ledger.as_deref());
    super::warn_interrupted_promotes(selected);
    let mut rendered = Vec::new();
    let mut trust = Vec::new();
    for s in selected {
        render::check_deployed(&s.server, &s.prefix)?;
        rendered.push(render::render(&s.server, &s.prefix)?);
        trust.push(super::trust_policies(
            args.trusted_signers.as_deref(),
            &s.server,
        )?);
    }

    // 1b. The gate: the deployment is checked before anything is written or registered, so a
    // dangling `current`, a wrong commit, tampered content or a command that cannot run never
    // reaches the client (where `claude mcp list` would show a server that cannot start).
    let gate = super::gate_reports(
        &super::Gate {
            clients: &args.client.clients,
            require_content: args.content,
            candidate: None,
            trust: &trust,
        },
        selected,
        &rendered,
        &expected,
    );
    let gate_ok = gate.iter().all(ServerReport::ok);
    if !gate_ok && !args.dry_run {
        let servers = gate
            .into_iter()
            .map(|mut g| {
                g.registration = Some(NOT_CHANGED.into());
                g
            })
            .collect();
        let report = Report::new(servers, None);
        crate::output::print(&report, args.json, Exit::CheckFailed);
        if args.json {
            eprintln!("{GATE_LINE}");
        } else {
            emit(&format!("{GATE_LINE}\n"));
        }
        return Ok(Exit::CheckFailed);
    }
    ledger::check_appendable(&ledger_path(args.ledger.as_deref()))?;
    let clients = open_clients(&args.client, args.mcp_timeout)?;

    // 2. Lock and recover, every client before any change (a dry run only reads: no lock).
    let mut locks = Vec::new();
    let mut recovered = Recovered::new();
    if !args.dry_run {
        (locks, recovered) = lock_and_recover(
            &clients,
            registered_path,
            args.lock.lock_timeout,
            &ledger_file,
            &crate::output::notice,
        )?;
    }
    let mut flat = Flat::read_or_empty(registered_path)?;
    if agree_recovered(&mut flat, &recovered) {
        flat.write(registered_path)?;
    }

    // 3. Read; 4. plan.
    let plans: Vec<ClientPlan> = clients
        .iter()
        .map(|c| plan_client(c.as_ref(), selected, &rendered))
        .collect::<Result<_, _>>()?;
    if args.dry_run {
        let plan = dry_run(selected, &rendered, &plans, &gate, registered_path);
        let exit = Exit::from_checks(gate_ok);
        crate::output::install_plan(&plan, args.json, exit);
        return Ok(exit);
    }

    // 5. Write the rendered documents.
    for (s, r) in selected.iter().zip(&rendered) {
        render::write_rendered(r, &s.prefix)?;
    }

    // 6–8. The transactions: all clients change, or none does.
    let names: Vec<&str> = selected
        .iter()
        .map(|s| s.registered_name.as_str())
        .collect();
    let mut txs: Vec<Transaction> = Vec::new();
    let outcome = (|| -> Result<(), Error> {
        for p in &plans {
            let mut tx = Transaction::begin(
                p.client,
                p.changes.clone(),
                &ledger_file,
                &crate::output::notice,
            )?;
            if !tx.is_empty() {
                progress(&format!("registering with {}…", p.client.name()));
            }
            let applied = tx.apply();
            txs.push(tx);
            applied?;
            progress(&format!(
                "asking {} what it has registered…",
                p.client.name()
            ));
            for (name, entry) in observe_all(p.client, &names)? {
                flat.set(p.client.name(), &name, entry.flat());
            }
        }
        transaction::checkpoint("after-observe");
        flat.write(registered_path)?;
        transaction::checkpoint("after-record");
        Ok(())
    })();
    session::finish_all(txs, outcome)?;
    let mut records = Vec::new();
    for p in &plans {
        for ((s, r), action) in selected.iter().zip(&rendered).zip(&p.actions) {
            if *action != Action::Unchanged {
                let old = p.current.get(&s.registered_name).map(ledger::secret_free);
                records.push(change_record(
                    p.client,
                    s,
                    action.word(),
                    old,
                    Some(r.entry.flat()),
                ));
            }
        }
    }
    ledger_after_commit(&ledger_file, &records, &crate::output::notice);
    drop(locks);

    // 9. Verify and report.
    let mut reports = Vec::new();
    for p in &plans {
        let registrations = flat.servers(p.client.name());
        // The live witness: the client's config as it is now (shadows are install's own
        // warning below, a failure only with --strict).
        let live = checks::Live {
            path: p.client.config_path().to_path_buf(),
            entries: p.client.user_entries()?,
            shadows: Vec::new(),
        };
        for ((((s, r), action), shadowed), trust) in selected
            .iter()
            .zip(&rendered)
            .zip(&p.actions)
            .zip(&p.shadows)
            .zip(&trust)
        {
            let target = Target {
                server: &s.server,
                client: p.client.name(),
                prefix: s.prefix.clone(),
                registered_name: s.registered_name.clone(),
                declared: r.entry.clone(),
                expected: expected.get(&s.server.name).cloned(),
                require_content: args.content,
                handshake: None,
                live: Some(live.clone()),
                layers: layers_of(p.client.name(), &s.registered_name, &r.entry),
                strict: args.strict.strict,
                trust,
                candidate: None,
            };
            let mut report = checks::verify(&target, &registrations);
            report.registration = Some(action.word().to_string());
            if !shadowed.is_empty() {
                report.checks.push(shadow_check(
                    &s.registered_name,
                    shadowed,
                    args.strict.strict,
                    &crate::output::notice,
                ));
            }
            reports.push(report);
        }
    }
    let report = Report::new(reports, Some(registered_path.display().to_string()));
    let exit = Exit::from_checks(report.ok);
    crate::output::print(&report, args.json, exit);
    Ok(exit)
}

/// What a gate failure says, after the failed checks.
const GATE_LINE: &str = "no registration was changed: install checks the deployment before it \
                         registers anything, and the deployment failed the checks above";
const NOT_CHANGED: &str = "not changed (the deployment failed its checks)";

/// `install --dry-run`: the plan, each step with the gate checks of its server.
fn dry_run(
    selected: &[Selected],
    rendered: &[Rendered],
    plans: &[ClientPlan],
    gate: &[ServerReport],
    registered_path: &Path,
) -> DryRun {
    let mut steps = Vec::new();
    for p in plans {
        for (((s, r), action), g) in selected.iter().zip(rendered).zip(&p.actions).zip(gate) {
            let file = render::rendered_path(&s.prefix, &s.server.name);
            let name = &s.registered_name;
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
                writes: Some(vec![file.display().to_string()]),
                client_calls: calls,
                gate: Some(g.checks.clone()),
            });
        }
    }
    DryRun {
        dry_run: true,
        ok: gate.iter().all(ServerReport::ok),
        servers: steps,
        registered: registered_path.display().to_string(),
    }
}

/// The layers the client `client` applies to `name` ([`crate::clients::layers`]).
pub(crate) fn layers_of(
    client: &str,
    name: &str,
    declared: &crate::entry::Entry,
) -> Vec<crate::clients::layers::Finding> {
    crate::clients::ClientKind::named(client)
        .map(|kind| crate::clients::effective_layers(kind, name, declared))
        .unwrap_or_default()
}
