//! `manifest verify`'s report: one line per difference for people, one JSON line for tools.

use std::io::{self, Write};

use crate::content::manifest::{list_links, ContentReport};
use crate::content::sumfile::display_path;
use crate::exit::Exit;

pub(crate) fn print(report: &ContentReport, json: bool, exit: Exit) {
    if json {
        return super::emit_json_line(&report.to_json(), exit);
    }
    let mut out = Vec::new();
    write_human(&mut out, report).expect("writing into a Vec cannot fail");
    super::emit(&String::from_utf8_lossy(&out));
}

fn write_human(out: &mut impl Write, r: &ContentReport) -> io::Result<()> {
    if r.ok() {
        return writeln!(out, "ok: {}: {}", r.dir.display(), r.summary());
    }
    writeln!(out, "FAILED: {}: {}", r.dir.display(), r.summary())?;
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
