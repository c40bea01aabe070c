//! Identity checks: is the deployed release the expected commit, and does the registered
//! command stay inside it? Every check is evaluated and reported with its evidence; none
//! stops the others.
//!
//! - `release`: `<prefix>/current` is a symlink to a directory directly inside
//!   `<prefix>/releases/` (release layouts only).
//! - `commit`: the release's VERSION holds a full sha equal to the expected one, and
//!   `<prefix>/VERSION`, when present, agrees. A Python prefix without VERSION gives its
//!   commit through pip's `direct_url.json` ([`layout::commit_evidence`]); with no evidence at
//!   all the check says so, and fails only when a commit is expected.
//! - `content`: the release's files match its `MANIFEST.sha256` (run when the release holds
//!   one; required with `--content` or a trust policy).
//! - `signature`: with a trust policy, `MANIFEST.sha256.sig` is a signature over the manifest
//!   by a signer the policy allows for `mcp-deploy`, and the manifest lists `VERSION`
//!   ([`crate::trust::signature`]); without one it passes, saying "unsigned" or "signed, not
//!   checked". Install's gate ([`deployment_checks`]) runs it only with a policy.
//! - `mcp-registration`: the registered entry exists and is, key by key, the declared one
//!   ([`compare`]): its command *is* the declared command, its args, env, type, URL (query and
//!   fragment included), headers, `headersHelper` and `oauth` are the declared ones, and it has
//!   no key mcp-deploy does not know unless the declaration has it too. Its command is
//!   absolute, normalized, reached through no `/proc` or `/dev/fd` magic link at any step
//!   ([`resolve_command`]), an executable file, and its realpath lies inside the realpath of
//!   the containment root, compared by path components. Two witnesses: the flat document, and,
//!   when the client's own config is readable on this host ([`Live`]), the live user-scope
//!   entry, which must also be the declared one, agree with the document, and not be shadowed
//!   by a same-name entry of another scope. Without the live witness the detail says
//!   "document only: the live registration was not compared".
//! - `handshake` (only with `--handshake`): the registered server starts and answers MCP's
//!   `initialize` and `tools/list` ([`crate::identity::handshake`]). It is not started when
//!   `mcp-registration` failed: a command that resolves outside the release, or that is not
//!   what was declared, is the very thing the check exists to catch, and we do not run it.

use std::collections::VecDeque;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::content::manifest::{self, ManifestError};
use crate::deployment::declaration::{has_dot_components, Layout, Server};
use crate::deployment::layout::{self, Sha};
use crate::entry::secrets::{shown_args, shown_url, shown_value};
use crate::entry::{normalized, Entry, Transport};
use crate::identity::handshake;
use crate::identity::report::{Check, ServerReport};
use crate::trust::allowed_signers::Policy;
use crate::trust::signature;

/// The live registration: the client's user-scope entries as its own config file holds them,
/// read without the client's binary, and the same-name entries of other scopes.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    /// The client's config file.
    pub(crate) path: PathBuf,
    pub(crate) entries: Map<String, Value>,
    /// Where a same-name entry of another scope wins over the user-scope one, one each.
    pub(crate) shadows: Vec<String>,
}

/// What a pass without the live witness says, in the detail and (as `witnesses`) in JSON.
pub(crate) const DOCUMENT_ONLY: &str = "document only: the live registration was not compared";

/// What to verify for one server.
pub(crate) struct Target<'a> {
    pub(crate) server: &'a Server,
    /// The client whose registration is checked.
    pub(crate) client: &'a str,
    pub(crate) prefix: PathBuf,
    pub(crate) registered_name: String,
    /// The declared entry, rendered for this prefix.
    pub(crate) declared: Entry,
    /// The commit the release must be; `None` takes the deployment's own VERSION (install
    /// without `--expect-commit`), which still checks that VERSION is well-formed and agrees.
    pub(crate) expected: Option<Sha>,
    /// Fail the `content` check when the release holds no manifest (`--content`).
    pub(crate) require_content: bool,
    /// Start the registered server and handshake with it, within this time (`--handshake`).
    pub(crate) handshake: Option<Duration>,
    /// The client's live registration, when its config is readable here.
    pub(crate) live: Option<Live>,
    /// The trust policies the release's manifest signature is checked against, each of which
    /// must pass (`--trusted-signers`, the server's `trusted_signers`, or both); none reports
    /// only whether the release is signed.
    pub(crate) trust: &'a [Policy],
    /// Every layer the client applies to the registered name beyond its user-scope entry
    /// (read per client by `clients::layers`): a finding that changes what runs fails `mcp-registration`;
    /// one that could not be compared is named in its detail, and fails with `strict`.
    pub(crate) layers: Vec<crate::identity::layer::Finding>,
    /// `--strict`: a layer that exists but could not be compared fails.
    pub(crate) strict: bool,
    /// promote's preflight: the release directory (`<prefix>/releases/<sha>`) checked in place
    /// of the one `current` resolves to now, as if `current` already pointed at it. `None`:
    /// the deployment as it is.
    pub(crate) candidate: Option<PathBuf>,
}

