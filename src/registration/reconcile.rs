//! `reconcile`: `status`'s read-only checks first; install only what drifted.
//!
//! The reconcile algorithm ([`run`]; the command only wires its arguments):
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

use std::collections::{BTreeMap, BTreeSet};

use crate::clients::layers::Finding;
use crate::clients::{Client, ClientError, ClientKind, ClientOptions};
use crate::deployment::declaration::Launch;
use crate::deployment::layout::Sha;
use crate::deployment::render::{self, RenderError};
use crate::deployment::selection::{Selected, Selection};
use crate::entry::{Entry, Transport};
use crate::identity::drift;
use crate::identity::report::{Check, Report, ServerReport};
use crate::notice::Notify;
use crate::registration::flat_document::FlatDocument;
use crate::registration::install::{self, InstallError, InstallOptions, Installed};
use crate::registration::plan::shadow_check;
use crate::registration::session::{open_named, ChangeOptions};
use crate::registration::verify::{findings, layers_of};

/// What a reconcile ended with.
pub(crate) enum Reconciled {
    /// The gate refused the deployment (step 1): nothing changed; install's refusal.
    Refused(Report),
    /// One row per server and client (step 5).
    Done(Report),
}

/// `mcp-deploy reconcile`, steps 1–5 above: `opts` are install's (user scope), `options` how
/// a client install heals is run (its reading opens them for their files only).
pub(crate) fn run(
    opts: &InstallOptions,
    options: &ClientOptions,
    notify: Notify,
) -> Result<Reconciled, InstallError> {
    // 1. The gate, as install's: read-only, no client.
    install::check(opts)?;
    crate::deployment::layout::warn_interrupted(&opts.change.selection.servers, notify);
    let mut gated = install::gate(opts)?;
    if !gated.ok {
        return Ok(Reconciled::Refused(install::refused(gated.gate)));
    }
    // 2–3. status's reading: the clients' files and the flat document, no client process,
    // while the handshakes run.
    let flat_document = &opts.change.selection.flat_document;
    let flat = crate::registration::flat_document::read_if_exists(flat_document)?;
    let readers = open_named(opts.clients, &ClientOptions::files_only())?;
    let pairs = read(
        &opts.change.selection.servers,
        &readers,
        flat.as_ref(),
        flat_document,
    )?;
    if !gated.settle(opts.change.dry_run, &opts.change.ledger) {
        return Ok(Reconciled::Refused(install::refused(gated.gate)));
    }
    let finish = |servers| {
        Ok(Reconciled::Done(Report::new(
            servers,
            Some(flat_document.display().to_string()),
        )))
    };
    // 4. Nothing drifted, or a dry run: no client started, nothing written.
    if opts.change.dry_run || !pairs.iter().any(Pair::drifted) {
        return finish(merge(pairs, None));
    }
    let drifted = drifted(opts.change.selection, opts.clients, &opts.expected, &pairs);
    let narrowed = InstallOptions {
        change: ChangeOptions {
            selection: &drifted.selection,
            ..opts.change.clone()
        },
        expected: drifted.expected,
        trust: opts.trust,
        clients: &drifted.clients,
        content: opts.content,
        strict: opts.strict,
        // A reconcile (a timer's too) never accepts a changed surface.
        tools: opts
            .tools
            .map(|t| crate::registration::gate::ToolsGate { accept: false, ..t }),
    };
    let gated = install::gate(&narrowed)?;
    let clients = open_named(&drifted.clients, options)?;
    match install::install(&narrowed, gated, &clients, notify)? {
        Installed::Done(report) => finish(merge(pairs, Some(&report.servers))),
        // Not reached: a dry run returned above, before any client was opened.
        Installed::DryRun(_) | Installed::Refused(_) => finish(merge(pairs, None)),
    }
}

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
) -> Result<Vec<Pair>, RenderError> {
    let mut pairs = Vec::new();
    let names: Vec<&str> = selected
        .iter()
        .map(|s| s.registered_name.as_str())
        .collect();
    for client in clients {
        let layers = layers_of(client.as_ref());
        let shadows_of = client.shadows_of(&names);
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
            let drift = healable(&report, entries.get(&s.registered_name), s.server.launch);
            if let Ok(r) = crate::deployment::render::render(&s.server, &s.prefix) {
                let findings = findings(layers.as_ref(), &s.registered_name, &r.entry);
                if !findings.is_empty() {
                    report
                        .checks
                        .push(layers_check(&s.registered_name, &findings));
                }
            }
            let shadows = shadows_of
                .as_ref()
                .map(|by_name| by_name.get(&s.registered_name).cloned().unwrap_or_default());
            match shadows {
                Ok(shadows) if shadows.is_empty() => {}
                Ok(shadows) => report
                    .checks
                    .push(shadow_check(&s.registered_name, &shadows)),
                Err(e) => report.checks.push(Check {
                    skipped: false,
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
                deployed: Default::default(),
                checks: vec![Check {
                    skipped: false,
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
/// registered one, raw; `launch` the one this run renders. An entry install refuses to touch
/// (unparseable), and a `target` that fails while the entry is the rendered one (the
/// deployment's own link), are not healable; nothing of a server is when its entry starts it
/// the other way than `launch` (an install chose `--launch`, and any install a reconcile runs
/// would register this run's launch over it: a reconcile without the same flag, a timer's,
/// must not undo a checked launch silently).
fn healable(
    report: &ServerReport,
    entry: Option<&serde_json::Value>,
    launch: Launch,
) -> Vec<String> {
    let parsed = entry.map(Entry::from_value);
    let other_launch = matches!(
        &parsed,
        Some(Ok(Entry { transport: Transport::Stdio { args, .. }, .. })) if render::launched_as(args) != launch
    );
    if other_launch {
        return Vec::new();
    }
    let parseable = !matches!(parsed, Some(Err(_)));
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
/// changes what runs, or leaves it unknown.
pub(crate) fn layers_check(name: &str, findings: &[Finding]) -> Check {
    Check {
        skipped: false,
        check: "layers",
        ok: !findings.iter().any(Finding::fails),
        detail: findings
            .iter()
            .map(|f| f.describe(name))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// What install is given when something drifted.
pub(crate) struct Drifted {
    /// The servers that drifted anywhere, in the selection's order.
    pub(crate) selection: Selection,
    /// The clients where something drifted, in the `--client` order.
    pub(crate) clients: Vec<ClientKind>,
    /// `--expect-commit` of those servers.
    pub(crate) expected: BTreeMap<String, Sha>,
}

/// Step 4's install: `selection`, `clients` and `expected` narrowed to what drifted.
pub(crate) fn drifted(
    selection: &Selection,
    clients: &[ClientKind],
    expected: &BTreeMap<String, Sha>,
    pairs: &[Pair],
) -> Drifted {
    let drifted = || pairs.iter().filter(|p| p.drifted()).map(|p| &p.report);
    let servers: BTreeSet<&str> = drifted().map(|r| r.name.as_str()).collect();
    let names: BTreeSet<&str> = drifted().map(|r| r.client.as_str()).collect();
    Drifted {
        selection: Selection {
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
        },
        clients: clients
            .iter()
            .copied()
            .filter(|k| names.contains(k.name()))
            .collect(),
        expected: expected
            .iter()
            .filter(|(name, _)| servers.contains(name.as_str()))
            .map(|(n, sha)| (n.clone(), sha.clone()))
            .collect(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(checks: &[(&'static str, bool, &str)]) -> ServerReport {
        ServerReport {
            name: "codetools".into(),
            client: "claude".into(),
            registered_name: "codetools-test".into(),
            prefix: "/opt/codetools".into(),
            registration: None,
            witnesses: None,
            deployed: Default::default(),
            checks: checks
                .iter()
                .map(|(check, ok, detail)| Check {
                    skipped: false,
                    check,
                    ok: *ok,
                    detail: detail.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_missing_entry_and_a_stale_record_are_healable_without_what_install_would_do() {
        let r = report(&[
            ("deployed", true, "release x"),
            (
                "registered",
                false,
                "codetools-test is not registered; install would add it",
            ),
            (
                "recorded",
                false,
                "F does not record it; install would record it",
            ),
        ]);
        assert_eq!(
            healable(&r, None, Launch::Direct),
            [
                "registered (codetools-test is not registered)",
                "recorded (F does not record it)"
            ]
        );
    }

    #[test]
    fn what_install_cannot_heal_is_no_drift_to_heal() {
        // A broken deployment, changed content, a layer: install would change nothing.
        let r = report(&[
            ("deployed", false, "no release"),
            ("content", false, "1 file differs"),
            ("layers", false, "an env override"),
        ]);
        assert!(healable(&r, None, Launch::Direct).is_empty());
        // An entry install refuses to touch (it cannot be parsed).
        let r = report(&[("registered", false, "cannot be parsed")]);
        assert!(healable(&r, Some(&json!({"command": 7})), Launch::Direct).is_empty());
        // The registered entry is the rendered one and its target is wrong: the deployment's
        // own link, which re-registering does not change.
        let r = report(&[
            (
                "registered",
                true,
                "codetools-test: stdio /opt/codetools/bin/codetools",
            ),
            ("target", false, "the deployment's link leads elsewhere"),
        ]);
        let entry = json!({"command": "/opt/codetools/bin/codetools"});
        assert!(healable(&r, Some(&entry), Launch::Direct).is_empty());
    }

    #[test]
    fn a_target_of_an_entry_that_is_not_the_rendered_one_is_healed_with_it() {
        let r = report(&[
            (
                "registered",
                false,
                "registered as A but renders as B; install would update it",
            ),
            (
                "target",
                false,
                "a release that is gone; install would re-register it",
            ),
        ]);
        let entry = json!({"command": "/opt/codetools/releases/old/bin/codetools"});
        assert_eq!(healable(&r, Some(&entry), Launch::Direct).len(), 2);
    }

    /// A checked launch registered by `install --launch checked`, and a reconcile without the
    /// flag (a timer's): the entry is the other launch, which a reconcile does not undo.
    #[test]
    fn an_entry_registered_for_the_other_launch_is_not_healed() {
        let r = report(&[
            (
                "registered",
                false,
                "registered as A but renders as B (it is registered to start through `mcp-deploy exec`)",
            ),
            ("rendered", false, "F no longer matches the template"),
        ]);
        let checked = json!({"command": "/usr/bin/mcp-deploy",
            "args": ["exec", "--prefix", "/opt/codetools", "--server", "codetools", "--"]});
        assert!(healable(&r, Some(&checked), Launch::Direct).is_empty());
        assert_eq!(healable(&r, Some(&checked), Launch::Checked).len(), 2);
        let direct = json!({"command": "/opt/codetools/bin/codetools"});
        assert!(healable(&r, Some(&direct), Launch::Checked).is_empty());
        assert_eq!(healable(&r, Some(&direct), Launch::Direct).len(), 2);
    }

    #[test]
    fn a_row_that_failed_what_install_cannot_heal_is_not_called_ok() {
        let pair = Pair {
            report: report(&[("deployed", false, "no release")]),
            drift: Vec::new(),
        };
        let rows = merge(vec![pair], None);
        assert!(rows[0]
            .registration
            .as_deref()
            .is_some_and(|r| r.starts_with("not healed")));
    }
}
