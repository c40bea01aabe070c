//! One release layout's prefix as promote changes it: its lock, `current` and its atomic
//! switch, and the promote journal.
//!
//! The switch: a new symlink `releases/<sha>` at a temporary name in the prefix, renamed over
//! `current` (rename(2) replaces the old link in one step: a reader sees the old release or
//! the new, never none), then the prefix directory synced so that the rename survives a power
//! loss. The link is relative, so a prefix moved or mounted elsewhere still points into its
//! own `releases/`.
//!
//! The journal (`<prefix>/.mcp-deploy/promote.journal.json`, written before the switch,
//! removed after the history records the promote) says what was live before. A run that
//! finds one *undoes* the interrupted promote: `current` back to the release it names, and
//! any registration change the interrupted run had committed undone. Undo rather than
//! complete, because the interrupted run never verified the new release with its clients and
//! because the registration transaction recovers the same way (see
//! [`crate::registration::transaction`]); the next promote then starts from a state that was
//! whole.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fsio::{self, IoError};
use crate::notice::{Notice, Notify};
use crate::promotion::PromotionError;
use crate::registration::lock::Lock;
use crate::registration::transaction::Change;

/// Why `releases/<name>` is not a release `current` may be pointed (back) at.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReleaseDirError {
    #[error("{name:?} is not the name of a release directory")]
    NotAName { name: String },
    #[error(transparent)]
    Layout(#[from] crate::deployment::layout::LayoutError),
}

/// The promote journal's name in `<prefix>/.mcp-deploy/`.
pub(crate) const JOURNAL: &str = "promote.journal.json";
/// The promote history's name in `<prefix>/.mcp-deploy/`.
pub(crate) const HISTORY: &str = "history.ndjson";

/// A release layout's prefix: as given (what rendering and registration name) and as its
/// canonical path (where every file operation happens, resolved once at the start so that a
/// component swapped for a symlink mid-run cannot redirect it).
#[derive(Debug, Clone)]
pub(crate) struct Prefix {
    pub(crate) given: PathBuf,
    pub(crate) real: PathBuf,
}

