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

/// From `cwd` up to its git root (OpenCode's worktree), or to `/` outside a repository.
pub(crate) fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in cwd.ancestors() {
        out.push(d.to_path_buf());
        if d.join(".git").exists() {
            break;
        }
    }
    out
}
