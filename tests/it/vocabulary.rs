//! Issue 23, items 1-4: one name per concept on every command. `--root ROOT` is a directory
//! of deployments (ROOT/<server>), `--prefix DIR` one deployment, and a directory of the other
//! kind gets the exact command that would work; `verify-identity --root` checks several
//! servers in one report; `--expect-commit` takes SHA or NAME=SHA everywhere; the flat
//! document is `--registered FILE` everywhere, `--mcp-json FILE` kept as the seed's name.
//! With the real claude wherever a client is involved.

use std::path::Path;

use crate::harness::*;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The sample under `opt/`, installed as codetools-test and orchestrata-test.
fn installed(w: &World) -> std::path::PathBuf {
    let opt = w.sample();
    w.on_sample("install", &[]).code(0);
    opt
}

/// The command a `help:` line gives after its `: ` (the first one followed by `mcp-deploy`),
/// as arguments, up to an optional parenthesis: how a user would copy it.
fn suggested(stderr: &str) -> Vec<String> {
    let help = stderr
        .lines()
        .find(|l| l.starts_with("help:"))
        .unwrap_or_else(|| panic!("no help: line in {stderr}"));
    let at = help
        .find("mcp-deploy ")
        .unwrap_or_else(|| panic!("no command in {help}"));
    let cmd = help[at + "mcp-deploy ".len()..].split(" (").next().unwrap();
    cmd.split(' ').map(str::to_string).collect()
}

fn run_suggested(w: &World, stderr: &str) -> Run {
    let args = suggested(stderr);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    w.run(&args)
}

// Item 1 ------------------------------------------------------------------------------------

/// The headline: a directory of deployments given as verify-identity's --prefix said
/// "name the server with --server NAME", and doing that gave three FAILs about ROOT/current.
/// Now: exit 2 and the user's own command, with the --prefix that works.
#[test]
fn verify_identity_prefix_given_a_directory_of_deployments_names_the_exact_command() {
    let w = World::with_real_claude();
    let opt = installed(&w);
    let r = w.run(&[
        "verify-identity",
        "--prefix",
        s(&opt),
        "--name",
        "codetools-test",
        "--expect-commit",
        CT_SHA,
    ]);
    r.code(2)
        .stderr_has(&format!(
            "error: --prefix {} is a directory of deployments (ROOT/<server>), not one deployment",
            opt.display()
        ))
        .stderr_has(&format!(
            "help: {} holds the deployments codetools, orchestrata: mcp-deploy verify-identity \
             --prefix {}/codetools --name codetools-test --expect-commit {CT_SHA}",
            opt.display(),
            opt.display()
        ))
        .stderr_has(&format!("--root {}", opt.display()));
    assert!(!r.stderr.contains("--server NAME"), "{}", r.shown);
    // The command it gives works as it is.
    run_suggested(&w, &r.stderr)
        .code(0)
        .stdout_has("ok   commit");
    // Naming the server, as the old help said, no longer checks ROOT/current: the same help.
    let r = w.run(&[
        "verify-identity",
        "--prefix",
        s(&opt),
        "--server",
        "orchestrata",
        "--name",
        "orchestrata-test",
        "--expect-commit",
        OR_SHA,
    ]);
    r.code(2).stderr_has(&format!(
        "mcp-deploy verify-identity --prefix {}/orchestrata --server orchestrata",
        opt.display()
    ));
    assert!(!r.said().contains("FAIL"), "{}", r.shown);
    run_suggested(&w, &r.stderr).code(0);
}

/// `--root` on install, uninstall and status; `--prefix ROOT` as before, documented as kept.
#[test]
fn install_uninstall_status_take_root_and_still_take_prefix() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let on =
        |cmd: &str, flag: &str| w.run(&[cmd, flag, s(&opt), "--name-suffix", "-test", "--json"]);
    on("install", "--root").code(0);
    assert!(w.user_servers().contains_key("codetools-test"));
    assert!(w.user_servers().contains_key("orchestrata-test"));
    let st = on("status", "--root");
    st.code(0);
    assert_eq!(
        st.json()["servers"].as_array().unwrap().len(),
        2,
        "{}",
        st.shown
    );
    on("status", "--prefix").code(0);
    on("uninstall", "--root").code(0);
    assert!(!w.user_servers().contains_key("codetools-test"));
    on("install", "--prefix").code(0);
    on("uninstall", "--prefix").code(0);
    // One name for one thing: both at once is a usage error.
    w.run(&["status", "--root", s(&opt), "--prefix", s(&opt)])
        .code(2)
        .stderr_has("cannot be used with");
}

