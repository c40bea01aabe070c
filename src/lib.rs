//! mcp-deploy: registers deployed MCP servers with coding-agent clients through the clients'
//! own CLIs, and proves that what is registered is what was deployed.
//!
//! `main.rs` only parses arguments; [`run`] dispatches to one module per command. A newcomer
//! finds a concept by its file name: the declaration, rendering, the release layout, identity
//! checks, each client, the install transaction, the flat document, the report, the
//! vendored-SDK verifier.

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
pub mod ledger;
pub mod lock;
pub mod lockfile;
pub mod manifest;
pub mod process;
pub mod registered;
pub mod release_manifest;
pub mod render;
pub mod report;
pub mod sample;
pub mod secrets;
pub mod sri;
pub mod state;
pub mod status;
pub mod sumfile;
pub mod transaction;
pub mod vendor;

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
            if cli.command.json() {
                let doc = serde_json::json!({
                    "ok": false,
                    "exit": Exit::CouldNotRun.code(),
                    "error": err.to_string(),
                    "help": err.help(),
                });
                report::emit(&format!("{doc}\n"));
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
        Command::Status(args) => status::status(args),
        Command::Sample(args) => commands::sample(args),
        Command::Manifest(args) => manifest::run(args),
        Command::VerifyVendor(args) => vendor::run_verify(args),
        Command::PinVendor(args) => vendor::run_pin(args),
        Command::Completions(args) => commands::completions(args),
        Command::Man(args) => commands::man(args),
    }
}
