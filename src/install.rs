//! `install` and `uninstall`: make the client's user-scope registrations follow the deployed
//! releases, through the client's own CLI, as one transaction.
//!
//! The install algorithm:
//! 1. Validate everything first: the declaration, the selected servers and their registered
//!    names, `--expect-commit NAME=SHA`, the flat document (a malformed one is refused, never
//!    overwritten), and that each prefix holds a deployed server.
//! 2. Take every lock the run needs, each once and in path order (waiting up to
//!    `--lock-timeout`): each client's of `--client` (claude by default; codex, gemini), and
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

use crate::cli::{ClientArgs, InstallArgs, LockArgs, UninstallArgs};
use crate::clients::{self, Client, ClientError, ClientOptions, Op};
use crate::deployment::render::{self, Rendered};
use crate::deployment::selection::{self, Selected, Selection};
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::checks::{self, Target};
use crate::output::report::{emit, progress, Check, Report, ServerReport};
use crate::registration::entry::Entry;
use crate::registration::ledger::{self, Record};
use crate::registration::lock::{self, Lock};
use crate::registration::registered::{self, Flat, RegisteredError};
use crate::registration::transaction::{self, Change, Transaction};

/// What recoveries restored: `(client, name, its entry now)`.
type Recovered = Vec<(&'static str, String, Option<Map<String, Value>>)>;
use serde_json::{Map, Value};

/// What step 4 decided for one name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Action {
    Unchanged,
    Add,
    Update,
}

impl Action {
    fn word(self) -> &'static str {
        match self {
            Action::Unchanged => "unchanged",
            Action::Add => "added",
            Action::Update => "updated",
        }
    }
}

/// `mcp_timeout_ms`: install's `--mcp-timeout` (the only command that calls `claude mcp get`).
pub fn client_options(args: &ClientArgs, mcp_timeout_ms: u64) -> ClientOptions {
    ClientOptions {
        claude: args.claude.clone(),
        codex: args.codex.clone(),
        gemini: args.gemini.clone(),
        codex_home: None,
        gemini_home: None,
        // clap refuses --client-timeout 0.
        timeout: std::time::Duration::from_secs(args.client_timeout),
        mcp_timeout_ms,
        calls_binary: true,
    }
}

/// Open every client of `--client`, each once, in the order given.
pub fn open_clients(args: &ClientArgs, mcp_timeout_ms: u64) -> Result<Vec<Box<dyn Client>>, Error> {
    open_named(&args.clients, &client_options(args, mcp_timeout_ms))
}

/// Open each client of `clients` once, in the order given.
pub fn open_named(
    clients: &[String],
    options: &ClientOptions,
) -> Result<Vec<Box<dyn Client>>, Error> {
    let mut names: Vec<&str> = Vec::new();
    for c in clients {
        if !names.contains(&c.as_str()) {
            names.push(c);
        }
    }
    names
        .into_iter()
        .map(|n| clients::open(n, options).map_err(Error::from))
        .collect()
}