/// Run every check for `target` against `registrations` (an `mcpServers` object).
pub(crate) fn verify(target: &Target, registrations: &Map<String, Value>) -> ServerReport {
    let mut checks = Vec::new();
    if target.server.layout == Layout::Release {
        checks.push(Check::from_result("release", check_release(target)));
    }
    checks.push(Check::from_result("commit", check_commit(target)));
    checks.extend(content_and_signature(target, true));
    let registration = check_registration(target, registrations);
    let registered_ok = registration.is_ok();
    checks.push(Check::from_result("mcp-registration", registration));
    // A registration that carries a credential in clear fails, naming where (never the value).
    let live_entry = target
        .live
        .as_ref()
        .and_then(|l| l.entries.get(&target.registered_name));
    let mut secrets = Vec::new();
    for raw in [registrations.get(&target.registered_name), live_entry]
        .into_iter()
        .flatten()
    {
        if let Ok(e) = Entry::from_value(raw) {
            for place in crate::entry::secrets::literal_secrets(&e) {
                if !secrets.contains(&place) {
                    secrets.push(place);
                }
            }
        }
    }
    if !secrets.is_empty() {
        checks.push(Check {
            check: "secrets",
            ok: false,
            detail: format!(
                "the registration holds a literal secret in {}; register a ${{VAR}} reference instead",
                secrets.join(", ")
            ),
        });
    }
    if let Some(timeout) = target.handshake {
        checks.push(Check::from_result(
            "handshake",
            check_handshake(target, registrations, registered_ok, timeout),
        ));
    }
    ServerReport {
        name: target.server.name.clone(),
        client: target.client.to_string(),
        registered_name: target.registered_name.clone(),
        prefix: target.prefix.display().to_string(),
        registration: None,
        witnesses: Some(match &target.live {
            Some(live) => vec!["document".into(), format!("live {}", live.path.display())],
            None => vec!["document".into()],
        }),
        checks,
    }
}

/// The checks of the deployment alone, made before any registration changes (install's gate):
/// `release` (release layouts), `commit`, `content` (when the release holds a manifest or one
/// is required), and `mcp-registration` on the *declared* command — it exists, is an
/// executable file, and resolves inside the release. Same names and evidence as [`verify`].
pub(crate) fn deployment_checks(target: &Target) -> Vec<Check> {
    let mut checks = Vec::new();
    if target.server.layout == Layout::Release {
        checks.push(Check::from_result("release", check_release(target)));
    }
    checks.push(Check::from_result("commit", check_commit(target)));
    checks.extend(content_and_signature(target, false));
    if let Transport::Stdio { command, .. } = &target.declared.transport {
        let (layout, prefix) = (target.server.layout, &target.prefix);
        let via = switched_view(target);
        let r = containment_root_of(target)
            .and_then(|root| {
                let ok = check_command_inside_via(Path::new(command), &root, via.as_ref())?;
                check_stable_path_via(layout, prefix, Path::new(command), &root, via.as_ref())?;
                Ok(ok)
            })
            .map(|ok| format!("the declared command {ok}"))
            .map_err(|e| format!("the declared command cannot run: {e}"));
        checks.push(Check::from_result("mcp-registration", r));
    }
    checks
}

