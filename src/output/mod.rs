//! The output layer: how a report reaches the user — human text on stdout, one JSON
//! document, JUnit XML or GitHub Actions workflow commands ([`Format`], `formats.rs`) — and
//! how stdout is written (a reader that went away is not an error). `-q` and `-v`
//! ([`Verbosity`]) decide how much of it, and of the domain's notices on stderr, is said.
//! All of it is the run's [`Style`], passed down: no printer reads a global.
//!
//! Every JSON document is one envelope: the report's fields with `"exit"`, the run's exit
//! status, right after `"ok"`, then `"host"` and `"at"`, where and when it ran, and
//! `"machine"`, which machine that host name was ([`envelope`], `machine.rs`), so that reports
//! gathered from many hosts can be merged (`mcp-deploy report`); a dry run's starts with
//! `"dry_run": true`.

pub(crate) mod clients;
pub(crate) mod content;
pub(crate) mod fit;
pub(crate) mod formats;
pub(crate) mod machine;
mod notice;
pub(crate) mod policy;
pub(crate) mod prometheus;
pub(crate) mod render;
pub(crate) mod report;
pub(crate) mod vendor;

use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::exit::Exit;
use crate::identity::checks::DOCUMENT_ONLY;
use crate::identity::report::{Report, ServerReport};
use crate::registration::plan::DryRun;
use formats::{Case, Suite, Suites};

/// How a result is printed (`--format`, `--json`): the one type the flag parses into
/// (prometheus for status, verify-identity and reconcile only, `prometheus.rs`).
pub(crate) use crate::format::Format;

/// How much is said (`-q`, `-v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verbosity {
    /// Only the failed checks and the verdict; on stderr only warnings and errors.
    Quiet,
    Normal,
    /// Every client call and the progress lines on stderr, terminal or not.
    Verbose,
}

impl Verbosity {
    /// `-q` wins over `-v`.
    pub(crate) fn from_flags(quiet: bool, verbose: bool) -> Verbosity {
        match (quiet, verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        }
    }
}

/// How this run prints: the command's name (for the machine formats' titles), the format
/// and the verbosity.
#[derive(Debug)]
pub(crate) struct Style {
    pub(crate) command: &'static str,
    pub(crate) format: Format,
    pub(crate) verbosity: Verbosity,
    /// Whether what goes to stdout is coloured ([`colour`]).
    pub(crate) colour: bool,
    /// The first error writing stdout met ([`emit`]), other than a reader that went away.
    pub(crate) write_error: Mutex<Option<std::io::Error>>,
}

impl Style {
    pub(crate) fn quiet(&self) -> bool {
        self.verbosity == Verbosity::Quiet
    }

    /// Where the domain's notices go in this run: said on stderr as its verbosity has them.
    /// The command passes it down (`&style.notify()`) to every use case it calls.
    pub(crate) fn notify(&self) -> impl Fn(crate::notice::Notice) + Sync + '_ {
        move |n| notice::notice(n, self.verbosity)
    }
}

/// Where the client runner says each call as it ends ([`crate::clients::ClientOptions`]'s
/// `said`): the notice layer with `-v`, nowhere otherwise. A plain function, not a
/// [`crate::notice::Notify`]: the options it rides in are handed to threads and kept by each
/// client.
pub(crate) fn client_calls(v: Verbosity) -> Option<fn(crate::notice::Notice)> {
    (v == Verbosity::Verbose)
        .then_some((|n| notice::notice(n, Verbosity::Verbose)) as fn(crate::notice::Notice))
}

/// A run that could not complete (exit 2), in the run's format on stdout (stderr has the
/// message and its help line in any format): JSON's error object, a JUnit `<error>`, a GitHub
/// `::error`. Human output says it on stderr only.
pub(crate) fn error(style: &Style, message: &str, help: Option<&str>) {
    match style.format {
        // A partial exposition would read as every series gone: nothing, and the exit status.
        Format::Human | Format::Prometheus => {}
        Format::Json => {
            let (host, at, machine) = stamp();
            let doc = serde_json::json!({
                "ok": false,
                "exit": Exit::CouldNotRun.code(),
                "host": host,
                "at": at,
                "machine": machine,
                "error": message,
                "help": help,
            });
            emit(style, &format!("{doc}\n"));
        }
        Format::Junit => emit(style, &formats::junit_error(style.command, message, help)),
        Format::Github => emit(style, &formats::github_error(style.command, message, help)),
    }
}

