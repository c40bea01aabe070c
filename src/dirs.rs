//! Where this user's files are: the one place that reads `HOME`, `XDG_STATE_HOME` and the
//! clients' own directory variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`).
//! A variable set to the empty string counts as unset, as the clients treat it — except
//! where a client's own rule says otherwise (see `clients::claude::config_path`).

use std::ffi::OsString;
use std::path::PathBuf;

/// `$HOME`, or `/` when it is unset (a service account without one): the clients then look
/// under `/` too.
pub(crate) fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// `$HOME` when it is set and not empty.
pub(crate) fn home_if_set() -> Option<PathBuf> {
    var("HOME").map(PathBuf::from)
}

/// The variable `name` when it is set and not empty.
pub(crate) fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The variable `name` as it is, set to the empty string included.
pub(crate) fn var_raw(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Claude Code's own directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub(crate) fn claude_config_dir() -> PathBuf {
    match var("CLAUDE_CONFIG_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => home().join(".claude"),
    }
}

/// `$XDG_STATE_HOME`, else `~/.local/state`.
pub(crate) fn state_home() -> PathBuf {
    var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".local/state"))
}

/// The home directory of the account this runs as, from the password database
/// (`/etc/passwd`), whatever `HOME` says: where a program that finds no `HOME` (Node's
/// `os.homedir()`, which falls back to `getpwuid_r`) writes. `None` when the account has no
/// line there (NSS beyond files is not asked).
pub(crate) fn account_home() -> Option<PathBuf> {
    let uid = rustix::process::getuid().as_raw().to_string();
    // Read here, not through fsio (which sits above this leaf and asks it for HOME): the file
    // is root's, so no other user can make it a FIFO or a link; the read is bounded all the
    // same (16 MiB, far beyond any real password file).
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(std::fs::File::open("/etc/passwd").ok()?, 16 << 20),
        &mut text,
    )
    .ok()?;
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.len() >= 7 && fields[2] == uid && !fields[5].is_empty())
            .then(|| PathBuf::from(fields[5]))
    })
}
