//! A fleet's reports merged (`mcp-deploy report FILE...`): the JSON reports of many hosts
//! (`status`, `verify-identity`, `install`, `reconcile`, ... `--json`, each carrying the
//! `"host"` it ran on, when (`"at"`) and which machine that was (`"machine"`)) read, checked
//! to be reports, and merged into one view: a row per host and server with its release,
//! commit, each check's verdict and what drifted.
//!
//! Every file is read first (`-`: stdin, once). A file that cannot be read, is not JSON, or is
//! not a report (no `"ok"`, `"host"`, `"at"`) stops the merge: [`FleetError`] names the file.
//! Then the merge rules (issue 35.6; docs/commands.md#report says the same):
//!
//! 1. **Machine identity.** Reports that give one host name and one `"machine"`
//!    (`output/machine.rs`) are one machine's. Reports of one host name that name two or more
//!    machines clash: each machine, and the reports naming none, is a row, and every row of
//!    that name fails: no one can tell which failure is whose.
//! 2. **A missing machine.** Reports of one host name that all name no machine are one
//!    machine's (the host name is all there is). A report naming none beside reports naming
//!    one machine cannot be told to be that machine's or another's: neither replaces the other,
//!    both count in the host's one row.
//! 3. **Later wins; ties have no winner.** Of one machine's reports dated within the clock
//!    (rule 4), those of the latest second are current, and each earlier one is superseded
//!    (`"why": "newer"`). Several reports of that second are all current: the order the files
//!    are given in decides nothing.
//! 4. **Clock skew.** The merging machine's clock is the reference. A report dated more than
//!    [`AHEAD_TOLERANCE`] (5 minutes, or `--max-age` when shorter) ahead of it fails as
//!    `clock ahead`, with or without `--max-age`, and is current for good: it replaces nothing
//!    and nothing later can replace it. A clock behind dates its reports in the past: with
//!    `--max-age` one older than that fails as stale; among one machine's reports the later
//!    `at` still wins, since it is the only order reports carry (a clock set back can make an
//!    earlier report win: a limit, not detected).
//! 5. **Duplicates.** The same bytes under two names (a copy, a link, `-` and the file) are
//!    one report, kept under the name first in order; the other is listed `duplicate`. One
//!    path named twice is one file. Equal reports in other bytes are a tie (rule 3).
//! 6. **The row and the verdict.** A host's row shows the worst of its current reports (a
//!    failing one, then one dated within the clock, then one naming its machine, then by file
//!    name); every other current report is named under it (`also current`). A host passes
//!    only when every current report of it passes: `"ok"`, every check, exit 0, no `"error"`
//!    (a run that could not complete fails its host, it does not vanish), not stale under
//!    `--max-age`, not ahead, no clash. With `--expect-host`, each named host without a
//!    report fails as missing. The fleet passes when every host passes and none is missing.
//!
//! So the verdict of the fleet and of each host, and the whole view, do not depend on the
//! order of the files given (the tests merge sets covering every rule in every order), and a
//! host is never shown passing while a report of it that no later, trustworthy report of the
//! same machine replaced fails.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use sha2::Digest;

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

/// A host's shown report: the worst of its current ones (rule 6).
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
    /// The report is dated further ahead of the merging clock than the tolerance: by how much.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ahead: Option<String>,
    /// Other machines report under this host name too: which, and in which files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) clash: Option<String>,
    /// The host's other current reports (rule 6), each counted in its verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) also: Vec<Also>,
    pub(crate) servers: Vec<HostServer>,
}

/// A current report of a host beside the one shown: not superseded, so its verdict counts.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Also {
    pub(crate) file: String,
    pub(crate) at: String,
    pub(crate) machine: Option<String>,
    pub(crate) ok: bool,
    /// Why it is current beside the one shown.
    pub(crate) why: String,
    /// What fails in it: the failed checks (`server: check, ...`), its error, or its date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fails: Option<String>,
}

/// A report that does not count: replaced by a later one of the same machine, or the same
/// report given again.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Superseded {
    pub(crate) host: String,
    pub(crate) file: String,
    pub(crate) at: String,
    pub(crate) by: String,
    /// `newer`: `by` is a later report of the same machine; `duplicate`: `by` is this very
    /// report (the same bytes) given again.
    pub(crate) why: &'static str,
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
    /// `--max-age`: a current report older than this fails its host.
    pub(crate) max_age: Option<Duration>,
    /// `--expect-host`: the hosts that must have a report.
    pub(crate) hosts: Vec<String>,
    /// The client of a server whose report names none (written before reports named their
    /// client): the primary client, which the command names (identity knows no client).
    pub(crate) unnamed_client: &'static str,
}

