//! mcp-deploy: registers deployed MCP servers with coding-agent clients through the clients'
//! own CLIs, and proves that what is registered is what was deployed.
//!
//! `main.rs` only parses arguments; [`run`] dispatches to one module per command.

pub mod cli;
pub mod digest;
pub mod error;
pub mod exit;
pub mod fsio;
pub mod manifest;
pub mod sumfile;

use cli::{Cli, Command};
use error::Error;
use exit::Exit;

/// Run one parsed command line and return its exit status. Errors are printed here, once.
pub fn run(cli: Cli) -> Exit {
    match dispatch(cli) {
        Ok(exit) => exit,
        Err(err) => {
            eprintln!("error: {err}");
            if let Some(help) = err.help() {
                eprintln!("help: {help}");
            }
            Exit::CouldNotRun
        }
    }
}

fn dispatch(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Manifest(args) => manifest::run(args),
        Command::RenderMcp(_)
        | Command::VerifyIdentity(_)
        | Command::Install(_)
        | Command::Uninstall(_)
        | Command::Sample(_) => Err(Error::usage(
            "this command is being built",
            "see the README",
        )),
    }
}
