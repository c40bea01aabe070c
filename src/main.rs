//! The `mcp-deploy` binary: parse the command line, run it, map the outcome to an exit code.
//! Everything else lives in the library so that it can be read and tested without a process.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = match mcp_deploy::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return mcp_deploy::usage_error(e).into(),
    };
    mcp_deploy::run(cli).into()
}