/// How far ahead of the merging clock a report may be dated and still be trusted (rule 4):
/// ordinary skew between two synchronised clocks, and the seconds `at` is truncated to.
pub(crate) const AHEAD_TOLERANCE: Duration = Duration::from_secs(300);

/// One report read: its time, its host, and the digest of its bytes (rule 5).
#[derive(Clone)]
struct Read {
    at: SystemTime,
    host: Host,
    digest: [u8; 32],
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
    Ok(merge_read(read, expect, now))
}

/// One report's own verdict as the merge holds it: its `ok`, its date against `now`.
struct Judged {
    at: SystemTime,
    host: Host,
    ahead: bool,
}

impl Judged {
    fn ok(&self) -> bool {
        self.host.ok
    }

    /// The order in which a host's current reports are shown (rule 6): failing first, then
    /// one dated within the clock, then one that names its machine, then by file name.
    fn rank(&self) -> (bool, bool, bool, &str, SystemTime) {
        (
            self.ok(),
            self.ahead,
            self.host.machine.is_none(),
            &self.host.file,
            self.at,
        )
    }
}

/// The merge of reports already read: nothing in it depends on the order of `read`.
fn merge_read(mut read: Vec<Read>, expect: &Expect, now: SystemTime) -> Fleet {
    // One canonical order first (host, file, time, bytes): whatever the order given, what
    // follows sees the same sequence.
    read.sort_by(|a, b| {
        (&a.host.host, &a.host.file, a.at, a.digest).cmp(&(
            &b.host.host,
            &b.host.file,
            b.at,
            b.digest,
        ))
    });
    let tolerance = expect
        .max_age
        .map_or(AHEAD_TOLERANCE, |m| m.min(AHEAD_TOLERANCE));
    let mut superseded = Vec::new();
    let mut rows: Vec<Host> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for same_name in read.chunk_by_mut(|a, b| a.host.host == b.host.host) {
        names.push(same_name[0].host.host.clone());
        // Rule 5: the same bytes twice are one report, kept under the first file name.
        let mut kept: Vec<&Read> = Vec::new();
        for r in same_name.iter() {
            match kept.iter().find(|k| k.digest == r.digest) {
                // One path named twice: one file, nothing to say.
                Some(k) if k.host.file == r.host.file => {}
                Some(k) => superseded.push(Superseded {
                    host: r.host.host.clone(),
                    file: r.host.file.clone(),
                    at: r.host.at.clone(),
                    by: k.host.file.clone(),
                    why: "duplicate",
                }),
                None => kept.push(r),
            }
        }
        let judged: Vec<Judged> = kept
            .into_iter()
            .map(|r| judge(r, expect.max_age, tolerance, now))
            .collect();
        // Rules 1-2: one machine's reports; those naming none are a machine of their own.
        let mut machines: Vec<Option<&str>> =
            judged.iter().map(|j| j.host.machine.as_deref()).collect();
        machines.sort();
        machines.dedup();
        let named = machines.iter().filter(|m| m.is_some()).count();
        let mut current_of: Vec<Vec<&Judged>> = Vec::new();
        for m in &machines {
            let mine: Vec<&Judged> = judged
                .iter()
                .filter(|j| j.host.machine.as_deref() == *m)
                .collect();
            let (current, gone) = current_and_superseded(&mine);
            let by = current
                .iter()
                .filter(|j| !j.ahead)
                .min_by(|a, b| a.rank().cmp(&b.rank()));
            for g in gone {
                superseded.push(Superseded {
                    host: g.host.host.clone(),
                    file: g.host.file.clone(),
                    at: g.host.at.clone(),
                    by: by.map(|b| b.host.file.clone()).unwrap_or_default(),
                    why: "newer",
                });
            }
            current_of.push(current);
        }
        // Rules 1-2: two machines named under one name clash, each machine (and the reports
        // naming none) a row; otherwise the name is one host, every current report in its row.
        if named >= 2 {
            rows.extend(current_of.iter().map(|c| row(c)));
        } else {
            rows.push(row(&current_of.concat()));
        }
    }
    rows.sort_by(|a, b| (&a.host, &a.machine, &a.file).cmp(&(&b.host, &b.machine, &b.file)));
    mark_clashes(&mut rows);
    mark_surface_splits(&mut rows);
    superseded.sort_by(|a, b| {
        (&a.host, &a.file, &a.at, &a.by, a.why).cmp(&(&b.host, &b.file, &b.at, &b.by, b.why))
    });
    let mut missing: Vec<String> = expect
        .hosts
        .iter()
        .filter(|e| names.binary_search(e).is_err())
        .cloned()
        .collect();
    missing.sort();
    missing.dedup();
    Fleet {
        ok: rows.iter().all(|h| h.ok) && missing.is_empty(),
        hosts: rows,
        superseded,
        missing,
    }
}

