//! Secret hygiene: literal secrets are refused; references pass; values never appear in any
//! output, the flat document, the journal or the ledger.

use std::fs;

use serde_json::json;

use crate::harness::*;

const SECRET: &str = "hunter2-do-not-print";

fn declare(w: &World, env_value: &str) -> std::path::PathBuf {
    w.declare_codetools(
        json!({"args": ["mcp", "serve"], "env": {"CODETOOLS_API_TOKEN": env_value}}),
    )
}

fn install(w: &World, cfg: &std::path::Path) -> Run {
    w.on_sample("install", &["--config", cfg.to_str().unwrap()])
}

fn assert_nowhere(w: &World, r: &Run) {
    assert!(
        !r.said().contains(SECRET) && !r.stderr.contains(SECRET),
        "{}",
        r.shown
    );
    for p in [
        w.registered(),
        w.root().join("home/.local/state/mcp-deploy/ledger.ndjson"),
    ] {
        if let Ok(text) = fs::read_to_string(&p) {
            assert!(!text.contains(SECRET), "secret in {}", p.display());
        }
    }
}

#[test]
fn a_declared_literal_secret_is_refused_before_any_client_call() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    let cfg = declare(&w, SECRET);
    let r = install(&w, &cfg);
    r.code(2)
        .stderr_has("literal secret in env CODETOOLS_API_TOKEN")
        .stderr_has("help: reference it instead");
    assert_nowhere(&w, &r);
    assert!(w.calls().is_empty(), "{:?}", w.calls());
}

#[test]
fn a_reference_is_registered_and_recorded_as_is() {
    let w = World::with_real_claude();
    w.sample();
    let cfg = declare(&w, "${CODETOOLS_API_TOKEN}");
    let r = install(&w, &cfg);
    r.code(0);
    assert_eq!(
        w.user_servers()["codetools-test"]["env"],
        json!({"CODETOOLS_API_TOKEN": "${CODETOOLS_API_TOKEN}"})
    );
    // The document records the reference (never a value), so that a check of the document
    // alone sees the env too (issue 10: it used to leave env out entirely).
    let flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(
        flat["mcpServers"]["codetools-test"]["env"],
        json!({"CODETOOLS_API_TOKEN": "${CODETOOLS_API_TOKEN}"})
    );
    // A second run is a no-op: the reference compares equal.
    install(&w, &cfg).code(0).stdout_has("unchanged");
}

#[test]
fn an_existing_registration_with_a_literal_secret_is_refused_and_left_alone() {
    let w = World::with_real_claude();
    w.sample();
    let existing = json!({"command": w.opt().join("codetools/bin/codetools"), "args": ["mcp", "serve"],
                          "env": {"CODETOOLS_API_TOKEN": SECRET}});
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "codetools-test",
        &existing.to_string(),
    ])
    .code(0);
    let before = w.user_servers();
    let cfg = declare(&w, "${CODETOOLS_API_TOKEN}");
    let r = install(&w, &cfg);
    r.code(2)
        .stderr_has("codetools-test is registered with claude holding a literal secret in env CODETOOLS_API_TOKEN")
        .stderr_has("help: move the secret into the environment")
        .stderr_has("(`claude mcp remove codetools-test -s user`)");
    assert_nowhere(&w, &r);
    assert_eq!(w.user_servers(), before);
    assert!(!w.journal().exists());
    let opt = w.opt();
    let r = w.run(&[
        "uninstall",
        "--config",
        cfg.to_str().unwrap(),
        "--prefix",
        opt.to_str().unwrap(),
        "--name-suffix",
        "-test",
    ]);
    r.code(2);
    assert_nowhere(&w, &r);
    assert_eq!(w.user_servers(), before);
}

#[test]
fn verify_identity_fails_a_registration_holding_a_literal_secret() {
    let w = World::new();
    let opt = w.sample();
    let doc = w.root().join("doc.json");
    let cmd = opt.join("codetools/bin/codetools");
    fs::write(
        &doc,
        json!({"mcpServers": {"codetools": {"command": cmd, "args": ["mcp", "serve"],
               "env": {"GITHUB_TOKEN": SECRET}}}})
        .to_string(),
    )
    .unwrap();
    let r = w.verify_identity(&opt.join("codetools"), CT_SHA, &doc, &["--json"]);
    r.code(1);
    assert!(
        r.checks().contains(&("secrets".to_string(), false)),
        "{}",
        r.shown
    );
    assert!(r.detail("secrets").contains("env GITHUB_TOKEN"));
    assert!(!r.said().contains(SECRET));
}

/// Issue 12.8: the remove hint names the client's own command, not claude's, to a codex user.
#[test]
fn the_remove_hint_is_the_clients_own_command() {
    let w = World::with_every_client();
    w.sample();
    let codex_home = w.root().join("home/.codex");
    fs::create_dir_all(&codex_home).unwrap();
    fs::write(
        codex_home.join("config.toml"),
        format!(
            "[mcp_servers.codetools-test]\ncommand = \"{}\"\nargs = [\"mcp\", \"serve\"]\n\n\
             [mcp_servers.codetools-test.env]\nCODETOOLS_API_TOKEN = \"{SECRET}\"\n",
            w.opt().join("codetools/bin/codetools").display()
        ),
    )
    .unwrap();
    let cfg = declare(&w, "${CODETOOLS_API_TOKEN}");
    let r = w.on_sample(
        "install",
        &["--config", cfg.to_str().unwrap(), "--client", "codex"],
    );
    r.code(2)
        .stderr_has("registered with codex holding a literal secret")
        .stderr_has("(`codex mcp remove codetools-test`)");
    assert!(!r.stderr.contains("claude mcp remove"), "{}", r.shown);
    assert_nowhere(&w, &r);
}

/// Issue 10: a literal token in `args` was printed in clear by `status` (and by verify's
/// mcp-registration detail, pinned in the attack suite). Now every line shows it redacted.
#[test]
fn a_literal_token_in_args_is_redacted_in_status() {
    let w = World::with_real_claude();
    w.sample();
    w.on_sample("install", &["--server", "codetools"]).code(0);
    let cmd = w.opt().join("codetools/bin/codetools");
    w.claude(&["mcp", "remove", "codetools-test", "-s", "user"])
        .code(0);
    let entry = json!({"command": cmd, "args": ["mcp", "serve", "--api-key", SECRET]});
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "codetools-test",
        &entry.to_string(),
    ])
    .code(0);
    for json in [false, true] {
        let mut extra = vec!["--server", "codetools"];
        if json {
            extra.push("--json");
        }
        let r = w.on_sample("status", &extra);
        r.code(1);
        assert!(r.said().contains("<redacted>"), "{}", r.shown);
        assert_nowhere(&w, &r);
    }
}
