//! mcp-deploy: registers deployed MCP servers with coding-agent clients through the clients'
//! own CLIs, and proves that what is registered is what was deployed.
//!
//! `main.rs` only parses arguments; [`run`] dispatches to one module per command. A newcomer
//! finds a concept by its file name: the declaration, rendering, the release layout, identity
//! checks, each client, the install transaction, the flat document, the report.

pub mod cli;
pub mod client;
pub mod commands;
pub mod config;
pub mod declaration;
pub mod digest;
pub mod entry;
pub mod error;
pub mod exit;
pub mod fsio;
pub mod handshake;
pub mod identity;
pub mod install;
pub mod layout;
pub mod lock;
pub mod manifest;
pub mod process;
pub mod registered;
pub mod render;
pub mod report;
pub mod sample;
pub mod sumfile;
pub mod transaction;

use cli::{Cli, Command};
use error::Error;
use exit::Exit;

/// Run one parsed command line and return its exit status. Errors are printed here, once.
pub fn run(cli: Cli) -> Exit {
    match dispatch(&cli) {
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

fn dispatch(cli: &Cli) -> Result<Exit, Error> {
    match &cli.command {
        Command::RenderMcp(args) => commands::render_mcp(args),
        Command::VerifyIdentity(args) => commands::verify_identity(args),
        Command::Install(args) => install::install(args),
        Command::Uninstall(args) => install::uninstall(args),
        Command::Sample(args) => commands::sample(args),
        Command::Manifest(args) => manifest::run(args),
        Command::Completions(args) => commands::completions(args),
        Command::Man(args) => commands::man(args),
    }
}
