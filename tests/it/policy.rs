//! Issue 25, item 1 for Claude Code: `mcp-deploy policy` derives `allowedMcpServers` from the
//! declaration and `--write` puts it into `/etc/claude-code/managed-settings.json`. The real
//! claude is the oracle: after the write it lists the declared servers and not a hand-added
//! one, and refuses to add an undeclared one. Every `/etc` file is written inside a private
//! mount namespace ([`Cmd::in_private_etc`]); mcp-deploy and claude both run in it.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::*;

const NEW: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const POLICY: &str = "/etc/claude-code/managed-settings.json";

/// The world's `managed-settings.json`, as the private `/etc` holds it.
fn managed(w: &World) -> PathBuf {
    w.etc().join("claude-code/managed-settings.json")
}

fn seed(w: &World, text: &str) {
    let p = managed(w);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// `mcp-deploy policy --prefix opt --name-suffix -test EXTRA...` in the private `/etc`.
fn policy(w: &World, extra: &[&str]) -> Run {
    w.sample_cmd("policy").args(extra).in_private_etc().run()
}

/// The real claude in the private `/etc`.
fn claude(w: &World, args: &[&str]) -> Run {
    w.program(real_claude())
        .args(args)
        .env("MCP_TIMEOUT", "3000")
        .in_private_etc()
        .run()
}

/// The names `claude mcp list` shows (its `name: command ...` lines).
fn listed(w: &World) -> Vec<String> {
    w.claude_listed()
}

/// The sample installed (both servers, `-test`), and `handadded` registered by hand beside
/// them, admitted by the user's own `allowedMcpServers` too.
fn installed_with_a_hand_added_server() -> World {
    let w = World::claude_sample_with_a_hand_added_server();
    w.write(
        "claude/settings.json",
        json!({"allowedMcpServers": [{"serverCommand": ["/bin/cat"]}]}).to_string(),
    );
    w
}

#[test]
fn after_policy_write_claude_lists_only_the_declared_servers_and_refuses_an_undeclared_one() {
    let w = installed_with_a_hand_added_server();
    let before = listed(&w);
    assert!(before.contains(&"handadded".to_string()), "{before:?}");

    let r = policy(&w, &["--write"]);
    r.code(0).stdout_has(&format!("wrote {POLICY}"));

    let after = listed(&w);
    assert!(after.contains(&"codetools-test".to_string()), "{after:?}");
    assert!(after.contains(&"orchestrata-test".to_string()), "{after:?}");
    assert!(
        !after.contains(&"handadded".to_string()),
        "the user's own allowedMcpServers no longer admits it: {after:?}"
    );
    // mcp-deploy's own reading of claude's layers agrees: the policy admits them.
    w.sample_cmd("status").in_private_etc().run().code(0);
    let add = claude(
        &w,
        &[
            "mcp",
            "add-json",
            "-s",
            "user",
            "other",
            r#"{"command":"/bin/echo"}"#,
        ],
    );
    assert_ne!(add.code, 0, "{}", add.shown);
    assert!(
        format!("{}{}", add.stdout, add.stderr).contains("not allowed by enterprise policy"),
        "{}",
        add.shown
    );
}

#[test]
fn a_rerun_writes_nothing_and_other_keys_and_entries_survive() {
    let w = World::new();
    w.sample();
    let theirs =
        "{\n    \"model\": \"opus\",\n    \"permissions\": {\"deny\": [\"Bash(rm:*)\"]},\n    \
                  \"allowedMcpServers\": [{\"serverName\": \"admins-own\"}]\n}\n";
    seed(&w, theirs);
    let r = policy(&w, &["--write", "--json"]);
    r.code(0);
    let change = &r.json()["clients"][0]["change"];
    assert_eq!(change["written"], true, "{}", r.shown);
    assert_eq!(change["added"].as_array().unwrap().len(), 2, "{}", r.shown);

    let text = fs::read_to_string(managed(&w)).unwrap();
    // The keys it did not set keep their bytes: the edit is of the syntax tree.
    assert!(
        text.starts_with(
            "{\n    \"model\": \"opus\",\n    \"permissions\": {\"deny\": [\"Bash(rm:*)\"]},"
        ),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&text).unwrap();
    let list = doc["allowedMcpServers"].as_array().unwrap();
    assert_eq!(list[0], json!({"serverName": "admins-own"}));
    let ct = w.opt().join("codetools/bin/codetools");
    assert!(
        list.contains(&json!({"serverCommand": [ct, "mcp", "serve"]})),
        "{text}"
    );
    assert_eq!(doc["allowManagedMcpServersOnly"], true);
    assert_eq!(
        doc["mcpDeployAllowedMcpServers"].as_array().unwrap().len(),
        2
    );

    let inode = fs::metadata(managed(&w)).unwrap().ino();
    let again = policy(&w, &["--write", "--json"]);
    again.code(0);
    assert_eq!(
        again.json()["clients"][0]["change"]["written"],
        false,
        "{}",
        again.shown
    );
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), text);
    assert_eq!(
        fs::metadata(managed(&w)).unwrap().ino(),
        inode,
        "not even rewritten"
    );
    policy(&w, &["--write"]).code(0).stdout_has("unchanged:");
}