/// `--root` means a directory of deployments only: one server's own deployment given as the
/// root is refused with the --root that works (`--prefix` keeps taking it, as it always did).
#[test]
fn status_root_given_one_deployment_names_the_root_form_that_works() {
    let w = World::with_real_claude();
    let opt = installed(&w);
    let ct = opt.join("codetools");
    let r = w.run(&["status", "--root", s(&ct), "--name-suffix", "-test"]);
    r.code(2)
        .stderr_has(&format!(
            "error: --root {} is the deployment of codetools itself, not a directory of \
             deployments (ROOT/<server>)",
            ct.display()
        ))
        .stderr_has(&format!(
            "help: mcp-deploy status --root {} --name-suffix -test --server codetools",
            opt.display()
        ));
    let ok = run_suggested(&w, &r.stderr);
    ok.code(0).stdout_has("codetools");
    assert!(!ok.said().contains("orchestrata"), "{}", ok.shown);
    // install refuses it the same way, before any client call.
    w.run(&["install", "--root", s(&ct), "--name-suffix", "-test"])
        .code(2)
        .stderr_has("is the deployment of codetools itself");
}

/// render-mcp, promote, rollback and prune: --prefix is one deployment, and a directory of
/// them is refused with the command that would work; prune writes nothing there.
#[test]
fn single_deployment_commands_refuse_a_directory_of_deployments_with_the_command_that_works() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let cases: [(&[&str], String); 4] = [
        (
            &["render-mcp", "--prefix", s(&opt)],
            format!("mcp-deploy render-mcp --prefix {}/codetools", opt.display()),
        ),
        (
            &[
                "promote",
                "--prefix",
                s(&opt),
                "--release",
                CT_SHA,
                "--name-suffix",
                "-test",
            ],
            format!(
                "mcp-deploy promote --prefix {}/codetools --release {CT_SHA} --name-suffix -test",
                opt.display()
            ),
        ),
        (
            &["rollback", "--prefix", s(&opt), "--name-suffix", "-test"],
            format!(
                "mcp-deploy rollback --prefix {}/codetools --name-suffix -test",
                opt.display()
            ),
        ),
        (
            &["prune", "--prefix", s(&opt), "--keep", "1"],
            format!(
                "mcp-deploy prune --prefix {}/codetools --keep 1",
                opt.display()
            ),
        ),
    ];
    for (args, want) in cases {
        let r = w.run(args);
        r.code(2)
            .stderr_has("is a directory of deployments (ROOT/<server>), not one deployment")
            .stderr_has(&format!(
                "help: {} holds the deployments codetools, orchestrata: {want}",
                opt.display()
            ));
    }
    assert!(
        !opt.join(".mcp-deploy").exists(),
        "prune wrote under the root"
    );
    assert!(!opt.join("mcp").exists(), "render-mcp wrote under the root");
    // The suggested render-mcp works.
    let r = w.run(&["render-mcp", "--prefix", s(&opt)]);
    run_suggested(&w, &r.stderr).code(0);
}

// Item 2 ------------------------------------------------------------------------------------

/// `verify-identity --root ROOT --expect-commit NAME=SHA ...`: every server its own report in
/// the one report, one exit code.
#[test]
fn verify_identity_root_checks_every_server_in_one_report() {
    let w = World::with_real_claude();
    let opt = installed(&w);
    let ct = format!("codetools={CT_SHA}");
    let or = format!("orchestrata={OR_SHA}");
    let verify = |extra: &[&str]| {
        let mut args = vec![
            "verify-identity",
            "--root",
            s(&opt),
            "--name-suffix",
            "-test",
        ];
        args.extend_from_slice(extra);
        w.run(&args)
    };
    let r = verify(&["--expect-commit", &ct, "--expect-commit", &or, "--json"]);
    r.code(0);
    let names: Vec<(String, String)> = r.json()["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["registered_name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("codetools".into(), "codetools-test".into()),
            ("orchestrata".into(), "orchestrata-test".into())
        ],
        "{}",
        r.shown
    );
    // One server wrong: exit 1, the other still passes in the same report.
    let wrong = format!("orchestrata={CT_SHA}");
    let r = verify(&["--expect-commit", &ct, "--expect-commit", &wrong, "--json"]);
    r.code(1);
    let servers = r.json()["servers"].as_array().unwrap().clone();
    let commit_ok = |i: usize| {
        servers[i]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "commit")
            .unwrap()["ok"]
            .clone()
    };
    assert_eq!(commit_ok(0), true, "{}", r.shown);
    assert_eq!(commit_ok(1), false, "{}", r.shown);
    // The human report names both.
    verify(&["--expect-commit", &ct, "--expect-commit", &or])
        .code(0)
        .stdout_has("codetools (registered as codetools-test)")
        .stdout_has("orchestrata (registered as orchestrata-test)");
    // --server narrows it (repeatable), and then a bare sha names its one server.
    let r = verify(&["--server", "codetools", "--expect-commit", CT_SHA, "--json"]);
    r.code(0);
    assert_eq!(
        r.json()["servers"].as_array().unwrap().len(),
        1,
        "{}",
        r.shown
    );
    verify(&[
        "--server",
        "codetools",
        "--server",
        "orchestrata",
        "--expect-commit",
        &ct,
        "--expect-commit",
        &or,
    ])
    .code(0);
}

