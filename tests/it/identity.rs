//! verify-identity against hostile layouts, VERSION files and registration documents. Each
//! test pins which checks pass and which fail, and what the failure says.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::harness::*;

/// A healthy codetools release layout and a flat document registering its stable path.
fn codetools(w: &World) -> (PathBuf, PathBuf) {
    let prefix = w.opt().join("codetools");
    release_layout(&prefix, CT_SHA);
    let doc = w.root().join("registered.json");
    let cmd = prefix.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp", "serve"]);
    (prefix, doc)
}

fn verify(w: &World, prefix: &Path, doc: &Path, sha: &str) -> Run {
    w.verify_identity(prefix, sha, doc, &["--json"])
}

fn pairs(list: &[(&str, bool)]) -> Vec<(String, bool)> {
    list.iter().map(|(c, ok)| (c.to_string(), *ok)).collect()
}

/// Exit 1 with `release` and `commit` passing and `mcp-registration` failing, saying `why`.
fn only_registration_fails(r: &Run, why: &str) {
    r.code(1);
    assert_eq!(
        r.checks(),
        pairs(&[
            ("release", true),
            ("commit", true),
            ("signature", true),
            ("mcp-registration", false)
        ]),
        "{}",
        r.shown
    );
    assert!(r.detail("mcp-registration").contains(why), "{}", r.shown);
}

const ALL_PASS: &[(&str, bool)] = &[
    ("release", true),
    ("commit", true),
    ("signature", true),
    ("mcp-registration", true),
];

#[test]
fn healthy_release_passes_every_check() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(0);
    assert_eq!(r.checks(), pairs(ALL_PASS));
    assert_eq!(r.json()["ok"], true);
    // The human form names every check too.
    crate::snapshot!(
        "verify_identity_pass",
        w.verify_identity(&prefix, CT_SHA, &doc, &[])
    );
}

#[test]
fn wrong_expected_commit_fails_only_commit() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let other = "1".repeat(40);
    let r = verify(&w, &prefix, &doc, &other);
    r.code(1);
    assert_eq!(
        r.checks(),
        pairs(&[
            ("release", true),
            ("commit", false),
            ("signature", true),
            ("mcp-registration", true)
        ])
    );
    assert!(r.detail("commit").contains(&format!("expected {other}")));
}

#[test]
fn command_outside_the_release_fails_exactly_mcp_registration() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let outside = w.root().join("elsewhere/codetools");
    write_exec(&outside, "#!/bin/sh\n");
    flat_doc(
        &doc,
        "codetools",
        outside.to_str().unwrap(),
        &["mcp", "serve"],
    );
    let r = verify(&w, &prefix, &doc, CT_SHA);
    only_registration_fails(&r, "outside");
}

fn release_fails(w: &World, prefix: &Path, doc: &Path, want: &str) -> Run {
    let r = verify(w, prefix, doc, CT_SHA);
    r.code(1);
    assert_eq!(r.checks()[0], ("release".to_string(), false), "{}", r.shown);
    assert!(r.detail("release").contains(want), "{}", r.shown);
    r
}

#[test]
fn hostile_current_missing() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    fs::remove_file(prefix.join("current")).unwrap();
    let r = release_fails(&w, &prefix, &doc, "does not exist");
    // Nothing can be resolved without current: every check fails, none is skipped.
    assert_eq!(
        r.checks(),
        pairs(&[
            ("release", false),
            ("commit", false),
            ("signature", true),
            ("mcp-registration", false)
        ])
    );
}

#[test]
fn hostile_current_dangling() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    fs::remove_file(prefix.join("current")).unwrap();
    symlink("releases/gone", prefix.join("current")).unwrap();
    release_fails(&w, &prefix, &doc, "dangling");
}

#[test]
fn hostile_current_loop() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    fs::remove_file(prefix.join("current")).unwrap();
    symlink("current.b", prefix.join("current")).unwrap();
    symlink("current", prefix.join("current.b")).unwrap();
    release_fails(&w, &prefix, &doc, "loop");
}

#[test]
fn hostile_current_plain_directory() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    fs::remove_file(prefix.join("current")).unwrap();
    let rel = prefix.join("releases").join(CT_SHA);
    fs::rename(&rel, prefix.join("current")).unwrap();
    let r = release_fails(&w, &prefix, &doc, "plain directory");
    // The commit can still be read from it: only the layout is wrong.
    assert_eq!(r.checks()[1], ("commit".to_string(), true), "{}", r.shown);
}

