//! The human text of the domain's notices ([`Notice`]), on stderr, one at a time as they
//! come: stdout stays the report's (and `--json`'s) alone. `-q` keeps only the warnings and
//! what was undone; `-v` adds every client call.

use super::Verbosity;
use crate::notice::Notice;

/// Say `n` as a run of `verbosity` does (the run's [`super::Style::notify`]).
pub(crate) fn notice(n: Notice, verbosity: Verbosity) {
    let quiet = verbosity == Verbosity::Quiet;
    match n {
        // What a quiet run leaves out: what is going on, not what went wrong.
        Notice::LockWait { .. }
        | Notice::Progress(_)
        | Notice::SkippedNotDeployed { .. }
        | Notice::OwnPrefix { .. }
            if quiet => {}
        Notice::ClientCall { shown, ended, took } => {
            if verbosity == Verbosity::Verbose {
                eprintln!("client call: {shown}: {ended} in {} ms", took.as_millis());
            }
        }
        Notice::LockWait {
            path,
            holder,
            timeout,
        } => eprintln!(
            "waiting for {}, held now by {holder}, up to {}",
            path.display(),
            humantime::format_duration(timeout)
        ),
        Notice::Recovery(line) => eprintln!("{line}"),
        Notice::RestoreNotRecorded(e) => {
            eprintln!("warning: the change is made but not recorded in the ledger: {e}")
        }
        Notice::CommitNotRecorded(e) => {
            eprintln!("warning: the registration is made but not recorded in the ledger: {e}");
            eprintln!(
                "help: make the ledger writable (or pass --ledger FILE); the change itself needs nothing"
            );
        }
        Notice::Progress(line) => super::progress(&line, verbosity),
        Notice::PinNotRecorded { server, why } => {
            eprintln!("warning: {server}: the pin for checked launches is not recorded: {why}");
            eprintln!(
                "help: run the command as the deploying user (the prefix's owner or root);                  `mcp-deploy exec` starts only the release a pin names"
            );
        }
        Notice::SkippedNotDeployed { server, why } => {
            eprintln!("skipping {server}: not deployed ({why})")
        }
        Notice::StillRegistered { name, clients } => eprintln!(
            "note: {name} is still registered with {} (the flat document records it): this \
             run removed it only from the clients of --client; add --client {} to remove it \
             there too",
            clients.join(", "),
            clients.join(",")
        ),
        Notice::InterruptedPromote { server, journal } => {
            eprintln!(
                "warning: an interrupted promote of {server} is journalled in {}: `current` may \
                 still be switched",
                journal.display()
            );
            eprintln!(
                "help: run `mcp-deploy promote` or `mcp-deploy rollback` on that prefix: either \
                 undoes it first"
            );
        }
        Notice::ManagedScope {
            client,
            file,
            exists,
            dry_run,
        } => {
            let (will, writes) = match dry_run {
                true => ("would", "would write"),
                false => ("will", "writes"),
            };
            eprintln!(
                "warning: this {writes} {}: on this host {client} {will} load only the servers of \
                 that file, for every user; every user's own servers (user, project and local \
                 scope) {will} stop loading",
                file.display()
            );
            if !exists {
                eprintln!(
                    "warning: {} does not exist yet: creating it is what turns every user's own \
                     servers off (uninstall --scope managed removes it again when nothing else \
                     is left in it)",
                    file.display()
                );
            }
        }
        Notice::OwnPrefix { prefix, server } => eprintln!(
            "note: --prefix {} holds {server}'s own deployment: acting on {server} there (a root \
             would hold {}/{server})",
            prefix.display(),
            prefix.display()
        ),
    }
}