/// A report in one of the machine formats that are not JSON.
fn emit_machine(style: &Style, suites: &Suites) {
    match style.format {
        Format::Junit => emit(style, &formats::junit(suites)),
        Format::Github => emit(style, &formats::github(suites, style.quiet())),
        Format::Human | Format::Json | Format::Prometheus => {
            unreachable!("not a machine format of its own")
        }
    }
}

/// Where and when this run is: the host name (the kernel's, as the ledger records it), the
/// time, UTC RFC 3339 in whole seconds, and the machine ([`machine::machine`], `None` where
/// there is no machine id).
pub(crate) fn stamp() -> (String, String, Option<String>) {
    use crate::registration::ledger;
    (
        ledger::host(),
        ledger::rfc3339(std::time::SystemTime::now()),
        machine::machine(),
    )
}

/// `body` (a report that serializes to an object holding `"ok"`) with `"exit": exit`, then
/// `"host"`, `"at"` and `"machine"` ([`stamp`]; `null` where there is no machine id), right
/// after `"ok"`.
pub(crate) fn envelope(body: &impl Serialize, exit: Exit) -> Value {
    let Value::Object(fields) = serde_json::to_value(body).expect("a report serializes") else {
        unreachable!("a report is an object");
    };
    let (host, at, machine) = stamp();
    let mut head = Map::new();
    head.insert("exit".into(), Value::from(exit.code()));
    head.insert("host".into(), Value::from(host));
    head.insert("at".into(), Value::from(at));
    head.insert("machine".into(), Value::from(machine));
    let mut out = Map::new();
    for (k, v) in fields {
        let after_ok = k == "ok";
        out.insert(k, v);
        if after_ok {
            out.append(&mut head);
        }
    }
    out.append(&mut head);
    Value::Object(out)
}

/// The envelope of `body` on one line.
pub(crate) fn emit_json_line(style: &Style, body: &impl Serialize, exit: Exit) {
    emit(style, &format!("{}\n", envelope(body, exit)));
}

/// The envelope of `body`, indented.
pub(crate) fn emit_json_pretty(style: &Style, body: &impl Serialize, exit: Exit) {
    let doc = serde_json::to_string_pretty(&envelope(body, exit)).expect("JSON serializes");
    emit(style, &format!("{doc}\n"));
}

/// The mark of a check: `ok` or `FAIL`, in green and red when `colour`.
/// A check's mark: `skip` for one that was not run, else [`mark`].
fn check_mark(c: &crate::identity::report::Check, colour: bool) -> &'static str {
    match (c.skipped, colour) {
        (true, false) => "skip",
        (true, true) => "\x1b[33mskip\x1b[0m",
        (false, _) => mark(c.ok, colour),
    }
}

pub(crate) fn mark(ok: bool, colour: bool) -> &'static str {
    match (ok, colour) {
        (true, false) => "ok  ",
        (false, false) => "FAIL",
        (true, true) => "\x1b[32mok\x1b[0m  ",
        (false, true) => "\x1b[1;31mFAIL\x1b[0m",
    }
}

/// How a server's report is headed: `codetools (registered as codetools-test) in codex`.
fn server_heading(s: &ServerReport) -> String {
    let mut name = if s.registered_name == s.name {
        s.name.clone()
    } else {
        format!("{} (registered as {})", s.name, s.registered_name)
    };
    if !crate::clients::is_primary(&s.client) {
        name.push_str(&format!(" in {}", s.client));
    }
    name
}

/// The class of a server's checks in the machine formats: its registered name, and the
/// client when it is not claude (as the human heading says it).
fn server_class(s: &ServerReport) -> String {
    if crate::clients::is_primary(&s.client) {
        s.registered_name.clone()
    } else {
        format!("{} in {}", s.registered_name, s.client)
    }
}

