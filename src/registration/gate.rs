//! The gate: install's step 1b and promote's preflight. Every selected server's deployment
//! is checked ([`checks::deployment_checks`]) before anything is written or registered, so a
//! dangling `current`, a wrong commit, tampered content, an unsigned release or a command that
//! cannot run never reaches a client. One gate for install and promote alike, so that a check
//! added to it (a trust policy, say) reaches both.

use std::collections::BTreeMap;
use std::path::Path;

use crate::clients::ClientKind;
use crate::deployment::declaration::Server;
use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::deployment::render::Rendered;
use crate::deployment::selection::Selected;
use crate::identity::checks::{self, Target};
use crate::identity::report::ServerReport;
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
