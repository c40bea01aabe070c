//! The output layer: how a report reaches the user, as human text on stdout or as one JSON
//! document, and how stdout is written (a reader that went away is not an error).
//!
//! Every JSON document is one envelope: the report's fields with `"exit"`, the run's exit
//! status, right after `"ok"` ([`envelope`]); a dry run's starts with `"dry_run": true`.

pub(crate) mod content;
mod notice;
pub(crate) mod vendor;

use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::exit::Exit;
use crate::identity::report::Report;
use crate::registration::plan::DryRun;

pub(crate) use notice::notice;

/// `body` (a report that serializes to an object holding `"ok"`) with `"exit": exit` right
/// after `"ok"`.
pub(crate) fn envelope(body: &impl Serialize, exit: Exit) -> Value {
    let Value::Object(fields) = serde_json::to_value(body).expect("a report serializes") else {
        unreachable!("a report is an object");
    };
    let mut out = Map::new();
    for (k, v) in fields {
        let after_ok = k == "ok";
        out.insert(k, v);
        if after_ok {
            out.insert("exit".into(), Value::from(exit.code()));
        }
    }
    if !out.contains_key("exit") {
        out.insert("exit".into(), Value::from(exit.code()));
    }
    Value::Object(out)
}

/// The envelope of `body` on one line.
pub(crate) fn emit_json_line(body: &impl Serialize, exit: Exit) {
    emit(&format!("{}\n", envelope(body, exit)));
}

/// The envelope of `body`, indented.
pub(crate) fn emit_json_pretty(body: &impl Serialize, exit: Exit) {
    let doc = serde_json::to_string_pretty(&envelope(body, exit)).expect("JSON serializes");
    emit(&format!("{doc}\n"));
}

/// The human form: a line per registration and a line per check; `colour` marks ok and
/// FAIL in green and red.
pub(crate) fn human(report: &Report, colour: bool) -> String {
    let mut out = String::new();
    for s in &report.servers {
        let mut name = if s.registered_name == s.name {
            s.name.clone()
        } else {
            format!("{} (registered as {})", s.name, s.registered_name)
        };
        if s.client != "claude" {
            name.push_str(&format!(" in {}", s.client));
        }
        match &s.registration {
            Some(r) => out.push_str(&format!("{name}: {r}\n")),
            None => out.push_str(&format!("{name}\n")),
        }
        for c in &s.checks {
            let mark = match (c.ok, colour) {
                (true, false) => "ok  ",
                (false, false) => "FAIL",
                (true, true) => "\x1b[32mok\x1b[0m  ",
                (false, true) => "\x1b[1;31mFAIL\x1b[0m",
            };
            out.push_str(&format!("  {mark} {:<17} {}\n", c.check, c.detail));
        }
    }
    if let Some(path) = &report.flat_document {
        out.push_str(&format!("registration document: {path}\n"));
    }
    if !report.clients.is_empty() {
        let each: Vec<String> = report
            .clients
            .iter()
            .map(|c| match &c.version {
                Some(v) => format!("{} {v}", c.client),
                None if crate::clients::ClientKind::named(&c.client)
                    .is_some_and(|k| k.row().binary.is_none()) =>
                {
                    format!("{} (no binary)", c.client)
                }
                None => format!("{} (version unknown)", c.client),
            })
            .collect();
        out.push_str(&format!("clients: {}\n", each.join(", ")));
    }
    let failed: usize = report
        .servers
        .iter()
        .map(|s| s.checks.iter().filter(|c| !c.ok).count())
        .sum();
    if failed > 0 {
        out.push_str(&format!("{failed} check(s) failed\n"));
    }
    out
}

/// A check report (verify-identity, install, uninstall, status, render-mcp's refusal).
pub(crate) fn print(report: &Report, json: bool, exit: Exit) {
    if json {
        emit_json_pretty(report, exit);
    } else {
        emit(&human(report, colour(&std::io::stdout())));
    }
}

/// `promote` and `rollback`: what happened, then the checks (the preflight's, or the
/// verification's after the switch).
pub(crate) fn promotion(outcome: &crate::promotion::Outcome, json: bool, exit: Exit) {
    if json {
        return emit_json_pretty(outcome, exit);
    }
    let report = Report::new(outcome.servers.clone(), None);
    let mut text = human(&report, colour(&std::io::stdout()));
    if let Some(h) = &outcome.handshake {
        text.push_str(&format!("handshake: {h}\n"));
    }
    text.push_str(&format!("{}: {}\n", outcome.server, outcome.result));
    if let Some(r) = &outcome.still_running {
        text.push_str(&format!("processes: {}\n", r.sentence()));
    }
    emit(&text);
}

