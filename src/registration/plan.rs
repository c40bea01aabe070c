//! Steps 3–4 of install (see [`crate::registration::install`]): what a client holds now, what install
//! would do about each name (`unchanged`, `added`, `updated`), the entries it refuses to
//! touch, and the record of each change for the ledger.

use crate::clients::{Client, ClientError, Op, Reach, Shadow};
use crate::deployment::render;
use crate::deployment::selection::Selected;
use crate::entry::Entry;
use crate::identity::report::Check;
use crate::registration::gate::Candidate;
use crate::registration::ledger::Record;
use crate::registration::transaction::Change;
use crate::usage::UsageError;
use serde_json::{Map, Value};
use std::path::Path;

/// What step 4 decided for one name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Action {
    Unchanged,
    Add,
    Update,
}

impl Action {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Action::Unchanged => "unchanged",
            Action::Add => "added",
            Action::Update => "updated",
        }
    }
}

/// Steps 3–4 for one client: what it holds now, and what install would do about each name.
pub(crate) struct ClientPlan<'a> {
    pub(crate) client: &'a dyn Client,
    pub(crate) current: Map<String, Value>,
    /// One per candidate, in their order.
    pub(crate) names: Vec<NamePlan<'a>>,
    pub(crate) changes: Vec<Change>,
}

/// One candidate's name in a client's plan: what install does about it, and the same-name
/// entries in other scopes that would shadow it.
pub(crate) struct NamePlan<'a> {
    pub(crate) candidate: &'a Candidate,
    pub(crate) action: Action,
    pub(crate) shadowed: Vec<Shadow>,
}

/// Why a client's plan cannot be made: the client could not be read, or an entry it holds
/// must not be touched.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PlanError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Usage(#[from] UsageError),
}

pub(crate) fn plan_client<'a>(
    client: &'a dyn Client,
    candidates: &'a [Candidate],
) -> Result<ClientPlan<'a>, PlanError> {
    let current = client.user_entries()?;
    let selected = || candidates.iter().map(|c| &c.selected);
    refuse_opaque(client, &current, selected())?;
    refuse_literal_secrets(client, &current, selected())?;
    let names: Vec<&str> = selected().map(|s| s.registered_name.as_str()).collect();
    let mut by_name = client.shadows_of(&names)?;
    let mut planned = Vec::new();
    let mut changes = Vec::new();
    for c in candidates {
        let (s, r) = (&c.selected, &c.rendered);
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
        planned.push(NamePlan {
            candidate: c,
            action,
            shadowed: by_name.remove(&s.registered_name).unwrap_or_default(),
        });
    }
    Ok(ClientPlan {
        client,
        current,
        names: planned,
        changes,
    })
}

