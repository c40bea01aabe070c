//! deploy/install-claude-config.sh, the promote pipeline's entry point, calls the binary.

use std::path::Path;

use crate::harness::*;

fn script() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/install-claude-config.sh"
    ))
}

#[test]
fn promote_entry_point_installs_the_server_at_its_prefix() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let prefix = opt.join("codetools");
    let bin = env!("CARGO_BIN_EXE_mcp-deploy");
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[
            script().to_str().unwrap(),
            "--prefix",
            prefix.to_str().unwrap(),
            "--name-suffix",
            "-test",
            "--expect-commit",
            &format!("codetools={CT_SHA}"),
        ],
        &[("MCP_DEPLOY_BIN", bin)],
    );
    r.code(0)
        .stdout_has("codetools (registered as codetools-test): added");
    let servers = w.user_servers();
    assert_eq!(servers.keys().collect::<Vec<_>>(), vec!["codetools-test"]);
}

#[test]
fn promote_entry_point_refuses_a_missing_prefix() {
    let w = World::new();
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[
            script().to_str().unwrap(),
            "--prefix",
            "/nonexistent/codetools",
        ],
        &[("MCP_DEPLOY_BIN", env!("CARGO_BIN_EXE_mcp-deploy"))],
    );
    r.code(2)
        .stderr_has("is not a directory")
        .stderr_has("help:");
    // Without --prefix the script is valid (the real names from /opt, issue 12.1); --prefix
    // without a value is the usage error.
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[script().to_str().unwrap(), "--prefix"],
        &[],
    );
    r.code(2).stderr_has("usage:").stderr_has("help:");
}

fn run_script(w: &World, args: &[&str]) -> Run {
    let mut argv = vec![script().to_str().unwrap()];
    argv.extend_from_slice(args);
    w.run_program(
        Path::new("/bin/bash"),
        &argv,
        &[("MCP_DEPLOY_BIN", env!("CARGO_BIN_EXE_mcp-deploy"))],
    )
}

/// Issue 12.1: `--prefix ROOT` registers both servers under the test names from ROOT/S, writes
/// the flat document, and both identity checks pass; a foreign command then fails exactly the
/// registration check.
#[test]
fn promote_entry_point_registers_both_servers_under_a_root() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let r = run_script(
        &w,
        &[
            "--prefix",
            opt.to_str().unwrap(),
            "--expect-commit",
            &format!("codetools={CT_SHA}"),
            "--expect-commit",
            &format!("orchestrata={OR_SHA}"),
            "--json",
        ],
    );
    r.code(0);
    let report = r.json();
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2, "{}", r.shown);
    for s in servers {
        for c in s["checks"].as_array().unwrap() {
            assert_eq!(c["ok"], true, "{c}\n{}", r.shown);
        }
        let checks: Vec<&str> = s["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["check"].as_str().unwrap())
            .collect();
        assert!(checks.contains(&"commit") && checks.contains(&"mcp-registration"));
    }
    let user = w.user_servers();
    assert_eq!(
        user.keys().collect::<Vec<_>>(),
        vec!["codetools-test", "orchestrata-test"]
    );
    assert_eq!(
        user["codetools-test"]["command"],
        opt.join("codetools/bin/codetools").to_str().unwrap()
    );
    let flat: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.registered()).unwrap()).unwrap();
    let recorded: Vec<&String> = flat["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(recorded, vec!["codetools-test", "orchestrata-test"]);

    // Point the codetools registration at a foreign executable: only mcp-registration fails.
    // (verify-identity's --mcp-json defaults to where install wrote the document, and its
    // --expect-commit takes NAME=SHA as install does: issue 12.6.)
    let foreign = w.root().join("foreign/codetools");
    write_exec(&foreign, "#!/bin/sh\nexit 0\n");
    let mut doc = flat.clone();
    doc["mcpServers"]["codetools-test"]["command"] = foreign.to_str().unwrap().into();
    std::fs::write(w.registered(), doc.to_string()).unwrap();
    let r = w.run(&[
        "verify-identity",
        "--prefix",
        opt.join("codetools").to_str().unwrap(),
        "--expect-commit",
        &format!("codetools={CT_SHA}"),
        "--name",
        "codetools-test",
        "--json",
    ]);
    r.code(1);
    let failed: Vec<String> = r
        .checks()
        .into_iter()
        .filter(|(_, ok)| !ok)
        .map(|(c, _)| c)
        .collect();
    assert_eq!(failed, vec!["mcp-registration"], "{}", r.shown);
    assert!(
        r.detail("mcp-registration").contains("outside"),
        "{}",
        r.shown
    );
}