/// Under --root, a selected server without a commit, a commit for a server not selected or
/// not declared, a bare sha for several servers, and --root with --prefix are exit 2, each
/// with a help line.
#[test]
fn verify_identity_root_refuses_a_server_without_a_commit_and_a_commit_without_a_server() {
    let w = World::new();
    let opt = w.sample();
    let ct = format!("codetools={CT_SHA}");
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify-identity", "--root", s(&opt)];
        args.extend_from_slice(extra);
        w.run(&args)
    };
    verify(&["--expect-commit", &ct])
        .code(2)
        .stderr_has("error: no --expect-commit for orchestrata, which is selected")
        .stderr_has(
            "help: give --expect-commit orchestrata=SHA, or narrow the check with --server NAME",
        );
    verify(&[
        "--server",
        "codetools",
        "--expect-commit",
        &ct,
        "--expect-commit",
        &format!("orchestrata={OR_SHA}"),
    ])
    .code(2)
    .stderr_has("names \"orchestrata\", which is not selected (selected: codetools)")
    .stderr_has("select orchestrata too: --server orchestrata");
    verify(&[
        "--expect-commit",
        &ct,
        "--expect-commit",
        &format!("nope={OR_SHA}"),
    ])
    .code(2)
    .stderr_has(
        "names \"nope\", which is not a declared server (declared: codetools, orchestrata)",
    );
    verify(&["--expect-commit", CT_SHA])
        .code(2)
        .stderr_has("is a bare sha, but 2 servers are selected (codetools, orchestrata)")
        .stderr_has("help: name the server of each commit, e.g. --expect-commit codetools=SHA --expect-commit orchestrata=SHA");
    verify(&[
        "--prefix",
        s(&opt.join("codetools")),
        "--expect-commit",
        CT_SHA,
    ])
    .code(2)
    .stderr_has("'--root <ROOT>' cannot be used with '--prefix <DIR>'")
    .stderr_has("help:");
    verify(&[
        "--expect-commit",
        &ct,
        "--expect-commit",
        &format!("orchestrata={OR_SHA}"),
        "--name",
        "x",
    ])
    .code(2)
    .stderr_has("--name x names one registration, but 2 servers are checked");
}

// Item 3 ------------------------------------------------------------------------------------

/// install took only NAME=SHA; the bare sha verify-identity takes works when one server is
/// selected, and a wrong one fails the gate before any registration.
#[test]
fn install_takes_a_bare_expect_commit_when_one_server_is_selected() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let install = |extra: &[&str]| {
        let mut args = vec!["install", "--root", s(&opt), "--name-suffix", "-test"];
        args.extend_from_slice(extra);
        w.run(&args)
    };
    install(&["--server", "codetools", "--expect-commit", OR_SHA])
        .code(1)
        .stdout_has("FAIL commit");
    assert!(!w.user_servers().contains_key("codetools-test"));
    install(&["--server", "codetools", "--expect-commit", CT_SHA]).code(0);
    assert!(w.user_servers().contains_key("codetools-test"));
    // The server's own prefix selects one server too.
    w.run(&[
        "install",
        "--prefix",
        s(&opt.join("orchestrata")),
        "--name-suffix",
        "-test",
        "--expect-commit",
        OR_SHA,
    ])
    .code(0);
    // Two servers: a bare sha is ambiguous, refused before any client call.
    install(&["--expect-commit", CT_SHA])
        .code(2)
        .stderr_has("is a bare sha, but 2 servers are selected")
        .stderr_has("--expect-commit codetools=SHA --expect-commit orchestrata=SHA");
}

