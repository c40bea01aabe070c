//! `status`: agreement of release, rendered document, registration and flat document; drift
//! exits 1 and says what install would change.

use std::fs;

use serde_json::json;

use crate::harness::*;

fn status(w: &World) -> Run {
    w.on_sample("status", &["--json"])
}

fn install(w: &World) {
    w.on_sample("install", &[]).code(0);
}

/// `(server, check) -> (ok, detail)` of a status report.
fn check(r: &Run, server: usize, name: &str) -> (bool, String) {
    let checks = r.json()["servers"][server]["checks"].clone();
    let c = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no {name} check\n{}", r.shown))
        .clone();
    (
        c["ok"].as_bool().unwrap(),
        c["detail"].as_str().unwrap().to_string(),
    )
}

#[test]
fn status_after_install_agrees_and_makes_no_client_call() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    install(&w);
    w.clear_calls();
    let r = status(&w);
    r.code(0);
    for server in 0..2 {
        for c in ["deployed", "rendered", "registered", "target", "recorded"] {
            assert!(check(&r, server, c).0, "{c}\n{}", r.shown);
        }
    }
    assert!(check(&r, 0, "deployed").1.contains(CT_SHA));
    assert!(
        w.calls().is_empty(),
        "status called the client: {:?}",
        w.calls()
    );
    // The human table names each check too.
    crate::snapshot!("status_agrees", w.on_sample("status", &[]));
}

#[test]
fn an_entry_edited_by_hand_is_drift() {
    let w = World::with_real_claude();
    w.sample();
    install(&w);
    w.claude(&["mcp", "remove", "codetools-test", "-s", "user"])
        .code(0);
    let evil = json!({"command": w.opt().join("codetools/bin/codetools"), "args": ["--evil"]});
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "codetools-test",
        &evil.to_string(),
    ])
    .code(0);
    let r = status(&w);
    r.code(1);
    let (ok, detail) = check(&r, 0, "registered");
    assert!(!ok);
    assert!(detail.contains("install would update it"), "{detail}");
    let (ok, detail) = check(&r, 0, "recorded");
    assert!(!ok, "{detail}");
    // orchestrata is untouched and agrees.
    assert!(check(&r, 1, "registered").0);
}

#[test]
fn a_registration_into_a_release_that_is_gone_is_drift() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let ct = opt.join("codetools");
    // Registered straight into the release directory, which a later promote then deletes.
    let old = ct.join("releases").join(CT_SHA).join("bin/codetools");
    let entry = json!({"command": old, "args": ["mcp", "serve"]});
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "codetools-test",
        &entry.to_string(),
    ])
    .code(0);
    let new = "beef".repeat(10);
    add_release(&ct, &new);
    promote(&ct, &new);
    fs::remove_dir_all(ct.join("releases").join(CT_SHA)).unwrap();
    let r = status(&w);
    r.code(1);
    let (ok, detail) = check(&r, 0, "target");
    assert!(!ok);
    assert!(detail.contains("release that is gone"), "{detail}");
    assert!(check(&r, 0, "deployed").1.contains(&new));
}

#[test]
fn a_stale_flat_document_and_a_changed_template_are_drift() {
    let w = World::with_real_claude();
    w.sample();
    install(&w);
    let mut flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    flat["mcpServers"]["orchestrata-test"]["args"] = json!(["stale"]);
    fs::write(w.registered(), flat.to_string()).unwrap();
    let r = status(&w);
    r.code(1);
    let (ok, detail) = check(&r, 1, "recorded");
    assert!(
        !ok && detail.contains("install would rewrite it"),
        "{detail}"
    );
    assert!(check(&r, 0, "recorded").0);

    // A template that changed since the install: the rendered file and the registration lag.
    let cfg = w.declare_codetools(json!({"args": ["mcp", "serve", "--new"]}));
    let opt = w.opt();
    let r = w.run(&[
        "status",
        "--config",
        cfg.to_str().unwrap(),
        "--prefix",
        opt.to_str().unwrap(),
        "--name-suffix",
        "-test",
        "--json",
    ]);
    r.code(1);
    let (ok, detail) = check(&r, 0, "rendered");
    assert!(
        !ok && detail.contains("no longer matches the template"),
        "{detail}"
    );
    assert!(!check(&r, 0, "registered").0);
}

#[test]
fn status_before_any_install_says_install_would_add() {
    let w = World::with_real_claude();
    w.sample();
    let r = status(&w);
    r.code(1);
    let (ok, detail) = check(&r, 0, "registered");
    assert!(!ok && detail.contains("install would add it"), "{detail}");
    assert!(check(&r, 0, "rendered")
        .1
        .contains("install would write it"));
}
