//! Issue 12, items 4-8: one meaning per flag, every flag does something, and every message
//! says what is true and what to do.

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::json;

use crate::harness::*;

fn check(r: &Run, server: usize, name: &str) -> Option<(bool, String)> {
    let checks = r.json()["servers"][server]["checks"].clone();
    checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .map(|c| {
            (
                c["ok"].as_bool().unwrap(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
}

/// 12.4: a server's own prefix where a root is expected is used as that server, saying so.
#[test]
fn a_server_prefix_given_as_the_root_is_recognised() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let ct = opt.join("codetools");
    let r = w.run(&[
        "install",
        "--prefix",
        ct.to_str().unwrap(),
        "--name-suffix",
        "-test",
        "--dry-run",
    ]);
    r.code(0)
        .stderr_has("holds codetools's own deployment")
        .stdout_has("codetools-test: would be added");
    assert!(!r.said().contains("orchestrata"), "{}", r.shown);
    assert!(!r.said().contains("codetools/codetools"), "{}", r.shown);
    assert!(!r.stderr.contains("codetools/codetools/"), "{}", r.shown);
    // Asking for another server under it: refused, with the right command.
    w.run(&[
        "install",
        "--prefix",
        ct.to_str().unwrap(),
        "--server",
        "orchestrata",
        "--dry-run",
    ])
    .code(2)
    .stderr_has(&format!(
        "help: pass the directory that holds the servers, e.g. --root {}",
        opt.display()
    ));
    // status and uninstall take it the same way.
    w.run(&[
        "status",
        "--prefix",
        ct.to_str().unwrap(),
        "--name-suffix",
        "-test",
    ])
    .stderr_has("holds codetools's own deployment");
}

/// 12.5: options that mean nothing for a command are refused by it, with a help line.
#[test]
fn options_a_command_cannot_use_are_refused() {
    let w = World::new();
    for args in [
        &["status", "--lock-timeout", "3"][..],
        &["status", "--client-timeout", "3"],
        &["status", "--claude", "/bin/true"],
        &["status", "--mcp-timeout", "3"],
        &["uninstall", "--strict"],
        &["uninstall", "--mcp-timeout", "3"],
        &["install", "--client-timeout", "0"],
        &["uninstall", "--client-timeout", "0"],
    ] {
        let r = w.run(args);
        r.code(2).stderr_has("help: `mcp-deploy ");
    }
}

/// 12.5: status reads config files only, so it needs no client binary on PATH.
#[test]
fn status_needs_no_client_binary() {
    let w = World::new();
    assert!(!w.bin().join("claude").exists());
    w.sample();
    let r = w.on_sample("status", &["--json"]);
    r.code(1);
    assert_eq!(
        check(&r, 0, "registered").unwrap().1,
        "codetools-test is not registered; install would add it"
    );
}

/// 12.5, then issue 35 (one state, one verdict): a shadow fails status with or without
/// --strict, as it fails verify-identity; it was a warning without --strict, so that status
/// passed where verify-identity failed.
#[test]
fn status_fails_on_shadowing_with_or_without_strict_as_verify_identity_does() {
    let w = World::with_real_claude();
    w.sample();
    w.on_sample("install", &[]).code(0);
    // A local-scope entry of the same name in some project shadows the user-scope one there.
    let mut cfg: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.claude_json()).unwrap()).unwrap();
    cfg["projects"] =
        json!({"/srv/app": {"mcpServers": {"codetools-test": {"command": "/bin/true"}}}});
    fs::write(w.claude_json(), cfg.to_string()).unwrap();
    for strict in [&[][..], &["--strict"]] {
        let r = w.on_sample("status", &[&["--json"], strict].concat());
        r.code(1);
        let (ok, detail) = check(&r, 0, "shadowing").unwrap();
        assert!(!ok);
        assert!(
            detail.contains("local scope of project /srv/app, which the client prefers there"),
            "{detail}"
        );
    }
    let ct = w.opt().join("codetools");
    let ct = ct.to_str().unwrap();
    let verify = |extra: &[&str]| {
        let args = [
            &["verify-identity", "--prefix", ct, "--name-suffix", "-test"],
            extra,
        ]
        .concat();
        w.run(&args)
    };
    verify(&["--expect-commit", CT_SHA])
        .code(1)
        .stdout_has("local scope of project /srv/app");
    // The same state without the shadow passes: the failure above is the shadow's.
    let mut cfg: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.claude_json()).unwrap()).unwrap();
    cfg["projects"] = json!({});
    fs::write(w.claude_json(), cfg.to_string()).unwrap();
    verify(&["--expect-commit", CT_SHA]).code(0);
    w.on_sample("status", &[]).code(0);
}

