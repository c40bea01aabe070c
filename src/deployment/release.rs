//! A deployment's release, resolved once per server per run: every check of a run reads this
//! one value, never `<prefix>/current` again.
//!
//! Why: `current` is switched by promote at any moment (a new symlink renamed over the old).
//! A verifier that reads it once per check can report, in one report, a `commit` of one
//! release and a `mcp-registration` inside another. So `current` is read here once — one
//! `lstat` and one `readlink` — and the directory it named is what the `release`, `commit`,
//! `content`, `signature` and `mcp-registration` checks all see: a path that leads through
//! `current` (the stable `bin/<exe> -> ../current/bin/<exe>`, a `VERSION -> current/VERSION`)
//! is resolved with `current` taken as a link to that directory ([`Release::via`]), as promote's
//! preflight already resolves it for the candidate it is about to make live.
//!
//! Three views: a release layout as it is ([`Release::resolve`]), a prefix layout (its own root),
//! and promote's candidate ([`Release::candidate`]: `<prefix>/releases/<sha>` checked as if
//! `current` already named it). What cannot be resolved is kept as the error, and each check that
//! needs the release fails with it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::deployment::declaration::Layout;
use crate::deployment::layout::{
    self, canonical, check_candidate, read_version, Evidence, LayoutError, Sha,
};
use crate::deployment::python_commit;
use crate::deployment::stable_link::StableLink;

/// A deployment's release as one run sees it.
#[derive(Debug, Clone)]
pub(crate) struct Release {
    prefix: PathBuf,
    layout: Layout,
    view: View,
}

#[derive(Debug, Clone)]
enum View {
    /// A release layout as it is: `<prefix>/current`, read once.
    Current(Result<Current, Arc<LayoutError>>),
    /// A prefix layout: the prefix is its own root (canonical, or why not).
    Prefix(Result<PathBuf, Arc<LayoutError>>),
    /// promote's preflight: this release directory, as if `current` already named it.
    Candidate(PathBuf),
}

/// What `<prefix>/current` was when it was read.
#[derive(Debug, Clone)]
struct Current {
    /// It is a symlink (a plain directory fails the `release` check, and is still the root).
    is_link: bool,
    /// `realpath(<prefix>)/current`: the path a resolution through `current` reaches.
    link: PathBuf,
    /// The canonical directory it named.
    dir: PathBuf,
}

impl Release {
    /// The deployment at `prefix` as it is now: `current` read once (release layouts).
    pub(crate) fn resolve(prefix: &Path, layout: Layout) -> Release {
        let view = match layout {
            Layout::Release => View::Current(read_current(prefix).map_err(Arc::new)),
            Layout::Prefix => View::Prefix(
                fs::canonicalize(prefix)
                    .map_err(|source| LayoutError::UnresolvablePrefix {
                        path: prefix.to_path_buf(),
                        source,
                    })
                    .map_err(Arc::new),
            ),
        };
        Release {
            prefix: prefix.to_path_buf(),
            layout,
            view,
        }
    }

    /// promote's preflight: the release directory `dir` (`<prefix>/releases/<sha>`) checked in
    /// place of the one `current` names now, as if `current` already pointed at it.
    pub(crate) fn candidate(prefix: &Path, layout: Layout, dir: &Path) -> Release {
        Release {
            prefix: prefix.to_path_buf(),
            layout,
            view: View::Candidate(dir.to_path_buf()),
        }
    }

    pub(crate) fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The stable link the candidate's first promote creates for the declared `command`
    /// ([`StableLink::missing`]); `None` outside the candidate view, or when something is at
    /// the path already.
    pub(crate) fn planned_link(&self, command: &Path) -> Option<StableLink> {
        match &self.view {
            View::Candidate(_) => StableLink::missing(self.layout, &self.prefix, command),
            View::Current(_) | View::Prefix(_) => None,
        }
    }

