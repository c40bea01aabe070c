//! `prune`: remove old releases of a release layout, under the prefix lock, keeping what must
//! stay ([`crate::promotion::prune`]): the live release, the one rollback would return to,
//! any a registration of any client and scope points into, any a running process uses, and
//! the `--keep` newest. `--dry-run` lists the verdicts
//! and removes nothing.

use clap::ValueEnum;

use crate::cli::PruneArgs;
use crate::clients::ClientKind;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::promotion::history::History;
use crate::promotion::prefix::{Journal, Prefix};
use crate::promotion::prune::{self, Holders, Pruned};
use crate::promotion::PromotionError;

pub(crate) fn prune(args: &PruneArgs, style: &Style) -> Result<Exit, Error> {
    let given = selection::absolute_prefix(&args.prefix)?;
    // A directory of deployments is refused with the --prefix that would work: prune takes no
    // --config, so the servers it can know of are the built-in ones.
    let decl = crate::deployment::declaration::Declaration::load(None)?;
    selection::refuse_directory_of_deployments(&decl, &given, None, &Default::default())?;
    let flat_document = super::flat_document(&args.flat_document);
    let prefix = Prefix::open(&given)?;
    // A dry run writes nothing, not even the lock or `<prefix>/.mcp-deploy/`: it only reads,
    // so it works for a user who may not write the prefix (what it lists may then be
    // overtaken by a promote running meanwhile; the real run decides again under the lock).
    let _lock = match args.dry_run {
        true => None,
        false => Some(prefix.lock(args.lock_timeout, &crate::output::notice)?),
    };
    let state = |name: &str| match args.dry_run {
        true => prefix.peek_state_file(name),
        false => prefix.state_file(name),
    };
    let journal = state(crate::promotion::prefix::JOURNAL)?;
    if Journal::read(&journal)?.is_some() {
        return Err(PromotionError::Interrupted { path: journal }.into());
    }
    let history = History::read(&state(crate::promotion::prefix::HISTORY)?)?;
    let live = prefix.live_release()?;
    let rollback_to = live.as_deref().and_then(|l| history.before(l).ok());

    // Every registration mcp-deploy can read here: the flat document's, and every one each
    // client reads, in every scope; and every running process.
    let mut holders = Holders::default();
    if let Some(flat) = crate::registration::flat_document::read_if_exists(&flat_document)? {
        for kind in ClientKind::value_variants() {
            for (name, entry) in flat.servers(kind.name()) {
                holders.registrations.push((
                    format!(
                        "{name} in {} ({}, the flat document)",
                        flat_document.display(),
                        kind.name()
                    ),
                    entry,
                ));
            }
        }
    }
    let found = crate::clients::scopes::every_registration(ClientKind::value_variants());
    holders.registrations.extend(
        found
            .registrations
            .iter()
            .map(|r| (r.describe(), r.entry.clone())),
    );
    holders.unreadable = found.unreadable.iter().map(|u| u.describe()).collect();
    let releases = crate::promotion::running::releases_of(&prefix.given);
    if let Some(r) = &releases {
        holders.processes = crate::deployment::processes::scan(r);
    }
    let mut plan = prune::plan(
        &prefix,
        args.keep,
        live.as_deref(),
        rollback_to.as_deref(),
        &history,
        &holders,
    )?;
    if !args.dry_run {
        crate::registration::transaction::checkpoint("prune-planned");
        let done = prune::remove(&prefix, &plan, releases.as_ref())?;
        plan.remove
            .retain(|d| !done.kept.iter().any(|k| k.release == d.release));
        plan.keep.extend(done.kept);
    }
    let out = Pruned {
        ok: true,
        dry_run: args.dry_run,
        prefix: given.display().to_string(),
        keep_newest: args.keep,
        remove: plan.remove,
        keep: plan.keep,
        not_compared: holders.processes.unknown().into_iter().collect(),
    };
    crate::output::prune(&out, style, Exit::Success);
    Ok(Exit::Success)
}
