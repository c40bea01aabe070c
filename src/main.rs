//! The `mcp-deploy` binary: parse the command line, run it, map the outcome to an exit code.
//! Everything else lives in the library so that it can be read and tested without a process.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = mcp_deploy::cli::Cli::parse();
    mcp_deploy::run(cli).into()
}