/// promote's handshake gate: start the candidate release's server as the agent will start it
/// once `current` names the candidate, and require it to answer MCP's `initialize` and (when
/// it declares tools) `tools/list` within `timeout` ([`handshake::handshake`]).
///
/// The stable path (`<prefix>/bin/x -> ../current/bin/x`) cannot be exec'd as is: until the
/// switch it leads into the release live now, and only a private mount namespace could make
/// the kernel follow it into the candidate. So the command, and every argument that is a path
/// under the prefix (a script given to an interpreter), are resolved with `current` taken as a
/// link to the candidate ([`switched_view`], as the rest of the preflight resolves them) and
/// the files they reach are started: the same program, args and declared `env` (expanded by
/// claude's rules, as the handshake does), from an empty directory. Run only after the rest of
/// the gate passed: a release whose content or signature failed is never executed.
///
/// An http server is skipped, saying why: the client does not start it, and its URL answers
/// for whatever process serves it, which switching `current` neither starts nor restarts.
pub(crate) fn candidate_handshake(target: &Target, timeout: Duration) -> Result<String, String> {
    let Transport::Stdio { command, args } = &target.declared.transport else {
        return Ok(
            "skipped: an http server is not started by its client; its URL answers for \
                   whatever serves it, which switching `current` does not start or restart"
                .into(),
        );
    };
    let via = switched_view(target)
        .ok_or_else(|| "not started: the candidate release cannot be resolved".to_string())?;
    let prefix_real = fs::canonicalize(&target.prefix).ok();
    let under_prefix = |p: &Path| {
        p.is_absolute()
            && (p.starts_with(&target.prefix)
                || prefix_real.as_ref().is_some_and(|r| p.starts_with(r)))
    };
    let real = resolve_command_via(Path::new(command), Some(&via))
        .map_err(|e| format!("not started: {e}"))?;
    let args: Vec<Value> = args
        .iter()
        .map(|a| {
            let p = Path::new(a);
            match under_prefix(p).then(|| resolve_command_via(p, Some(&via))) {
                Some(Ok(r)) => Value::from(r.display().to_string()),
                _ => Value::from(a.clone()),
            }
        })
        .collect();
    let mut raw = target.declared.raw.clone();
    raw.insert("command".into(), Value::from(real.display().to_string()));
    raw.insert("args".into(), Value::Array(args));
    let entry = Entry::from_value(&Value::Object(raw)).map_err(|e| format!("not started: {e}"))?;
    handshake::handshake(&entry, timeout)
        .map(|info| format!("{} started as {}: {info}", command, real.display()))
        .map_err(|f| format!("{} started as {}: {f}", command, real.display()))
}

/// The `release` check: `current` as it is, or for promote's preflight the candidate release.
fn check_release(target: &Target) -> Result<String, String> {
    match &target.candidate {
        Some(dir) => layout::check_candidate(&target.prefix, dir),
        None => layout::check_release(&target.prefix),
    }
}

/// The directory whose files the `content` check (and any check of the release's own files)
/// reads: the candidate in promote's preflight, else what the layout says is deployed.
pub(crate) fn release_of(target: &Target) -> Result<PathBuf, String> {
    match &target.candidate {
        Some(dir) => Ok(dir.clone()),
        None => layout::release_dir(&target.prefix, target.server.layout),
    }
}

/// The canonical containment root: the candidate's, in promote's preflight.
fn containment_root_of(target: &Target) -> Result<PathBuf, String> {
    match &target.candidate {
        Some(dir) => {
            fs::canonicalize(dir).map_err(|e| format!("cannot resolve {}: {e}", dir.display()))
        }
        None => layout::containment_root(&target.prefix, target.server.layout),
    }
}

/// In promote's preflight, `(canonical <prefix>/current, candidate)`: resolving a command
/// then takes `current` as a link to the candidate, so that the stable path
/// `<prefix>/bin/x -> ../current/bin/x` is followed into the release that is about to be live.
fn switched_view(target: &Target) -> Option<(PathBuf, PathBuf)> {
    let dir = target.candidate.as_ref()?;
    let prefix = fs::canonicalize(&target.prefix).ok()?;
    let dir = fs::canonicalize(dir).ok()?;
    Some((prefix.join("current"), dir))
}

fn check_commit(target: &Target) -> Result<String, String> {
    if let Some(dir) = &target.candidate {
        let (sha, evidence) = layout::candidate_commit(&target.prefix, dir)?;
        return match &target.expected {
            Some(expected) if *expected != sha => Err(format!(
                "the release's commit is {sha}, expected {expected} ({evidence})"
            )),
            _ => Ok(format!("{evidence}, as expected")),
        };
    }
    let command = match &target.declared.transport {
        Transport::Stdio { command, .. } => Some(Path::new(command.as_str())),
        Transport::Remote { .. } => None,
    };
    let evidence = layout::commit_evidence(&target.prefix, target.server.layout, command)?;
    let (sha, evidence) = match evidence {
        layout::Evidence::Commit(sha, evidence) => (sha, evidence),
        // No evidence at all fails only when a commit is expected.
        layout::Evidence::Nothing(why) => {
            return match &target.expected {
                Some(expected) => Err(format!("no commit evidence: {why}; expected {expected}")),
                None => Ok(format!(
                    "no commit evidence: {why} (no expected commit given)"
                )),
            }
        }
    };
    match &target.expected {
        // Say the deployed commit first: "…VERSION agrees, expected Y" reads like success.
        Some(expected) if *expected != sha => Err(format!(
            "the deployed commit is {sha}, expected {expected} ({evidence})"
        )),
        Some(_) => Ok(format!("{evidence}, as expected")),
        None => Ok(format!("{evidence} (no expected commit given)")),
    }
}

