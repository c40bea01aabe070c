//! Which user and project files OpenCode reads, found without its binary.

use std::path::{Path, PathBuf};

/// The user config files OpenCode merges, lowest first.
pub(crate) const USER_FILES: [&str; 3] = ["config.json", "opencode.json", "opencode.jsonc"];

/// `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
pub(crate) fn config_dir() -> PathBuf {
    crate::dirs::var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::dirs::home().join(".config"))
        .join("opencode")
}

/// The user config file OpenCode writes (and so mcp-deploy): the first of `opencode.jsonc`,
/// `opencode.json`, `config.json` that exists (a dangling link counts: it is refused later),
/// else `opencode.jsonc`.
pub(crate) fn config_path() -> PathBuf {
    let dir = config_dir();
    USER_FILES
        .iter()
        .rev()
        .map(|f| dir.join(f))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
        .unwrap_or_else(|| dir.join("opencode.jsonc"))
}

/// From `cwd` up to its git root (OpenCode's worktree), or to `/` outside a repository. The
/// root is the top of the work tree as git finds it ([`crate::clients::git_root`]): an empty
/// `.git` directory or file, a `.git` FIFO, a dangling link or a `gitdir:` pointer to nothing is
/// no root (pinned with 1.18.33, whose `debug config` then reads the files above; 1.3.2 stopped
/// at any `.git` that exists, 1.0.61 only at a repository with a commit). When the files leave
/// doubt, up to the highest root git could take (to `/` when it could be none); and to `/` in a
/// repository without a commit, as 1.0.61 reads there.
pub(crate) fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let tops = crate::clients::git_root::work_tree_tops(cwd);
    let stop = match tops.iter().any(Option::is_none) {
        true => None,
        false => tops.last().cloned().flatten(),
    };
    let stop = stop.filter(|top| !without_a_commit(top));
    let mut out = Vec::new();
    for d in cwd.ancestors() {
        out.push(d.to_path_buf());
        if stop.as_deref() == Some(d) {
            break;
        }
    }
    out
}

/// A work tree whose `.git` directory holds no ref (no file under `refs/`, no `packed-refs`):
/// a fresh `git init`, where OpenCode 1.0.61 finds no commit and takes no root. A `.git` file (a
/// linked worktree, which has a commit) is not.
fn without_a_commit(top: &Path) -> bool {
    let git = top.join(".git");
    if !std::fs::metadata(&git).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    if std::fs::metadata(git.join("packed-refs")).is_ok_and(|m| m.len() > 0) {
        return false;
    }
    !walkdir::WalkDir::new(git.join("refs"))
        .max_depth(16)
        .into_iter()
        .filter_map(Result::ok)
        .any(|e| e.file_type().is_file())
}
