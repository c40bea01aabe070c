//! install and uninstall with the real Claude Code CLI in a scratch config.

use std::fs;

use crate::harness::*;

fn install(w: &World, extra: &[&str]) -> Run {
    w.on_sample("install", extra)
}

fn uninstall(w: &World) -> Run {
    w.on_sample("uninstall", &[])
}

#[test]
fn install_registers_records_verifies_and_uninstall_removes() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let r = install(&w, &["--json"]);
    r.code(0);
    let report = r.json();
    assert_eq!(report["ok"], true);
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2);
    for s in servers {
        assert_eq!(s["registration"], "added", "{}", r.shown);
        assert!(s["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true));
    }

    // The client itself reports both at user scope.
    let ct = opt.join("codetools/bin/codetools");
    w.claude(&["mcp", "get", "codetools-test"])
        .code(0)
        .stdout_has("Scope: User config")
        .stdout_has(&format!("Command: {}", ct.display()))
        .stdout_has("Args: mcp serve");
    w.claude(&["mcp", "get", "orchestrata-test"])
        .code(0)
        .stdout_has("Scope: User config");

    // The rendered files and the flat document.
    assert!(opt.join("codetools/mcp/codetools.mcp.json").is_file());
    assert!(opt.join("orchestrata/mcp/orchestrata.mcp.json").is_file());
    let flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(
        flat,
        serde_json::json!({"mcpServers": {
            "codetools-test": {"command": ct.to_str().unwrap(), "args": ["mcp", "serve"]},
            "orchestrata-test": {
                "command": opt.join("orchestrata/bin/orchestrata-mcp").to_str().unwrap(),
                "args": []
            }
        }})
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(w.registered()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // The flat document verifies on its own, as CI would check it.
    w.verify_identity(
        &opt.join("codetools"),
        CT_SHA,
        &w.registered(),
        &["--name", "codetools-test"],
    )
    .code(0);

    let r = uninstall(&w);
    r.code(0).stdout_has("codetools-test): removed");
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    w.claude(&["mcp", "get", "codetools-test"]).code(1);
    let flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(flat, serde_json::json!({"mcpServers": {}}));
    // Uninstalling again: the names are absent, which is not an error.
    uninstall(&w).code(0).stdout_has("absent");
}

#[test]
fn second_install_with_nothing_changed_makes_no_mutating_call() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    install(&w, &[]).code(0);
    let first = w.calls();
    assert_eq!(
        first
            .iter()
            .filter(|c| c.starts_with("mcp add-json"))
            .count(),
        2,
        "{first:?}"
    );
    w.clear_calls();

    let r = install(&w, &["--json"]);
    r.code(0);
    let calls = w.calls();
    assert!(
        calls
            .iter()
            .all(|c| !c.starts_with("mcp add-json") && !c.starts_with("mcp remove")),
        "a no-op install mutated: {calls:?}"
    );
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged");
    }
}

#[test]
fn a_promoted_release_is_reverified_against_the_new_commit() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let ct = opt.join("codetools");
    install(&w, &["--expect-commit", &format!("codetools={CT_SHA}")]).code(0);

    let new = "feed".repeat(10);
    add_release(&ct, &new);
    promote(&ct, &new);
    // The prefix-level VERSION follows current (it is a symlink to current/VERSION). The new
    // release's server is a stub that exits: no MCP server for the handshake gate.
    let r = install(
        &w,
        &[
            "--expect-commit",
            &format!("codetools={new}"),
            "--json",
            "--no-handshake",
        ],
    );
    r.code(0);
    let s = &r.json()["servers"][0];
    // The stable path did not change, so the registration did not either.
    assert_eq!(s["registration"], "unchanged");
    let commit = s["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "commit")
        .unwrap();
    assert!(
        commit["detail"].as_str().unwrap().contains(&new),
        "{}",
        r.shown
    );

    // Expecting the old commit now fails exactly the commit check.
    let r = install(
        &w,
        &["--expect-commit", &format!("codetools={CT_SHA}"), "--json"],
    );
    r.code(1);
    let failed: Vec<_> = r.json()["servers"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| c["check"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(failed, vec!["commit"]);
}

#[test]
fn a_changed_template_updates_the_registration() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let declare = |args: serde_json::Value| w.declare_codetools(serde_json::json!({"args": args}));
    let cfg = declare(serde_json::json!(["mcp", "serve"]));
    let cfg_arg = cfg.to_str().unwrap();
    install(&w, &["--config", cfg_arg])
        .code(0)
        .stdout_has("added");
    declare(serde_json::json!(["mcp", "serve", "--read-only"]));
    install(&w, &["--config", cfg_arg])
        .code(0)
        .stdout_has("codetools-test): updated");
    assert_eq!(
        w.user_servers()["codetools-test"]["args"],
        serde_json::json!(["mcp", "serve", "--read-only"])
    );
    w.claude(&["mcp", "get", "codetools-test"])
        .code(0)
        .stdout_has("Args: mcp serve --read-only");
    let rendered = fs::read_to_string(opt.join("codetools/mcp/codetools.mcp.json")).unwrap();
    assert!(rendered.contains("--read-only"));
}

#[test]
fn unrelated_servers_survive_install_and_uninstall() {
    let w = World::with_real_claude();
    w.sample();
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "someone-elses",
        r#"{"command":"/usr/bin/env","args":["x"]}"#,
    ])
    .code(0);
    let before = w.user_servers()["someone-elses"].clone();
    // An unrelated entry already in the flat document is kept too.
    fs::write(
        w.registered(),
        r#"{"mcpServers":{"keep-me":{"command":"/k","args":[]}}}"#,
    )
    .unwrap();
    install(&w, &[]).code(0);
    uninstall(&w).code(0);
    assert_eq!(w.user_servers()["someone-elses"], before);
    assert_eq!(w.user_servers().len(), 1);
    let flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(
        flat,
        serde_json::json!({"mcpServers":{"keep-me":{"command":"/k","args":[]}}})
    );
}

