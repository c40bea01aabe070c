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
use std::collections::BTreeMap;
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
    /// Who: the kernel's real uid and its name, and any other name the environment claimed.
    #[serde(flatten)]
    pub(crate) by: Actor,
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
            by: Actor::me(),
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

/// Who made a change, as the kernel tells it: the real uid, named from the user database
/// (`id -un`'s answer; `uid N` when the database has no entry). The environment can claim any
/// name (`USER=alice` as root), so a claimed name (`$USER`, `$LOGNAME`, `$SUDO_USER`) is never
/// taken as the actor: it is recorded beside it, as claimed, when it says something the uid
/// does not (another name, or who ran sudo).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub(crate) struct Actor {
    pub(crate) user: String,
    pub(crate) uid: u32,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) claimed: BTreeMap<String, String>,
}

/// The variables that claim a user name, in the order a reader meets them.
const CLAIMS: [&str; 3] = ["USER", "LOGNAME", "SUDO_USER"];

impl Actor {
    /// This process's actor: its real uid (the kernel's), named from the user database, and
    /// the names its environment claims that differ from that name.
    pub(crate) fn me() -> Actor {
        let uid = rustix::process::getuid().as_raw();
        let user = match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
            Ok(Some(u)) => u.name,
            // No entry (a container's arbitrary uid), or the database cannot be read.
            _ => format!("uid {uid}"),
        };
        let claims = CLAIMS.map(|k| (k, std::env::var(k).ok()));
        Actor::of(uid, user, &claims)
    }

    /// The actor of `uid` named `user`, with what `claims` (variable, value) say beside it.
    fn of(uid: u32, user: String, claims: &[(&str, Option<String>)]) -> Actor {
        let claimed = claims
            .iter()
            .filter_map(|(k, v)| Some((k.to_string(), v.clone().filter(|v| !v.is_empty())?)))
            .filter(|(_, v)| *v != user)
            .collect();
        Actor { user, uid, claimed }
    }
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

    /// Issue 36.7: the audit trail believed `$USER`: run as root with `USER=alice` it recorded
    /// `"user":"alice"`, and with `USER` unset `uid 0` although the user database says root.
    #[test]
    fn the_actor_is_the_real_uid_named_from_the_user_database_and_a_claim_stays_a_claim() {
        let root = |claims: &[(&str, Option<String>)]| Actor::of(0, "root".into(), claims);
        let a = root(&[("USER", Some("alice".into())), ("LOGNAME", None)]);
        assert_eq!(a.user, "root");
        assert_eq!(a.uid, 0);
        assert_eq!(a.claimed["USER"], "alice");
        // A claim that agrees with the database, or an empty one, says nothing more.
        let a = root(&[
            ("USER", Some("root".into())),
            ("LOGNAME", Some(String::new())),
        ]);
        assert!(a.claimed.is_empty(), "{a:?}");
        // Who ran sudo is kept beside the actor, never instead of it.
        let a = root(&[("SUDO_USER", Some("bob".into()))]);
        assert_eq!(
            (a.user.as_str(), a.claimed["SUDO_USER"].as_str()),
            ("root", "bob")
        );
        let line = serde_json::to_value(&a).unwrap();
        assert_eq!(
            line,
            serde_json::json!({"user": "root", "uid": 0, "claimed": {"SUDO_USER": "bob"}})
        );
        // This process: the name is the database's for our real uid, whatever USER says.
        let me = Actor::me();
        assert_eq!(me.uid, rustix::process::getuid().as_raw());
        assert!(!me.user.is_empty());
    }

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