/// `prune`: what goes (or would go) and why each other release stays.
pub(crate) fn prune(outcome: &crate::promotion::prune::Pruned, json: bool, exit: Exit) {
    if json {
        return emit_json_pretty(outcome, exit);
    }
    let mut text = String::new();
    if outcome.dry_run {
        text.push_str("dry run: nothing is removed\n");
    }
    let verb = if outcome.dry_run {
        "would remove"
    } else {
        "removed"
    };
    for d in &outcome.remove {
        text.push_str(&format!("{verb} releases/{}: {}\n", d.release, d.why));
    }
    for d in &outcome.keep {
        text.push_str(&format!("keep   releases/{}: {}\n", d.release, d.why));
    }
    if outcome.remove.is_empty() {
        text.push_str("nothing to remove\n");
    }
    for n in &outcome.not_compared {
        text.push_str(&format!("not compared: {n}\n"));
    }
    emit(&text);
}

/// `install --dry-run`.
pub(crate) fn install_plan(plan: &DryRun, json: bool, exit: Exit) {
    if json {
        return emit_json_pretty(plan, exit);
    }
    let mut text = String::from("dry run: nothing is changed\n");
    for step in &plan.servers {
        text.push_str(&format!(
            "{}: would be {} in {} ({})\n",
            step.registered_name,
            step.registration,
            step.client,
            step.entry.as_deref().unwrap_or_default()
        ));
        for c in step.gate.iter().flatten() {
            let mark = if c.ok { "ok  " } else { "FAIL" };
            text.push_str(&format!("  gate {mark} {:<17} {}\n", c.check, c.detail));
        }
        for item in step.writes.iter().flatten() {
            text.push_str(&format!("  write {item}\n"));
        }
        for item in &step.client_calls {
            text.push_str(&format!("  run   {item}\n"));
        }
    }
    if !plan.ok {
        // The real run stops at the gate: nothing to write or call.
    } else if plan.writes_flat_document {
        text.push_str(&format!("write {}\n", plan.flat_document));
    } else {
        text.push_str(&format!(
            "leave {} as it is (it records this already)\n",
            plan.flat_document
        ));
    }
    if let Some(ledger) = &plan.appends_ledger {
        text.push_str(&format!("append {ledger}\n"));
    }
    for m in &plan.missing_binaries {
        text.push_str(&format!("note: {m}\n"));
    }
    if !plan.ok {
        text.push_str(
            "the deployment failed the checks marked FAIL: install would register nothing, \
             write nothing and call no client\n",
        );
    }
    emit(&text);
}

/// `uninstall --dry-run`.
pub(crate) fn removal_plan(plan: &DryRun, json: bool, exit: Exit) {
    if json {
        return emit_json_pretty(plan, exit);
    }
    let mut text = String::from("dry run: nothing is changed\n");
    for step in &plan.servers {
        if step.registration == "removed" {
            text.push_str(&format!(
                "{}: would be removed from {}\n",
                step.registered_name, step.client
            ));
        } else {
            text.push_str(&format!(
                "{}: not registered in {}, nothing to remove\n",
                step.registered_name, step.client
            ));
        }
        for item in &step.client_calls {
            text.push_str(&format!("  run   {item}\n"));
        }
    }
    if plan.writes_flat_document {
        text.push_str(&format!(
            "write {} without those names\n",
            plan.flat_document
        ));
    } else {
        text.push_str(&format!(
            "leave {} as it is (it records none of those names)\n",
            plan.flat_document
        ));
    }
    if let Some(ledger) = &plan.appends_ledger {
        text.push_str(&format!("append {ledger}\n"));
    }
    for m in &plan.missing_binaries {
        text.push_str(&format!("note: {m}\n"));
    }
    emit(&text);
}

/// `--color`, for the whole run: [`colour`] follows it.
pub(crate) fn set_colour(choice: clap::ColorChoice) {
    match choice {
        clap::ColorChoice::Auto => anstream::ColorChoice::Auto,
        clap::ColorChoice::Always => anstream::ColorChoice::Always,
        clap::ColorChoice::Never => anstream::ColorChoice::Never,
    }
    .write_global();
}

/// Whether to colour what goes to stdout: `--color always|never`, or with `auto` anstream's
/// rule — a terminal, `NO_COLOR` (https://no-color.org) unset or empty, `TERM` not `dumb`
/// (`CLICOLOR`/`CLICOLOR_FORCE` honoured too).
pub(crate) fn colour(stream: &std::io::Stdout) -> bool {
    anstream::AutoStream::choice(stream) != anstream::ColorChoice::Never
}

/// A progress line for a step that waits on a client, on stderr, only when a person watches it.
pub(crate) fn progress(message: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprintln!("{message}");
    }
}

/// The first error writing stdout met, other than a reader that went away.
static WRITE_ERROR: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Write to stdout: the one place that does. A reader that went away (`| head`, EPIPE) does
/// not change the verdict and must not panic the way `println!` does; the exit status still
/// tells the outcome. Any other failure (a full disk, a closed descriptor) is kept for
/// [`take_write_error`]: the run then reports it on stderr and exits 2.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let mut first = WRITE_ERROR.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert(e);
        }
    }
}

/// The error writing stdout met during this run, if any (see [`emit`]).
pub(crate) fn take_write_error() -> Option<std::io::Error> {
    WRITE_ERROR.lock().unwrap_or_else(|p| p.into_inner()).take()
}
