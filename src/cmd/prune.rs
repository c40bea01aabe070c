//! `prune`: remove old releases of a release layout, under the prefix lock, keeping what must
//! stay ([`crate::promotion::prune`]): the live release, the one rollback would return to,
//! any a registration points into, and the `--keep` newest. `--dry-run` lists the verdicts
//! and removes nothing.

use clap::ValueEnum;

use crate::cli::PruneArgs;
use crate::clients::ClientKind;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::promotion::history::History;
use crate::promotion::prefix::{Journal, Prefix};
use crate::promotion::prune::{self, Pruned, Registrations};
use crate::promotion::PromotionError;

pub(crate) fn prune(args: &PruneArgs) -> Result<Exit, Error> {
    let given = selection::absolute_prefix(&args.prefix)?;
    let registered_path = args
        .registered
        .clone()
        .unwrap_or_else(crate::registration::registered::default_path);
    let prefix = Prefix::open(&given)?;
    let _lock = prefix.lock(args.lock_timeout, &crate::output::notice)?;
    let journal = prefix.journal_path()?;
    if Journal::read(&journal)?.is_some() {
        return Err(PromotionError::Interrupted { path: journal }.into());
    }
    let history = History::read(&prefix.history_path()?)?;
    let live = prefix.live_release()?;
    let rollback_to = live.as_deref().and_then(|l| history.before(l).ok());

    // Every registration mcp-deploy can read here: the flat document's, every client's.
    let mut registrations: Registrations = Vec::new();
    if let Some(flat) = crate::registration::registered::read_if_exists(&registered_path)? {
        for kind in ClientKind::value_variants() {
            registrations.push((
                format!("{} ({})", registered_path.display(), kind.name()),
                flat.servers(kind.name()),
            ));
        }
    }
    for kind in ClientKind::value_variants() {
        if let Some(live) = crate::clients::read_live(*kind)? {
            registrations.push((live.path.display().to_string(), live.entries));
        }
    }
    let plan = prune::plan(
        &prefix,
        args.keep,
        live.as_deref(),
        rollback_to.as_deref(),
        &history,
        &registrations,
    )?;
    if !args.dry_run {
        crate::registration::transaction::checkpoint("prune-planned");
        prune::remove(&prefix, &plan)?;
    }
    let out = Pruned {
        ok: true,
        dry_run: args.dry_run,
        prefix: given.display().to_string(),
        keep_newest: args.keep,
        remove: plan.remove,
        keep: plan.keep,
    };
    crate::output::prune(&out, args.json, Exit::Success);
    Ok(Exit::Success)
}
