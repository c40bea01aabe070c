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
//! - `mcp-registration` ([`crate::identity::mcp_registration`]): the registered entry exists
//!   and is, key by key, the declared one ([`crate::identity::compare`]): its command *is* the declared command, its args, env, type, URL (query and
//!   fragment included), headers, `headersHelper` and `oauth` are the declared ones, and it has
//!   no key mcp-deploy does not know unless the declaration has it too. Its command is
//!   absolute, normalized, reached through no `/proc` or `/dev/fd` magic link at any step
//!   ([`crate::identity::containment`]), an executable file, and its realpath lies inside the realpath of
//!   the containment root, compared by path components. Two witnesses: the flat document, and,
//!   when the client's own config is readable on this host ([`Live`]), the live user-scope
//!   entry, which must also be the declared one, agree with the document, and not be shadowed
//!   by a same-name entry of another scope. Without the live witness the detail says
//!   "document only: the live registration was not compared".
//! - `handshake` (only with `--handshake`): the registered server starts and answers MCP's
//!   `initialize` and `tools/list` ([`crate::identity::handshake`]). It is not started when
//!   `mcp-registration` failed: a command that resolves outside the release, or that is not
//!   what was declared, is the very thing the check exists to catch, and we do not run it.
//!
//! This file runs the checks in order and holds what they share (the [`Target`], the
//! candidate view of promote's preflight); each check of more than a few lines has its own
//! module: `content_signature`, `mcp_registration`, `containment`, `compare`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::deployment::declaration::{Launch, Layout, Server};
use crate::deployment::layout::{self, LayoutError, Sha};
use crate::deployment::release::Release;
use crate::deployment::render;
use crate::entry::{Entry, EntryError, Transport};
use crate::identity::containment::{
    check_command_inside_via, check_stable_path_via, resolve_command_via, Against, ContainmentError,
};
use crate::identity::content_signature::content_and_signature;
use crate::identity::handshake;
use crate::identity::mcp_registration::check_registration;
use crate::identity::report::{Check, ServerReport};
use crate::identity::surface::{self, Surface};
use crate::trust::Trust;

/// Why the `commit` check fails: the commit found, the one expected, and where it was read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommitError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// promote's preflight: the candidate release is another commit.
    #[error("the release's commit is {found}, expected {expected} ({evidence})")]
    Candidate {
        found: Sha,
        expected: Sha,
        evidence: String,
    },
    // Say the deployed commit first: "…VERSION agrees, expected Y" reads like success.
    #[error("the deployed commit is {found}, expected {expected} ({evidence})")]
    Deployed {
        found: Sha,
        expected: Sha,
        evidence: String,
    },
    #[error("no commit evidence: {why}; expected {expected}")]
    NoEvidence { why: String, expected: Sha },
}

/// Why the declared command fails install's gate (its `mcp-registration` row).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeclaredCommandError {
    #[error("the declared command cannot run: {0}")]
    Root(#[from] LayoutError),
    /// With its next step ([`ContainmentError::next_step`]), as status and verify-identity say it.
    #[error("the declared command cannot run: {why}: {next}")]
    Command { why: ContainmentError, next: String },
}

/// Why the `handshake` check (or promote's candidate handshake) failed or did not start the
/// server.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HandshakeCheckError {
    #[error("not started: the mcp-registration check failed")]
    RegistrationFailed,
    #[error("not started: no registered entry")]
    NoEntry,
    #[error("not started: {0}")]
    Malformed(#[from] EntryError),
    #[error("not started: the candidate release cannot be resolved")]
    NoCandidate,
    #[error("not started: {0}")]
    Unresolvable(#[from] ContainmentError),
    #[error("{0}")]
    Failed(Box<handshake::Failure>),
    /// The candidate's server, `command` as declared, started as the file `real` it reaches.
    #[error("{command} started as {}: {failure}", .real.display())]
    CandidateFailed {
        command: String,
        real: PathBuf,
        failure: Box<handshake::Failure>,
    },
}

/// The live registration: the client's user-scope entries as its own config file holds them,
/// read without the client's binary, and the same-name entries of other scopes.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    /// The client's config file.
    pub(crate) path: PathBuf,
    /// Shared: read once per client per run, whatever the number of servers checked.
    pub(crate) entries: std::sync::Arc<Map<String, Value>>,
    /// Where a same-name entry of another scope wins over the user-scope one, one each.
    pub(crate) shadows: Vec<super::shadow::Shadow>,
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
    pub(crate) trust: &'a Trust,
    /// Every layer the client applies to the registered name beyond its user-scope entry
    /// (read per client by `clients::layers`): a finding that changes what runs, or leaves it
    /// unknown, fails `mcp-registration`; the client's own answers are named in its detail.
    pub(crate) layers: Vec<crate::identity::layer::Finding>,
    /// The release every check reads, resolved once ([`Release::resolve`]), or promote's
    /// candidate ([`Release::candidate`]).
    pub(crate) release: Release,
}

