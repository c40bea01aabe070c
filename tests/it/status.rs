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

/// Issue 36.4: diagnoses that named the wrong cause. With the deployed binary deleted from the
/// release, `status` blamed the stable link ("fix that link (e.g. ln -sfn
/// ../current/bin/<exe>)", `<exe>` unfilled, no word of rollback); a registration edited by
/// hand to `/usr/local/bin/evil-codetools` was said to point "into a release that is gone or
/// was replaced"; verify-identity gave no next step for either. Now one wording per cause,
/// in both commands.
#[test]
fn a_missing_release_file_and_a_hand_edit_are_named_as_such_with_a_next_step() {
    let w = World::with_real_claude();
    let opt = w.sample();
    install(&w);
    let verify = |w: &World| {
        w.run(&[
            "verify-identity",
            "--root",
            opt.to_str().unwrap(),
            "--name-suffix",
            "-test",
            "--expect-commit",
            &format!("codetools={CT_SHA}"),
            "--expect-commit",
            &format!("orchestrata={OR_SHA}"),
            "--json",
        ])
    };
    // The release's own executable deleted: the link is fine; redeploy, or roll back.
    let own = opt
        .join("codetools/releases")
        .join(CT_SHA)
        .join("bin/codetools");
    let saved = fs::read(&own).unwrap();
    fs::remove_file(&own).unwrap();
    let r = status(&w);
    r.code(1);
    let (ok, target) = check(&r, 0, "target");
    let v = verify(&w);
    v.code(1);
    let registration = v.detail("mcp-registration");
    for said in [&target, &registration] {
        assert!(!ok);
        assert!(said.contains("missing from the release"), "{said}");
        assert!(said.contains("mcp-deploy rollback --prefix"), "{said}");
        assert!(
            !said.contains("<exe>") && !said.contains("fix it"),
            "{said}"
        );
    }
    // install's gate says the same, with the same next step.
    let gate = w.on_sample("install", &[]);
    gate.code(1)
        .stdout_has("missing from the release")
        .stdout_has("mcp-deploy rollback --prefix");
    fs::write(&own, saved).unwrap();
    fs::set_permissions(&own, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    // The stable link itself broken: that link is named, with the executable filled in.
    let link = opt.join("codetools/bin/codetools");
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("/bin/true", &link).unwrap();
    let (ok, target) = check(&status(&w), 0, "target");
    assert!(!ok);
    assert!(
        target.contains("ln -sfn ../current/bin/codetools "),
        "{target}"
    );
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("../current/bin/codetools", &link).unwrap();

    // A registration edited by hand to point elsewhere: not a release that went away.
    w.claude(&["mcp", "remove", "codetools-test", "-s", "user"])
        .code(0);
    let evil = json!({"command": "/usr/local/bin/evil-codetools", "args": ["mcp", "serve"]});
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "codetools-test",
        &evil.to_string(),
    ])
    .code(0);
    let (ok, target) = check(&status(&w), 0, "target");
    let registration = verify(&w).detail("mcp-registration");
    for said in [&target, &registration] {
        assert!(!ok);
        assert!(said.contains("is not the declared"), "{said}");
        assert!(said.contains("install would re-register it"), "{said}");
        assert!(!said.contains("gone or was replaced"), "{said}");
    }
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
