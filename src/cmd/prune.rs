//! `prune`: its arguments into [`PruneOptions`], the domain's prune
//! ([`crate::promotion::prune::run`], where what must stay is decided: the live release, the
//! one rollback would return to, any a registration of any client and scope points into, any
//! a running process uses, and the `--keep` newest), the verdicts to `output`. `--dry-run`
//! lists them and removes nothing.

use crate::cli::PruneArgs;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::promotion::prune::{self, PruneOptions};

pub(crate) fn prune(args: &PruneArgs, style: &Style) -> Result<Exit, Error> {
    let given = selection::absolute_prefix(&args.prefix)?;
    let opts = PruneOptions {
        prefix: &given,
        keep: args.keep,
        dry_run: args.dry_run,
        lock_timeout: args.lock_timeout,
        flat_document: super::flat_document(&args.flat_document),
    };
    let pruned = prune::run(&opts, &style.notify())?;
    crate::output::prune(&pruned, style, Exit::Success);
    Ok(Exit::Success)
}