impl Target<'_> {
    /// The entry that starts the server itself: the declared one, or under a checked launch
    /// the one `mcp-deploy exec` checks and executes (the registered entry names the
    /// launcher). What the gate, the commit evidence and promote's handshake look at.
    pub(crate) fn direct(&self) -> Entry {
        match self.server.launch {
            Launch::Direct => self.declared.clone(),
            Launch::Checked => render::render_direct(self.server, &self.prefix)
                .map(|r| r.entry)
                .unwrap_or_else(|_| self.declared.clone()),
        }
    }
}

/// Run every check for `target` against `registrations` (an `mcpServers` object).
pub(crate) fn verify(target: &Target, registrations: &Map<String, Value>) -> ServerReport {
    let mut checks = Vec::new();
    if target.server.layout == Layout::Release {
        checks.push(Check::from_result("release", check_release(target)));
    }
    checks.push(Check::from_result("commit", check_commit(target)));
    // A promote may land here: the checks below still see the release resolved above.
    crate::process::checkpoint("verify-after-commit");
    checks.extend(content_and_signature(target, true));
    let registration = check_registration(target, registrations);
    let registration_ok = registration.is_ok();
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
        checks.push(Check { skipped: false,
            check: "secrets",
            ok: false,
            detail: format!(
                "the registration holds a literal secret in {}; register a ${{VAR}} reference instead",
                secrets.join(", ")
            ),
        });
    }
    if let Some(timeout) = target.handshake {
        let shaken = check_handshake(target, registrations, registration_ok, timeout);
        let surface = shaken.as_ref().ok().map(|info| info.surface.clone());
        checks.push(Check::from_result(
            "handshake",
            shaken.map(|info| info.to_string()),
        ));
        if let Some(surface) = surface {
            checks.push(tools_check(target, &surface));
        }
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
        deployed: deployed(target),
        checks,
    }
}

