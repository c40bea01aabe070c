//! Pruning old releases: which of `<prefix>/releases/*` may go, and removing them without
//! ever following a link out of the prefix.
//!
//! Releases are ordered by when they were last live: the time of the latest history record
//! that made each live, else (never promoted here, such as one unpacked and waiting) the
//! directory's mtime. The `keep` newest stay, and whatever their age so do: the live release,
//! the release `rollback` would return to, and every release a registration still points
//! into (its command or an argument, as written or resolved, lies inside it), read from the
//! flat document and every client config mcp-deploy can read on this host. The rest go,
//! oldest first. An entry of `releases/` that is not a directory (a symlink, a file) is not a
//! release and is never removed.
//!
//! Removing re-checks each candidate just before: it must not be what `current` names now
//! (switched by hand since the plan), its own type, not what it points to, must be a
//! directory, and its canonical path must sit directly inside the canonical `releases/`; then
//! `remove_dir_all`, which removes a symlink found inside the tree as a link and never
//! descends through it.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::fsio::IoError;
use crate::promotion::history::History;
use crate::promotion::prefix::Prefix;
use crate::promotion::PromotionError;

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
}

/// Registrations to protect: `(where it is registered, its entries)`.
pub(crate) type Registrations = Vec<(String, Map<String, Value>)>;

/// Decide, reading only. `rollback_to`: the release rollback would return to, if any.
pub(crate) fn plan(
    prefix: &Prefix,
    keep: usize,
    live: Option<&str>,
    rollback_to: Option<&str>,
    history: &History,
    registrations: &Registrations,
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
    let pointed = pointed_into(prefix, &releases_real, registrations);
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
        if i < keep {
            why.push(format!("among the {keep} newest ({how})"));
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

/// `(release, which registration)` for every registration whose command or argument lies inside a
/// release, as written or resolved.
fn pointed_into(
    prefix: &Prefix,
    releases_real: &Path,
    registrations: &Registrations,
) -> Vec<(String, String)> {
    let lexical = [prefix.given.join("releases"), releases_real.to_path_buf()];
    let mut out = Vec::new();
    for (at, entries) in registrations {
        for (name, entry) in entries {
            let mut paths: Vec<&str> = Vec::new();
            if let Some(c) = entry.get("command").and_then(Value::as_str) {
                paths.push(c);
            }
            if let Some(args) = entry.get("args").and_then(Value::as_array) {
                paths.extend(args.iter().filter_map(Value::as_str));
            }
            for p in paths {
                let p = Path::new(p);
                if !p.is_absolute() {
                    continue;
                }
                let mut found: Option<String> = None;
                for base in &lexical {
                    if let Ok(rest) = p.strip_prefix(base) {
                        found = rest
                            .components()
                            .next()
                            .map(|c| c.as_os_str().to_string_lossy().into_owned());
                    }
                }
                if found.is_none() {
                    if let Ok(real) = fs::canonicalize(p) {
                        if let Ok(rest) = real.strip_prefix(releases_real) {
                            found = rest
                                .components()
                                .next()
                                .map(|c| c.as_os_str().to_string_lossy().into_owned());
                        }
                    }
                }
                if let Some(release) = found {
                    out.push((release, format!("{name} in {at}")));
                }
            }
        }
    }
    out
}

/// Remove the releases of `plan.remove`, each re-checked first; returns those removed.
pub(crate) fn remove(prefix: &Prefix, plan: &Plan) -> Result<Vec<PathBuf>, PromotionError> {
    let releases_real = fs::canonicalize(prefix.releases())
        .map_err(|e| IoError::new("cannot resolve", &prefix.releases(), e))?;
    let mut removed = Vec::new();
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
        fs::remove_dir_all(&real).map_err(|e| IoError::new("cannot remove", &real, e))?;
        removed.push(real);
    }
    if !removed.is_empty() {
        crate::fsio::sync_dir(&releases_real)?;
    }
    Ok(removed)
}