/// verify-identity --prefix takes NAME=SHA as install does, and both take the same forms.
#[test]
fn expect_commit_takes_sha_or_name_equals_sha_on_both_commands() {
    let w = World::with_real_claude();
    let opt = installed(&w);
    let ct = opt.join("codetools");
    for form in [CT_SHA.to_string(), format!("codetools={CT_SHA}")] {
        w.run(&[
            "verify-identity",
            "--prefix",
            s(&ct),
            "--name-suffix",
            "-test",
            "--expect-commit",
            &form,
        ])
        .code(0);
        w.run(&[
            "install",
            "--root",
            s(&opt),
            "--server",
            "codetools",
            "--name-suffix",
            "-test",
            "--expect-commit",
            &form,
        ])
        .code(0);
    }
    for cmd in ["install", "verify-identity"] {
        w.run(&[cmd, "--prefix", s(&ct), "--expect-commit", "=abc"])
            .code(2)
            .stderr_has("has no server name before the =");
    }
}

// Item 4 ------------------------------------------------------------------------------------

/// `--registered FILE` on every command that reads or writes the flat document, with
/// `--mcp-json FILE` (the seed's name) the same; both at once is a usage error.
#[test]
fn every_command_that_reads_the_flat_document_takes_registered_and_mcp_json() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let ct = opt.join("codetools");
    let doc = w.root().join("elsewhere/registered.json");
    std::fs::create_dir_all(doc.parent().unwrap()).unwrap();
    let doc = s(&doc);
    let sample = |cmd: &str, flag: &str| {
        w.run(&[cmd, "--root", s(&opt), "--name-suffix", "-test", flag, doc])
    };
    sample("install", "--mcp-json").code(0);
    assert!(
        Path::new(doc).exists(),
        "install --mcp-json wrote elsewhere"
    );
    assert!(
        !w.registered().exists(),
        "install --mcp-json wrote the default document"
    );
    sample("status", "--registered").code(0);
    sample("status", "--mcp-json")
        .code(0)
        .stdout_has(&format!("registration document: {doc}"));
    for flag in ["--registered", "--mcp-json"] {
        w.run(&[
            "verify-identity",
            "--prefix",
            s(&ct),
            "--name-suffix",
            "-test",
            "--expect-commit",
            CT_SHA,
            flag,
            doc,
        ])
        .code(0);
        w.run(&[
            "prune",
            "--prefix",
            s(&ct),
            "--keep",
            "1",
            "--dry-run",
            flag,
            doc,
        ])
        .code(0)
        .stdout_has(doc);
        w.run(&[
            "promote",
            "--prefix",
            s(&ct),
            "--release",
            CT_SHA,
            "--name-suffix",
            "-test",
            "--dry-run",
            flag,
            doc,
        ])
        .code(0);
    }
    sample("uninstall", "--mcp-json").code(0);
    let left: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(doc).unwrap()).unwrap();
    assert_eq!(left["mcpServers"], serde_json::json!({}), "{left}");
    // Both names at once: exit 2 on every command that has them.
    let both: [&[&str]; 5] = [
        &["install", "--root", s(&opt)],
        &["uninstall", "--root", s(&opt)],
        &["status", "--root", s(&opt)],
        &[
            "verify-identity",
            "--prefix",
            s(&ct),
            "--expect-commit",
            CT_SHA,
        ],
        &["prune", "--prefix", s(&ct), "--keep", "1"],
    ];
    for args in both {
        let mut args = args.to_vec();
        args.extend_from_slice(&["--registered", doc, "--mcp-json", doc]);
        w.run(&args)
            .code(2)
            .stderr_has("'--registered <FILE>' cannot be used with '--mcp-json <FILE>'");
    }
    w.run(&[
        "rollback",
        "--prefix",
        s(&ct),
        "--registered",
        doc,
        "--mcp-json",
        doc,
    ])
    .code(2)
    .stderr_has("cannot be used with");
}

/// The promote pipeline's entry point takes `--root ROOT` as it takes `--prefix ROOT`: the
/// scratch names, never the real ones, from ROOT/S.
#[test]
fn promote_entry_point_takes_root_as_it_takes_prefix() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/install-claude-config.sh"
    );
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[script, "--root", s(&opt)],
        &[("MCP_DEPLOY_BIN", env!("CARGO_BIN_EXE_mcp-deploy"))],
    );
    r.code(0);
    let mut names: Vec<String> = w.user_servers().keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["codetools-test", "orchestrata-test"], "{}", r.shown);
    w.run_program(Path::new("/bin/bash"), &[script, "--help"], &[])
        .code(0)
        .stdout_has("[--root ROOT | --prefix ROOT]");
}

