//! `report`'s output: the fleet as a table (a row per host, server and client: release,
//! commit, the checks' verdict and each check's, what drifted), each failed check's evidence under its row,
//! and the host's other current reports (`also current:`), then the superseded and duplicate
//! reports and the verdict; or the merged view as one JSON object.

use super::{Format, Style};
use crate::exit::Exit;
use crate::identity::fleet::Fleet;

pub(crate) fn print(fleet: &Fleet, style: &Style, exit: Exit) {
    match style.format {
        Format::Json => super::emit_json_pretty(style, fleet, exit),
        // `report` takes human and json only.
        _ => super::emit(style, &human(fleet)),
    }
}

/// The last component of a release directory (`releases/<sha>` → the sha, a prefix → its
/// name), and a commit's first 12 characters: what fits a column.
fn short(release: Option<&str>, commit: Option<&str>) -> (String, String) {
    let release = release
        .map(|r| {
            std::path::Path::new(r)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| r.to_string())
        })
        .map(|r| r.chars().take(12).collect())
        .unwrap_or_else(|| "-".into());
    let commit = commit
        .map(|c| c.chars().take(12).collect())
        .unwrap_or_else(|| "-".into());
    (release, commit)
}

/// The row of a host that reported no server: its verdict (under `CHECKS`) and why, the
/// check columns empty.
fn host_only(host: &str, verdict: &str, drift: &str, checks: usize) -> Vec<String> {
    let mut row = vec![host.to_string()];
    row.extend(std::iter::repeat_n("-".to_string(), 4));
    row.push(verdict.into());
    row.extend(std::iter::repeat_n("-".to_string(), checks));
    row.push(drift.into());
    row
}