/// 12.5: status runs the content check when the release holds a manifest.
#[test]
fn status_checks_content_when_the_release_has_a_manifest() {
    let w = World::new();
    let opt = w.sample();
    let rel = opt.join("codetools/releases").join(CT_SHA);
    assert!(check(&w.on_sample("status", &["--json"]), 0, "content").is_none());
    w.run(&["manifest", "create", rel.to_str().unwrap()])
        .code(0);
    let r = w.on_sample("status", &["--json"]);
    assert!(check(&r, 0, "content").unwrap().0, "{}", r.shown);
    fs::write(rel.join("bin/codetools"), "#!/bin/sh\necho changed\n").unwrap();
    let r = w.on_sample("status", &["--json"]);
    let (ok, detail) = check(&r, 0, "content").unwrap();
    assert!(!ok, "{detail}");
    assert!(detail.contains("bin/codetools"), "{detail}");
}

/// 12.5: uninstall --dry-run says what it would remove and removes nothing.
#[test]
fn uninstall_dry_run_changes_nothing() {
    let w = World::new();
    w.wrap_claude(&[]);
    w.sample();
    w.on_sample("install", &[]).code(0);
    let before = fs::read(w.claude_json()).unwrap();
    let doc_before = fs::read(w.registered()).unwrap();
    w.clear_calls();
    let r = w.on_sample("uninstall", &["--dry-run"]);
    r.code(0)
        .stdout_has("dry run: nothing is changed")
        .stdout_has("codetools-test: would be removed from claude")
        .stdout_has("run   claude mcp remove codetools-test -s user");
    assert_eq!(fs::read(w.claude_json()).unwrap(), before);
    assert_eq!(fs::read(w.registered()).unwrap(), doc_before);
    assert!(w.calls().is_empty(), "{:?}", w.calls());
    let r = w.on_sample("uninstall", &["--dry-run", "--json"]);
    assert_eq!(r.json()["servers"][0]["registration"], "removed");
}

/// 12.6: verify-identity takes NAME=SHA and defaults --mcp-json to install's document.
#[test]
fn verify_identity_takes_name_eq_sha_and_the_default_document() {
    let w = World::with_real_claude();
    let opt = w.sample();
    w.on_sample("install", &[]).code(0);
    let ct = opt.join("codetools");
    let ct = ct.to_str().unwrap();
    w.run(&[
        "verify-identity",
        "--prefix",
        ct,
        "--expect-commit",
        &format!("codetools={CT_SHA}"),
        "--name",
        "codetools-test",
    ])
    .code(0);
    w.run(&[
        "verify-identity",
        "--prefix",
        ct,
        "--expect-commit",
        &format!("orchestrata={OR_SHA}"),
        "--name",
        "codetools-test",
    ])
    .code(2)
    .stderr_has("names \"orchestrata\", which is not selected (selected: codetools)")
    .stderr_has("help: pass --expect-commit codetools=SHA");
}

