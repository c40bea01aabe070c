//! What still runs an old release of a prefix: the process scan
//! ([`crate::deployment::processes`]) read against the prefix's `current` and promote
//! history, for `status` (a `processes` row), promote (how many still run the release it
//! switched away from) and prune (a release a process uses stays).
//!
//! `status` passes with a warning row when processes still run a release other than
//! `current`, and fails it only with `--strict`: after every promote, agent sessions keep the
//! server they started until they restart it, which is expected, and the deployment and its
//! registrations are still exactly what was deployed. A status that failed after each promote
//! until every session on the host restarted would be red for hours and soon ignored; the row
//! says how many processes, which release and which pids, and `--strict` (a CI gate, a host
//! that must have restarted everything) fails on it.
//!
//! A process that cannot be read (another user's without privilege, or one holding
//! capabilities we lack: a container's init is one, on every run) is named in the row ("not
//! compared: …") and never read as absent, but fails nothing, `--strict` included: a check
//! that can never pass in a container would only teach people to drop `--strict`.

use std::path::Path;

use serde::Serialize;

use crate::deployment::processes::{self, count, pids, Releases, Scan};
use crate::identity::report::Check;
use crate::promotion::history::History;

/// The releases of the prefix at `prefix`, with what was live before the last switch taken
/// from its history, reading only (nothing is created). `None`: no `releases/` there.
pub(crate) fn releases_of(prefix: &Path) -> Option<Releases> {
    let before = crate::promotion::prefix::Prefix::open(prefix)
        .ok()
        .and_then(|p| p.peek_state_file("history.ndjson").ok())
        .and_then(|h| History::read(&h).ok())
        .and_then(|h| {
            let live = Releases::of(prefix, None)?.live?;
            h.before(&live).ok()
        });
    Releases::of(prefix, before)
}

/// `status`'s `processes` row for the release layout at `prefix`; `None` when it has no
/// `releases/`.
pub(crate) fn status_check(prefix: &Path, strict: bool) -> Option<Check> {
    let releases = releases_of(prefix)?;
    let scan = processes::scan(&releases);
    Some(check(&releases, &scan, strict))
}