/// Issue 12.1: without --prefix, the real names from the declared prefixes (/opt/... in the
/// built-in declaration; here a declaration with the same names at scratch prefixes, since a
/// test cannot write /opt).
#[test]
fn promote_entry_point_without_a_prefix_registers_the_real_names() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let cfg = w.root().join("servers.json");
    let doc = serde_json::json!({"servers": [
        {"name": "codetools", "prefix": opt.join("codetools"), "layout": "release",
         "entry": {"command": "{{prefix}}/bin/codetools", "args": ["mcp", "serve"]}},
        {"name": "orchestrata", "prefix": opt.join("orchestrata"), "layout": "prefix",
         "entry": {"command": "{{prefix}}/bin/orchestrata-mcp", "args": []}}]});
    std::fs::write(&cfg, doc.to_string()).unwrap();
    run_script(&w, &["--config", cfg.to_str().unwrap()])
        .code(0)
        .stdout_has("codetools: added")
        .stdout_has("orchestrata: added");
    assert_eq!(
        w.user_servers().keys().collect::<Vec<_>>(),
        vec!["codetools", "orchestrata"]
    );
}

/// Issue 12.2: an absent deployment is skipped with a line when not named, and orchestrata is
/// still registered; named with --server it fails; a broken one is never skipped.
#[test]
fn absent_deployments_are_skipped_unless_named_and_broken_ones_never() {
    let w = World::with_real_claude();
    let opt = w.sample();
    // No `current` yet: a release layout that was never promoted.
    std::fs::remove_file(opt.join("codetools/current")).unwrap();
    let r = run_script(&w, &["--prefix", opt.to_str().unwrap()]);
    r.code(0)
        .stderr_has("skipping codetools: not deployed")
        .stderr_has("has no current release yet")
        .stdout_has("orchestrata (registered as orchestrata-test): added");
    assert_eq!(
        w.user_servers().keys().collect::<Vec<_>>(),
        vec!["orchestrata-test"]
    );
    // A commit expected of it says it was expected to be there: refused, not skipped.
    run_script(
        &w,
        &[
            "--prefix",
            opt.to_str().unwrap(),
            "--expect-commit",
            &format!("codetools={CT_SHA}"),
        ],
    )
    .code(2)
    .stderr_has("--expect-commit names \"codetools\", which is not deployed")
    .stderr_has("help: deploy codetools first");
    run_script(
        &w,
        &["--prefix", opt.to_str().unwrap(), "--server", "codetools"],
    )
    .code(2)
    .stderr_has("holds no deployed codetools")
    .stderr_has("help:");

    // No prefix at all is absent too.
    std::fs::remove_dir_all(opt.join("codetools")).unwrap();
    run_script(&w, &["--prefix", opt.to_str().unwrap()])
        .code(0)
        .stderr_has("skipping codetools: not deployed");

    // Broken: a dangling current is not absent. It is not skipped, and the run fails.
    let w = World::with_real_claude();
    let opt = w.sample();
    std::fs::remove_file(opt.join("codetools/current")).unwrap();
    std::os::unix::fs::symlink("releases/gone", opt.join("codetools/current")).unwrap();
    let r = run_script(&w, &["--prefix", opt.to_str().unwrap()]);
    assert_ne!(r.code, 0, "{}", r.shown);
    assert!(!r.stderr.contains("skipping"), "{}", r.shown);

    // Nothing deployed at all under the root: exit 2 with a help line.
    let w = World::with_real_claude();
    run_script(&w, &["--prefix", w.opt().to_str().unwrap()])
        .code(2)
        .stderr_has("no declared server is deployed")
        .stderr_has("help:");
}