#[test]
fn an_entry_edited_by_hand_is_put_back() {
    let w = World::with_real_claude();
    w.sample();
    install(&w, &[]).code(0);
    w.claude(&["mcp", "remove", "orchestrata-test", "-s", "user"])
        .code(0);
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "orchestrata-test",
        r#"{"command":"/usr/bin/env","args":["evil"]}"#,
    ])
    .code(0);
    install(&w, &[])
        .code(0)
        .stdout_has("orchestrata (registered as orchestrata-test): updated")
        .stdout_has("codetools (registered as codetools-test): unchanged");
    assert_eq!(
        w.user_servers()["orchestrata-test"]["args"],
        serde_json::json!([])
    );
}

#[test]
fn dry_run_changes_nothing() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    let r = install(&w, &["--dry-run"]);
    r.code(0)
        .stdout_has("dry run")
        .stdout_has("codetools-test: would be added")
        .stdout_has("claude mcp add-json -s user codetools-test");
    assert!(w.calls().is_empty(), "{:?}", w.calls());
    assert!(!w.registered().exists());
    assert!(!w.opt().join("codetools/mcp").exists());
}

#[test]
fn a_malformed_flat_document_is_refused_before_any_client_call() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    fs::write(w.registered(), "{ half written").unwrap();
    install(&w, &[])
        .code(2)
        .stderr_has("mcp-registered.json is malformed")
        .stderr_has("help:");
    assert!(w.calls().is_empty(), "{:?}", w.calls());
    assert_eq!(
        fs::read_to_string(w.registered()).unwrap(),
        "{ half written"
    );
}

#[test]
fn expect_commit_pairs_are_validated() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    install(&w, &["--expect-commit", "codetools"])
        .code(2)
        .stderr_has("is not a full commit sha");
    install(&w, &["--expect-commit", &format!("nope={CT_SHA}")])
        .code(2)
        .stderr_has("which is not a declared server");
    install(&w, &["--expect-commit", "codetools=abc1234"])
        .code(2)
        .stderr_has("abbreviated");
    assert!(w.calls().is_empty());
}

