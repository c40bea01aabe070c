//! Issue 25, item 3: `install --scope managed` registers the servers for every user of the
//! host in claude's `/etc/claude-code/managed-mcp.json`, after which claude loads only that
//! file's servers. The real claude is the oracle (`claude mcp list`, `claude mcp get`); every
//! `/etc` file is written inside a private mount namespace ([`Cmd::in_private_etc`]), and
//! mcp-deploy and claude both run in it.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::*;

const MANAGED: &str = "/etc/claude-code/managed-mcp.json";

/// The world's `managed-mcp.json`, as the private `/etc` holds it.
fn managed(w: &World) -> PathBuf {
    w.etc_file(MANAGED)
}

fn seed(w: &World, text: &str) {
    w.write_etc(MANAGED, text);
}

/// `mcp-deploy COMMAND --prefix opt --name-suffix -test --scope managed EXTRA...` in the
/// private `/etc`.
fn on_managed(w: &World, command: &str, extra: &[&str]) -> Run {
    w.sample_cmd(command)
        .args(["--scope", "managed"])
        .args(extra)
        .in_private_etc()
        .run()
}

/// The real claude in the private `/etc`.
fn claude(w: &World, args: &[&str]) -> Run {
    w.claude_in_private_etc(args)
}

/// The names `claude mcp list` shows in the private `/etc`.
fn listed(w: &World) -> Vec<String> {
    w.claude_listed()
}

/// verify-identity of codetools-test against the flat document, in the private `/etc`.
fn verify(w: &World) -> Run {
    w.cmd()
        .args(["verify-identity", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--expect-commit", CT_SHA, "--mcp-json"])
        .arg(w.registered())
        .args(["--name", "codetools-test", "--json"])
        .in_private_etc()
        .run()
}

/// The sample laid out, and `handadded` registered by hand at the user's own scope.
fn with_a_hand_added_server() -> World {
    let w = World::with_real_claude();
    w.sample();
    w.add_by_hand("handadded", &json!({"command": "/bin/cat", "args": []}));
    w
}

#[test]
fn install_managed_makes_claude_load_both_servers_from_the_managed_file_and_no_users_own() {
    let w = with_a_hand_added_server();
    assert!(listed(&w).contains(&"handadded".to_string()));

    let r = on_managed(&w, "install", &["--json"]);
    r.code(0);
    // Said before the write, naming the file, and that it did not exist.
    r.stderr_has(&format!("warning: this writes {MANAGED}"))
        .stderr_has("load only the servers of that file, for every user; every user's own servers")
        .stderr_has("does not exist yet");
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "added", "{}", r.shown);
    }

    let after = listed(&w);
    assert!(after.contains(&"codetools-test".to_string()), "{after:?}");
    assert!(after.contains(&"orchestrata-test".to_string()), "{after:?}");
    assert!(!after.contains(&"handadded".to_string()), "{after:?}");
    let get = claude(&w, &["mcp", "get", "codetools-test"]);
    get.code(0)
        .stdout_has("Scope: Enterprise config")
        .stdout_has(&format!("edit {MANAGED}"));
    let gone = claude(&w, &["mcp", "get", "handadded"]);
    assert_ne!(gone.code, 0, "{}", gone.shown);

    // Every user's claude reads it: 0644 in a 0755 directory. The user's own file is as it was.
    let file = managed(&w);
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert!(w.user_servers().contains_key("handadded"));
    assert!(!w.user_servers().contains_key("codetools-test"));
    let doc: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let ct = w.opt().join("codetools/bin/codetools");
    assert_eq!(
        doc["mcpServers"]["codetools-test"],
        json!({"command": ct, "args": ["mcp", "serve"]})
    );

    // The flat document: the entries in their exact shape, their scope beside them.
    let flat: Value = serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(
        flat["mcpServers"]["codetools-test"],
        json!({"command": ct, "args": ["mcp", "serve"]})
    );
    assert_eq!(
        flat["mcpScopes"],
        json!({"codetools-test": "managed", "orchestrata-test": "managed"})
    );
    // verify-identity reads the live entry from the managed file.
    let v = verify(&w);
    v.code(0);
    assert!(v.said().contains(&format!("live {MANAGED}")), "{}", v.shown);

    // status looks for a managed registration in the managed file.
    w.sample_cmd("status").in_private_etc().run().code(0);

    // A rerun writes nothing.
    let (bytes, mtime) = (
        fs::read(&file).unwrap(),
        fs::metadata(&file).unwrap().mtime_nsec(),
    );
    let again = on_managed(&w, "install", &["--json"]);
    again.code(0);
    for s in again.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged", "{}", again.shown);
    }
    assert_eq!(fs::read(&file).unwrap(), bytes);
    assert_eq!(fs::metadata(&file).unwrap().mtime_nsec(), mtime);

    // Uninstall removes the file mcp-deploy created: even an empty one would keep every
    // user's own servers off. The user's server loads again.
    on_managed(&w, "uninstall", &[]).code(0);
    assert!(!file.exists());
    let back = listed(&w);
    assert!(back.contains(&"handadded".to_string()), "{back:?}");
    let flat: Value = serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(flat["mcpServers"], json!({}), "{flat}");
    assert!(flat.get("mcpScopes").is_none(), "{flat}");
}