#[test]
fn a_server_no_longer_selected_loses_only_the_entry_mcp_deploy_made() {
    let w = World::new();
    w.sample();
    let or = w.opt().join("orchestrata/bin/orchestrata-mcp");
    // The admin lists orchestrata themselves: that entry is theirs, and stays.
    seed(
        &w,
        &json!({"allowedMcpServers": [{"serverCommand": [or]}]}).to_string(),
    );
    policy(&w, &["--write"]).code(0);
    policy(&w, &["--write", "--server", "codetools"]).code(0);
    let doc: Value = serde_json::from_str(&fs::read_to_string(managed(&w)).unwrap()).unwrap();
    let ct = w.opt().join("codetools/bin/codetools");
    assert_eq!(
        doc["allowedMcpServers"],
        json!([{"serverCommand": [or]}, {"serverCommand": [ct, "mcp", "serve"]}])
    );
    // Made by mcp-deploy: only codetools' entry (orchestrata's was there before it).
    assert_eq!(
        doc["mcpDeployAllowedMcpServers"],
        json!([{"serverCommand": [ct, "mcp", "serve"]}])
    );

    // Its own entry that the declaration no longer derives goes.
    let cfg = w.declare_codetools(json!({"args": ["mcp", "serve", "--v2"]}));
    let r = policy(
        &w,
        &[
            "--write",
            "--server",
            "codetools",
            "--config",
            cfg.to_str().unwrap(),
        ],
    );
    r.code(0).stdout_has("removed");
    let doc: Value = serde_json::from_str(&fs::read_to_string(managed(&w)).unwrap()).unwrap();
    assert_eq!(
        doc["allowedMcpServers"],
        json!([{"serverCommand": [or]}, {"serverCommand": [ct, "mcp", "serve", "--v2"]}])
    );
}

#[test]
fn dry_run_shows_the_change_and_writes_nothing() {
    let w = World::new();
    w.sample();
    let r = policy(&w, &["--write", "--dry-run"]);
    r.code(0)
        .stdout_has("dry run: nothing is written")
        .stdout_has("would add {\"serverCommand\":")
        .stdout_has("would set allowManagedMcpServersOnly: true")
        .stdout_has(&format!("would write {POLICY}"));
    assert!(
        !w.etc().join("claude-code").exists(),
        "no file, no lock, no journal"
    );
}

#[test]
fn a_managed_file_claude_cannot_parse_is_refused_unchanged() {
    let w = World::with_real_claude();
    w.sample();
    let text = "{\n  // the admin's note\n  \"model\": \"opus\"\n}\n";
    seed(&w, text);
    // The oracle: claude refuses such a file as a whole.
    let c = claude(&w, &["mcp", "list"]);
    assert!(
        format!("{}{}", c.stdout, c.stderr).contains("could not be parsed"),
        "{}",
        c.shown
    );
    let r = policy(&w, &["--write"]);
    r.code(2)
        .stderr_has(POLICY)
        .stderr_has("help: fix the file by hand");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), text);
}

#[test]
fn the_file_fragment_is_what_write_writes_and_claude_enforces_it() {
    let w = installed_with_a_hand_added_server();
    let r = policy(&w, &["--format", "file"]);
    r.code(0);
    let fragment: Value = r.json();
    seed(&w, &serde_json::to_string_pretty(&fragment).unwrap());
    let after = listed(&w);
    assert!(after.contains(&"codetools-test".to_string()), "{after:?}");
    assert!(!after.contains(&"handadded".to_string()), "{after:?}");
    // --write recognises the entries as its own: nothing to change.
    let again = policy(&w, &["--write", "--json"]);
    again.code(0);
    assert_eq!(
        again.json()["clients"][0]["change"]["written"],
        false,
        "{}",
        again.shown
    );
}

#[test]
fn a_promote_after_policy_write_keeps_the_server_admitted() {
    let w = World::with_real_claude();
    w.sample();
    let ct = w.opt().join("codetools");
    let from = ct.join("releases").join(CT_SHA);
    let to = ct.join("releases").join(NEW);
    fs::create_dir_all(to.join("bin")).unwrap();
    fs::copy(from.join("bin/codetools"), to.join("bin/codetools")).unwrap();
    fs::write(to.join("VERSION"), format!("{NEW}\n")).unwrap();
    w.on_sample("install", &["--server", "codetools"]).code(0);
    policy(&w, &["--write", "--server", "codetools"]).code(0);

    w.cmd()
        .args(["promote", "--prefix"])
        .arg(&ct)
        .args(["--release", NEW, "--name-suffix", "-test"])
        .in_private_etc()
        .run()
        .code(0);
    assert_eq!(
        fs::read_link(ct.join("current")).unwrap(),
        PathBuf::from(format!("releases/{NEW}"))
    );
    let after = listed(&w);
    assert!(after.contains(&"codetools-test".to_string()), "{after:?}");
    // The stable path did not move: the policy is still exactly the derived one.
    policy(&w, &["--write", "--server", "codetools"])
        .code(0)
        .stdout_has("unchanged:");
}

