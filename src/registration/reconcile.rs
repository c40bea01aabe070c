//! `reconcile`: `status`'s read-only checks first; install only what drifted.
//!
//! The reconcile algorithm (the command wires it, see `src/cmd/reconcile.rs`):
//! 1. The gate (install's step 1b, read-only): a deployment that fails it is refused as
//!    install refuses it, with nothing changed.
//! 2. [`read`]: each client's config file and the flat document, exactly as `status` reads
//!    them ([`crate::identity::drift::server_status`], the layers and the shadows), starting
//!    no client process. A client whose files cannot be read is not judged: its every server
//!    goes to install's path, saying why (never a pass without evidence).
//! 3. Each failed check is drift install heals (`rendered`, `registered`, `target` of an
//!    entry that is not the rendered one, `recorded`), or one it cannot (`deployed`,
//!    `content`, an entry it cannot parse, the deployment's own link, a layer, a shadow with
//!    `--strict`): the latter fail the run, as they fail status.
//! 4. Nothing drifted: done, no client started, nothing written. Else install, the same
//!    transaction, for the servers that drifted into the clients where they drifted: a name
//!    planned `unchanged` gets no mutating call.
//! 5. [`merge`]: one row per server and client, `ok` or `healed: <what drifted>`, the healed
//!    ones with install's checks made after the change.

use std::collections::BTreeSet;

use crate::clients::layers::Finding;
use crate::clients::{Client, ClientError};
use crate::deployment::render::RenderError;
use crate::deployment::selection::{Selected, Selection};
use crate::entry::Entry;
use crate::identity::drift;
use crate::identity::report::{Check, ServerReport};
use crate::notice::Notify;
use crate::registration::flat_document::FlatDocument;
use crate::registration::plan::shadow_check;
use crate::registration::verify::layers_of;

/// One server as one client has it, read without the client.
pub(crate) struct Pair {
    /// status's report of it.
    pub(crate) report: ServerReport,
    /// What drifted that install heals, one phrase each (empty: nothing to heal).
    pub(crate) drift: Vec<String>,
}

impl Pair {
    pub(crate) fn drifted(&self) -> bool {
        !self.drift.is_empty()
    }
}

/// Step 2–3 for every client (outer, in the `--client` order) and selected server.
pub(crate) fn read(
    selected: &[Selected],
    clients: &[Box<dyn Client>],
    flat: Option<&FlatDocument>,
    flat_document: &std::path::Path,
    strict: bool,
    notify: Notify,
) -> Result<Vec<Pair>, RenderError> {
    let mut pairs = Vec::new();
    for client in clients {
        let entries = match client.user_entries() {
            Ok(e) => e,
            Err(e) => {
                pairs.extend(unjudged(selected, client.name(), &e));
                continue;
            }
        };
        let recorded = flat.map(|f| f.servers(client.name()));
        for s in selected {
            let mut report =
                drift::server_status(s, client.name(), &entries, recorded.as_ref(), flat_document)?;
            let drift = healable(&report, entries.get(&s.registered_name));
            if let Ok(r) = crate::deployment::render::render(&s.server, &s.prefix) {
                let findings = layers_of(client.name(), &s.registered_name, &r.entry);
                if !findings.is_empty() {
                    report
                        .checks
                        .push(layers_check(&s.registered_name, &findings, strict));
                }
            }
            match client.shadows(&s.registered_name) {
                Ok(shadows) if shadows.is_empty() => {}
                Ok(shadows) => {
                    report
                        .checks
                        .push(shadow_check(&s.registered_name, &shadows, strict, notify))
                }
                Err(e) => report.checks.push(Check {
                    check: "shadowing",
                    ok: false,
                    detail: format!("the other scopes cannot be read: {e}"),
                }),
            }
            pairs.push(Pair { report, drift });
        }
    }
    Ok(pairs)
}