/// One report held to its date (rules 3-4).
fn judge(r: &Read, max_age: Option<Duration>, tolerance: Duration, now: SystemTime) -> Judged {
    let mut host = r.host.clone();
    let whole = |d: Duration| humantime::format_duration(Duration::from_secs(d.as_secs()));
    match now.duration_since(r.at) {
        Ok(age) => {
            host.stale = max_age.filter(|max| age > *max).map(|max| {
                format!(
                    "made {} ago, older than --max-age {}",
                    whole(age),
                    humantime::format_duration(max)
                )
            })
        }
        Err(ahead) if ahead.duration() > tolerance => {
            host.ahead = Some(format!(
                "dated {} ahead of this clock, more than the {} a clock may run ahead: its \
                 host's clock is wrong, so its age cannot be told and no later report can \
                 replace it",
                whole(ahead.duration()),
                humantime::format_duration(tolerance)
            ))
        }
        Err(_) => {}
    }
    host.ok &= host.stale.is_none() && host.ahead.is_none();
    Judged {
        at: r.at,
        ahead: host.ahead.is_some(),
        host,
    }
}

/// One machine's reports split (rule 3): the current ones (every one dated ahead of the
/// tolerance, and the latest second of the others) and the ones a later report replaced.
fn current_and_superseded<'a>(mine: &[&'a Judged]) -> (Vec<&'a Judged>, Vec<&'a Judged>) {
    let latest = mine.iter().filter(|j| !j.ahead).map(|j| j.at).max();
    mine.iter().partition(|j| j.ahead || Some(j.at) == latest)
}

/// A host's row from its current reports (rule 6): the worst shown, every other one named
/// under it, its verdict theirs together.
fn row(current: &[&Judged]) -> Host {
    let mut current = current.to_vec();
    current.sort_by(|a, b| a.rank().cmp(&b.rank()));
    let shown = current[0];
    let mut host = shown.host.clone();
    host.also = current[1..]
        .iter()
        .map(|j| Also {
            file: j.host.file.clone(),
            at: j.host.at.clone(),
            machine: j.host.machine.clone(),
            ok: j.ok(),
            why: why_current(j, shown),
            fails: fails(&j.host),
        })
        .collect();
    host.ok = current.iter().all(|j| j.ok());
    host
}

/// Why `j` still counts beside `shown`, the report shown for its host.
fn why_current(j: &Judged, shown: &Judged) -> String {
    let machine = |h: &Host| match &h.machine {
        Some(_) => format!("names machine {}", h.label_machine()),
        None => "names no machine".to_string(),
    };
    if j.ahead {
        "it is dated ahead of this clock: no later report can replace it".into()
    } else if j.host.machine != shown.host.machine {
        format!(
            "it {} and {} {}: neither can be told to be the other's machine, so neither \
             replaces the other",
            machine(&j.host),
            shown.host.file,
            machine(&shown.host)
        )
    } else if shown.ahead {
        "it is the latest report dated within this clock; the one shown, dated ahead, \
         replaces nothing"
            .into()
    } else {
        "it was made the same second as the one shown: neither is the later".into()
    }
}