    /// The path the declared `command` reaches in this view: itself, or, where the candidate's
    /// promote will create its stable link, the path through `current` that link will be.
    pub(crate) fn declared_path(&self, command: &Path) -> PathBuf {
        match self.planned_link(command) {
            Some(link) => link.through_current(&self.prefix),
            None => command.to_path_buf(),
        }
    }

    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    /// Whether this is promote's candidate rather than the deployment as it is.
    pub(crate) fn is_candidate(&self) -> bool {
        matches!(self.view, View::Candidate(_))
    }

    /// The `release` check (release layouts): `current` is a symlink to a directory directly
    /// inside `releases/`; for the candidate, a directory (never a link) directly inside it.
    pub(crate) fn check(&self) -> Result<String, LayoutError> {
        let current = self.prefix.join("current");
        match &self.view {
            View::Candidate(dir) => check_candidate(&self.prefix, dir),
            View::Prefix(_) => Ok(format!("{} is a prefix layout", self.prefix.display())),
            View::Current(read) => {
                let c = read.as_ref().map_err(shared)?;
                if !c.is_link {
                    return Err(LayoutError::PlainDirectory { path: current });
                }
                let releases = canonical(&self.prefix.join("releases"))?;
                if c.dir.parent() != Some(releases.as_path()) {
                    return Err(LayoutError::NotInReleases {
                        path: current,
                        target: c.dir.clone(),
                        releases,
                    });
                }
                Ok(format!("{} -> {}", current.display(), c.dir.display()))
            }
        }
    }

    /// The directory whose files are the release: the one `current` named, the prefix of a
    /// prefix layout (as given), or the candidate.
    pub(crate) fn dir(&self) -> Result<PathBuf, LayoutError> {
        match &self.view {
            View::Current(read) => Ok(read.as_ref().map_err(shared)?.dir.clone()),
            View::Prefix(_) => Ok(self.prefix.clone()),
            View::Candidate(dir) => Ok(dir.clone()),
        }
    }

    /// The canonical containment root a registered command must resolve inside.
    pub(crate) fn containment_root(&self) -> Result<PathBuf, LayoutError> {
        match &self.view {
            View::Current(read) => Ok(read.as_ref().map_err(shared)?.dir.clone()),
            View::Prefix(real) => Ok(real.as_ref().map_err(shared)?.clone()),
            View::Candidate(dir) => canonical(dir),
        }
    }

    /// `(realpath(<prefix>)/current, release)`: a path resolved through this view takes
    /// `current` as a link to the release it read (or the candidate), whatever `current` is on
    /// disk by then. `None` for a prefix layout, or a `current` that could not be read.
    pub(crate) fn via(&self) -> Option<(PathBuf, PathBuf)> {
        match &self.view {
            // A plain directory `current` is its own release (and fails the `release` check).
            View::Current(Ok(c)) if c.is_link => Some((c.link.clone(), c.dir.clone())),
            View::Current(_) | View::Prefix(_) => None,
            View::Candidate(dir) => {
                let prefix = fs::canonicalize(&self.prefix).ok()?;
                Some((prefix.join("current"), fs::canonicalize(dir).ok()?))
            }
        }
    }

    /// The commit the release says it is, and where that was read: its VERSION, cross-checked
    /// with `<prefix>/VERSION` when a release layout also has one (read through this view, so a
    /// `VERSION -> current/VERSION` is the release's own). For the candidate, its VERSION and
    /// `<prefix>/VERSION` as it will read after the switch.
    pub(crate) fn deployed_commit(&self) -> Result<(Sha, String), LayoutError> {
        let candidate = self.is_candidate();
        let version = self.dir()?.join("VERSION");
        let sha = read_version(&version)?;
        let mut evidence = format!("{} holds {sha}", version.display());
        let outer = self.prefix.join("VERSION");
        if !(self.layout == Layout::Release || candidate) || outer.symlink_metadata().is_err() {
            return Ok((sha, evidence));
        }
        if candidate && self.through(&outer) != outer {
            // A link through `current/` names the candidate's own VERSION once it is live.
            evidence.push_str(&format!(
                "; {} leads through current/ and will follow the switch",
                outer.display()
            ));
            return Ok((sha, evidence));
        }
        let outer_sha = layout::read_version_at(&outer, &self.through(&outer))?;
        if outer_sha != sha {
            return Err(LayoutError::VersionsDisagree {
                outer,
                outer_sha,
                version,
                sha,
                after_switch: candidate,
            });
        }
        evidence.push_str(&format!("; {} agrees", outer.display()));
        Ok((sha, evidence))
    }