impl Prefix {
    pub(crate) fn open(given: &Path) -> Result<Prefix, PromotionError> {
        let real = fs::canonicalize(given).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => PromotionError::NoPrefix {
                path: given.to_path_buf(),
            },
            _ => IoError::new("cannot resolve", given, e).into(),
        })?;
        if !real.is_dir() {
            return Err(IoError::new(
                "refused",
                given,
                std::io::Error::other("the prefix is not a directory"),
            )
            .into());
        }
        Ok(Prefix {
            given: given.to_path_buf(),
            real,
        })
    }

    pub(crate) fn current(&self) -> PathBuf {
        self.real.join("current")
    }

    pub(crate) fn releases(&self) -> PathBuf {
        self.real.join("releases")
    }

    /// `<prefix>/releases/<sha>`: the path, whatever is there (the gate checks it).
    pub(crate) fn release(&self, sha: &str) -> PathBuf {
        self.releases().join(sha)
    }

    /// `<prefix>/.mcp-deploy/<name>`, the directory made private (see [`crate::state`]).
    pub(crate) fn state_file(&self, name: &str) -> Result<PathBuf, IoError> {
        crate::state::file(&self.real, name)
    }

    /// `<prefix>/.mcp-deploy/<name>` for reading only (a dry run): nothing is created. A
    /// `.mcp-deploy` that is not a directory is refused, as [`Prefix::state_file`] refuses it.
    pub(crate) fn peek_state_file(&self, name: &str) -> Result<PathBuf, IoError> {
        let dir = self.real.join(crate::state::DIR);
        match dir.symlink_metadata() {
            Ok(m) if !m.file_type().is_dir() => Err(IoError::new(
                "refusing to use",
                &dir,
                std::io::Error::other("it is not a directory (a symlink, a file or a fifo)"),
            )),
            _ => Ok(dir.join(name)),
        }
    }

    pub(crate) fn journal_path(&self) -> Result<PathBuf, IoError> {
        self.state_file(JOURNAL)
    }

    pub(crate) fn history_path(&self) -> Result<PathBuf, IoError> {
        self.state_file(HISTORY)
    }

    /// Take the prefix lock, waiting up to `timeout`; a wait is told to `notify`.
    pub(crate) fn lock(&self, timeout: Duration, notify: Notify) -> Result<Lock, PromotionError> {
        let path = self.state_file("prefix.lock")?;
        Ok(Lock::acquire(&path, timeout, |holder| {
            notify(Notice::LockWait {
                path: path.clone(),
                holder: holder.to_string(),
                timeout,
            })
        })?)
    }

    /// The release `current` points at (its directory name under `releases/`), `None` when
    /// there is no `current` yet. Anything but a symlink to a directory directly inside
    /// `releases/` is refused: switching it would lose a file or hide the breakage.
    pub(crate) fn live_release(&self) -> Result<Option<String>, PromotionError> {
        let path = self.current();
        let meta = match path.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(IoError::new("cannot inspect", &path, e).into()),
            Ok(m) => m,
        };
        if !meta.file_type().is_symlink() {
            let what = if meta.is_dir() {
                "a directory"
            } else if meta.is_file() {
                "a regular file"
            } else {
                "a special file"
            };
            return Err(PromotionError::CurrentNotALink { path, what });
        }
        let broken = |why: String| PromotionError::CurrentBroken {
            path: path.clone(),
            why,
        };
        let target = fs::canonicalize(&path).map_err(|e| {
            let link = fs::read_link(&path)
                .map(|t| format!("it points to {} ", t.display()))
                .unwrap_or_default();
            broken(format!("{link}which cannot be resolved ({e})"))
        })?;
        let releases = fs::canonicalize(self.releases()).map_err(|e| {
            broken(format!(
                "{} cannot be resolved ({e})",
                self.releases().display()
            ))
        })?;
        if !target.is_dir() || target.parent() != Some(releases.as_path()) {
            return Err(broken(format!(
                "it resolves to {}, not a directory directly inside {}",
                target.display(),
                releases.display()
            )));
        }
        let name = target
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| broken("its release's name is not UTF-8".into()))?;
        Ok(Some(name.to_string()))
    }

    /// `releases/<name>` is a release `current` may be pointed back at: a directory, not a
    /// link, directly inside `releases/` (a journal naming `releases/evil -> /etc`, or a
    /// release removed since, must never become `current`).
    pub(crate) fn check_release_dir(&self, name: &str) -> Result<(), ReleaseDirError> {
        if !is_release_name(name) {
            return Err(ReleaseDirError::NotAName {
                name: name.to_string(),
            });
        }
        crate::deployment::layout::check_candidate(&self.real, &self.release(name))?;
        Ok(())
    }

    /// Whether `current` is still the very link a switch to `sha` wrote (`releases/<sha>`, by
    /// its text): the compare of an undo's compare-and-swap. By the text, not by what it
    /// resolves to: the release swapped for a link since is still this run's switch to undo.
    pub(crate) fn is_switched_to(&self, sha: &str) -> bool {
        fs::read_link(self.current()).is_ok_and(|t| t == Path::new("releases").join(sha))
    }

    /// What `current` names now, for a message: the link's text, or why there is none.
    pub(crate) fn describe_link(&self) -> String {
        match fs::read_link(self.current()) {
            Ok(t) => format!("-> {}", t.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "nothing (no current)".into(),
            Err(e) => format!("something that is not a symlink ({e})"),
        }
    }

    /// `current` as a sentence's noun: `releases/<sha>`, `nothing (no current)`, or why it
    /// cannot be read.
    pub(crate) fn describe_live(live: &Result<Option<String>, PromotionError>) -> String {
        match live {
            Ok(Some(r)) => format!("releases/{r}"),
            Ok(None) => "nothing (no current)".into(),
            Err(e) => format!("something promote cannot read ({e})"),
        }
    }

    /// Point `current` at `releases/<to>` (or remove it, for `None`: there was none before),
    /// atomically, and sync the prefix.
    pub(crate) fn switch(&self, to: Option<&str>) -> Result<(), IoError> {
        let current = self.current();
        match to {
            Some(sha) => {
                let tmp = self
                    .real
                    .join(format!(".current.mcp-deploy.{}", std::process::id()));
                // Left by a run of the same pid that was killed (pids are reused): ours.
                if tmp
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    let _ = fs::remove_file(&tmp);
                }
                std::os::unix::fs::symlink(format!("releases/{sha}"), &tmp)
                    .map_err(|e| IoError::new("cannot create the symlink", &tmp, e))?;
                if let Err(e) = fs::rename(&tmp, &current) {
                    let _ = fs::remove_file(&tmp);
                    return Err(IoError::new("cannot rename into place", &current, e));
                }
            }
            None => match fs::remove_file(&current) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(IoError::new("cannot remove", &current, e)),
            },
        }
        fsio::sync_dir(&self.real)
    }
}

/// A name directly inside `releases/`: one plain path component.
pub(crate) fn is_release_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// One client's registration changes that an interrupted promote had committed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Committed {
    pub(crate) client: String,
    pub(crate) changes: Vec<Change>,
}

/// The promote journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Journal {
    pub(crate) journal: u32,
    /// The history record's id, once it is written: a journal whose id the history holds is
    /// of a promote that committed (only its removal was interrupted).
    pub(crate) id: String,
    pub(crate) pid: u32,
    pub(crate) action: String,
    /// The release live before (`None`: there was no `current`).
    pub(crate) from: Option<String>,
    pub(crate) to: String,
    /// The flat document the registration step writes.
    #[serde(rename = "registered_document")]
    pub(crate) flat_document: PathBuf,
    /// Registration changes committed before the promote itself committed.
    /// (`registered` on disk, as journals written by earlier releases have it.)
    #[serde(default, rename = "registered")]
    pub(crate) committed: Vec<Committed>,
}

