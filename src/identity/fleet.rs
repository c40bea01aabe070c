//! A fleet's reports merged (`mcp-deploy report FILE...`): the JSON reports of many hosts
//! (`status`, `verify-identity`, `install`, `reconcile`, ... `--json`, each carrying the
//! `"host"` it ran on and when, `"at"`) read, checked to be reports, and merged into one view:
//! a row per host and server with its release, commit, each check's verdict and what drifted.
//!
//! 1. Read every file (`-`: stdin, once). A file that cannot be read, is not JSON, or is not
//!    a report (no `"ok"`, `"host"`, `"at"`) stops the merge: [`FleetError`] names the file.
//! 2. A report that says it could not run (`"exit": 2`, an `"error"`) is kept: its host fails
//!    with that error, it does not vanish from the table.
//! 3. Two reports from one host: the newer (`at`) wins; at the same second, the one given
//!    later. The older is listed as superseded, with the file that replaced it. Two reports
//!    that give one host name but different machines (`"machine"`, `output/machine.rs`) are
//!    two hosts, not one superseding the other, and both fail as clashing: cloned machines
//!    that kept one name would otherwise hide the older one's failure.
//! 4. With `--max-age`, a host whose winning report is older than that fails as stale: a host
//!    that stopped reporting does not pass on its last good report. One dated further ahead
//!    than that fails too: its clock is wrong, and its report would never grow old.
//! 5. With `--expect-host`, each named host without a report fails as missing: a host whose
//!    report never arrived does not vanish from the fleet.
//! 6. The fleet is ok when every host's winning report is ok with every check passed, none is
//!    stale, none clashes and none is missing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub(crate) enum FleetError {
    #[error("cannot read the report {}: {source}", .file.display())]
    Unreadable {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not JSON ({why})", .file.display())]
    NotJson { file: PathBuf, why: String },
    #[error("{} is not an mcp-deploy report: {why}", .file.display())]
    NotAReport { file: PathBuf, why: NotAReport },
    #[error("stdin (`-`) is given twice; it can be read once")]
    StdinTwice,
}

/// Why a JSON document is not an mcp-deploy report: the key it lacks, and the server it was
/// reading when the key is a server's.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotAReport {
    #[error("it is not a JSON object")]
    NotAnObject,
    #[error("it has no boolean \"ok\"")]
    NoOk,
    #[error("it has no \"host\" (a report of an mcp-deploy before issue 26 has none)")]
    NoHost,
    #[error("it has no \"at\"")]
    NoAt,
    #[error("its \"at\" {at:?} is not an RFC 3339 UTC time ({why})")]
    AtNotRfc3339 {
        at: String,
        why: humantime::TimestampError,
    },
    #[error("it has no \"servers\" list")]
    NoServers,
    #[error("a server has no \"name\"")]
    ServerWithoutName,
    #[error("server {server} has no \"checks\" list")]
    NoChecks { server: String },
    #[error("a check of server {server} has no name")]
    CheckWithoutName { server: String },
    #[error("a check of server {server} has no boolean \"ok\"")]
    CheckWithoutOk { server: String },
}

impl FleetError {
    pub(crate) fn help(&self) -> &'static str {
        match self {
            FleetError::Unreadable { .. } => "check the path, or drop the file from the list",
            FleetError::NotJson { .. } | FleetError::NotAReport { .. } => {
                "give the output of `mcp-deploy status --json` (or verify-identity, install, \
                 reconcile ... --json) of this release, which carries \"host\" and \"at\""
            }
            FleetError::StdinTwice => "give `-` once",
        }
    }
}

/// One check as a host reported it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HostCheck {
    pub(crate) check: String,
    pub(crate) ok: bool,
    pub(crate) detail: String,
}

/// One server in one client on one host.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HostServer {
    pub(crate) name: String,
    pub(crate) registered_name: String,
    pub(crate) client: String,
    pub(crate) release: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) ok: bool,
    /// What the report said happened to the registration (install's `added`, reconcile's
    /// `healed: ...`), when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) registration: Option<String>,
    /// The failed checks' names: what drifted from what was deployed.
    pub(crate) drift: Vec<String>,
    pub(crate) checks: Vec<HostCheck>,
}

