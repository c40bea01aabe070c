//! What `mcp-deploy --version` says: the package version and the commit the binary was built
//! from, with whether the tree had uncommitted changes. A tool whose job is proving commits
//! should be able to prove its own.
//!
//! `build.rs` includes this file too (`#[path]`), runs git at build time and passes the result
//! in `MCP_DEPLOY_GIT` ([`crate::VERSION`]); without git (a source tarball, `cargo package`) the version says
//! "commit unknown" and the build still succeeds.

use std::path::Path;
use std::process::Command;

/// What git says about the tree at `dir`: `commit <sha>` or `commit <sha>, dirty`, or
/// `None` when there is no git or no repository.
pub(crate) fn describe(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let head = git(&["rev-parse", "HEAD"])?;
    let sha = head.trim();
    if sha.is_empty() || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|s| !s.trim().is_empty())
        .unwrap_or(false);
    Some(if dirty {
        format!("commit {sha}, dirty")
    } else {
        format!("commit {sha}")
    })
}

/// `describe`, or the fallback a build without git gets.
pub(crate) fn describe_or_unknown(dir: &Path) -> String {
    describe(dir).unwrap_or_else(|| "commit unknown: built without git".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_outside_any_repository_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        // GIT_CEILING_DIRECTORIES is not needed: a temp dir is not inside this repository,
        // and a git repository above /tmp would be a strange machine.
        assert_eq!(describe(dir.path()), None);
        assert_eq!(
            describe_or_unknown(dir.path()),
            "commit unknown: built without git"
        );
    }

    #[test]
    fn a_repository_is_described_by_its_head_and_dirtiness() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap();
            assert!(ok.status.success(), "git {args:?}: {ok:?}");
            String::from_utf8(ok.stdout).unwrap()
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("f"), "1").unwrap();
        git(&["add", "f"]);
        git(&["commit", "-qm", "one"]);
        let sha = git(&["rev-parse", "HEAD"]).trim().to_string();
        assert_eq!(describe(dir.path()), Some(format!("commit {sha}")));
        std::fs::write(dir.path().join("f"), "2").unwrap();
        assert_eq!(describe(dir.path()), Some(format!("commit {sha}, dirty")));
    }

    #[test]
    fn the_built_version_names_a_commit_or_says_why_not() {
        let long = crate::VERSION;
        assert!(long.starts_with(env!("CARGO_PKG_VERSION")));
        assert!(long.contains(" (commit "), "{long}");
    }
}
