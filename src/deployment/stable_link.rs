//! The stable link of a release layout: `<prefix>/bin/<exe> -> ../current/bin/<exe>`, the path a
//! registration names so that a promote never has to re-register. Nothing in a release creates
//! it, so the first promote of a new prefix does ([`StableLink::missing`]): the preflight checks
//! the declared command as it will resolve once the link exists, and the switch creates it.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::deployment::declaration::Layout;

/// A stable link the deployment lacks: where it goes, and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StableLink {
    /// `<prefix>/bin/codetools`, as declared.
    pub(crate) path: PathBuf,
    /// `../current/bin/codetools`: relative, so that it follows `current` wherever the prefix
    /// is mounted.
    pub(crate) target: PathBuf,
}

impl StableLink {
    /// The link `command` (declared, absolute) needs in a release layout at `prefix`, when
    /// nothing is at its path yet: `command` lies under the prefix but not under `current` or
    /// `releases/`, and every directory between the prefix and it is a real directory or
    /// missing (never a symlink: the link must be made where the declaration says, nowhere
    /// else). `None` when something is at the path (the checks judge it as it is), or the
    /// command is not a stable path of this prefix.
    pub(crate) fn missing(layout: Layout, prefix: &Path, command: &Path) -> Option<StableLink> {
        if layout != Layout::Release {
            return None;
        }
        let rel = command.strip_prefix(prefix).ok()?;
        let parts: Vec<&std::ffi::OsStr> = rel
            .components()
            .map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let first = parts.first()?;
        if parts.len() < 2 || *first == "current" || *first == "releases" {
            return None;
        }
        match fs::symlink_metadata(command) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            _ => return None,
        }
        let mut dir = prefix.to_path_buf();
        for part in &parts[..parts.len() - 1] {
            dir.push(part);
            match fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                _ => return None,
            }
        }
        let mut target = PathBuf::new();
        for _ in 1..parts.len() {
            target.push("..");
        }
        target.push("current");
        target.push(rel);
        Some(StableLink {
            path: command.to_path_buf(),
            target,
        })
    }

    /// The path the command reaches once the link exists: `<prefix>/current/<rel>`.
    pub(crate) fn through_current(&self, prefix: &Path) -> PathBuf {
        let rel = self.path.strip_prefix(prefix).unwrap_or(&self.path);
        prefix.join("current").join(rel)
    }

    /// Create it: the missing directories (0755), then the link. Fails, changing nothing more,
    /// when anything appeared at the path meanwhile (`symlink` does not replace).
    pub(crate) fn create(&self) -> io::Result<()> {
        if let Some(parent) = self.path.parent() {
            fs::create_dir_all(parent)?;
        }
        std::os::unix::fs::symlink(&self.target, &self.path)
    }

    /// Remove it again (the undo of a first promote), only while it is still the link this
    /// run made: a file or another link put there since is someone else's.
    pub(crate) fn remove_if_ours(&self) -> bool {
        match fs::read_link(&self.path) {
            Ok(t) if t == self.target => fs::remove_file(&self.path).is_ok(),
            _ => false,
        }
    }

    /// As a run says it: `bin/codetools -> ../current/bin/codetools`.
    pub(crate) fn describe(&self, prefix: &Path) -> String {
        let rel = self.path.strip_prefix(prefix).unwrap_or(&self.path);
        format!("{} -> {}", rel.display(), self.target.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_stable_path_of_a_release_layout_is_a_link_to_plan() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let cmd = p.join("bin/codetools");
        let l = StableLink::missing(Layout::Release, p, &cmd).unwrap();
        assert_eq!(l.target, Path::new("../current/bin/codetools"));
        assert_eq!(l.through_current(p), p.join("current/bin/codetools"));
        let deep = StableLink::missing(Layout::Release, p, &p.join("a/b/x")).unwrap();
        assert_eq!(deep.target, Path::new("../../current/a/b/x"));
        // Not for a prefix layout, a path through current or releases/, a file at the top.
        assert!(StableLink::missing(Layout::Prefix, p, &cmd).is_none());
        assert!(StableLink::missing(Layout::Release, p, &p.join("current/bin/x")).is_none());
        assert!(StableLink::missing(Layout::Release, p, &p.join("releases/x")).is_none());
        assert!(StableLink::missing(Layout::Release, p, &p.join("x")).is_none());
        assert!(StableLink::missing(Layout::Release, p, Path::new("/usr/bin/x")).is_none());
        // Made, then something is there: nothing more to plan; the undo removes only ours.
        l.create().unwrap();
        assert_eq!(fs::read_link(&cmd).unwrap(), l.target);
        assert!(StableLink::missing(Layout::Release, p, &cmd).is_none());
        assert!(l.create().is_err());
        assert!(l.remove_if_ours());
        std::os::unix::fs::symlink("/bin/true", &cmd).unwrap();
        assert!(!l.remove_if_ours());
        assert!(cmd.symlink_metadata().is_ok());
    }

    /// A `bin/` that is a symlink (to anywhere) is never written through.
    #[test]
    fn a_directory_on_the_way_that_is_a_symlink_plans_nothing() {
        let d = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), d.path().join("bin")).unwrap();
        let cmd = d.path().join("bin/codetools");
        assert!(StableLink::missing(Layout::Release, d.path(), &cmd).is_none());
    }
}
