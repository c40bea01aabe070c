//! Attacks through inputs (issue 10, items 6, 10-13): bad input files that would hang or eat
//! memory, a deployment that install must refuse before it registers anything, entries that
//! would leak a secret into the ledger, `${VAR:-secret}` defaults, and content in a prefix
//! layout. Registrations go through the real claude CLI.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use super::support::*;
use crate::harness::*;

const OTHER_SHA: &str = "badbadbadbadbadbadbadbadbadbadbadbadbad0";
/// OTHER_SHA as a human report shows it (issue 36, item 10: 12 digits).
const OTHER_SHORT: &str = "badbadbadbad";
const TOKEN: &str = "ghp_attackerTokenValue0123456789abcdef";

fn world() -> World {
    let w = World::with_real_claude();
    w.sample();
    w
}

fn s(p: PathBuf) -> String {
    p.display().to_string()
}

fn ct(w: &World) -> PathBuf {
    w.opt().join("codetools")
}

fn release(w: &World) -> PathBuf {
    ct(w).join("releases").join(CT_SHA)
}

fn orch(w: &World) -> PathBuf {
    w.opt().join("orchestrata")
}

/// `install --prefix opt --name-suffix -test --server SERVER EXTRA...`
fn install(w: &World, server: &str, extra: &[&str]) -> Vec<String> {
    let mut v = args(&["install", "--prefix"]);
    v.push(s(w.opt()));
    v.extend(args(&["--name-suffix", "-test", "--server", server]));
    v.extend(args(extra));
    v
}

fn verify_ct(w: &World, doc: &str, extra: &[&str]) -> Vec<String> {
    let mut v = args(&["verify-identity", "--prefix"]);
    v.push(s(ct(w)));
    v.extend(args(&["--expect-commit", CT_SHA, "--mcp-json", doc]));
    v.extend(args(extra));
    v
}

/// A flat document registering codetools as declared.
fn good_doc(w: &World) -> String {
    let doc = w.root().join("doc.json");
    flat_doc(
        &doc,
        "codetools",
        &format!("{}/bin/codetools", ct(w).display()),
        &["mcp", "serve"],
    );
    s(doc)
}

/// The client config, the flat document, the rendered documents and the ledger are as the
/// setup left them: nothing was registered or written.
fn nothing_registered(w: &World) {
    assert!(
        !w.claude_json().exists() || !w.user_servers().contains_key("codetools-test"),
        "codetools-test was registered"
    );
    assert!(!w.registered().exists(), "the flat document was written");
    assert!(
        !ct(w).join("mcp/codetools.mcp.json").exists(),
        "the rendered document was written"
    );
    assert!(
        !w.root()
            .join("home/.local/state/mcp-deploy/ledger.ndjson")
            .exists(),
        "the ledger was written"
    );
}

fn orchestrata_not_registered(w: &World) {
    assert!(!w.claude_json().exists() || !w.user_servers().contains_key("orchestrata-test"));
    assert!(!w.registered().exists());
}

// ---- bad input files: refused at once, never read -----------------------------------------