fn check(releases: &Releases, scan: &Scan, strict: bool) -> Check {
    let live = releases.live.as_deref();
    let mut old: Vec<(String, Vec<String>)> = Vec::new();
    let mut on_live = 0;
    for h in &scan.holders {
        if Some(h.release.as_str()) == live {
            on_live += 1;
            continue;
        }
        match old.iter_mut().find(|(r, _)| *r == h.release) {
            Some((_, v)) => v.push(h.describe()),
            None => old.push((h.release.clone(), vec![h.describe()])),
        }
    }
    let live_part = match live {
        Some(l) => format!(
            "{} run{} releases/{l} (current)",
            count(on_live, "process", "processes"),
            if on_live == 1 { "s" } else { "" }
        ),
        None => "no `current`".to_string(),
    };
    let mut parts: Vec<String> = old
        .iter()
        .map(|(r, who)| {
            let shown: Vec<&str> = who
                .iter()
                .take(processes::SHOWN)
                .map(String::as_str)
                .collect();
            let more = who.len().saturating_sub(processes::SHOWN);
            format!(
                "{} still run{} releases/{r}: {}{}",
                count(who.len(), "process", "processes"),
                if who.len() == 1 { "s" } else { "" },
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    let unknown = scan.unknown();
    if let Some(u) = &unknown {
        parts.push(format!("not compared: {u}"));
    }
    if parts.is_empty() {
        return Check {
            skipped: false,
            check: "processes",
            ok: true,
            detail: format!("no process runs another release; {live_part}"),
        };
    }
    let mut detail = parts.join("; ");
    if old.is_empty() {
        // Only what could not be read: named, and no failure even with --strict (see the
        // module's header).
        return Check {
            skipped: false,
            check: "processes",
            ok: true,
            detail: format!("no readable process runs another release; {detail}; {live_part}"),
        };
    }
    detail.push_str(
        " (they keep it until their agent session restarts them; prune keeps it meanwhile)",
    );
    detail.push_str(&format!("; {live_part}"));
    Check {
        skipped: false,
        check: "processes",
        ok: !strict,
        detail: if strict {
            detail
        } else {
            format!("warning: {detail}")
        },
    }
}

/// What promote says of the release it switched away from.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StillRunning {
    /// The release live before the switch.
    pub(crate) release: String,
    /// How many processes still run it.
    pub(crate) processes: usize,
    pub(crate) pids: Vec<u32>,
    /// Processes that could not be read (or were not scanned): they may run it too.
    pub(crate) unreadable: usize,
}

impl StillRunning {
    /// Scan just after `current` was switched from `from`.
    pub(crate) fn after_switch(prefix: &Path, from: &str) -> Option<StillRunning> {
        let mut releases = Releases::of(prefix, Some(from.to_string()))?;
        // The switch just made: a process started before it and reaching the release
        // through `current` started on `from`.
        if let Some((_, before)) = releases.switched.as_mut() {
            *before = Some(from.to_string());
        }
        let scan = processes::scan(&releases);
        let held: Vec<u32> = scan.of(from).map(|h| h.pid).collect();
        Some(StillRunning {
            release: from.to_string(),
            processes: held.len(),
            pids: held,
            unreadable: scan.unreadable.len() + scan.not_scanned,
        })
    }

    /// `2 processes still run releases/a (pids 1, 2): …`.
    pub(crate) fn sentence(&self) -> String {
        let mut s = if self.processes == 0 {
            format!("no process still runs releases/{}", self.release)
        } else {
            format!(
                "{} still run{} releases/{} ({}): they keep it until their agent session \
                 restarts them",
                count(self.processes, "process", "processes"),
                if self.processes == 1 { "s" } else { "" },
                self.release,
                pids(&self.pids)
            )
        };
        if self.unreadable > 0 {
            s.push_str(&format!(
                "; {} could not be read and may run it too",
                count(self.unreadable, "process", "processes")
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::processes::{Holder, Via};
    use std::path::PathBuf;

    fn releases() -> Releases {
        Releases {
            current_link: PathBuf::from("/p/current"),
            dir: PathBuf::from("/p/releases"),
            live: Some("b".into()),
            switched: None,
        }
    }

    fn holder(pid: u32, release: &str) -> Holder {
        Holder {
            pid,
            release: release.into(),
            via: Via::Exe,
            path: format!("/p/releases/{release}/bin/x"),
        }
    }

    #[test]
    fn processes_on_an_old_release_warn_and_fail_only_when_strict() {
        let scan = Scan {
            holders: vec![holder(1, "a"), holder(2, "a"), holder(3, "b")],
            ..Scan::default()
        };
        let c = check(&releases(), &scan, false);
        assert!(c.ok);
        assert_eq!(
            c.detail,
            "warning: 2 processes still run releases/a: pid 1 (exe /p/releases/a/bin/x), pid 2 \
             (exe /p/releases/a/bin/x) (they keep it until their agent session restarts them; \
             prune keeps it meanwhile); 1 process runs releases/b (current)"
        );
        assert!(!check(&releases(), &scan, true).ok);
        let clean = Scan {
            holders: vec![holder(3, "b")],
            ..Scan::default()
        };
        let c = check(&releases(), &clean, true);
        assert!(c.ok, "{c:?}");
    }

    #[test]
    fn unreadable_processes_are_named_never_absent() {
        let scan = Scan {
            unreadable: vec![9],
            ..Scan::default()
        };
        let c = check(&releases(), &scan, true);
        assert!(c.ok);
        assert_eq!(
            c.detail,
            "no readable process runs another release; not compared: 1 process not readable by \
             this user (pid 9); 0 processes run releases/b (current)"
        );
    }
}