#[test]
fn hostile_current_outside_releases() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let evil = w.root().join("evil-release");
    fs::create_dir_all(evil.join("bin")).unwrap();
    fs::write(evil.join("VERSION"), format!("{CT_SHA}\n")).unwrap();
    write_exec(&evil.join("bin/codetools"), "#!/bin/sh\n");
    promote_to(&prefix, evil.to_str().unwrap());
    release_fails(&w, &prefix, &doc, "not directly inside");
    // A release nested one level deeper is not "directly inside" either.
    let nested = prefix.join("releases/nested").join(CT_SHA);
    fs::create_dir_all(&nested).unwrap();
    fs::write(nested.join("VERSION"), format!("{CT_SHA}\n")).unwrap();
    promote_to(&prefix, &format!("releases/nested/{CT_SHA}"));
    release_fails(&w, &prefix, &doc, "not directly inside");
}

fn promote_to(prefix: &Path, target: &str) {
    fs::remove_file(prefix.join("current")).unwrap();
    symlink(target, prefix.join("current")).unwrap();
}

#[test]
fn hostile_sibling_release_with_a_longer_name() {
    // releases/<sha>-evil starts with the string releases/<sha>: only a component-wise
    // comparison tells them apart.
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let evil = add_release(&prefix, &format!("{CT_SHA}-evil"));
    let cmd = evil.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp", "serve"]);
    let r = verify(&w, &prefix, &doc, CT_SHA);
    only_registration_fails(&r, "outside");
}

#[test]
fn hostile_sibling_prefix_with_a_longer_name() {
    // /opt/orchestrata-evil beside /opt/orchestrata, for a prefix layout.
    let w = World::new();
    let opt = w.sample();
    let evil = opt.join("orchestrata-evil/bin/orchestrata-mcp");
    write_exec(&evil, "#!/bin/sh\n");
    let doc = w.root().join("registered.json");
    flat_doc(&doc, "orchestrata", evil.to_str().unwrap(), &[]);
    let r = verify(&w, &opt.join("orchestrata"), &doc, OR_SHA);
    r.code(1);
    assert_eq!(
        r.checks(),
        pairs(&[
            ("commit", true),
            ("signature", true),
            ("mcp-registration", false)
        ])
    );
    assert!(r.detail("mcp-registration").contains("outside"));
}

#[test]
fn hostile_symlink_inside_the_release_pointing_out() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let outside = w.root().join("usr-bin-evil");
    write_exec(&outside, "#!/bin/sh\n");
    let inner = prefix.join("releases").join(CT_SHA).join("bin/codetools");
    fs::remove_file(&inner).unwrap();
    symlink(&outside, &inner).unwrap();
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(1);
    assert_eq!(r.checks()[3], ("mcp-registration".to_string(), false));
    assert!(
        r.detail("mcp-registration").contains("usr-bin-evil"),
        "{}",
        r.shown
    );
}

#[test]
fn hostile_dotdot_in_the_registered_command() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    // Resolves to a real executable inside the release, but the registered path is not
    // normalized, so what it names depends on symlinks along the way.
    let cmd = format!("{}/bin/../bin/codetools", prefix.display());
    flat_doc(&doc, "codetools", &cmd, &["mcp", "serve"]);
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(1);
    assert_eq!(r.checks()[3], ("mcp-registration".to_string(), false));
    assert!(r.detail("mcp-registration").contains(". or .."));
}

#[test]
fn hostile_relative_command() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    flat_doc(&doc, "codetools", "bin/codetools", &["mcp", "serve"]);
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(1);
    assert!(r.detail("mcp-registration").contains("relative"));
}

#[test]
fn hostile_non_executable_command() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let inner = prefix.join("releases").join(CT_SHA).join("bin/codetools");
    fs::set_permissions(&inner, fs::Permissions::from_mode(0o644)).unwrap();
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(1);
    assert_eq!(r.checks()[3], ("mcp-registration".to_string(), false));
    assert!(r.detail("mcp-registration").contains("not executable"));
}

#[test]
fn registered_args_must_equal_the_declared_args() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let cmd = prefix.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp serve"]);
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(1);
    assert!(r
        .detail("mcp-registration")
        .contains("differ from the declared"));
}

