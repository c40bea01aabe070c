//! The output layer: how a report reaches the user, as human text on stdout or as one JSON
//! document, and how stdout is written (a reader that went away is not an error).

use crate::identity::report::Report;

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
    if let Some(path) = &report.registered {
        out.push_str(&format!("registration document: {path}\n"));
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

pub(crate) fn print(report: &Report, json: bool) {
    if json {
        emit(&format!("{}\n", report.to_json()));
    } else {
        emit(&human(report, colour(&std::io::stdout())));
    }
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

/// Write to stdout. A reader that went away (`| head`) does not change the verdict and must
/// not panic the way `println!` does; the exit status still tells the outcome.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