/// The `content` check, and the `signature` check ([`signature::check`]) over the very bytes
/// of the manifest that `content` checks the release against: read once, so that a manifest
/// swapped between two reads cannot have one checked for content and another for the signature.
///
/// `content` runs when the release holds a manifest, or one is required (`--content`, or a trust
/// policy: the signature covers the manifest, the manifest the files). `signature` runs with a
/// trust policy, every one of `target.trust` having to pass; without one, `unchecked_row` adds a
/// pass that only says whether the release is signed ("unsigned", "signed, not checked").
fn content_and_signature(target: &Target, unchecked_row: bool) -> Vec<Check> {
    let required = target.require_content || !target.trust.is_empty();
    let signed = !target.trust.is_empty();
    let mut checks = Vec::new();
    let dir = match release_of(target) {
        Ok(dir) => dir,
        Err(e) => {
            if required {
                checks.push(Check::from_result("content", Err(e.clone())));
            }
            if signed {
                let why = format!("no release to check: {e}");
                checks.push(Check::from_result("signature", Err(why)));
            } else if unchecked_row {
                let why = "not checked: no trust policy".to_string();
                checks.push(Check::from_result("signature", Ok(why)));
            }
            return checks;
        }
    };
    let shown = |e: &ManifestError| match e.help() {
        Some(help) => format!("{e} ({help})"),
        None => e.to_string(),
    };
    let bytes = manifest::read_manifest(&dir);
    let content = match &bytes {
        Ok(b) => match manifest::verify_release_against(&dir, b, manifest::default_jobs()) {
            Ok(report) if report.ok() => Some(Ok(report.summary())),
            Ok(report) => Some(Err(report.summary())),
            Err(e) => Some(Err(shown(&e))),
        },
        Err(ManifestError::NoManifest { .. }) if !required => None,
        Err(e) => Some(Err(shown(e))),
    };
    if let Some(content) = content {
        checks.push(Check::from_result("content", content));
    }
    if !signed {
        if unchecked_row {
            checks.push(Check::from_result(
                "signature",
                Ok(signature::unchecked(&dir)),
            ));
        }
        return checks;
    }
    let result = match &bytes {
        Err(e) => Err(format!(
            "{}; a signature covers the manifest, so it must be there",
            shown(e)
        )),
        Ok(manifest) => {
            let now = std::time::SystemTime::now();
            let verdicts: Vec<Result<String, String>> = target
                .trust
                .iter()
                .map(|p| {
                    policy_outside(p, &target.prefix)?;
                    signature::check(p, &dir, manifest, now)
                })
                .collect();
            let failed: Vec<&str> = verdicts
                .iter()
                .filter_map(|v| v.as_ref().err().map(String::as_str))
                .collect();
            if failed.is_empty() {
                let passed: Vec<&str> = verdicts
                    .iter()
                    .filter_map(|v| v.as_ref().ok().map(String::as_str))
                    .collect();
                Ok(passed.join("; "))
            } else {
                Err(failed.join("; "))
            }
        }
    };
    checks.push(Check::from_result("signature", result));
    checks
}

/// A trust policy inside the prefix it vouches for vouches for nothing: whoever can write the
/// release can write the policy too. Compared by path components after resolving both.
fn policy_outside(policy: &Policy, prefix: &Path) -> Result<(), String> {
    let (Ok(file), Ok(root)) = (fs::canonicalize(&policy.path), fs::canonicalize(prefix)) else {
        return Ok(());
    };
    if file.starts_with(&root) {
        return Err(format!(
            "the trust policy {} lies inside the prefix {} it vouches for: whoever can write \
             the release can write the policy; keep it outside, owned by root",
            policy.path.display(),
            prefix.display()
        ));
    }
    Ok(())
}