/// The table: `HOST SERVER CLIENT RELEASE COMMIT CHECKS`, a column per check any report
/// names (in the order first met; `ok`, `FAIL`, or `-` where that report has no such
/// check), then `DRIFT`.
pub(crate) fn human(fleet: &Fleet) -> String {
    let mut names: Vec<&str> = Vec::new();
    for c in fleet
        .hosts
        .iter()
        .flat_map(|h| &h.servers)
        .flat_map(|s| &s.checks)
    {
        if !names.contains(&c.check.as_str()) {
            names.push(&c.check);
        }
    }
    let mut head: Vec<String> = ["HOST", "SERVER", "CLIENT", "RELEASE", "COMMIT", "CHECKS"]
        .map(String::from)
        .into();
    head.extend(names.iter().map(|n| n.to_string()));
    head.push("DRIFT".into());
    // Each row, and the lines under it.
    let mut rows: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for h in &fleet.hosts {
        if let Some(error) = &h.error {
            let cells = host_only(&h.host, "FAIL", "could not run", names.len());
            rows.push((cells, vec![format!("error: {error}")]));
        }
        for s in &h.servers {
            let (release, commit) = short(s.release.as_deref(), s.commit.as_deref());
            let passed = s.checks.iter().filter(|c| c.ok).count();
            let verdict = match s.ok {
                true => format!("ok {passed}/{}", s.checks.len()),
                false => format!("FAIL {passed}/{}", s.checks.len()),
            };
            let drift = match (s.drift.is_empty(), &s.registration) {
                (true, Some(r)) if r.starts_with("healed") => r.clone(),
                (true, _) => "-".into(),
                (false, _) => s.drift.join(","),
            };
            let name = if s.registered_name == s.name {
                s.name.clone()
            } else {
                s.registered_name.clone()
            };
            let mut cells = vec![h.host.clone(), name, s.client.clone(), release, commit];
            cells.push(verdict);
            for n in &names {
                let mine: Vec<bool> = s
                    .checks
                    .iter()
                    .filter(|c| c.check == *n)
                    .map(|c| c.ok)
                    .collect();
                cells.push(match (mine.is_empty(), mine.iter().all(|ok| *ok)) {
                    (true, _) => "-".into(),
                    (false, true) => "ok".into(),
                    (false, false) => "FAIL".into(),
                });
            }
            cells.push(drift);
            let under = s
                .checks
                .iter()
                .filter(|c| !c.ok)
                .map(|c| format!("FAIL {}: {}", c.check, c.detail))
                .collect();
            rows.push((cells, under));
        }
        if h.error.is_none() && h.servers.is_empty() {
            let verdict = if h.ok { "ok" } else { "FAIL" };
            rows.push((host_only(&h.host, verdict, "-", names.len()), Vec::new()));
        }
        if let (Some(stale), Some(last)) = (&h.stale, rows.last_mut()) {
            last.1.push(format!(
                "stale: {}'s report (at {}) was {stale}",
                h.host, h.at
            ));
        }
        if let (Some(ahead), Some(last)) = (&h.ahead, rows.last_mut()) {
            last.1.push(format!(
                "clock ahead: {}'s report (at {}) is {ahead}",
                h.host, h.at
            ));
        }
        if let (Some(clash), Some(last)) = (&h.clash, rows.last_mut()) {
            last.1.push(format!("clash: {clash}"));
        }
        if let Some(last) = rows.last_mut() {
            for a in &h.also {
                let verdict = match &a.fails {
                    None => "passes".to_string(),
                    Some(f) => format!("FAILS ({f})"),
                };
                last.1.push(format!(
                    "also current: {}'s report {} (at {}) {verdict}: {}",
                    h.host, a.file, a.at, a.why
                ));
            }
        }
    }
    for m in &fleet.missing {
        let cells = host_only(m, "FAIL", "no report", names.len());
        rows.push((
            cells,
            vec![format!("missing: no report from {m} (--expect-host)")],
        ));
    }
    // Every value came from a host's report: none may move the cursor, clear the screen or
    // start a line of its own (a detail holding "\nok: 3 host(s), every check passed").
    let rows: Vec<(Vec<String>, Vec<String>)> = rows
        .into_iter()
        .map(|(cells, under)| {
            (
                cells.iter().map(|c| crate::text::printable(c)).collect(),
                under.iter().map(|u| crate::text::printable(u)).collect(),
            )
        })
        .collect();
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for (cells, _) in &rows {
        for (w, c) in width.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            if i + 1 == cells.len() {
                l.push_str(c);
            } else {
                l.push_str(&format!("{c:<w$}  "));
            }
        }
        format!("{}\n", l.trim_end())
    };
    let mut out = line(
        &head
            .iter()
            .map(|h| crate::text::printable(h))
            .collect::<Vec<_>>(),
    );
    for (cells, under) in &rows {
        out.push_str(&line(cells));
        for u in under {
            out.push_str(&format!("  {u}\n"));
        }
    }
    for s in &fleet.superseded {
        let line = match s.why {
            "duplicate" => format!(
                "duplicate: {}'s report {} is the same report as {}, counted once",
                s.host, s.file, s.by
            ),
            _ => format!(
                "superseded: {}'s report {} (at {}) by {}, a newer one of the same host",
                s.host, s.file, s.at, s.by
            ),
        };
        out.push_str(&crate::text::printable(&line));
        out.push('\n');
    }
    let failing: Vec<String> = fleet
        .hosts
        .iter()
        .filter(|h| !h.ok)
        .map(|h| match h.clash {
            Some(_) => format!("{} (machine {})", h.host, h.label_machine()),
            None => h.host.clone(),
        })
        .chain(fleet.missing.iter().cloned())
        .collect();
    let total = fleet.hosts.len() + fleet.missing.len();
    match failing.is_empty() {
        true => out.push_str(&format!("ok: {total} host(s), every check passed\n")),
        false => out.push_str(&format!(
            "{} of {total} host(s) failed: {}\n",
            failing.len(),
            crate::text::printable(&failing.join(", "))
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::fleet::{merge, Expect};

    fn report(host: &str, at: &str, ok: bool) -> serde_json::Value {
        serde_json::json!({"ok": ok, "exit": if ok {0} else {1}, "host": host, "at": at,
            "servers": [{"name": "codetools", "client": "claude", "commit": "c0de",
            "checks": [{"check": "commit", "ok": ok, "detail": "d"}]}]})
    }

    /// Issue 35.6: the table names each current report beside the one it shows, the date of
    /// one dated ahead, and a duplicate as such (never "superseded by a newer one").
    #[test]
    fn the_table_names_every_current_report_a_clock_ahead_and_a_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let docs = [
            ("a.json", report("web-1", "2026-12-02T18:00:00Z", false)),
            ("b.json", report("web-1", "2026-12-02T18:00:00Z", true)),
            ("c.json", report("web-1", "2026-12-02T18:00:00Z", true)),
            ("d.json", report("web-2", "2026-12-03T18:00:00Z", true)),
        ];
        let files: Vec<std::path::PathBuf> = docs
            .iter()
            .map(|(name, doc)| {
                let f = dir.path().join(name);
                std::fs::write(&f, doc.to_string()).unwrap();
                f
            })
            .collect();
        let now = humantime::parse_rfc3339("2026-12-02T18:10:00Z").unwrap();
        let fleet = merge(&files, &Expect::default(), now).unwrap();
        let d = dir.path().display().to_string();
        let text = human(&fleet).replace(&d, "D");
        let expected = [
            "  also current: web-1's report D/b.json (at 2026-12-02T18:00:00Z) passes: it was \
             made the same second as the one shown: neither is the later",
            "  clock ahead: web-2's report (at 2026-12-03T18:00:00Z) is dated 23h 50m ahead of \
             this clock, more than the 5m a clock may run ahead: its host's clock is wrong, so \
             its age cannot be told and no later report can replace it",
            "duplicate: web-1's report D/c.json is the same report as D/b.json, counted once",
            "2 of 2 host(s) failed: web-1, web-2",
        ];
        for line in expected {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line:?} in\n{text}"
            );
        }
        assert!(!text.contains("superseded:"), "{text}");
    }
}
