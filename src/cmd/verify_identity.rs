//! `verify-identity`: check each server against the flat document and, where readable, the
//! live client config, and report every check.

use crate::cli::VerifyArgs;
use crate::clients::{self, ClientKind};
use crate::deployment::declaration::Declaration;
use crate::deployment::render;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::checks::{self, Target};
use crate::identity::report::Report;
use crate::registration::flat_document;

pub(crate) fn run(args: &VerifyArgs) -> Result<Exit, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let (server, prefix) = selection::single(&decl, &args.at.prefix, args.at.server.as_deref())?;
    let expected = selection::expect_commit_for(&args.expect_commit, &server.name)?;
    let registered_name = args.name.clone().unwrap_or_else(|| server.name.clone());
    let mcp_json = args
        .mcp_json
        .clone()
        .unwrap_or_else(flat_document::default_path);
    let flat = flat_document::FlatDocument::read(&mcp_json)?;
    let declared = render::render(server, &prefix)?.entry;
    let trust = super::trust_policies(args.trusted_signers.as_deref(), server)?;
    let mut reports = Vec::new();
    for kind in ClientKind::unique(&args.clients) {
        let live = match clients::read_live(kind)? {
            Some(mut live) => {
                live.shadows = clients::live_shadows(kind, &live, &registered_name)?;
                Some(live)
            }
            None => None,
        };
        let client = kind.name();
        let target = Target {
            server,
            client,
            prefix: prefix.clone(),
            registered_name: registered_name.clone(),
            declared: declared.clone(),
            expected: Some(expected.clone()),
            require_content: args.content,
            handshake: args.handshake.then_some(args.handshake_timeout),
            live,
            layers: clients::effective_layers(kind, &registered_name, &declared),
            strict: args.strict,
            trust: &trust,
            candidate: None,
        };
        reports.push(checks::verify(&target, &flat.servers(client)));
    }
    let report = Report::new(reports, None);
    let exit = Exit::from_checks(report.ok);
    crate::output::print(&report, args.json, exit);
    Ok(exit)
}
