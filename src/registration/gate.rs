//! The gate: install's step 1b and promote's preflight. Every selected server's deployment
//! is checked ([`checks::deployment_checks`]) before anything is written or registered, so a
//! dangling `current`, a wrong commit, tampered content, an unsigned release or a command that
//! cannot run never reaches a client. One gate for install and promote alike, so that a check
//! added to it (a trust policy, say) reaches both.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::clients::ClientKind;
use crate::deployment::declaration::Server;
use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::deployment::render::{self, Rendered};
use crate::deployment::selection::Selected;
use crate::entry::Transport;
use crate::identity::checks::{self, Target};
use crate::identity::handshake;
use crate::identity::report::{Check, ServerReport};
use crate::identity::surface::{self, Seen};
use crate::registration::ledger;
use crate::trust::{Trust, TrustFlags, TrustLoadError};

/// What `server`'s release must be proven by ([`Trust::load`]): the command line's trust flags
/// (for every selected server) and the server's own `trusted_signers`. Both given means both
/// must pass — the stricter reading. A policy or root that cannot be read or parsed is exit 2,
/// before anything is checked or changed.
pub(crate) fn trust_policies(flags: TrustFlags, server: &Server) -> Result<Trust, TrustLoadError> {
    Trust::load(
        flags,
        TrustFlags {
            signers: server.trusted_signers.as_deref(),
            builder: server.trusted_builder.as_deref(),
            root: server.trusted_root.as_deref(),
        },
    )
}

/// One selected server as a run registers it: where it is deployed and under which name, its
/// rendered entry, and the trust policies its release must satisfy ([`trust_policies`]). One
/// record per server, so that no step pairs lists by position.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) selected: Selected,
    pub(crate) rendered: Rendered,
    pub(crate) trust: Trust,
}

/// What the gate checks besides the deployment itself.
pub(crate) struct Gate<'a> {
    /// The clients of `--client`, named in the report.
    pub(crate) clients: &'a [ClientKind],
    /// `--content`: a release must hold a manifest its files match.
    pub(crate) require_content: bool,
    /// promote's preflight: the release to check in place of what `current` resolves to.
    pub(crate) candidate: Option<&'a Path>,
}

/// The gate's report: a [`ServerReport`] of deployment checks per candidate, in their order
/// (the `signature` check runs where a candidate has a trust policy).
pub(crate) fn gate_reports(
    gate: &Gate,
    candidates: &[Candidate],
    expected: &BTreeMap<String, Sha>,
) -> Vec<ServerReport> {
    let clients = gate
        .clients
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(",");
    candidates
        .iter()
        .map(|c| {
            let (s, r, trust) = (&c.selected, &c.rendered, &c.trust);
            let target = Target {
                server: &s.server,
                client: &clients,
                prefix: s.prefix.clone(),
                registered_name: s.registered_name.clone(),
                declared: r.entry.clone(),
                expected: expected.get(&s.server.name).cloned(),
                require_content: gate.require_content,
                handshake: None,
                live: None,
                // The gate checks the deployment, not a registration.
                layers: Vec::new(),
                release: match gate.candidate {
                    Some(dir) => Release::candidate(&s.prefix, s.server.layout, dir),
                    None => Release::resolve(&s.prefix, s.server.layout),
                },
                trust,
            };
            ServerReport {
                name: s.server.name.clone(),
                client: clients.clone(),
                registered_name: s.registered_name.clone(),
                prefix: s.prefix.display().to_string(),
                registration: None,
                witnesses: None,
                deployed: checks::deployed(&target),
                checks: checks::deployment_checks(&target),
            }
        })
        .collect()
}

/// install's and reconcile's `--handshake`: start each server before registering it, and
/// record its tool surface when first seen, or require the recorded one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolsGate {
    pub(crate) timeout: Duration,
    /// `--accept-tools` (install only): record a changed surface of the same release.
    pub(crate) accept: bool,
}