/// 12.7: --version names the commit the binary was built from.
#[test]
fn version_names_the_commit() {
    let w = World::new();
    let r = w.run(&["--version"]);
    r.code(0);
    assert!(
        r.stdout.starts_with(&format!(
            "mcp-deploy {} (commit ",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        r.shown
    );
}

/// 12.8: a bin/ link into another release is the deployment's to fix, not install's.
#[test]
fn a_bin_link_into_another_release_says_to_fix_the_link() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let ct = opt.join("codetools");
    w.on_sample("install", &[]).code(0);
    let new = "beef".repeat(10);
    add_release(&ct, &new);
    promote(&ct, &new);
    // bin/codetools still points into the old release, by its own path.
    fs::remove_file(ct.join("bin/codetools")).unwrap();
    symlink(
        format!("../releases/{CT_SHA}/bin/codetools"),
        ct.join("bin/codetools"),
    )
    .unwrap();
    let r = w.on_sample("status", &["--json"]);
    r.code(1);
    let (ok, detail) = check(&r, 0, "target").unwrap();
    assert!(!ok);
    assert!(
        detail.contains(
            "does not lead into the current release: fix it (ln -sfn ../current/bin/codetools "
        ),
        "{detail}"
    );
    assert!(!detail.contains("install would re-register"), "{detail}");
}

/// 12.8: "is X, expected Y" on a wrong commit, never "agrees, expected Y".
#[test]
fn a_wrong_commit_says_what_is_deployed() {
    let w = World::with_real_claude();
    let opt = w.sample();
    w.on_sample("install", &[]).code(0);
    let other = "a".repeat(40);
    let r = w.verify_identity(
        &opt.join("codetools"),
        &other,
        &w.registered(),
        &["--name", "codetools-test", "--json"],
    );
    r.code(1);
    let detail = r.detail("commit");
    assert!(
        detail.starts_with(&format!(
            "the deployed commit is {CT_SHA}, expected {other}"
        )),
        "{detail}"
    );
}

/// 12.8: every exit 2 carries a help: line. Each case is a different way a run cannot start
/// or cannot finish, across the error kinds (usage, declaration, render, client, flat
/// document, manifest, vendor, io).
#[test]
fn every_exit_2_carries_a_help_line() {
    let w = World::new();
    let opt = w.sample();
    let root = w.root();
    let bad_cfg = root.join("bad.json");
    fs::write(&bad_cfg, r#"{"servers": [{"name": "x"}]}"#).unwrap();
    let bad_doc = root.join("bad-doc.json");
    fs::write(&bad_doc, "{").unwrap();
    // Paths that do not exist, inside this test's own world: a `/nonexistent` that some other
    // process created on the machine once made verify-vendor find a directory there.
    let absent = root.join("absent");
    let absent = absent.to_str().unwrap();
    let absent_x = format!("{absent}/x");
    let absent_json = format!("{absent}.json");
    let absent_ct = format!("{absent}/codetools");
    let absent_claude = format!("{absent}/claude");
    let absent_tgz = format!("{absent}.tgz");
    let ct = opt.join("codetools");
    let (ct, opt_s, cfg, doc) = (
        ct.to_str().unwrap(),
        opt.to_str().unwrap(),
        bad_cfg.to_str().unwrap(),
        bad_doc.to_str().unwrap(),
    );
    let cases: Vec<Vec<&str>> = vec![
        vec![],
        vec!["no-such-command"],
        vec!["install", "--bogus"],
        vec!["render-mcp", "--prefix", &absent_x],
        vec!["render-mcp", "--prefix", "/a/../b", "--server", "codetools"],
        vec!["render-mcp", "--prefix", ct, "--server", "nope"],
        vec!["render-mcp", "--prefix", ct, "--config", cfg],
        vec!["render-mcp", "--prefix", ct, "--config", &absent_json],
        vec!["render-mcp", "--prefix", &absent_ct],
        vec!["verify-identity", "--prefix", ct, "--expect-commit", "abc"],
        vec![
            "verify-identity",
            "--prefix",
            ct,
            "--expect-commit",
            CT_SHA,
            "--mcp-json",
            doc,
        ],
        vec![
            "verify-identity",
            "--prefix",
            ct,
            "--expect-commit",
            CT_SHA,
            "--mcp-json",
            &absent_json,
        ],
        vec!["install", "--prefix", opt_s, "--name-suffix", "-test"],
        vec![
            "install",
            "--prefix",
            opt_s,
            "--name-suffix",
            "-test",
            "--registered",
            doc,
        ],
        vec!["install", "--prefix", opt_s, "--name-suffix", "!bad"],
        vec!["install", "--prefix", opt_s, "--expect-commit", "codetools"],
        vec!["install", "--prefix", absent],
        vec![
            "install",
            "--prefix",
            opt_s,
            "--server",
            "codetools",
            "--claude",
            &absent_claude,
        ],
        vec!["uninstall", "--prefix", opt_s, "--client", "codex"],
        vec!["status", "--prefix", opt_s, "--registered", doc],
        vec!["sample", opt_s],
        vec!["manifest", "verify", absent],
        vec!["verify-vendor", absent],
        vec!["pin-vendor", &absent_tgz],
        vec!["man", "nope"],
        vec!["clients", "--client", "nope"],
    ];
    for args in cases {
        let r = w.run(&args);
        assert_eq!(r.code, 2, "expected exit 2\n{}", r.shown);
        assert!(
            r.stderr.lines().any(|l| l.starts_with("help: ")),
            "no help: line\n{}",
            r.shown
        );
    }
}

/// Issue 23, item 5: every timeout flag reads one kind of value, a duration with its unit;
/// 0 is refused as "must be at least 1ms" (it was clap's range `1..18446744073709551615`),
/// and help shows the unit and the default with its unit.
#[test]
fn timeout_flags_take_units_and_zero_must_be_at_least_1ms() {
    let w = World::new();
    for args in [
        &["install", "--client-timeout", "0"][..],
        &["uninstall", "--client-timeout", "0s"],
        &["install", "--lock-timeout", "0"],
        &["install", "--mcp-timeout", "0"],
        &["promote", "--handshake-timeout", "0ms"],
        &["rollback", "--lock-timeout", "0"],
        &["verify-identity", "--handshake", "--handshake-timeout", "0"],
        &["prune", "--lock-timeout", "500us"],
        &["clients", "--client-timeout", "0"],
    ] {
        let r = w.run(args);
        r.code(2).stderr_has("must be at least 1ms");
        assert!(!r.stderr.contains("18446744073709551615"), "{}", r.stderr);
    }
    w.run(&["install", "--client-timeout", "five"])
        .code(2)
        .stderr_has("e.g. 5s, 500ms or 2m (a bare number is seconds)");
    let help = w.run(&["install", "--help"]);
    help.code(0)
        .stdout_has("--client-timeout <DURATION>")
        .stdout_has("[default: 60s]")
        .stdout_has("--mcp-timeout <DURATION>")
        .stdout_has("[default: 5s]")
        .stdout_has("--lock-timeout <DURATION>")
        .stdout_has("[default: 300s]");
    assert!(!help.said().contains("SECS"), "{}", help.stdout);
    for (command, flag) in [
        ("promote", "--handshake-timeout <DURATION>"),
        ("verify-identity", "--handshake-timeout <DURATION>"),
        ("prune", "--lock-timeout <DURATION>"),
    ] {
        let help = w.run(&[command, "--help"]);
        help.code(0).stdout_has(flag);
        // As words: where help wraps its lines depends on the width of its columns.
        let words = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("a bare number is seconds"), "{}", help.shown);
    }
}

/// A timeout too large for the clock: `prune --lock-timeout 18446744073709551615` panicked
/// ("overflow when adding duration to instant", exit 101) when it made the lock's deadline, and
/// so did every other timeout flag given a huge value. Refused now, before anything runs.
#[test]
fn a_timeout_past_what_the_clock_holds_is_refused_not_a_panic() {
    let w = World::new();
    let opt = w.sample();
    let ct = opt.join("codetools");
    let doc = w.root().join("none.json");
    let r = w.run(&[
        "prune",
        "--prefix",
        ct.to_str().unwrap(),
        "--keep",
        "1",
        "--registered",
        doc.to_str().unwrap(),
        "--lock-timeout",
        "18446744073709551615",
    ]);
    r.code(2).stderr_has("must be at most 7days (a week)");
    assert!(!r.stderr.contains("panicked"), "{}", r.shown);
    for args in [
        &["install", "--client-timeout", "8days"][..],
        &["install", "--mcp-timeout", "604800001"],
        &["promote", "--handshake-timeout", "1000000000y"],
        &[
            "verify-identity",
            "--handshake",
            "--handshake-timeout",
            "18446744073709551615",
        ],
    ] {
        w.run(args)
            .code(2)
            .stderr_has("must be at most 7days (a week)");
    }
}

/// Issue 23, item 5: the units reach the calls. `--client-timeout 1500ms` kills a hung call
/// after 1.5 s (a bare number is still seconds); `--mcp-timeout 2s` reaches claude as
/// MCP_TIMEOUT=2000, and MCP_TIMEOUT's own value stays milliseconds.
#[test]
fn durations_carry_their_units_to_the_client_call() {
    let w = World::new();
    w.wrap_claude(&[("add-json", 0, Fault::Hang)]);
    w.sample();
    w.on_sample("install", &["--client-timeout", "1500ms"])
        .code(2)
        .stderr_has("timed out after 1s 500ms and was killed");
    // A wrapper that records the MCP_TIMEOUT each call is given, then runs the real claude.
    let seen = w.root().join("mcp-timeout.log");
    w.write_claude(&format!(
        "#!/bin/sh\necho \"$1 $2 $MCP_TIMEOUT\" >> '{}'\nexec '{}' \"$@\"\n",
        seen.display(),
        real_claude().display()
    ));
    w.on_sample("install", &["--mcp-timeout", "2s"]).code(0);
    let gets = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("mcp get "))
            .map(|l| l.rsplit(' ').next().unwrap().to_string())
            .collect()
    };
    let log = fs::read_to_string(&seen).unwrap();
    assert!(!gets(&log).is_empty(), "{log}");
    assert!(gets(&log).iter().all(|t| t == "2000"), "{log}");
    fs::remove_file(&seen).unwrap();
    w.sample_cmd("install")
        .env("MCP_TIMEOUT", "3000")
        .run()
        .code(0);
    let log = fs::read_to_string(&seen).unwrap();
    assert!(!gets(&log).is_empty(), "{log}");
    assert!(gets(&log).iter().all(|t| t == "3000"), "{log}");
}