/// Step 2: take the lock of every client and of the flat document `document` (each file
/// once), then finish off interrupted runs.
fn lock_and_recover(
    clients: &[Box<dyn Client>],
    document: &Path,
    args: &LockArgs,
    ledger: &Path,
) -> Result<(Vec<Lock>, Recovered), Error> {
    crate::process::catch_signals();
    let mut paths = Vec::new();
    for c in clients {
        paths.push(crate::registration::state::file(
            &c.home(),
            &format!("{}.lock", c.name()),
        )?);
    }
    paths.push(registered::lock_path(document)?);
    let locks = lock::acquire_all(
        &paths,
        std::time::Duration::from_secs(args.lock_timeout),
        |path, holder| {
            eprintln!(
                "waiting for {} held by another mcp-deploy run ({holder}), up to {} s",
                path.display(),
                args.lock_timeout
            )
        },
    )?;
    let mut recovered = Vec::new();
    for c in clients {
        let r = transaction::recover(c.as_ref(), ledger)?;
        for line in &r.lines {
            eprintln!("{line}");
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
fn agree_recovered(flat: &mut Flat, recovered: &Recovered) -> bool {
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
fn ledger_after_commit(path: &Path, records: &[Record]) {
    if let Err(e) = ledger::append(path, records) {
        eprintln!("warning: the registration is made but not recorded in the ledger: {e}");
        eprintln!("help: make the ledger writable (or pass --ledger FILE); the change itself needs nothing");
    }
}

/// Steps 3–4 for one client: what it holds now, and what install would do about each name.
struct ClientPlan<'a> {
    client: &'a dyn Client,
    current: Map<String, Value>,
    actions: Vec<Action>,
    changes: Vec<Change>,
    shadows: Vec<Vec<String>>,
}

fn plan_client<'a>(
    client: &'a dyn Client,
    selected: &[Selected],
    rendered: &[Rendered],
) -> Result<ClientPlan<'a>, Error> {
    let current = client.user_entries()?;
    refuse_opaque(client, &current, selected)?;
    refuse_literal_secrets(client, &current, selected)?;
    let mut actions = Vec::new();
    let mut changes = Vec::new();
    for (s, r) in selected.iter().zip(rendered) {
        let previous = current.get(&s.registered_name).cloned();
        let action = match &previous {
            None => Action::Add,
            Some(raw) => match Entry::from_value(raw) {
                Ok(prev) if prev.same_registration(&r.entry) => Action::Unchanged,
                _ => Action::Update,
            },
        };
        if action != Action::Unchanged {
            changes.push(Change {
                name: s.registered_name.clone(),
                previous: previous.and_then(|v| v.as_object().cloned()),
                target: Some(r.entry.raw.clone()),
            });
        }
        actions.push(action);
    }
    let shadows = selected
        .iter()
        .map(|s| client.shadows(&s.registered_name))
        .collect::<Result<_, _>>()?;
    Ok(ClientPlan {
        client,
        current,
        actions,
        changes,
        shadows,
    })
}

pub fn install(args: &InstallArgs) -> Result<Exit, Error> {
    // 1. Validate.
    let mut selection = Selection::load(&args.selection)?;
    selection.skip_absent(args.selection.prefix.as_deref())?;
    let (selected, registered_path) = (&selection.servers, &selection.registered);
    let expected = selection::expect_commits(&args.expect_commits, &selection)?;
    // Validated now (a malformed one is refused before anything changes), read again under
    // its lock below.
    Flat::read_or_empty(registered_path)?;
    let ledger_file = ledger_path(args.ledger.as_deref());
    let mut rendered = Vec::new();
    for s in selected {
        render::check_deployed(&s.server, &s.prefix)?;
        rendered.push(render::render(&s.server, &s.prefix)?);
    }

    // 1b. The gate: the deployment is checked before anything is written or registered, so a
    // dangling `current`, a wrong commit, tampered content or a command that cannot run never
    // reaches the client (where `claude mcp list` would show a server that cannot start).
    let gate = gate_reports(args, selected, &rendered, &expected);
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
        report.print(args.json);
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
        (locks, recovered) = lock_and_recover(&clients, registered_path, &args.lock, &ledger_file)?;
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
        print_plan(
            selected,
            &rendered,
            &plans,
            &gate,
            registered_path,
            args.json,
        );
        return Ok(Exit::from_checks(gate_ok));
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
            let mut tx = Transaction::begin(p.client, p.changes.clone(), &ledger_file)?;
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
    transaction::finish_all(txs, outcome)?;
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
    ledger_after_commit(&ledger_file, &records);
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
        for (((s, r), action), shadowed) in selected
            .iter()
            .zip(&rendered)
            .zip(&p.actions)
            .zip(&p.shadows)
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
            };
            let mut report = checks::verify(&target, &registrations);
            report.registration = Some(action.word().to_string());
            if !shadowed.is_empty() {
                report.checks.push(shadow_check(
                    &s.registered_name,
                    shadowed,
                    args.strict.strict,
                ));
            }
            reports.push(report);
        }
    }
    let report = Report::new(reports, Some(registered_path.display().to_string()));
    report.print(args.json);
    Ok(Exit::from_checks(report.ok))
}

/// Step 7: observe every name side by side (they only read). Each must be registered.
fn observe_all(client: &dyn Client, names: &[&str]) -> Result<Vec<(String, Entry)>, ClientError> {
    let results: Vec<Result<Option<Entry>, ClientError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|n| scope.spawn(move || client.observe(n)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("an observe thread does not panic"))
            .collect()
    });
    names
        .iter()
        .zip(results)
        .map(|(n, r)| match r? {
            Some(e) => Ok((n.to_string(), e)),
            None => Err(ClientError::Disagrees {
                name: n.to_string(),
                reason: format!(
                    "`{}` does not find it after it was registered",
                    client.show(Op::Observe, n)
                ),
            }),
        })
        .collect()
}