/// The handshake gate, run when the deployment gate passed (a release whose content or
/// signature failed is never executed): for each candidate, in `reports`' order, a `handshake`
/// row (its server started as the agent will start it, the declared command directly) and a
/// `tools` row — the surface recorded now when its release has none ("first seen"), the
/// recorded one required otherwise, a changed one recorded only with `accept`, which the
/// ledger `ledger` then says, with who and what changed. A dry run records nothing.
pub(crate) fn tools_gate(
    candidates: &[Candidate],
    reports: &mut [ServerReport],
    tools: ToolsGate,
    dry_run: bool,
    ledger_path: &Path,
) {
    for (c, report) in candidates.iter().zip(reports.iter_mut()) {
        let s = &c.selected;
        let direct = match render::render_direct(&s.server, &s.prefix) {
            Ok(r) => r.entry,
            Err(e) => {
                report.checks.push(Check::from_result("handshake", Err(e)));
                continue;
            }
        };
        if let Transport::Remote { kind, .. } = &direct.transport {
            report.checks.push(Check::skipped(
                "handshake",
                format!("not started: a {kind} server is not started by its client"),
            ));
            continue;
        }
        let info = match handshake::handshake(&direct, tools.timeout) {
            Ok(info) => info,
            Err(failure) => {
                report
                    .checks
                    .push(Check::from_result("handshake", Err(failure)));
                continue;
            }
        };
        report.checks.push(Check::from_result::<String>(
            "handshake",
            Ok(info.to_string()),
        ));
        let now = &info.surface;
        let commit = match Release::resolve(&s.prefix, s.server.layout).deployed_commit() {
            Ok((sha, _)) => sha.to_string(),
            Err(e) => {
                let why = format!("{}; its release's commit is unknown: {e}", now.describe());
                report.checks.push(Check::from_result("tools", Err(why)));
                continue;
            }
        };
        let short = &commit[..commit.len().min(12)];
        let by = ledger::Actor::me().user;
        let row = match surface::seen(&s.prefix, &commit, now) {
            Err(e) => Err(e.to_string()),
            Ok(Seen::New) => match dry_run {
                true => Ok(format!(
                    "{}: would be recorded as release {short}'s",
                    now.describe()
                )),
                false => surface::record(&s.prefix, &commit, now, "first seen", &by)
                    .map(|path| {
                        format!(
                            "{}: recorded as release {short}'s in {}",
                            now.describe(),
                            path.display()
                        )
                    })
                    .map_err(|e| e.to_string()),
            },
            Ok(seen @ Seen::Recorded(_)) => surface::verdict(&seen, now, &commit),
            Ok(Seen::Changed(was, changes)) if tools.accept => {
                let said = format!(
                    "{}: accepted over the surface recorded {} by {} ({}): {}",
                    now.describe(),
                    was.at,
                    was.by,
                    was.surface.describe(),
                    changes.join("; ")
                );
                match dry_run {
                    true => Ok(format!("{said} (a dry run: not recorded)")),
                    // The ledger first: an acceptance nobody can read of is not made.
                    false => {
                        let mut r = ledger::Record::now(
                            &report.client,
                            &s.server.name,
                            &s.registered_name,
                            "tools accepted",
                        );
                        r.old = Some(serde_json::json!({"tools": was.surface.digest}));
                        r.new = Some(serde_json::json!({"tools": now.digest, "changes": changes}));
                        r.commit = Some(commit.clone());
                        ledger::append(ledger_path, &[r])
                            .map_err(|e| format!("not accepted: the ledger cannot be written: {e}"))
                            .and_then(|()| {
                                surface::record(&s.prefix, &commit, now, "accepted", &by)
                                    .map_err(|e| e.to_string())
                            })
                            .map(|_| said)
                    }
                }
            }
            Ok(seen) => surface::verdict(&seen, now, &commit),
        };
        report.checks.push(Check::from_result("tools", row));
    }
}
