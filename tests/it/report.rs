//! Reports across hosts (issue 26): every JSON report carries `host` and `at`; `report FILES`
//! merges hosts' reports into one table and one JSON; `--format prometheus` is read by the
//! Prometheus client library's own text parser (PyPI `prometheus-client`, pinned in
//! scripts/test.sh, installed into `.tools/prometheus`).
//!
//! Each host is a world of its own (its own HOME, the real claude, the sample installed);
//! the hosts' names are rewritten in the saved JSON, as the reports of three machines would
//! differ: a real fleet's `host` is each machine's kernel host name.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::*;

/// A world with the real claude and the sample installed under the test names.
fn host() -> World {
    let w = World::with_real_claude();
    w.sample();
    w.on_sample("install", &[]).code(0);
    w
}

/// `verify-identity --format FORMAT` of the sample in `w`, expecting codetools at
/// `codetools_sha`.
fn verify(w: &World, codetools_sha: &str, format: &str) -> Run {
    w.cmd()
        .args(["verify-identity", "--root"])
        .arg(w.opt())
        .args(["--name-suffix", "-test", "--mcp-json"])
        .arg(w.registered())
        .args(["--expect-commit", &format!("codetools={codetools_sha}")])
        .args(["--expect-commit", &format!("orchestrata={OR_SHA}")])
        .args(["--format", format])
        .run()
}