/// Issue 23, item 9: a prefix that does not exist was "not a directory" (render-mcp, install
/// --server) or "cannot resolve ...: No such file or directory" (promote, rollback, prune):
/// each now says it does not exist; a file given as the prefix is still "not a directory".
#[test]
fn a_prefix_that_does_not_exist_is_said_not_to_exist() {
    let w = World::new();
    let gone = w.root().join("gone");
    let ct = gone.join("codetools");
    let ct = ct.to_str().unwrap();
    let sha = CT_SHA;
    for args in [
        &["render-mcp", "--prefix", ct][..],
        &[
            "install",
            "--prefix",
            gone.to_str().unwrap(),
            "--server",
            "codetools",
        ],
        &["promote", "--prefix", ct, "--release", sha, "--dry-run"],
        &["rollback", "--prefix", ct, "--dry-run"],
        &["prune", "--prefix", ct, "--keep", "1", "--dry-run"],
    ] {
        let r = w.run(args);
        r.code(2)
            .stderr_has(&format!("{ct} does not exist"))
            .stderr_has("help: ");
        assert!(!r.stderr.contains("not a directory"), "{}", r.stderr);
        assert!(!r.stderr.contains("No such file"), "{}", r.stderr);
    }
    let file = w.write("codetools", "not a prefix");
    w.run(&["render-mcp", "--prefix", file.to_str().unwrap()])
        .code(2)
        .stderr_has("is not a directory");
}

