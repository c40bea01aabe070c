//! `reconcile`: install's arguments; the domain's reading
//! ([`crate::registration::reconcile`], where the algorithm is), then install
//! ([`crate::registration::install`]) for what drifted only, the report to `output`.

use crate::cli::InstallArgs;
use crate::clients::ClientOptions;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::report::Report;
use crate::output::Style;
use crate::registration::install::{self, InstallOptions, Installed};
use crate::registration::reconcile;
use crate::registration::session::{ledger_path, open_named};

pub(crate) fn reconcile(args: &InstallArgs, style: &Style) -> Result<Exit, Error> {
    // Its reading is user scope's (the clients' own files): a managed registration would read
    // as drifted there, and be healed into the wrong scope.
    if args.scope.scope != crate::clients::Scope::User {
        return Err(Error::usage(
            "reconcile reads and heals user-scope registrations only; --scope managed is not \
             supported by it yet",
            "keep a managed registration with `mcp-deploy install --scope managed` (a no-op \
             when nothing changed), and check it with `verify-identity`",
        ));
    }
    let mut selection = super::selection(&args.selection)?;
    let given = selection::parse_expect_commits(&args.expect_commits)?;
    selection.skip_absent(super::root(&args.selection.which), &crate::output::notice)?;
    let expected = selection::expect_commits(&given, &selection)?;
    let options = |selection, clients, expected| InstallOptions {
        selection,
        expected,
        trusted_signers: args.trusted_signers.as_deref(),
        clients,
        content: args.content,
        strict: args.strict.strict,
        dry_run: args.dry_run,
        lock_timeout: args.lock.lock_timeout,
        ledger: ledger_path(args.ledger.ledger.as_deref()),
    };
    // 1. The gate, as install's: read-only, no client.
    let opts = options(&selection, &args.client.clients, expected.clone());
    install::check(&opts)?;
    crate::promotion::warn_interrupted(&selection.servers, &crate::output::notice);
    let gated = install::gate(&opts)?;
    if !gated.ok {
        crate::output::refused_at_gate(&install::refused(gated.gate), style);
        return Ok(Exit::CheckFailed);
    }
    // 2–3. status's reading: the clients' files and the flat document, no client process.
    let flat_document = &selection.flat_document;
    let flat = crate::registration::flat_document::read_if_exists(flat_document)?;
    let readers = open_named(&args.client.clients, &ClientOptions::files_only())?;
    let pairs = reconcile::read(
        &selection.servers,
        &readers,
        flat.as_ref(),
        flat_document,
        args.strict.strict,
        &crate::output::notice,
    )?;
    let finish = |servers| {
        let report = Report::new(servers, Some(flat_document.display().to_string()));
        let exit = Exit::from_checks(report.ok);
        crate::output::print(&report, style, exit);
        Ok(exit)
    };
    // 4. Nothing drifted, or a dry run: no client started, nothing written.
    if args.dry_run || !pairs.iter().any(reconcile::Pair::drifted) {
        return finish(reconcile::merge(pairs, None));
    }
    let drifted = reconcile::drifted(&selection, &args.client.clients, &expected, &pairs);
    let opts = options(&drifted.selection, &drifted.clients, drifted.expected);
    let gated = install::gate(&opts)?;
    let clients = open_named(
        &drifted.clients,
        &super::client_options(&args.client, args.mcp_timeout.mcp_timeout),
    )?;
    match install::install(&opts, gated, &clients, &crate::output::notice)? {
        Installed::Done(report) => finish(reconcile::merge(pairs, Some(&report.servers))),
        // Not reached: a dry run returned above, before any client was opened.
        Installed::DryRun(_) => finish(reconcile::merge(pairs, None)),
    }
}