/// `run`'s JSON report saved as `dir/<name>.json`, its `host` set to `name`.
fn save_as(run: &Run, dir: &Path, name: &str) -> PathBuf {
    let mut doc = run.json();
    doc["host"] = Value::from(name);
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

#[test]
fn every_json_report_says_the_host_and_when_right_after_exit() {
    let w = host();
    let r = w.on_sample("status", &["--json"]);
    r.code(0);
    let doc = r.json();
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        &keys[..5],
        ["ok", "exit", "host", "at", "machine"],
        "{}",
        r.shown
    );
    // The machine is systemd's own id of this machine for mcp-deploy, never the machine id.
    let id128 = Command::new(system_tool("systemd-id128"))
        .args([
            "machine-id",
            "--app-specific=60dcc66f6b8a4bdc9e6373b9a0df8ab1",
        ])
        .output()
        .unwrap();
    assert!(id128.status.success(), "{id128:?}");
    let machine = String::from_utf8(id128.stdout).unwrap();
    assert_eq!(doc["machine"], machine.trim(), "{}", r.shown);
    let raw = std::fs::read_to_string("/etc/machine-id").unwrap();
    assert!(!r.said().contains(raw.trim()), "{}", r.shown);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(doc["host"], kernel.trim(), "{}", r.shown);
    let at = doc["at"].as_str().unwrap();
    let t = humantime_like_rfc3339(at);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now.abs_diff(t) < 600, "{at} is not now\n{}", r.shown);
    // The deployed release is in the report, for the fleet's table.
    assert_eq!(doc["servers"][0]["commit"], CT_SHA, "{}", r.shown);
    // An error object too.
    let r = w.run(&["status", "--root", "/nonexistent-root", "--json"]);
    r.code(2);
    assert_eq!(r.json()["host"], kernel.trim(), "{}", r.shown);
    assert_eq!(r.json()["machine"], machine.trim(), "{}", r.shown);
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SSZ`, refusing anything else (UTC, whole
/// seconds, as documented).
fn humantime_like_rfc3339(at: &str) -> u64 {
    let b = at.as_bytes();
    assert!(
        at.len() == 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[19] == b'Z',
        "{at:?} is not UTC RFC 3339 in whole seconds"
    );
    let n = |r: std::ops::Range<usize>| at[r].parse::<u64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19)
}

#[test]
fn a_fleet_with_one_host_on_the_wrong_commit_shows_every_host_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (host(), host(), host());
    let wrong = "badc0ffeebadc0ffeebadc0ffeebadc0ffeebadc";
    let ra = verify(&a, CT_SHA, "json");
    ra.code(0);
    let rb = verify(&b, wrong, "json");
    rb.code(1);
    let rc = c.on_sample("status", &["--json"]);
    rc.code(0);
    let files = [
        save_as(&ra, dir.path(), "web-1"),
        save_as(&rb, dir.path(), "web-2"),
        save_as(&rc, dir.path(), "web-3"),
    ];
    let mut cmd = a.cmd().arg("report");
    for f in &files {
        cmd = cmd.arg(f);
    }
    let table = cmd.run();
    table.code(1);
    for h in ["web-1", "web-2", "web-3"] {
        table.stdout_has(h);
    }
    table
        .stdout_has("FAIL commit:")
        .stdout_has("1 of 3 host(s) failed: web-2");
    // A column per check: web-2's codetools row says commit FAIL, web-1's ok.
    let lines: Vec<&str> = table.stdout.lines().collect();
    let head: Vec<&str> = lines[0].split_whitespace().collect();
    let col = head
        .iter()
        .position(|h| *h == "commit")
        .expect("a commit column");
    let cell = |host: &str| {
        let row = lines
            .iter()
            .find(|l| l.starts_with(host) && l.contains("codetools"))
            .unwrap_or_else(|| panic!("no codetools row of {host}\n{}", table.shown));
        row.split_whitespace().nth(col + 1).unwrap().to_string()
    };
    assert_eq!(cell("web-1"), "ok", "{}", table.shown);
    assert_eq!(cell("web-2"), "FAIL", "{}", table.shown);

    let mut cmd = a.cmd().args(["report", "--json"]);
    for f in &files {
        cmd = cmd.arg(f);
    }
    let r = cmd.run();
    r.code(1);
    let doc = r.json();
    assert_eq!(doc["ok"], false, "{}", r.shown);
    let hosts = doc["hosts"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["web-1", "web-2", "web-3"], "{}", r.shown);
    let oks: Vec<bool> = hosts.iter().map(|h| h["ok"].as_bool().unwrap()).collect();
    assert_eq!(oks, [true, false, true], "{}", r.shown);
    let web2 = &hosts[1]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "codetools")
        .unwrap();
    assert_eq!(web2["drift"], serde_json::json!(["commit"]), "{}", r.shown);
    assert_eq!(web2["commit"], CT_SHA, "{}", r.shown);
    for h in hosts {
        assert_eq!(h["servers"].as_array().unwrap().len(), 2, "{}", r.shown);
    }
}

/// A report made by hand: one server, one check.
fn report_json(host: &str, at: &str, ok: bool) -> String {
    serde_json::json!({"ok": ok, "exit": if ok { 0 } else { 1 }, "host": host, "at": at,
        "servers": [{"name": "codetools", "client": "claude", "registered_name": "codetools",
        "prefix": "/opt/codetools", "commit": CT_SHA,
        "checks": [{"check": "commit", "ok": ok, "detail": "d"}]}]})
    .to_string()
}

#[test]
fn the_newer_report_of_a_host_wins_and_the_older_is_said_superseded() {
    let w = World::new();
    let old = w.write(
        "old.json",
        report_json("web-1", "2026-12-01T10:00:00Z", false),
    );
    let new = w.write(
        "new.json",
        report_json("web-1", "2026-12-02T10:00:00Z", true),
    );
    // Given newest first: the order does not decide, the time does.
    let r = w.run(&[
        "report",
        "--json",
        new.to_str().unwrap(),
        old.to_str().unwrap(),
    ]);
    r.code(0);
    let doc = r.json();
    assert_eq!(doc["hosts"].as_array().unwrap().len(), 1, "{}", r.shown);
    assert_eq!(doc["hosts"][0]["at"], "2026-12-02T10:00:00Z", "{}", r.shown);
    assert_eq!(
        doc["superseded"][0]["file"],
        old.to_str().unwrap(),
        "{}",
        r.shown
    );
    assert_eq!(
        doc["superseded"][0]["by"],
        new.to_str().unwrap(),
        "{}",
        r.shown
    );
    w.run(&["report", new.to_str().unwrap(), old.to_str().unwrap()])
        .code(0)
        .stdout_has("superseded: web-1's report");
}

#[test]
fn a_report_read_from_stdin_counts_like_a_file() {
    let w = World::new();
    let file = w.write(
        "r.json",
        report_json("web-9", "2026-12-02T10:00:00Z", false),
    );
    let r = w
        .program(system_tool("sh"))
        .args(["-c", "exec \"$0\" report --json - < \"$1\""])
        .arg(env!("CARGO_BIN_EXE_mcp-deploy"))
        .arg(&file)
        .run();
    r.code(1);
    let doc = r.json();
    assert_eq!(doc["hosts"][0]["host"], "web-9");
}

#[test]
fn a_file_that_is_not_a_report_stops_the_merge_naming_it_exit_2() {
    let w = World::new();
    let good = w.write(
        "good.json",
        report_json("web-1", "2026-12-02T10:00:00Z", true),
    );
    let hostless = w.write("old.json", r#"{"ok": true, "exit": 0, "servers": []}"#);
    w.run(&["report", good.to_str().unwrap(), hostless.to_str().unwrap()])
        .code(2)
        .stderr_has(&format!(
            "{} is not an mcp-deploy report",
            hostless.display()
        ))
        .stderr_has("no \"host\"")
        .stderr_has("help:");
    let missing = w.root().join("missing.json");
    w.run(&["report", missing.to_str().unwrap()])
        .code(2)
        .stderr_has("cannot read the report");
    let text = w.write("notes.txt", "hello");
    w.run(&["report", text.to_str().unwrap()])
        .code(2)
        .stderr_has("is not JSON");
}

/// A FIFO given as a report is refused at once, naming it, never waited on (no writer ever
/// opens it: an unbounded read would hang here).
#[test]
fn a_fifo_given_as_a_report_is_refused_not_waited_on() {
    let w = World::new();
    let fifo = w.root().join("report.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let cmd = w.cmd().args(["report", fifo.to_str().unwrap()]);
    let mut child = cmd.spawn();
    wait_until(
        "report to refuse the FIFO rather than wait on it",
        std::time::Duration::from_secs(30),
        || child.try_wait().unwrap().is_some(),
    );
    cmd.finish(child)
        .code(2)
        .stderr_has(&format!("cannot read the report {}", fifo.display()));
}

/// The families of a text exposition, as the Prometheus client library's parser reads it:
/// `[{"name", "type", "samples": [{"name", "labels", "value"}]}]`. Fails (never skips) when
/// the parser is not installed.
fn parse_exposition(text: &str) -> Value {
    let lib = crate::ci_examples::tool(
        "prometheus/prometheus_client/parser.py",
        "the Prometheus text parser (PyPI prometheus-client)",
    );
    let lib = lib.parent().unwrap().parent().unwrap();
    let script = "import json, sys\n\
        from prometheus_client.parser import text_string_to_metric_families as parse\n\
        out = [{'name': f.name, 'type': f.type, 'samples': [{'name': s.name, \
        'labels': s.labels, 'value': s.value} for s in f.samples]} for f in parse(sys.stdin.read())]\n\
        json.dump(out, sys.stdout)";
    let mut python = Command::new(system_tool("python3"));
    python.args(["-c", script]).env("PYTHONPATH", lib);
    let what = format!("the Prometheus parser refused it\n--- the exposition\n{text}");
    serde_json::from_slice(&crate::ci_examples::with_stdin(python, text, &what)).unwrap()
}

/// The samples named `name`: `(labels, value)`.
fn samples(families: &Value, name: &str) -> Vec<(Value, f64)> {
    families
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["samples"].as_array().unwrap().iter())
        .filter(|s| s["name"] == name)
        .map(|s| (s["labels"].clone(), s["value"].as_f64().unwrap()))
        .collect()
}

#[test]
fn status_in_prometheus_format_is_parsed_by_prometheus_own_parser() {
    let w = host();
    let r = w.on_sample("status", &["--format", "prometheus"]);
    r.code(0);
    let families = parse_exposition(&r.stdout);
    let checks = samples(&families, "mcp_deploy_check_ok");
    assert!(
        checks.contains(&(
            serde_json::json!({"server": "codetools-test", "client": "claude", "check": "deployed"}),
            1.0
        )),
        "{}",
        r.shown
    );
    assert!(checks.iter().all(|(_, v)| *v == 1.0), "{}", r.shown);
    let releases = samples(&families, "mcp_deploy_release_info");
    let ct = releases
        .iter()
        .find(|(l, _)| l["server"] == "codetools-test")
        .unwrap_or_else(|| panic!("no release of codetools\n{}", r.shown));
    assert_eq!(ct.0["commit"], CT_SHA);
    assert!(
        ct.0["release"].as_str().unwrap().ends_with(CT_SHA),
        "{}",
        r.shown
    );
    let stamp = samples(&families, "mcp_deploy_report_timestamp_seconds");
    assert_eq!(stamp.len(), 1, "{}", r.shown);
    assert_eq!(stamp[0].0, serde_json::json!({"command": "status"}));
    assert!(samples(&families, "mcp_deploy_reconcile_success_timestamp_seconds").is_empty());

    // A drifted registration is a 0, still a whole exposition (exit 1).
    w.claude(&["mcp", "remove", "-s", "user", "codetools-test"])
        .code(0);
    let r = w.on_sample("status", &["--format", "prometheus"]);
    r.code(1);
    let families = parse_exposition(&r.stdout);
    assert!(
        samples(&families, "mcp_deploy_check_ok").contains(&(
            serde_json::json!({"server": "codetools-test", "client": "claude", "check": "registered"}),
            0.0
        )),
        "{}",
        r.shown
    );
    assert_eq!(samples(&families, "mcp_deploy_ok")[0].1, 0.0);

    // reconcile heals it, and says when it last succeeded.
    let r = w.on_sample("reconcile", &["--format", "prometheus"]);
    r.code(0);
    let families = parse_exposition(&r.stdout);
    assert_eq!(
        samples(&families, "mcp_deploy_reconcile_success_timestamp_seconds").len(),
        1,
        "{}",
        r.shown
    );
}

#[test]
fn verify_identity_in_prometheus_format_is_parsed_and_a_wrong_commit_is_a_0() {
    let w = host();
    let r = verify(&w, "badc0ffeebadc0ffeebadc0ffeebadc0ffeebadc", "prometheus");
    r.code(1);
    let families = parse_exposition(&r.stdout);
    assert!(
        samples(&families, "mcp_deploy_check_ok").contains(&(
            serde_json::json!({"server": "codetools-test", "client": "claude", "check": "commit"}),
            0.0
        )),
        "{}",
        r.shown
    );
}

/// Issue 36.10: install's `--help` offered prometheus, which install then refused. Now a
/// command without samples neither offers it (help, parser) nor takes it.
#[test]
fn prometheus_is_refused_where_there_is_no_state_to_sample() {
    let w = World::new();
    for command in ["install", "uninstall", "promote"] {
        w.run(&[command, "--format", "prometheus"])
            .code(2)
            .stderr_has("invalid value 'prometheus'")
            .stderr_has("[possible values: human, json, junit, github]");
        let help = w.run(&[command, "--help"]);
        help.code(0);
        assert!(!help.said().contains("prometheus"), "{}", help.stdout);
    }
    let help = w.run(&["status", "--help"]);
    help.code(0)
        .stdout_has("prometheus (status, verify-identity and reconcile");
}

#[test]
fn a_run_that_cannot_complete_prints_no_partial_exposition() {
    let w = World::new();
    let r = w.run(&[
        "status",
        "--root",
        "/nonexistent-root",
        "--format",
        "prometheus",
    ]);
    r.code(2).stderr_has("help:");
    assert_eq!(r.stdout, "", "{}", r.shown);
}

#[test]
fn the_documented_alert_rules_parse_and_name_only_metrics_the_commands_print() {
    let w = host();
    let mut printed = std::collections::BTreeSet::new();
    for command in ["status", "reconcile"] {
        let r = w.on_sample(command, &["--format", "prometheus"]);
        r.code(0);
        let families = parse_exposition(&r.stdout);
        for f in families.as_array().unwrap() {
            for s in f["samples"].as_array().unwrap() {
                printed.insert(s["name"].as_str().unwrap().to_string());
            }
        }
    }
    let (line, text) = crate::ci_examples::block("prometheus-alerts");
    let doc = crate::ci_examples::yaml(&text);
    let rules = doc["groups"][0]["rules"]
        .as_array()
        .unwrap_or_else(|| panic!("docs/operations.md:{line}: no groups[0].rules\n{doc}"));
    assert!(rules.len() >= 3, "{doc}");
    let metric = regex::Regex::new(r"\bmcp_deploy_[a-z_]+").unwrap();
    for rule in rules {
        let alert = rule["alert"].as_str().expect("every rule is an alert");
        let expr = rule["expr"].as_str().unwrap();
        assert!(rule["for"].is_string(), "{alert}: no `for`");
        let named: Vec<String> = metric
            .find_iter(expr)
            .map(|m| m.as_str().to_string())
            .collect();
        assert!(!named.is_empty(), "{alert} names no metric of ours: {expr}");
        for m in named {
            assert!(
                printed.contains(&m),
                "docs/operations.md:{line}: alert {alert} names {m}, which neither status nor \
                 reconcile prints: {printed:?}"
            );
        }
    }
}

/// `run`'s JSON report saved as `dir/<name>.json`, its `host` set to `name` and its `at` moved
/// `secs_ago` seconds into the past (a host that stopped reporting, its last file left
/// behind), or into the future when negative (a host whose clock runs ahead).
fn save_aged(run: &Run, dir: &Path, name: &str, secs_ago: i64) -> PathBuf {
    let path = save_as(run, dir, name);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let at = humantime_like_rfc3339(doc["at"].as_str().unwrap()) as i64 - secs_ago;
    let out = Command::new(system_tool("date"))
        .args(["-u", "-d", &format!("@{at}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    doc["at"] = Value::from(String::from_utf8(out.stdout).unwrap().trim());
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// A host that stopped reporting (its cron broke, the machine is off) leaves its last good
/// report behind: merged as it is, the fleet passed on it. With `--max-age` the host fails as
/// stale, its age and the limit said under its rows; the JSON says it too.
#[test]
fn with_max_age_a_host_whose_last_report_is_old_fails_as_stale() {
    let dir = tempfile::tempdir().unwrap();
    let w = host();
    let status = w.on_sample("status", &["--json"]);
    status.code(0);
    let fresh = save_as(&status, dir.path(), "web-1");
    let old = save_aged(&status, dir.path(), "web-2", 3 * 3600 + 5);
    let report = |extra: &[&str]| {
        w.cmd()
            .arg("report")
            .args(extra)
            .arg(&fresh)
            .arg(&old)
            .run()
    };
    report(&[])
        .code(0)
        .stdout_has("ok: 2 host(s), every check passed");
    let table = report(&["--max-age", "1h"]);
    table
        .code(1)
        .stdout_has("stale: web-2's report (at ")
        .stdout_has("was made 3h ")
        .stdout_has("older than --max-age 1h")
        .stdout_has("1 of 2 host(s) failed: web-2");
    assert!(!table.said().contains("stale: web-1"), "{}", table.shown);
    let json = report(&["--max-age", "1h", "--json"]);
    json.code(1);
    let doc = json.json();
    assert_eq!(doc["ok"], false, "{}", json.shown);
    let web2 = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "web-2")
        .unwrap();
    assert!(
        web2["stale"]
            .as_str()
            .unwrap()
            .contains("older than --max-age 1h"),
        "{}",
        json.shown
    );
    assert_eq!(web2["ok"], false, "{}", json.shown);
    // Four hours is more than its age: it passes.
    report(&["--max-age", "4h"]).code(0);
}

/// A host whose clock ran two days ahead dates its reports in the future: "not older than
/// --max-age" would hold for two days after it stopped reporting. Issue 35.6: a report dated
/// more than 5 minutes ahead fails as `clock ahead` with or without --max-age (before, only
/// beyond the --max-age, and not at all without it); one a minute ahead (ordinary skew)
/// passes.
#[test]
fn a_report_dated_more_than_5_minutes_ahead_fails_as_clock_ahead_with_or_without_max_age() {
    let dir = tempfile::tempdir().unwrap();
    let w = host();
    let status = w.on_sample("status", &["--json"]);
    status.code(0);
    let skewed = save_aged(&status, dir.path(), "web-1", -60);
    let ahead = save_aged(&status, dir.path(), "web-2", -2 * 86400);
    for extra in [&["--max-age", "1h"][..], &[]] {
        let table = w
            .cmd()
            .arg("report")
            .args(extra)
            .arg(&skewed)
            .arg(&ahead)
            .run();
        table
            .code(1)
            .stdout_has("clock ahead: web-2's report (at ")
            .stdout_has(
                "ahead of this clock, more than the 5m a clock may run ahead: its host's clock \
                 is wrong",
            )
            .stdout_has("1 of 2 host(s) failed: web-2");
        assert!(!table.said().contains("web-1's report"), "{}", table.shown);
    }
}

/// The UTC RFC 3339 time `secs` from now (negative: ago), as a report's `at`.
fn at_from_now(secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let out = Command::new(system_tool("date"))
        .args([
            "-u",
            "-d",
            &format!("@{}", now + secs),
            "+%Y-%m-%dT%H:%M:%SZ",
        ])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Issue 35.6: the table hid a failing report of a host depending on the order of the files:
/// at the same second the one given later won, and a passing report dated a day ahead
/// replaced a current failing one (without --max-age nothing looked at the date). Each order
/// now gives the same table and the same exit; a report given as a file and again on stdin
/// is one report.
#[test]
fn a_failing_report_is_not_hidden_by_the_order_of_the_files_a_clock_ahead_or_stdin() {
    let w = World::new();
    let at = at_from_now(-60);
    let fail = w.write("fail.json", report_json("web-1", &at, false));
    let pass = w.write("pass.json", report_json("web-1", &at, true));
    let old = w.write("old.json", report_json("web-2", &at_from_now(-120), false));
    let future = w.write(
        "future.json",
        report_json("web-2", &at_from_now(86400), true),
    );
    let files = [&fail, &pass, &old, &future];
    let mut tables = Vec::new();
    for order in [[0, 1, 2, 3], [1, 0, 3, 2], [3, 1, 2, 0]] {
        let mut cmd = w.cmd().arg("report");
        for i in order {
            cmd = cmd.arg(files[i]);
        }
        let r = cmd.run();
        r.code(1)
            .stdout_has("2 of 2 host(s) failed: web-1, web-2")
            .stdout_has(&format!(
                "also current: web-1's report {} (at {at}) passes: it was made the same second",
                pass.display()
            ))
            .stdout_has("clock ahead: ");
        tables.push(r.stdout);
    }
    assert!(tables.windows(2).all(|t| t[0] == t[1]), "{tables:#?}");
    // The passing report on stdin and as a file: one report, the other a duplicate.
    let r = w
        .program(system_tool("sh"))
        .args(["-c", "exec \"$0\" report --json \"$1\" - < \"$1\""])
        .arg(env!("CARGO_BIN_EXE_mcp-deploy"))
        .arg(&pass)
        .run();
    r.code(0);
    let doc = r.json();
    assert_eq!(doc["hosts"].as_array().unwrap().len(), 1, "{}", r.shown);
    assert_eq!(doc["hosts"][0]["file"], "-", "{}", r.shown);
    assert_eq!(
        doc["superseded"],
        serde_json::json!([{"host": "web-1", "file": pass.to_str().unwrap(), "at": at,
            "by": "-", "why": "duplicate"}]),
        "{}",
        r.shown
    );
}

/// A host whose report never arrived is not in the files at all: merged as they are, the
/// fleet was the hosts that did report, and passed. `--expect-host` names the fleet; a host
/// without a report is a failed row of its own, and the JSON lists it as missing.
#[test]
fn with_expect_host_a_host_without_a_report_fails_as_missing() {
    let dir = tempfile::tempdir().unwrap();
    let w = host();
    let status = w.on_sample("status", &["--json"]);
    status.code(0);
    let a = save_as(&status, dir.path(), "web-1");
    let table = w
        .cmd()
        .args([
            "report",
            "--expect-host",
            "web-1,web-2",
            "--expect-host",
            "web-3",
        ])
        .arg(&a)
        .run();
    table
        .code(1)
        .stdout_has("missing: no report from web-2 (--expect-host)")
        .stdout_has("missing: no report from web-3 (--expect-host)")
        .stdout_has("2 of 3 host(s) failed: web-2, web-3");
    assert!(
        table
            .stdout
            .lines()
            .any(|l| l.starts_with("web-2") && l.contains("FAIL") && l.ends_with("no report")),
        "{}",
        table.shown
    );
    let json = w
        .cmd()
        .args(["report", "--json", "--expect-host", "web-1,web-2"])
        .arg(&a)
        .run();
    json.code(1);
    assert_eq!(
        json.json()["missing"],
        serde_json::json!(["web-2"]),
        "{}",
        json.shown
    );
    // Every host named reported: it passes.
    w.cmd()
        .args(["report", "--expect-host", "web-1"])
        .arg(&a)
        .run()
        .code(0);
    // An empty name is a usage error, not a host that can never report.
    w.cmd()
        .args(["report", "--expect-host", ""])
        .arg(&a)
        .run()
        .code(2);
}

/// Two machines cloned from one image often keep one host name. Merged by name alone, the
/// newer report of the two was taken as the host's and the other's failure was listed as
/// "superseded": a fleet with a machine on the wrong commit passed. Each report names its
/// machine (systemd's app-specific machine id); two machines under one name both fail as
/// clashing, while one machine's two reports still supersede.
#[test]
fn two_machines_with_one_host_name_both_fail_instead_of_one_hiding_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (host(), host());
    let wrong = "badc0ffeebadc0ffeebadc0ffeebadc0ffeebadc";
    let ra = verify(&a, wrong, "json");
    ra.code(1);
    let rb = verify(&b, CT_SHA, "json");
    rb.code(0);
    let failing = save_aged(&ra, &dir.path().join("a"), "web-1", 60);
    let passing = save_as(&rb, &dir.path().join("b"), "web-1");
    let report = |extra: &[&str]| {
        a.cmd()
            .arg("report")
            .args(extra)
            .arg(&failing)
            .arg(&passing)
            .run()
    };
    // One machine's two reports: the newer stands for it.
    report(&[]).code(0).stdout_has("superseded: web-1's report");
    // Another machine's: the one that fails is not hidden.
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&passing).unwrap()).unwrap();
    assert_eq!(doc["machine"].as_str().map(str::len), Some(32), "{doc}");
    doc["machine"] = Value::from("0123456789abcdef0123456789abcdef");
    std::fs::write(&passing, doc.to_string()).unwrap();
    let table = report(&[]);
    table
        .code(1)
        .stdout_has("clash: 2 machines report as web-1: ")
        .stdout_has("(machine 01234567)")
        .stdout_has("give each machine its own host name")
        .stdout_has("2 of 2 host(s) failed: web-1 (machine ");
    assert!(!table.said().contains("superseded"), "{}", table.shown);
    let json = report(&["--json"]);
    json.code(1);
    let hosts = json.json()["hosts"].as_array().unwrap().clone();
    assert_eq!(hosts.len(), 2, "{}", json.shown);
    for h in &hosts {
        assert_eq!(h["ok"], false, "{}", json.shown);
        assert!(h["clash"].is_string(), "{}", json.shown);
    }
}

/// A report is another host's word, read on the controller's terminal. One whose host, check
/// or detail held terminal escapes recoloured and cleared the operator's screen, and one whose
/// detail held a newline printed a line of its own ("ok: 3 host(s), every check passed")
/// under a failing fleet. Every value from a report is shown escaped; the JSON keeps it as
/// it is.
#[test]
fn a_hostile_report_cannot_put_escapes_or_lines_of_its_own_on_the_terminal() {
    let w = World::new();
    let evil = serde_json::json!({"ok": false, "exit": 1,
        "host": "web-1\u{1b}]0;pwned\u{7}\u{202e}", "at": "2026-12-02T10:00:00Z",
        "machine": "0123\u{1b}[2J",
        "servers": [{"name": "codetools\u{1b}[32m", "client": "claude",
            "registered_name": "codetools", "commit": CT_SHA,
            "checks": [{"check": "commit\u{1b}[0m", "ok": false,
                "detail": "bad\u{1b}[2J\nok: 3 host(s), every check passed"}]}]});
    let file = w.write("evil.json", evil.to_string());
    let r = w.run(&["report", file.to_str().unwrap()]);
    r.code(1)
        .stdout_has("web-1\\u{1b}]0;pwned\\u{7}\\u{202e}")
        .stdout_has("bad\\u{1b}[2J\\nok: 3 host(s), every check passed")
        .stdout_has("1 of 1 host(s) failed: web-1\\u{1b}");
    assert!(
        !r.said().contains(['\u{1b}', '\u{7}', '\u{202e}']),
        "{}",
        r.shown
    );
    assert!(
        !r.stdout.lines().any(|l| l.starts_with("ok:")),
        "{}",
        r.shown
    );
    let json = w.run(&["report", "--json", file.to_str().unwrap()]);
    json.code(1);
    assert_eq!(
        json.json()["hosts"][0]["host"],
        evil["host"],
        "{}",
        json.shown
    );
}