/// VERSION contents and the commit check's outcome for each (true: passes with CT_SHA).
#[test]
fn version_file_variants_pin_the_commit_check() {
    let upper = CT_SHA.to_ascii_uppercase();
    let cases: Vec<(String, Option<&str>)> = vec![
        (format!("{CT_SHA}\n"), None),
        (CT_SHA.to_string(), None),
        (format!("{upper}\n"), None),
        (String::new(), Some("it is empty")),
        (format!("{CT_SHA}\r\n"), Some("CRLF")),
        (format!("{CT_SHA}   \n"), Some("spaces or tabs")),
        (format!("{CT_SHA}\n{CT_SHA}\n"), Some("more than one line")),
        (format!("{}\n", &CT_SHA[..7]), Some("abbreviated")),
        (format!("{}xyz\n", &CT_SHA[..37]), Some("not a hex digit")),
    ];
    for (contents, failure) in cases {
        let w = World::new();
        let (prefix, doc) = codetools(&w);
        fs::remove_file(prefix.join("VERSION")).ok();
        fs::write(
            prefix.join("releases").join(CT_SHA).join("VERSION"),
            &contents,
        )
        .unwrap();
        let r = verify(&w, &prefix, &doc, CT_SHA);
        match failure {
            None => {
                r.code(0);
            }
            Some(why) => {
                r.code(1);
                assert_eq!(r.checks()[1], ("commit".to_string(), false), "{contents:?}");
                assert!(
                    r.detail("commit").contains(why),
                    "{contents:?}: {}",
                    r.shown
                );
            }
        }
    }
}

#[test]
fn version_with_64_hex_digits_is_a_full_sha256_commit() {
    let w = World::new();
    let sha = "ab".repeat(32);
    let prefix = w.opt().join("codetools");
    release_layout(&prefix, &sha);
    let doc = w.root().join("registered.json");
    let cmd = prefix.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp", "serve"]);
    verify(&w, &prefix, &doc, &sha).code(0);
    // The same commit expected as a SHA-1 length id cannot match.
    verify(&w, &prefix, &doc, &sha[..40]).code(1);
}

#[test]
fn prefix_version_that_disagrees_fails_commit() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    fs::write(prefix.join("VERSION"), format!("{}\n", "2".repeat(40))).unwrap();
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(1);
    assert_eq!(r.checks()[1], ("commit".to_string(), false));
    assert!(r.detail("commit").contains("but"), "{}", r.shown);
    // The symlink form that promote leaves (VERSION -> current/VERSION) agrees.
    fs::remove_file(prefix.join("VERSION")).unwrap();
    symlink("current/VERSION", prefix.join("VERSION")).unwrap();
    verify(&w, &prefix, &doc, CT_SHA).code(0);
}

#[test]
fn expect_commit_must_be_a_full_sha() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    for bad in [&CT_SHA[..12], "not-a-sha", "", &"g".repeat(40)] {
        verify(&w, &prefix, &doc, bad)
            .code(2)
            .stderr_has("is not a full commit sha")
            .stderr_has("help: pass the full sha");
    }
}

#[test]
fn flat_document_missing_is_exit_2_with_help() {
    let w = World::new();
    let (prefix, _) = codetools(&w);
    verify(&w, &prefix, &w.root().join("absent.json"), CT_SHA)
        .code(2)
        .stderr_has("absent.json does not exist")
        .stderr_has("help:");
}

#[test]
fn flat_document_malformed_is_exit_2() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    for bad in [
        "{not json",
        "[]",
        r#"{"mcpServers":[]}"#,
        r#"{"servers":{}}"#,
    ] {
        fs::write(&doc, bad).unwrap();
        verify(&w, &prefix, &doc, CT_SHA)
            .code(2)
            .stderr_has("is malformed");
    }
}

#[test]
fn flat_document_without_the_entry_fails_mcp_registration() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let r = w.verify_identity(
        &prefix,
        CT_SHA,
        &doc,
        &["--name", "codetools-test", "--json"],
    );
    only_registration_fails(&r, "codetools-test");
}