/// Issue 23, item 9: a root that does not exist said "skipping codetools: not deployed
/// (ROOT/codetools does not exist)" for every declared server, then "no declared server is
/// deployed": the root itself is what is missing, and the run says so, once, before anything.
#[test]
fn a_root_that_does_not_exist_is_said_not_to_exist_once() {
    let w = World::new();
    let gone = w.root().join("gone");
    let gone = gone.to_str().unwrap();
    for args in [
        &["install", "--root", gone, "--dry-run"][..],
        &["install", "--prefix", gone, "--dry-run"],
        &["status", "--root", gone],
        &[
            "verify-identity",
            "--root",
            gone,
            "--expect-commit",
            &format!("codetools={CT_SHA}"),
        ],
    ] {
        let r = w.run(args);
        r.code(2)
            .stderr_has(&format!("{gone} does not exist"))
            .stderr_has("help: give the directory that holds the deployments");
        assert!(!r.stderr.contains("skipping"), "{}", r.shown);
        assert!(!r.stderr.contains("no declared server"), "{}", r.shown);
    }
    // Uninstall needs no deployment: a teardown after the scratch root is gone still works.
    w.run(&["uninstall", "--root", gone, "--dry-run"])
        .code(0)
        .stdout_has("codetools: not registered in claude, nothing to remove");
}

