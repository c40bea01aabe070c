//! The session's last steps for install, promote and rollback: the ledger records of what
//! changed, and the identity verification of each client's registration against what was
//! recorded and the client's config as it is now.

use std::collections::BTreeMap;

use crate::clients::ClientError;
use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::entry::Entry;
use crate::identity::checks::{self, Target};
use crate::identity::report::ServerReport;
use crate::registration::flat_document::FlatDocument;
use crate::registration::ledger::{self, Record};
use crate::registration::plan::{change_record, shadow_check, Action, ClientPlan};

/// What the verification checks, besides the plans (each name's candidate) and the flat
/// document.
pub(crate) struct Verify<'a> {
    /// The commit each server's release must be, by server name.
    pub(crate) expected: &'a BTreeMap<String, Sha>,
    pub(crate) require_content: bool,
    /// install: add the shadowing check of each name.
    pub(crate) shadows: bool,
}

/// The ledger records of the plans' changes, a client at a time in the `--client` order.
pub(crate) fn change_records(plans: &[ClientPlan]) -> Vec<Record> {
    let mut records = Vec::new();
    for p in plans {
        for n in &p.names {
            let (s, r, action) = (&n.candidate.selected, &n.candidate.rendered, n.action);
            if action != Action::Unchanged {
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
    records
}

/// Install's step 9: each server of each client verified against what was recorded and the
/// client's config as it is now; a report per name, in the `--client` order.
pub(crate) fn verify_plans(
    plans: &[ClientPlan],
    flat: &FlatDocument,
    v: &Verify,
) -> Result<Vec<ServerReport>, ClientError> {
    let mut reports = Vec::new();
    for p in plans {
        let layers = layers_of(p.client);
        let registrations = flat.servers(p.client.name());
        // The live witness: the client's config as it is now (shadows are install's own
        // warning below, a failure only with --strict).
        let live = checks::Live {
            path: p.client.config_path().to_path_buf(),
            entries: std::sync::Arc::new(p.client.user_entries()?),
            shadows: Vec::new(),
        };
        for n in &p.names {
            let (s, r, trust) = (
                &n.candidate.selected,
                &n.candidate.rendered,
                &n.candidate.trust,
            );
            let (action, shadowed) = (n.action, &n.shadowed);
            let target = Target {
                server: &s.server,
                client: p.client.name(),
                prefix: s.prefix.clone(),
                registered_name: s.registered_name.clone(),
                declared: r.entry.clone(),
                expected: v.expected.get(&s.server.name).cloned(),
                require_content: v.require_content,
                handshake: None,
                live: Some(live.clone()),
                layers: findings(layers.as_ref(), &s.registered_name, &r.entry),
                trust,
                release: Release::resolve(&s.prefix, s.server.layout),
            };
            let mut report = checks::verify(&target, &registrations);
            report.registration = Some(action.word().to_string());
            if v.shadows && !shadowed.is_empty() {
                report
                    .checks
                    .push(shadow_check(&s.registered_name, shadowed));
            }
            reports.push(report);
        }
    }
    Ok(reports)
}

/// The layers the opened client `client` applies on this host ([`crate::clients::layers`]),
/// read once for every name a run asks about, a doubt put to its binary; `None` for a client
/// not in the table.
pub(crate) fn layers_of(client: &dyn crate::clients::Client) -> Option<crate::clients::Layers> {
    crate::clients::ClientKind::named(client.name())
        .map(|kind| crate::clients::Layers::read_asking(kind, client.binary()))
}

/// The layers `layers` apply to `name`, for its declared entry.
pub(crate) fn findings(
    layers: Option<&crate::clients::Layers>,
    name: &str,
    declared: &Entry,
) -> Vec<crate::clients::layers::Finding> {
    layers.map(|l| l.of(name, declared)).unwrap_or_default()
}