/// What a gate failure says, after the failed checks.
const GATE_LINE: &str = "no registration was changed: install checks the deployment before it \
                         registers anything, and the deployment failed the checks above";
const NOT_CHANGED: &str = "not changed (the deployment failed its checks)";

/// Step 1b for every selected server: [`checks::deployment_checks`].
fn gate_reports(
    args: &InstallArgs,
    selected: &[Selected],
    rendered: &[Rendered],
    expected: &std::collections::BTreeMap<String, crate::deployment::layout::Sha>,
) -> Vec<ServerReport> {
    let clients = args.client.clients.join(",");
    selected
        .iter()
        .zip(rendered)
        .map(|(s, r)| {
            let target = Target {
                server: &s.server,
                client: &clients,
                prefix: s.prefix.clone(),
                registered_name: s.registered_name.clone(),
                declared: r.entry.clone(),
                expected: expected.get(&s.server.name).cloned(),
                require_content: args.content,
                handshake: None,
                live: None,
            };
            ServerReport {
                name: s.server.name.clone(),
                client: clients.clone(),
                registered_name: s.registered_name.clone(),
                prefix: s.prefix.display().to_string(),
                registration: None,
                witnesses: None,
                checks: checks::deployment_checks(&target),
            }
        })
        .collect()
}

fn print_plan(
    selected: &[Selected],
    rendered: &[Rendered],
    plans: &[ClientPlan],
    gate: &[ServerReport],
    registered_path: &Path,
    json: bool,
) {
    let gate_ok = gate.iter().all(ServerReport::ok);
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
            steps.push(serde_json::json!({
                "name": s.server.name,
                "client": p.client.name(),
                "registered_name": name,
                "registration": action.word(),
                "entry": r.entry.describe(),
                "writes": [file.display().to_string()],
                "client_calls": calls,
                "gate": g.checks,
            }));
        }
    }
    if json {
        let doc = serde_json::json!({
            "dry_run": true,
            "ok": gate_ok,
            "servers": steps,
            "registered": registered_path.display().to_string(),
        });
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap()
        ));
        return;
    }
    let mut text = String::from("dry run: nothing is changed\n");
    for step in &steps {
        let field = |k: &str| step[k].as_str().unwrap_or_default().to_string();
        text.push_str(&format!(
            "{}: would be {} in {} ({})\n",
            field("registered_name"),
            field("registration"),
            field("client"),
            field("entry")
        ));
        for c in step["gate"].as_array().into_iter().flatten() {
            let mark = if c["ok"] == true { "ok  " } else { "FAIL" };
            text.push_str(&format!(
                "  gate {mark} {:<17} {}\n",
                c["check"].as_str().unwrap_or_default(),
                c["detail"].as_str().unwrap_or_default()
            ));
        }
        for (key, verb) in [("writes", "write"), ("client_calls", "run  ")] {
            for item in step[key].as_array().into_iter().flatten() {
                text.push_str(&format!("  {verb} {}\n", item.as_str().unwrap_or_default()));
            }
        }
    }
    text.push_str(&format!("write {}\n", registered_path.display()));
    if !gate_ok {
        text.push_str(
            "the deployment failed the checks marked FAIL: install would register nothing\n",
        );
    }
    emit(&text);
}

/// Uninstall's plan for one client: it, its current user-scope entries, and the removals.
type RemovalPlan<'a> = (&'a dyn Client, Map<String, Value>, Vec<Change>);