/// An administrator's file: its own server, its own formatting.
const ADMINS: &str = "{\n    \"mcpServers\": {\n        \"admins-own\": {\"command\": \"/bin/cat\", \"args\": []}\n    },\n    \"note\": \"kept\"\n}\n";

#[test]
fn uninstall_managed_removes_ours_and_keeps_the_admins_server_and_bytes() {
    let w = World::with_real_claude();
    w.sample();
    seed(&w, ADMINS);
    fs::set_permissions(managed(&w), fs::Permissions::from_mode(0o640)).unwrap();
    let r = on_managed(&w, "install", &[]);
    r.code(0)
        .stderr_has(&format!("warning: this writes {MANAGED}"));
    assert!(!r.stderr.contains("does not exist yet"), "{}", r.shown);
    let after = listed(&w);
    for n in ["admins-own", "codetools-test", "orchestrata-test"] {
        assert!(after.contains(&n.to_string()), "{n}: {after:?}");
    }
    // Its mode is the admin's.
    assert_eq!(
        fs::metadata(managed(&w)).unwrap().permissions().mode() & 0o777,
        0o640
    );
    on_managed(&w, "uninstall", &[]).code(0);
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), ADMINS);
    assert_eq!(listed(&w), vec!["admins-own".to_string()]);
}

#[test]
fn an_admins_entry_of_our_name_is_neither_replaced_nor_removed() {
    let w = World::with_real_claude();
    w.sample();
    let theirs = "{\"mcpServers\": {\"codetools-test\": {\"command\": \"/bin/cat\"}}}\n";
    seed(&w, theirs);
    let r = on_managed(&w, "install", &["--server", "codetools"]);
    r.code(2).stderr_has("mcp-deploy did not write");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), theirs);
    let r = on_managed(&w, "uninstall", &["--server", "codetools"]);
    r.code(2).stderr_has("mcp-deploy did not write");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), theirs);
}

#[test]
fn a_managed_file_claude_would_refuse_is_refused_unchanged() {
    let w = World::with_real_claude();
    w.sample();
    // claude loads none of a file with a comment (and none of the users' either).
    let text = "{\"mcpServers\": {\"x\": {\"command\": \"/bin/cat\"}} // c\n}\n";
    seed(&w, text);
    let refused = claude(&w, &["mcp", "get", "x"]);
    assert_ne!(
        refused.code, 0,
        "claude reads it after all:\n{}",
        refused.shown
    );
    let r = on_managed(&w, "install", &[]);
    r.code(2).stderr_has("not strict JSON at line 1");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), text);
}

#[test]
fn managed_scope_with_another_client_exits_2_naming_why() {
    let w = World::new();
    w.sample();
    let r = w
        .sample_cmd("install")
        .args(["--client", "codex", "--scope", "managed"])
        .run();
    r.code(2)
        .stderr_has("--scope managed is for claude only")
        .stderr_has("codex");
    let r = w
        .sample_cmd("uninstall")
        .args(["--client", "claude,codex", "--scope", "managed"])
        .run();
    r.code(2).stderr_has("--scope managed is for claude only");
}

