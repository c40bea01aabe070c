//! `render-mcp`: the server of `--prefix` (and `--server`), the domain's
//! [`crate::deployment::render::render_mcp`] (write `<prefix>/mcp/<name>.mcp.json` for a
//! deployed server), its outcome to `output`.

use crate::cli::RenderArgs;
use crate::deployment::declaration::Declaration;
use crate::deployment::render;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;

pub(crate) fn run(args: &RenderArgs, style: &Style) -> Result<Exit, Error> {
    let decl = Declaration::load(super::declaration(&args.declaration))?;
    let (server, prefix) = selection::single(
        &decl,
        &args.at.prefix,
        args.at.server.as_deref(),
        &Default::default(),
    )?;
    let done = render::render_mcp(server, &prefix)?;
    Ok(crate::output::render::print(
        &server.name,
        &prefix,
        &done,
        style,
    ))
}
