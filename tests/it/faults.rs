//! Faults the real client cannot produce on demand, injected by a `claude` on PATH that runs
//! the real one for every other call: a missing binary, a failing call, a hang, garbage.
//! Each ends in exit 2 naming the step, with no half-written file and no lost registration.

use std::fs;

use crate::harness::*;

fn install(w: &World, extra: &[&str]) -> Run {
    let mut args = extra.to_vec();
    if !extra.contains(&"--client-timeout") {
        args.extend_from_slice(&["--client-timeout", "20"]);
    }
    w.on_sample("install", &args)
}

fn assert_no_partial_files(w: &World) {
    let partial = partial_files(w.root());
    assert!(partial.is_empty(), "half-written files left: {partial:?}");
}

#[test]
fn missing_claude_names_the_npm_package() {
    let w = World::new();
    w.sample();
    let bin = w.bin();
    let r = w.run_env(
        &["install", "--prefix", w.opt().to_str().unwrap()],
        &[("PATH", bin.to_str().unwrap())],
    );
    r.code(2)
        .stderr_has("claude was not found on PATH")
        .stderr_has("@anthropic-ai/claude-code");
    let r = install(&w, &["--claude", "/nonexistent/claude"]);
    r.code(2).stderr_has("/nonexistent/claude was not found");
    assert!(!w.registered().exists());
}

#[test]
fn a_failing_add_json_is_exit_2_naming_the_step() {
    let w = World::new();
    w.wrap_claude(&[("add-json", 0, Fault::Fail)]);
    w.sample();
    install(&w, &[])
        .code(2)
        .stderr_has("`claude mcp add-json -s user codetools-test <entry>` failed")
        .stderr_has("injected failure: boom");
    assert!(!w.registered().exists());
    assert!(w.user_servers().is_empty());
    assert_no_partial_files(&w);
}

#[test]
fn a_hang_past_the_timeout_is_killed_and_exit_2() {
    let w = World::new();
    w.wrap_claude(&[("add-json", 0, Fault::Hang)]);
    w.sample();
    install(&w, &["--client-timeout", "1"])
        .code(2)
        .stderr_has("timed out after 1s")
        .stderr_has("claude mcp add-json -s user codetools-test")
        .stderr_has("help: the client CLI did not answer");
    assert!(!w.registered().exists());
    assert_no_partial_files(&w);
}

#[test]
fn garbage_get_output_is_exit_2_and_the_flat_document_is_untouched() {
    let w = World::new();
    w.wrap_claude(&[("get", 0, Fault::Garbage)]);
    w.sample();
    fs::write(
        w.registered(),
        r#"{"mcpServers":{"keep":{"command":"/k","args":[]}}}"#,
    )
    .unwrap();
    let before = fs::read(w.registered()).unwrap();
    install(&w, &[])
        .code(2)
        .stderr_has("`claude mcp get")
        .stderr_has("printed output that cannot be read");
    assert_eq!(fs::read(w.registered()).unwrap(), before);
    // Both adds were rolled back: neither name was there before.
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    assert_no_partial_files(&w);
}

#[test]
fn a_failing_remove_keeps_the_previous_registration() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    install(&w, &[]).code(0);
    let before = w.user_servers();
    // Make the registration differ, so the next install must update it, and fail remove.
    w.wrap_claude(&[("remove", 0, Fault::Fail)]);
    let cfg = w.declare_codetools(serde_json::json!({"args": ["changed"]}));
    install(&w, &["--config", cfg.to_str().unwrap()])
        .code(2)
        .stderr_has("`claude mcp remove codetools-test -s user` failed");
    assert_eq!(w.user_servers(), before);
}

#[test]
fn a_failing_add_after_remove_restores_the_previous_entry() {
    // The regression this pins: remove then a failed add-json used to leave the name absent.
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    install(&w, &[]).code(0);
    let before = w.user_servers();
    w.wrap_claude(&[("add-json", 3, Fault::Fail)]);
    let cfg = w.declare_codetools(serde_json::json!({"args": ["changed"]}));
    install(&w, &["--config", cfg.to_str().unwrap()])
        .code(2)
        .stderr_has("`claude mcp add-json -s user codetools-test <entry>` failed")
        .stderr_has("codetools-test: restored to its previous entry");
    assert_eq!(w.user_servers(), before);
    let calls = w.calls();
    let adds = calls
        .iter()
        .filter(|c| c.starts_with("mcp add-json"))
        .count();
    assert_eq!(
        adds,
        2 + 2,
        "two first installs, the failed add, the restore: {calls:?}"
    );
}

#[test]
fn an_unreadable_client_config_is_exit_2_and_never_rewritten() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    fs::write(w.claude_json(), "{ not json").unwrap();
    install(&w, &[])
        .code(2)
        .stderr_has(".claude.json cannot be read")
        .stderr_has("help: mcp-deploy never edits this file");
    assert_eq!(fs::read_to_string(w.claude_json()).unwrap(), "{ not json");
    assert!(w.calls().is_empty(), "{:?}", w.calls());
}

/// Regression: a reader that goes away (`| head`) made `println!` panic with exit 101.
#[test]
fn closed_stdout_does_not_panic() {
    let w = World::new();
    w.sample();
    // A client slow enough that our reader is gone before the report is written.
    w.write_claude(&format!(
        "#!/bin/sh\nsleep 0.5\nexec '{}' \"$@\"\n",
        real_claude().display()
    ));
    // Through the harness: this test used to build its own Command with only PATH, HOME and
    // CLAUDE_CONFIG_DIR set, so its install wrote the developer's ledger ($XDG_STATE_HOME)
    // and obeyed their MCP_DEPLOY_CLAUDE, MCP_TIMEOUT, CODEX_HOME...
    let opt = w.opt();
    let mut child = w.cmd().args(["install", "--prefix"]).arg(&opt).spawn();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(w.user_servers().len(), 2);
}

/// Issue 23, item 9: a call that fails before anything changed printed "every change was
/// rolled back:" followed by an empty list. It now says that nothing had changed (and the
/// failure says what failed); a client that cannot even tell its version names that call.
#[test]
fn a_failure_before_any_change_says_nothing_had_changed_not_an_empty_rollback_list() {
    let w = World::new();
    w.wrap_claude(&[("get", 3, Fault::Fail)]);
    w.sample();
    // The first install makes its two `get`s; the re-run changes nothing, and its first `get`
    // (the third) fails.
    install(&w, &[]).code(0);
    let before = fs::read(w.claude_json()).unwrap();
    let r = install(&w, &[]);
    r.code(2)
        .stderr_has("`claude mcp get")
        .stderr_has("injected failure: boom")
        .stderr_has("no registration had changed yet, so there was nothing to roll back");
    assert!(
        !r.stderr.contains("every change was rolled back"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read(w.claude_json()).unwrap(), before);
    // `--claude /bin/false`: its `--version` fails before any change.
    let r = install(&w, &["--claude", "/bin/false"]);
    r.code(2)
        .stderr_has("`claude --version` failed")
        .stderr_has("help: ");
    assert!(!r.stderr.contains("rolled back:"), "{}", r.stderr);
}