/// The human report, snapshot-tested with the temp root redacted.
#[test]
fn human_report_snapshot() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let outside = w.root().join("elsewhere/codetools");
    write_exec(&outside, "#!/bin/sh\n");
    flat_doc(
        &doc,
        "codetools",
        outside.to_str().unwrap(),
        &["mcp", "serve"],
    );
    let r = w.verify_identity(&prefix, CT_SHA, &doc, &[]);
    r.code(1);
    let root = std::fs::canonicalize(w.root()).unwrap();
    let text = r.said().replace(root.to_str().unwrap(), "[ROOT]");
    let text = text.replace(w.root().to_str().unwrap(), "[ROOT]");
    // Human output shows a sha in 12 digits (issue 36, item 10); JSON keeps it whole.
    let short = &CT_SHA[..12];
    let want = format!(
        "codetools
  ok   release           [ROOT]/opt/codetools/current -> [ROOT]/opt/codetools/releases/{short}
  ok   commit            [ROOT]/opt/codetools/releases/{short}/VERSION holds {short}, as expected
  skip signature         unsigned: no MANIFEST.sha256.sig (not checked: no trust policy)
  FAIL mcp-registration  command [ROOT]/elsewhere/codetools is not the declared command [ROOT]/opt/codetools/bin/codetools; command [ROOT]/elsewhere/codetools resolves to [ROOT]/elsewhere/codetools, outside [ROOT]/opt/codetools/releases/{short}: the registered command is not the declared [ROOT]/opt/codetools/bin/codetools (edited by hand, or an older declaration); install would re-register it (document only: the live registration was not compared)
1 check(s) failed
"
    );
    assert_eq!(text, want, "{}", r.shown);
}

fn check_names(r: &Run) -> Vec<(String, bool)> {
    r.checks()
}

#[test]
fn content_check_runs_when_the_release_holds_a_manifest() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let release = prefix.join("releases").join(CT_SHA);
    // No manifest, not required: no content check at all.
    assert_eq!(
        check_names(&verify(&w, &prefix, &doc, CT_SHA)),
        pairs(ALL_PASS)
    );

    w.run(&["manifest", "create", release.to_str().unwrap()])
        .code(0);
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(0);
    assert_eq!(
        check_names(&r),
        pairs(&[
            ("release", true),
            ("commit", true),
            ("content", true),
            ("signature", true),
            ("mcp-registration", true)
        ])
    );

    // A file changed after the build fails exactly the content check, naming the file.
    fs::write(release.join("bin/codetools"), "#!/bin/sh\necho tampered\n").unwrap();
    let r = verify(&w, &prefix, &doc, CT_SHA);
    r.code(1);
    assert_eq!(
        check_names(&r),
        pairs(&[
            ("release", true),
            ("commit", true),
            ("content", false),
            ("signature", true),
            ("mcp-registration", true)
        ])
    );
    assert!(r.detail("content").contains("bin/codetools"), "{}", r.shown);
}

#[test]
fn content_flag_requires_a_manifest() {
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let r = w.verify_identity(&prefix, CT_SHA, &doc, &["--content", "--json"]);
    r.code(1);
    assert_eq!(r.checks()[2], ("content".to_string(), false), "{}", r.shown);
    assert!(
        r.detail("content").contains("MANIFEST.sha256"),
        "{}",
        r.shown
    );
}

/// Issue 34: every check read `<prefix>/current` again (8 readlink and 10 statx calls for one
/// server), so a promote that landed between two checks gave one report whose `commit` named
/// one release and whose `mcp-registration` and `deployed` named another. `current` is now read
/// once per server per run, and the whole report is about that release.
#[test]
fn a_promote_between_two_checks_does_not_split_the_report_across_two_releases() {
    needs_crash_checkpoints("a promote landing between verify-identity's checks");
    let w = World::new();
    let (prefix, doc) = codetools(&w);
    let next = "b".repeat(40);
    add_release(&prefix, &next);
    let point = "verify-after-commit";
    let args = [
        "verify-identity",
        "--prefix",
        prefix.to_str().unwrap(),
        "--expect-commit",
        CT_SHA,
        "--mcp-json",
        doc.to_str().unwrap(),
        "--json",
    ];
    let mut run = w.start_env(&args, &[("MCP_DEPLOY_PAUSE_AT", point)]);
    run.paused_at(point);
    promote(&prefix, &next);
    run.resume();
    let r = run.finish();
    r.code(0);
    let read = fs::canonicalize(prefix.join("releases").join(CT_SHA)).unwrap();
    let server = &r.json()["servers"][0];
    assert_eq!(server["release"], read.to_str().unwrap(), "{}", r.shown);
    assert_eq!(server["commit"], CT_SHA, "{}", r.shown);
    for check in ["release", "commit", "mcp-registration"] {
        let detail = r.detail(check);
        assert!(detail.contains(CT_SHA), "{check}: {detail}");
        assert!(
            !detail.contains(&next),
            "{check} names the release promoted mid-run: {detail}"
        );
    }
}