/// `uninstall --dry-run`: each name, whether it would be removed, and the call that would do it.
fn print_removals(
    selected: &[Selected],
    plans: &[RemovalPlan],
    registered_path: &Path,
    json: bool,
) {
    let mut steps = Vec::new();
    for (client, _, changes) in plans {
        for s in selected {
            let name = &s.registered_name;
            let present = changes.iter().any(|c| &c.name == name);
            let calls: Vec<String> = if present {
                vec![client.show(Op::Remove, name)]
            } else {
                Vec::new()
            };
            steps.push(serde_json::json!({
                "name": s.server.name,
                "client": client.name(),
                "registered_name": name,
                "registration": if present { "removed" } else { "absent" },
                "client_calls": calls,
            }));
        }
    }
    if json {
        let doc = serde_json::json!({
            "dry_run": true,
            "servers": steps,
            "registered": registered_path.display().to_string(),
        });
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap()
        ));
        return;
    }
    let mut text = String::from("dry run: nothing is changed\n");
    for step in &steps {
        let field = |k: &str| step[k].as_str().unwrap_or_default().to_string();
        if field("registration") == "removed" {
            text.push_str(&format!(
                "{}: would be removed from {}\n",
                field("registered_name"),
                field("client")
            ));
        } else {
            text.push_str(&format!(
                "{}: not registered in {}, nothing to remove\n",
                field("registered_name"),
                field("client")
            ));
        }
        for item in step["client_calls"].as_array().into_iter().flatten() {
            text.push_str(&format!("  run   {}\n", item.as_str().unwrap_or_default()));
        }
    }
    text.push_str(&format!(
        "remove those names from {} (when recorded)\n",
        registered_path.display()
    ));
    emit(&text);
}

/// A same-name entry in another scope wins over the user-scope one in that project: the agent
/// there would run something else. A warning, or a failed check with `--strict`.
pub(crate) fn shadow_check(name: &str, shadows: &[String], strict: bool) -> Check {
    let detail = format!(
        "{}{name} is also registered in the {}, which takes precedence there",
        if strict { "" } else { "warning: " },
        shadows.join("; ")
    );
    if !strict {
        eprintln!("{detail}");
    }
    Check {
        check: "shadowing",
        ok: !strict,
        detail,
    }
}

/// An existing entry that cannot be parsed is opaque: mcp-deploy cannot tell what it holds (a
/// token may sit in any field), so it neither copies it into its journal and ledger nor
/// replaces or removes it — a registration is never lost and a secret never stored. It is
/// named by the sha256 of its canonical JSON, so the user can tell which entry is meant.
fn refuse_opaque(
    client: &dyn Client,
    current: &serde_json::Map<String, serde_json::Value>,
    selected: &[Selected],
) -> Result<(), Error> {
    for s in selected {
        let Some(raw) = current.get(&s.registered_name) else {
            continue;
        };
        if let Err(why) = Entry::from_value(raw) {
            return Err(Error::usage(
                format!(
                    "{} is registered with {} as an entry mcp-deploy cannot parse ({why}): {}; \
                     it will not replace or remove an entry it cannot read, nor record its values",
                    s.registered_name,
                    client.name(),
                    crate::content::digest::opaque(raw)
                ),
                format!(
                    "look at it, then fix or remove it yourself (`{}`), and run again",
                    client.show(Op::Remove, &s.registered_name)
                ),
            ));
        }
    }
    Ok(())
}

/// An existing entry we would replace or remove must not hold a literal secret: its previous
/// state goes into the journal, and secrets go nowhere mcp-deploy writes.
fn refuse_literal_secrets(
    client: &dyn Client,
    current: &serde_json::Map<String, serde_json::Value>,
    selected: &[Selected],
) -> Result<(), Error> {
    for s in selected {
        let Some(entry) = current
            .get(&s.registered_name)
            .and_then(|raw| Entry::from_value(raw).ok())
        else {
            continue;
        };
        let secrets = crate::identity::secrets::literal_secrets(&entry);
        if !secrets.is_empty() {
            return Err(Error::usage(
                format!(
                    "{} is registered with {} holding a literal secret in {}; mcp-deploy will not \
                     copy it into its journal to replace or remove it",
                    s.registered_name,
                    client.name(),
                    secrets.join(", ")
                ),
                format!(
                    "move the secret into the environment and re-register it with a ${{VAR}} \
                     reference, or remove it yourself (`{}`), then run again",
                    client.show(Op::Remove, &s.registered_name)
                ),
            ));
        }
    }
    Ok(())
}

fn ledger_path(explicit: Option<&Path>) -> std::path::PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(ledger::default_path)
}