#[test]
fn a_dry_run_shows_the_managed_write_and_writes_nothing() {
    let w = World::with_real_claude();
    w.sample();
    let r = on_managed(&w, "install", &["--dry-run", "--json"]);
    r.code(0)
        .stderr_has(&format!("warning: this would write {MANAGED}"))
        .stderr_has("does not exist yet");
    let calls = r.json()["servers"][0]["client_calls"].clone();
    assert!(
        calls
            .as_array()
            .unwrap()
            .contains(&json!(format!("add codetools-test to {MANAGED}"))),
        "{}",
        r.shown
    );
    assert!(!managed(&w).exists());
    assert!(!w.registered().exists());
}

#[test]
fn a_crash_after_the_managed_write_is_rolled_back_by_the_next_run() {
    let w = with_a_hand_added_server();
    let r = w
        .sample_cmd("install")
        .args(["--scope", "managed"])
        .env("MCP_DEPLOY_CRASH_AT", "after-add:codetools-test")
        .in_private_etc()
        .run();
    assert_ne!(r.code, 0, "{}", r.shown);
    let journal = w.etc().join("claude-code/.mcp-deploy/claude.journal.json");
    assert!(journal.exists(), "{}", r.shown);
    assert!(managed(&w).exists(), "{}", r.shown);
    // The next run (an uninstall here) rolls the interrupted change back first: the file it
    // created goes with it, and the user's own server loads again.
    let r = on_managed(&w, "uninstall", &[]);
    r.code(0).stderr_has("codetools-test");
    assert!(!journal.exists());
    assert!(!managed(&w).exists(), "{}", r.shown);
    assert!(listed(&w).contains(&"handadded".to_string()));
    // And an install after it ends where an uninterrupted one does.
    on_managed(&w, "install", &[]).code(0);
    verify(&w).code(0);
}

#[test]
fn the_warning_is_said_before_anything_is_written() {
    let w = World::with_real_claude();
    w.sample();
    let r = w
        .sample_cmd("install")
        .args(["--scope", "managed"])
        .env("MCP_DEPLOY_CRASH_AT", "journal-written")
        .in_private_etc()
        .run();
    assert_ne!(r.code, 0, "{}", r.shown);
    r.stderr_has(&format!("warning: this writes {MANAGED}"));
    assert!(!managed(&w).exists(), "{}", r.shown);
}

#[test]
fn where_etc_cannot_be_written_it_exits_2_before_any_change() {
    let w = World::with_real_claude();
    w.sample();
    fs::create_dir_all(w.etc().join("claude-code")).unwrap();
    let r = w
        .sample_cmd("install")
        .args(["--scope", "managed"])
        .read_only(std::path::Path::new("/etc/claude-code"))
        .in_private_etc()
        .run();
    r.code(2)
        .stderr_has(&format!("cannot write {MANAGED}"))
        .stderr_has("takes root");
    assert!(!managed(&w).exists());
    assert!(!w.registered().exists(), "{}", r.shown);
    assert!(!w.etc().join("claude-code/.mcp-deploy").exists());
}

/// Every supported claude reads the managed file and labels its servers `Enterprise config`;
/// before 2.1.285 `mcp get` shows a stdio entry's command only when it has a type, so it is
/// written typed there, as user-scope entries are sent.
#[test]
fn claude_2_0_0_confirms_a_managed_registration_and_loads_no_users_own() {
    let w = with_a_hand_added_server();
    let old = compat_client("claude", "2.0.0");
    let r = on_managed(&w, "install", &["--claude", old.to_str().unwrap()]);
    r.code(0);
    let doc: Value = serde_json::from_str(&fs::read_to_string(managed(&w)).unwrap()).unwrap();
    assert_eq!(doc["mcpServers"]["codetools-test"]["type"], "stdio");
    let get = w
        .program(&old)
        .args(["mcp", "get", "codetools-test"])
        .env("MCP_TIMEOUT", "3000")
        .in_private_etc()
        .run();
    get.code(0)
        .stdout_has("Scope: Enterprise config")
        .stdout_has("Args: mcp serve");
    verify(&w).code(0);
    // The pinned claude reads the same file; a rerun with it writes nothing.
    let again = on_managed(&w, "install", &["--json"]);
    again.code(0);
    assert_eq!(
        again.json()["servers"][0]["registration"],
        "unchanged",
        "{}",
        again.shown
    );
    on_managed(&w, "uninstall", &[]).code(0);
    assert!(!managed(&w).exists());
}