fn check_handshake(
    target: &Target,
    registrations: &Map<String, Value>,
    registered_ok: bool,
    timeout: Duration,
) -> Result<String, String> {
    if !registered_ok {
        return Err("not started: the mcp-registration check failed".into());
    }
    if !registrations.contains_key(&target.registered_name) {
        return Err("not started: no registered entry".into());
    }
    // The registration check proved the registered entry is the declared one, key by key; the
    // document records references and digests, not values, so what is started is the live
    // entry when there is one, else the declared entry it was proven equal to.
    let live = target
        .live
        .as_ref()
        .and_then(|l| l.entries.get(&target.registered_name))
        .map(Entry::from_value)
        .transpose()
        .map_err(|e| format!("not started: {e}"))?;
    let entry = live.unwrap_or_else(|| target.declared.clone());
    handshake::handshake(&entry, timeout)
        .map(|info| info.to_string())
        .map_err(|f| f.to_string())
}

fn check_registration(
    target: &Target,
    registrations: &Map<String, Value>,
) -> Result<String, String> {
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
                let (d, l) = (
                    normalized(as_map(&doc.flat())),
                    normalized(as_map(&entry.flat())),
                );
                let mut keys: Vec<&String> = d.keys().filter(|k| d.get(*k) != l.get(*k)).collect();
                keys.extend(l.keys().filter(|k| !d.contains_key(*k)));
                if !keys.is_empty() {
                    let keys: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
                    problems.push(format!(
                        "the document and the client's config {path} disagree on {} (the \
                         document has {}, the client {})",
                        keys.join(", "),
                        doc.describe(),
                        entry.describe()
                    ));
                }
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
    for shadow in &live.shadows {
        problems.push(format!(
            "{name} is shadowed by a same-name entry in the {shadow}, which the client prefers \
             there"
        ));
    }
    finish_registration(target, problems, &commands)
}

