//! The pin of a deployment: the release a checked launch may start, as the last install or
//! promote that verified it recorded it — its commit and the SHA-256 of its `MANIFEST.sha256`
//! — in `<prefix>/.mcp-deploy/pin.json`.
//!
//! Why a pin: whoever can change a file in a release can also rewrite its manifest and
//! `VERSION`, so the manifest alone proves nothing about which release it is. The pin is the
//! deploying user's word, kept where only that user can write: the launcher takes it only when
//! the file and every directory above it are owned by root or by the prefix's owner and
//! writable by no one else ([`read`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsio;

/// The pin file of the deployment at `prefix`.
pub(crate) fn path(prefix: &Path) -> PathBuf {
    prefix.join(crate::state::DIR).join("pin.json")
}

/// What a pin holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pin {
    /// The declared server it is for.
    pub(crate) server: String,
    /// The release's commit (its `VERSION`).
    pub(crate) commit: String,
    /// The SHA-256 (hex) of the release's `MANIFEST.sha256` bytes.
    pub(crate) manifest_sha256: String,
    /// The command that wrote it (`install`, `promote`, `rollback`) and when.
    pub(crate) by: String,
    pub(crate) at: String,
}

/// Why a pin cannot be taken.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PinError {
    #[error("no pin at {}: no install or promote has recorded the release a checked launch may start", path.display())]
    Missing { path: PathBuf },
    #[error("the pin {} is not taken: {why}", path.display())]
    Unsafe { path: PathBuf, why: String },
    #[error("the pin {} cannot be read: {why}", path.display())]
    Unreadable { path: PathBuf, why: String },
}

impl PinError {
    pub(crate) fn help(&self) -> String {
        match self {
            PinError::Missing { .. } => "run `mcp-deploy install` (or promote) as the deploying user: it records the pin".into(),
            PinError::Unsafe { .. } => "the pin and every directory above it must be owned by root or the prefix's owner and writable by no one else".into(),
            PinError::Unreadable { .. } => "run `mcp-deploy install` (or promote) again: it rewrites the pin".into(),
        }
    }
}

/// The pin of `prefix`, taken only when no one but root or the prefix's owner can have
/// written it: the file (not a link), and every directory from it up to `/`, owned by root or
/// that owner, and not writable by group or others.
pub(crate) fn read(prefix: &Path) -> Result<Pin, PinError> {
    let file = path(prefix);
    let owner = std::fs::metadata(prefix)
        .map_err(|e| PinError::Unreadable {
            path: file.clone(),
            why: format!("{}: {e}", prefix.display()),
        })?
        .uid();
    let unsafe_ = |why: String| PinError::Unsafe {
        path: file.clone(),
        why,
    };
    match std::fs::symlink_metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(PinError::Missing { path: file })
        }
        Err(e) => {
            return Err(PinError::Unreadable {
                path: file.clone(),
                why: e.to_string(),
            })
        }
        Ok(m) if !m.is_file() => return Err(unsafe_("it is not a regular file".into())),
        Ok(_) => {}
    }
    fsio::only_owners_can_replace(&file, &[0, owner]).map_err(unsafe_)?;
    let bytes =
        fsio::read_input_no_follow(&file, "pin", 64 * 1024).map_err(|e| PinError::Unreadable {
            path: file.clone(),
            why: e.to_string(),
        })?;
    serde_json::from_slice(&bytes).map_err(|e| PinError::Unreadable {
        path: file.clone(),
        why: format!("not a pin: {e}"),
    })
}

/// Write the pin of `prefix` (atomically, mode 0644: the launcher runs as the agent's user).
pub(crate) fn write(prefix: &Path, pin: &Pin) -> Result<PathBuf, fsio::IoError> {
    let file = path(prefix);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fsio::IoError::new("cannot create", dir, e))?;
    }
    let mut text = serde_json::to_string_pretty(pin).expect("a pin serializes");
    text.push('\n');
    fsio::write_atomic_mode(&file, text.as_bytes(), 0o644)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn pin() -> Pin {
        Pin {
            server: "ct".into(),
            commit: "c".repeat(40),
            manifest_sha256: "d".repeat(64),
            by: "install".into(),
            at: "now".into(),
        }
    }

    #[test]
    fn a_pin_is_taken_only_where_no_one_else_can_write() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("p");
        std::fs::create_dir(&prefix).unwrap();
        assert!(matches!(read(&prefix), Err(PinError::Missing { .. })));
        write(&prefix, &pin()).unwrap();
        // The temp dir's parents: /tmp is root's and sticky; ours are 0700.
        match read(&prefix) {
            Ok(p) => assert_eq!(p, pin()),
            Err(e) => panic!("{e}"),
        }
        let state = prefix.join(crate::state::DIR);
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = read(&prefix).unwrap_err();
        assert!(e.to_string().contains("writable by group or others"), "{e}");
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(path(&prefix), "{}").unwrap();
        assert!(matches!(read(&prefix), Err(PinError::Unreadable { .. })));
    }
}
