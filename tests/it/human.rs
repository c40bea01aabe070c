//! What a person sees: the human report of each command, snapshot-tested (exit code, stdout
//! and stderr, temp paths redacted) so a change to its shape shows up as a diff to review
//! (`cargo insta review`, or set INSTA_UPDATE=always and read `git diff`), not as a substring
//! that still happens to match. The other modules test what the reports say by `--json`; the
//! snapshots of a passing verify-identity, status, the handshake, manifest verify and
//! verify-vendor live beside their tests.

use serde_json::json;

use crate::harness::*;
use crate::snapshot;

fn sample_command(w: &World, command: &str, extra: &[&str]) -> Run {
    w.on_sample(command, extra)
}

#[test]
fn install_first_then_again() {
    let w = World::with_real_claude();
    w.sample();
    let first = sample_command(&w, "install", &[]);
    snapshot!("install_first", first);
    let again = sample_command(&w, "install", &[]);
    snapshot!("install_again", again);
}

#[test]
fn install_dry_run() {
    let w = World::with_real_claude();
    w.sample();
    let r = sample_command(&w, "install", &["--dry-run"]);
    snapshot!("install_dry_run", r);
    assert!(w.user_servers().is_empty(), "a dry run registered\n{r}");
}

#[test]
fn uninstall() {
    let w = World::with_real_claude();
    w.sample();
    sample_command(&w, "install", &[]).success();
    let r = sample_command(&w, "uninstall", &[]);
    snapshot!("uninstall", r);
}

#[test]
fn status_with_drift() {
    let w = World::with_real_claude();
    w.sample();
    sample_command(&w, "install", &[]).success();
    // codetools edited by hand in the client; orchestrata untouched.
    w.claude(&["mcp", "remove", "codetools-test", "-s", "user"])
        .success();
    let evil = json!({"command": w.opt().join("codetools/bin/codetools"), "args": ["--evil"]});
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "codetools-test",
        &evil.to_string(),
    ])
    .success();
    let r = sample_command(&w, "status", &[]);
    snapshot!("status_with_drift", r);
}

/// A healthy codetools release and a flat document registering its stable path.
fn codetools(w: &World) -> (std::path::PathBuf, std::path::PathBuf) {
    let prefix = w.opt().join("codetools");
    release_layout(&prefix, CT_SHA);
    let doc = w.root().join("registered.json");
    let cmd = prefix.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp", "serve"]);
    (prefix, doc)
}

#[test]
fn verify_identity_wrong_commit() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let r = w.verify_identity(&prefix, OR_SHA, &doc, &[]);
    snapshot!("verify_identity_wrong_commit", r);
}

#[test]
fn render_mcp() {
    let w = World::new();
    let opt = w.sample();
    let r = w.run(&[
        "render-mcp",
        "--prefix",
        opt.join("codetools").to_str().unwrap(),
    ]);
    snapshot!("render_mcp", r);
}

#[test]
fn an_error_with_help() {
    let w = World::new();
    let prefix = w.opt().join("codetools");
    std::fs::create_dir_all(prefix.join("releases")).unwrap();
    let r = w.run(&["render-mcp", "--prefix", prefix.to_str().unwrap()]);
    snapshot!("error_with_help", r);
}

/// Issue 36, item 10: human lines ran to 333 columns, with the same 40-digit sha up to four
/// times. Now every line of every report fits 100 columns — here under the test's temp root,
/// a prefix twice as long as `/opt/codetools` — with shas in 12 digits (JSON keeps them
/// whole). A dry run's client calls are commands to copy, kept on one line each.
#[test]
fn every_human_line_fits_100_columns() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let ct = opt.join("codetools");
    let ct = ct.to_str().unwrap();
    let (ct_commit, or_commit) = (
        format!("codetools={CT_SHA}"),
        format!("orchestrata={OR_SHA}"),
    );
    let mut runs = vec![
        w.on_sample("install", &["--dry-run"]),
        w.on_sample("install", &[]),
        w.on_sample("install", &[]),
        w.on_sample("status", &[]),
        w.on_sample("reconcile", &[]),
        w.on_sample("verify-identity", &["-e", &ct_commit, "-e", &or_commit]),
        w.on_sample(
            "verify-identity",
            &["-e", &ct_commit, "-e", &or_commit, "--only-deployed"],
        ),
        w.run(&[
            "promote",
            "-p",
            ct,
            "--release",
            CT_SHA,
            "--name-suffix",
            "-test",
        ]),
        w.run(&["prune", "-p", ct, "--keep", "0", "--dry-run"]),
        w.on_sample("uninstall", &["--dry-run"]),
    ];
    // A failing report: a wrong commit, and a registration edited by hand.
    let wrong = format!("codetools={}", "f".repeat(40));
    runs.push(w.on_sample("verify-identity", &["-e", &wrong, "-e", &or_commit]));
    // install refused at its gate: the report, then why nothing changed (a 136-column line).
    let refused = w.on_sample("install", &["-e", &wrong, "-e", &or_commit]);
    refused.code(1).stdout_has("no registration was changed");
    runs.push(refused);
    let evil = json!({"command": w.root().join("elsewhere/codetools")}).to_string();
    w.claude(&["mcp", "remove", "-s", "user", "codetools-test"])
        .code(0);
    w.claude(&["mcp", "add-json", "-s", "user", "codetools-test", &evil])
        .code(0);
    runs.push(w.on_sample("status", &[]));
    runs.push(w.on_sample("verify-identity", &["-e", &ct_commit, "-e", &or_commit]));
    let mut seen = 0;
    for r in &runs {
        assert!(
            !r.stdout.contains(CT_SHA),
            "a whole sha in human output\n{r}"
        );
        for line in r.stdout.lines().filter(|l| !l.starts_with("  run   ")) {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}\n{r}",
                line.chars().count()
            );
            seen += 1;
        }
    }
    assert!(seen > 80, "{seen} lines");
    // JSON keeps the sha whole.
    let json = w.on_sample("status", &["--json"]);
    assert!(json.stdout.contains(CT_SHA), "{json}");
}
