//! `verify-identity`: check each server (one `--prefix`, or every one under `--root`) against
//! the flat document and, where readable, the live client config, and report every check in
//! one report with one exit code.

use crate::cli::VerifyArgs;
use crate::clients::{self, only_deployed, ClientKind, Scope};
use crate::deployment::declaration::Declaration;
use crate::deployment::release::Release;
use crate::deployment::render;
use crate::deployment::selection::{self, Selection};
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::checks::{self, Target};
use crate::identity::report::Report;
use crate::output::Style;
use crate::registration::flat_document;

pub(crate) fn run(args: &VerifyArgs, style: &Style) -> Result<Exit, Error> {
    let given = selection::parse_expect_commits(&args.expect_commits)?;
    let selection = select(args, &given)?;
    let expected = selection::expect_commits(&given, &selection)?;
    selection::require_every_commit(&expected, &selection)?;
    let flat = flat_document::FlatDocument::read(&super::flat_document(&args.flat_document))?;
    let mut reports = Vec::new();
    let mut declared = Vec::new();
    for s in &selection.servers {
        let server = &s.server;
        let registered_name = &s.registered_name;
        let entry = render::render(server, &s.prefix)?.entry;
        let trust =
            crate::registration::gate::trust_policies(args.trusted_signers.as_deref(), server)?;
        // Resolved once for every client's report of this server: one release throughout.
        let release = Release::resolve(&s.prefix, server.layout);
        for kind in ClientKind::unique(&args.clients) {
            // An entry install put in claude's managed file: that file is its live witness.
            let managed = flat.scope(kind.name(), registered_name) == Scope::Managed
                && kind.name() == "claude";
            let live = match managed {
                true => clients::claude_managed::read_live()?,
                false => match clients::read_live(kind)? {
                    Some(mut live) => {
                        live.shadows = clients::live_shadows(kind, &live, registered_name)?;
                        Some(live)
                    }
                    None => None,
                },
            };
            let client = kind.name();
            let target = Target {
                server,
                client,
                prefix: s.prefix.clone(),
                registered_name: registered_name.clone(),
                declared: entry.clone(),
                expected: expected.get(&server.name).cloned(),
                require_content: args.content,
                handshake: args.handshake.then_some(args.handshake_timeout),
                live,
                layers: clients::effective_layers(kind, registered_name, &entry),
                strict: args.strict,
                trust: &trust,
                release: release.clone(),
            };
            let mut report = checks::verify(&target, &flat.servers(client));
            if args.require_live {
                report.require_live(&match managed {
                    true => clients::claude_managed::path(),
                    false => clients::user_config(kind).0,
                });
            }
            reports.push(report);
        }
        declared.push((registered_name, entry));
    }
    if args.only_deployed {
        for kind in ClientKind::unique(&args.clients) {
            let ours: Vec<only_deployed::Declared> = declared
                .iter()
                .map(|(name, entry)| only_deployed::Declared { name, entry })
                .collect();
            reports.push(only_deployed::report(kind, &ours));
        }
    }
    let report = Report::new(reports, None);
    let exit = Exit::from_checks(report.ok);
    crate::output::print(&report, style, exit);
    Ok(exit)
}

/// The servers to check, from `--prefix` or `--root` (the domain's
/// [`selection::for_verify`]).
fn select(args: &VerifyArgs, given: &[selection::ExpectCommit]) -> Result<Selection, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
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
        &crate::output::notice,
    )?)
}
