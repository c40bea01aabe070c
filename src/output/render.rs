//! `render-mcp`'s outcome: the path written (for tools, one JSON line with the document), or
//! the refusal of a release that is not deployed, as a check report.

use super::{emit, Format, Style};
use crate::deployment::render::RenderedMcp;
use crate::exit::Exit;
use crate::identity::report::{Check, Report, ServerReport};

/// What `render-mcp` did for `server` at `prefix`, and the exit that goes with it.
pub(crate) fn print(
    server: &str,
    prefix: &std::path::Path,
    done: &RenderedMcp,
    style: &Style,
) -> Exit {
    match done {
        RenderedMcp::Refused { detail } => {
            let report = Report::new(
                vec![ServerReport {
                    name: server.to_string(),
                    // No client is involved; "claude" keeps the human line free of " in …".
                    client: crate::clients::primary_name().into(),
                    registered_name: server.to_string(),
                    prefix: prefix.display().to_string(),
                    registration: Some("not rendered".into()),
                    witnesses: None,
                    deployed: Default::default(),
                    checks: vec![Check {
                        skipped: false,
                        check: "release",
                        ok: false,
                        detail: detail.clone(),
                    }],
                }],
                None,
            );
            super::print(&report, style, Exit::CheckFailed);
            let line = "nothing was written: render-mcp renders only for a deployed release";
            if style.format == Format::Json {
                eprintln!("{line}");
            } else {
                emit(style, &format!("{line}\n"));
            }
            Exit::CheckFailed
        }
        RenderedMcp::Written { path, document } => {
            if style.format == Format::Json {
                let doc = serde_json::json!({
                    "ok": true,
                    "server": server,
                    "path": path.display().to_string(),
                    "document": document,
                });
                super::emit_json_line(style, &doc, Exit::Success);
            } else {
                emit(style, &format!("{}\n", path.display()));
            }
            Exit::Success
        }
    }
}