/// verify-identity's live witness of a managed registration is the managed file: an entry
/// changed there by hand fails it, though the document still holds what was installed.
#[test]
fn a_managed_entry_changed_by_hand_fails_verify_identity() {
    let w = World::with_real_claude();
    w.sample();
    on_managed(&w, "install", &["--server", "codetools"]).code(0);
    verify(&w).code(0);
    let text = fs::read_to_string(managed(&w)).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["mcpServers"]["codetools-test"]["args"] = json!(["mcp", "serve", "--evil"]);
    fs::write(managed(&w), doc.to_string()).unwrap();
    let r = verify(&w);
    r.code(1);
    assert!(
        r.detail("mcp-registration").contains(MANAGED),
        "{}",
        r.shown
    );
}

/// A promote registers in the scope it is told: `--scope managed` keeps the managed entry,
/// whose stable command path needs no change, and verifies it. Without it, claude itself
/// refuses the user-scope `add-json` while a managed file exists, and nothing is switched.
#[test]
fn promote_with_scope_managed_keeps_the_managed_entry_and_without_it_says_why() {
    const NEW: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let w = World::with_real_claude();
    w.sample();
    crate::promote::add_sample_release(&w, NEW);
    on_managed(&w, "install", &["--server", "codetools"]).code(0);
    let before = fs::read(managed(&w)).unwrap();
    let ct = w.opt().join("codetools");
    let promote = |extra: &[&str]| {
        w.cmd()
            .args(["promote", "--prefix"])
            .arg(&ct)
            .args(["--release", NEW, "--name-suffix", "-test"])
            .args(extra)
            .in_private_etc()
            .run()
    };
    let r = promote(&[]);
    assert_ne!(r.code, 0, "{}", r.shown);
    r.stderr_has("enterprise MCP configuration is active and has exclusive control");
    assert!(fs::read_link(ct.join("current")).unwrap().ends_with(CT_SHA));
    assert!(!w.user_servers().contains_key("codetools-test"));

    promote(&["--scope", "managed"]).code(0);
    assert!(fs::read_link(ct.join("current")).unwrap().ends_with(NEW));
    assert_eq!(fs::read(managed(&w)).unwrap(), before);
    w.cmd()
        .args(["verify-identity", "--prefix"])
        .arg(&ct)
        .args(["--expect-commit", NEW, "--mcp-json"])
        .arg(w.registered())
        .args(["--name", "codetools-test"])
        .in_private_etc()
        .run()
        .code(0);
}

/// Issue 35 item 4: after an install that replaced our managed entry was killed, an
/// administrator's edit of that entry, then their removal of the whole file, are each kept
/// by the next run (exit 2, the journal kept): the file is never written over, nor created
/// again (its mere presence would switch every user's own servers off).
#[test]
fn attack_a_managed_file_edited_or_removed_after_a_killed_replace_is_kept() {
    let w = World::with_real_claude();
    w.sample();
    on_managed(&w, "install", &["--server", "codetools"]).code(0);
    // Our entry, drifted: the next install replaces it.
    let doc: Value = serde_json::from_str(&fs::read_to_string(managed(&w)).unwrap()).unwrap();
    let mut drifted = doc.clone();
    drifted["mcpServers"]["codetools-test"]["args"] = json!(["old"]);
    fs::write(managed(&w), drifted.to_string()).unwrap();
    let r = w
        .sample_cmd("install")
        .args(["--scope", "managed", "--server", "codetools"])
        .env("MCP_DEPLOY_CRASH_AT", "after-add:codetools-test")
        .in_private_etc()
        .run();
    assert!(r.stderr.contains("crashing at checkpoint"), "{}", r.shown);
    let journal = w.etc().join("claude-code/.mcp-deploy/claude.journal.json");
    assert!(journal.exists(), "{}", r.shown);

    let mut theirs = doc.clone();
    theirs["mcpServers"]["codetools-test"]["args"] = json!(["admin"]);
    fs::write(managed(&w), theirs.to_string()).unwrap();
    let r = on_managed(&w, "install", &["--server", "codetools"]);
    r.code(2)
        .stderr_has("codetools-test: changed since the interrupted run: not restored");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), theirs.to_string());
    assert!(journal.exists());

    fs::remove_file(managed(&w)).unwrap();
    let r = on_managed(&w, "install", &["--server", "codetools"]);
    r.code(2)
        .stderr_has("codetools-test: removed since the interrupted run: not restored");
    assert!(!managed(&w).exists(), "{}", r.shown);
    assert!(journal.exists());
}
