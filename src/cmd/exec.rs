//! `exec`: the server of `--prefix` (and `--server`), the domain's checked launch
//! ([`crate::launch`]): on a pass this process becomes the server; on a refusal one line on
//! stderr (the client shows it as the server's failure to start), a ledger record, exit 1 or 2.

use crate::cli::ExecArgs;
use crate::deployment::declaration::{Declaration, Source};
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::launch::{self, LaunchError, Seen};
use crate::registration::ledger::{self, Record};

pub(crate) fn run(args: &ExecArgs) -> Result<Exit, Error> {
    let decl = Declaration::load(Source::file(args.config.as_deref()))?;
    let (server, prefix) = selection::single(
        &decl,
        &args.at.prefix,
        args.at.server.as_deref(),
        &Default::default(),
    )?;
    let mut seen = Seen::default();
    let given: Vec<_> = std::env::vars_os().collect();
    let refused = match launch::check(server, &prefix, &args.args, given, &mut seen) {
        Ok(checked) => {
            if !checked.dropped.is_empty() {
                eprintln!(
                    "mcp-deploy exec: {}: not passed to the server (neither declared nor \
                     inherited): {}",
                    server.name,
                    checked.dropped.join(", ")
                );
            }
            launch::exec(checked)
        }
        Err(e) => e,
    };
    let at = seen
        .release
        .as_ref()
        .map_or_else(|| prefix.display().to_string(), |r| r.display().to_string());
    eprintln!(
        "mcp-deploy exec: refused to start {} ({at}): {refused}{}",
        server.name,
        match &refused {
            LaunchError::Pin(p) => format!(" (help: {})", p.help()),
            _ => String::new(),
        }
    );
    let mut record = Record::now("exec", &server.name, &server.name, "launch refused");
    record.release = seen.release.map(|r| r.display().to_string());
    record.commit = seen.commit;
    record.new = Some(serde_json::json!({ "refused": refused.to_string() }));
    let path = args
        .ledger
        .ledger
        .clone()
        .unwrap_or_else(ledger::default_path);
    if let Err(e) = ledger::append(&path, &[record]) {
        eprintln!("mcp-deploy exec: the refusal was not recorded: {e}");
    }
    Ok(if refused.is_check() {
        Exit::CheckFailed
    } else {
        Exit::CouldNotRun
    })
}