#[test]
fn the_audit_ledger_records_every_change_and_no_secret() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let declare = |args: serde_json::Value| {
        w.declare_codetools(serde_json::json!({"args": args,
            "env": {"CODETOOLS_LOG": "s3cr3t-looking-value"}}))
    };
    let cfg = declare(serde_json::json!(["mcp", "serve"]));
    let c = cfg.to_str().unwrap();
    let ledger = w.root().join("home/.local/state/mcp-deploy/ledger.ndjson");
    install(&w, &["--config", c]).code(0);
    install(&w, &["--config", c]).code(0); // a no-op adds no line
    declare(serde_json::json!(["mcp", "serve", "--v2"]));
    install(&w, &["--config", c]).code(0);
    w.run(&[
        "uninstall",
        "--config",
        c,
        "--prefix",
        opt.to_str().unwrap(),
        "--name-suffix",
        "-test",
    ])
    .code(0);

    let text = fs::read_to_string(&ledger).unwrap();
    assert!(
        !text.contains("s3cr3t"),
        "a secret reached the ledger:\n{text}"
    );
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let actions: Vec<&str> = lines
        .iter()
        .map(|l| l["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["added", "updated", "removed"]);
    let updated = &lines[1];
    assert_eq!(updated["client"], "claude");
    assert_eq!(updated["server"], "codetools");
    assert_eq!(updated["name"], "codetools-test");
    assert_eq!(updated["old"]["args"], serde_json::json!(["mcp", "serve"]));
    assert_eq!(
        updated["new"]["args"],
        serde_json::json!(["mcp", "serve", "--v2"])
    );
    assert_eq!(updated["commit"], CT_SHA);
    assert!(updated["release"].as_str().unwrap().ends_with(CT_SHA));
    assert!(updated["time"].as_str().unwrap().ends_with('Z'));
    assert!(!updated["host"].as_str().unwrap().is_empty());
    assert!(lines[2]["new"].is_null());

    // --ledger puts it elsewhere.
    let other = w.root().join("audit.ndjson");
    declare(serde_json::json!(["mcp", "serve"]));
    install(&w, &["--config", c, "--ledger", other.to_str().unwrap()]).code(0);
    assert_eq!(fs::read_to_string(&other).unwrap().lines().count(), 1);
}

/// Issue 36.7: the audit trail believed `$USER`. Run with `USER=alice` it recorded
/// `"user":"alice"` whoever ran it, and with `USER` unset `uid 0` although the user database
/// names uid 0. Now the actor is the kernel's real uid, named as `id -un` names it, and a
/// claimed name is kept beside it, as claimed.
#[test]
fn the_ledger_records_the_kernels_user_and_a_claimed_name_only_as_claimed() {
    let w = World::with_real_claude();
    w.sample();
    let id = |flag: &str| {
        let out = std::process::Command::new("id").arg(flag).output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let (name, uid) = (id("-un"), id("-u"));
    let claimed = if name == "alice" { "mallory" } else { "alice" };
    w.sample_cmd("install")
        .env("USER", claimed)
        .env("LOGNAME", &name)
        .env("SUDO_USER", "bob")
        .run()
        .code(0);
    let ledger = w.root().join("home/.local/state/mcp-deploy/ledger.ndjson");
    let text = fs::read_to_string(&ledger).unwrap();
    let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(line["user"], name.as_str(), "{line}");
    assert_eq!(line["uid"].to_string(), uid, "{line}");
    // USER claimed another name and SUDO_USER who ran sudo: both beside the actor; LOGNAME
    // agreed with the database and says nothing more.
    assert_eq!(
        line["claimed"],
        serde_json::json!({"USER": claimed, "SUDO_USER": "bob"}),
        "{line}"
    );
}

/// Issue 36.8: `uninstall` over a flat document that records claude and codex entries removed
/// claude's (the default --client) and said nothing of codex's. Now it says which clients still
/// have the name, and how to remove it there; codex's entry is left as it is.
#[test]
fn uninstall_says_which_other_clients_still_have_the_server() {
    let w = World::with_real_claude();
    std::os::unix::fs::symlink(real_client("codex"), w.bin().join("codex")).unwrap();
    w.sample();
    install(&w, &["--client", "claude,codex"]).code(0);
    let r = w.on_sample("uninstall", &[]);
    r.code(0)
        .stderr_has("note: codetools-test is still registered with codex")
        .stderr_has("note: orchestrata-test is still registered with codex")
        .stderr_has("--client codex");
    assert!(!w.user_servers().contains_key("codetools-test"));
    let flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert!(
        flat["clients"]["codex"]["mcpServers"]["codetools-test"].is_object(),
        "{flat}"
    );
    // Removed from every client: nothing more to say.
    let r = w.on_sample("uninstall", &["--client", "codex"]);
    r.code(0);
    assert!(!r.stderr.contains("still registered"), "{}", r.stderr);
}

#[test]
fn an_http_server_is_registered_and_its_endpoint_verified() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let cfg = w.root().join("servers.json");
    fs::write(
        &cfg,
        r#"{"servers":[{"name":"gateway","prefix":"/opt/gateway","layout":"prefix",
            "entry":{"type":"http","url":"http://127.0.0.1:9/mcp",
                     "headers":{"Authorization":"Bearer ${GATEWAY_TOKEN}"}}}]}"#,
    )
    .unwrap();
    let gw = opt.join("gateway");
    fs::create_dir_all(&gw).unwrap();
    fs::write(gw.join("VERSION"), format!("{OR_SHA}\n")).unwrap();
    let c = cfg.to_str().unwrap();
    // Nothing answers at port 9: the registration is this test's subject, not the handshake
    // gate (remote_handshake:: runs a real one).
    install(&w, &["--config", c, "--no-handshake"])
        .code(0)
        .stdout_has("gateway-test): added");
    assert_eq!(
        w.user_servers()["gateway-test"]["url"],
        "http://127.0.0.1:9/mcp"
    );
    let flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    // The header reference is recorded too (issue 10: it used to be left out).
    assert_eq!(
        flat["mcpServers"]["gateway-test"],
        serde_json::json!({"type": "http", "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${GATEWAY_TOKEN}"}})
    );
    install(&w, &["--config", c, "--no-handshake"])
        .code(0)
        .stdout_has("unchanged");

    let verify = |doc: &std::path::Path| {
        w.run(&[
            "verify-identity",
            "--config",
            c,
            "--prefix",
            gw.to_str().unwrap(),
            "--expect-commit",
            OR_SHA,
            "--mcp-json",
            doc.to_str().unwrap(),
            "--name",
            "gateway-test",
            "--json",
        ])
    };
    verify(&w.registered()).code(0);
    // Another port is another endpoint; a stdio entry never passes for an http server.
    let doc = w.root().join("other.json");
    for entry in [
        serde_json::json!({"type": "http", "url": "http://127.0.0.1:10/mcp"}),
        serde_json::json!({"command": "/bin/true", "args": []}),
    ] {
        fs::write(
            &doc,
            serde_json::json!({"mcpServers": {"gateway-test": entry}}).to_string(),
        )
        .unwrap();
        let r = verify(&doc);
        r.code(1);
        assert!(
            r.checks()
                .contains(&("mcp-registration".to_string(), false)),
            "{}",
            r.shown
        );
    }
}

