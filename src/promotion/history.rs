//! The promote history, `<prefix>/.mcp-deploy/history.ndjson`: one JSON line per promote or
//! rollback that switched `current` — when, what kind, from which release to which, for
//! which clients, by whom. Rollback reads it to find the release that was live before;
//! prune reads it to order releases by when they were last live.
//!
//! Appending rewrites the whole file atomically (temp file, rename, directory sync): a crash
//! leaves the old history or the new, never a torn line. A history that cannot be read (a
//! FIFO, a line that is not a record) stops the run with exit 2 and is never rewritten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::registration::ledger::Actor;

use crate::fsio::{self, IoError};
use crate::promotion::PromotionError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// Unique per promote: `<time>-<pid>`.
    pub(crate) id: String,
    pub(crate) time: String,
    /// `promote` or `rollback`.
    pub(crate) action: String,
    pub(crate) server: String,
    /// The release live before (`None`: the first promote).
    pub(crate) from: Option<String>,
    pub(crate) to: String,
    pub(crate) clients: Vec<String>,
    /// Who ran it: user, host, pid.
    pub(crate) by: By,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct By {
    pub(crate) user: String,
    /// The kernel's real uid (`user` is its name from the user database); absent from a
    /// record written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) uid: Option<u32>,
    /// Names the environment claimed that differ from `user` ([`Actor`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) claimed: BTreeMap<String, String>,
    pub(crate) host: String,
    pub(crate) pid: u32,
}

impl By {
    pub(crate) fn me() -> By {
        let Actor { user, uid, claimed } = Actor::me();
        By {
            user,
            uid: Some(uid),
            claimed,
            host: crate::registration::ledger::host(),
            pid: std::process::id(),
        }
    }
}

/// The history as read: its records and its exact text (kept for the append).
/// Why the history names no release to roll back to.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BeforeError {
    #[error("the history {} has no record of {live} becoming live", .path.display())]
    NoRecord { path: PathBuf, live: String },
    /// `time`: when the record says `live` became live.
    #[error("{live} was the first release promoted here ({time}); nothing was live before it")]
    FirstRelease { live: String, time: String },
}

#[derive(Debug, Default)]
pub(crate) struct History {
    pub(crate) path: PathBuf,
    pub(crate) records: Vec<Record>,
    text: String,
}

impl History {
    /// Read `path` (absent: empty). Refused (exit 2): anything but a regular file, over the
    /// document bound, or a line that is not a record.
    pub(crate) fn read(path: &Path) -> Result<History, PromotionError> {
        let text = fsio::read_input_if_exists(path, "promote history", fsio::limits::DOCUMENT)
            .map_err(|e| PromotionError::BadHistory {
                path: path.to_path_buf(),
                line: 0,
                why: e.source.to_string(),
            })?
            .unwrap_or_default();
        let mut records = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let r: Record = serde_json::from_str(line).map_err(|e| PromotionError::BadHistory {
                path: path.to_path_buf(),
                line: i + 1,
                why: e.to_string(),
            })?;
            records.push(r);
        }
        Ok(History {
            path: path.to_path_buf(),
            records,
            text,
        })
    }

    /// Append `record`: the old text, byte for byte, and one line.
    pub(crate) fn append(&mut self, record: Record) -> Result<(), IoError> {
        let mut text = self.text.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&serde_json::to_string(&record).expect("a record serializes"));
        text.push('\n');
        fsio::write_atomic(&self.path, text.as_bytes(), true)?;
        self.text = text;
        self.records.push(record);
        Ok(())
    }

    pub(crate) fn has(&self, id: &str) -> bool {
        self.records.iter().any(|r| r.id == id)
    }

    /// The release that was live before `live` became live: the `from` of the latest record
    /// that made it live. A rollback is a record too, so two rollbacks in a row go back and
    /// forth, like `cd -`.
    pub(crate) fn before(&self, live: &str) -> Result<String, BeforeError> {
        let Some(r) = self.records.iter().rev().find(|r| r.to == live) else {
            return Err(BeforeError::NoRecord {
                path: self.path.clone(),
                live: live.to_string(),
            });
        };
        r.from.clone().ok_or_else(|| BeforeError::FirstRelease {
            live: live.to_string(),
            time: r.time.clone(),
        })
    }

    /// The index of the latest record that made `release` live.
    #[cfg(test)]
    pub(crate) fn last_live(&self, release: &str) -> Option<usize> {
        self.records.iter().rposition(|r| r.to == release)
    }

    /// When `release` last became live, by the history.
    pub(crate) fn last_live_time(&self, release: &str) -> Option<std::time::SystemTime> {
        self.records
            .iter()
            .rev()
            .find(|r| r.to == release)
            .and_then(|r| humantime::parse_rfc3339(&r.time).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, from: Option<&str>, to: &str) -> Record {
        Record {
            id: id.into(),
            time: "2026-11-30T00:00:00Z".into(),
            action: "promote".into(),
            server: "codetools".into(),
            from: from.map(str::to_string),
            to: to.into(),
            clients: vec!["claude".into()],
            by: By::me(),
        }
    }

    #[test]
    fn appends_keep_the_old_bytes_and_rollback_finds_the_previous_release() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("history.ndjson");
        let mut h = History::read(&p).unwrap();
        assert!(h.before("a").is_err());
        h.append(rec("1", None, "a")).unwrap();
        h.append(rec("2", Some("a"), "b")).unwrap();
        let before = std::fs::read(&p).unwrap();
        let mut h = History::read(&p).unwrap();
        assert_eq!(h.before("b").unwrap(), "a");
        assert!(h
            .before("a")
            .unwrap_err()
            .to_string()
            .contains("first release"));
        h.append(rec("3", Some("b"), "a")).unwrap();
        let after = std::fs::read(&p).unwrap();
        assert!(after.starts_with(&before));
        assert_eq!(History::read(&p).unwrap().before("a").unwrap(), "b");
        assert!(h.has("2") && !h.has("4"));
        assert_eq!(h.last_live("a"), Some(2));
    }

    /// Attack: a history that is not UTF-8, or a huge one (a sparse 17 MiB file): refused as
    /// unreadable, never read whole into memory nor rewritten.
    #[test]
    fn a_history_not_utf8_or_over_the_bound_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("history.ndjson");
        std::fs::write(&p, b"{\"id\":\"\xff\"}\n").unwrap();
        let e = History::read(&p).unwrap_err();
        assert!(matches!(e, PromotionError::BadHistory { .. }), "{e}");
        assert!(e.to_string().contains("UTF-8"), "{e}");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(fsio::limits::DOCUMENT + (1 << 20)).unwrap();
        let e = History::read(&p).unwrap_err();
        assert!(matches!(e, PromotionError::BadHistory { .. }), "{e}");
        assert_eq!(
            std::fs::metadata(&p).unwrap().len(),
            fsio::limits::DOCUMENT + (1 << 20)
        );
    }

    #[test]
    fn garbage_or_a_fifo_is_refused_with_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("history.ndjson");
        std::fs::write(&p, "{\"id\":1}\nnot json\n").unwrap();
        let e = History::read(&p).unwrap_err();
        assert!(e.to_string().contains("at line 1"), "{e}");
        let f = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&f)
            .status()
            .unwrap()
            .success());
        let e = History::read(&f).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }
}
