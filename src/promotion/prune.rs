//! Pruning old releases: which of `<prefix>/releases/*` may go, and removing them without
//! ever following a link out of the prefix, or breaking something that runs.
//!
//! Releases are ordered by when they were last live: the time of the latest history record
//! that made each live, else (never promoted here, such as one unpacked and waiting) the
//! directory's mtime. The `keep` newest stay, and whatever their age so do:
//! - the live release, and the release `rollback` would return to;
//! - every release a registration points into: any string of the entry (its command, an
//!   argument, an env value, each `:`-separated part, what follows a `=`) that is an absolute
//!   path resolving inside it. Paths are resolved one component at a time (so
//!   `releases/a/../b/bin/x`, or a link elsewhere into `releases/b`, names `b`) and compared
//!   by components. The registrations are the flat document's and every one each client reads,
//!   in every scope ([`crate::clients::scopes`]): user, local/project, workspace, system and
//!   managed;
//! - every release a running process uses ([`crate::deployment::processes`]): its executable,
//!   working directory or program path lies inside it;
//! - when a registration source cannot be read, every release that would have gone: what we
//!   cannot read may point into any of them, and is named.
//!
//! A process whose `exe` or `cwd` cannot be read (another user's, or one holding capabilities
//! prune lacks, such as a container's init) does not keep every release: on most hosts there
//! is one, and prune would never remove anything. Its `cmdline` is still read (a release it
//! names there stays), and the report names it under `not_compared`, so the operator sees what
//! was not ruled out; run prune as root to read every process.
//!
//! The rest go, oldest first. An entry of `releases/` that is not a directory (a symlink, a
//! file) is not a release and is never removed.
//!
//! Removing re-checks each candidate just before: it must not be what `current` names now
//! (switched by hand since the plan), its own type, not what it points to, must be a
//! directory, and its canonical path must sit directly inside the canonical `releases/`. It
//! is then renamed aside (`releases/.pruning-<name>`, so that no new process can start from
//! it), the processes are scanned again (a server started since the plan still holds it: it is
//! renamed back and kept, saying which), and only then removed with `remove_dir_all`, which
//! removes a symlink found inside the tree as a link and never descends through it.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use crate::clients::ClientKind;
use crate::deployment::declaration::{Declaration, DeclarationError};
use crate::deployment::processes::{self, Releases, Scan};
use crate::deployment::selection::{self, DirectoryKindError};
use crate::fsio::IoError;
use crate::notice::Notify;
use crate::promotion::history::History;
use crate::promotion::prefix::{Journal, Prefix};
use crate::promotion::PromotionError;
use crate::registration::flat_document::FlatDocumentError;

/// What prune decided for one entry of `releases/`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Decision {
    pub(crate) release: String,
    /// Why it stays, or why it may go.
    pub(crate) why: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Plan {
    /// Oldest first.
    pub(crate) remove: Vec<Decision>,
    pub(crate) keep: Vec<Decision>,
}

/// What prune prints.
#[derive(Debug, Serialize)]
pub(crate) struct Pruned {
    pub(crate) ok: bool,
    pub(crate) dry_run: bool,
    pub(crate) prefix: String,
    pub(crate) keep_newest: usize,
    /// Removed (or, in a dry run, to be removed), oldest first.
    pub(crate) remove: Vec<Decision>,
    pub(crate) keep: Vec<Decision>,
    /// Witnesses that could not be read (processes), named, not read as absent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) not_compared: Vec<String>,
}

/// What may hold a release: registrations (`(which, entry)`), the registration sources that
/// could not be read, and the running processes.
#[derive(Debug, Default)]
pub(crate) struct Holders {
    pub(crate) registrations: Vec<(String, Value)>,
    pub(crate) unreadable: Vec<String>,
    pub(crate) processes: Scan,
}