#[test]
fn a_command_declared_under_releases_is_refused_naming_the_stable_path() {
    let w = World::new();
    w.sample();
    let cfg = w.root().join("pinned.json");
    let doc = json!({"servers": [{"name": "codetools", "prefix": "/opt/codetools",
        "layout": "release",
        "entry": {"command": format!("{{{{prefix}}}}/releases/{CT_SHA}/bin/codetools")}}]});
    fs::write(&cfg, doc.to_string()).unwrap();
    let r = policy(
        &w,
        &[
            "--server",
            "codetools",
            "--config",
            cfg.to_str().unwrap(),
            "--write",
        ],
    );
    r.code(2)
        .stderr_has("resolves through the release path")
        .stderr_has("help: declare the stable path");
    assert!(!managed(&w).exists());
}

#[test]
fn another_client_is_refused_naming_what_is_supported() {
    let w = World::new();
    w.sample();
    let r = w
        .sample_cmd("policy")
        .args(["--client", "claude,codex"])
        .run();
    r.code(2)
        .stderr_has("codex")
        .stderr_has("help: policy supports --client claude so far");
}

#[test]
fn a_write_killed_after_it_replaced_the_file_is_rolled_back_by_the_next_run() {
    let w = World::new();
    w.sample();
    let theirs = json!({"model": "opus"}).to_string();
    seed(&w, &theirs);
    let r = w
        .sample_cmd("policy")
        .args(["--write"])
        .env("MCP_DEPLOY_CRASH_AT", "policy-written")
        .in_private_etc()
        .run();
    assert_ne!(r.code, 0, "{}", r.shown);
    let journal = w.etc().join("claude-code/.mcp-deploy/policy.journal.json");
    assert!(journal.exists(), "{}", r.shown);
    assert_ne!(fs::read_to_string(managed(&w)).unwrap(), theirs);

    // The next run puts the old text back first, then writes its own policy (here: only
    // codetools), so nothing of the killed run's survives but what this one derives.
    let r = policy(&w, &["--write", "--server", "codetools"]);
    r.code(0)
        .stderr_has("an interrupted policy --write was rolled back");
    assert!(!journal.exists());
    let doc: Value = serde_json::from_str(&fs::read_to_string(managed(&w)).unwrap()).unwrap();
    assert_eq!(doc["model"], "opus");
    let ct = w.opt().join("codetools/bin/codetools");
    assert_eq!(
        doc["allowedMcpServers"],
        json!([{"serverCommand": [ct, "mcp", "serve"]}])
    );
}

#[test]
fn write_without_permission_for_etc_is_exit_2_naming_the_file_and_what_to_do() {
    let w = World::new();
    w.sample();
    seed(&w, "{}");
    let r = w
        .program("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_mcp-deploy"))
        .args(["policy", "--prefix"])
        .arg(w.opt())
        .args(["--write"])
        .in_private_etc()
        .run();
    r.code(2)
        .stderr_has(&format!("cannot write {POLICY}"))
        .stderr_has("help: writing /etc/claude-code takes root");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), "{}");
}

#[test]
fn a_declared_server_with_nothing_deployed_is_left_out_and_said_so() {
    let w = World::new();
    w.sample();
    fs::remove_dir_all(w.opt().join("orchestrata")).unwrap();
    let r = policy(&w, &["--json"]);
    r.code(0).stderr_has("skipping orchestrata: not deployed");
    let servers = r.json()["clients"][0]["servers"].clone();
    assert_eq!(servers.as_array().unwrap().len(), 1, "{}", r.shown);
    assert_eq!(servers[0]["name"], "codetools-test");
}

/// Check, change, check again: a program that rewrites the managed file while `policy --write`
/// is between its read and its write keeps its change; the run writes nothing, leaves no
/// journal, says why and exits 2, and the next run edits the file as it is then.
#[test]
fn a_file_rewritten_by_another_program_during_the_write_keeps_its_change() {
    let w = World::new();
    w.sample();
    seed(&w, &json!({"model": "opus"}).to_string());
    let mut run = w
        .sample_cmd("policy")
        .args(["--write"])
        .env("MCP_DEPLOY_PAUSE_AT", "policy-journal-written")
        .in_private_etc()
        .start();
    run.paused_at("policy-journal-written");
    let theirs = json!({"model": "sonnet"}).to_string();
    fs::write(managed(&w), &theirs).unwrap();
    run.resume();
    run.finish()
        .code(2)
        .stderr_has("changed while mcp-deploy was editing it")
        .stderr_has("help: run policy --write again");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), theirs);
    assert!(!w
        .etc()
        .join("claude-code/.mcp-deploy/policy.journal.json")
        .exists());
    policy(&w, &["--write"]).code(0);
    let doc: Value = serde_json::from_str(&fs::read_to_string(managed(&w)).unwrap()).unwrap();
    assert_eq!(doc["model"], "sonnet");
    assert!(doc["allowedMcpServers"].is_array(), "{doc}");
}
