//! The `mcp-registration` check: the registered entry is, key by key, the declared one in
//! both witnesses (the flat document and, when readable, the client's live config), the two
//! agree, no other scope shadows it, no config layer changes what runs, and every registered
//! command stays inside the release ([`crate::identity::containment`]).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::{Map, Value};

use crate::deployment::declaration::Launch;
use crate::deployment::render;
use crate::entry::secrets::shown_url;
use crate::entry::{normalized, Entry, Transport};
use crate::identity::checks::{Target, DOCUMENT_ONLY};
use crate::identity::compare::compare;
use crate::identity::containment::{
    check_command_inside_via, check_stable_path_via, Against, ContainmentError,
};

/// The failed `mcp-registration` check: every problem found, each naming its witness and its
/// evidence (values redacted), and whether only the document was compared.
#[derive(Debug, thiserror::Error)]
#[error("{}{}", .problems.join("; "), if *.document_only { format!(" ({DOCUMENT_ONLY})") } else { String::new() })]
pub(crate) struct RegistrationMismatch {
    pub(crate) problems: Vec<String>,
    pub(crate) document_only: bool,
}

pub(crate) fn check_registration(
    target: &Target,
    registrations: &Map<String, Value>,
) -> Result<String, RegistrationMismatch> {
    compare_registration(target, registrations).map_err(|mut m| {
        m.problems.extend(other_launch(target, registrations));
        m
    })
}

/// When a registered entry starts the server the other way than this run expects (through
/// `mcp-deploy exec` where a direct launch is expected, or directly where a checked one is),
/// the step that makes the two agree: a run given the wrong `--launch` is told so rather than
/// only that the command differs.
fn other_launch(target: &Target, registrations: &Map<String, Value>) -> Option<String> {
    let name = &target.registered_name;
    let live = target.live.as_ref().and_then(|l| l.entries.get(name));
    let registered = registrations.get(name).into_iter().chain(live);
    let forms: Vec<Launch> = registered
        .filter_map(|raw| Entry::from_value(raw).ok())
        .filter_map(|e| match e.transport {
            Transport::Stdio { args, .. } => Some(render::launched_as(&args)),
            Transport::Remote { .. } => None,
        })
        .collect();
    let expected = target.server.launch;
    forms
        .into_iter()
        .find(|f| *f != expected)
        .map(|f| other_launch_step(f).to_string())
}

/// What to do about an entry registered to start its server as `found`, the launch this run
/// does not expect: status's `registered` row says it too.
pub(crate) fn other_launch_step(found: Launch) -> &'static str {
    match found {
        Launch::Checked => {
            "it is registered to start through `mcp-deploy exec` (a checked launch): check it \
             with --launch checked, or install it again with --launch direct"
        }
        Launch::Direct => {
            "it is registered to start directly, not through `mcp-deploy exec`: install it \
             with --launch checked (or the declaration's \"launch\": \"checked\"), or check it \
             with --launch direct"
        }
    }
}

fn compare_registration(
    target: &Target,
    registrations: &Map<String, Value>,
) -> Result<String, RegistrationMismatch> {
    let name = &target.registered_name;
    let declared = &target.declared;
    let mut problems: Vec<String> = Vec::new();
    let mut doc_problems: Vec<String> = Vec::new();
    let mut commands: Vec<String> = Vec::new();
    let document = match registrations.get(name) {
        None => {
            problems.push(format!(
                "no entry named {name:?} is registered in the document"
            ));
            None
        }
        Some(raw) => match Entry::from_value(raw) {
            Err(e) => {
                problems.push(format!("entry {name:?} is malformed: {e}"));
                None
            }
            Ok(doc) => {
                // Compared in the recorded form: what install wrote records the same again,
                // and a hand-written value is compared by its digest.
                doc_problems = compare(as_map(&declared.flat()), as_map(&doc.flat()));
                if let Transport::Stdio { command, .. } = &doc.transport {
                    commands.push(command.clone());
                }
                Some(doc)
            }
        },
    };
    let Some(live) = &target.live else {
        problems.extend(doc_problems);
        return finish_registration(target, problems, &commands);
    };
    let path = live.path.display();
    let mut live_problems = Vec::new();
    match live.entries.get(name).map(Entry::from_value) {
        None => problems.push(format!(
            "the client's config {path} has no user-scope entry {name:?}"
        )),
        Some(Err(e)) => problems.push(format!("live entry in {path} is malformed: {e}")),
        Some(Ok(entry)) => {
            live_problems = compare(&declared.raw, &entry.raw);
            if let Some(doc) = &document {
                problems.extend(witnesses_disagree(doc, &entry, &live.path));
            }
            if let Transport::Stdio { command, .. } = &entry.transport {
                if !commands.contains(command) {
                    commands.push(command.clone());
                }
            }
        }
    }
    // A problem both witnesses have is said once; one only one has, with its witness.
    for p in &doc_problems {
        if live_problems.contains(p) {
            problems.push(p.clone());
        } else {
            problems.push(format!("in the document: {p}"));
        }
    }
    for p in live_problems.iter().filter(|p| !doc_problems.contains(p)) {
        problems.push(format!("in {path}: {p}"));
    }
    // Every shadow fails, as the `shadowing` row of status, install and reconcile does.
    for shadow in &live.shadows {
        let where_ = match shadow.reach {
            super::shadow::Reach::Here => "from this directory",
            super::shadow::Reach::Elsewhere => "there",
        };
        problems.push(format!(
            "{name} is shadowed by a same-name entry in the {shadow}, which the client prefers \
             {where_}"
        ));
    }
    finish_registration(target, problems, &commands)
}