fn change_record(
    client: &dyn Client,
    s: &Selected,
    action: &str,
    old: Option<serde_json::Value>,
    new: Option<serde_json::Value>,
) -> Record {
    let mut r = Record::now(client.name(), &s.server.name, &s.registered_name, action);
    r.old = old;
    r.new = new;
    r.release = crate::deployment::layout::release_dir(&s.prefix, s.server.layout)
        .ok()
        .map(|d| d.display().to_string());
    // The same evidence the commit check uses (a Python prefix's direct_url.json, found by
    // the declared command, included).
    let command = render::render(&s.server, &s.prefix)
        .ok()
        .and_then(|r| match r.entry.transport {
            crate::registration::entry::Transport::Stdio { command, .. } => Some(command),
            crate::registration::entry::Transport::Remote { .. } => None,
        });
    r.commit = crate::deployment::layout::commit_evidence(
        &s.prefix,
        s.server.layout,
        command.as_deref().map(Path::new),
    )
    .ok()
    .and_then(|e| match e {
        crate::deployment::layout::Evidence::Commit(sha, _) => Some(sha.to_string()),
        crate::deployment::layout::Evidence::Nothing(_) => None,
    });
    r
}

/// `uninstall`: remove the names `install` with the same options registers, from every client
/// of `--client`, and their flat document entries, as one transaction. A name that is not
/// registered is not an error.
pub fn uninstall(args: &UninstallArgs) -> Result<Exit, Error> {
    let selection = Selection::load(&args.selection)?;
    let (selected, registered_path) = (&selection.servers, &selection.registered);
    let read_flat = || match Flat::read(registered_path) {
        Ok(f) => Ok(Some(f)),
        Err(RegisteredError::Missing { .. }) => Ok(None),
        Err(e) => Err(Error::from(e)),
    };
    ledger::check_appendable(&ledger_path(args.ledger.as_deref()))?;
    read_flat()?;
    let ledger_file = ledger_path(args.ledger.as_deref());
    let clients = open_clients(&args.client, 0)?;
    // A dry run only reads: no lock, no recovery.
    let (locks, recovered) = if args.dry_run {
        (Vec::new(), Recovered::new())
    } else {
        lock_and_recover(&clients, registered_path, &args.lock, &ledger_file)?
    };
    // Under the lock: the document as it is now, not as it was before we waited.
    let mut flat = read_flat()?;
    if let Some(f) = flat.as_mut() {
        if !args.dry_run && agree_recovered(f, &recovered) {
            f.write(registered_path)?;
        }
    }
    let mut plans = Vec::new();
    for c in &clients {
        let client = c.as_ref();
        let current = client.user_entries()?;
        refuse_opaque(client, &current, selected)?;
        refuse_literal_secrets(client, &current, selected)?;
        let changes: Vec<Change> = selected
            .iter()
            .filter_map(|s| {
                let previous = current.get(&s.registered_name)?.as_object()?.clone();
                Some(Change {
                    name: s.registered_name.clone(),
                    previous: Some(previous),
                    target: None,
                })
            })
            .collect();
        plans.push((client, current, changes));
    }
    if args.dry_run {
        print_removals(selected, &plans, registered_path, args.json);
        return Ok(Exit::Success);
    }

    let mut txs: Vec<Transaction> = Vec::new();
    let outcome = (|| -> Result<(), Error> {
        for (client, _, changes) in &plans {
            let mut tx = Transaction::begin(*client, changes.clone(), &ledger_file)?;
            let applied = tx.apply();
            txs.push(tx);
            applied?;
        }
        if let Some(mut flat) = flat {
            let mut changed = false;
            for (client, _, _) in &plans {
                for s in selected {
                    changed |= flat.remove(client.name(), &s.registered_name);
                }
            }
            if changed {
                flat.write(registered_path)?;
            }
        }
        Ok(())
    })();
    transaction::finish_all(txs, outcome)?;
    let mut records = Vec::new();
    let mut reports = Vec::new();
    for (client, current, changes) in &plans {
        for s in selected {
            let removed = changes.iter().any(|c| c.name == s.registered_name);
            if removed {
                let old = current.get(&s.registered_name).map(ledger::secret_free);
                records.push(change_record(*client, s, "removed", old, None));
            }
            reports.push(ServerReport {
                name: s.server.name.clone(),
                client: client.name().to_string(),
                registered_name: s.registered_name.clone(),
                prefix: s.prefix.display().to_string(),
                registration: Some(if removed { "removed" } else { "absent" }.into()),
                witnesses: None,
                checks: Vec::new(),
            });
        }
    }
    ledger_after_commit(&ledger_file, &records);
    drop(locks);
    let report = Report::new(reports, Some(registered_path.display().to_string()));
    report.print(args.json);
    Ok(Exit::Success)
}