/// Issue 23: `--help` exited 2 with the usage on stderr, as for a bad command line.
#[test]
fn promote_entry_point_help_goes_to_stdout_with_exit_0() {
    let w = World::new();
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[script().to_str().unwrap(), "--help"],
        &[],
    );
    r.code(0).stdout_has("usage: ").stdout_has("--prefix ROOT");
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    // A command line it cannot take is still exit 2, on stderr.
    w.run_program(
        Path::new("/bin/bash"),
        &[script().to_str().unwrap(), "--prefix"],
        &[],
    )
    .code(2)
    .stderr_has("usage: ");
}

/// Issue 36.3: the entry point renamed without a word. `--help` did not say that a ROOT
/// registers `-test` names; a run over a ROOT added `codetools-test` beside a real `codetools`
/// entry silently; `--root DIR` that is no directory was reported as "`--prefix DIR` is not a
/// directory". The fake binary (`/bin/echo`) shows what the script passes on, and no client is
/// started.
#[test]
fn the_entry_point_says_that_a_root_registers_test_names_and_names_the_flag_given() {
    let w = World::new();
    let help = w.run_program(
        Path::new("/bin/bash"),
        &[script().to_str().unwrap(), "--help"],
        &[],
    );
    help.code(0)
        .stdout_has("codetools-test and orchestrata-test")
        .stdout_has("--name-suffix SUFFIX");

    let root = w.root().join("deployments");
    std::fs::create_dir_all(&root).unwrap();
    for flag in ["--root", "--prefix"] {
        let r = w.run_program(
            Path::new("/bin/bash"),
            &[script().to_str().unwrap(), flag, root.to_str().unwrap()],
            &[("MCP_DEPLOY_BIN", "/bin/echo")],
        );
        r.code(0)
            .stdout_has(&format!("install {flag} {}", root.display()))
            .stdout_has("--name-suffix -test")
            .stderr_has("registered as <name>-test")
            .stderr_has("never under its real name");
        // A suffix chosen by the caller is theirs: no note, no second suffix.
        let r = w.run_program(
            Path::new("/bin/bash"),
            &[
                script().to_str().unwrap(),
                flag,
                root.to_str().unwrap(),
                "--name-suffix",
                "-ci",
            ],
            &[("MCP_DEPLOY_BIN", "/bin/echo")],
        );
        r.code(0);
        assert!(!r.said().contains("-test"), "{}", r.stdout);
        assert!(!r.stderr.contains("note:"), "{}", r.stderr);
        // The error names the flag that was given.
        let missing = w.root().join("nowhere");
        let r = w.run_program(
            Path::new("/bin/bash"),
            &[script().to_str().unwrap(), flag, missing.to_str().unwrap()],
            &[("MCP_DEPLOY_BIN", "/bin/echo")],
        );
        r.code(2)
            .stderr_has(&format!("{flag} {} is not a directory", missing.display()));
    }
}

/// Issue 36.2: the demo (the README's first command) was silent for minutes: it said nothing
/// of what it was doing (npm, a release build) nor how long each step took, and it brought
/// every client CLI with `npm ci` though it uses claude alone. Run with the test binary
/// (MCP_DEPLOY_BIN: no release build here) and the pinned claude of node_modules.
#[test]
fn the_demo_says_what_it_does_and_how_long_each_step_took() {
    let w = World::with_real_claude();
    let demo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/demo.sh"));
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[demo.to_str().unwrap()],
        &[("MCP_DEPLOY_BIN", env!("CARGO_BIN_EXE_mcp-deploy"))],
    );
    r.code(0)
        .stderr_has("demo: Node.js ")
        .stderr_has(": done in ")
        .stdout_has("demo passed");
    // Every step of the job says how long it took.
    let steps = r.stdout.lines().filter(|l| l.starts_with("$ ")).count();
    let timed = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("  (") && l.ends_with(" ms)"))
        .count();
    assert!(steps >= 8, "{}", r.stdout);
    assert_eq!(timed, steps, "{}", r.stdout);
    // Only the client it uses: no `npm ci` of every client CLI.
    let script = std::fs::read_to_string(demo).unwrap();
    let runs_npm_ci = script
        .lines()
        .any(|l| !l.trim_start().starts_with('#') && l.contains("npm ci"));
    assert!(!runs_npm_ci, "the demo runs npm ci");
}