/// A host's winning report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Host {
    pub(crate) host: String,
    pub(crate) at: String,
    /// The machine the report names (`"machine"`); `None` in a report that names none.
    pub(crate) machine: Option<String>,
    pub(crate) file: String,
    pub(crate) ok: bool,
    /// The exit status the host's run reported.
    pub(crate) exit: Option<i64>,
    /// The host's run could not complete: its error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The report is older than `--max-age`: how old, and the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stale: Option<String>,
    /// Other machines report under this host name too: which, and in which files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) clash: Option<String>,
    pub(crate) servers: Vec<HostServer>,
}

/// A report replaced by a newer one of the same host.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Superseded {
    pub(crate) host: String,
    pub(crate) file: String,
    pub(crate) at: String,
    pub(crate) by: String,
}

/// The merged view.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Fleet {
    pub(crate) ok: bool,
    pub(crate) hosts: Vec<Host>,
    pub(crate) superseded: Vec<Superseded>,
    /// The hosts named with `--expect-host` that no report came from.
    pub(crate) missing: Vec<String>,
}

/// What the fleet is held to besides each host's own verdict.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expect {
    /// `--max-age`: a winning report older than this fails its host.
    pub(crate) max_age: Option<Duration>,
    /// `--expect-host`: the hosts that must have a report.
    pub(crate) hosts: Vec<String>,
    /// The client of a server whose report names none (written before reports named their
    /// client): the primary client, which the command names (identity knows no client).
    pub(crate) unnamed_client: &'static str,
}

/// Read and merge the reports of `files` (`-` is stdin), holding them to `expect` at `now`.
pub(crate) fn merge(
    files: &[PathBuf],
    expect: &Expect,
    now: SystemTime,
) -> Result<Fleet, FleetError> {
    if files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err(FleetError::StdinTwice);
    }
    let mut read = Vec::new();
    for file in files {
        read.push(read_one(file, expect.unnamed_client)?);
    }
    let mut hosts: Vec<(SystemTime, Host)> = Vec::new();
    // Where each host name's entries are in `hosts`: a fleet of thousands merges in one pass.
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    let mut superseded = Vec::new();
    for (at, host) in read {
        let same = by_name.entry(host.host.clone()).or_default();
        match same
            .iter()
            .copied()
            .find(|&i| same_machine(&hosts[i].1, &host))
        {
            None => {
                same.push(hosts.len());
                hosts.push((at, host));
            }
            Some(i) => {
                let kept = &mut hosts[i];
                let (older, newer) = if at >= kept.0 {
                    (std::mem::replace(kept, (at, host)).1, &kept.1)
                } else {
                    (host, &kept.1)
                };
                superseded.push(Superseded {
                    host: older.host,
                    file: older.file,
                    at: older.at,
                    by: newer.file.clone(),
                });
            }
        }
    }
    let mut hosts: Vec<Host> = hosts
        .into_iter()
        .map(|(at, mut h)| {
            h.stale = expect.max_age.and_then(|max| stale(at, now, max));
            h.ok &= h.stale.is_none();
            h
        })
        .collect();
    hosts.sort_by(|a, b| (&a.host, &a.machine).cmp(&(&b.host, &b.machine)));
    mark_clashes(&mut hosts);
    let mut missing: Vec<String> = expect
        .hosts
        .iter()
        .filter(|e| !by_name.contains_key(e.as_str()))
        .cloned()
        .collect();
    missing.sort();
    missing.dedup();
    Ok(Fleet {
        ok: hosts.iter().all(|h| h.ok) && missing.is_empty(),
        hosts,
        superseded,
        missing,
    })
}