/// A client whose config file cannot be read: not judged here; each of its servers goes to
/// install's path, which reads it again and says what is wrong.
fn unjudged(selected: &[Selected], client: &str, why: &ClientError) -> Vec<Pair> {
    selected
        .iter()
        .map(|s| Pair {
            report: ServerReport {
                name: s.server.name.clone(),
                client: client.to_string(),
                registered_name: s.registered_name.clone(),
                prefix: s.prefix.display().to_string(),
                registration: None,
                witnesses: None,
                checks: vec![Check {
                    check: "registered",
                    ok: false,
                    detail: format!("not judged without the client ({why}): install's path"),
                }],
            },
            drift: vec![format!("{client}'s config not readable without it ({why})")],
        })
        .collect()
}

/// The failed checks of `report` that install heals, each as "check (what)": `entry` is the
/// registered one, raw. An entry install refuses to touch (unparseable), and a `target` that
/// fails while the entry is the rendered one (the deployment's own link), are not healable.
fn healable(report: &ServerReport, entry: Option<&serde_json::Value>) -> Vec<String> {
    let parseable = entry.is_none_or(|v| Entry::from_value(v).is_ok());
    let registered_ok = report
        .checks
        .iter()
        .any(|c| c.check == "registered" && c.ok);
    report
        .checks
        .iter()
        .filter(|c| !c.ok)
        .filter(|c| match c.check {
            "rendered" | "recorded" => true,
            "registered" => parseable,
            "target" => !registered_ok && parseable,
            _ => false,
        })
        .map(|c| format!("{} ({})", c.check, what_drifted(&c.detail)))
        .collect()
}

/// A drift's message without what install would do about it ("…; install would add it").
fn what_drifted(detail: &str) -> &str {
    detail
        .split_once("; install would")
        .map_or(detail, |(what, _)| what)
}

/// status's `layers` row: what the client's other layers do to the entry, failing when one
/// changes what runs (or, with `--strict`, could not be compared).
pub(crate) fn layers_check(name: &str, findings: &[Finding], strict: bool) -> Check {
    Check {
        check: "layers",
        ok: !findings.iter().any(|f| f.fails(strict)),
        detail: findings
            .iter()
            .map(|f| f.describe(name))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// What install is given: the drifted servers (in the selection's order) and the names of the
/// clients where something drifted.
pub(crate) fn drifted(selection: &Selection, pairs: &[Pair]) -> (Selection, BTreeSet<String>) {
    let servers: BTreeSet<&str> = pairs
        .iter()
        .filter(|p| p.drifted())
        .map(|p| p.report.name.as_str())
        .collect();
    let clients = pairs
        .iter()
        .filter(|p| p.drifted())
        .map(|p| p.report.client.clone())
        .collect();
    let narrowed = Selection {
        servers: selection
            .servers
            .iter()
            .filter(|s| servers.contains(s.server.name.as_str()))
            .cloned()
            .collect(),
        flat_document: selection.flat_document.clone(),
        named: selection.named,
        skipped: selection.skipped.clone(),
        declared: selection.declared.clone(),
    };
    (narrowed, clients)
}

/// Step 5: every pair's row. `installed`: install's report of the pairs it ran for (`None`
/// for a dry run, whose rows say what would be healed, with status's checks).
pub(crate) fn merge(pairs: Vec<Pair>, installed: Option<&[ServerReport]>) -> Vec<ServerReport> {
    pairs
        .into_iter()
        .map(|p| {
            let after = installed.and_then(|reports| {
                reports
                    .iter()
                    .find(|r| r.name == p.report.name && r.client == p.report.client)
            });
            let drift = p.drift.join("; ");
            match (after, p.drifted()) {
                (Some(after), true) => ServerReport {
                    registration: Some(format!("healed: {drift}")),
                    ..after.clone()
                },
                (None, true) => ServerReport {
                    registration: Some(format!("would heal: {drift}")),
                    ..p.report
                },
                // Not drifted: status's reading is its evidence (install, when it ran for it
                // beside a drifted one, changed nothing of it).
                (_, false) if p.report.ok() => ServerReport {
                    registration: Some("ok".into()),
                    ..p.report
                },
                (_, false) => ServerReport {
                    registration: Some(
                        "not healed: install cannot change what failed below".into(),
                    ),
                    ..p.report
                },
            }
        })
        .collect()
}