/// The two witnesses compared with each other, in the recorded form: the keys on which the
/// document and the client's config `path` disagree, with both entries (redacted).
fn witnesses_disagree(doc: &Entry, live: &Entry, path: &Path) -> Option<String> {
    let (d, l) = (
        normalized(as_map(&doc.flat())),
        normalized(as_map(&live.flat())),
    );
    let mut keys: Vec<&str> = d
        .keys()
        .filter(|k| d.get(*k) != l.get(*k))
        .map(String::as_str)
        .collect();
    keys.extend(l.keys().filter(|k| !d.contains_key(*k)).map(String::as_str));
    (!keys.is_empty()).then(|| {
        format!(
            "the document and the client's config {} disagree on {} (the document has {}, the \
             client {})",
            path.display(),
            keys.join(", "),
            doc.describe(),
            live.describe()
        )
    })
}

/// The layers' part of `mcp-registration`: each finding that changes what the agent runs, or
/// leaves it unknown, is a problem; the client's own answers are notes for the pass's detail,
/// the evidence that settled a doubt.
fn layer_problems(target: &Target) -> (Vec<String>, Vec<String>) {
    let (mut problems, mut notes) = (Vec::new(), Vec::new());
    for f in &target.layers {
        let said = f.describe(&target.registered_name);
        if f.fails() {
            problems.push(said);
        } else {
            notes.push(said);
        }
    }
    (problems, notes)
}

/// The command checks, and the verdict with its evidence.
fn finish_registration(
    target: &Target,
    mut problems: Vec<String>,
    commands: &[String],
) -> Result<String, RegistrationMismatch> {
    let declared = &target.declared;
    let mut evidence = Vec::new();
    let (layer_problems, notes) = layer_problems(target);
    problems.extend(layer_problems);
    // A checked launch: the registered command is the launcher, which must be one only root
    // or the deploying user can replace; what it starts is the declared command, which must
    // lie inside the release as a direct registration's does.
    let checked = target.server.launch == Launch::Checked;
    let mut launched = Vec::new();
    let mut commands = commands.to_vec();
    if checked && matches!(declared.transport, Transport::Stdio { .. }) {
        let mut inner = Vec::new();
        for launcher in &commands {
            match checked_launch(target.server, &target.prefix, launcher) {
                Ok(command) => {
                    launched.push(launcher.clone());
                    inner.push(command);
                }
                Err(why) => problems.push(why),
            }
        }
        inner.dedup();
        commands = inner;
    }
    if matches!(declared.transport, Transport::Stdio { .. }) {
        match target.release.containment_root() {
            Err(e) => problems.push(e.to_string()),
            Ok(root) => {
                // Through `current` as the run read it: one release throughout the report.
                let via = target.release.via();
                let against = Against {
                    root: &root,
                    prefix: &target.prefix,
                    declared: match &declared.transport {
                        Transport::Stdio { command, .. } => Some(Path::new(command)),
                        Transport::Remote { .. } => None,
                    },
                };
                // Each failure with its cause and next step, as status words it.
                let said = |e: ContainmentError| format!("{e}: {}", e.next_step(&against));
                for command in &commands {
                    let command = Path::new(command);
                    match check_command_inside_via(command, &root, via.as_ref()) {
                        Ok(e) => evidence.push(e),
                        Err(e) => problems.push(said(e)),
                    }
                    let (layout, prefix) = (target.server.layout, &target.prefix);
                    if let Err(e) =
                        check_stable_path_via(layout, prefix, command, &root, via.as_ref())
                    {
                        problems.push(said(e));
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(RegistrationMismatch {
            problems,
            document_only: target.live.is_none(),
        });
    }
    if let Some(launcher) = launched.first() {
        evidence.push(format!(
            "checked at every launch by {launcher} (mcp-deploy exec: only the pinned release, \
             the file it hashed, the declared environment)"
        ));
    }
    let what = match &declared.transport {
        Transport::Stdio { .. } => format!("{}; as declared", evidence.join("; ")),
        Transport::Remote { kind, url } => format!("{kind} {}; as declared", shown_url(url)),
    };
    let mut detail = match &target.live {
        Some(live) => format!("{what}, in the document and in {}", live.path.display()),
        None => format!("{what}; {DOCUMENT_ONLY}"),
    };
    for note in notes {
        detail.push_str("; ");
        detail.push_str(&note);
    }
    Ok(detail)
}

/// A checked launch's registered command `launcher`, for `server` at `prefix`: the launcher
/// must be a file only root or the deploying user (the prefix's owner) can replace along its
/// whole path. `Ok`: the declared command it starts, whose containment is checked as a direct
/// registration's is; `Err`: the problem, said as `mcp-registration` and status's `target`
/// row say it.
pub(crate) fn checked_launch(
    server: &crate::deployment::declaration::Server,
    prefix: &Path,
    launcher: &str,
) -> Result<String, String> {
    let owner = std::fs::metadata(prefix).map(|m| m.uid()).unwrap_or(0);
    crate::fsio::only_owners_can_replace(Path::new(launcher), &[0, owner]).map_err(|why| {
        format!(
            "the launcher {launcher} can be replaced by someone other than root or the \
             deploying user: {why}"
        )
    })?;
    server.sources_guarded(&[0, owner]).map_err(|why| {
        format!(
            "the launcher reads {}'s declaration at every start, and it can be rewritten by \
             someone other than root or the deploying user: {why}",
            server.name
        )
    })?;
    match render::render_direct(server, prefix)
        .map_err(|e| e.to_string())?
        .entry
        .transport
    {
        Transport::Stdio { command, .. } => Ok(command),
        Transport::Remote { .. } => Err(format!(
            "{} is a remote server: nothing to launch",
            server.name
        )),
    }
}

fn as_map(v: &Value) -> &Map<String, Value> {
    v.as_object().expect("an entry's flat form is an object")
}