attack_rows! {
    mod bad_input_files_are_refused_at_once in world;
    manifest_sha256_to_dev_zero_manifest_verify: Attack {
        name: "MANIFEST.sha256 -> /dev/zero (manifest verify)",
        setup: |w| {
            link(&release(w).join("MANIFEST.sha256"), "/dev/zero");
            let mut v = args(&["manifest", "verify"]);
            v.push(s(release(w)));
            v
        },
        code: 2,
        evidence: &["MANIFEST.sha256", "a character device", "help:"],
        absent: &[],
        after: nothing,
    },
    manifest_sha256_is_a_fifo_manifest_verify: Attack {
        name: "MANIFEST.sha256 is a FIFO (manifest verify)",
        setup: |w| {
            mkfifo(&release(w).join("MANIFEST.sha256"));
            let mut v = args(&["manifest", "verify"]);
            v.push(s(release(w)));
            v
        },
        code: 2,
        evidence: &["MANIFEST.sha256", "a FIFO"],
        absent: &[],
        after: nothing,
    },
    manifest_sha256_of_1_gib_manifest_verify: Attack {
        name: "MANIFEST.sha256 of 1 GiB (manifest verify)",
        setup: |w| {
            sparse(&release(w).join("MANIFEST.sha256"), 1 << 30);
            let mut v = args(&["manifest", "verify"]);
            v.push(s(release(w)));
            v
        },
        code: 2,
        evidence: &["larger than 64 MiB, the most a content manifest may be"],
        absent: &[],
        after: nothing,
    },
    manifest_sha256_is_a_fifo_verify_identity_content: Attack {
        name: "MANIFEST.sha256 is a FIFO (verify-identity --content)",
        setup: |w| {
            mkfifo(&release(w).join("MANIFEST.sha256"));
            let doc = good_doc(w);
            verify_ct(w, &doc, &["--content"])
        },
        code: 1,
        evidence: &["FAIL content", "a FIFO"],
        absent: &[],
        after: nothing,
    },
    mcp_json_is_a_fifo_verify_identity: Attack {
        name: "--mcp-json is a FIFO (verify-identity)",
        setup: |w| {
            let p = w.root().join("doc.json");
            mkfifo(&p);
            verify_ct(w, &s(p), &[])
        },
        code: 2,
        evidence: &[
            "doc.json",
            "the flat document must be a regular file",
            "a FIFO",
        ],
        absent: &[],
        after: nothing,
    },
    mcp_json_is_a_directory_verify_identity: Attack {
        name: "--mcp-json is a directory (verify-identity)",
        setup: |w| {
            let p = w.root().join("doc.json");
            fs::create_dir(&p).unwrap();
            verify_ct(w, &s(p), &[])
        },
        code: 2,
        evidence: &["the flat document must be a regular file, but this is a directory"],
        absent: &[],
        after: nothing,
    },
    mcp_json_is_a_socket_verify_identity: Attack {
        name: "--mcp-json is a socket (verify-identity)",
        setup: |w| {
            let p = w.root().join("doc.json");
            // The listener is dropped at once; the socket file stays.
            std::os::unix::net::UnixListener::bind(&p).unwrap();
            verify_ct(w, &s(p), &[])
        },
        code: 2,
        evidence: &["this is a socket"],
        absent: &[],
        after: nothing,
    },
    mcp_json_of_1_gib_verify_identity: Attack {
        name: "--mcp-json of 1 GiB (verify-identity)",
        setup: |w| {
            let p = w.root().join("doc.json");
            sparse(&p, 1 << 30);
            verify_ct(w, &s(p), &[])
        },
        code: 2,
        evidence: &["larger than 16 MiB, the most a flat document may be"],
        absent: &[],
        after: nothing,
    },
    a_known_project_mcp_json_is_a_fifo_or_dev_zero_verify_identity: Attack {
        // Found by the red team: the .mcp.json of every project directory .claude.json names
        // was read whole and unbounded: a FIFO hung verify-identity, /dev/zero ate memory.
        name: "a known project's .mcp.json is a FIFO or /dev/zero (verify-identity)",
        setup: |w| {
            let (fifo, zero) = (w.root().join("p-fifo"), w.root().join("p-zero"));
            fs::create_dir_all(&fifo).unwrap();
            fs::create_dir_all(&zero).unwrap();
            mkfifo(&fifo.join(".mcp.json"));
            link(&zero.join(".mcp.json"), "/dev/zero");
            let config = serde_json::json!({"mcpServers": {}, "projects": {
                s(fifo): {"mcpServers": {}}, s(zero): {"mcpServers": {}}}});
            fs::write(w.claude_json(), config.to_string()).unwrap();
            let doc = good_doc(w);
            verify_ct(w, &doc, &[])
        },
        code: 1,
        evidence: &[
            "FAIL mcp-registration",
            "p-fifo/.mcp.json (mcp-deploy cannot read it",
            "a FIFO",
            "p-zero/.mcp.json (mcp-deploy cannot read it",
        ],
        absent: &[],
        after: nothing,
    },
    config_is_a_fifo_render_mcp: Attack {
        name: "--config is a FIFO (render-mcp)",
        setup: |w| {
            let p = w.root().join("servers.json");
            mkfifo(&p);
            let mut v = args(&["render-mcp", "--config"]);
            v.push(s(p));
            v.extend(args(&["--prefix"]));
            v.push(s(ct(w)));
            v
        },
        code: 2,
        evidence: &[
            "servers.json",
            "the declaration must be a regular file",
            "a FIFO",
        ],
        absent: &[],
        after: nothing,
    },
    a_declared_template_is_a_fifo_render_mcp: Attack {
        name: "a declared template is a FIFO (render-mcp)",
        setup: |w| {
            let cfg = w.root().join("servers.json");
            fs::write(
                &cfg,
                r#"{"servers":[{"name":"codetools","prefix":"/opt/codetools","layout":"release","template":"t.json"}]}"#,
            )
            .unwrap();
            mkfifo(&w.root().join("t.json"));
            let mut v = args(&["render-mcp", "--config"]);
            v.push(s(cfg));
            v.extend(args(&["--prefix"]));
            v.push(s(ct(w)));
            v
        },
        code: 2,
        evidence: &["t.json", "the template must be a regular file"],
        absent: &[],
        after: nothing,
    },
    registered_is_a_fifo_install: Attack {
        name: "--registered is a FIFO (install)",
        setup: |w| {
            let p = w.root().join("reg.json");
            mkfifo(&p);
            let mut v = install(w, "codetools", &["--registered"]);
            v.push(s(p));
            v
        },
        code: 2,
        evidence: &["reg.json", "a FIFO"],
        absent: &[],
        after: |w| {
            assert!(!w.claude_json().exists() || !w.user_servers().contains_key("codetools-test"))
        },
    },
    the_journal_is_a_fifo_install: Attack {
        name: "the journal is a FIFO (install)",
        setup: |w| {
            mkfifo(&w.config_dir().join(".mcp-deploy.journal.json"));
            install(w, "codetools", &[])
        },
        code: 2,
        evidence: &[
            ".mcp-deploy.journal.json",
            "the journal must be a regular file",
        ],
        absent: &[],
        after: nothing_registered,
    },
    the_client_config_claude_json_is_a_fifo_install: Attack {
        name: "the client config .claude.json is a FIFO (install)",
        setup: |w| {
            mkfifo(&w.claude_json());
            install(w, "codetools", &[])
        },
        code: 2,
        evidence: &[
            ".claude.json",
            "the client config must be a regular file",
            "a FIFO",
        ],
        absent: &[],
        after: |w| {
            assert!(!w.registered().exists());
        },
    },
    mcp_json_to_dev_urandom_verify_identity: Attack {
        name: "--mcp-json -> /dev/urandom (verify-identity)",
        setup: |w| {
            let p = w.root().join("doc.json");
            link(&p, "/dev/urandom");
            verify_ct(w, &s(p), &[])
        },
        code: 2,
        evidence: &["doc.json", "a character device"],
        absent: &[],
        after: nothing,
    },
    the_client_config_claude_json_to_dev_zero_install: Attack {
        name: "the client config .claude.json -> /dev/zero (install)",
        setup: |w| {
            link(&w.claude_json(), "/dev/zero");
            install(w, "codetools", &[])
        },
        code: 2,
        evidence: &[".claude.json", "a character device"],
        absent: &[],
        after: |w| assert!(!w.registered().exists()),
    },
    manifest_sha256_to_dev_zero_install_content: Attack {
        name: "MANIFEST.sha256 -> /dev/zero (install --content)",
        setup: |w| {
            link(&release(w).join("MANIFEST.sha256"), "/dev/zero");
            install(w, "codetools", &["--content"])
        },
        code: 1,
        evidence: &[
            "FAIL content",
            "a character device",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    version_to_dev_urandom_install: Attack {
        name: "VERSION -> /dev/urandom (install)",
        setup: |w| {
            link(&release(w).join("VERSION"), "/dev/urandom");
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &[
            "FAIL commit",
            "a character device",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    the_ledger_is_a_fifo_install: Attack {
        name: "the ledger is a FIFO (install)",
        setup: |w| {
            let p = w.root().join("ledger.ndjson");
            mkfifo(&p);
            let mut v = install(w, "codetools", &["--ledger"]);
            v.push(s(p));
            v
        },
        code: 2,
        evidence: &["ledger.ndjson", "the ledger must be a regular file"],
        absent: &[],
        after: nothing_registered,
    },
    version_is_a_fifo_install: Attack {
        name: "VERSION is a FIFO (install)",
        setup: |w| {
            mkfifo(&release(w).join("VERSION"));
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &[
            "FAIL commit",
            "the VERSION file must be a regular file",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    version_to_dev_zero_verify_identity: Attack {
        name: "VERSION -> /dev/zero (verify-identity)",
        setup: |w| {
            link(&release(w).join("VERSION"), "/dev/zero");
            let doc = good_doc(w);
            verify_ct(w, &doc, &[])
        },
        code: 1,
        evidence: &["FAIL commit", "a character device"],
        absent: &[],
        after: nothing,
    },
    version_to_a_credentials_file_is_never_quoted_verify_identity: Attack {
        // Found by the red team: the commit check quoted the first 80 bytes of a VERSION that
        // is not a sha, and VERSION may be a link to any file the verifier can read.
        name: "VERSION -> a credentials file is never quoted (verify-identity)",
        setup: |w| {
            let npmrc = w.root().join("home/.npmrc");
            fs::create_dir_all(npmrc.parent().unwrap()).unwrap();
            fs::write(
                &npmrc,
                format!("//registry.npmjs.org/:_authToken={TOKEN}\n"),
            )
            .unwrap();
            link(&release(w).join("VERSION"), npmrc.to_str().unwrap());
            let doc = good_doc(w);
            verify_ct(w, &doc, &[])
        },
        code: 1,
        evidence: &["FAIL commit", "bytes that are not a sha (not shown)"],
        absent: &[TOKEN, "_authToken"],
        after: nothing,
    },
    manifest_sha256_to_a_credentials_file_is_never_quoted_verify_identity_content: Attack {
        // Found by the red team: a malformed manifest line is quoted in the error.
        name: "MANIFEST.sha256 -> a credentials file is never quoted (verify-identity --content)",
        setup: |w| {
            let npmrc = w.root().join("home/.npmrc");
            fs::create_dir_all(npmrc.parent().unwrap()).unwrap();
            fs::write(
                &npmrc,
                format!("//registry.npmjs.org/:_authToken={TOKEN}\n"),
            )
            .unwrap();
            link(&release(w).join("MANIFEST.sha256"), npmrc.to_str().unwrap());
            let doc = good_doc(w);
            verify_ct(w, &doc, &["--content"])
        },
        code: 1,
        evidence: &["FAIL content", "MANIFEST.sha256: it is a symlink"],
        absent: &[TOKEN, "_authToken"],
        after: nothing,
    },
    prefix_version_is_a_fifo_verify_identity: Attack {
        name: "<prefix>/VERSION is a FIFO (verify-identity)",
        setup: |w| {
            mkfifo(&ct(w).join("VERSION"));
            let doc = good_doc(w);
            verify_ct(w, &doc, &[])
        },
        code: 1,
        evidence: &["FAIL commit", "a FIFO"],
        absent: &[],
        after: nothing,
    },
    the_rendered_document_is_a_fifo_render_mcp_replaces_it: Attack {
        name: "the rendered document is a FIFO (render-mcp replaces it)",
        setup: |w| {
            fs::create_dir_all(ct(w).join("mcp")).unwrap();
            mkfifo(&ct(w).join("mcp/codetools.mcp.json"));
            let mut v = args(&["render-mcp", "--prefix"]);
            v.push(s(ct(w)));
            v
        },
        code: 0,
        evidence: &["codetools.mcp.json"],
        absent: &[],
        after: |w| {
            assert!(fs::metadata(ct(w).join("mcp/codetools.mcp.json"))
                .unwrap()
                .is_file())
        },
    },
}

// ---- install is a gate ---------------------------------------------------------------------

attack_rows! {
    mod install_is_a_gate in world;
    dangling_current_install: Attack {
        name: "dangling current (install)",
        setup: |w| {
            fs::remove_dir_all(release(w)).unwrap();
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &["FAIL release", "dangling", "no registration was changed"],
        absent: &[],
        after: nothing_registered,
    },
    the_stable_path_re_pointed_at_another_file_of_the_release_install: Attack {
        // Found by the red team: verify-identity failed this, but the gate (and status) only
        // checked that the declared command resolves inside the release.
        name: "the stable path re-pointed at another file of the release (install)",
        setup: |w| {
            write_exec(&release(w).join("bin/helper"), "#!/bin/sh\n");
            link(&ct(w).join("bin/codetools"), "../current/bin/helper");
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &[
            "FAIL mcp-registration",
            "not to the release's own",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    the_stable_path_re_pointed_at_another_file_of_the_release_status: Attack {
        name: "the stable path re-pointed at another file of the release (status)",
        setup: |w| {
            let first = install(w, "codetools", &[]);
            let refs: Vec<&str> = first.iter().map(String::as_str).collect();
            w.run(&refs).code(0);
            write_exec(&release(w).join("bin/helper"), "#!/bin/sh\n");
            link(&ct(w).join("bin/codetools"), "../current/bin/helper");
            let mut v = args(&["status", "--prefix"]);
            v.push(s(w.opt()));
            v.extend(args(&["--name-suffix", "-test", "--server", "codetools"]));
            v
        },
        code: 1,
        evidence: &["FAIL target", "not to the release's own"],
        absent: &[],
        after: nothing,
    },
    wrong_expect_commit_install: Attack {
        name: "wrong --expect-commit (install)",
        setup: |w| {
            install(
                w,
                "codetools",
                &["--expect-commit", &format!("codetools={OTHER_SHA}")],
            )
        },
        code: 1,
        evidence: &["FAIL commit", OTHER_SHORT, "no registration was changed"],
        absent: &[],
        after: nothing_registered,
    },
    current_points_outside_releases_install: Attack {
        name: "current points outside releases/ (install)",
        setup: |w| {
            let elsewhere = ct(w).join("staging");
            fs::create_dir_all(elsewhere.join("bin")).unwrap();
            fs::write(elsewhere.join("VERSION"), format!("{CT_SHA}\n")).unwrap();
            write_exec(&elsewhere.join("bin/codetools"), "#!/bin/sh\n");
            link(&ct(w).join("current"), "staging");
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &[
            "FAIL release",
            "not directly inside",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    declared_command_not_executable_install: Attack {
        name: "declared command not executable (install)",
        setup: |w| {
            let bin = release(w).join("bin/codetools");
            fs::set_permissions(&bin, fs::Permissions::from_mode(0o644)).unwrap();
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &[
            "FAIL mcp-registration",
            "not executable",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    declared_command_missing_from_the_release_install: Attack {
        name: "declared command missing from the release (install)",
        setup: |w| {
            fs::remove_file(release(w).join("bin/codetools")).unwrap();
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &[
            "FAIL mcp-registration",
            "cannot be resolved",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    declared_command_resolves_outside_the_release_install: Attack {
        name: "declared command resolves outside the release (install)",
        setup: |w| {
            link(&ct(w).join("bin/codetools"), "/bin/true");
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &[
            "FAIL mcp-registration",
            "outside",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    content_tampered_before_install_content: Attack {
        name: "content tampered before install --content",
        setup: |w| {
            let r = w.run(&["manifest", "create", release(w).to_str().unwrap()]);
            r.code(0);
            write_exec(&release(w).join("bin/codetools"), "#!/bin/sh\necho evil\n");
            install(w, "codetools", &["--content"])
        },
        code: 1,
        evidence: &[
            "FAIL content",
            "modified (bin/codetools)",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    install_content_on_a_release_without_a_manifest: Attack {
        name: "install --content on a release without a manifest",
        setup: |w| install(w, "codetools", &["--content"]),
        code: 1,
        evidence: &[
            "FAIL content",
            "MANIFEST.sha256",
            "no registration was changed",
        ],
        absent: &[],
        after: nothing_registered,
    },
    version_holds_an_abbreviated_sha_install: Attack {
        name: "VERSION holds an abbreviated sha (install)",
        setup: |w| {
            fs::write(release(w).join("VERSION"), &CT_SHA[..12]).unwrap();
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &["FAIL commit", "abbreviated", "no registration was changed"],
        absent: &[],
        after: nothing_registered,
    },
    prefix_version_disagrees_with_the_release_install: Attack {
        name: "<prefix>/VERSION disagrees with the release (install)",
        setup: |w| {
            let outer = ct(w).join("VERSION");
            fs::remove_file(&outer).unwrap();
            fs::write(&outer, format!("{OTHER_SHA}\n")).unwrap();
            install(w, "codetools", &[])
        },
        code: 1,
        evidence: &["FAIL commit", OTHER_SHORT, "no registration was changed"],
        absent: &[],
        after: nothing_registered,
    },
    prefix_layout_command_not_executable_install_orchestrata: Attack {
        name: "prefix layout: command not executable (install orchestrata)",
        setup: |w| {
            let bin = orch(w).join("bin/orchestrata-mcp");
            fs::set_permissions(&bin, fs::Permissions::from_mode(0o644)).unwrap();
            install(w, "orchestrata", &[])
        },
        code: 1,
        evidence: &[
            "FAIL mcp-registration",
            "not executable",
            "no registration was changed",
        ],
        absent: &[],
        after: orchestrata_not_registered,
    },
    dangling_current_install_dry_run_reports_the_gate: Attack {
        name: "dangling current (install --dry-run reports the gate)",
        setup: |w| {
            fs::remove_dir_all(release(w)).unwrap();
            install(w, "codetools", &["--dry-run"])
        },
        code: 1,
        evidence: &["gate FAIL release", "install would register nothing"],
        absent: &[],
        after: nothing_registered,
    },
    dangling_current_render_mcp: Attack {
        name: "dangling current (render-mcp)",
        setup: |w| {
            fs::remove_dir_all(release(w)).unwrap();
            let mut v = args(&["render-mcp", "--prefix"]);
            v.push(s(ct(w)));
            v
        },
        code: 1,
        evidence: &["FAIL release", "dangling", "nothing was written"],
        absent: &[],
        after: |w| assert!(!ct(w).join("mcp/codetools.mcp.json").exists()),
    },
    current_is_a_plain_directory_render_mcp: Attack {
        name: "current is a plain directory (render-mcp)",
        setup: |w| {
            fs::remove_file(ct(w).join("current")).unwrap();
            fs::create_dir_all(ct(w).join("current/bin")).unwrap();
            let mut v = args(&["render-mcp", "--prefix"]);
            v.push(s(ct(w)));
            v
        },
        code: 1,
        evidence: &["FAIL release", "plain directory", "nothing was written"],
        absent: &[],
        after: |w| assert!(!ct(w).join("mcp/codetools.mcp.json").exists()),
    },
}

// ---- secrets: opaque entries and ${VAR:-secret} --------------------------------------------

/// A user-scope entry mcp-deploy cannot parse (an arg that is not a string), a token inside.
fn opaque_entry(w: &World) {
    let doc = serde_json::json!({"mcpServers": {"codetools-test": {
        "command": "/usr/bin/env", "args": ["--token", TOKEN, 7]}}});
    fs::write(w.claude_json(), doc.to_string()).unwrap();
}

fn untouched_opaque(w: &World) {
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.claude_json()).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]["codetools-test"]["args"][1], TOKEN,
        "the entry was changed"
    );
    let ledger = w.root().join("home/.local/state/mcp-deploy/ledger.ndjson");
    let text = fs::read_to_string(ledger).unwrap_or_default();
    assert!(!text.contains(TOKEN), "the ledger holds the token");
    let journal = w.config_dir().join(".mcp-deploy.journal.json");
    assert!(!fs::read_to_string(journal)
        .unwrap_or_default()
        .contains(TOKEN));
}

fn declare_default_secret(w: &World) -> String {
    s(w.declare_codetools(serde_json::json!({
        "args": ["mcp", "serve"], "env": {"API_TOKEN": "${API_TOKEN:-hunter2-literal}"}})))
}

attack_rows! {
    mod secrets_never_reach_a_record in world;
    opaque_entry_with_a_token_in_its_args_install: Attack {
        name: "opaque entry with a token in its args (install)",
        setup: |w| {
            opaque_entry(w);
            install(w, "codetools", &[])
        },
        code: 2,
        evidence: &[
            "cannot parse",
            "opaque_sha256",
            "claude mcp remove codetools-test -s user",
        ],
        absent: &[TOKEN],
        after: untouched_opaque,
    },
    opaque_entry_with_a_token_in_its_args_uninstall: Attack {
        name: "opaque entry with a token in its args (uninstall)",
        setup: |w| {
            opaque_entry(w);
            let mut v = args(&["uninstall", "--prefix"]);
            v.push(s(w.opt()));
            v.extend(args(&["--name-suffix", "-test", "--server", "codetools"]));
            v
        },
        code: 2,
        evidence: &["opaque_sha256", "claude mcp remove codetools-test -s user"],
        absent: &[TOKEN],
        after: untouched_opaque,
    },
    opaque_entry_with_a_token_in_its_args_status: Attack {
        name: "opaque entry with a token in its args (status)",
        setup: |w| {
            opaque_entry(w);
            let mut v = args(&["status", "--prefix"]);
            v.push(s(w.opt()));
            v.extend(args(&["--name-suffix", "-test", "--server", "codetools"]));
            v
        },
        code: 1,
        evidence: &["opaque_sha256", "fix or remove it by hand"],
        absent: &[TOKEN],
        after: untouched_opaque,
    },
    var_default_secret_in_a_declared_env_render_mcp: Attack {
        name: "${VAR:-literal secret} in a declared env (render-mcp)",
        setup: |w| {
            let cfg = declare_default_secret(w);
            let mut v = args(&["render-mcp", "--config", &cfg, "--prefix"]);
            v.push(s(ct(w)));
            v
        },
        code: 2,
        evidence: &["literal secret in env API_TOKEN", "help:"],
        absent: &["hunter2"],
        after: |w| assert!(!ct(w).join("mcp/codetools.mcp.json").exists()),
    },
    var_default_secret_in_a_declared_env_install: Attack {
        name: "${VAR:-literal secret} in a declared env (install)",
        setup: |w| {
            let cfg = declare_default_secret(w);
            let mut v = install(w, "codetools", &["--config"]);
            v.push(cfg);
            v
        },
        code: 2,
        evidence: &["literal secret in env API_TOKEN"],
        absent: &["hunter2"],
        after: nothing_registered,
    },
    var_default_secret_in_declared_args_render_mcp: Attack {
        name: "${VAR:-literal secret} in declared args (render-mcp)",
        setup: |w| {
            let cfg = s(w.declare_codetools(
                serde_json::json!({"args": ["mcp", "serve", "--token", "${T:-hunter2-literal}"]}),
            ));
            let mut v = args(&["render-mcp", "--config", &cfg, "--prefix"]);
            v.push(s(ct(w)));
            v
        },
        code: 2,
        evidence: &["literal secret in arg 4"],
        absent: &["hunter2"],
        after: |w| assert!(!ct(w).join("mcp/codetools.mcp.json").exists()),
    },
    var_default_secret_in_a_declared_url_render_mcp: Attack {
        name: "${VAR:-literal secret} in a declared url (render-mcp)",
        setup: |w| {
            let cfg = w.root().join("servers.json");
            let doc = serde_json::json!({"servers": [{"name": "gw", "prefix": "/opt/gw",
                "layout": "prefix", "entry": {"type": "http",
                "url": "https://gw.example/mcp?key=${GW_KEY:-hunter2-literal}"}}]});
            fs::write(&cfg, doc.to_string()).unwrap();
            let gw = w.opt().join("gw");
            fs::create_dir_all(&gw).unwrap();
            let mut v = args(&["render-mcp", "--config", &s(cfg), "--prefix"]);
            v.push(s(gw));
            v
        },
        code: 2,
        evidence: &["literal secret in url"],
        absent: &["hunter2"],
        after: |w| assert!(!w.opt().join("gw/mcp/gw.mcp.json").exists()),
    },
    var_default_secret_in_a_registered_entry_verify_identity: Attack {
        name: "${VAR:-literal secret} in a registered entry (verify-identity)",
        setup: |w| {
            let doc = w.root().join("doc.json");
            let cmd = format!("{}/bin/codetools", ct(w).display());
            flat_doc(
                &doc,
                "codetools",
                &cmd,
                &["mcp", "serve", "--token", "${T:-hunter2-literal}"],
            );
            verify_ct(w, &s(doc), &[])
        },
        code: 1,
        evidence: &["FAIL secrets", "arg 4"],
        absent: &[],
        after: nothing,
    },
}

// ---- content in a prefix layout ------------------------------------------------------------

fn orch_manifest(w: &World) {
    w.run(&["manifest", "create", orch(w).to_str().unwrap()])
        .code(0);
}

attack_rows! {
    mod content_in_a_prefix_layout in world;
    prefix_layout_manifest_create_then_install_content_twice_passes: Attack {
        name: "prefix layout: manifest create, then install --content (twice) passes",
        setup: |w| {
            orch_manifest(w);
            // A first install writes mcp/orchestrata.mcp.json into the content root.
            let first = install(w, "orchestrata", &["--content"]);
            let refs: Vec<&str> = first.iter().map(String::as_str).collect();
            w.run(&refs).code(0);
            install(w, "orchestrata", &["--content"])
        },
        code: 0,
        evidence: &[
            "ok   content",
            "mcp/orchestrata.mcp.json written by mcp-deploy, not content",
        ],
        absent: &[],
        after: |w| assert!(w.user_servers().contains_key("orchestrata-test")),
    },
    prefix_layout_a_binary_tampered_after_the_manifest_install_content: Attack {
        name: "prefix layout: a binary tampered after the manifest (install --content)",
        setup: |w| {
            orch_manifest(w);
            write_exec(
                &orch(w).join("bin/orchestrata-mcp"),
                "#!/bin/sh\necho evil\n",
            );
            install(w, "orchestrata", &["--content"])
        },
        code: 1,
        evidence: &[
            "FAIL content",
            "modified (bin/orchestrata-mcp)",
            "no registration was changed",
        ],
        absent: &[],
        after: orchestrata_not_registered,
    },
    prefix_layout_an_executable_hidden_as_mcp_evil_mcp_json_install_content: Attack {
        name: "prefix layout: an executable hidden as mcp/evil.mcp.json (install --content)",
        setup: |w| {
            orch_manifest(w);
            write_exec(&orch(w).join("mcp/evil.mcp.json"), "#!/bin/sh\necho evil\n");
            install(w, "orchestrata", &["--content"])
        },
        code: 1,
        evidence: &["FAIL content", "added (mcp/evil.mcp.json)"],
        absent: &[],
        after: orchestrata_not_registered,
    },
    prefix_layout_a_helper_dropped_into_mcp_install_content: Attack {
        name: "prefix layout: a helper dropped into mcp/ (install --content)",
        setup: |w| {
            orch_manifest(w);
            write_exec(&orch(w).join("mcp/helper"), "#!/bin/sh\n");
            install(w, "orchestrata", &["--content"])
        },
        code: 1,
        evidence: &["FAIL content", "added (mcp/helper)"],
        absent: &[],
        after: orchestrata_not_registered,
    },
}
