//! `verify-identity`: the servers of `--prefix` or `--root` and its flags into
//! [`VerifyIdentityOptions`], the domain's [`verify_identity::run`] (where the loop over
//! servers and clients is), its report to `output` with one exit code.

use crate::cli::VerifyArgs;
use crate::deployment::declaration::Declaration;
use crate::deployment::selection::{self, Selection};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::registration::verify_identity::{self, VerifyIdentityOptions};

pub(crate) fn run(args: &VerifyArgs, style: &Style) -> Result<Exit, Error> {
    let given = selection::parse_expect_commits(&args.expect_commits)?;
    let selection = select(args, &given, style)?;
    let expected = selection::expect_commits(&given, &selection)?;
    selection::require_every_commit(&expected, &selection)?;
    let opts = VerifyIdentityOptions {
        selection: &selection,
        expected: &expected,
        trust: super::trust_flags(&args.release.trust),
        clients: &args.client.clients,
        require_content: args.release.content,
        handshake: args
            .handshake
            .handshake
            .then_some(args.handshake.handshake_timeout),
        require_live: args.require_live,
        only_deployed: args.only_deployed,
    };
    let report = verify_identity::run(&opts)?;
    let exit = Exit::from_checks(report.ok);
    crate::output::print(&report, style, exit);
    Ok(exit)
}

/// The servers to check, from `--prefix` or `--root` (the domain's
/// [`selection::for_verify`]).
fn select(
    args: &VerifyArgs,
    given: &[selection::ExpectCommit],
    style: &Style,
) -> Result<Selection, Error> {
    let decl = Declaration::load(super::declaration(&args.declaration))?;
    let at = match (&args.root, &args.prefix) {
        (Some(root), _) => selection::VerifyAt::Root(root),
        (None, Some(prefix)) => selection::VerifyAt::Prefix(prefix),
        // clap requires one of them; said here too, so that no path panics.
        (None, None) => {
            return Err(Error::usage(
                "verify-identity needs --prefix DIR or --root ROOT",
                "give --prefix DIR for one deployment, or --root ROOT for every one under it",
            ))
        }
    };
    let wanted = selection::VerifyWanted {
        at,
        servers: &args.servers,
        name: args.name.as_deref(),
        name_suffix: &args.name_suffix,
        flat_document: super::flat_document(&args.flat_document),
    };
    Ok(selection::for_verify(
        &decl,
        wanted,
        given,
        &style.notify(),
    )?)
}
