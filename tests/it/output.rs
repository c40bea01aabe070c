//! `--json` on every command (one object, errors included) and colour only for people.

use std::path::Path;

use crate::harness::*;

#[test]
fn every_command_prints_one_json_object_with_json() {
    let w = World::with_real_claude();
    let opt = w.opt();
    let o = opt.to_str().unwrap();
    let ct = opt.join("codetools");
    let c = ct.to_str().unwrap();
    let release = ct.join("releases").join(CT_SHA);
    let reg = w.registered();
    let commands: Vec<Vec<&str>> = vec![
        vec!["sample", o, "--json"],
        vec!["clients", "--json"],
        vec!["render-mcp", "--prefix", c, "--json"],
        vec!["manifest", "create", release.to_str().unwrap(), "--json"],
        vec!["manifest", "verify", release.to_str().unwrap(), "--json"],
        vec!["install", "--prefix", o, "--name-suffix", "-test", "--json"],
        vec![
            "install",
            "--prefix",
            o,
            "--name-suffix",
            "-test",
            "--dry-run",
            "--json",
        ],
        vec!["status", "--prefix", o, "--name-suffix", "-test", "--json"],
        vec![
            "verify-identity",
            "--prefix",
            c,
            "--expect-commit",
            CT_SHA,
            "--mcp-json",
            reg.to_str().unwrap(),
            "--name",
            "codetools-test",
            "--json",
        ],
        vec![
            "uninstall",
            "--prefix",
            o,
            "--name-suffix",
            "-test",
            "--json",
        ],
    ];
    for args in commands {
        let r = w.run(&args);
        r.code(0);
        let v = r.json(); // exactly one JSON document on stdout
        assert!(v.is_object(), "{}", r.shown);
        if args[0] != "install" || !args.contains(&"--dry-run") {
            assert_eq!(v["ok"], true, "{}", r.shown);
        }
    }
}

#[test]
fn an_error_with_json_is_a_json_object_too() {
    let w = World::new();
    let r = w.run(&[
        "verify-identity",
        "--prefix",
        "/nonexistent/codetools",
        "--expect-commit",
        "abc",
        "--mcp-json",
        "/nonexistent.json",
        "--json",
    ]);
    r.code(2).stderr_has("error:");
    let v = r.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["exit"], 2);
    assert!(v["error"]
        .as_str()
        .unwrap()
        .contains("not a full commit sha"));
    assert!(v["help"].as_str().unwrap().contains("git rev-parse"));
}

/// Run mcp-deploy under a pseudo-terminal (util-linux `script`), as a person would.
fn on_a_terminal(w: &World, args: &str, no_color: bool) -> String {
    let bin = env!("CARGO_BIN_EXE_mcp-deploy");
    let prefix = if no_color { "NO_COLOR=1 " } else { "" };
    let r = w.run_program(
        Path::new("/usr/bin/script"),
        &[
            "-qec",
            &format!("{prefix}TERM=xterm {bin} {args}"),
            "/dev/null",
        ],
        &[],
    );
    r.stdout
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let w = World::new();
    w.sample();
    let ct = w.opt().join("codetools");
    let doc = w.root().join("doc.json");
    let cmd = ct.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp", "serve"]);
    let args = format!(
        "verify-identity --prefix {} --expect-commit {CT_SHA} --mcp-json {}",
        ct.display(),
        doc.display()
    );
    let coloured = on_a_terminal(&w, &args, false);
    assert!(coloured.contains("\x1b[32mok\x1b[0m"), "{coloured:?}");
    let plain = on_a_terminal(&w, &args, true);
    assert!(
        plain.contains("ok   release") && !plain.contains('\x1b'),
        "{plain:?}"
    );
    // Not a terminal: no colour.
    let split: Vec<&str> = args.split(' ').collect();
    let r = w.run(&split);
    r.code(0);
    assert!(!r.said().contains('\x1b'));
}

#[test]
fn a_person_at_a_terminal_sees_progress_lines_and_a_pipe_does_not() {
    let w = World::with_real_claude();
    w.sample();
    let args = format!("install --prefix {} --name-suffix -test", w.opt().display());
    let seen = on_a_terminal(&w, &args, true);
    assert!(seen.contains("registering with claude…"), "{seen:?}");
    assert!(
        seen.contains("asking claude what it has registered…"),
        "{seen:?}"
    );
    let split: Vec<&str> = args.split(' ').collect();
    let r = w.run(&split);
    r.code(0);
    assert!(!r.stderr.contains("asking claude"), "{}", r.shown);
}
