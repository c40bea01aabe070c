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
