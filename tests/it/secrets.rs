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
        !r.stdout.contains(SECRET) && !r.stderr.contains(SECRET),
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
fn a_reference_is_registered_as_is_and_never_recorded() {
    let w = World::with_real_claude();
    w.sample();
    let cfg = declare(&w, "${CODETOOLS_API_TOKEN}");
    let r = install(&w, &cfg);
    r.code(0);
    assert_eq!(
        w.user_servers()["codetools-test"]["env"],
        json!({"CODETOOLS_API_TOKEN": "${CODETOOLS_API_TOKEN}"})
    );
    let flat = fs::read_to_string(w.registered()).unwrap();
    assert!(!flat.contains("CODETOOLS_API_TOKEN"), "{flat}");
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
        .stderr_has("help: move the secret into the environment");
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
    assert!(!r.stdout.contains(SECRET));
}