#[test]
fn a_stdio_server_never_passes_with_an_http_registration() {
    let w = World::new();
    let opt = w.sample();
    let doc = w.root().join("doc.json");
    fs::write(
        &doc,
        r#"{"mcpServers":{"codetools":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}"#,
    )
    .unwrap();
    let r = w.verify_identity(&opt.join("codetools"), CT_SHA, &doc, &["--json"]);
    r.code(1);
    assert!(
        r.detail("mcp-registration")
            .contains("declared as a stdio server"),
        "{}",
        r.shown
    );
}

/// Issue 23, item 9: when one server fails the gate, each server's verdict is its own. The
/// healthy one was reported "not changed (the deployment failed its checks)", as if its own
/// deployment had failed; it now names the one that failed and why it is not changed.
#[test]
fn a_healthy_server_is_not_blamed_for_another_servers_failed_checks() {
    let w = World::new();
    w.sample();
    let wrong = "0".repeat(40);
    let r = install(
        &w,
        &["--expect-commit", &format!("orchestrata={wrong}"), "--json"],
    );
    r.code(1);
    let servers = r.json()["servers"].as_array().unwrap().clone();
    let verdict = |name: &str| {
        servers
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {servers:?}"))["registration"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        verdict("codetools"),
        "not changed: orchestrata failed its checks, and install registers all or nothing"
    );
    assert_eq!(
        verdict("orchestrata"),
        "not changed: its deployment failed the checks below"
    );
    install(&w, &["--expect-commit", &format!("orchestrata={wrong}")])
        .code(1)
        .stdout_has(
            "codetools (registered as codetools-test): not changed: orchestrata failed its \
             checks, and install registers all or nothing",
        )
        .stdout_has(
            "orchestrata (registered as orchestrata-test): not changed: its deployment failed \
             the checks below",
        );
    assert!(!w.registered().exists());
}
