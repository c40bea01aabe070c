//! `man`: the man pages, generated from the clap definition.

use crate::cli::{Cli, ManArgs};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::emit;

/// The top-level page, or a subcommand's (`mcp-deploy-install(1)`, which the top-level page
/// refers to), so that every page it names can be had.
pub(crate) fn run(args: &ManArgs) -> Result<Exit, Error> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    // Building fills in the subcommands' display names (mcp-deploy-install) and bin names.
    cmd.build();
    for name in &args.command {
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        cmd = cmd.find_subcommand(name).cloned().ok_or_else(|| {
            Error::usage(
                format!("no command {name:?} has a man page"),
                format!("name one of: {}", names.join(", ")),
            )
        })?;
    }
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .source(format!("mcp-deploy {}", env!("CARGO_PKG_VERSION")))
        .render(&mut buf)
        .expect("rendering into a Vec cannot fail");
    emit(&String::from_utf8_lossy(&buf));
    Ok(Exit::Success)
}
