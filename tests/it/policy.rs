//! Issue 25, item 1: `mcp-deploy policy` derives each client's allowlist from the declaration
//! and `--write` puts it into the client's policy file: claude's `allowedMcpServers` in
//! `/etc/claude-code/managed-settings.json`, codex's `[mcp_servers.NAME.identity]` in
//! `/etc/codex/requirements.toml`, gemini's `mcp.allowed` in `/etc/gemini-cli/settings.json`.
//! The real clients are the oracles: after the write claude lists the declared servers and not
//! a hand-added one, and refuses to add an undeclared one; codex lists the hand-added one
//! disabled by the requirements; gemini lists it Blocked. Every `/etc` file is written inside a private
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
    seed_file(&managed(w), text);
}

/// Write `text` to `path` (a file of the world's private `/etc`), making its directory.
fn seed_file(path: &std::path::Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// `mcp-deploy policy --prefix opt --name-suffix -test EXTRA...` in the private `/etc`.
fn policy(w: &World, extra: &[&str]) -> Run {
    w.sample_cmd("policy").args(extra).in_private_etc().run()
}

/// `mcp-deploy policy --client CLIENT EXTRA...` on the sample, in the private `/etc`.
fn policy_for(w: &World, client: &str, extra: &[&str]) -> Run {
    policy(w, &[&["--client", client], extra].concat())
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
    let before = w.claude_listed();
    assert!(before.contains(&"handadded".to_string()), "{before:?}");

    let r = policy(&w, &["--write"]);
    r.code(0).stdout_has(&format!("wrote {POLICY}"));

    let after = w.claude_listed();
    assert!(after.contains(&"codetools-test".to_string()), "{after:?}");
    assert!(after.contains(&"orchestrata-test".to_string()), "{after:?}");
    assert!(
        !after.contains(&"handadded".to_string()),
        "the user's own allowedMcpServers no longer admits it: {after:?}"
    );
    // mcp-deploy's own reading of claude's layers agrees: the policy admits them.
    w.sample_cmd("status").in_private_etc().run().code(0);
    let add = w.claude_in_private_etc(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "other",
        r#"{"command":"/bin/echo"}"#,
    ]);
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
    assert_eq!(change["changed"], true, "{}", r.shown);
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
    // What configuration management reports as `changed` (the Ansible role's policy task).
    assert_eq!(
        again.json()["clients"][0]["change"]["changed"],
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
    let json = policy(&w, &["--dry-run", "--json"]);
    assert_eq!(
        json.json()["clients"][0]["change"]["changed"],
        true,
        "{}",
        json.shown
    );
    assert_eq!(
        json.json()["clients"][0]["change"]["written"],
        false,
        "{}",
        json.shown
    );
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
    let c = w.claude_in_private_etc(&["mcp", "list"]);
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
    let after = w.claude_listed();
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

/// A second codetools release, `NEW`, beside the sample's; returns codetools' prefix.
fn second_codetools_release(w: &World) -> PathBuf {
    let ct = w.opt().join("codetools");
    let from = ct.join("releases").join(CT_SHA);
    let to = ct.join("releases").join(NEW);
    fs::create_dir_all(to.join("bin")).unwrap();
    fs::copy(from.join("bin/codetools"), to.join("bin/codetools")).unwrap();
    fs::write(to.join("VERSION"), format!("{NEW}\n")).unwrap();
    ct
}

/// `promote` codetools to `NEW` (in the private `/etc`), and check that `current` moved.
fn promote_codetools(w: &World, ct: &std::path::Path) {
    w.cmd()
        .args(["promote", "--prefix"])
        .arg(ct)
        .args(["--release", NEW, "--name-suffix", "-test"])
        .in_private_etc()
        .run()
        .code(0);
    assert_eq!(
        fs::read_link(ct.join("current")).unwrap(),
        PathBuf::from(format!("releases/{NEW}"))
    );
}

#[test]
fn a_promote_after_policy_write_keeps_the_server_admitted() {
    let w = World::with_real_claude();
    w.sample();
    let ct = second_codetools_release(&w);
    w.on_sample("install", &["--server", "codetools"]).code(0);
    policy(&w, &["--write", "--server", "codetools"]).code(0);

    promote_codetools(&w, &ct);
    let after = w.claude_listed();
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
        .args(["--client", "claude,cursor"])
        .run();
    r.code(2)
        .stderr_has("cursor")
        .stderr_has("help: policy supports --client claude,codex,gemini");
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

// codex: `/etc/codex/requirements.toml`, `[mcp_servers.NAME.identity]`.

const REQUIREMENTS: &str = "/etc/codex/requirements.toml";

fn requirements(w: &World) -> PathBuf {
    w.etc().join("codex/requirements.toml")
}

fn seed_requirements(w: &World, text: &str) {
    seed_file(&requirements(w), text);
}

/// The real codex in the private `/etc`.
fn codex(w: &World, args: &[&str]) -> Run {
    w.program(real_client("codex"))
        .args(args)
        .in_private_etc()
        .run()
}

/// What `codex mcp list --json` says of each server: its name, and whether it is enabled
/// (a server the requirements do not admit is listed with `enabled: false`).
fn codex_enabled(w: &World) -> Vec<(String, bool, String)> {
    let r = codex(w, &["mcp", "list", "--json"]);
    r.code(0);
    let list: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.shown));
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["enabled"].as_bool().unwrap(),
                s["disabled_reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

fn enabled(list: &[(String, bool, String)], name: &str) -> bool {
    list.iter()
        .find(|(n, _, _)| n == name)
        .unwrap_or_else(|| panic!("codex does not list {name}: {list:?}"))
        .1
}

/// The sample installed for codex (both servers, `-test`), and `handadded` added by hand
/// with `codex mcp add`.
fn installed_in_codex_with_a_hand_added_server() -> World {
    let w = World::with_every_client();
    w.sample();
    w.on_sample("install", &["--client", "codex"]).code(0);
    codex(&w, &["mcp", "add", "handadded", "--", "/bin/cat"]).code(0);
    w
}

fn policy_codex(w: &World, extra: &[&str]) -> Run {
    policy_for(w, "codex", extra)
}

#[test]
fn after_policy_write_codex_enables_the_declared_servers_and_disables_a_hand_added_one() {
    let w = installed_in_codex_with_a_hand_added_server();
    let before = codex_enabled(&w);
    assert!(enabled(&before, "handadded"), "{before:?}");

    let r = policy_codex(&w, &["--write"]);
    r.code(0)
        .stdout_has(&format!("wrote {REQUIREMENTS}"))
        .stdout_has("not the arguments");

    let after = codex_enabled(&w);
    assert!(enabled(&after, "codetools-test"), "{after:?}");
    assert!(enabled(&after, "orchestrata-test"), "{after:?}");
    let hand = after.iter().find(|(n, _, _)| n == "handadded").unwrap();
    assert!(!hand.1, "{after:?}");
    assert!(hand.2.contains("requirements"), "{after:?}");
    // mcp-deploy's own reading of codex's layers agrees: the policy admits ours.
    w.sample_cmd("status")
        .args(["--client", "codex"])
        .in_private_etc()
        .run()
        .code(0);
}

#[test]
fn codex_a_rerun_writes_nothing_and_comments_other_keys_and_entries_survive() {
    let w = World::new();
    w.sample();
    let theirs = "# the site's requirements\nallowed_approval_policies = [\"never\"] # theirs\n\n\
                  [mcp_servers.admins-own.identity]\ncommand = \"/usr/bin/admin-tool\"\n";
    seed_requirements(&w, theirs);
    let r = policy_codex(&w, &["--write", "--json"]);
    r.code(0);
    let out = r.json();
    let client = &out["clients"][0];
    assert_eq!(client["pins"], "command", "{}", r.shown);
    assert_eq!(client["change"]["written"], true, "{}", r.shown);
    assert_eq!(client["change"]["added"].as_array().unwrap().len(), 2);

    let text = fs::read_to_string(requirements(&w)).unwrap();
    assert!(text.starts_with(theirs), "{text}");
    let ct = w.opt().join("codetools/bin/codetools");
    assert!(
        text.contains(&format!(
            "[mcp_servers.codetools-test]\nidentity = {{ command = \"{}\" }}\nmanaged_by = \"mcp-deploy\"\n",
            ct.display()
        )),
        "{text}"
    );

    let meta = fs::metadata(requirements(&w)).unwrap();
    let again = policy_codex(&w, &["--write", "--json"]);
    again.code(0);
    assert_eq!(
        again.json()["clients"][0]["change"]["written"],
        false,
        "{}",
        again.shown
    );
    let now = fs::metadata(requirements(&w)).unwrap();
    assert_eq!(fs::read_to_string(requirements(&w)).unwrap(), text);
    assert_eq!(
        (now.ino(), now.mtime(), now.mtime_nsec()),
        (meta.ino(), meta.mtime(), meta.mtime_nsec()),
        "not even rewritten"
    );

    // orchestrata no longer selected: its table goes; the admin's stays, as do theirs.
    policy_codex(&w, &["--write", "--server", "codetools"])
        .code(0)
        .stdout_has("removed");
    let text = fs::read_to_string(requirements(&w)).unwrap();
    assert!(text.starts_with(theirs), "{text}");
    assert!(!text.contains("orchestrata-test"), "{text}");
    assert!(text.contains("codetools-test"), "{text}");
}

#[test]
fn codex_an_entry_someone_else_wrote_is_never_claimed_nor_removed() {
    let w = World::new();
    w.sample();
    let or = w.opt().join("orchestrata/bin/orchestrata-mcp");
    // The admin admits orchestrata themselves, with the very identity mcp-deploy derives.
    let theirs = format!(
        "[mcp_servers.orchestrata-test.identity]\ncommand = \"{}\"\n",
        or.display()
    );
    seed_requirements(&w, &theirs);
    policy_codex(&w, &["--write"]).code(0);
    policy_codex(&w, &["--write", "--server", "codetools"]).code(0);
    let text = fs::read_to_string(requirements(&w)).unwrap();
    assert!(text.starts_with(&theirs), "theirs stays, unmarked: {text}");
    assert_eq!(text.matches("managed_by").count(), 1, "{text}");

    // One naming our server with another command is refused: codex would disable it.
    let other = "[mcp_servers.codetools-test.identity]\ncommand = \"/usr/bin/other\"\n";
    seed_requirements(&w, other);
    policy_codex(&w, &["--write"])
        .code(2)
        .stderr_has("mcp-deploy did not write it")
        .stderr_has("help: remove that table");
    assert_eq!(fs::read_to_string(requirements(&w)).unwrap(), other);
}

#[test]
fn codex_dry_run_shows_the_change_and_writes_nothing() {
    let w = World::new();
    w.sample();
    policy_codex(&w, &["--write", "--dry-run"])
        .code(0)
        .stdout_has("dry run: nothing is written")
        .stdout_has("would add {\"name\":\"codetools-test\",\"identity\":{\"command\":")
        .stdout_has(&format!("would write {REQUIREMENTS}"));
    assert!(
        !w.etc().join("codex").exists(),
        "no file, no lock, no journal"
    );
}

#[test]
fn a_requirements_file_codex_refuses_is_refused_unchanged() {
    let w = installed_in_codex_with_a_hand_added_server();
    let text = "# an entry without its identity\n[mcp_servers.x]\nenabled = true\n";
    seed_requirements(&w, text);
    // The oracle: codex refuses to load at all.
    let c = codex(&w, &["mcp", "list", "--json"]);
    assert_ne!(c.code, 0, "{}", c.shown);
    assert!(
        c.stderr.contains("failed to load bootstrap configuration"),
        "{}",
        c.shown
    );
    policy_codex(&w, &["--write"])
        .code(2)
        .stderr_has(REQUIREMENTS)
        .stderr_has("help: fix the file by hand");
    assert_eq!(fs::read_to_string(requirements(&w)).unwrap(), text);
}

#[test]
fn the_codex_fragment_is_what_write_writes_and_codex_enforces_it() {
    let w = installed_in_codex_with_a_hand_added_server();
    let r = policy_codex(&w, &["--format", "file"]);
    r.code(0);
    seed_requirements(&w, &r.stdout);
    let after = codex_enabled(&w);
    assert!(enabled(&after, "codetools-test"), "{after:?}");
    assert!(!enabled(&after, "handadded"), "{after:?}");
    let again = policy_codex(&w, &["--write", "--json"]);
    again.code(0);
    assert_eq!(
        again.json()["clients"][0]["change"]["written"],
        false,
        "{}",
        again.shown
    );
}

#[test]
fn a_promote_after_codex_policy_write_keeps_the_server_enabled() {
    let w = World::with_every_client();
    w.sample();
    let ct = second_codetools_release(&w);
    w.on_sample("install", &["--server", "codetools", "--client", "codex"])
        .code(0);
    policy_codex(&w, &["--write", "--server", "codetools"]).code(0);

    promote_codetools(&w, &ct);
    let after = codex_enabled(&w);
    assert!(enabled(&after, "codetools-test"), "{after:?}");
    policy_codex(&w, &["--write", "--server", "codetools"])
        .code(0)
        .stdout_has("unchanged:");
}

// gemini: the system settings' `mcp.allowed`.

const GEMINI_SYSTEM: &str = "/etc/gemini-cli/settings.json";

fn gemini_system(w: &World) -> PathBuf {
    w.etc().join("gemini-cli/settings.json")
}

fn policy_gemini(w: &World, extra: &[&str]) -> Run {
    policy_for(w, "gemini", extra)
}

/// The real gemini's `mcp list` in the private `/etc`, with `env` set: its line for each
/// server.
fn gemini_list(w: &World, env: &[(&str, &str)]) -> String {
    let r = w
        .program(real_client("gemini"))
        .args(["mcp", "list"])
        .current_dir(w.root().join("home"))
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .envs(env)
        .in_private_etc()
        .run();
    format!("{}{}", r.stdout, r.stderr)
}

/// The sample installed for gemini (both servers, `-test`), and `handadded` added by hand
/// with `gemini mcp add`, which gemini runs.
fn installed_in_gemini_with_a_hand_added_server() -> World {
    let w = World::with_every_client();
    w.sample();
    w.on_sample("install", &["--client", "gemini"]).code(0);
    w.program(real_client("gemini"))
        .args(["mcp", "add", "-s", "user", "handadded", "/bin/cat"])
        .current_dir(w.root().join("home"))
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .run()
        .code(0);
    let before = gemini_list(&w, &[]);
    let hand = gemini_line(&before, "handadded").unwrap_or_else(|| panic!("{before}"));
    assert!(!hand.contains("Blocked"), "{before}");
    w
}

fn gemini_line(out: &str, name: &str) -> Option<String> {
    out.lines()
        .find(|l| l.contains(&format!("{name}:")))
        .map(str::to_string)
}

#[test]
fn after_policy_write_gemini_blocks_a_hand_added_server_and_keeps_comments() {
    let w = installed_in_gemini_with_a_hand_added_server();

    let theirs = "{\n  // the site's own settings\n  \"ui\": {\"theme\": \"Default\"}\n}\n";
    seed_file(&gemini_system(&w), theirs);
    let r = policy_gemini(&w, &["--write"]);
    r.code(0)
        .stdout_has(&format!("wrote {GEMINI_SYSTEM}"))
        .stdout_has("names only: any command registered under an allowed name runs");
    let text = fs::read_to_string(gemini_system(&w)).unwrap();
    assert!(text.contains("// the site's own settings"), "{text}");

    let after = gemini_list(&w, &[]);
    for name in ["codetools-test", "orchestrata-test"] {
        let ours = gemini_line(&after, name).unwrap_or_else(|| panic!("{after}"));
        assert!(!ours.contains("Blocked"), "{after}");
    }
    // gemini 0.61.0 shows it `⛔ handadded: /bin/cat (stdio) - Blocked`.
    let hand = gemini_line(&after, "handadded").unwrap_or_else(|| panic!("{after}"));
    assert!(hand.ends_with("- Blocked"), "{after}");
    // A rerun writes nothing.
    let meta = fs::metadata(gemini_system(&w)).unwrap();
    policy_gemini(&w, &["--write"])
        .code(0)
        .stdout_has("unchanged:");
    let now = fs::metadata(gemini_system(&w)).unwrap();
    assert_eq!(
        (now.ino(), now.mtime_nsec()),
        (meta.ino(), meta.mtime_nsec())
    );
    assert_eq!(fs::read_to_string(gemini_system(&w)).unwrap(), text);
}

#[test]
fn gemini_policy_lists_names_only_and_drops_only_its_own() {
    let w = World::new();
    w.sample();
    seed_file(
        &gemini_system(&w),
        r#"{"mcp": {"allowed": ["admins-own", "orchestrata-test"]}}"#,
    );
    let r = policy_gemini(&w, &["--write", "--json"]);
    r.code(0);
    assert_eq!(r.json()["clients"][0]["pins"], "name", "{}", r.shown);
    policy_gemini(&w, &["--write", "--server", "codetools"]).code(0);
    let doc: Value = serde_json::from_str(&fs::read_to_string(gemini_system(&w)).unwrap()).unwrap();
    assert_eq!(
        doc["mcp"]["allowed"],
        json!(["admins-own", "orchestrata-test", "codetools-test"])
    );
    assert_eq!(doc["mcpDeployAllowed"], json!(["codetools-test"]));
    // A file gemini would not parse is refused unchanged.
    fs::write(gemini_system(&w), "{\"a\": 1,}").unwrap();
    policy_gemini(&w, &["--write"])
        .code(2)
        .stderr_has("help: fix the file by hand");
    assert_eq!(
        fs::read_to_string(gemini_system(&w)).unwrap(),
        "{\"a\": 1,}"
    );
}

#[test]
fn codex_pins_the_command_path_not_its_arguments() {
    let w = World::with_every_client();
    w.sample();
    w.on_sample("install", &["--server", "codetools", "--client", "codex"])
        .code(0);
    policy_codex(&w, &["--write", "--server", "codetools"]).code(0);
    let ct = w.opt().join("codetools/bin/codetools");
    // The deployed program under the declared name, with other arguments: codex runs it.
    codex(&w, &["mcp", "remove", "codetools-test"]).code(0);
    codex(
        &w,
        &[
            "mcp",
            "add",
            "codetools-test",
            "--",
            ct.to_str().unwrap(),
            "--other",
        ],
    )
    .code(0);
    assert!(enabled(&codex_enabled(&w), "codetools-test"));
    // Another program under the declared name: disabled.
    codex(&w, &["mcp", "remove", "codetools-test"]).code(0);
    codex(&w, &["mcp", "add", "codetools-test", "--", "/bin/cat"]).code(0);
    assert!(!enabled(&codex_enabled(&w), "codetools-test"));
}

#[test]
fn gemini_policy_goes_where_gemini_cli_system_settings_path_points_and_gemini_enforces_it() {
    let w = installed_in_gemini_with_a_hand_added_server();
    let alt = "/etc/gemini-alt/settings.json";
    w.sample_cmd("policy")
        .args(["--client", "gemini", "--write"])
        .env("GEMINI_CLI_SYSTEM_SETTINGS_PATH", alt)
        .in_private_etc()
        .run()
        .code(0)
        .stdout_has(&format!("wrote {alt}"));
    assert!(w.etc().join("gemini-alt/settings.json").exists());
    let out = gemini_list(&w, &[("GEMINI_CLI_SYSTEM_SETTINGS_PATH", alt)]);
    let hand = gemini_line(&out, "handadded").unwrap_or_else(|| panic!("{out}"));
    assert!(hand.ends_with("- Blocked"), "{out}");
}

#[test]
fn a_gemini_system_file_others_could_replace_is_refused_as_gemini_would_skip_it() {
    let w = World::new();
    w.sample();
    // The scratch root's own directory chain runs through /tmp, which everyone can write.
    let file = w.root().join("gemini-system/settings.json");
    w.sample_cmd("policy")
        .args(["--client", "gemini", "--write"])
        .env("GEMINI_CLI_SYSTEM_SETTINGS_PATH", &file)
        .run()
        .code(2)
        .stderr_has("gemini skips a system settings file")
        .stderr_has("help: point GEMINI_CLI_SYSTEM_SETTINGS_PATH");
    assert!(!file.exists());
    assert!(
        !w.root().join("gemini-system").exists(),
        "no lock, no journal"
    );
}

#[test]
fn the_fragments_of_several_clients_are_one_json_object_codex_s_toml_a_string() {
    let w = World::new();
    w.sample();
    let r = policy(&w, &["--client", "claude,codex,gemini", "--format", "file"]);
    r.code(0);
    let doc = r.json();
    assert!(doc["claude"]["allowedMcpServers"].is_array(), "{}", r.shown);
    assert_eq!(
        doc["gemini"]["mcp"]["allowed"],
        json!(["codetools-test", "orchestrata-test"])
    );
    let toml = doc["codex"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", r.shown));
    assert!(toml.contains("[mcp_servers.codetools-test]"), "{toml}");
}

// Issue 35 item 4: a journalled write recovers by compare-and-swap. The next run puts the old
// text back only while the file is what the killed run wrote; any other text (an
// administrator's edit), a removed file, a symlink or a FIFO is kept, with the journal, and
// the run stops (exit 2) naming the file.

const JOURNAL: &str = "claude-code/.mcp-deploy/policy.journal.json";

/// `policy --write` of the sample killed after it replaced `managed-settings.json`, which
/// held `{"model":"opus"}`; returns that old text and what the killed run wrote.
fn killed_after_the_write(w: &World) -> (String, String) {
    w.sample();
    let old = json!({"model": "opus"}).to_string();
    seed(w, &old);
    let r = w
        .sample_cmd("policy")
        .args(["--write"])
        .env("MCP_DEPLOY_CRASH_AT", "policy-written")
        .in_private_etc()
        .run();
    assert!(r.stderr.contains("crashing at checkpoint"), "{}", r.shown);
    assert!(w.etc().join(JOURNAL).exists(), "{}", r.shown);
    let written = fs::read_to_string(managed(w)).unwrap();
    assert_ne!(written, old);
    (old, written)
}

/// The next run finds the file changed since the killed run: it keeps it and the journal,
/// names the file and exits 2.
fn recovery_keeps(w: &World) -> Run {
    recovery_keeps_saying(
        w,
        &format!("{POLICY} changed since the interrupted policy --write"),
    )
}

fn recovery_keeps_saying(w: &World, says: &str) -> Run {
    let r = policy(w, &["--write"]);
    r.code(2)
        .stderr_has(says)
        .stderr_has("not rolled back")
        .stderr_has("help: keep the file as it is");
    assert!(w.etc().join(JOURNAL).exists(), "{}", r.shown);
    r
}

#[test]
fn attack_an_admin_edit_after_a_killed_write_is_not_rolled_back_over() {
    let w = World::new();
    let (_, written) = killed_after_the_write(&w);
    let theirs = written.replace("\"opus\"", "\"sonnet\"");
    assert_ne!(theirs, written);
    fs::write(managed(&w), &theirs).unwrap();
    recovery_keeps(&w);
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), theirs);
    // The person decides: once the journal is deleted, runs proceed from the file as it is.
    fs::remove_file(w.etc().join(JOURNAL)).unwrap();
    policy(&w, &["--write"]).code(0);
    let doc: Value = serde_json::from_str(&fs::read_to_string(managed(&w)).unwrap()).unwrap();
    assert_eq!(doc["model"], "sonnet");
}

#[test]
fn attack_an_admin_edit_back_to_the_old_text_leaves_nothing_to_undo() {
    let w = World::new();
    let (old, _) = killed_after_the_write(&w);
    fs::write(managed(&w), &old).unwrap();
    policy(&w, &["--write"])
        .code(0)
        .stderr_has("nothing to roll back");
    assert!(!w.etc().join(JOURNAL).exists());
}

#[test]
fn attack_a_policy_file_removed_after_a_killed_write_is_not_recreated() {
    let w = World::new();
    killed_after_the_write(&w);
    fs::remove_file(managed(&w)).unwrap();
    recovery_keeps(&w);
    assert!(fs::symlink_metadata(managed(&w)).is_err());
}

#[test]
fn attack_a_policy_file_replaced_by_a_symlink_or_a_fifo_is_left_alone() {
    let w = World::new();
    killed_after_the_write(&w);
    let theirs = w.etc().join("claude-code/company.json");
    fs::write(&theirs, r#"{"model":"haiku"}"#).unwrap();
    fs::remove_file(managed(&w)).unwrap();
    std::os::unix::fs::symlink("company.json", managed(&w)).unwrap();
    recovery_keeps(&w);
    assert_eq!(fs::read_to_string(&theirs).unwrap(), r#"{"model":"haiku"}"#);
    assert!(fs::symlink_metadata(managed(&w))
        .unwrap()
        .file_type()
        .is_symlink());

    fs::remove_file(managed(&w)).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(managed(&w))
        .status()
        .unwrap();
    assert!(fifo.success());
    let r = policy(&w, &["--write"]);
    r.code(2).stderr_has(POLICY);
    assert!(w.etc().join(JOURNAL).exists(), "{}", r.shown);
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(managed(&w))
        .unwrap()
        .file_type()
        .is_fifo());
}

/// A journal written before it recorded what the run wrote (only `file` and `old`): the
/// file cannot be told to be the killed run's, so it is kept (exit 2) unless it is still
/// the old text.
#[test]
fn attack_a_journal_without_the_written_digest_never_restores_over_the_file() {
    let w = World::new();
    let (old, written) = killed_after_the_write(&w);
    let j = w.etc().join(JOURNAL);
    let legacy = json!({"file": POLICY, "old": old}).to_string();
    fs::write(&j, &legacy).unwrap();
    recovery_keeps_saying(&w, "cannot be told to be the text it wrote");
    assert_eq!(fs::read_to_string(managed(&w)).unwrap(), written);

    fs::write(managed(&w), &old).unwrap();
    policy(&w, &["--write"])
        .code(0)
        .stderr_has("nothing to roll back");
    assert!(!j.exists());
}

/// The journal edited to name the administrator's text as the one written is obeyed only
/// as far as it can be checked: its digest must be of the file as it is.
#[test]
fn attack_a_journal_whose_digest_is_edited_does_not_match_the_file() {
    let w = World::new();
    killed_after_the_write(&w);
    let j = w.etc().join(JOURNAL);
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(&j).unwrap()).unwrap();
    assert!(doc["new_sha256"].is_string(), "{doc}");
    doc["new_sha256"] = json!("0".repeat(64));
    fs::write(&j, doc.to_string()).unwrap();
    recovery_keeps(&w);
}