/// A suite per server and client, a case per check.
fn server_suites(servers: &[ServerReport]) -> Vec<Suite> {
    servers
        .iter()
        .map(|s| Suite {
            name: server_heading(s),
            classname: server_class(s),
            cases: s
                .checks
                .iter()
                .map(|c| Case {
                    classname: None,
                    name: c.check.to_string(),
                    ok: c.ok,
                    detail: c.detail.clone(),
                    skipped: c.skipped,
                })
                .collect(),
            out: s
                .registration
                .iter()
                .map(|r| format!("registration: {r}"))
                .collect(),
        })
        .collect()
}

/// The human form: a line per registration and a line per check; `colour` marks ok and
/// FAIL in green and red. `quiet`: only the servers with a failed check, only their failed
/// checks, and the verdict.
pub(crate) fn human(report: &Report, colour: bool, quiet: bool) -> String {
    let mut out = String::new();
    for s in &report.servers {
        if quiet && s.ok() {
            continue;
        }
        let name = server_heading(s);
        match &s.registration {
            Some(r) => out.push_str(&format!("{name}: {r}\n")),
            None => out.push_str(&format!("{name}\n")),
        }
        // A detail carries evidence read from files others may write (a cloned project's
        // .mcp.json names its servers): shown escaped, it cannot move the cursor or print a
        // line of its own.
        for c in s.checks.iter().filter(|c| !quiet || !c.ok) {
            out.push_str(&format!(
                "  {} {:<17} {}\n",
                check_mark(c, colour),
                c.check,
                crate::text::printable(&c.detail)
            ));
        }
    }
    if !quiet {
        if let Some(path) = &report.flat_document {
            out.push_str(&format!("registration document: {path}\n"));
        }
    }
    if !report.clients.is_empty() && !quiet {
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
    let (failed, skipped, total) = report.servers.iter().fold((0, 0, 0), |(f, k, t), s| {
        (
            f + s.checks.iter().filter(|c| !c.ok).count(),
            k + s.checks.iter().filter(|c| c.skipped).count(),
            t + s.checks.len(),
        )
    });
    if failed > 0 {
        out.push_str(&format!("{failed} check(s) failed\n"));
    } else if quiet && total > 0 {
        // Quiet keeps the verdict, which a pass otherwise leaves to the rows above it
        // (uninstall's report has no check, and so no verdict to keep), and what changes
        // what the pass means: checks not run, and a registration compared with the
        // document alone.
        let mut verdict = format!("ok: {} check(s) passed", total - skipped);
        if skipped > 0 {
            verdict.push_str(&format!(", {skipped} not run"));
        }
        let document_only: Vec<&str> = report
            .servers
            .iter()
            .filter(|s| s.witnesses.as_deref().is_some_and(|w| w == ["document"]))
            .map(|s| s.registered_name.as_str())
            .collect();
        if !document_only.is_empty() {
            verdict.push_str(&format!(" ({DOCUMENT_ONLY}: {})", document_only.join(", ")));
        }
        out.push_str(&format!("{verdict}\n"));
    }
    out
}

/// A check report (verify-identity, install, uninstall, status, render-mcp's refusal).
/// install's (and reconcile's) refusal when the deployment failed the gate: the report (each
/// server's verdict), then why nothing changed; the run exits 1.
pub(crate) fn refused_at_gate(report: &Report, style: &Style) {
    print(report, style, Exit::CheckFailed);
    // The line is human text: in a machine format it goes to stderr.
    if style.format != Format::Human {
        eprintln!("{GATE_LINE}");
    } else {
        emit_report(style, &format!("{GATE_LINE}\n"));
    }
}

/// What a gate failure says, after the failed checks.
const GATE_LINE: &str = "no registration was changed: install checks the deployment before it \
                         registers anything, and the deployment failed the checks above";

pub(crate) fn print(report: &Report, style: &Style, exit: Exit) {
    match style.format {
        Format::Json => emit_json_pretty(style, report, exit),
        Format::Human => emit_report(style, &human(report, style.colour, style.quiet())),
        Format::Prometheus => emit(
            style,
            &prometheus::exposition(
                report,
                style.command,
                std::time::SystemTime::now(),
                style.command == "reconcile" && exit == Exit::Success,
            ),
        ),
        Format::Junit | Format::Github => emit_machine(
            style,
            &Suites {
                command: style.command,
                suites: server_suites(&report.servers),
                ok: exit == Exit::Success,
                verdict: None,
            },
        ),
    }
}

/// `sample`: each sample deployment laid out, `(name, prefix, commit)`.
pub(crate) fn sample(laid_out: &[(&str, std::path::PathBuf, &str)], style: &Style) {
    if style.format == Format::Json {
        let servers: Vec<_> = laid_out
            .iter()
            .map(|(name, prefix, commit)| {
                serde_json::json!({"name": name, "prefix": prefix.display().to_string(), "commit": commit})
            })
            .collect();
        let doc = serde_json::json!({"ok": true, "servers": servers});
        return emit_json_line(style, &doc, Exit::Success);
    }
    for (name, prefix, commit) in laid_out {
        emit(
            style,
            &format!("{name}: {} (commit {commit})\n", prefix.display()),
        );
    }
}

/// `promote` and `rollback`: what happened, then the checks (the preflight's, or the
/// verification's after the switch).
pub(crate) fn promotion(outcome: &crate::promotion::Outcome, style: &Style, exit: Exit) {
    let result = format!("{}: {}", outcome.server, outcome.result);
    match style.format {
        Format::Json => return emit_json_pretty(style, outcome, exit),
        Format::Junit | Format::Github => {
            let mut suites = server_suites(&outcome.servers);
            let mut extra: Vec<String> = outcome
                .handshake
                .iter()
                .map(|h| format!("handshake: {h}"))
                .collect();
            if let Some(r) = &outcome.still_running {
                extra.push(format!("processes: {}", r.sentence()));
            }
            match suites.first_mut() {
                Some(first) => first.out.extend(extra),
                None => suites.push(Suite {
                    name: outcome.server.clone(),
                    classname: outcome.server.clone(),
                    cases: Vec::new(),
                    out: extra,
                }),
            }
            return emit_machine(
                style,
                &Suites {
                    command: style.command,
                    suites,
                    ok: exit == Exit::Success,
                    verdict: Some(result),
                },
            );
        }
        // `style` refuses prometheus for promote and rollback.
        Format::Human | Format::Prometheus => {}
    }
    // What happened to each registration, said as the registration's ("registration
    // unchanged"), so that it does not read as the promote's own outcome before the result
    // line ("promoted") says that.
    let servers = outcome
        .servers
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.registration = s.registration.map(|r| format!("registration {r}"));
            s
        })
        .collect();
    let report = Report::new(servers, None);
    let quiet = style.quiet();
    let mut text = human(&report, style.colour, quiet);
    // Said once: where the report's rows hold the handshake check (a dry run, a refused
    // preflight), the line would repeat it.
    let in_rows = outcome
        .servers
        .iter()
        .any(|s| s.checks.iter().any(|c| c.check == "handshake"));
    if let Some(h) = outcome.handshake.as_ref().filter(|_| !quiet && !in_rows) {
        text.push_str(&format!("handshake: {h}\n"));
    }
    text.push_str(&format!("{result}\n"));
    if let Some(r) = &outcome.still_running {
        text.push_str(&format!("processes: {}\n", r.sentence()));
    }
    emit_report(style, &text);
}