/// What fails in a report, in a line: its error, its date, its failed checks.
fn fails(h: &Host) -> Option<String> {
    if h.ok {
        return None;
    }
    let mut why: Vec<String> = Vec::new();
    if let Some(e) = &h.error {
        why.push(format!("could not run: {e}"));
    }
    if let Some(a) = &h.ahead {
        why.push(format!("clock ahead: {a}"));
    }
    if let Some(s) = &h.stale {
        why.push(format!("stale: {s}"));
    }
    for s in h.servers.iter().filter(|s| !s.drift.is_empty()) {
        why.push(format!(
            "{} ({}): {}",
            s.registered_name,
            s.client,
            s.drift.join(",")
        ));
    }
    if why.is_empty() {
        why.push(format!("its run says it failed (exit {:?})", h.exit));
    }
    Some(why.join("; "))
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
            same.iter().filter(|h| h.machine.is_some()).count(),
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

/// Fail every host whose server, on one commit, hands the agent another tool surface than the
/// same server on the same commit on another host (issue 39): the digests of their `tools`
/// rows (`verify-identity --handshake`, `install --handshake`) differ. Each such server gets a
/// failing `fleet tools` check naming every host and digest of the split.
fn mark_surface_splits(hosts: &mut [Host]) {
    // (server, commit) -> each (host index, server index, digest) that reports it.
    type Seen = Vec<(usize, usize, String)>;
    let mut by_commit: std::collections::BTreeMap<(String, String), Seen> =
        std::collections::BTreeMap::new();
    for (hi, h) in hosts.iter().enumerate() {
        for (si, s) in h.servers.iter().enumerate() {
            let Some(commit) = &s.commit else { continue };
            let digest = s
                .checks
                .iter()
                .find(|c| c.check == "tools")
                .and_then(|c| surface_digest(&c.detail));
            if let Some(d) = digest {
                by_commit
                    .entry((s.name.clone(), commit.clone()))
                    .or_default()
                    .push((hi, si, d));
            }
        }
    }
    for ((name, commit), list) in by_commit {
        let mut digests: Vec<&str> = list.iter().map(|(_, _, d)| d.as_str()).collect();
        digests.sort();
        digests.dedup();
        if digests.len() < 2 {
            continue;
        }
        let who = list
            .iter()
            .map(|(hi, _, d)| format!("{} {d}", hosts[*hi].host))
            .collect::<Vec<_>>()
            .join(", ");
        let detail = format!(
            "hosts on commit {commit} hand the agent different tool surfaces of {name}: {who}"
        );
        for (hi, si, _) in &list {
            let h = &mut hosts[*hi];
            let s = &mut h.servers[*si];
            s.checks.push(HostCheck {
                check: "fleet tools".into(),
                ok: false,
                detail: detail.clone(),
            });
            s.drift.push("fleet tools".into());
            s.ok = false;
            h.ok = false;
        }
    }
}

/// The first `sha256:` and 64 hex digits in `text`: a `tools` row's surface digest.
fn surface_digest(text: &str) -> Option<String> {
    text.match_indices("sha256:").find_map(|(at, _)| {
        let hex = text.get(at + 7..at + 7 + 64)?;
        hex.chars()
            .all(|c| c.is_ascii_hexdigit())
            .then(|| format!("sha256:{hex}"))
    })
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

fn read_one(file: &Path, unnamed_client: &str) -> Result<Read, FleetError> {
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
    let (at, host) = host_of(&doc, &file.display().to_string(), unnamed_client).map_err(|why| {
        FleetError::NotAReport {
            file: file.to_path_buf(),
            why,
        }
    })?;
    // Whole seconds, as reports are written: two reports of one second are a tie (rule 3)
    // however a hand-made one splits it.
    let secs = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(Read {
        at: std::time::UNIX_EPOCH + Duration::from_secs(secs),
        host,
        digest: sha2::Sha256::digest(text.as_bytes()).into(),
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
            ahead: None,
            clash: None,
            also: Vec::new(),
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

    /// Issue 39: hosts on one commit whose `tools` rows name different surfaces both fail,
    /// each naming every host and digest; the same surface on every host, or different
    /// surfaces on different commits, pass.
    #[test]
    fn hosts_on_one_commit_with_different_tool_surfaces_fail_the_fleet() {
        let with = |host: &str, commit: &str, digest: char| {
            json!({"ok": true, "exit": 0, "host": host, "at": "2026-12-05T10:00:00Z", "servers": [
                {"name": "codetools", "client": "claude", "registered_name": "codetools",
                 "commit": commit, "checks": [
                    {"check": "commit", "ok": true, "detail": "d"},
                    {"check": "tools", "ok": true, "detail": format!("1 tool, sha256:{}: the surface recorded", digest.to_string().repeat(64))}]}
            ]})
        };
        let now = "2026-12-05T10:01:00Z";
        let same = merged(
            &[with("a", "c0de", 'a'), with("b", "c0de", 'a')],
            &Expect::default(),
            now,
        );
        assert!(same.ok);
        let apart = merged(
            &[with("a", "c0de", 'a'), with("b", "beef", 'b')],
            &Expect::default(),
            now,
        );
        assert!(apart.ok);
        let split = merged(
            &[with("a", "c0de", 'a'), with("b", "c0de", 'b')],
            &Expect::default(),
            now,
        );
        assert!(!split.ok);
        for h in &split.hosts {
            assert!(!h.ok, "{}", h.host);
            let row = h.servers[0]
                .checks
                .iter()
                .find(|c| c.check == "fleet tools")
                .unwrap();
            assert!(
                row.detail.contains(&format!("a sha256:{}", "a".repeat(64))),
                "{}",
                row.detail
            );
            assert!(
                row.detail.contains(&format!("b sha256:{}", "b".repeat(64))),
                "{}",
                row.detail
            );
        }
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
            report("ahead", "2026-12-02T20:04:00Z", true),
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
            by("far-ahead").ahead.as_deref(),
            Some(
                "dated 1day ahead of this clock, more than the 5m a clock may run ahead: its \
                 host's clock is wrong, so its age cannot be told and no later report can \
                 replace it"
            ),
            "a clock a day ahead would never go stale"
        );
        assert!(!by("far-ahead").ok && by("far-ahead").stale.is_none());
        let without = merged(&docs, &Expect::default(), "2026-12-02T20:00:01Z");
        let by = |n: &str| without.hosts.iter().find(|h| h.host == n).unwrap().clone();
        assert!(
            by("old").ok && by("new").ok && by("ahead").ok,
            "no --max-age, no staleness"
        );
        assert!(
            !by("far-ahead").ok && by("far-ahead").ahead.is_some(),
            "a clock a day ahead fails without --max-age too"
        );
    }

    /// Issue 35.6: a clock 30 minutes ahead passed under `--max-age 1h` (the tolerance was
    /// the --max-age); the tolerance is now 5 minutes, or the --max-age when shorter.
    #[test]
    fn a_clock_ahead_is_tolerated_5_minutes_or_the_max_age_when_shorter() {
        let docs = [
            report("a", "2026-12-02T20:04:59Z", true),
            report("b", "2026-12-02T20:05:01Z", true),
            report("c", "2026-12-02T20:01:01Z", true),
        ];
        let at = |max: Option<u64>| {
            let fleet = merged(
                &docs,
                &Expect {
                    max_age: max.map(Duration::from_secs),
                    ..Expect::default()
                },
                "2026-12-02T20:00:00Z",
            );
            fleet.hosts.iter().map(|h| h.ok).collect::<Vec<_>>()
        };
        assert_eq!(at(None), [true, false, true]);
        assert_eq!(at(Some(3600)), [true, false, true]);
        assert_eq!(at(Some(60)), [false, false, false]);
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

    /// Issue 35.6: a report naming no machine used to supersede (and be superseded by) one
    /// naming a machine, so a failing report vanished behind a passing one that could be
    /// another machine's. One machine's reports, and reports that all name none, supersede;
    /// a mix of the two counts both (see the tests below).
    #[test]
    fn one_machines_reports_and_reports_that_all_name_no_machine_still_supersede() {
        for (a, b) in [(Some("aaaaaaaa11"), Some("aaaaaaaa11")), (None, None)] {
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

    // ---- issue 35.6: a fleet table never shows a host passing while any current report of
    // that host fails, whatever the order of the files given.

    const NOW: &str = "2026-12-02T18:10:00Z";

    /// `docs` written to files `D/<i>.json` and read, once.
    fn read_all(docs: &[Value]) -> Vec<Read> {
        let dir = tempfile::tempdir().unwrap();
        docs.iter()
            .enumerate()
            .map(|(i, d)| {
                let f = dir.path().join(format!("{i}.json"));
                std::fs::write(&f, d.to_string()).unwrap();
                let mut r = read_one(&f, "claude").unwrap();
                r.host.file = format!("D/{i}.json");
                r
            })
            .collect()
    }

    /// The fleet of `read` merged in `order` (indexes into `read`), and its JSON: what must
    /// not depend on the order (the table is a function of the [`Fleet`] alone:
    /// `output::report::human`, whose lines output/report.rs tests).
    fn shown(read: &[Read], order: &[usize], expect: &Expect, now: &str) -> (Fleet, String) {
        let given = order.iter().map(|&i| read[i].clone()).collect();
        let fleet = merge_read(given, expect, humantime::parse_rfc3339(now).unwrap());
        let json = serde_json::to_string_pretty(&fleet).unwrap();
        (fleet, json)
    }

    /// Every order of `docs` (Heap's algorithm).
    fn orders(n: usize) -> Vec<Vec<usize>> {
        fn heap(k: usize, a: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if k <= 1 {
                out.push(a.clone());
                return;
            }
            for i in 0..k {
                heap(k - 1, a, out);
                let j = if k.is_multiple_of(2) { i } else { 0 };
                a.swap(j, k - 1);
            }
        }
        let mut out = Vec::new();
        heap(n, &mut (0..n).collect(), &mut out);
        out
    }

    /// `docs` merged in every order: the verdict and the whole view are the same each time,
    /// and the verdict is `ok`.
    fn in_every_order(docs: &[Value], expect: &Expect, now: &str, ok: bool) -> Fleet {
        let read = read_all(docs);
        let first = shown(&read, &(0..docs.len()).collect::<Vec<_>>(), expect, now);
        assert_eq!(first.0.ok, ok, "{}", first.1);
        for order in orders(docs.len()) {
            let this = shown(&read, &order, expect, now);
            assert_eq!(this.0.ok, ok, "given in the order {order:?}:\n{}", this.1);
            assert_eq!(this.1, first.1, "given in the order {order:?}");
        }
        first.0
    }

    /// The files `fleet` lists as superseded, with why.
    fn gone(fleet: &Fleet) -> Vec<(&str, &str, &str)> {
        fleet
            .superseded
            .iter()
            .map(|s| (s.file.as_str(), s.by.as_str(), s.why))
            .collect()
    }

    #[test]
    fn a_failing_and_a_passing_report_of_one_second_fail_their_host_in_either_order() {
        let docs = [
            report("web-1", "2026-12-02T18:00:00Z", false),
            report("web-1", "2026-12-02T18:00:00Z", true),
        ];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn three_reports_of_one_second_one_failing_fail_their_host_in_every_order() {
        let mut pass2 = report("web-1", "2026-12-02T18:00:00Z", true);
        pass2["servers"][0]["commit"] = Value::from("c0de2");
        let docs = [
            report("web-1", "2026-12-02T18:00:00Z", true),
            report("web-1", "2026-12-02T18:00:00Z", false),
            pass2,
        ];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn reports_in_one_second_are_a_tie_however_their_fractions_split_it() {
        let docs = [
            report("web-1", "2026-12-02T18:00:00.1Z", false),
            report("web-1", "2026-12-02T18:00:00.9Z", true),
            report("web-1", "2026-12-02T17:59:59.99Z", true),
        ];
        let fleet = in_every_order(&docs, &Expect::default(), NOW, false);
        assert_eq!(gone(&fleet), [("D/2.json", "D/0.json", "newer")]);
    }

    #[test]
    fn two_failing_reports_of_one_second_show_the_same_table_in_either_order() {
        let mut other = report("web-1", "2026-12-02T18:00:00Z", false);
        other["servers"][0]["checks"][0]["detail"] = Value::from("another failure");
        let docs = [report("web-1", "2026-12-02T18:00:00Z", false), other];
        let fleet = in_every_order(&docs, &Expect::default(), NOW, false);
        let web1 = &fleet.hosts[0];
        assert_eq!(web1.file, "D/0.json");
        assert_eq!(web1.also.len(), 1);
        let also = &web1.also[0];
        assert_eq!((also.file.as_str(), also.ok), ("D/1.json", false));
        assert_eq!(also.fails.as_deref(), Some("codetools (claude): commit"));
        assert_eq!(
            also.why,
            "it was made the same second as the one shown: neither is the later"
        );
        assert!(fleet.superseded.is_empty());
    }

    #[test]
    fn a_newer_passing_report_naming_no_machine_does_not_hide_a_failing_one_naming_its_machine() {
        let docs = [
            on("aaaaaaaa11", report("web-1", "2026-12-02T18:00:00Z", false)),
            report("web-1", "2026-12-02T18:05:00Z", true),
        ];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn a_newer_passing_report_naming_its_machine_does_not_hide_a_failing_one_naming_none() {
        let docs = [
            report("web-1", "2026-12-02T18:00:00Z", false),
            on("aaaaaaaa11", report("web-1", "2026-12-02T18:05:00Z", true)),
        ];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn a_report_naming_no_machine_beside_two_machines_of_one_name_clashes_in_every_order() {
        let docs = [
            on("aaaaaaaa11", report("web-1", "2026-12-02T18:00:00Z", false)),
            on("bbbbbbbb22", report("web-1", "2026-12-02T18:00:00Z", true)),
            report("web-1", "2026-12-02T18:05:00Z", true),
        ];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn a_passing_report_dated_a_day_ahead_does_not_replace_a_current_failing_one() {
        // No --max-age: the clock ahead is caught anyway.
        let docs = [
            report("web-1", "2026-12-02T18:09:00Z", false),
            report("web-1", "2026-12-03T18:10:00Z", true),
        ];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn a_lone_passing_report_dated_a_day_ahead_fails_as_clock_ahead_without_max_age() {
        let docs = [report("web-1", "2026-12-03T18:10:00Z", true)];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn a_report_ahead_within_the_tolerance_still_replaces_an_older_one() {
        // One second ahead: ordinary skew, a later report of the same machine.
        let docs = [
            report("web-1", "2026-12-02T18:09:00Z", false),
            report("web-1", "2026-12-02T18:10:01Z", true),
        ];
        in_every_order(&docs, &Expect::default(), NOW, true);
        // Ten minutes ahead: beyond it, whatever the --max-age.
        let docs = [
            report("web-1", "2026-12-02T18:09:00Z", false),
            report("web-1", "2026-12-02T18:20:00Z", true),
        ];
        in_every_order(&docs, &Expect::default(), NOW, false);
        let hour = Expect {
            max_age: Some(Duration::from_secs(3600)),
            ..Expect::default()
        };
        in_every_order(&docs, &hour, NOW, false);
    }

    #[test]
    fn a_report_from_a_clock_behind_is_stale_with_max_age_in_every_order() {
        let hour = Expect {
            max_age: Some(Duration::from_secs(3600)),
            ..Expect::default()
        };
        let docs = [
            report("web-1", "2026-12-02T16:00:00Z", true),
            report("web-1", "2026-12-02T15:00:00Z", false),
            report("web-2", "2026-12-02T18:09:00Z", true),
        ];
        in_every_order(&docs, &hour, NOW, false);
    }

    #[test]
    fn the_same_report_given_twice_is_one_report_not_superseded_by_itself() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.json");
        std::fs::write(
            &f,
            report("web-1", "2026-12-02T18:00:00Z", true).to_string(),
        )
        .unwrap();
        let now = humantime::parse_rfc3339(NOW).unwrap();
        let once = merge(std::slice::from_ref(&f), &Expect::default(), now).unwrap();
        let twice = merge(&[f.clone(), f.clone()], &Expect::default(), now).unwrap();
        assert_eq!(twice.hosts.len(), 1);
        assert!(twice.ok);
        assert!(
            twice.superseded.is_empty(),
            "a report said superseded by itself: {:?}",
            twice.superseded
        );
        // Under another path (a copy, a link): one report, the other said a duplicate.
        let g = dir.path().join("b.json");
        std::fs::copy(&f, &g).unwrap();
        for files in [[f.clone(), g.clone()], [g.clone(), f.clone()]] {
            let fleet = merge(&files, &Expect::default(), now).unwrap();
            assert_eq!(fleet.hosts.len(), 1);
            assert!(fleet.hosts[0].also.is_empty());
            assert_eq!(fleet.hosts[0].file, f.display().to_string());
            assert_eq!(fleet.superseded.len(), 1);
            assert_eq!(fleet.superseded[0].why, "duplicate");
            assert_eq!(fleet.superseded[0].file, g.display().to_string());
            assert_eq!(fleet.superseded[0].by, f.display().to_string());
        }
        assert_eq!(
            serde_json::to_value(&once).unwrap(),
            serde_json::to_value(&twice).unwrap()
        );
    }

    #[test]
    fn duplicates_beside_a_tie_fail_their_host_in_every_order() {
        let fail = report("web-1", "2026-12-02T18:00:00Z", false);
        let pass = report("web-1", "2026-12-02T18:00:00Z", true);
        let docs = [fail.clone(), pass.clone(), fail, pass];
        in_every_order(&docs, &Expect::default(), NOW, false);
    }

    #[test]
    fn a_report_naming_no_machine_beside_one_naming_its_machine_counts_both() {
        // Both pass: one host, one row, the other report under it.
        let docs = [
            on("aaaaaaaa11", report("web-1", "2026-12-02T18:00:00Z", true)),
            report("web-1", "2026-12-02T18:05:00Z", true),
        ];
        let fleet = in_every_order(&docs, &Expect::default(), NOW, true);
        assert_eq!(fleet.hosts.len(), 1);
        assert_eq!(fleet.hosts[0].file, "D/0.json");
        let also = &fleet.hosts[0].also;
        assert_eq!(also.len(), 1);
        assert_eq!((also[0].file.as_str(), also[0].ok), ("D/1.json", true));
        assert_eq!(
            also[0].why,
            "it names no machine and D/0.json names machine aaaaaaaa: neither can be told to \
             be the other's machine, so neither replaces the other"
        );
        assert!(fleet.superseded.is_empty());
        // The older of two reports naming none is superseded by the newer, beside the named.
        let docs = [
            on("aaaaaaaa11", report("web-1", "2026-12-02T18:00:00Z", true)),
            report("web-1", "2026-12-02T17:00:00Z", false),
            report("web-1", "2026-12-02T18:05:00Z", true),
        ];
        let fleet = in_every_order(&docs, &Expect::default(), NOW, true);
        assert_eq!(gone(&fleet), [("D/1.json", "D/2.json", "newer")]);
    }

    #[test]
    fn a_failing_report_dated_ahead_is_shown_after_the_failure_of_the_current_one() {
        let docs = [
            report("web-1", "2026-12-02T18:09:00Z", false),
            report("web-1", "2026-12-03T18:10:00Z", true),
            report("web-1", "2026-12-02T18:00:00Z", true),
        ];
        let fleet = in_every_order(&docs, &Expect::default(), NOW, false);
        let web1 = &fleet.hosts[0];
        assert_eq!((web1.file.as_str(), web1.ok), ("D/0.json", false));
        assert!(web1.ahead.is_none());
        assert_eq!(web1.also.len(), 1);
        assert_eq!(web1.also[0].file, "D/1.json");
        assert!(
            web1.also[0]
                .fails
                .as_deref()
                .unwrap()
                .starts_with("clock ahead: dated 1day ahead of this clock"),
            "{:?}",
            web1.also[0]
        );
        assert_eq!(gone(&fleet), [("D/2.json", "D/0.json", "newer")]);
    }

    /// The property of issue 35.6 over one set covering every rule at once: a tie with a
    /// duplicate of its passing report under another name, a report naming no machine beside
    /// a named one, a plain passing host (a clock a day ahead has its own tests: with it the
    /// 5 040 orders of seven files took 19 s of the fast tier's 47). In each of the 720 orders
    /// the verdict of the fleet and of each host, and the whole JSON, are the same.
    #[test]
    fn the_merge_is_the_same_in_every_order_of_the_files_given() {
        let pass = report("web-1", "2026-12-02T18:00:00Z", true);
        let docs = [
            report("web-1", "2026-12-02T18:00:00Z", false),
            pass.clone(),
            pass,
            on("aaaaaaaa11", report("web-2", "2026-12-02T18:00:00Z", false)),
            report("web-2", "2026-12-02T18:05:00Z", true),
            report("web-4", "2026-12-02T18:09:00Z", true),
        ];
        let fleet = in_every_order(&docs, &Expect::default(), NOW, false);
        let verdicts: Vec<(&str, bool)> = fleet
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), h.ok))
            .collect();
        assert_eq!(
            verdicts,
            [("web-1", false), ("web-2", false), ("web-4", true)]
        );
        assert_eq!(gone(&fleet), [("D/2.json", "D/1.json", "duplicate")]);
    }
}
