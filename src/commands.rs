//! The commands that are a few lines of glue over the domain modules: `render-mcp`,
//! `verify-identity` and `sample`.

use std::time::Duration;

use crate::cli::{RenderArgs, SampleArgs, VerifyArgs};
use crate::config;
use crate::declaration::Declaration;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::{self, Target};
use crate::registered;
use crate::render;
use crate::report::{emit, Report};
use crate::sample;

pub fn render_mcp(args: &RenderArgs) -> Result<Exit, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let (server, prefix) = config::single(&decl, &args.prefix, args.server.as_deref())?;
    render::check_deployed(server, &prefix)?;
    let rendered = render::render(server, &prefix)?;
    let path = render::write_rendered(&rendered, &prefix)?;
    emit(&format!("{}\n", path.display()));
    Ok(Exit::Success)
}

pub fn verify_identity(args: &VerifyArgs) -> Result<Exit, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let (server, prefix) = config::single(&decl, &args.prefix, args.server.as_deref())?;
    let expected = config::expect_commit(&args.expect_commit)?;
    let registered_name = args.name.clone().unwrap_or_else(|| server.name.clone());
    let registrations = registered::read(&args.mcp_json)?;
    let declared = render::render(server, &prefix)?.entry;
    let target = Target {
        server,
        prefix,
        registered_name,
        declared,
        expected: Some(expected),
        require_content: args.content,
        handshake: args
            .handshake
            .then(|| Duration::from_secs(args.handshake_timeout.max(1))),
    };
    let report = Report::new(vec![identity::verify(&target, &registrations)], None);
    report.print(args.json);
    Ok(Exit::from_checks(report.ok))
}

pub fn sample(args: &SampleArgs) -> Result<Exit, Error> {
    let root = config::absolute_prefix(&args.root)?;
    for line in sample::lay_out(&root)? {
        emit(&format!("{line}\n"));
    }
    Ok(Exit::Success)
}
