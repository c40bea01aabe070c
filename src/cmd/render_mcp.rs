//! `render-mcp`: write `<prefix>/mcp/<name>.mcp.json` for a deployed server.

use crate::cli::RenderArgs;
use crate::deployment::declaration::Declaration;
use crate::deployment::render;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::report::Report;
use crate::output::{emit, Format, Style};

pub(crate) fn run(args: &RenderArgs, style: &Style) -> Result<Exit, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let (server, prefix) = selection::single(
        &decl,
        &args.at.prefix,
        args.at.server.as_deref(),
        &Default::default(),
    )?;
    render::check_deployed(server, &prefix)?;
    let rendered = render::render(server, &prefix)?;
    // A release layout whose `current` dangles or points outside releases/ is not a
    // deployment to write a registration document for: refuse it as install's gate does.
    if server.layout == crate::deployment::declaration::Layout::Release {
        let release = crate::deployment::release::Release::resolve(&prefix, server.layout);
        if let Err(detail) = release.check() {
            let report = Report::new(
                vec![crate::identity::report::ServerReport {
                    name: server.name.clone(),
                    // No client is involved; "claude" keeps the human line free of " in …".
                    client: "claude".into(),
                    registered_name: server.name.clone(),
                    prefix: prefix.display().to_string(),
                    registration: Some("not rendered".into()),
                    witnesses: None,
                    deployed: Default::default(),
                    checks: vec![crate::identity::report::Check {
                        check: "release",
                        ok: false,
                        detail: detail.to_string(),
                    }],
                }],
                None,
            );
            crate::output::print(&report, style, Exit::CheckFailed);
            let line = "nothing was written: render-mcp renders only for a deployed release";
            if style.format == Format::Json {
                eprintln!("{line}");
            } else {
                emit(&format!("{line}\n"));
            }
            return Ok(Exit::CheckFailed);
        }
    }
    let path = render::write_rendered(&rendered, &prefix)?;
    if style.format == Format::Json {
        let doc = serde_json::json!({
            "ok": true,
            "server": server.name,
            "path": path.display().to_string(),
            "document": rendered.document,
        });
        crate::output::emit_json_line(&doc, Exit::Success);
    } else {
        emit(&format!("{}\n", path.display()));
    }
    Ok(Exit::Success)
}
