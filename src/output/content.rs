//! `manifest verify`'s report: one line per difference for people, one JSON line for tools;
//! for JUnit and GitHub one check, `content`, whose detail lists the differences. And what
//! `manifest create` wrote ([`created`]).

use std::io::{self, Write};

use super::formats::{Case, Suite, Suites};
use super::{Format, Style};
use crate::content::manifest::{list_links, ContentReport};
use crate::content::sumfile::display_path;
use crate::exit::Exit;
use crate::identity::report::Check;

/// `manifest create`: the manifest written at `manifest` and how many files it lists.
pub(crate) fn created(manifest: &std::path::Path, files: usize, style: &Style) {
    if style.format == Format::Json {
        let doc = serde_json::json!({
            "ok": true,
            "manifest": manifest.display().to_string(),
            "files": files,
        });
        return super::emit_json_line(style, &doc, Exit::Success);
    }
    let s = if files == 1 { "" } else { "s" };
    super::emit(
        style,
        &format!("wrote {}: {files} file{s}\n", manifest.display()),
    );
}

/// `manifest verify`'s report, and the rows of the trust flags (`proofs`: `signature`,
/// `provenance`) checked over the same manifest bytes: in JSON as `proofs`, `ok` only when
/// every one passed too; in JUnit and GitHub a case each; for people a line each.
pub(crate) fn print(report: &ContentReport, proofs: &[Check], style: &Style, exit: Exit) {
    match style.format {
        Format::Json => {
            let mut doc = report.to_json();
            if !proofs.is_empty() {
                doc["ok"] = (report.ok() && proofs.iter().all(|c| c.ok)).into();
                doc["proofs"] = proofs
                    .iter()
                    .map(|c| serde_json::json!({"check": c.check, "ok": c.ok, "detail": c.detail}))
                    .collect();
            }
            return super::emit_json_line(style, &doc, exit);
        }
        Format::Junit | Format::Github => {
            return super::emit_machine(style, &suites(report, proofs, style, exit))
        }
        // `style` refuses prometheus here.
        Format::Human | Format::Prometheus => {}
    }
    let mut out = Vec::new();
    let colour = style.colour;
    write_human(&mut out, report, colour).expect("writing into a Vec cannot fail");
    for c in proofs {
        let verdict = match (c.ok, colour) {
            (true, true) => "\x1b[32mok\x1b[0m",
            (true, false) => "ok",
            (false, true) => "\x1b[1;31mFAILED\x1b[0m",
            (false, false) => "FAILED",
        };
        writeln!(out, "{verdict}: {}: {}", c.check, c.detail).expect("writing into a Vec");
    }
    super::emit(style, &String::from_utf8_lossy(&out));
}

/// One suite, the release, with one case, `content`: its detail the summary and then each
/// difference on a line of its own.
fn suites(r: &ContentReport, proofs: &[Check], style: &Style, exit: Exit) -> Suites {
    let mut lines = Vec::new();
    write_human(&mut lines, r, false).expect("writing into a Vec cannot fail");
    let lines = String::from_utf8_lossy(&lines);
    let mut detail = r.summary();
    for l in lines.lines().skip(1) {
        detail.push('\n');
        detail.push_str(l.trim_start());
    }
    let dir = r.dir.display().to_string();
    Suites {
        command: style.command,
        suites: vec![Suite {
            name: dir.clone(),
            classname: dir,
            cases: std::iter::once(Case {
                skipped: false,
                classname: None,
                name: "content".into(),
                ok: r.ok(),
                detail,
            })
            .chain(proofs.iter().map(|c| Case {
                skipped: c.skipped,
                classname: None,
                name: c.check.into(),
                ok: c.ok,
                detail: c.detail.clone(),
            }))
            .collect(),
            out: Vec::new(),
        }],
        ok: exit == Exit::Success,
        verdict: None,
    }
}

fn write_human(out: &mut impl Write, r: &ContentReport, colour: bool) -> io::Result<()> {
    let (ok, failed) = match colour {
        true => ("\x1b[32mok\x1b[0m", "\x1b[1;31mFAILED\x1b[0m"),
        false => ("ok", "FAILED"),
    };
    if r.ok() {
        return writeln!(out, "{ok}: {}: {}", r.dir.display(), r.summary());
    }
    writeln!(out, "{failed}: {}: {}", r.dir.display(), r.summary())?;
    for p in &r.modified {
        writeln!(out, "  modified: {}", display_path(p))?;
    }
    for p in &r.missing {
        writeln!(out, "  missing: {}", display_path(p))?;
    }
    for p in &r.added {
        writeln!(out, "  added: {}", display_path(p))?;
    }
    for l in &r.escaping_symlinks {
        writeln!(
            out,
            "  escaping symlink: {}",
            list_links(std::slice::from_ref(l))
        )?;
    }
    for p in &r.special_files {
        writeln!(out, "  special file: {}", display_path(p))?;
    }
    Ok(())
}
