//! Which files the client really reads, and files that are not what they should be (issue
//! 11 items 5, 8, 9): Claude Code's legacy `.config.json`, a symlinked flat document, a
//! config only JSON.parse accepts, and a fifo where a file should be.

use std::fs;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::*;

fn install(w: &World, extra: &[&str]) -> Run {
    w.on_sample("install", extra)
}

fn servers_in(path: &std::path::Path) -> serde_json::Map<String, Value> {
    let v: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    v.get("mcpServers")
        .and_then(|m| m.as_object().cloned())
        .unwrap_or_default()
}

/// Item 5: with a non-empty `<config dir>/.config.json`, Claude Code reads and writes it
/// instead of `.claude.json`; install, status and uninstall follow it.
#[test]
fn claude_legacy_config_json_is_the_file_read_when_claude_uses_it() {
    let w = World::with_real_claude();
    w.sample();
    let legacy = w.config_dir().join(".config.json");
    fs::write(&legacy, "{\"numStartups\": 1}\n").unwrap();
    install(&w, &[]).code(0).stdout_has("added");
    // The real CLI wrote there, and only there.
    assert!(servers_in(&legacy).contains_key("codetools-test"));
    assert!(
        !w.claude_json().exists() || !servers_in(&w.claude_json()).contains_key("codetools-test")
    );
    w.claude(&["mcp", "get", "codetools-test"]).code(0);
    w.on_sample("status", &[]).code(0);
    install(&w, &[]).code(0).stdout_has("unchanged");
    w.on_sample("uninstall", &[]).code(0).stdout_has("removed");
    assert!(!servers_in(&legacy).contains_key("codetools-test"));
    w.claude(&["mcp", "get", "codetools-test"]).code(1);
}

/// Item 5: Claude Code looks for `.config.json` in `CLAUDE_CONFIG_DIR ?? ~/.claude`, so with
/// the variable set but empty, `~/.claude/.config.json` is not its file (`~/.claude.json` is).
#[test]
fn claude_legacy_config_json_with_an_empty_config_dir_variable() {
    let w = World::with_real_claude();
    w.sample();
    let home = w.root().join("home");
    let legacy = home.join(".claude/.config.json");
    fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    fs::write(&legacy, "{\"numStartups\": 1}\n").unwrap();
    let r = w.sample_cmd("install").env("CLAUDE_CONFIG_DIR", "").run();
    r.code(0).stdout_has("added");
    assert!(servers_in(&home.join(".claude.json")).contains_key("codetools-test"));
    assert!(!servers_in(&legacy).contains_key("codetools-test"));
}

/// Item 5, the other side of Claude Code's rule: an empty, writable `.config.json` beside an
/// existing `.claude.json` is not used.
#[test]
fn claude_empty_legacy_config_json_is_ignored_like_claude_ignores_it() {
    let w = World::with_real_claude();
    w.sample();
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "unrelated",
        r#"{"command":"/usr/bin/env"}"#,
    ])
    .code(0);
    let legacy = w.config_dir().join(".config.json");
    fs::write(&legacy, "").unwrap();
    install(&w, &[]).code(0);
    assert!(w.user_servers().contains_key("codetools-test"));
    assert_eq!(fs::read_to_string(&legacy).unwrap(), "");
}

/// Item 8: a symlinked flat document stays a symlink; a dangling one is refused up front.
#[test]
fn a_symlinked_flat_document_is_written_through_and_stays_a_link() {
    let w = World::with_real_claude();
    w.sample();
    let real = w.root().join("shared/registered.json");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::write(&real, "{\"mcpServers\": {}}\n").unwrap();
    std::os::unix::fs::symlink(&real, w.registered()).unwrap();
    install(&w, &[]).code(0);
    assert!(fs::symlink_metadata(w.registered())
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(servers_in(&real).contains_key("codetools-test"));
    assert!(partial_files(w.root()).is_empty());

    fs::remove_file(&real).unwrap();
    w.on_sample("uninstall", &[]).code(0);
    let r = install(&w, &[]);
    r.code(2)
        .stderr_has("symlink to a file that does not exist");
    assert!(
        !w.user_servers().contains_key("codetools-test"),
        "refused before any change"
    );
    assert!(fs::symlink_metadata(w.registered())
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Item 9: what Node's JSON.parse accepts (a lone surrogate escape, nesting past 128
/// levels, a number past f64) Claude Code accepts, and so do we; we never write the file.
#[test]
fn a_config_json_parse_accepts_is_one_we_read() {
    let w = World::with_real_claude();
    w.sample();
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "unrelated",
        r#"{"command":"/usr/bin/env"}"#,
    ])
    .code(0);
    let text = fs::read_to_string(w.claude_json()).unwrap();
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    let text = text.replacen(
        '{',
        &format!("{{\"note\": \"pasted \\ud800 text\", \"deep\": {deep}, \"big\": 1e400,"),
        1,
    );
    fs::write(w.claude_json(), text).unwrap();
    // The real client accepts it...
    w.claude(&["mcp", "get", "unrelated"]).code(0);
    // ...and so does mcp-deploy.
    install(&w, &[]).code(0);
    w.on_sample("status", &[]).code(0);
    w.on_sample("uninstall", &[]).code(0);
}

fn finishes_within(mut child: Child, secs: u64) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {secs} s: blocked on a fifo");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(p: &std::path::Path) {
    assert!(std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success());
}

/// A fifo where the flat document or the client config should be is refused, never read
/// (a read would block for ever).
#[test]
fn a_fifo_where_a_file_should_be_is_refused_not_waited_on() {
    let w = World::with_real_claude();
    w.sample();
    let opt = w.opt();
    let args = [
        "install",
        "--prefix",
        opt.to_str().unwrap(),
        "--name-suffix",
        "-test",
    ];
    mkfifo(&w.registered());
    let (code, stderr) = finishes_within(w.spawn(&args), 30);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("must be a regular file"), "{stderr}");
    fs::remove_file(w.registered()).unwrap();

    mkfifo(&w.claude_json());
    let (code, stderr) = finishes_within(w.spawn(&args), 30);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("must be a regular file"), "{stderr}");
    fs::remove_file(w.claude_json()).unwrap();

    // A fifo for a ledger is refused at once, before anything changes (it used to make the
    // registration and then warn; refusing up front loses nothing and records nothing).
    let ledger = w.root().join("ledger.fifo");
    mkfifo(&ledger);
    let mut with_ledger = args.to_vec();
    with_ledger.extend(["--ledger", ledger.to_str().unwrap()]);
    let (code, stderr) = finishes_within(w.spawn(&with_ledger), 60);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the ledger must be a regular file"),
        "{stderr}"
    );
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
}
