//! `man`: the man page of the command named ([`crate::cli::man::render`], generated from the
//! clap definition and the pages' data, the same source as `--help`), printed.

use crate::cli::ManArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::{emit, Style};

/// The top-level page, or a subcommand's (`mcp-deploy-install(1)`, which the top-level page
/// refers to), so that every page it names can be had.
pub(crate) fn run(args: &ManArgs, style: &Style) -> Result<Exit, Error> {
    emit(style, &crate::cli::man::render(&args.command)?);
    Ok(Exit::Success)
}