    /// The commit evidence of the deployment. A release layout's is its release's VERSION
    /// (required). A prefix layout's is `<prefix>/VERSION` when present; else, for a Python
    /// (wheel/venv) prefix, the `direct_url.json` that pip writes for a VCS install (PEP 610,
    /// `vcs_info.commit_id`) of the one distribution whose `RECORD` lists the declared `command`
    /// (`<prefix>/bin/<exe>`). Which distribution is decided by ownership of the command, not by
    /// name: the command is what gets registered, so the distribution that installed it is the
    /// one whose commit matters. Two distributions claiming the same command is refused as
    /// ambiguous.
    pub(crate) fn commit_evidence(&self, command: Option<&Path>) -> Result<Evidence, LayoutError> {
        let outer = self.prefix.join("VERSION");
        if self.layout == Layout::Release || self.is_candidate() || outer.symlink_metadata().is_ok()
        {
            return self
                .deployed_commit()
                .map(|(sha, ev)| Evidence::Commit(sha, ev));
        }
        let Some(command) = command else {
            return Ok(Evidence::Nothing(format!(
                "{} does not exist and the server has no command to find its distribution by",
                outer.display()
            )));
        };
        Ok(python_commit::evidence(&self.prefix, command)?)
    }

    /// `path` as this view reads it: when it is a symlink to `current/...` (the layout's
    /// `VERSION -> current/VERSION`), that file of the release the view resolved, not of whatever
    /// `current` names by now; any other path as it is.
    fn through(&self, path: &Path) -> PathBuf {
        let (Some((_, dir)), Ok(link)) = (self.via(), fs::read_link(path)) else {
            return path.to_path_buf();
        };
        match link.strip_prefix("current") {
            Ok(rest) if link.is_relative() => dir.join(rest),
            _ => path.to_path_buf(),
        }
    }
}

/// The error a view kept, for a check that needs what it could not resolve.
fn shared(e: &Arc<LayoutError>) -> LayoutError {
    LayoutError::Resolved(Arc::clone(e))
}

/// Read `<prefix>/current` once: `lstat`, then `readlink` when it is a symlink; what it names is
/// resolved from the canonical prefix, so `current` itself is not named again.
fn read_current(prefix: &Path) -> Result<Current, LayoutError> {
    let current = prefix.join("current");
    let meta = current
        .symlink_metadata()
        .map_err(|_| LayoutError::Missing {
            path: current.clone(),
        })?;
    let prefix_real = fs::canonicalize(prefix).map_err(|source| LayoutError::Unresolvable {
        path: current.clone(),
        source,
    })?;
    let link_path = prefix_real.join("current");
    let is_link = meta.file_type().is_symlink();
    let (named, link) = if is_link {
        let link = fs::read_link(&current).map_err(|source| LayoutError::Unresolvable {
            path: current.clone(),
            source,
        })?;
        (prefix_real.join(&link), Some(link))
    } else {
        (link_path.clone(), None)
    };
    let dir = fs::canonicalize(&named).map_err(|source| {
        let path = current.clone();
        if source.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
            LayoutError::Loop { path, link }
        } else if is_link {
            LayoutError::Dangling { path, link, source }
        } else {
            LayoutError::Unresolvable { path, source }
        }
    })?;
    if !dir.is_dir() {
        return Err(LayoutError::NotADirectory {
            path: current,
            target: dir,
        });
    }
    Ok(Current {
        is_link,
        link: link_path,
        dir,
    })
}
