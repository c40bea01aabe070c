//! `verify-vendor`'s report: a line per check for people, one indented JSON object for tools.

use crate::exit::Exit;
use crate::vendored_sdk::VendorReport;

pub(crate) fn print(report: &VendorReport, json: bool, exit: Exit) {
    if json {
        super::emit_json_pretty(report, exit);
    } else {
        super::emit(&human(report));
    }
}

fn human(r: &VendorReport) -> String {
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
        let mark = if c.ok { "ok  " } else { "FAIL" };
        out += &format!("  {mark} {:<10} {}: {}\n", c.check, c.subject, c.detail);
        if let Some(h) = &c.help {
            out += &format!("       help: {h}\n");
        }
    }
    for i in &r.ignored {
        out += &format!("  skip {}: {}\n", i.path, i.reason);
    }
    let verdict = if r.ok { "ok" } else { "FAILED" };
    out += &format!("{verdict}: {}\n", r.summary);
    out
}
