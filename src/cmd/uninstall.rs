//! `uninstall`: remove the names `install` with the same options registers, from every client
//! of `--client`, and their flat document entries, as one transaction.

use super::open_clients;
use crate::cli::UninstallArgs;
use crate::clients::{Client, Op};
use crate::deployment::selection::Selected;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::report::{Report, ServerReport};
use crate::registration::ledger::{self};
use crate::registration::plan::{
    change_record, refuse_literal_secrets, refuse_opaque, DryRun, PlannedStep,
};
use crate::registration::registered::{Flat, RegisteredError};
use crate::registration::session::{
    self, agree_recovered, ledger_after_commit, ledger_path, lock_and_recover, Recovered,
};
use crate::registration::transaction::{Change, Transaction};
use std::path::Path;

use serde_json::{Map, Value};

/// Uninstall's plan for one client: it, its current user-scope entries, and the removals.
type RemovalPlan<'a> = (&'a dyn Client, Map<String, Value>, Vec<Change>);

/// `uninstall`: remove the names `install` with the same options registers, from every client
/// of `--client`, and their flat document entries, as one transaction. A name that is not
/// registered is not an error.
pub(crate) fn uninstall(args: &UninstallArgs) -> Result<Exit, Error> {
    let selection = super::selection(&args.selection)?;
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
        lock_and_recover(
            &clients,
            registered_path,
            args.lock.lock_timeout,
            &ledger_file,
            &crate::output::notice,
        )?
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
        let plan = dry_run(selected, &plans, registered_path);
        crate::output::removal_plan(&plan, args.json, Exit::Success);
        return Ok(Exit::Success);
    }

    let mut txs: Vec<Transaction> = Vec::new();
    let outcome = (|| -> Result<(), Error> {
        for (client, _, changes) in &plans {
            let mut tx = Transaction::begin(
                *client,
                changes.clone(),
                &ledger_file,
                &crate::output::notice,
            )?;
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
    session::finish_all(txs, outcome)?;
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
    ledger_after_commit(&ledger_file, &records, &crate::output::notice);
    drop(locks);
    let report = Report::new(reports, Some(registered_path.display().to_string()));
    crate::output::print(&report, args.json, Exit::Success);
    Ok(Exit::Success)
}

/// `uninstall --dry-run`: each name, whether it would be removed, and the call that would do it.
fn dry_run(selected: &[Selected], plans: &[RemovalPlan], registered_path: &Path) -> DryRun {
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
            steps.push(PlannedStep {
                name: s.server.name.clone(),
                client: client.name(),
                registered_name: name.clone(),
                registration: if present { "removed" } else { "absent" },
                entry: None,
                writes: None,
                client_calls: calls,
                gate: None,
            });
        }
    }
    DryRun {
        dry_run: true,
        ok: true,
        servers: steps,
        registered: registered_path.display().to_string(),
    }
}