/// Issue 36.11: one vocabulary, still. The top-level `--help`, the README's checked example
/// and the man pages' examples gave a directory of deployments as `install --prefix
/// /tmp/demo` (its spelling is `--root`); docs/operations.md said "`--mcp-json` defaults
/// to…" (its name is `--registered`); the top-level environment list named five client
/// variables of seven, MCP_DEPLOY_COPILOT missing.
#[test]
fn examples_give_a_root_as_root_and_the_environment_names_every_clients_variable() {
    let w = World::new();
    let mut texts = vec![("mcp-deploy --help".to_string(), w.run(&["--help"]).stdout)];
    for command in ["install", "uninstall", "status"] {
        let help = w.run(&[command, "--help"]).stdout;
        texts.push((format!("mcp-deploy {command} --help"), help));
        let man = w.run(&["man", command]).stdout;
        texts.push((format!("mcp-deploy man {command}"), man));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for doc in ["README.md", "docs/commands.md", "docs/operations.md"] {
        texts.push((doc.into(), std::fs::read_to_string(repo.join(doc)).unwrap()));
    }
    for (what, text) in &texts {
        for stale in [
            "install --prefix /tmp/demo ",
            "uninstall --prefix /tmp/demo ",
            "`--mcp-json` defaults",
        ] {
            assert!(!text.contains(stale), "{what} says {stale:?}");
        }
    }
    // The environment list covers every client with a binary, by the one pattern.
    let top = w.run(&["--help"]).stdout;
    assert!(top.contains("MCP_DEPLOY_<CLIENT>"), "{top}");
    let clients = w.run(&["clients", "--format", "json"]).json();
    for c in clients["clients"].as_array().unwrap() {
        if let Some(var) = c["env"].as_str() {
            assert!(var.starts_with("MCP_DEPLOY_"), "{c}");
        }
    }
}

/// Issue 36.11: `-p` was a directory of deployments for install, uninstall, status and policy
/// (the short form of `--prefix ROOT`) and one deployment for render-mcp, verify-identity,
/// promote, rollback and prune. Now `-p DIR` is one deployment everywhere: a directory of
/// deployments given as `-p` is refused with the `--root` command that takes it (which
/// works), and `-p` of one deployment does what `--prefix` of it does. The next instance:
/// verify-identity's help line for `-p ROOT` kept `-p ROOT` beside the `--prefix` it added,
/// a command clap refuses; it now replaces it.
#[test]
fn short_p_is_one_deployment_in_every_command() {
    let w = World::with_real_claude();
    let opt = installed(&w);
    let ct = opt.join("codetools");
    for command in ["install", "uninstall", "status"] {
        let r = w.run(&[command, "-p", s(&opt), "--name-suffix", "-test"]);
        r.code(2)
            .stderr_has(&format!(
                "error: -p {} is a directory of deployments (ROOT/<server>), not one deployment",
                opt.display()
            ))
            .stderr_has(&format!(
                "help: {} holds the deployments codetools, orchestrata: mcp-deploy {command} \
                 --root {} --name-suffix -test",
                opt.display(),
                opt.display()
            ));
        if command == "status" {
            run_suggested(&w, &r.stderr).code(0);
        }
        // -p of one deployment: what --prefix of it does.
        let args = |flag: &'static str| -> Vec<&str> {
            let mut a = vec![command, flag, s(&ct), "--name-suffix", "-test", "--json"];
            if command != "status" {
                a.push("--dry-run");
            }
            a
        };
        let (a, b) = (w.run(&args("-p")), w.run(&args("--prefix")));
        let summary = |r: &Run| (r.code, r.json()["servers"].clone());
        assert_eq!(summary(&a), summary(&b), "{}\n{}", a.shown, b.shown);
        assert!(
            a.said().contains("codetools-test") && !a.said().contains("orchestrata-test"),
            "{}",
            a.shown
        );
    }
    // -p is one deployment, so several --server are refused.
    w.run(&[
        "status",
        "-p",
        s(&ct),
        "-s",
        "codetools",
        "-s",
        "orchestrata",
    ])
    .code(2)
    .stderr_has(&format!(
        "help: for several servers give the directory that holds them: -r {}",
        opt.display()
    ));
    // verify-identity -p ROOT: the command it gives replaces -p, and works.
    let r = w.run(&[
        "verify-identity",
        "-p",
        s(&opt),
        "--name",
        "codetools-test",
        "-e",
        CT_SHA,
    ]);
    r.code(2).stderr_has(&format!(
        "mcp-deploy verify-identity --prefix {}/codetools --name codetools-test -e {CT_SHA}",
        opt.display()
    ));
    run_suggested(&w, &r.stderr).code(0);
}