/// `prune`: what goes (or would go) and why each other release stays.
pub(crate) fn prune(outcome: &crate::promotion::prune::Pruned, style: &Style, exit: Exit) {
    if style.format == Format::Json {
        return emit_json_pretty(style, outcome, exit);
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
    emit_report(style, &text);
}

/// A dry run's plan in the machine formats: a suite per name and client, the gate's checks
/// its cases (uninstall's plan has none), what it would do its lines.
fn plan_suites(plan: &DryRun, style: &Style, exit: Exit, verdict: String) -> Suites {
    let suites = plan
        .servers
        .iter()
        .map(|step| {
            let class = if crate::clients::is_primary(step.client) {
                step.registered_name.clone()
            } else {
                format!("{} in {}", step.registered_name, step.client)
            };
            let mut out = vec![format!("would be {}", step.registration)];
            out.extend(step.writes.iter().flatten().map(|w| format!("write {w}")));
            out.extend(step.client_calls.iter().map(|c| format!("run {c}")));
            Suite {
                name: class.clone(),
                classname: class,
                cases: step
                    .gate
                    .iter()
                    .flatten()
                    .map(|c| Case {
                        classname: None,
                        name: format!("gate {}", c.check),
                        ok: c.ok,
                        detail: c.detail.clone(),
                        skipped: c.skipped,
                    })
                    .collect(),
                out,
            }
        })
        .collect();
    Suites {
        command: style.command,
        suites,
        ok: exit == Exit::Success,
        verdict: Some(verdict),
    }
}

/// `install --dry-run`.
pub(crate) fn install_plan(plan: &DryRun, style: &Style, exit: Exit) {
    let verdict = if plan.ok {
        "dry run: nothing is changed".to_string()
    } else {
        "dry run: the deployment failed the gate, install would register nothing".to_string()
    };
    match style.format {
        Format::Json => return emit_json_pretty(style, plan, exit),
        Format::Junit | Format::Github => {
            return emit_machine(style, &plan_suites(plan, style, exit, verdict))
        }
        Format::Human | Format::Prometheus => {}
    }
    let colour = style.colour;
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
            text.push_str(&format!(
                "  gate {} {:<17} {}\n",
                check_mark(c, colour),
                c.check,
                crate::text::printable(&c.detail)
            ));
        }
        for item in step.writes.iter().flatten() {
            text.push_str(&format!("  write {item}\n"));
        }
        for item in &step.client_calls {
            text.push_str(&format!("{}{item}\n", fit::RUN));
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
    emit_report(style, &text);
}

/// `uninstall --dry-run`.
pub(crate) fn removal_plan(plan: &DryRun, style: &Style, exit: Exit) {
    match style.format {
        Format::Json => return emit_json_pretty(style, plan, exit),
        Format::Junit | Format::Github => {
            let verdict = "dry run: nothing is changed".to_string();
            return emit_machine(style, &plan_suites(plan, style, exit, verdict));
        }
        Format::Human | Format::Prometheus => {}
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
            text.push_str(&format!("{}{item}\n", fit::RUN));
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
    emit_report(style, &text);
}

/// Whether to colour what goes to stdout, decided once for the run ([`Style::colour`]):
/// `--color always|never`, or with `auto` anstream's rule — a terminal, `NO_COLOR`
/// (https://no-color.org) unset or empty, `TERM` not `dumb` (`CLICOLOR`/`CLICOLOR_FORCE`
/// honoured too).
pub(crate) fn colour(choice: clap::ColorChoice) -> bool {
    match choice {
        clap::ColorChoice::Always => true,
        clap::ColorChoice::Never => false,
        clap::ColorChoice::Auto => {
            anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
        }
    }
}

/// A progress line for a step that waits on a client, on stderr, only when a person watches it.
/// `-v` shows it whatever stderr is; `-q` never.
fn progress(message: &str, verbosity: Verbosity) {
    use std::io::IsTerminal;
    let shown = match verbosity {
        Verbosity::Quiet => false,
        Verbosity::Normal => std::io::stderr().is_terminal(),
        Verbosity::Verbose => true,
    };
    if shown {
        eprintln!("{message}");
    }
}

/// A report's human form ([`fit::for_humans`]: 100 columns, short shas) to stdout.
fn emit_report(style: &Style, text: &str) {
    emit(style, &fit::for_humans(text));
}

/// Write to stdout: the one place that does. A reader that went away (`| head`, EPIPE) does
/// not change the verdict and must not panic the way `println!` does; the exit status still
/// tells the outcome. Any other failure (a full disk, a closed descriptor) is kept for
/// [`take_write_error`]: the run then reports it on stderr and exits 2.
pub(crate) fn emit(style: &Style, text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let mut first = style.write_error.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert(e);
        }
    }
}

/// The error writing stdout met during the run of `style`, if any (see [`emit`]).
pub(crate) fn take_write_error(style: &Style) -> Option<std::io::Error> {
    style
        .write_error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
}