/// Step 7: observe every name side by side (they only read). Each must be registered.
pub(crate) fn observe_all(
    client: &dyn Client,
    names: &[&str],
) -> Result<Vec<(String, Entry)>, ClientError> {
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

/// The one verdict on the same-name entries of other scopes, for every command (status,
/// install, reconcile, verify-identity): each is a failed `shadowing` check, whatever the
/// flags. One that wins from this directory means the client started here runs something
/// else; one that wins only in another project, that the agent started there does. Its detail
/// says which, and what to do.
pub(crate) fn shadow_check(name: &str, shadows: &[Shadow]) -> Check {
    let (here, elsewhere): (Vec<&Shadow>, Vec<&Shadow>) =
        shadows.iter().partition(|s| s.reach == Reach::Here);
    let join = |v: &[&Shadow]| {
        v.iter()
            .map(|s| s.place.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut said = Vec::new();
    if !here.is_empty() {
        said.push(format!(
            "the {}, which the client prefers from this directory",
            join(&here)
        ));
    }
    if !elsewhere.is_empty() {
        said.push(format!(
            "the {}, which the client prefers there",
            join(&elsewhere)
        ));
    }
    Check {
        skipped: false,
        check: "shadowing",
        ok: false,
        detail: format!(
            "{name} is also registered in {}; remove the other entry (or rename one of them)",
            said.join(", and in ")
        ),
    }
}

/// An existing entry that cannot be parsed is opaque: mcp-deploy cannot tell what it holds (a
/// token may sit in any field), so it neither copies it into its journal and ledger nor
/// replaces or removes it — a registration is never lost and a secret never stored. It is
/// named by the sha256 of its canonical JSON, so the user can tell which entry is meant.
pub(crate) fn refuse_opaque<'s>(
    client: &dyn Client,
    current: &serde_json::Map<String, serde_json::Value>,
    selected: impl IntoIterator<Item = &'s Selected>,
) -> Result<(), UsageError> {
    for s in selected {
        let Some(raw) = current.get(&s.registered_name) else {
            continue;
        };
        if let Err(why) = Entry::from_value(raw) {
            return Err(UsageError::new(
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
pub(crate) fn refuse_literal_secrets<'s>(
    client: &dyn Client,
    current: &serde_json::Map<String, serde_json::Value>,
    selected: impl IntoIterator<Item = &'s Selected>,
) -> Result<(), UsageError> {
    for s in selected {
        let Some(entry) = current
            .get(&s.registered_name)
            .and_then(|raw| Entry::from_value(raw).ok())
        else {
            continue;
        };
        let secrets = crate::entry::secrets::literal_secrets(&entry);
        if !secrets.is_empty() {
            return Err(UsageError::new(
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

pub(crate) fn change_record(
    client: &dyn Client,
    s: &Selected,
    action: &str,
    old: Option<serde_json::Value>,
    new: Option<serde_json::Value>,
) -> Record {
    let mut r = Record::now(client.name(), &s.server.name, &s.registered_name, action);
    r.client_version = client.version().map(|v| v.to_string());
    r.old = old;
    r.new = new;
    let release = crate::deployment::release::Release::resolve(&s.prefix, s.server.layout);
    r.release = release.dir().ok().map(|d| d.display().to_string());
    // The same evidence the commit check uses (a Python prefix's direct_url.json, found by
    // the declared command, included).
    let command = render::render(&s.server, &s.prefix)
        .ok()
        .and_then(|r| match r.entry.transport {
            crate::entry::Transport::Stdio { command, .. } => Some(command),
            crate::entry::Transport::Remote { .. } => None,
        });
    r.commit = release
        .commit_evidence(command.as_deref().map(Path::new))
        .ok()
        .and_then(|e| match e {
            crate::deployment::layout::Evidence::Commit(sha, _) => Some(sha.to_string()),
            crate::deployment::layout::Evidence::Nothing(_) => None,
        });
    r
}

/// What a dry run would do (`install --dry-run`, `uninstall --dry-run`): one step per name
/// and client, and the flat document it would write. Printed by [`crate::output`].
#[derive(Debug, serde::Serialize)]
pub(crate) struct DryRun {
    pub(crate) dry_run: bool,
    /// install: whether the deployment passed its gate checks; uninstall: always.
    pub(crate) ok: bool,
    pub(crate) servers: Vec<PlannedStep>,
    #[serde(rename = "registered")]
    pub(crate) flat_document: String,
    /// Every file the real run would write, in order, and nothing it would leave as it is:
    /// the rendered documents that change, the flat document when a line of it changes, the
    /// ledger when a registration changes (appended).
    pub(crate) writes: Vec<String>,
    /// Whether the real run would write the flat document.
    #[serde(skip)]
    pub(crate) writes_flat_document: bool,
    /// The ledger, when the real run would append to it.
    #[serde(skip)]
    pub(crate) appends_ledger: Option<String>,
    /// The clients whose binary is missing: the plan is read from their config files, and
    /// the real run would need the binary (one sentence each).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) missing_binaries: Vec<String>,
}

/// One name in one client, in a [`DryRun`].
#[derive(Debug, serde::Serialize)]
pub(crate) struct PlannedStep {
    pub(crate) name: String,
    pub(crate) client: &'static str,
    pub(crate) registered_name: String,
    /// install: `added`, `updated`, `unchanged`; uninstall: `removed`, `absent`.
    pub(crate) registration: &'static str,
    /// install only: the entry it would register, secrets redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entry: Option<String>,
    /// install only: the rendered document when it would write it (one that already holds
    /// the same bytes is left alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) writes: Option<Vec<String>>,
    pub(crate) client_calls: Vec<String>,
    /// install only: the deployment's gate checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gate: Option<Vec<Check>>,
}
