//! Issue 23, items 6 (part), 10 and 11: `--format human|json|junit|github` on every report
//! (`--json` kept), `-q`/`-v`, `--color` only where something is coloured, and
//! `verify-identity --require-live`.
//!
//! The JUnit output is parsed (roxmltree) and held to what the CI systems' JUnit readers
//! expect: `tests`/`failures`/`errors` on `<testsuites>` and on each `<testsuite>` agreeing
//! with the cases below them, `classname` and `name` on each `<testcase>`, `message` on each
//! `<failure>`/`<error>`. Each failure's message is compared with the same check's detail in
//! `--json`, so escaping that loses or changes a character fails. The GitHub output is read
//! line by line as the runner reads workflow commands.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::*;

/// One `<testcase>`: its suite's name, classname, name, and the message of its `<failure>`
/// or `<error>`.
#[derive(Debug)]
struct Case {
    suite: String,
    classname: String,
    name: String,
    failure: Option<String>,
    error: Option<String>,
    /// `<skipped message>`: a check that was not run.
    skipped: Option<String>,
}

/// Parse JUnit XML, check the counts and attributes a JUnit reader relies on, and list the
/// cases.
#[track_caller]
fn junit(r: &Run) -> Vec<Case> {
    let doc = roxmltree::Document::parse(&r.stdout)
        .unwrap_or_else(|e| panic!("stdout is not XML: {e}\n{r}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites", "{r}");
    let count = |n: roxmltree::Node, attr: &str| -> usize {
        n.attribute(attr)
            .unwrap_or_else(|| panic!("<{}> lacks {attr}\n{r}", n.tag_name().name()))
            .parse()
            .unwrap()
    };
    let mut cases = Vec::new();
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    for suite in root.children().filter(|n| n.has_tag_name("testsuite")) {
        let name = suite.attribute("name").expect("a testsuite has a name");
        let mut here = Vec::new();
        for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
            let child = |tag: &str| {
                case.children().find(|n| n.has_tag_name(tag)).map(|n| {
                    let message = n.attribute("message").expect("a message").to_string();
                    assert!(n.attribute("type").is_some(), "<{tag}> lacks type\n{r}");
                    message
                })
            };
            here.push(Case {
                suite: name.to_string(),
                classname: case.attribute("classname").expect("a classname").into(),
                name: case.attribute("name").expect("a name").into(),
                failure: child("failure"),
                error: child("error"),
                skipped: case
                    .children()
                    .find(|n| n.has_tag_name("skipped"))
                    .map(|n| n.attribute("message").expect("a message").to_string()),
            });
        }
        let f = here.iter().filter(|c| c.failure.is_some()).count();
        let e = here.iter().filter(|c| c.error.is_some()).count();
        let k = here.iter().filter(|c| c.skipped.is_some()).count();
        assert_eq!(count(suite, "tests"), here.len(), "tests of {name}\n{r}");
        assert_eq!(count(suite, "failures"), f, "failures of {name}\n{r}");
        assert_eq!(count(suite, "errors"), e, "errors of {name}\n{r}");
        assert_eq!(count(suite, "skipped"), k, "skipped of {name}\n{r}");
        (tests, failures, errors) = (tests + here.len(), failures + f, errors + e);
        cases.extend(here);
    }
    assert_eq!(count(root, "tests"), tests, "{r}");
    assert_eq!(count(root, "failures"), failures, "{r}");
    assert_eq!(count(root, "errors"), errors, "{r}");
    cases
}

/// A GitHub workflow command's data or property, unescaped as the runner does.
fn unescape(s: &str) -> String {
    s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
}

/// The workflow commands of stdout: `(command, title, message)`; a line that is not one must
/// not start with `::` (it would be taken for one).
#[track_caller]
fn workflow_commands(r: &Run) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for line in r.stdout.lines() {
        let Some(rest) = line.strip_prefix("::") else {
            continue;
        };
        let (head, message) = rest
            .split_once("::")
            .unwrap_or_else(|| panic!("{line}\n{r}"));
        let (command, props) = head.split_once(' ').unwrap_or((head, ""));
        let title = props
            .split(',')
            .find_map(|p| p.strip_prefix("title="))
            .unwrap_or_default();
        assert!(
            matches!(command, "error" | "notice"),
            "unexpected workflow command {command}\n{r}"
        );
        out.push((command.to_string(), unescape(title), unescape(message)));
    }
    out
}