/// The layers' part of `mcp-registration`: each finding that changes what the agent runs (or,
/// with `--strict`, that could not be compared) is a problem; the others are notes for the
/// pass's detail, so that a source that was not compared is never silent.
fn layer_problems(target: &Target) -> (Vec<String>, Vec<String>) {
    let (mut problems, mut notes) = (Vec::new(), Vec::new());
    for f in &target.layers {
        let said = f.describe(&target.registered_name);
        if f.fails(target.strict) {
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
) -> Result<String, String> {
    let declared = &target.declared;
    let mut evidence = Vec::new();
    let (layer_problems, notes) = layer_problems(target);
    problems.extend(layer_problems);
    if matches!(declared.transport, Transport::Stdio { .. }) {
        match containment_root_of(target) {
            Err(e) => problems.push(e),
            Ok(root) => {
                for command in commands {
                    match check_command_inside(Path::new(command), &root) {
                        Ok(e) => evidence.push(e),
                        Err(e) => problems.push(e),
                    }
                    let (layout, prefix) = (target.server.layout, &target.prefix);
                    if let Err(e) = check_stable_path(layout, prefix, Path::new(command), &root) {
                        problems.push(e);
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        let mut detail = problems.join("; ");
        if target.live.is_none() {
            detail.push_str(&format!(" ({DOCUMENT_ONLY})"));
        }
        return Err(detail);
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

/// Release layouts: the stable path `<prefix>/P` must lead to the release's own `P`
/// (`bin/codetools -> ../current/bin/codetools`), not to another file of the release: a
/// re-pointed `bin/codetools -> ../current/bin/helper` stays inside the release, but it is
/// not the declared program.
/// Also `status`'s `target` check and install's gate, so that none of them passes what the
/// others fail.
pub fn check_stable_path(
    layout: Layout,
    prefix: &Path,
    command: &Path,
    root: &Path,
) -> Result<(), String> {
    check_stable_path_via(layout, prefix, command, root, None)
}

fn check_stable_path_via(
    layout: Layout,
    prefix: &Path,
    command: &Path,
    root: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<(), String> {
    if layout != Layout::Release {
        return Ok(());
    }
    let Ok(rel) = command.strip_prefix(prefix) else {
        return Ok(());
    };
    let (Ok(real), Ok(own)) = (
        resolve_command_via(command, via),
        fs::canonicalize(root.join(rel)),
    ) else {
        // Unresolvable: check_command_inside has said why.
        return Ok(());
    };
    if real != own {
        return Err(format!(
            "command {} resolves to {}, not to the release's own {}",
            command.display(),
            real.display(),
            own.display()
        ));
    }
    Ok(())
}

fn as_map(v: &Value) -> &Map<String, Value> {
    v.as_object().expect("an entry's flat form is an object")
}

/// Compare a registered entry with the declared one, key by key; one problem each, with its
/// evidence (values shown redacted). Both are in the same form: raw, or as the flat document
/// records them ([`Entry::flat`]).
pub(crate) fn compare(
    declared: &Map<String, Value>,
    registered: &Map<String, Value>,
) -> Vec<String> {
    let want = normalized(declared);
    let got = normalized(registered);
    let kind = |m: &Map<String, Value>| {
        m.get("type")
            .and_then(Value::as_str)
            .unwrap_or("stdio")
            .to_string()
    };
    let (want_kind, got_kind) = (kind(&want), kind(&got));
    let mut problems = Vec::new();
    if want_kind != got_kind {
        problems.push(format!(
            "registered as a {got_kind} server, but declared as a {want_kind} server"
        ));
    }
    let mut keys: Vec<&String> = got.keys().collect();
    keys.extend(want.keys().filter(|k| !got.contains_key(*k)));
    for key in keys {
        let (w, g) = (want.get(key), got.get(key));
        if w == g || key == "type" {
            continue;
        }
        let problem = match key.as_str() {
            "command" => format!(
                "command {} is not the declared command {}",
                text(g),
                text(w)
            ),
            "args" => format!(
                "args {} differ from the declared {}",
                args_json(g),
                args_json(w)
            ),
            "env" | "headers" => {
                problems.extend(compare_map(key, w, g));
                continue;
            }
            "url" => compare_url(&text(w), &text(g)),
            "headersHelper" => match (w, g) {
                (None, _) => format!(
                    "headersHelper {} is not declared: it is a program the client runs",
                    text(g)
                ),
                (_, None) => format!("headersHelper {} is declared but missing", text(w)),
                _ => format!("headersHelper {} is not the declared {}", text(g), text(w)),
            },
            "oauth" => match (w, g) {
                (None, _) => "oauth settings are not declared".to_string(),
                (_, None) => "the declared oauth settings are missing".to_string(),
                _ => "oauth settings differ from the declared ones".to_string(),
            },
            _ if g.is_none() => format!("key {key:?} is declared but missing"),
            _ => format!("unknown key {key}: mcp-deploy cannot vouch for it"),
        };
        problems.push(problem);
    }
    problems
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "(none)".into(),
    }
}

fn args_json(v: Option<&Value>) -> String {
    let args: Vec<String> = v
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default();
    serde_json::to_string(&shown_args(&args)).expect("strings serialize")
}

/// `env` or `headers`: every name must be declared, with the declared value or reference.
fn compare_map(key: &str, want: Option<&Value>, got: Option<&Value>) -> Vec<String> {
    let empty = Map::new();
    let want = want.and_then(Value::as_object).unwrap_or(&empty);
    let got = got.and_then(Value::as_object).unwrap_or(&empty);
    let label = if key == "env" { "env" } else { "header" };
    let shown = |v: &Value| shown_value(v.as_str().unwrap_or_default());
    let mut problems = Vec::new();
    for (name, g) in got {
        match want.get(name) {
            None => problems.push(format!("{label} {name}={} is not declared", shown(g))),
            Some(w) if w != g => problems.push(format!(
                "{label} {name} is {}, but declared as {}",
                shown(g),
                shown(w)
            )),
            Some(_) => {}
        }
    }
    for name in want.keys().filter(|n| !got.contains_key(*n)) {
        problems.push(format!("{label} {name} is declared but missing"));
    }
    problems
}

/// The whole URL must be the declared one; the evidence names the parts that differ.
fn compare_url(want: &str, got: &str) -> String {
    let (w, g) = (UrlParts::split(want), UrlParts::split(got));
    let mut parts = Vec::new();
    for (part, differs) in [
        ("scheme", w.scheme != g.scheme),
        (
            "authority (credentials, host or port)",
            w.authority != g.authority,
        ),
        ("path", w.path != g.path),
        ("query", w.query != g.query),
        ("fragment", w.fragment != g.fragment),
    ] {
        if differs {
            parts.push(part);
        }
    }
    format!(
        "url {} is not the declared {} (it differs in its {})",
        shown_url(got),
        shown_url(want),
        parts.join(", ")
    )
}

/// A URL's parts, as written: compared exactly, so that `example.com.` is not `example.com`,
/// a default port written out is not the same registration, and query and fragment count.
///
/// Hand-written on purpose: the `url` crate parses to the WHATWG normal form (scheme and host
/// lowercased, a default port dropped, the path percent-encoded and `..` resolved), so two
/// URLs the exact comparison tells apart could come out with no part differing, and a
/// registered value that is no URL at all could not be split. These parts only name what
/// differs in the evidence; the verdict is the comparison of the two strings.
#[derive(Debug, PartialEq)]
struct UrlParts {
    scheme: String,
    authority: String,
    path: String,
    query: Option<String>,
    fragment: Option<String>,
}

impl UrlParts {
    fn split(url: &str) -> UrlParts {
        let (rest, fragment) = match url.split_once('#') {
            Some((r, f)) => (r, Some(f.to_string())),
            None => (url, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q.to_string())),
            None => (rest, None),
        };
        let (scheme, after) = rest.split_once("://").unwrap_or(("", rest));
        let end = after.find('/').unwrap_or(after.len());
        UrlParts {
            scheme: scheme.to_string(),
            authority: after[..end].to_string(),
            path: after[end..].to_string(),
            query,
            fragment,
        }
    }
}

/// The registered command must be absolute, free of `.`/`..`, reached through no magic link
/// ([`resolve_command`]), an executable regular file, and resolve (every symlink followed) to
/// a path inside `root` (already canonical).
pub(crate) fn check_command_inside(command: &Path, root: &Path) -> Result<String, String> {
    check_command_inside_via(command, root, None)
}

/// [`check_command_inside`], resolving through `via` (see [`resolve_command_via`]).
fn check_command_inside_via(
    command: &Path,
    root: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<String, String> {
    let shown = command.display();
    if !command.is_absolute() {
        return Err(format!(
            "command {shown} is relative; a registration needs an absolute path"
        ));
    }
    if has_dot_components(command) {
        return Err(format!(
            "command {shown} holds . or .. components; register the normalized path"
        ));
    }
    let real = resolve_command_via(command, via)?;
    let meta = fs::metadata(&real).map_err(|e| format!("command {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "command {shown} resolves to {}, not a file",
            real.display()
        ));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(format!(
            "command {shown} ({}) is not executable",
            real.display()
        ));
    }
    // Path::starts_with compares whole components: /opt/ct-evil does not start with /opt/ct.
    if !real.starts_with(root) {
        return Err(format!(
            "command {shown} resolves to {}, outside {}",
            real.display(),
            root.display()
        ));
    }
    Ok(format!(
        "{shown} -> {} inside {}",
        real.display(),
        root.display()
    ))
}

/// The most symlinks followed while resolving a command (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Resolve `command` one component at a time, following each symlink ourselves, and refuse
/// any step that is, or leads into, a path whose meaning depends on the process that opens it
/// ([`is_magic`]): `/proc/self/root/opt/x` or a link to `/dev/fd/3` may resolve inside the
/// release for the verifier and to anything at all for the agent. Returns the resolved path,
/// which agrees with `realpath` when nothing magic is on the way.
#[cfg(test)]
pub(crate) fn resolve_command(command: &Path) -> Result<PathBuf, String> {
    resolve_command_via(command, None)
}

/// [`resolve_command`], where `via = (link, dir)` makes the path `link` (canonical) resolve
/// as a symlink to `dir` whatever it is on disk: promote's preflight follows the stable path
/// through `current` as it will be after the switch.
fn resolve_command_via(
    command: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<PathBuf, String> {
    let shown = command.display();
    let magic = |at: &Path, how: String| {
        format!(
            "command {shown} {how} {}: a path under /proc or /dev/fd means something different \
             to each process, so the verifier cannot vouch for what the agent would run",
            at.display()
        )
    };
    if is_magic(command) {
        return Err(magic(command, "is".into()));
    }
    let mut resolved = PathBuf::from("/");
    let mut queue: VecDeque<PathBuf> = command
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(PathBuf::from(n)),
            _ => None,
        })
        .collect();
    let mut links = 0;
    while let Some(part) = queue.pop_front() {
        if part.as_os_str() == ".." {
            resolved.pop();
            continue;
        }
        if part.as_os_str() == "." {
            continue;
        }
        let next = resolved.join(&part);
        if is_magic(&next) {
            return Err(magic(&next, "resolves through".into()));
        }
        if let Some((_, dir)) = via.filter(|(link, _)| *link == next) {
            links += 1;
            resolved = PathBuf::from("/");
            for c in dir.components().rev() {
                if let Component::Normal(n) = c {
                    queue.push_front(PathBuf::from(n));
                }
            }
            continue;
        }
        let meta = fs::symlink_metadata(&next).map_err(|e| {
            format!(
                "command {shown} cannot be resolved: {}: {e}",
                next.display()
            )
        })?;
        if !meta.file_type().is_symlink() {
            resolved = next;
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(format!(
                "command {shown} cannot be resolved: more than {MAX_LINKS} symlinks (a loop?)"
            ));
        }
        let target = fs::read_link(&next).map_err(|e| {
            format!(
                "command {shown} cannot be resolved: {}: {e}",
                next.display()
            )
        })?;
        if target.is_absolute() {
            if is_magic(&target) {
                return Err(magic(&target, format!("links ({}) to", next.display())));
            }
            resolved = PathBuf::from("/");
        }
        for c in target.components().rev() {
            match c {
                Component::Normal(n) => queue.push_front(PathBuf::from(n)),
                Component::ParentDir => queue.push_front(PathBuf::from("..")),
                _ => {}
            }
        }
    }
    Ok(resolved)
}

/// `/proc` and everything under it, `/dev/fd` and under it, and `/dev/stdin`, `/dev/stdout`,
/// `/dev/stderr` (links into `/proc/self/fd`).
fn is_magic(path: &Path) -> bool {
    path.starts_with("/proc")
        || path.starts_with("/dev/fd")
        || ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
            .iter()
            .any(|p| path.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_compare_whole_and_name_the_differing_part() {
        let d = |w: &str, g: &str| compare_url(w, g);
        assert!(d("http://gw/mcp", "http://gw/mcp?x=1").contains("in its query"));
        assert!(d("http://gw/mcp", "http://gw/mcp#f").contains("in its fragment"));
        assert!(d("http://gw/mcp", "http://gw./mcp").contains("authority"));
        assert!(d("http://gw/mcp", "http://gw:80/mcp").contains("authority"));
        assert!(d("http://gw/mcp", "https://gw/mcp").contains("scheme"));
        assert!(d("http://gw/mcp", "http://gw/mcp/").contains("path"));
        let shown = d("http://gw/mcp?k=${K}", "http://u:pw@gw/mcp?k=s3cr3t");
        assert!(
            !shown.contains("s3cr3t") && !shown.contains("pw"),
            "{shown}"
        );
    }

    #[test]
    fn every_key_is_accounted_for() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let declared = m(serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${T}"}}));
        // What claude adds on its own is no difference.
        let same = m(
            serde_json::json!({"type": "stdio", "command": "/x", "args": ["a"], "env": {"T": "${T}"}}),
        );
        assert!(compare(&declared, &same).is_empty());
        for (registered, want) in [
            (
                serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${T}", "NODE_OPTIONS": "--require /e.js"}}),
                "env NODE_OPTIONS=<redacted> is not declared",
            ),
            (
                serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${U}"}}),
                "env T is ${U}, but declared as ${T}",
            ),
            (
                serde_json::json!({"command": "/x", "args": ["a"]}),
                "env T is declared but missing",
            ),
            (
                serde_json::json!({"command": "/x", "args": ["a"], "env": {"T": "${T}"}, "cwd": "/tmp"}),
                "unknown key cwd",
            ),
            (
                serde_json::json!({"command": "/y", "args": ["a"], "env": {"T": "${T}"}}),
                "not the declared command /x",
            ),
            (
                serde_json::json!({"type": "http", "url": "http://h/", "env": {"T": "${T}"}, "args": ["a"]}),
                "declared as a stdio server",
            ),
        ] {
            let problems = compare(&declared, &m(registered.clone())).join("; ");
            assert!(problems.contains(want), "{registered}: {problems}");
            assert!(!problems.contains("/e.js"), "{problems}");
        }
    }

    #[test]
    fn magic_paths_are_refused_at_any_step() {
        assert!(resolve_command(Path::new("/proc/self/root/bin/sh")).is_err());
        assert!(resolve_command(Path::new("/dev/fd/0")).is_err());
        assert!(resolve_command(Path::new("/dev/stdin")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("via-proc");
        std::os::unix::fs::symlink("/proc/self/root/bin/sh", &link).unwrap();
        let err = resolve_command(&link).unwrap_err();
        assert!(err.contains("/proc/self/root/bin/sh"), "{err}");
        // A relative link that climbs into /proc is found too.
        let depth = dir.path().components().count() - 1;
        let rel = format!("{}proc/self/exe", "../".repeat(depth));
        let link2 = dir.path().join("rel-proc");
        std::os::unix::fs::symlink(&rel, &link2).unwrap();
        assert!(resolve_command(&link2).unwrap_err().contains("/proc"));
        // An ordinary chain resolves like realpath.
        let real = dir.path().join("real");
        std::fs::write(&real, "").unwrap();
        let l = dir.path().join("l");
        std::os::unix::fs::symlink("real", &l).unwrap();
        assert_eq!(
            resolve_command(&l).unwrap(),
            std::fs::canonicalize(&real).unwrap()
        );
    }
}
