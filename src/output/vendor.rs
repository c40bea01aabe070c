//! `verify-vendor`'s report: a line per check for people, one indented JSON object for tools;
//! for JUnit and GitHub one suite, the vendor directory, with a case per check, its class the
//! tarball (or file) checked.

use super::formats::{Case, Suite, Suites};
use super::{Format, Style};
use crate::exit::Exit;
use crate::vendored_sdk::VendorReport;

pub(crate) fn print(report: &VendorReport, style: &Style, exit: Exit) {
    match style.format {
        Format::Json => super::emit_json_pretty(report, exit),
        // `style` refuses prometheus here.
        Format::Human | Format::Prometheus => super::emit(&human(
            report,
            super::colour(&std::io::stdout()),
            style.quiet(),
        )),
        Format::Junit | Format::Github => super::emit_machine(style, &suites(report, style, exit)),
    }
}

fn suites(r: &VendorReport, style: &Style, exit: Exit) -> Suites {
    Suites {
        command: style.command,
        suites: vec![Suite {
            name: format!("vendor directory {}", r.dir),
            classname: r.dir.clone(),
            cases: r
                .checks
                .iter()
                .map(|c| Case {
                    classname: Some(c.subject.clone()),
                    name: c.check.to_string(),
                    ok: c.ok,
                    detail: match &c.help {
                        Some(h) if !c.ok => format!("{}\nhelp: {h}", c.detail),
                        _ => c.detail.clone(),
                    },
                })
                .collect(),
            out: r
                .ignored
                .iter()
                .map(|i| format!("skip {}: {}", i.path, i.reason))
                .collect(),
        }],
        ok: exit == Exit::Success,
        // Its summary is the count of checks, which the formats say themselves.
        verdict: None,
    }
}

/// `quiet`: only the failed checks and the verdict.
fn human(r: &VendorReport, colour: bool, quiet: bool) -> String {
    if quiet {
        let mut out = String::new();
        for c in r.checks.iter().filter(|c| !c.ok) {
            out += &check_line(c, colour);
        }
        let verdict = if r.ok { "ok" } else { "FAILED" };
        return out + &format!("{verdict}: {}\n", r.summary);
    }
    let mut out = format!("vendor directory {}\n", r.dir);
    if let Some(m) = &r.manifest {
        let s = if m.entries == 1 { "" } else { "s" };
        out += &format!(
            "release manifest {} ({}, {} file{s})\n",
            m.path, m.format, m.entries
        );
    }
    if let Some(p) = &r.project {
        let lock = p.lockfile.as_deref().unwrap_or("no lockfile");
        out += &format!("npm project {} ({lock})\n", p.dir);
    }
    for c in &r.checks {
        out += &check_line(c, colour);
    }
    for i in &r.ignored {
        out += &format!("  skip {}: {}\n", i.path, i.reason);
    }
    let verdict = if r.ok { "ok" } else { "FAILED" };
    out += &format!("{verdict}: {}\n", r.summary);
    out
}

fn check_line(c: &crate::vendored_sdk::VendorCheck, colour: bool) -> String {
    let mark = super::mark(c.ok, colour);
    let mut out = format!("  {mark} {:<10} {}: {}\n", c.check, c.subject, c.detail);
    if let Some(h) = &c.help {
        out += &format!("       help: {h}\n");
    }
    out
}