/// `(check, ok, detail)` of every server of a `--json` check report, in order.
fn json_checks(r: &Run) -> Vec<(String, bool, String)> {
    let v = r.json();
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["checks"].as_array().unwrap().clone())
        .map(|c| {
            (
                c["check"].as_str().unwrap().to_string(),
                c["ok"].as_bool().unwrap(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The sample's codetools, a flat document registering it under `name`, and that document.
fn codetools_document(w: &World, name: &str) -> (PathBuf, PathBuf) {
    w.sample();
    let ct = w.opt().join("codetools");
    let doc = w.root().join("doc.json");
    flat_doc(
        &doc,
        name,
        ct.join("bin/codetools").to_str().unwrap(),
        &["mcp", "serve"],
    );
    (ct, doc)
}

const OTHER_SHA: &str = "ffffffffffffffffffffffffffffffffffffffff";

#[test]
fn verify_identity_junit_has_a_case_per_check_and_the_detail_of_each_failure() {
    let w = World::new();
    let (ct, doc) = codetools_document(&w, "codetools");
    // A registered name with every character XML must escape, which the report quotes.
    let name = "code<&\"tools'>";
    let extra = ["--name", name];
    let json = w.verify_identity(&ct, OTHER_SHA, &doc, &[&extra[..], &["--json"]].concat());
    json.code(1);
    let r = w.verify_identity(
        &ct,
        OTHER_SHA,
        &doc,
        &[&extra[..], &["--format", "junit"]].concat(),
    );
    r.code(1);
    let cases = junit(&r);
    let want = json_checks(&json);
    assert_eq!(cases.len(), want.len(), "{r}");
    for (case, (check, ok, detail)) in cases.iter().zip(&want) {
        assert_eq!(&case.name, check, "{r}");
        assert_eq!(case.classname, name, "{r}");
        assert_eq!(case.suite, format!("codetools (registered as {name})"));
        assert_eq!(case.error, None);
        match ok {
            true => assert_eq!(case.failure, None, "{check}\n{r}"),
            false => assert_eq!(case.failure.as_deref(), Some(detail.as_str()), "{r}"),
        }
    }
    // Issue 36.9: an unsigned release's signature was a passed case; it was not run, and
    // JUnit says so.
    let skipped: Vec<(&str, &str)> = cases
        .iter()
        .filter_map(|c| Some((c.name.as_str(), c.skipped.as_deref()?)))
        .collect();
    assert_eq!(
        skipped,
        [(
            "signature",
            "unsigned: no MANIFEST.sha256.sig (not checked: no trust policy)"
        )],
        "{r}"
    );
    let skipped_in_json = json.json()["servers"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["skipped"] == true)
        .map(|c| c["check"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert_eq!(skipped_in_json, ["signature"]);
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| c.failure.is_some())
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(failed, ["commit", "mcp-registration"], "{r}");
}

#[test]
fn verify_identity_github_annotates_each_failed_check_then_says_the_verdict() {
    let w = World::new();
    let (ct, doc) = codetools_document(&w, "codetools");
    let json = w.verify_identity(&ct, OTHER_SHA, &doc, &["--json"]);
    let r = w.verify_identity(&ct, OTHER_SHA, &doc, &["--format", "github"]);
    r.code(1);
    let commands = workflow_commands(&r);
    let errors: Vec<_> = commands.iter().filter(|c| c.0 == "error").collect();
    let failed: Vec<_> = json_checks(&json).into_iter().filter(|c| !c.1).collect();
    assert_eq!(errors.len(), failed.len(), "{r}");
    for ((_, title, message), (check, _, detail)) in errors.iter().zip(&failed) {
        assert_eq!(title, &format!("codetools {check}"), "{r}");
        assert_eq!(message, detail, "{r}");
    }
    let last = commands.last().unwrap();
    assert_eq!(
        (last.0.as_str(), last.1.as_str(), last.2.as_str()),
        (
            "notice",
            "mcp-deploy verify-identity",
            "1 of 4 check(s) failed"
        ),
        "{r}"
    );
    // The passing checks are plain log lines.
    r.stdout_has("ok   codetools release: ");
    // A pass: no error, the notice says so, exit 0.
    let ok = w.verify_identity(&ct, CT_SHA, &doc, &["--format", "github"]);
    ok.code(0);
    assert_eq!(
        workflow_commands(&ok),
        [(
            "notice".to_string(),
            "mcp-deploy verify-identity".to_string(),
            "all 4 checks passed".to_string()
        )],
        "{ok}"
    );
}

#[test]
fn json_is_format_json_and_with_another_format_a_usage_error() {
    let w = World::new();
    let (ct, doc) = codetools_document(&w, "codetools");
    let a = w.verify_identity(&ct, CT_SHA, &doc, &["--json"]);
    let b = w.verify_identity(&ct, CT_SHA, &doc, &["--format", "json"]);
    let both = w.verify_identity(&ct, CT_SHA, &doc, &["--json", "--format", "json"]);
    for r in [&a, &b, &both] {
        r.code(0);
    }
    // The same report but for when it was made: `at` is to the second, and two runs may
    // straddle one (this test failed a clean-clone CI run that way).
    let timeless = |r: &Run| {
        let mut j = r.json();
        assert!(j["at"].is_string(), "{r}");
        j.as_object_mut().unwrap().remove("at");
        j
    };
    assert_eq!(timeless(&a), timeless(&b));
    assert_eq!(timeless(&a), timeless(&both));
    let human = w.verify_identity(&ct, CT_SHA, &doc, &["--format", "human"]);
    human.code(0).stdout_has("  ok   release ");
    for other in ["junit", "github", "human"] {
        let r = w.verify_identity(&ct, CT_SHA, &doc, &["--json", "--format", other]);
        r.code(2)
            .stderr_has(&format!("--json and --format {other} ask for two formats"))
            .stderr_has("help: give one: --json is --format json");
        assert_eq!(r.stdout, "", "{r}");
    }
}

#[test]
fn a_run_that_cannot_complete_says_so_in_the_chosen_format() {
    let w = World::new();
    let (ct, doc) = codetools_document(&w, "codetools");
    let args = |format: &str| {
        w.verify_identity(&ct, "abc", &doc, &["--format", format])
            .code(2)
            .stderr_has("error: --expect-commit \"abc\" is not a full commit sha")
            .stderr_has("help: pass the full sha");
    };
    args("human");
    let r = w.verify_identity(&ct, "abc", &doc, &["--format", "junit"]);
    let cases = junit(&r);
    assert_eq!(cases.len(), 1, "{r}");
    let error = cases[0].error.as_deref().expect("an <error>");
    assert!(error.starts_with("--expect-commit \"abc\" is not a full commit sha"));
    assert_eq!(cases[0].name, "verify-identity");
    let r = w.verify_identity(&ct, "abc", &doc, &["--format", "github"]);
    let commands = workflow_commands(&r);
    assert_eq!(commands.len(), 1, "{r}");
    let (command, title, message) = &commands[0];
    assert_eq!(
        (command.as_str(), title.as_str()),
        ("error", "mcp-deploy verify-identity")
    );
    assert!(message.contains("is not a full commit sha"), "{r}");
    assert!(message.contains("\nhelp: pass the full sha"), "{r}");
    // JSON's error object is kept as it was.
    let r = w.verify_identity(&ct, "abc", &doc, &["--format", "json"]);
    assert_eq!(r.json()["exit"], 2);
}

#[test]
fn install_uninstall_and_status_print_junit_and_github_with_the_real_claude() {
    let w = World::with_real_claude();
    w.sample();
    let plan = w.on_sample("install", &["--dry-run", "--format", "junit"]);
    plan.code(0);
    let cases = junit(&plan);
    assert!(cases.iter().all(|c| c.failure.is_none()), "{plan}");
    assert!(
        cases
            .iter()
            .any(|c| c.classname == "codetools-test" && c.name == "gate commit"),
        "{plan}"
    );
    let r = w.on_sample("install", &["--format", "junit"]);
    r.code(0);
    let cases = junit(&r);
    let suites: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.classname.as_str()).collect();
    assert_eq!(
        suites.into_iter().collect::<Vec<_>>(),
        ["codetools-test", "orchestrata-test"],
        "{r}"
    );
    assert!(cases.iter().all(|c| c.failure.is_none()), "{r}");
    let status = w.on_sample("status", &["--format", "junit"]);
    status.code(0);
    assert!(junit(&status)
        .iter()
        .any(|c| c.classname == "orchestrata-test" && c.name == "registered"));
    // Drift: the entry edited by hand through claude; status annotates the check that sees it.
    let evil =
        serde_json::json!({"command": w.opt().join("codetools/bin/codetools"), "args": ["--evil"]});
    w.reregister_by_hand("codetools-test", &evil);
    let drift = w.on_sample("status", &["--format", "github"]);
    drift.code(1);
    let commands = workflow_commands(&drift);
    assert!(
        commands
            .iter()
            .any(|(c, t, _)| c == "error" && t == "codetools-test registered"),
        "{drift}"
    );
    let r = w.on_sample("uninstall", &["--format", "github"]);
    r.code(0);
    let last = workflow_commands(&r).pop().unwrap();
    assert_eq!(
        (last.0.as_str(), last.1.as_str(), last.2.as_str()),
        ("notice", "mcp-deploy uninstall", "no checks ran")
    );
    r.stdout_has("codetools-test: registration: removed");
}

#[test]
fn a_gate_failure_of_install_is_a_junit_failure_and_a_github_error() {
    let w = World::with_real_claude();
    w.sample();
    let expect = format!("codetools={OTHER_SHA}");
    let r = w.on_sample(
        "install",
        &["--expect-commit", &expect, "--format", "junit"],
    );
    r.code(1).stderr_has("no registration was changed");
    let failed: Vec<(String, String)> = junit(&r)
        .into_iter()
        .filter(|c| c.failure.is_some())
        .map(|c| (c.classname, c.name))
        .collect();
    assert_eq!(failed, [("codetools-test".into(), "commit".into())], "{r}");
    let r = w.on_sample(
        "install",
        &["--expect-commit", &expect, "--format", "github"],
    );
    r.code(1);
    assert!(workflow_commands(&r)
        .iter()
        .any(|(c, t, m)| c == "error" && t == "codetools-test commit" && m.contains(OTHER_SHA)));
    assert!(w.user_servers().is_empty());
}

const NEW: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// The sample, with a second release of codetools `NEW` beside the live one.
fn with_new_release(w: &World) -> PathBuf {
    w.sample();
    let ct = w.opt().join("codetools");
    let from = ct.join("releases").join(CT_SHA);
    let to = ct.join("releases").join(NEW);
    fs::create_dir_all(to.join("bin")).unwrap();
    fs::copy(from.join("bin/codetools"), to.join("bin/codetools")).unwrap();
    fs::write(to.join("VERSION"), format!("{NEW}\n")).unwrap();
    ct
}

fn transition(w: &World, ct: &Path, action: &[&str], extra: &[&str]) -> Run {
    w.cmd()
        .args(action)
        .args(["--prefix", ct.to_str().unwrap(), "--name-suffix", "-test"])
        .args(extra)
        .run()
}

#[test]
fn promote_and_rollback_print_junit_and_github_with_the_result_as_the_verdict() {
    let w = World::with_real_claude();
    let ct = with_new_release(&w);
    let r = transition(
        &w,
        &ct,
        &["promote", "--release", NEW],
        &["--format", "junit"],
    );
    r.code(0);
    let cases = junit(&r);
    assert!(
        !cases.is_empty() && cases.iter().all(|c| c.failure.is_none()),
        "{r}"
    );
    assert!(cases.iter().all(|c| c.classname == "codetools-test"), "{r}");
    let r = transition(&w, &ct, &["rollback"], &["--format", "github"]);
    r.code(0);
    let last = workflow_commands(&r).pop().unwrap();
    assert_eq!(
        (last.0.as_str(), last.1.as_str()),
        ("notice", "mcp-deploy rollback")
    );
    assert!(last.2.contains("codetools: rolled back"), "{r}");
    // A release that fails the preflight: its failed check annotated, nothing switched.
    fs::write(ct.join("releases").join(NEW).join("VERSION"), "not a sha\n").unwrap();
    let r = transition(
        &w,
        &ct,
        &["promote", "--release", NEW],
        &["--format", "github"],
    );
    r.code(1);
    assert!(
        workflow_commands(&r)
            .iter()
            .any(|(c, t, _)| c == "error" && t == "codetools-test commit"),
        "{r}"
    );
    let r = transition(
        &w,
        &ct,
        &["promote", "--release", NEW],
        &["--format", "junit"],
    );
    r.code(1);
    assert!(junit(&r)
        .iter()
        .any(|c| c.name == "commit" && c.failure.is_some()));
}

#[test]
fn verify_vendor_and_manifest_verify_print_junit_and_github() {
    let w = World::new();
    let vendor = w.root().join("vendor");
    fs::create_dir_all(&vendor).unwrap();
    fs::write(vendor.join("sdk-1.0.0.tgz"), "not the released bytes\n").unwrap();
    fs::write(
        vendor.join("sdk-1.0.0.tgz.sha256"),
        format!("{}  sdk-1.0.0.tgz\n", "0".repeat(64)),
    )
    .unwrap();
    let v = vendor.to_str().unwrap();
    let r = w.run(&["verify-vendor", v, "--format", "junit"]);
    r.code(1);
    let cases = junit(&r);
    let failed: Vec<_> = cases.iter().filter(|c| c.failure.is_some()).collect();
    assert_eq!(failed.len(), 1, "{r}");
    assert_eq!(
        (failed[0].classname.as_str(), failed[0].name.as_str()),
        ("sdk-1.0.0.tgz", "sidecar")
    );
    // Its marks are coloured as verify-identity's are, when asked.
    let r = w.run(&["verify-vendor", v, "--color", "always"]);
    r.code(1).stdout_has("\x1b[1;31mFAIL\x1b[0m sidecar");
    let r = w.run(&["verify-vendor", v, "--format", "github"]);
    r.code(1);
    assert!(workflow_commands(&r)
        .iter()
        .any(|(c, t, m)| c == "error" && t == "sdk-1.0.0.tgz sidecar" && m.contains("differs")));

    w.sample();
    let release = w.opt().join("codetools/releases").join(CT_SHA);
    let rel = release.to_str().unwrap();
    w.run(&["manifest", "create", rel]).code(0);
    let pass = w.run(&["manifest", "verify", rel, "--format", "junit"]);
    pass.code(0);
    assert_eq!(junit(&pass).len(), 1);
    fs::write(release.join("bin/codetools"), "#!/bin/sh\necho changed\n").unwrap();
    let r = w.run(&["manifest", "verify", rel, "--format", "junit"]);
    r.code(1);
    let cases = junit(&r);
    assert_eq!(cases.len(), 1, "{r}");
    assert_eq!(cases[0].name, "content");
    assert!(cases[0]
        .failure
        .as_deref()
        .is_some_and(|m| m.contains("modified: bin/codetools")));
    let r = w.run(&["manifest", "verify", rel, "--color", "always"]);
    r.code(1).stdout_has("\x1b[1;31mFAILED\x1b[0m: ");
    let r = w.run(&["manifest", "verify", rel, "--format", "github"]);
    r.code(1);
    assert!(workflow_commands(&r)
        .iter()
        .any(|(c, _, m)| c == "error" && m.contains("modified: bin/codetools")));
}

#[test]
fn a_result_that_is_no_check_report_takes_human_or_json_and_refuses_junit_and_github() {
    let w = World::new();
    let root = w.root().join("sample");
    let r = w.run(&["sample", root.to_str().unwrap(), "--format", "json"]);
    r.code(0);
    assert_eq!(r.json()["ok"], true);
    let ct = w.opt().join("codetools");
    let c = ct.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["sample", c],
        vec!["render-mcp", "--prefix", c],
        vec!["prune", "--prefix", c, "--keep", "1"],
        vec!["pin-vendor", "x.tgz"],
        vec!["manifest", "create", c],
        vec!["clients"],
    ];
    for args in commands {
        for format in ["junit", "github"] {
            let r = w.run(&[&args[..], &["--format", format]].concat());
            r.code(2)
                .stderr_has("[possible values: human, json]")
                .stderr_has("help: junit and github are the formats of a check report");
            assert_eq!(r.stdout, "", "{r}");
        }
    }
    // Nothing ran: no sample was laid out under opt/.
    assert!(!ct.exists());
}

#[test]
fn quiet_prints_only_the_failed_checks_and_the_verdict() {
    let w = World::new();
    let (ct, doc) = codetools_document(&w, "codetools");
    let r = w.verify_identity(&ct, OTHER_SHA, &doc, &["-q"]);
    r.code(1);
    let said = r.said();
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 3, "{r}");
    assert_eq!(lines[0], "codetools");
    assert!(lines[1].starts_with("  FAIL commit "), "{r}");
    assert_eq!(lines[2], "1 check(s) failed");
    let r = w.verify_identity(&ct, CT_SHA, &doc, &["--quiet"]);
    r.code(0);
    // Issue 36.6: -q said "ok: 4 check(s) passed" where the live registration was never
    // compared and the signature never checked; both change what the pass means.
    assert_eq!(
        r.stdout,
        "ok: 3 check(s) passed, 1 not run (document only: the live registration was not \
         compared: codetools)\n",
        "{r}"
    );
    // In GitHub's format: the annotations and the verdict, no passing line.
    let r = w.verify_identity(&ct, OTHER_SHA, &doc, &["-q", "--format", "github"]);
    r.code(1);
    assert!(r.stdout.lines().all(|l| l.starts_with("::")), "{r}");
    // -q and -v together ask for two things.
    w.verify_identity(&ct, CT_SHA, &doc, &["-q", "-v"])
        .code(2)
        .stderr_has("cannot be used with");
}

#[test]
fn verbose_says_every_client_call_and_the_progress_even_on_a_pipe() {
    let w = World::with_real_claude();
    w.sample();
    let r = w.on_sample("install", &["-v"]);
    r.code(0)
        .stderr_has("registering with claude…")
        .stderr_has("client call: claude mcp add-json -s user codetools-test <entry>: exit 0 in ")
        .stderr_has("client call: claude mcp get codetools-test: exit 0 in ");
    // The report on stdout is the same as without -v.
    let again = w.on_sample("install", &["--verbose"]);
    let plain = w.on_sample("install", &[]);
    assert_eq!(again.stdout, plain.stdout);
    // Without -v, on a pipe: neither.
    assert!(!plain.stderr.contains("client call:"), "{plain}");
    assert!(!plain.stderr.contains("asking claude"), "{plain}");
    // A second install makes no mutating call, and -v shows it.
    assert!(!again.stderr.contains("mcp add-json"), "{again}");
    // Quiet: the verdict only, and no progress even where -v would show it.
    let quiet = w.on_sample("install", &["-q"]);
    quiet.code(0);
    assert_eq!(
        quiet.stdout, "ok: 9 check(s) passed, 2 not run\n",
        "{quiet}"
    );
    // uninstall's report has no check: quiet, it says nothing.
    let gone = w.on_sample("uninstall", &["-q"]);
    gone.code(0);
    assert_eq!(gone.stdout, "", "{gone}");
    assert!(w.user_servers().is_empty());
}

#[test]
fn color_is_an_option_of_the_commands_that_colour_and_still_taken_before_them() {
    let w = World::new();
    // Nothing is coloured in a man page or a completion script: no --color there.
    w.run(&["man", "--color", "never"]).code(2);
    w.run(&["completions", "bash", "--color", "never"]).code(2);
    let help = w.run(&["man", "--help"]);
    assert!(!help.said().contains("--color"), "{help}");
    let help = w.run(&["sample", "--help"]);
    assert!(!help.said().contains("--color"), "{help}");
    let help = w.run(&["verify-identity", "--help"]);
    help.code(0)
        .stdout_has("--color <WHEN>")
        .stdout_has("--format <FORMAT>");
    let help = w.run(&["--help"]);
    assert!(!help.said().contains("--color"), "{help}");
    // After the command, and before it as it was spelled when it was global.
    let (ct, doc) = codetools_document(&w, "codetools");
    let (c, d) = (ct.to_str().unwrap(), doc.to_str().unwrap());
    let verify = [
        "verify-identity",
        "--prefix",
        c,
        "--expect-commit",
        CT_SHA,
        "--mcp-json",
        d,
    ];
    let after = w.run(&[&verify[..], &["--color", "always"]].concat());
    after.code(0).stdout_has("\x1b[32mok\x1b[0m");
    let before = w.run(&[&["--color", "always"][..], &verify[..]].concat());
    assert_eq!(before.stdout, after.stdout);
    // The command's own wins.
    let r = w.run(
        &[
            &["--color", "always"][..],
            &verify[..],
            &["--color", "never"],
        ]
        .concat(),
    );
    assert!(!r.said().contains('\x1b'), "{r}");
}

#[test]
fn require_live_fails_a_pass_only_the_document_witnessed() {
    let w = World::with_real_claude();
    w.sample();
    w.on_sample("install", &[]).code(0);
    let ct = w.opt().join("codetools");
    let doc = w.registered();
    let verify = |config: &Path, extra: &[&str]| {
        w.cmd()
            .args(["verify-identity", "--prefix"])
            .arg(&ct)
            .args(["--expect-commit", CT_SHA, "--mcp-json"])
            .arg(&doc)
            .args(["--name", "codetools-test", "--json"])
            .args(extra)
            .env("CLAUDE_CONFIG_DIR", config)
            .run()
    };
    // Where claude keeps no config (a CI runner without it): the document alone.
    let elsewhere = w.root().join("no-claude-here");
    fs::create_dir_all(&elsewhere).unwrap();
    let r = verify(&elsewhere, &[]);
    r.code(0);
    assert_eq!(
        r.json()["servers"][0]["witnesses"],
        serde_json::json!(["document"])
    );
    let r = verify(&elsewhere, &["--require-live"]);
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("--require-live: the live registration is required")
            && detail.contains(&elsewhere.join(".claude.json").display().to_string()),
        "{r}"
    );
    assert_eq!(
        r.checks()
            .into_iter()
            .filter(|(_, ok)| !ok)
            .map(|(c, _)| c)
            .collect::<Vec<_>>(),
        ["mcp-registration"]
    );
    // With claude's live config here, the flag is satisfied.
    let r = verify(&w.config_dir(), &["--require-live"]);
    r.code(0);
    assert_eq!(
        r.json()["servers"][0]["witnesses"][1],
        format!("live {}", w.claude_json().display())
    );
}

/// Issue 34, item 5 (no globals): `-v` reaches the client runner through the options the
/// command opens its clients with, not a global observer — also the runner a file-written
/// client opens on its own to confirm a write (opencode's `debug config`).
#[test]
fn verbose_says_the_confirming_call_of_a_file_written_client() {
    let w = World::with_every_client();
    w.sample();
    let r = w.on_sample("install", &["-v", "--client", "opencode"]);
    r.code(0)
        .stderr_has("client call: opencode debug config: exit 0 in ");
    let plain = w.on_sample("install", &["--client", "opencode"]);
    assert!(!plain.stderr.contains("client call:"), "{plain}");
}
