//! Qwen Code (issue 34, item 6) with the real `qwen` CLI: the supported range at its oldest
//! (0.21.2, from the compatibility cache), a middle (0.23.4) and the pinned newest (0.24.4),
//! each through install, a no-op re-install, verify-identity, status and uninstall; the release
//! below the range refused, and why it is; and a shadow and a layer read from qwen's own files.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::harness::*;

fn settings(w: &World) -> PathBuf {
    w.root().join("home/.qwen/settings.json")
}

fn verify(w: &World) -> Run {
    w.verify_identity(
        &w.opt().join("codetools"),
        CT_SHA,
        &w.registered(),
        &["--name", "codetools-test", "--client", "qwen", "--json"],
    )
}

fn install(w: &World, qwen: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["--client", "qwen", "--qwen", qwen.to_str().unwrap()];
    args.extend(extra);
    w.on_sample("install", &args)
}

#[test]
fn the_oldest_a_middle_and_the_newest_release_install_verify_and_uninstall() {
    for (version, qwen) in [
        ("0.21.2", compat_client("qwen", "0.21.2")),
        ("0.23.4", compat_client("qwen", "0.23.4")),
        ("0.24.4", real_client("qwen")),
    ] {
        let w = World::new();
        w.sample();
        install(&w, &qwen, &[]).code(0);
        let held: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(settings(&w)).unwrap()).unwrap();
        assert_eq!(
            held["mcpServers"]["codetools-test"]["args"],
            json!(["mcp", "serve"]),
            "{version}: {held}"
        );
        assert!(
            held["mcpServers"]["orchestrata-test"].is_object(),
            "{version}"
        );
        // A second install changes nothing and writes nothing.
        let before = fs::read(settings(&w)).unwrap();
        let r = install(&w, &qwen, &["--json"]);
        r.code(0);
        for s in r.json()["servers"].as_array().unwrap() {
            assert_eq!(s["registration"], "unchanged", "{version}: {}", r.shown);
        }
        assert_eq!(fs::read(settings(&w)).unwrap(), before, "{version}");
        verify(&w).code(0);
        w.on_sample("status", &["--client", "qwen"]).code(0);
        w.on_sample(
            "uninstall",
            &["--client", "qwen", "--qwen", qwen.to_str().unwrap()],
        )
        .code(0);
        let after = fs::read_to_string(settings(&w)).unwrap();
        assert!(!after.contains("-test"), "{version}: {after}");
    }
}

/// 0.15.10, the release before the range: refused before any change, naming the bound.
#[test]
fn qwen_0_15_is_refused_before_any_change() {
    let w = World::new();
    w.sample();
    let r = install(&w, &compat_client("qwen", "0.15.10"), &[]);
    r.code(2)
        .stderr_has("qwen 0.15.10 is older than the oldest supported (0.21.2)")
        .stderr_has("npm install -g @qwen-code/qwen-code@0.24.4");
    assert!(!settings(&w).exists(), "{r}");
    assert!(!w.registered().exists(), "{r}");
}

/// Why 0.15.10 is below the range: when the file holds another server, its
/// `mcp remove -s user` says it removed the entry and leaves it in the file.
#[test]
fn qwen_0_15_remove_leaves_the_entry() {
    let w = World::new();
    let qwen = compat_client("qwen", "0.15.10");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&qwen)
            .args(args)
            .env_clear()
            .env("PATH", std::env::join_paths(&w.path_dirs).unwrap())
            .env("HOME", w.root().join("home"))
            .current_dir(w.root().join("work"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["mcp", "add", "-s", "user", "other", "/x"]);
    run(&["mcp", "add", "-s", "user", "ct", "/x"]);
    let said = run(&["mcp", "remove", "-s", "user", "ct"]);
    assert!(said.contains("removed"), "{said}");
    let held = fs::read_to_string(settings(&w)).unwrap();
    assert!(held.contains("\"ct\""), "{held}");
}

/// A same-name server of the working directory's `.mcp.json` wins over the user's (0.24's
/// `assembleMcpServers`), and a user-settings `mcp.excluded` pattern blocks the server: both
/// fail verify-identity, naming the file.
#[test]
fn a_project_server_shadows_and_an_excluded_pattern_blocks() {
    let w = World::new();
    w.sample();
    install(&w, &real_client("qwen"), &[]).code(0);
    verify(&w).code(0);
    let project = w.root().join("work/.mcp.json");
    fs::write(
        &project,
        r#"{"mcpServers": {"codetools-test": {"command": "/bin/true"}}}"#,
    )
    .unwrap();
    let r = verify(&w);
    r.code(1);
    assert!(r.said().contains(".mcp.json"), "{r}");
    fs::remove_file(&project).unwrap();
    let mut held: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(settings(&w)).unwrap()).unwrap();
    held["mcp"] = json!({"excluded": ["codetools-*"]});
    fs::write(settings(&w), held.to_string()).unwrap();
    let r = verify(&w);
    r.code(1);
    assert!(r.said().contains("mcp.excluded"), "{r}");
}
