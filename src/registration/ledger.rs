//! The audit ledger: every change to a registration appended as one JSON line to
//! `$XDG_STATE_HOME/mcp-deploy/ledger.ndjson` (`~/.local/state/mcp-deploy/ledger.ndjson`), or
//! `--ledger FILE`. A line says when, who, where, which client and server, the old and new
//! entry (command and args, or type and url — never env or header values), the release
//! and commit it points at, and the client's own release (`client_version`, when known).
//! Lines are appended with one `write` each under the client-config lock, then synced; a
//! reader can parse each line on its own.
//!
//! The ledger records changes; it never decides them. A change that is made (committed, or
//! restored by a rollback or a recovery) stays made when its ledger line cannot be written:
//! the run warns and its exit code is the registration's.

use rustix::fs::OFlags;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

use crate::fsio::IoError;

#[derive(Debug, Serialize)]
pub(crate) struct Record {
    pub(crate) time: String,
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) client: String,
    /// The client's release that made the change (`2.1.332`), when known
    /// ([`crate::clients::version`]); absent for a client without a binary (Cursor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) client_version: Option<String>,
    pub(crate) server: String,
    pub(crate) name: String,
    /// added, updated, removed, or restored (a rollback or a recovery).
    pub(crate) action: String,
    pub(crate) old: Option<Value>,
    pub(crate) new: Option<Value>,
    pub(crate) release: Option<String>,
    pub(crate) commit: Option<String>,
}

impl Record {
    /// A record stamped with the current time, user and host.
    pub(crate) fn now(client: &str, server: &str, name: &str, action: &str) -> Record {
        Record {
            time: rfc3339(SystemTime::now()),
            user: user(),
            host: host(),
            client: client.into(),
            client_version: None,
            server: server.into(),
            name: name.into(),
            action: action.into(),
            old: None,
            new: None,
            release: None,
            commit: None,
        }
    }
}

/// An entry's secret-free form for the ledger: command and args, or type and url; an entry
/// that cannot be parsed is recorded raw minus env and headers.
pub(crate) fn secret_free(raw: &Value) -> Value {
    match crate::entry::Entry::from_value(raw) {
        Ok(e) => e.flat(),
        // Opaque (`{"opaque_sha256": …}`): its fields, args included, may hold a token anywhere.
        Err(_) => crate::content::digest::opaque(raw),
    }
}

/// The default ledger path.
pub(crate) fn default_path() -> PathBuf {
    crate::dirs::state_home()
        .join("mcp-deploy")
        .join("ledger.ndjson")
}

/// Refuse, before anything changes, a ledger path that holds something other than a regular
/// file (a FIFO there would make the append after a registration fail, or block).
pub(crate) fn check_appendable(path: &Path) -> Result<(), IoError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(IoError::new(
            "refused",
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the ledger must be a regular file",
            ),
        )),
        _ => Ok(()),
    }
}

/// Append `records`, one line each.
pub(crate) fn append(path: &Path, records: &[Record]) -> Result<(), IoError> {
    if records.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| IoError::new("cannot create", dir, e))?;
    }
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).expect("a record serializes"));
        text.push('\n');
    }
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: a fifo where the ledger should be fails at once (no reader: ENXIO) instead
    // of blocking a finished run, locks held, for ever; anything but a file is refused.
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        // A FIFO put where the ledger goes must not block the run: refused below.
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| IoError::new("cannot open the ledger", path, e))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(IoError::new(
            "cannot append to the ledger",
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the ledger must be a regular file",
            ),
        ));
    }
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| IoError::new("cannot append to the ledger", path, e))
}

pub(crate) fn user() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| {
            use std::os::unix::fs::MetadataExt;
            // The owner of our own process directory is our uid.
            std::fs::metadata("/proc/self")
                .map(|m| format!("uid {}", m.uid()))
                .unwrap_or_else(|_| "unknown".into())
        })
}

pub(crate) fn host() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// `2026-11-29T23:55:01Z`: UTC, whole seconds (a clock before 1970 reads as the epoch).
pub(crate) fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t.max(UNIX_EPOCH)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400); // a leap day
        assert_eq!(rfc3339(t), "2000-02-29T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_995_145);
        assert_eq!(rfc3339(t), "2026-11-29T23:32:25Z");
    }

    #[test]
    fn appends_one_parseable_line_per_record() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state/ledger.ndjson");
        append(&p, &[Record::now("claude", "s", "n", "added")]).unwrap();
        append(&p, &[Record::now("claude", "s", "n", "removed")]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let actions: Vec<String> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["action"]
                    .as_str()
                    .unwrap()
                    .into()
            })
            .collect();
        assert_eq!(actions, ["added", "removed"]);
    }
}
