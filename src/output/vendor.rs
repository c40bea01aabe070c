//! `verify-vendor`'s report: a line per check for people, one indented JSON object for tools;
//! for JUnit and GitHub one suite, the vendor directory, with a case per check, its class the
//! tarball (or file) checked.

use super::formats::{Case, Suite, Suites};
use super::{Format, Style};
use crate::exit::Exit;
use crate::vendored_sdk::{Pinned, VendorError, VendorReport};

/// `pin-vendor`'s outcome for `tarball`, and the exit that goes with it: the sidecar written,
/// or the refusal (exit 1, nothing written) with what pin-vendor needs instead.
pub(crate) fn pinned(tarball: &std::path::Path, pinned: &Pinned, style: &Style) -> Exit {
    match pinned {
        Pinned::Refused { error, manifest } => {
            eprintln!("refused: {error}; no sidecar written");
            // The general advice for a mismatch is to re-pin with this very command, which
            // just refused: say what pin-vendor needs instead.
            let help = match error {
                VendorError::DigestMismatch { .. } => Some(format!(
                    "the tarball is not the file {} lists: re-download it from the release, \
                     or give the manifest of the release it came from",
                    manifest.display()
                )),
                other => other.help(),
            };
            if let Some(h) = &help {
                eprintln!("help: {h}");
            }
            if style.format == Format::Json {
                let doc = serde_json::json!({"ok": false, "tarball": tarball.display().to_string(),
                    "refused": error.to_string(), "help": help});
                super::emit_json_line(style, &doc, Exit::CheckFailed);
            }
            Exit::CheckFailed
        }
        Pinned::Written {
            sidecar,
            sha256,
            change,
        } => {
            if style.format == Format::Json {
                let doc = serde_json::json!({"ok": true, "sidecar": sidecar.display().to_string(),
                    "sha256": sha256, "change": change});
                super::emit_json_line(style, &doc, Exit::Success);
            } else {
                super::emit(
                    style,
                    &format!("{}: sha256 {sha256} ({change})\n", sidecar.display()),
                );
            }
            Exit::Success
        }
    }
}

pub(crate) fn print(report: &VendorReport, style: &Style, exit: Exit) {
    match style.format {
        Format::Json => super::emit_json_pretty(style, report, exit),
        // `style` refuses prometheus here.
        Format::Human | Format::Prometheus => {
            super::emit(style, &human(report, style.colour, style.quiet()))
        }
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
                    skipped: false,
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
