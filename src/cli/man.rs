//! The man pages, generated from the clap definition and the pages' data
//! ([`crate::cli::manual`]), the same source as `--help`: the top-level page, or a
//! subcommand's (`mcp-deploy-install(1)`, which the top-level page refers to).

use clap_mangen::roff::{roman, Roff};

use crate::cli::manual::{self, Page, DOC_DIR};
use crate::usage::UsageError;

/// The roff of the page of the command at `path`.
pub(crate) fn render(path: &[String]) -> Result<String, UsageError> {
    // No `help` subcommand in the pages: clap's is no page of ours, and its page would cite
    // pages (mcp-deploy-help-install(1)) that do not exist (issue 23, item 9).
    let mut cmd = manual::command().disable_help_subcommand(true);
    // Building fills in the subcommands' display names (mcp-deploy-install) and bin names.
    cmd.build();
    for name in path {
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        cmd = cmd.find_subcommand(name).cloned().ok_or_else(|| {
            UsageError::new(
                format!("no command {name:?} has a man page"),
                format!("name one of: {}", names.join(", ")),
            )
        })?;
    }
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    let page = manual::page(&path).expect("every command has a page (manual's unit test)");
    let has_subcommands = cmd.get_subcommands().next().is_some();
    let has_version = cmd.get_version().is_some();
    let man =
        clap_mangen::Man::new(cmd).source(format!("mcp-deploy {}", env!("CARGO_PKG_VERSION")));
    // Each section renders with roff's preamble (the `\*(Aq` apostrophe string): keep the
    // first, as a page has one.
    let preamble = Roff::new().render();
    let mut out = String::new();
    let mut add = |section: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut buf = Vec::new();
        section(&mut buf).expect("rendering into a Vec cannot fail");
        let text = String::from_utf8_lossy(&buf).into_owned();
        match text.strip_prefix(&preamble) {
            Some(body) if !out.is_empty() => out.push_str(body),
            _ => out.push_str(&text),
        }
    };
    add(&|b| man.render_title(b));
    add(&|b| man.render_name_section(b));
    add(&|b| man.render_synopsis_section(b));
    add(&|b| man.render_description_section(b));
    add(&|b| man.render_options_section(b));
    if has_subcommands {
        add(&|b| man.render_subcommands_section(b));
    }
    add(&|b| sections(page).to_writer(b));
    if has_version {
        add(&|b| man.render_version_section(b));
    }
    Ok(out)
}

/// EXAMPLES, EXIT STATUS, FILES, ENVIRONMENT and SEE ALSO from the page's data.
fn sections(page: &Page) -> Roff {
    let mut roff = Roff::new();
    if !page.examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        for (cmd, what) in page.examples {
            roff.control("TP", []);
            roff.text([roman(*cmd)]);
            roff.text([roman(*what)]);
        }
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (code, what) in page.exit_status {
        roff.control("TP", []);
        roff.text([roman(code.to_string())]);
        roff.text([roman(*what)]);
    }
    for (title, rows) in [("FILES", page.files), ("ENVIRONMENT", page.environment)] {
        if rows.is_empty() {
            continue;
        }
        roff.control("SH", [title]);
        for (name, what) in rows {
            roff.control("TP", []);
            roff.text([roman(*name)]);
            roff.text([roman(*what)]);
        }
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut also = Vec::new();
    if !page.path.is_empty() {
        // The parent's page (mcp-deploy(1) for a command, mcp-deploy-manifest(1) for a nested one).
        also.push(format!(
            "{}(1)",
            manual::man_name(&page.path[..page.path.len() - 1])
        ));
    }
    also.push(format!("{DOC_DIR}/commands.md"));
    roff.text([roman(also.join(", "))]);
    roff
}
