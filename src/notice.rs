//! What the domain has to tell the person while it works, beside the result it returns: a
//! wait, a recovery, a skipped server, a warning that leaves the outcome standing. The domain
//! hands each [`Notice`] to the [`Notify`] its caller passed in, at the moment it happens (a
//! lock wait is said while waiting, a recovery before the plan); the output layer renders it.
//! A leaf: it names no other domain folder, so every one of them may use it.

use std::path::PathBuf;

use crate::fsio::IoError;

#[derive(Debug)]
pub(crate) enum Notice {
    /// A lock another run holds: said when the wait begins.
    LockWait {
        path: PathBuf,
        holder: String,
        timeout: std::time::Duration,
    },
    /// One line of the account of an interrupted run that was rolled back.
    Recovery(String),
    /// A restore (recovery or rollback) is done, but the ledger could not record it.
    RestoreNotRecorded(IoError),
    /// The committed registration stands, but the ledger could not record it.
    CommitNotRecorded(IoError),
    /// A declared server not acted on because nothing of it is deployed.
    SkippedNotDeployed { server: String, why: String },
    /// uninstall removed `name` from the clients it was given, and the flat document still
    /// records it for these others (`--client` named only some of them).
    StillRegistered { name: String, clients: Vec<String> },
    /// A promote of this prefix was interrupted after it wrote its journal: its switch may
    /// still be in place until a promote or rollback undoes it.
    InterruptedPromote { server: String, journal: PathBuf },
    /// The release was verified, but its pin for checked launches ([`crate::launch::pin`])
    /// could not be recorded: a checked launch keeps the earlier pin, or refuses.
    PinNotRecorded { server: String, why: String },
    /// What a long step is doing now ("registering with codex…"): shown only on a terminal.
    /// Steps of several clients run side by side, so each is one whole line.
    Progress(String),
    /// `--prefix` is one server's own deployment, not a root of several.
    OwnPrefix { prefix: PathBuf, server: String },
    /// A client's managed file (claude's managed-mcp.json) is about to be written (or, in a
    /// dry run, would be): the client will load only its servers for every user of the host.
    /// `exists`: whether the file is there already (if not, this write is what turns every
    /// user's own servers off).
    ManagedScope {
        client: &'static str,
        file: PathBuf,
        exists: bool,
        dry_run: bool,
    },
    /// A client call that ended: the step as it may be shown (no secret in it), how it ended
    /// (`exit 0`, `timed out`), and how long it took. Said only with `-v`.
    ClientCall {
        shown: String,
        ended: String,
        took: std::time::Duration,
    },
}

/// Where the domain sends its notices; the command passes `&style.notify()`. `Sync`: the
/// per-client steps of a run call it from a thread per client.
pub(crate) type Notify<'a> = &'a (dyn Fn(Notice) + Sync);