/// Whether two reports of one host name can be one machine's: yes unless both name their
/// machine and the machines differ (a report that names none, from a host without a machine
/// id, is taken to be the same machine's).
fn same_machine(a: &Host, b: &Host) -> bool {
    match (&a.machine, &b.machine) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// Fail every host whose name another machine's host gives too (`hosts` sorted by name, so
/// one name's entries are adjacent), and say which machines and files: none passes, since no
/// one can tell which failure is whose.
fn mark_clashes(hosts: &mut [Host]) {
    for same in hosts.chunk_by_mut(|a, b| a.host == b.host) {
        if same.len() < 2 {
            continue;
        }
        let why = format!(
            "{} machines report as {}: {}; their reports cannot be told apart by host name, so \
             none passes: give each machine its own host name",
            same.len(),
            same[0].host,
            same.iter()
                .map(|h| format!("{} (machine {})", h.file, h.label_machine()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for h in same {
            h.clash = Some(why.clone());
            h.ok = false;
        }
    }
}

impl Host {
    /// The first 8 digits of the machine id, or `-`: enough to tell two machines apart.
    pub(crate) fn label_machine(&self) -> String {
        self.machine
            .as_deref()
            .map(|m| m.chars().take(8).collect())
            .unwrap_or_else(|| "-".into())
    }
}

/// Why a report made at `at` is stale at `now` under `max_age`, or `None`. A host's clock a
/// little ahead is tolerated; one dated further ahead than `max_age` fails too, since its age
/// cannot be told: a host whose clock ran a year ahead would otherwise pass on its last report
/// for a year after it stopped reporting.
fn stale(at: SystemTime, now: SystemTime, max_age: Duration) -> Option<String> {
    let whole = |d: Duration| humantime::format_duration(Duration::from_secs(d.as_secs()));
    let max = humantime::format_duration(max_age);
    match now.duration_since(at) {
        Ok(age) => {
            (age > max_age).then(|| format!("made {} ago, older than --max-age {max}", whole(age)))
        }
        Err(ahead) => (ahead.duration() > max_age).then(|| {
            format!(
                "dated {} ahead of this clock, more than --max-age {max}: its host's clock is \
                 wrong, so its age cannot be told",
                whole(ahead.duration())
            )
        }),
    }
}

fn read_one(file: &Path, unnamed_client: &str) -> Result<(SystemTime, Host), FleetError> {
    let unreadable = |source| FleetError::Unreadable {
        file: file.to_path_buf(),
        source,
    };
    // Bounded, and a regular file only (a FIFO or a device is refused, never waited on).
    let max = crate::fsio::limits::DOCUMENT;
    let text = if file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(std::io::stdin(), max + 1), &mut s)
            .map_err(unreadable)?;
        if s.len() as u64 > max {
            return Err(unreadable(std::io::Error::other(format!(
                "more than {max} bytes on stdin: not a report"
            ))));
        }
        s
    } else {
        crate::fsio::read_input_string(file, "report", max).map_err(|e| unreadable(e.source))?
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| FleetError::NotJson {
        file: file.to_path_buf(),
        why: e.to_string(),
    })?;
    host_of(&doc, &file.display().to_string(), unnamed_client).map_err(|why| {
        FleetError::NotAReport {
            file: file.to_path_buf(),
            why,
        }
    })
}

/// The host of one report (`file`, as it was named), or why it is not a report.
fn host_of(
    doc: &Value,
    file: &str,
    unnamed_client: &str,
) -> Result<(SystemTime, Host), NotAReport> {
    let Some(obj) = doc.as_object() else {
        return Err(NotAReport::NotAnObject);
    };
    let Some(ok) = obj.get("ok").and_then(Value::as_bool) else {
        return Err(NotAReport::NoOk);
    };
    let string = |key: &str| obj.get(key).and_then(Value::as_str).map(str::to_string);
    let Some(host) = string("host").filter(|h| !h.is_empty()) else {
        return Err(NotAReport::NoHost);
    };
    let Some(at) = string("at") else {
        return Err(NotAReport::NoAt);
    };
    let time = humantime::parse_rfc3339(&at).map_err(|why| NotAReport::AtNotRfc3339 {
        at: at.clone(),
        why,
    })?;
    let error = string("error");
    let servers = match (obj.get("servers"), &error) {
        (Some(Value::Array(servers)), _) => servers
            .iter()
            .map(|s| server_of(s, unnamed_client))
            .collect::<Result<Vec<_>, _>>()?,
        (None, Some(_)) => Vec::new(),
        _ => return Err(NotAReport::NoServers),
    };
    let exit = obj.get("exit").and_then(Value::as_i64);
    Ok((
        time,
        Host {
            ok: ok && error.is_none() && servers.iter().all(|s| s.ok) && exit.unwrap_or(0) == 0,
            host,
            at,
            machine: string("machine"),
            file: file.to_string(),
            exit,
            error,
            stale: None,
            clash: None,
            servers,
        },
    ))
}

fn server_of(s: &Value, unnamed_client: &str) -> Result<HostServer, NotAReport> {
    let string = |key: &str| s.get(key).and_then(Value::as_str).map(str::to_string);
    let name = string("name").ok_or(NotAReport::ServerWithoutName)?;
    let checks = s
        .get("checks")
        .and_then(Value::as_array)
        .ok_or_else(|| NotAReport::NoChecks {
            server: name.clone(),
        })?
        .iter()
        .map(|c| {
            Ok(HostCheck {
                check: c
                    .get("check")
                    .and_then(Value::as_str)
                    .ok_or_else(|| NotAReport::CheckWithoutName {
                        server: name.clone(),
                    })?
                    .to_string(),
                ok: c.get("ok").and_then(Value::as_bool).ok_or_else(|| {
                    NotAReport::CheckWithoutOk {
                        server: name.clone(),
                    }
                })?,
                detail: c
                    .get("detail")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let drift: Vec<String> = checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.check.clone())
        .collect();
    Ok(HostServer {
        registered_name: string("registered_name").unwrap_or_else(|| name.clone()),
        client: string("client").unwrap_or_else(|| unnamed_client.into()),
        release: string("release"),
        commit: string("commit"),
        ok: drift.is_empty(),
        registration: string("registration"),
        drift,
        checks,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(host: &str, at: &str, ok: bool) -> Value {
        json!({"ok": ok, "exit": if ok {0} else {1}, "host": host, "at": at, "servers": [
            {"name": "codetools", "client": "claude", "registered_name": "codetools",
             "commit": "c0de", "checks": [{"check": "commit", "ok": ok, "detail": "d"}]}
        ]})
    }

    #[test]
    fn a_report_without_host_is_not_a_report() {
        let mut doc = report("a", "2026-12-02T18:00:00Z", true);
        doc.as_object_mut().unwrap().remove("host");
        let why = host_of(&doc, "f", "claude").unwrap_err();
        assert!(matches!(why, NotAReport::NoHost), "{why}");
        assert!(why.to_string().contains("no \"host\""), "{why}");
    }

    #[test]
    fn a_failed_check_fails_the_host_and_is_its_drift() {
        let (_, h) = host_of(&report("a", "2026-12-02T18:00:00Z", false), "f", "claude").unwrap();
        assert!(!h.ok);
        assert_eq!(h.servers[0].drift, ["commit"]);
    }

    fn merged(docs: &[Value], expect: &Expect, now: &str) -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = docs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let f = dir.path().join(format!("{i}.json"));
                std::fs::write(&f, d.to_string()).unwrap();
                f
            })
            .collect();
        merge(&files, expect, humantime::parse_rfc3339(now).unwrap()).unwrap()
    }

    #[test]
    fn a_report_older_than_max_age_fails_its_host_as_stale() {
        let expect = Expect {
            max_age: Some(Duration::from_secs(3600)),
            ..Expect::default()
        };
        let docs = [
            report("old", "2026-12-02T18:00:00Z", true),
            report("new", "2026-12-02T19:30:00Z", true),
            report("ahead", "2026-12-02T20:30:00Z", true),
            report("far-ahead", "2026-12-03T20:00:01Z", true),
        ];
        let fleet = merged(&docs, &expect, "2026-12-02T20:00:01Z");
        assert!(!fleet.ok);
        let by = |n: &str| fleet.hosts.iter().find(|h| h.host == n).unwrap().clone();
        assert_eq!(
            by("old").stale.as_deref(),
            Some("made 2h 1s ago, older than --max-age 1h")
        );
        assert!(!by("old").ok);
        assert!(by("new").ok && by("new").stale.is_none());
        assert!(by("ahead").ok, "a clock a little ahead is not stale");
        assert_eq!(
            by("far-ahead").stale.as_deref(),
            Some(
                "dated 1day ahead of this clock, more than --max-age 1h: its host's \
                 clock is wrong, so its age cannot be told"
            ),
            "a clock a day ahead would never go stale"
        );
        assert!(!by("far-ahead").ok);
        let without = merged(&docs, &Expect::default(), "2026-12-02T20:00:01Z");
        assert!(without.ok, "no --max-age, no staleness");
    }

    fn on(machine: &str, mut doc: Value) -> Value {
        doc["machine"] = Value::from(machine);
        doc
    }

    #[test]
    fn two_machines_with_one_host_name_both_fail_as_clashing_not_superseded() {
        // The older report fails; merged by name alone, the newer passing one hid it.
        let docs = [
            on("aaaaaaaa11", report("web-1", "2026-12-02T18:00:00Z", false)),
            on("bbbbbbbb22", report("web-1", "2026-12-02T18:05:00Z", true)),
            on("cccccccc33", report("web-2", "2026-12-02T18:00:00Z", true)),
        ];
        let fleet = merged(&docs, &Expect::default(), "2026-12-02T18:10:00Z");
        assert!(!fleet.ok);
        assert!(fleet.superseded.is_empty(), "{:?}", fleet.superseded);
        let web1: Vec<&Host> = fleet.hosts.iter().filter(|h| h.host == "web-1").collect();
        assert_eq!(web1.len(), 2);
        for h in &web1 {
            assert!(!h.ok);
            let why = h.clash.as_deref().unwrap();
            assert!(
                why.starts_with("2 machines report as web-1: ")
                    && why.contains("(machine aaaaaaaa)")
                    && why.contains("(machine bbbbbbbb)"),
                "{why}"
            );
        }
        let web2 = fleet.hosts.iter().find(|h| h.host == "web-2").unwrap();
        assert!(web2.ok && web2.clash.is_none());
    }

    #[test]
    fn one_machines_reports_and_reports_that_name_no_machine_still_supersede() {
        for (a, b) in [
            (Some("aaaaaaaa11"), Some("aaaaaaaa11")),
            (None, Some("aaaaaaaa11")),
            (Some("aaaaaaaa11"), None),
            (None, None),
        ] {
            let doc = |m: Option<&str>, at, ok| match m {
                Some(m) => on(m, report("web-1", at, ok)),
                None => report("web-1", at, ok),
            };
            let docs = [
                doc(a, "2026-12-02T18:00:00Z", false),
                doc(b, "2026-12-02T18:05:00Z", true),
            ];
            let fleet = merged(&docs, &Expect::default(), "2026-12-02T18:10:00Z");
            assert!(fleet.ok, "{a:?} {b:?}");
            assert_eq!(fleet.hosts.len(), 1);
            assert_eq!(fleet.superseded.len(), 1);
        }
    }

    #[test]
    fn an_expected_host_without_a_report_is_missing_and_fails_the_fleet() {
        let expect = Expect {
            hosts: vec!["b".into(), "a".into(), "c".into(), "b".into()],
            ..Expect::default()
        };
        let fleet = merged(
            &[report("a", "2026-12-02T18:00:00Z", true)],
            &expect,
            "2026-12-02T18:00:01Z",
        );
        assert_eq!(fleet.missing, ["b", "c"]);
        assert!(!fleet.ok);
        assert!(fleet.hosts[0].ok);
    }

    #[test]
    fn a_run_that_could_not_complete_fails_its_host() {
        let doc = json!({"ok": false, "exit": 2, "host": "b", "at": "2026-12-02T18:00:00Z",
                         "error": "no claude", "help": null});
        let (_, h) = host_of(&doc, "f", "claude").unwrap();
        assert!(!h.ok);
        assert_eq!(h.error.as_deref(), Some("no claude"));
    }
}