/// A prune, its arguments parsed.
pub(crate) struct PruneOptions<'a> {
    /// `--prefix`, absolute.
    pub(crate) prefix: &'a Path,
    /// `--keep`: how many of the newest releases stay whatever holds them.
    pub(crate) keep: usize,
    pub(crate) dry_run: bool,
    pub(crate) lock_timeout: std::time::Duration,
    /// The flat document, whose registrations hold releases too.
    pub(crate) flat_document: PathBuf,
}

/// Why a prune could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PruneError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    #[error(transparent)]
    DirectoryKind(#[from] DirectoryKindError),
    #[error(transparent)]
    FlatDocument(#[from] FlatDocumentError),
    #[error(transparent)]
    Promotion(#[from] PromotionError),
}

/// `mcp-deploy prune`: under the prefix lock (a dry run takes none), what may hold a release
/// read ([`holders`]), the verdicts made ([`plan`]) and, unless a dry run, the releases that
/// may go removed ([`remove`]).
pub(crate) fn run(opts: &PruneOptions, notify: Notify) -> Result<Pruned, PruneError> {
    let given = opts.prefix;
    // A directory of deployments is refused with the --prefix that would work: prune takes no
    // --config, so the servers it can know of are the built-in ones.
    let decl = Declaration::load(Default::default())?;
    selection::refuse_directory_of_deployments(&decl, given, None, &Default::default())?;
    let prefix = Prefix::open(given)?;
    // A dry run writes nothing, not even the lock or `<prefix>/.mcp-deploy/`: it only reads,
    // so it works for a user who may not write the prefix (what it lists may then be
    // overtaken by a promote running meanwhile; the real run decides again under the lock).
    let _lock = match opts.dry_run {
        true => None,
        false => Some(prefix.lock(opts.lock_timeout, notify)?),
    };
    let state = |name: &str| match opts.dry_run {
        true => prefix.peek_state_file(name),
        false => prefix.state_file(name),
    };
    let journal = state(crate::promotion::prefix::JOURNAL)?;
    if Journal::read(&journal)?.is_some() {
        return Err(PromotionError::Interrupted { path: journal }.into());
    }
    let history = History::read(&state(crate::promotion::prefix::HISTORY)?)?;
    let live = prefix.live_release()?;
    let rollback_to = live.as_deref().and_then(|l| history.before(l).ok());
    let releases = crate::promotion::running::releases_of(&prefix.given);
    let holders = holders(&opts.flat_document, releases.as_ref())?;
    let mut plan = plan(
        &prefix,
        opts.keep,
        live.as_deref(),
        rollback_to.as_deref(),
        &history,
        &holders,
    )?;
    if !opts.dry_run {
        crate::registration::transaction::checkpoint("prune-planned");
        let done = remove(&prefix, &plan, releases.as_ref())?;
        plan.remove
            .retain(|d| !done.kept.iter().any(|k| k.release == d.release));
        plan.keep.extend(done.kept);
    }
    Ok(Pruned {
        ok: true,
        dry_run: opts.dry_run,
        prefix: given.display().to_string(),
        keep_newest: opts.keep,
        remove: plan.remove,
        keep: plan.keep,
        not_compared: holders.processes.unknown().into_iter().collect(),
    })
}

/// Every registration mcp-deploy can read here: the flat document's, and every one each
/// client reads, in every scope; and every process running one of `releases`.
fn holders(flat_document: &Path, releases: Option<&Releases>) -> Result<Holders, PruneError> {
    let mut holders = Holders::default();
    if let Some(flat) = crate::registration::flat_document::read_if_exists(flat_document)? {
        for kind in ClientKind::all() {
            for (name, entry) in flat.servers(kind.name()) {
                holders.registrations.push((
                    format!(
                        "{name} in {} ({}, the flat document)",
                        flat_document.display(),
                        kind.name()
                    ),
                    entry,
                ));
            }
        }
    }
    let found = crate::clients::scopes::every_registration(ClientKind::all());
    holders.registrations.extend(
        found
            .registrations
            .iter()
            .map(|r| (r.describe(), r.entry.clone())),
    );
    holders.unreadable = found.unreadable.iter().map(|u| u.describe()).collect();
    if let Some(r) = releases {
        holders.processes = crate::deployment::processes::scan(r);
    }
    Ok(holders)
}

/// Decide, reading only. `rollback_to`: the release rollback would return to, if any.
pub(crate) fn plan(
    prefix: &Prefix,
    keep: usize,
    live: Option<&str>,
    rollback_to: Option<&str>,
    history: &History,
    holders: &Holders,
) -> Result<Plan, PromotionError> {
    let releases = prefix.releases();
    let releases_real = fs::canonicalize(&releases).map_err(|e| PromotionError::NoReleases {
        path: prefix.given.clone(),
        why: e.to_string(),
    })?;
    let entries =
        fs::read_dir(&releases_real).map_err(|e| IoError::new("cannot list", &releases_real, e))?;
    let mut dirs: Vec<(String, SystemTime, String)> = Vec::new();
    let mut out = Plan {
        remove: Vec::new(),
        keep: Vec::new(),
    };
    for entry in entries {
        let entry = entry.map_err(|e| IoError::new("cannot list", &releases_real, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = fs::symlink_metadata(entry.path())
            .map_err(|e| IoError::new("cannot inspect", &entry.path(), e))?;
        if !meta.file_type().is_dir() {
            out.keep.push(Decision {
                release: name,
                why: "not a release directory (a symlink or a file): never removed".into(),
            });
            continue;
        }
        let (when, how) = match history.last_live_time(&name) {
            Some(t) => (t, "last live".to_string()),
            None => (
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                "never promoted here; unpacked".to_string(),
            ),
        };
        let how = format!("{how} {}", crate::registration::ledger::rfc3339(when));
        dirs.push((name, when, how));
    }
    // Newest first; the name breaks ties so the order is stable.
    dirs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let pointed = pointed_into(prefix, &releases_real, &holders.registrations);
    let unknown: Vec<String> = holders
        .unreadable
        .iter()
        .map(|u| format!("a registration source cannot be read ({u})"))
        .collect();
    for (i, (name, _, how)) in dirs.iter().enumerate() {
        let mut why = Vec::new();
        if live == Some(name.as_str()) {
            why.push("the live release (current)".to_string());
        }
        if rollback_to == Some(name.as_str()) {
            why.push("the release rollback would return to".to_string());
        }
        for (_, reg) in pointed.iter().filter(|(r, _)| r == name) {
            why.push(format!("a registration points into it ({reg})"));
        }
        for h in holders.processes.of(name) {
            why.push(format!("a running process uses it: {}", h.describe()));
        }
        if i < keep {
            why.push(format!("among the {keep} newest ({how})"));
        }
        if why.is_empty() && !unknown.is_empty() {
            why.push(format!(
                "it may be in use: {} (mcp-deploy does not remove what it cannot rule out)",
                unknown.join("; ")
            ));
        }
        if why.is_empty() {
            out.remove.push(Decision {
                release: name.clone(),
                why: format!("older than the {keep} newest ({how})"),
            });
        } else {
            out.keep.push(Decision {
                release: name.clone(),
                why: why.join("; "),
            });
        }
    }
    out.remove.reverse();
    Ok(out)
}

/// `(release, which registration)` for every registration holding a path that resolves inside
/// a release.
fn pointed_into(
    prefix: &Prefix,
    releases_real: &Path,
    registrations: &[(String, Value)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (at, entry) in registrations {
        let mut strings = Vec::new();
        strings_in(entry, &mut strings, 0);
        for s in strings {
            for p in path_candidates(s) {
                let (real, _) = processes::resolve(Path::new(p), &prefix.current());
                if let Some(release) = processes::release_in(&real, releases_real) {
                    if !out.iter().any(|(r, a)| *r == release && a == at) {
                        out.push((release, at.clone()));
                    }
                }
            }
        }
    }
    out
}

/// Every string value (and object key's value) in `v`, depth-bounded.
fn strings_in<'a>(v: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > 32 {
        return;
    }
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings_in(x, out, depth + 1)),
        Value::Object(m) => m.values().for_each(|x| strings_in(x, out, depth + 1)),
        _ => {}
    }
}

/// The absolute paths a string may name: itself, each `:`-separated part (`PATH`-like
/// values), and what follows the first `=` of each (`--config=/opt/...`).
fn path_candidates(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in std::iter::once(s).chain(s.split(':')) {
        for c in [Some(part), part.split_once('=').map(|(_, r)| r)]
            .into_iter()
            .flatten()
        {
            if c.starts_with('/') && c.len() <= 4096 && !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// What the removal did: the releases removed, and those kept after all because a process
/// started from one since the plan.
#[derive(Debug, Default)]
pub(crate) struct Removed {
    pub(crate) removed: Vec<PathBuf>,
    pub(crate) kept: Vec<Decision>,
}

/// Remove the releases of `plan.remove`, each re-checked first, renamed aside and checked for
/// processes again; `releases` is what the processes are scanned against.
pub(crate) fn remove(
    prefix: &Prefix,
    plan: &Plan,
    releases: Option<&Releases>,
) -> Result<Removed, PromotionError> {
    let releases_real = fs::canonicalize(prefix.releases())
        .map_err(|e| IoError::new("cannot resolve", &prefix.releases(), e))?;
    let mut out = Removed::default();
    for d in &plan.remove {
        let path = releases_real.join(&d.release);
        let refuse = |why: &str| {
            IoError::new(
                "refusing to remove",
                &path,
                std::io::Error::other(why.to_string()),
            )
        };
        // `current` switched by hand (no lock) since the plan, to the release about to go:
        // it is live now, and stays. Compared just before each removal.
        match prefix.live_release() {
            Ok(Some(live)) if live == d.release => {
                return Err(refuse(
                    "`current` was switched to it after prune decided (by hand, without the \
                     prefix lock): it is the live release now",
                )
                .into())
            }
            Ok(_) => {}
            Err(e) => return Err(e),
        }
        let meta =
            fs::symlink_metadata(&path).map_err(|e| IoError::new("cannot inspect", &path, e))?;
        if !meta.file_type().is_dir() {
            return Err(refuse("it is no longer a directory (a symlink or a file now)").into());
        }
        let real = fs::canonicalize(&path).map_err(|e| IoError::new("cannot resolve", &path, e))?;
        if real.parent() != Some(releases_real.as_path()) {
            return Err(refuse("it no longer resolves directly inside releases/").into());
        }
        // Aside first: from here no process can start from it by its path; one that did
        // since the plan shows up under either name (the kernel names a renamed directory by
        // its new name).
        let aside_name = format!(".pruning-{}", d.release);
        let aside = releases_real.join(&aside_name);
        fs::rename(&real, &aside).map_err(|e| IoError::new("cannot rename", &real, e))?;
        crate::registration::transaction::checkpoint("prune-renamed-aside");
        if let Some(r) = releases {
            let scan = processes::scan(r);
            let why: Vec<String> = scan
                .holders
                .iter()
                .filter(|h| h.release == d.release || h.release == aside_name)
                .map(|h| format!("a running process uses it: {}", h.describe()))
                .collect();
            if !why.is_empty() {
                fs::rename(&aside, &real)
                    .map_err(|e| IoError::new("cannot rename back", &aside, e))?;
                out.kept.push(Decision {
                    release: d.release.clone(),
                    why: format!("started since prune decided: {}", why.join("; ")),
                });
                continue;
            }
        }
        fs::remove_dir_all(&aside).map_err(|e| IoError::new("cannot remove", &aside, e))?;
        out.removed.push(real);
    }
    if !out.removed.is_empty() || !out.kept.is_empty() {
        crate::fsio::sync_dir(&releases_real)?;
    }
    Ok(out)
}
