//! Where mcp-deploy keeps its own state: the lock and the journal of a client, and the lock of
//! a flat document, in a `.mcp-deploy/` directory (mode 0700, files 0600) inside the directory
//! they belong to: the client's home (`$CLAUDE_CONFIG_DIR` or `~/.claude`, `$CODEX_HOME`,
//! `$GEMINI_CLI_HOME/.gemini`, `~/.grok`) or the flat document's directory.
//!
//! Why there and not in `$XDG_STATE_HOME`: the lock must be shared by every run that changes
//! the same config, and two runs with different HOMEs (a CI user and a promote script with
//! `CLAUDE_CONFIG_DIR` set, say) share nothing under their homes. A per-user state directory
//! keyed by the config's path would give them two locks for one file. Beside the config, the
//! directory is found from the config alone, so whoever can change the config finds its lock.
//! The home is canonicalised first, so two spellings of one directory (a symlink, `..`) find
//! the same lock.
//!
//! Also here: the clean-up of the empty working directories (`mcp-deploy-client.<pid>.*`) of
//! runs that were killed before they could remove their own.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::fsio::IoError;

/// The name of the state directory inside a home.
pub(crate) const DIR: &str = ".mcp-deploy";

/// The prefix of a client call's working directory in the temp dir; the run's pid follows.
pub(crate) const CLIENT_TMP_PREFIX: &str = "mcp-deploy-client.";

/// `<home>/.mcp-deploy/<name>`, the directory created (0700) and the home canonicalised.
/// A `.mcp-deploy` that is a symlink or not a directory is refused: it could send our lock and
/// journal anywhere.
pub(crate) fn file(home: &Path, name: &str) -> Result<PathBuf, IoError> {
    fs::create_dir_all(home).map_err(|e| IoError::new("cannot create directory", home, e))?;
    let home = fs::canonicalize(home).map_err(|e| IoError::new("cannot resolve", home, e))?;
    let dir = home.join(DIR);
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(IoError::new("cannot create directory", &dir, e)),
    }
    let meta = fs::symlink_metadata(&dir).map_err(|e| IoError::new("cannot inspect", &dir, e))?;
    if !meta.file_type().is_dir() {
        return Err(IoError::new(
            "refusing to use",
            &dir,
            std::io::Error::other("it is not a directory (a symlink, a file or a fifo)"),
        ));
    }
    // Someone else's directory could hold a journal of their choosing, which a recovery
    // would restore into our client config. (root may use anyone's: root owns them anyway.)
    let me = rustix::process::geteuid();
    if meta.uid() != me.as_raw() && !me.is_root() {
        return Err(IoError::new(
            "refusing to use",
            &dir,
            std::io::Error::other(format!("it belongs to uid {}, not to us", meta.uid())),
        ));
    }
    if meta.mode() & 0o077 != 0 && meta.uid() == me.as_raw() {
        let _ = fs::set_permissions(&dir, fs::Permissions::from_mode(0o700));
    }
    Ok(dir.join(name))
}

/// Remove the working directories that killed runs left in the temp dir: only ours (same
/// uid), only directories (never through a symlink), only those whose run is gone.
pub(crate) fn sweep_client_tmp_dirs() {
    let tmp = std::env::temp_dir();
    let Ok(entries) = fs::read_dir(&tmp) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(CLIENT_TMP_PREFIX))
            .and_then(|rest| rest.split('.').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() as i32 || alive(pid) {
            continue;
        }
        let path = entry.path();
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_dir() && m.uid() == me => {
                let _ = fs::remove_dir_all(&path);
            }
            _ => {}
        }
    }
}

/// Whether a process `pid` exists (EPERM: it does, someone else's).
pub(crate) fn alive(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        None => false,
        Some(p) => !matches!(
            rustix::process::test_kill_process(p),
            Err(rustix::io::Errno::SRCH)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_files_live_in_a_private_directory_of_the_canonical_home() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        fs::create_dir(&home).unwrap();
        std::os::unix::fs::symlink(&home, dir.path().join("link")).unwrap();
        let a = file(&home, "claude.lock").unwrap();
        let b = file(&dir.path().join("link/../home"), "claude.lock").unwrap();
        let c = file(&dir.path().join("link"), "claude.lock").unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        let mode = fs::metadata(a.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_symlinked_state_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join(DIR)).unwrap();
        let err = file(dir.path(), "x.lock").unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    #[test]
    fn liveness() {
        assert!(alive(std::process::id() as i32));
        assert!(!alive(0x3fff_fff0));
    }
}
