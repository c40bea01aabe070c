//! The `mcp-deploy` binary: parse the command line, run it, map the outcome to an exit code.
//! Everything else lives in the library so that it can be read and tested without a process.

fn main() -> std::process::ExitCode {
    // The exec shim every client call and server is started through: an internal entry, not
    // a command (see `mcp_deploy::exec_child`).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == mcp_deploy::EXEC_CHILD) {
        return mcp_deploy::exec_child(&args[2..]);
    }
    let cli = match mcp_deploy::parse_args() {
        Ok(cli) => cli,
        Err(e) => return mcp_deploy::usage_error(e).into(),
    };
    mcp_deploy::run(cli).into()
}
