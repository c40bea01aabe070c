//! The commands that are a few lines of glue over the domain modules: `render-mcp`,
//! `verify-identity` and `sample`.

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
    if args.json {
        let doc = serde_json::json!({
            "ok": true,
            "server": server.name,
            "path": path.display().to_string(),
            "document": rendered.document,
        });
        emit(&format!("{doc}\n"));
    } else {
        emit(&format!("{}\n", path.display()));
    }
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
    };
    let report = Report::new(vec![identity::verify(&target, &registrations)], None);
    report.print(args.json);
    Ok(Exit::from_checks(report.ok))
}

pub fn sample(args: &SampleArgs) -> Result<Exit, Error> {
    let root = config::absolute_prefix(&args.root)?;
    let laid_out = sample::lay_out(&root)?;
    if args.json {
        let servers: Vec<_> = laid_out
            .iter()
            .map(|(name, prefix, commit)| {
                serde_json::json!({"name": name, "prefix": prefix.display().to_string(), "commit": commit})
            })
            .collect();
        emit(&format!(
            "{}\n",
            serde_json::json!({"ok": true, "servers": servers})
        ));
    } else {
        for (name, prefix, commit) in &laid_out {
            emit(&format!("{name}: {} (commit {commit})\n", prefix.display()));
        }
    }
    Ok(Exit::Success)
}
