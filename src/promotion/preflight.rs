//! Step 4 of the transition ([`super::transition`]): the preflight, made before anything
//! changes. Install's gate on the candidate release, as if `current` already pointed at it,
//! then the handshake gate: the candidate's server must answer as the agent will start it.

use std::collections::BTreeMap;

use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::identity::checks::{self, Target};
use crate::identity::report::ServerReport;
use crate::notice::Notice;
use crate::promotion::transition::Run;
use crate::promotion::Outcome;
use crate::registration::gate::{gate_reports, Gate};

/// Step 4: install's gate on the candidate release `to`, as if `current` already pointed at
/// it; then, only when that passed (a release whose content or signature failed is never
/// executed), the handshake gate: the candidate's server must answer before anything
/// switches. Says the handshake's result in `outcome`.
pub(super) fn preflight(run: &Run, to: &Sha, outcome: &mut Outcome) -> Vec<ServerReport> {
    let t = run.t;
    let candidate = run.prefix.release(&to.to_string());
    let expected: BTreeMap<String, Sha> = run
        .candidates
        .iter()
        .map(|c| (c.selected.server.name.clone(), to.clone()))
        .collect();
    let mut gate = gate_reports(
        &Gate {
            clients: t.clients,
            require_content: t.content,
            candidate: Some(&candidate),
        },
        &run.candidates,
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
    let timeout = t.handshake_timeout;
    // The gate's reports are the candidates', in their order.
    for (c, report) in run.candidates.iter().zip(gate.iter_mut()) {
        let (s, r, trust) = (&c.selected, &c.rendered, &c.trust);
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
            release: Release::candidate(&s.prefix, s.server.layout, &candidate),
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
