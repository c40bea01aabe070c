//! `reconcile`: status's reading first, starting no client; install only what drifted, with
//! the real claude (and codex) as the oracle of what is registered after.

use std::fs;
use std::path::Path;
use std::time::SystemTime;

use serde_json::json;

use crate::harness::*;

/// Put a claude on PATH that logs every call, `--version` included, to `claude.log` and runs
/// the real one; install the sample (both servers, under the test names); forget the calls.
fn installed(w: &World, extra: &[&str]) {
    w.write_claude(&format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
        w.log_path().display(),
        real_claude().display()
    ));
    w.sample();
    w.on_sample("install", extra).code(0);
    w.clear_calls();
}

/// [`installed`], then codetools-test removed by hand with the real `claude mcp remove` (not
/// logged: the wrapper is not in the way).
fn removed_by_hand(w: &World) {
    installed(w, &[]);
    w.claude(&["mcp", "remove", "-s", "user", "codetools-test"])
        .code(0);
}

fn reconcile(w: &World, extra: &[&str]) -> Run {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    w.on_sample("reconcile", &args)
}

/// `(server, client) -> registration` of a reconcile report.
fn rows(r: &Run) -> Vec<(String, String, String)> {
    r.json()["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["client"].as_str().unwrap().to_string(),
                s["registration"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn registration(r: &Run, server: &str, client: &str) -> String {
    rows(r)
        .into_iter()
        .find(|(s, c, _)| s == server && c == client)
        .unwrap_or_else(|| panic!("no row for {server} in {client}\n{}", r.shown))
        .2
}

/// Every claude call is logged (see [`installed`]): none was made.
#[track_caller]
fn no_client_started(w: &World) {
    assert!(
        w.calls().is_empty(),
        "a client was started: {:?}",
        w.calls()
    );
}

/// The bytes and mtimes of `~/.claude.json` and the flat document.
#[allow(clippy::type_complexity)]
fn written(w: &World) -> ((Vec<u8>, SystemTime), (Vec<u8>, SystemTime)) {
    (stamp(&w.claude_json()), stamp(&w.registered()))
}

/// A file's bytes and mtime.
fn stamp(p: &Path) -> (Vec<u8>, SystemTime) {
    (
        fs::read(p).unwrap(),
        fs::metadata(p).unwrap().modified().unwrap(),
    )
}

#[test]
fn nothing_drifted_exits_0_starting_no_client_and_writing_nothing() {
    let w = World::new();
    installed(&w, &[]);
    let before = written(&w);
    let r = reconcile(&w, &[]);
    r.code(0);
    assert_eq!(
        rows(&r)
            .iter()
            .map(|(s, c, reg)| format!("{s} {c} {reg}"))
            .collect::<Vec<_>>(),
        ["codetools claude ok", "orchestrata claude ok"],
        "{}",
        r.shown
    );
    no_client_started(&w);
    assert_eq!(
        before,
        written(&w),
        "reconcile wrote ~/.claude.json or the flat document"
    );
    // The human report says the same, a line per server.
    w.on_sample("reconcile", &[])
        .code(0)
        .stdout_has("codetools (registered as codetools-test): ok");
    no_client_started(&w);
}

#[test]
fn an_entry_removed_with_claude_mcp_remove_is_put_back_and_the_other_left_alone() {
    let w = World::new();
    removed_by_hand(&w);
    let r = reconcile(&w, &[]);
    r.code(0);
    let healed = registration(&r, "codetools", "claude");
    assert!(
        healed.starts_with("healed: registered (codetools-test is not registered"),
        "{healed}"
    );
    assert_eq!(registration(&r, "orchestrata", "claude"), "ok");
    w.claude(&["mcp", "get", "codetools-test"])
        .code(0)
        .stdout_has("Scope: User");
    let calls = w.calls();
    assert!(
        calls.iter().any(|c| c.starts_with("mcp add-json")),
        "{calls:?}"
    );
    assert!(
        !calls.iter().any(|c| c.contains("orchestrata-test")),
        "the server that did not drift was touched: {calls:?}"
    );
}

#[test]
fn an_entry_edited_by_hand_to_another_command_is_healed() {
    let w = World::new();
    installed(&w, &[]);
    let other = json!({"command": "/bin/true", "args": ["mcp", "serve"]});
    w.reregister_by_hand("codetools-test", &other);
    let r = reconcile(&w, &[]);
    r.code(0);
    let healed = registration(&r, "codetools", "claude");
    assert!(
        healed.starts_with("healed: registered (codetools-test is registered as stdio /bin/true"),
        "{healed}"
    );
    let command = w.user_servers()["codetools-test"]["command"].clone();
    assert_eq!(
        command,
        json!(w.opt().join("codetools/bin/codetools")),
        "{}",
        r.shown
    );
    w.claude(&["mcp", "get", "codetools-test"])
        .code(0)
        .stdout_has("codetools/bin/codetools");
}

#[test]
fn a_deleted_flat_document_is_rewritten() {
    let w = World::new();
    installed(&w, &[]);
    let before = fs::read(w.registered()).unwrap();
    let claude_json = stamp(&w.claude_json());
    fs::remove_file(w.registered()).unwrap();
    let r = reconcile(&w, &[]);
    r.code(0);
    for server in ["codetools", "orchestrata"] {
        let healed = registration(&r, server, "claude");
        assert!(
            healed.starts_with("healed: recorded (") && healed.contains("does not exist"),
            "{healed}"
        );
    }
    assert_eq!(fs::read(w.registered()).unwrap(), before);
    // Recording asks the client what it holds, and changes no registration.
    assert!(
        !w.calls()
            .iter()
            .any(|c| c.starts_with("mcp remove") || c.starts_with("mcp add")),
        "{:?}",
        w.calls()
    );
    assert_eq!(claude_json.0, fs::read(w.claude_json()).unwrap());
}

#[test]
fn a_dry_run_says_what_it_would_heal_and_changes_nothing() {
    let w = World::new();
    removed_by_hand(&w);
    let before = written(&w);
    let r = reconcile(&w, &["--dry-run"]);
    r.code(1);
    let would = registration(&r, "codetools", "claude");
    assert!(
        would.starts_with("would heal: registered (codetools-test is not registered"),
        "{would}"
    );
    assert_eq!(registration(&r, "orchestrata", "claude"), "ok");
    no_client_started(&w);
    assert_eq!(before, written(&w));
    w.claude(&["mcp", "get", "codetools-test"]).code(1);
}

#[test]
fn a_second_client_drifted_alone_is_the_only_one_touched() {
    let w = World::new();
    std::os::unix::fs::symlink(real_client("codex"), w.bin().join("codex")).unwrap();
    installed(&w, &["--client", "claude,codex"]);
    let codex_config = w.root().join("home/.codex/config.toml");
    w.run_program(
        &real_client("codex"),
        &["mcp", "remove", "codetools-test"],
        &[],
    )
    .code(0);
    assert!(!fs::read_to_string(&codex_config)
        .unwrap()
        .contains("codetools-test"));
    let claude_json = stamp(&w.claude_json());
    let r = reconcile(&w, &["--client", "claude,codex"]);
    r.code(0);
    assert!(
        registration(&r, "codetools", "codex").starts_with("healed: registered"),
        "{}",
        r.shown
    );
    for (server, client) in [
        ("codetools", "claude"),
        ("orchestrata", "claude"),
        ("orchestrata", "codex"),
    ] {
        assert_eq!(registration(&r, server, client), "ok", "{}", r.shown);
    }
    assert!(fs::read_to_string(&codex_config)
        .unwrap()
        .contains("codetools-test"));
    assert!(w.calls().is_empty(), "claude was started: {:?}", w.calls());
    assert_eq!(
        claude_json,
        stamp(&w.claude_json()),
        "claude's config changed"
    );
}

#[test]
fn a_deployment_that_fails_the_gate_is_refused_changing_nothing_and_starting_no_client() {
    let w = World::new();
    removed_by_hand(&w);
    // `current` names a release that is gone: install would refuse at its gate, and so does
    // reconcile, before it reads or heals anything.
    let current = w.opt().join("codetools/current");
    fs::remove_file(&current).unwrap();
    std::os::unix::fs::symlink(
        "releases/0000000000000000000000000000000000000000",
        &current,
    )
    .unwrap();
    let before = written(&w);
    w.on_sample("reconcile", &[])
        .code(1)
        .stdout_has("no registration was changed");
    no_client_started(&w);
    assert_eq!(before, written(&w));
}

/// A client config that cannot be read is not judged without the client: reconcile takes
/// install's path for it, which refuses it (exit 2), never a pass.
#[test]
fn a_client_config_that_cannot_be_read_is_never_passed() {
    let w = World::new();
    installed(&w, &[]);
    fs::write(w.claude_json(), "{ not json").unwrap();
    let before = written(&w);
    let r = w.on_sample("reconcile", &[]);
    r.code(2)
        .stderr_has(".claude.json cannot be read")
        .stderr_has("help:");
    assert_eq!(before, written(&w), "{}", r.shown);
}

/// `--scope managed` (install's flag) is refused: reconcile reads user scope, so a managed
/// registration would read as drifted and be healed into the user's scope.
#[test]
fn scope_managed_is_refused_before_any_reading_or_client() {
    let w = World::with_real_claude();
    installed(&w, &[]);
    let before = written(&w);
    let r = reconcile(&w, &["--scope", "managed"]);
    r.code(2)
        .stderr_has("reconcile reads and heals user-scope registrations only")
        .stderr_has("install --scope managed");
    no_client_started(&w);
    assert_eq!(written(&w), before, "nothing written");
}