/// The sections of a `--help` page: heading (`Options`, `Selection`, ...) -> its text.
fn help_sections(help: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in help.lines() {
        match line.strip_suffix(':') {
            Some(h) if !line.starts_with(' ') && !h.contains(' ') => {
                out.push((h.to_string(), String::new()))
            }
            _ => {
                if let Some((_, text)) = out.last_mut() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    out
}

/// Issue 23, item 6: every command groups its flags under the same headings, in the manner of
/// cargo and uv — Selection (which servers, where, which document), Checks (what must hold),
/// Clients (which, their binaries, their timeouts), Output (format, -q, -v, --color) — and a
/// flag is under the same heading on every command. Before, one flat "Options" list of up to
/// 30 flags.
#[test]
fn help_groups_the_flags_under_selection_checks_clients_and_output() {
    let w = World::new();
    let want: &[(&str, &[&str])] = &[
        (
            "Selection",
            &[
                "--root",
                "--prefix",
                "--server",
                "--name-suffix",
                "--registered",
                "--mcp-json",
                "--config",
            ],
        ),
        (
            "Checks",
            &[
                "--expect-commit",
                "--content",
                "--trusted-signers",
                "--strict",
                "--require-live",
                "--handshake-timeout",
            ],
        ),
        (
            "Clients",
            &["--client ", "--claude", "--client-timeout", "--mcp-timeout"],
        ),
        (
            "Output",
            &["--format", "--json", "--quiet", "--verbose", "--color"],
        ),
    ];
    let commands: &[&[&str]] = &[
        &["install"],
        &["uninstall"],
        &["status"],
        &["verify-identity"],
        &["promote"],
        &["rollback"],
        &["prune"],
        &["render-mcp"],
        &["verify-vendor"],
        &["manifest", "verify"],
    ];
    let mut seen = std::collections::BTreeSet::new();
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let help = w.run(&args).code(0).stdout.clone();
        let sections = help_sections(&help);
        for (heading, flags) in want {
            for flag in *flags {
                let long = format!("--{}", flag.trim_start_matches('-').trim_end());
                // A flag's own line: it starts with the flag (`-r, --root <ROOT>`), unlike
                // an example's or a description's.
                let listed = |text: &str| {
                    text.lines().any(|l| {
                        let l = l.trim_start();
                        l.starts_with('-')
                            && l.split([',', ' '])
                                .take(3)
                                .any(|word| word == long.as_str())
                    })
                };
                if !listed(&help) {
                    continue; // not a flag of this command
                }
                let under: Vec<&str> = sections
                    .iter()
                    .filter(|(_, text)| listed(text))
                    .map(|(h, _)| h.as_str())
                    .collect();
                assert_eq!(
                    under,
                    vec![*heading],
                    "`mcp-deploy {} --help` lists {long} under {under:?}, not {heading}:\n{help}",
                    command.join(" ")
                );
                seen.insert(long);
            }
        }
    }
    // Every heading's flags were met on some command: the table above is not vacuous.
    for (_, flags) in want {
        for flag in *flags {
            let long = format!("--{}", flag.trim_start_matches('-').trim_end());
            assert!(seen.contains(&long), "no command lists {long}");
        }
    }
}

/// Issue 23, item 6: the common flags have short forms (-r/--root, -p/--prefix, -s/--server,
/// -e/--expect-commit, -n/--dry-run, -j/--jobs, -q, -v), and a short form means exactly its
/// long flag: the same command line spelled both ways prints the same thing.
#[test]
fn short_forms_mean_their_long_flags() {
    let w = World::new();
    let opt = w.sample();
    let ct = opt.join("codetools");
    let (root, prefix) = (opt.to_str().unwrap(), ct.to_str().unwrap());
    let pairs: &[(&[&str], &[&str])] = &[
        (
            &[
                "install",
                "-n",
                "-r",
                root,
                "-s",
                "codetools",
                "-e",
                CT_SHA,
                "--name-suffix",
                "-test",
            ],
            &[
                "install",
                "--dry-run",
                "--root",
                root,
                "--server",
                "codetools",
                "--expect-commit",
                CT_SHA,
                "--name-suffix",
                "-test",
            ],
        ),
        (
            &["verify-identity", "-p", prefix, "-e", CT_SHA, "--json"],
            &[
                "verify-identity",
                "--prefix",
                prefix,
                "--expect-commit",
                CT_SHA,
                "--json",
            ],
        ),
        (
            &["verify-identity", "-p", prefix, "-e", CT_SHA, "-q"],
            &[
                "verify-identity",
                "--prefix",
                prefix,
                "--expect-commit",
                CT_SHA,
                "--quiet",
            ],
        ),
        (
            &["prune", "-p", prefix, "--keep", "1", "-n"],
            &["prune", "--prefix", prefix, "--keep", "1", "--dry-run"],
        ),
        (
            &[
                "manifest",
                "create",
                "-j",
                "1",
                &format!("{prefix}/current"),
            ],
            &[
                "manifest",
                "create",
                "--jobs",
                "1",
                &format!("{prefix}/current"),
            ],
        ),
    ];
    for (short, long) in pairs {
        let (a, b) = (w.run(short), w.run(long));
        assert_eq!(
            (a.code, &a.stdout),
            (b.code, &b.stdout),
            "{:?} and {:?} differ:\n{}\n{}",
            short,
            long,
            a.shown,
            b.shown
        );
    }
}

/// Issue 35, item 7 (one state, one verdict): from the same directory, on the same state,
/// status, reconcile, install, verify-identity and verify-identity --only-deployed all fail on
/// a same-name entry that shadows the user-scope one — here (a local scope of the working
/// directory, a `.mcp.json` claude finds from it) or elsewhere (another project's local
/// scope) — and all pass once it is gone. Before, status, reconcile and install passed (a
/// warning) where verify-identity failed.
#[test]
fn every_command_gives_a_shadow_the_same_verdict() {
    let w = World::with_real_claude();
    w.sample();
    w.on_sample("install", &[]).code(0);
    let work = w.root().join("work");
    let opt = w.opt();
    let (ct, or) = (
        format!("codetools={CT_SHA}"),
        format!("orchestrata={OR_SHA}"),
    );
    let verdicts = |w: &World| -> Vec<(&'static str, i32)> {
        let vi = [
            "verify-identity",
            "--root",
            opt.to_str().unwrap(),
            "--name-suffix",
            "-test",
        ];
        let commit = ["--expect-commit", &ct, "--expect-commit", &or];
        vec![
            ("status", w.on_sample("status", &[]).code),
            ("reconcile", w.on_sample("reconcile", &["--dry-run"]).code),
            ("install", w.on_sample("install", &[]).code),
            ("verify-identity", w.run(&[&vi[..], &commit].concat()).code),
            (
                "--only-deployed",
                w.run(&[&vi[..], &commit, &["--only-deployed"]].concat())
                    .code,
            ),
        ]
    };
    let set_projects = |projects: serde_json::Value| {
        let mut cfg: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(w.claude_json()).unwrap()).unwrap();
        cfg["projects"] = projects;
        fs::write(w.claude_json(), cfg.to_string()).unwrap();
    };
    let other = json!({"mcpServers": {"codetools-test": {"command": "/bin/true"}}});
    type State<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let states: Vec<State> = vec![
        (
            "local scope of the working directory",
            Box::new(|| set_projects(json!({work.to_str().unwrap(): other.clone()}))),
        ),
        (
            "local scope of another project",
            Box::new(|| set_projects(json!({"/srv/app": other.clone()}))),
        ),
        (
            ".mcp.json of the working directory",
            Box::new(|| {
                fs::write(work.join(".mcp.json"), other.to_string()).unwrap();
            }),
        ),
    ];
    for (state, make) in &states {
        make();
        for (command, code) in verdicts(&w) {
            assert_eq!(code, 1, "{state}: {command} does not fail");
        }
        set_projects(json!({}));
        let _ = fs::remove_file(work.join(".mcp.json"));
        for (command, code) in verdicts(&w) {
            assert_eq!(code, 0, "{state} undone: {command} does not pass");
        }
    }
}
