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
    // On a thread with a 256 MiB stack (reserved, touched only as used): a client reads JSON
    // of any depth (Node's JSON.parse), and what mcp-deploy reads is dropped, cloned and
    // compared by walks that recurse once a level; the main thread's 8 MiB overflowed at
    // 100 000 levels (issue 35). The reader's bound (`MAX_DEPTH`) is set below what fits.
    let run = std::thread::Builder::new()
        .name("mcp-deploy".into())
        .stack_size(256 << 20)
        .spawn(move || mcp_deploy::run(cli));
    match run.map(std::thread::JoinHandle::join) {
        Ok(Ok(exit)) => exit.into(),
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(e) => {
            eprintln!("error: cannot start mcp-deploy's thread: {e}");
            eprintln!("help: check the process and memory limits of this host (ulimit -u, -v)");
            std::process::ExitCode::from(2)
        }
    }
}
