//! Promoting a release of a release layout: switching `<prefix>/current` atomically, the
//! prefix's lock, the promote journal that lets the next run undo an interrupted switch, the
//! promote history that rollback reads, and pruning old releases; and the transition itself
//! ([`transition`]: the algorithm, its orchestration, the commit; its steps in `preflight.rs`,
//! `switch.rs` (and its undo), `register.rs` (and the undo of registration changes),
//! `recovery.rs` (of an interrupted promote)), which wraps the registration session
//! (`registration/`) between the switch and the commit.
//!
//! Everything mcp-deploy keeps in a prefix lives in `<prefix>/.mcp-deploy/` (mode 0700, files
//! 0600, see [`crate::state`]): `prefix.lock`, `promote.journal.json`, `history.ndjson`.
//!
//! Lock order: the prefix lock first, then (only around the registration step) the client
//! and flat-document locks, in path order ([`crate::registration::lock::acquire_all`]).
//! `install` and `uninstall` take only the latter, and no run waits for a prefix lock while it
//! holds a client lock, so no two runs can wait on each other crosswise.

pub(crate) mod history;
pub(crate) mod prefix;
mod preflight;
pub(crate) mod prune;
mod recovery;
mod register;
pub(crate) mod running;
pub(crate) mod status;
mod switch;
pub(crate) mod transition;

use std::path::PathBuf;

use serde::Serialize;

use crate::fsio::IoError;
use crate::identity::report::ServerReport;
use crate::registration::lock::LockError;

/// Why a promote, rollback or prune could not run (exit 2), with the evidence.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PromotionError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("{path} is {what}, not a symlink to releases/<sha>: promote switches a symlink and will not replace it")]
    CurrentNotALink { path: PathBuf, what: &'static str },
    #[error("{path} is broken: {why}")]
    CurrentBroken { path: PathBuf, why: String },
    #[error("the promote history {path} cannot be read at line {line}: {why}")]
    BadHistory {
        path: PathBuf,
        line: usize,
        why: String,
    },
    #[error("the promote journal {path} of an interrupted run cannot be read: {why}")]
    BadJournal { path: PathBuf, why: String },
    #[error("the prefix {path} does not exist")]
    NoPrefix { path: PathBuf },
    #[error("nothing to roll back to: {why}")]
    NoRollbackTarget { why: String },
    #[error("{path} holds no releases/ directory to prune: {why}")]
    NoReleases { path: PathBuf, why: String },
    #[error("an interrupted promote is journalled in {path}")]
    Interrupted { path: PathBuf },
    #[error(
        "{path} changed while this {action} ran: it named {read} when read, and names {now} \
         now; nothing was switched"
    )]
    CurrentChanged {
        path: PathBuf,
        action: &'static str,
        read: String,
        now: String,
    },
}

impl PromotionError {
    pub(crate) fn help(&self) -> Option<String> {
        Some(match self {
            PromotionError::Io(e) => return e.help(),
            PromotionError::Lock(e) => return e.help(),
            PromotionError::CurrentNotALink { path, .. } => format!(
                "move {} aside (it is kept as it is), then promote again",
                path.display()
            ),
            PromotionError::CurrentBroken { path, .. } => format!(
                "point it at a release by hand (`ln -sfn releases/<sha> {p}.new && mv -T {p}.new \
                 {p}`) or remove it, then promote again",
                p = path.display()
            ),
            PromotionError::BadHistory { path, .. } => format!(
                "mcp-deploy keeps it as it is; move {} aside (rollback then needs --to SHA) or \
                 repair the line",
                path.display()
            ),
            PromotionError::BadJournal { path, .. } => format!(
                "it names the release that was live before ({}); put `current` back by hand if \
                 needed, then delete the journal",
                path.display()
            ),
            PromotionError::NoPrefix { .. } => "pass the prefix of a deployed release layout, \
                 e.g. --prefix /opt/codetools (which holds releases/ and current)"
                .into(),
            PromotionError::NoRollbackTarget { .. } => {
                "name the release with `rollback --to SHA`".into()
            }
            PromotionError::NoReleases { .. } => {
                "check --prefix: it must be a release layout".into()
            }
            PromotionError::CurrentChanged { .. } => {
                "another run or a person switched `current` meanwhile (without the prefix lock); \
                 check which release should be live, then promote again"
                    .into()
            }
            PromotionError::Interrupted { .. } => {
                "run `mcp-deploy promote` or `rollback` on this prefix first: either undoes the \
                 interrupted switch"
                    .into()
            }
        })
    }
}

/// What promote and rollback print.
#[derive(Debug, Serialize)]
pub(crate) struct Outcome {
    /// `--dry-run`: nothing was locked, switched or written.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) dry_run: bool,
    pub(crate) ok: bool,
    pub(crate) action: &'static str,
    pub(crate) server: String,
    pub(crate) prefix: String,
    /// The release live before (`null`: none).
    pub(crate) from: Option<String>,
    pub(crate) to: String,
    /// Whether `current` was switched (and stays switched: `ok`); in a dry run, whether it
    /// would be.
    pub(crate) switched: bool,
    /// What happened, in a sentence.
    pub(crate) result: String,
    pub(crate) servers: Vec<ServerReport>,
    #[serde(rename = "registered")]
    pub(crate) flat_document: String,
    pub(crate) history: String,
    /// The handshake gate: what the candidate's server answered, or why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) handshake: Option<String>,
    /// After a switch: the processes still running the release switched away from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) still_running: Option<running::StillRunning>,
}