/// The release the checks of `target` saw: the deployment as it was read, or promote's
/// candidate.
pub(crate) fn deployed(target: &Target) -> crate::identity::report::Deployed {
    crate::identity::report::Deployed::of(&target.release)
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
    let direct = target.direct();
    if let Transport::Stdio { command, .. } = &direct.transport {
        let (layout, prefix) = (target.server.layout, &target.prefix);
        let via = target.release.via();
        let r = (|| -> Result<String, DeclaredCommandError> {
            let root = target.release.containment_root()?;
            // A first promote creates the stable link: checked as it will resolve then.
            let path = target.release.declared_path(Path::new(command));
            let against = Against {
                root: &root,
                prefix,
                // The gate checks the declared command itself (or, before a first promote,
                // the path its stable link will be): never "a registration edited by hand".
                declared: Some(&path),
            };
            let said = |why: ContainmentError| DeclaredCommandError::Command {
                next: why.next_step(&against),
                why,
            };
            let ok = check_command_inside_via(&path, &root, via.as_ref()).map_err(said)?;
            check_stable_path_via(layout, prefix, &path, &root, via.as_ref()).map_err(said)?;
            Ok(match target.release.planned_link(Path::new(command)) {
                Some(link) => format!(
                    "the declared command {ok} (promote creates the stable link {})",
                    link.describe(prefix)
                ),
                None => format!("the declared command {ok}"),
            })
        })();
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
pub(crate) fn candidate_handshake(
    target: &Target,
    timeout: Duration,
) -> Result<(String, Option<Surface>), HandshakeCheckError> {
    let direct = target.direct();
    let Transport::Stdio { command, args } = &direct.transport else {
        return Ok((
            "skipped: an http server is not started by its client; its URL answers for \
                   whatever serves it, which switching `current` does not start or restart"
                .into(),
            None,
        ));
    };
    let via = match target.release.is_candidate() {
        true => target.release.via(),
        false => None,
    }
    .ok_or(HandshakeCheckError::NoCandidate)?;
    let prefix_real = fs::canonicalize(&target.prefix).ok();
    let under_prefix = |p: &Path| {
        p.is_absolute()
            && (p.starts_with(&target.prefix)
                || prefix_real.as_ref().is_some_and(|r| p.starts_with(r)))
    };
    let real = resolve_command_via(
        &target.release.declared_path(Path::new(command)),
        Some(&via),
    )?;
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
    let mut raw = direct.raw.clone();
    raw.insert("command".into(), Value::from(real.display().to_string()));
    raw.insert("args".into(), Value::Array(args));
    let entry = Entry::from_value(&Value::Object(raw))?;
    match handshake::handshake(&entry, timeout) {
        Ok(info) => Ok((
            format!("{} started as {}: {info}", command, real.display()),
            Some(info.surface),
        )),
        Err(failure) => Err(HandshakeCheckError::CandidateFailed {
            command: command.clone(),
            real,
            failure: Box::new(failure),
        }),
    }
}

/// The `release` check: `current` as it was read, or for promote's preflight the candidate.
fn check_release(target: &Target) -> Result<String, LayoutError> {
    target.release.check()
}

fn check_commit(target: &Target) -> Result<String, CommitError> {
    if target.release.is_candidate() {
        let (sha, evidence) = target.release.deployed_commit()?;
        return match &target.expected {
            Some(expected) if *expected != sha => Err(CommitError::Candidate {
                found: sha,
                expected: expected.clone(),
                evidence,
            }),
            _ => Ok(format!("{evidence}, as expected")),
        };
    }
    let direct = target.direct();
    let command = match &direct.transport {
        Transport::Stdio { command, .. } => Some(Path::new(command.as_str())),
        Transport::Remote { .. } => None,
    };
    let evidence = target.release.commit_evidence(command)?;
    let (sha, evidence) = match evidence {
        layout::Evidence::Commit(sha, evidence) => (sha, evidence),
        // No evidence at all fails only when a commit is expected.
        layout::Evidence::Nothing(why) => {
            return match &target.expected {
                Some(expected) => Err(CommitError::NoEvidence {
                    why,
                    expected: expected.clone(),
                }),
                None => Ok(format!(
                    "no commit evidence: {why} (no expected commit given)"
                )),
            }
        }
    };
    match &target.expected {
        Some(expected) if *expected != sha => Err(CommitError::Deployed {
            found: sha,
            expected: expected.clone(),
            evidence,
        }),
        Some(_) => Ok(format!("{evidence}, as expected")),
        None => Ok(format!("{evidence} (no expected commit given)")),
    }
}

fn check_handshake(
    target: &Target,
    registrations: &Map<String, Value>,
    registration_ok: bool,
    timeout: Duration,
) -> Result<handshake::ServerInfo, HandshakeCheckError> {
    if !registration_ok {
        return Err(HandshakeCheckError::RegistrationFailed);
    }
    if !registrations.contains_key(&target.registered_name) {
        return Err(HandshakeCheckError::NoEntry);
    }
    // The registration check proved the registered entry is the declared one, key by key; the
    // document records references and digests, not values, so what is started is the live
    // entry when there is one, else the declared entry it was proven equal to.
    let live = target
        .live
        .as_ref()
        .and_then(|l| l.entries.get(&target.registered_name))
        .map(Entry::from_value)
        .transpose()?;
    let entry = live.unwrap_or_else(|| target.declared.clone());
    handshake::handshake(&entry, timeout).map_err(|f| HandshakeCheckError::Failed(Box::new(f)))
}

/// The `tools` row: the surface the server handed over now against the one recorded for its
/// release ([`surface::seen`]). Nothing recorded yet is a row that says so, not a verdict;
/// records that cannot be read, or a release whose commit is unknown, fail it.
pub(crate) fn tools_check(target: &Target, now: &Surface) -> Check {
    let commit = match target.release.deployed_commit() {
        Ok((sha, _)) => sha.to_string(),
        Err(e) => {
            return Check::from_result(
                "tools",
                Err(format!(
                    "{}; its release's commit is unknown: {e}",
                    now.describe()
                )),
            )
        }
    };
    match surface::seen(&target.prefix, &commit, now) {
        Err(e) => Check::from_result("tools", Err(e.to_string())),
        Ok(surface::Seen::New) => Check::skipped(
            "tools",
            format!(
                "{}: not compared, no surface recorded for release {} (install and promote record it \
                 when they first start the server)",
                now.describe(),
                &commit[..commit.len().min(12)]
            ),
        ),
        Ok(seen) => Check::from_result("tools", surface::verdict(&seen, now, &commit)),
    }
}
