//! The top of the git work tree holding a directory, found as `git rev-parse --show-toplevel`
//! finds it — the rule of the clients that ask git for their workspace (copilot 1.0.102 and
//! opencode 1.18.33; docs/clients.md names each client's rule and the release it was pinned
//! against). Without running git: from the directory up, the first `.git` that git accepts.
//!
//! git's discovery (`setup_git_directory_gently_1` in its setup.c), per directory from the start
//! up to `/`:
//! - `.git` missing or a dangling link (its `stat` fails): not here, go up;
//! - `.git` a regular file (after links): a `gitdir: PATH` pointer (a linked worktree, a
//!   submodule). Pointing at a git directory, this is the top; anything else (an empty file,
//!   another text, a pointer to nothing) makes git fail — not in a repository, the search ends;
//! - `.git` anything else (a directory, a FIFO, a socket; never opened): the top when it is a git
//!   directory (`is_git_directory`: a valid `HEAD`, `objects` and `refs` in its common directory),
//!   else go up — an empty `.git` directory does not stop git.
//!
//! Doubt is kept, never resolved in a direction: [`work_tree_tops`] gives every outcome git could
//! reach (a `HEAD` that is a FIFO, a pointer git may or may not accept, a directory that is a
//! bare repository, no `git` on `PATH` — whose client then takes the start directory), and each
//! client reads the files of every outcome. Not modelled: `GIT_DIR`, `GIT_CEILING_DIRECTORIES`,
//! `GIT_DISCOVERY_ACROSS_FILESYSTEM` and `safe.directory` (the client's environment, not the
//! files).

use std::io::Read;
use std::path::{Path, PathBuf};

/// What git may make of a directory: a git directory or not, or we cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    Yes,
    No,
    Unsure,
}

/// Every outcome git could reach from `start`: `Some(top)` for a work tree's top, `None` for
/// "not in a work tree". Exactly one when the files leave no doubt; nearest first.
pub(crate) fn work_tree_tops(start: &Path) -> Vec<Option<PathBuf>> {
    let mut out = walk(start);
    // Without git the client cannot learn a work tree: the start directory is its workspace.
    if which::which("git").is_err() && !out.contains(&None) {
        out.push(None);
    }
    out
}

fn walk(start: &Path) -> Vec<Option<PathBuf>> {
    let mut out = Vec::new();
    for d in start.ancestors() {
        let dotgit = d.join(".git");
        match std::fs::metadata(&dotgit) {
            Ok(m) if m.is_file() => {
                match gitfile(d, &dotgit) {
                    Tri::Yes => out.push(Some(d.to_path_buf())),
                    Tri::No => out.push(None),
                    Tri::Unsure => out.extend([Some(d.to_path_buf()), None]),
                }
                return out;
            }
            Ok(_) => match is_git_directory(&dotgit) {
                Tri::Yes => {
                    out.push(Some(d.to_path_buf()));
                    return out;
                }
                Tri::Unsure => out.push(Some(d.to_path_buf())),
                Tri::No => {}
            },
            // A missing `.git`, a dangling link, a loop: git's `stat` fails and it goes up.
            Err(_) => {}
        }
        // The directory itself a bare repository: git is in a repository without a work tree.
        match is_git_directory(d) {
            Tri::Yes => {
                out.push(None);
                return out;
            }
            Tri::Unsure => out.push(None),
            Tri::No => {}
        }
    }
    out.push(None);
    out
}

/// A `.git` file: git's `read_gitfile_gently` (at most 1 MB, `gitdir: ` then a path, relative to
/// the file's directory, naming a git directory).
fn gitfile(dir: &Path, file: &Path) -> Tri {
    let Ok(f) = std::fs::File::open(file) else {
        return Tri::Unsure;
    };
    let mut buf = Vec::new();
    if f.take(1 << 20 | 1).read_to_end(&mut buf).is_err() {
        return Tri::Unsure;
    }
    if buf.len() > 1 << 20 {
        return Tri::No;
    }
    let Some(rest) = buf.strip_prefix(b"gitdir: ") else {
        return Tri::No;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return Tri::Unsure;
    };
    let path = text.trim_end();
    if path.is_empty() {
        return Tri::No;
    }
    is_git_directory(&dir.join(path))
}

