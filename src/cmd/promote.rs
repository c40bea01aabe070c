//! `promote` and `rollback`: their arguments into [`TransitionOptions`], the domain's
//! transition ([`crate::promotion::transition::run`], where the algorithm is), the outcome to
//! `output`.

use crate::cli::{PromoteArgs, RollbackArgs, TransitionArgs};
use crate::deployment::declaration::Declaration;
use crate::deployment::layout::Sha;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::promotion::transition::{self, release_sha, TransitionOptions};
use crate::registration::session::ledger_path;

pub(crate) fn promote(args: &PromoteArgs, style: &Style) -> Result<Exit, Error> {
    let sha = release_sha("--release", &args.release)?;
    transition(&args.prefix, &args.transition, Some(sha), "promote", style)
}

pub(crate) fn rollback(args: &RollbackArgs, style: &Style) -> Result<Exit, Error> {
    let to = args
        .to
        .as_deref()
        .map(|s| release_sha("--to", s))
        .transpose()?;
    transition(&args.prefix, &args.transition, to, "rollback", style)
}

fn transition(
    prefix: &std::path::Path,
    t: &TransitionArgs,
    want: Option<Sha>,
    action: &'static str,
    style: &Style,
) -> Result<Exit, Error> {
    let opts = TransitionOptions {
        action,
        want,
        prefix,
        declaration: super::declaration(&t.declaration),
        server: t.server.as_deref(),
        name_suffix: &t.suffix.name_suffix,
        flat_document: super::flat_document(&t.flat_document),
        ledger: ledger_path(t.change.ledger.ledger.as_deref()),
        trust: super::trust_flags(&t.release.trust),
        clients: &t.client.clients,
        content: t.release.content,
        dry_run: t.change.dry_run,
        lock_timeout: t.lock_timeout,
        no_handshake: t.no_handshake,
        handshake_timeout: t.handshake_timeout,
    };
    let choice = super::client_choice(&t.client, t.scope.scope, t.mcp_timeout.mcp_timeout, style);
    let done = transition::run(&opts, &choice, &style.notify())?;
    if done.exit == Exit::Success && !opts.dry_run {
        let decl = Declaration::load(opts.declaration)?;
        let (server, prefix) = selection::single(&decl, prefix, opts.server, &Default::default())?;
        crate::launch::record_pins([(server, prefix.as_path())], action, &style.notify());
    }
    crate::output::promotion(&done.outcome, style, done.exit);
    Ok(done.exit)
}
