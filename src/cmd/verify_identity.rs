//! `verify-identity`: check each server (one `--prefix`, or every one under `--root`) against
//! the flat document and, where readable, the live client config, and report every check in
//! one report with one exit code.

use crate::cli::VerifyArgs;
use crate::clients::{self, ClientKind};
use crate::deployment::declaration::Declaration;
use crate::deployment::render;
use crate::deployment::selection::{self, Hints, Root, Selected, Selection};
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
    for s in &selection.servers {
        let server = &s.server;
        let registered_name = &s.registered_name;
        let declared = render::render(server, &s.prefix)?.entry;
        let trust = super::trust_policies(args.trusted_signers.as_deref(), server)?;
        for kind in ClientKind::unique(&args.clients) {
            let live = match clients::read_live(kind)? {
                Some(mut live) => {
                    live.shadows = clients::live_shadows(kind, &live, registered_name)?;
                    Some(live)
                }
                None => None,
            };
            let client = kind.name();
            let target = Target {
                server,
                client,
                prefix: s.prefix.clone(),
                registered_name: registered_name.clone(),
                declared: declared.clone(),
                expected: expected.get(&server.name).cloned(),
                require_content: args.content,
                handshake: args.handshake.then_some(args.handshake_timeout),
                live,
                layers: clients::effective_layers(kind, registered_name, &declared),
                strict: args.strict,
                trust: &trust,
                candidate: None,
            };
            let mut report = checks::verify(&target, &flat.servers(client));
            if args.require_live {
                report.require_live(&clients::user_config(kind).0);
            }
            reports.push(report);
        }
    }
    let report = Report::new(reports, None);
    let exit = Exit::from_checks(report.ok);
    crate::output::print(&report, style, exit);
    Ok(exit)
}

/// The servers to check: `--prefix`'s one, or `--root`'s (every declared server deployed there,
/// or those of `--server`), each under its registered name (`--name`, or NAME+`--name-suffix`).
fn select(args: &VerifyArgs, given: &[selection::ExpectCommit]) -> Result<Selection, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let declared = decl.names().iter().map(|n| n.to_string()).collect();
    let mut selection = match (&args.root, &args.prefix) {
        (Some(root), _) => {
            let root = Root::Root(root);
            let (servers, named) = selection::many(
                &decl,
                Some(root),
                &args.servers,
                &args.name_suffix,
                &crate::output::notice,
            )?;
            let mut selection = Selection {
                servers,
                flat_document: super::flat_document(&args.flat_document),
                named,
                skipped: Vec::new(),
                declared,
            };
            selection.skip_absent(Some(root), &crate::output::notice)?;
            selection
        }
        (None, Some(prefix)) => {
            if args.servers.len() > 1 {
                return Err(Error::usage(
                    format!(
                        "--prefix {} is one deployment, but --server is given {} times",
                        prefix.display(),
                        args.servers.len()
                    ),
                    format!(
                        "check several servers with --root (the directory holding them), e.g. \
                         --root {}",
                        prefix.parent().unwrap_or(prefix).display()
                    ),
                ));
            }
            let mut hints = Hints {
                names: Vec::new(),
                takes_root: true,
            };
            hints.names.extend(args.name.as_deref());
            hints.names.extend(given.iter().filter_map(|e| match e {
                selection::ExpectCommit::Named(n, _) => Some(n.as_str()),
                selection::ExpectCommit::Bare(_) => None,
            }));
            let (server, prefix) = selection::single(
                &decl,
                prefix,
                args.servers.first().map(String::as_str),
                &hints,
            )?;
            Selection {
                servers: vec![Selected {
                    server: server.clone(),
                    registered_name: format!("{}{}", server.name, args.name_suffix),
                    prefix,
                }],
                flat_document: super::flat_document(&args.flat_document),
                named: true,
                skipped: Vec::new(),
                declared,
            }
        }
        // clap requires one of them; said here too, so that no path panics.
        (None, None) => {
            return Err(Error::usage(
                "verify-identity needs --prefix DIR or --root ROOT",
                "give --prefix DIR for one deployment, or --root ROOT for every one under it",
            ))
        }
    };
    if let Some(name) = &args.name {
        match selection.servers.as_mut_slice() {
            [one] => one.registered_name = name.clone(),
            several => {
                return Err(Error::usage(
                    format!(
                        "--name {name} names one registration, but {} servers are checked",
                        several.len()
                    ),
                    "give --name-suffix SUFFIX for the registered names, or check one server \
                     with --server NAME",
                ))
            }
        }
    }
    Ok(selection)
}