/// git's `is_git_directory`: `HEAD` valid (`validate_headref`), `objects` and `refs` in the
/// common directory (`commondir` names it: a linked worktree's has neither of its own). A FIFO
/// is never opened.
fn is_git_directory(g: &Path) -> Tri {
    let head = match head(&g.join("HEAD")) {
        Tri::No => return Tri::No,
        t => t,
    };
    let common = match std::fs::symlink_metadata(g.join("commondir")) {
        Err(e) if absent(&e) => g.to_path_buf(),
        Ok(m) if m.is_file() => match std::fs::read_to_string(g.join("commondir")) {
            Ok(t) => g.join(t.trim_end_matches(['\n', '\r'])),
            Err(_) => return Tri::Unsure,
        },
        _ => return Tri::Unsure,
    };
    for need in [common.join("objects"), common.join("refs")] {
        match std::fs::metadata(&need) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Tri::No,
            Err(e) if absent(&e) => return Tri::No,
            Err(_) => return Tri::Unsure,
        }
    }
    head
}

/// A path that is not there: missing, or below something that is not a directory (a `.git`
/// FIFO's `HEAD`).
fn absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// git's `validate_headref`: a link into `refs/`, or a file holding `ref: refs/...` or an
/// object id.
fn head(path: &Path) -> Tri {
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if absent(&e) => return Tri::No,
        Err(_) => return Tri::Unsure,
    };
    if m.file_type().is_symlink() {
        return match std::fs::read_link(path) {
            Ok(t) if t.starts_with("refs") => Tri::Yes,
            _ => Tri::Unsure,
        };
    }
    if m.is_dir() {
        return Tri::No;
    }
    if !m.is_file() {
        return Tri::Unsure;
    }
    let mut buf = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(256).read_to_end(&mut buf));
    if read.is_err() {
        return Tri::Unsure;
    }
    if let Some(rest) = buf.strip_prefix(b"ref:") {
        let rest = rest.trim_ascii_start();
        return if rest.starts_with(b"refs/") {
            Tri::Yes
        } else {
            Tri::No
        };
    }
    let hex = buf.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if hex >= 40 {
        Tri::Yes
    } else {
        Tri::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(path: &Path) {
        let ok = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(ok.success());
    }

    fn repo(dir: &Path) {
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(dir.join(".git").join(d)).unwrap();
        }
        std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    }

    #[test]
    fn only_a_git_directory_or_a_pointer_to_one_is_a_top_and_an_odd_git_file_ends_the_search() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("top");
        let sub = top.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        repo(&top);
        assert_eq!(walk(&sub), vec![Some(top.clone())]);
        // Go up past these: an empty directory, a dangling link, a FIFO (never opened).
        let dotgit = sub.join(".git");
        std::fs::create_dir(&dotgit).unwrap();
        assert_eq!(walk(&sub), vec![Some(top.clone())]);
        std::fs::remove_dir(&dotgit).unwrap();
        std::os::unix::fs::symlink("/nonexistent", &dotgit).unwrap();
        assert_eq!(walk(&sub), vec![Some(top.clone())]);
        std::fs::remove_file(&dotgit).unwrap();
        fifo(&dotgit);
        assert_eq!(walk(&sub), vec![Some(top.clone())]);
        std::fs::remove_file(&dotgit).unwrap();
        // Stop here, outside any work tree: an empty file, a pointer to nothing.
        std::fs::write(&dotgit, "").unwrap();
        assert_eq!(walk(&sub), vec![None]);
        std::fs::write(&dotgit, "gitdir: /nonexistent\n").unwrap();
        assert_eq!(walk(&sub), vec![None]);
        // A pointer to a git directory (relative, as `git worktree add` may write it).
        std::fs::write(&dotgit, "gitdir: ../.git\n").unwrap();
        assert_eq!(walk(&sub), vec![Some(sub.clone())]);
        // A linked worktree's git directory: `HEAD` and `commondir`, no `objects` or `refs`.
        let linked = top.join(".git/worktrees/sub");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(linked.join("HEAD"), "ref: refs/heads/sub\n").unwrap();
        std::fs::write(linked.join("commondir"), "../..\n").unwrap();
        std::fs::write(&dotgit, format!("gitdir: {}\n", linked.display())).unwrap();
        assert_eq!(walk(&sub), vec![Some(sub.clone())]);
    }

    #[test]
    fn a_head_that_is_a_fifo_is_doubt_both_ways_and_never_opened() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("top");
        let sub = top.join("sub");
        std::fs::create_dir_all(sub.join(".git/objects")).unwrap();
        std::fs::create_dir_all(sub.join(".git/refs")).unwrap();
        fifo(&sub.join(".git/HEAD"));
        repo(&top);
        assert_eq!(walk(&sub), vec![Some(sub.clone()), Some(top.clone())]);
    }
}
