//! Step 4 of the transition ([`super::transition`]): the preflight, made before anything
//! changes. Install's gate on the candidate release, as if `current` already pointed at it,
//! then the handshake gate: the candidate's server must answer as the agent will start it.

use std::collections::BTreeMap;

use crate::clients::Client;
use crate::deployment::declaration::Launch;
use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::deployment::render;
use crate::entry::{Entry, Transport};
use crate::identity::checks::{self, Target};
use crate::identity::report::{Check, ServerReport};
use crate::identity::surface::{self, Seen, Surface};
use crate::notice::Notice;
use crate::promotion::transition::Run;
use crate::promotion::Outcome;
use crate::registration::gate::{gate_reports, Candidate, Gate};

/// Step 4: install's gate on the candidate release `to`, as if `current` already pointed at
/// it; then, only when that passed (a release whose content or signature failed is never
/// executed), the handshake gate: the candidate's server must answer before anything
/// switches. Says the handshake's result in `outcome`.
pub(super) fn preflight(
    run: &Run,
    to: &Sha,
    outcome: &mut Outcome,
) -> (Vec<ServerReport>, Vec<Option<Surface>>) {
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
    // A launch chosen by an earlier install (`--launch`) is kept unless this run names one.
    if t.declaration.launch.is_none() {
        for (c, report) in run.candidates.iter().zip(gate.iter_mut()) {
            if let Some(check) = launch_changed(run.clients, c, run.action) {
                report.checks.push(check);
            }
        }
    }
    let mut surfaces = vec![None; run.candidates.len()];
    if !gate.iter().all(ServerReport::ok) {
        return (gate, surfaces);
    }
    if t.no_handshake {
        outcome.handshake = Some("skipped (--no-handshake)".into());
        return (gate, surfaces);
    }
    (run.notify)(Notice::Progress(format!("handshaking with releases/{to}…")));
    let timeout = t.handshake_timeout;
    // The gate's reports are the candidates', in their order.
    for ((c, report), kept) in run
        .candidates
        .iter()
        .zip(gate.iter_mut())
        .zip(surfaces.iter_mut())
    {
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
        let shaken = checks::candidate_handshake(&target, timeout);
        let surface = shaken.as_ref().ok().and_then(|(_, s)| s.clone());
        let c = Check::from_result("handshake", shaken.map(|(said, _)| said));
        outcome.handshake = Some(c.detail.clone());
        report.checks.push(c);
        // The candidate's surface against its release's record: the same release answering
        // otherwise is refused here, before the switch; a new one is recorded at commit.
        if let Some(now) = surface {
            let commit = to.to_string();
            let row = match surface::seen(&s.prefix, &commit, &now) {
                Err(e) => Err(e.to_string()),
                Ok(Seen::New) => Ok(format!(
                    "{}: the first seen of release {}, recorded when the switch commits",
                    now.describe(),
                    &commit[..commit.len().min(12)]
                )),
                Ok(seen) => surface::verdict(&seen, &now, &commit),
            };
            report.checks.push(Check::from_result("tools", row));
            *kept = Some(now);
        }
    }
    (gate, surfaces)
}

/// The failing `launch` check of a candidate whose registered entry, in any of `clients`,
/// starts the server the other way than the candidate renders (an install chose `--launch
/// checked`, and a promote without the flag would register a direct launch over it, or the
/// reverse): a switch of launch is made on purpose, never by forgetting a flag. A client
/// whose entries cannot be read has nothing to say here (the registration step reads it).
fn launch_changed(clients: &[Box<dyn Client>], c: &Candidate, action: &str) -> Option<Check> {
    let name = &c.selected.registered_name;
    let wanted = c.selected.server.launch;
    let found: Vec<String> = clients
        .iter()
        .filter_map(|client| {
            let entries = client.user_entries().ok()?;
            let entry = Entry::from_value(entries.get(name)?).ok()?;
            match entry.transport {
                Transport::Stdio { args, .. } if render::launched_as(&args) != wanted => {
                    Some(client.name().to_string())
                }
                _ => None,
            }
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let (registered, flag) = match wanted {
        Launch::Direct => ("through `mcp-deploy exec` (a checked launch)", "checked"),
        Launch::Checked => ("directly", "direct"),
    };
    Some(Check::from_result(
        "launch",
        Err::<String, _>(format!(
            "{} starts {name} {registered}, which this {} would change: give --launch {flag} \
             to keep it, or the other --launch to change it on purpose",
            found.join(", "),
            action
        )),
    ))
}
