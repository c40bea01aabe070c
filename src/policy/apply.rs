//! The `policy` use case ([`run`]): steps 1–4 of [`crate::policy`] for every client asked
//! for, the allowlists printed or written into each client's policy file.

use crate::deployment::selection::Selected;
use crate::notice::Notify;
use crate::policy::write::{self, Change, WriteOptions};
use crate::policy::{self as policy, Allowlist, PolicyError};
use crate::usage::UsageError;

/// A policy run, its arguments parsed.
pub(crate) struct PolicyOptions<'a> {
    /// The clients of `--client`, by name ([`policy::check_clients`] has passed).
    pub(crate) clients: &'a [&'static str],
    /// The selected servers, the ones with nothing deployed left out.
    pub(crate) servers: &'a [Selected],
    /// `--format file`: the fragments only, nothing written.
    pub(crate) fragment: bool,
    /// `--write` or `--dry-run`: each client's policy file edited (or said how it would be).
    pub(crate) write: bool,
    pub(crate) dry_run: bool,
    pub(crate) lock_timeout: std::time::Duration,
}

/// What a policy run ended with.
pub(crate) enum Policies {
    /// `--format file`: each client's allowlist, to print as its file's fragment.
    Fragments(Vec<Allowlist>),
    /// Each client's allowlist and, with `--write` or `--dry-run`, the change to its file and
    /// whether it was written.
    Lists {
        lists: Vec<Allowlist>,
        changes: Vec<(Change, bool)>,
    },
}

/// `mcp-deploy policy`: each client's allowlist derived ([`policy::derive`]), then its
/// fragment, or each written into the client's policy file ([`write::write`] with the
/// client's own edit, [`policy::edit`]).
pub(crate) fn run(opts: &PolicyOptions, notify: Notify) -> Result<Policies, PolicyError> {
    let mut lists = Vec::new();
    for client in opts.clients {
        lists.push(policy::derive(client, opts.servers)?);
    }
    if opts.fragment {
        if opts.write || opts.dry_run {
            return Err(UsageError::new(
                "--format file prints the fragment; it does not say what --write changed",
                "drop --format file to see the change, or --write/--dry-run to only print",
            )
            .into());
        }
        return Ok(Policies::Fragments(lists));
    }
    let mut changes = Vec::new();
    if opts.write || opts.dry_run {
        for list in &lists {
            policy::check_counted(list)?;
            let wopts = WriteOptions {
                file: &list.file,
                dir: list
                    .file
                    .parent()
                    .expect("the policy file is in a directory"),
                dry_run: opts.dry_run,
                lock_timeout: opts.lock_timeout,
            };
            let edit = |path: &std::path::Path, old: Option<&str>| policy::edit(list, path, old);
            changes.push(write::write(&wopts, &edit, &notify)?);
        }
    }
    Ok(Policies::Lists { lists, changes })
}