impl Journal {
    pub(crate) fn write(&self, path: &Path) -> Result<(), IoError> {
        let text = serde_json::to_string_pretty(self).expect("a journal serializes");
        fsio::write_atomic(path, text.as_bytes(), true)
    }

    /// The journal at `path`, if any. A FIFO or garbage there is refused (exit 2), never
    /// deleted: it is the only record of what was live.
    pub(crate) fn read(path: &Path) -> Result<Option<Journal>, PromotionError> {
        let bad = |why: String| PromotionError::BadJournal {
            path: path.to_path_buf(),
            why,
        };
        let text = fsio::read_input_if_exists(path, "promote journal", fsio::limits::DOCUMENT)
            .map_err(|e| bad(e.source.to_string()))?;
        let Some(text) = text else { return Ok(None) };
        // Recovery acts on what the journal says — puts registrations back into *our* client
        // configs, writes the flat document it names — so only a journal we wrote ourselves
        // is acted on. root may use a `.mcp-deploy` another user owns (crate::state), and
        // whoever owns the prefix could plant a journal there whose "previous" entry runs
        // their program, outside any signature; refused (exit 2), kept.
        {
            use std::os::unix::fs::MetadataExt;
            let meta = fs::symlink_metadata(path).map_err(|e| bad(e.to_string()))?;
            let me = rustix::process::geteuid().as_raw();
            if meta.file_type().is_symlink() {
                return Err(bad("it is a symlink, which mcp-deploy never writes".into()));
            }
            if meta.uid() != me {
                return Err(bad(format!(
                    "it belongs to uid {}, not to us (uid {me}): a journal another user wrote \
                     is never acted on, since undoing it would change our client configs",
                    meta.uid()
                )));
            }
            if meta.mode() & 0o022 != 0 {
                return Err(bad(format!(
                    "it can be written by group or others (mode {:o}), so it may not be ours",
                    meta.mode() & 0o7777
                )));
            }
        }
        let journal: Journal = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        // The releases it names become a link's target on recovery: a plain name in
        // releases/, never a path.
        for name in journal.from.iter().chain([&journal.to]) {
            if !is_release_name(name) {
                return Err(bad(format!(
                    "{name:?} is not the name of a release directory"
                )));
            }
        }
        Ok(Some(journal))
    }

    pub(crate) fn remove(path: &Path) -> Result<(), IoError> {
        match fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(IoError::new("cannot remove", path, e)),
        }
        if let Some(dir) = path.parent() {
            fsio::sync_dir(dir)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> (tempfile::TempDir, Prefix) {
        let dir = tempfile::tempdir().unwrap();
        for sha in ["a", "b"] {
            fs::create_dir_all(dir.path().join("releases").join(sha)).unwrap();
        }
        let p = Prefix::open(dir.path()).unwrap();
        (dir, p)
    }

    #[test]
    fn switch_replaces_current_and_leaves_no_temporary() {
        let (dir, p) = layout();
        assert_eq!(p.live_release().unwrap(), None);
        p.switch(Some("a")).unwrap();
        assert_eq!(p.live_release().unwrap().as_deref(), Some("a"));
        p.switch(Some("b")).unwrap();
        assert_eq!(p.live_release().unwrap().as_deref(), Some("b"));
        assert_eq!(
            fs::read_link(dir.path().join("current")).unwrap(),
            Path::new("releases/b")
        );
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(".current"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        p.switch(None).unwrap();
        assert_eq!(p.live_release().unwrap(), None);
    }

    #[test]
    fn a_journal_naming_a_path_is_refused() {
        let (dir, _) = layout();
        let p = dir.path().join("j.json");
        let j = |from: &str| {
            format!(
                r#"{{"journal":1,"id":"x","pid":1,"action":"promote","from":"{from}","to":"b",
                   "registered_document":"/d"}}"#
            )
        };
        fs::write(&p, j("a")).unwrap();
        assert_eq!(
            Journal::read(&p).unwrap().unwrap().from.as_deref(),
            Some("a")
        );
        for bad in ["../../etc", "a/b", ".."] {
            fs::write(&p, j(bad)).unwrap();
            let e = Journal::read(&p).unwrap_err();
            assert!(e.to_string().contains("not the name of a release"), "{e}");
        }
    }

    #[test]
    fn a_current_that_is_not_a_link_into_releases_is_refused() {
        let (dir, p) = layout();
        fs::write(dir.path().join("current"), b"x").unwrap();
        let e = p.live_release().unwrap_err();
        assert!(e.to_string().contains("a regular file"), "{e}");
        fs::remove_file(dir.path().join("current")).unwrap();
        std::os::unix::fs::symlink("releases/gone", dir.path().join("current")).unwrap();
        let e = p.live_release().unwrap_err();
        assert!(e.to_string().contains("cannot be resolved"), "{e}");
        fs::remove_file(dir.path().join("current")).unwrap();
        std::os::unix::fs::symlink("/", dir.path().join("current")).unwrap();
        let e = p.live_release().unwrap_err();
        assert!(
            e.to_string().contains("not a directory directly inside"),
            "{e}"
        );
    }
}
