//! Issue 15, items 1–5: promote, rollback and prune with the real claude. A promote checks the
//! new release before it touches anything, switches `current` atomically, registers and
//! verifies, and puts everything back when a step after the switch fails; a run killed after
//! the switch is undone by the next one; prune never removes what must stay.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::*;

const NEW: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const THIRD: &str = "cccccccccccccccccccccccccccccccccccccccc";

fn ct(w: &World) -> PathBuf {
    w.opt().join("codetools")
}

/// The sample, plus `releases/<sha>` for each of `shas`: a copy of the sample's release
/// (the stand-in server claude's health check talks to) with its own VERSION.
fn with_releases(w: &World, shas: &[&str]) -> PathBuf {
    w.sample();
    for sha in shas {
        add_sample_release(w, sha);
    }
    ct(w)
}

pub(crate) fn add_sample_release(w: &World, sha: &str) -> PathBuf {
    let from = ct(w).join("releases").join(CT_SHA);
    let to = ct(w).join("releases").join(sha);
    fs::create_dir_all(to.join("bin")).unwrap();
    fs::copy(from.join("bin/codetools"), to.join("bin/codetools")).unwrap();
    fs::write(to.join("VERSION"), format!("{sha}\n")).unwrap();
    to
}

fn promote_cmd<'w>(w: &'w World, sha: &str) -> Cmd<'w> {
    w.cmd().args(["promote", "--prefix"]).arg(ct(w)).args([
        "--release",
        sha,
        "--name-suffix",
        "-test",
    ])
}

fn promote(w: &World, sha: &str, extra: &[&str]) -> Run {
    promote_cmd(w, sha).args(extra).run()
}

fn rollback(w: &World, extra: &[&str]) -> Run {
    w.cmd()
        .args(["rollback", "--prefix"])
        .arg(ct(w))
        .args(["--name-suffix", "-test"])
        .args(extra)
        .run()
}

fn prune(w: &World, extra: &[&str]) -> Run {
    w.cmd()
        .args(["prune", "--prefix"])
        .arg(ct(w))
        .args(extra)
        .run()
}

/// What `current` points to (the link's text).
fn current(w: &World) -> String {
    fs::read_link(ct(w).join("current"))
        .map(|t| t.display().to_string())
        .unwrap_or_else(|e| format!("<{e}>"))
}

fn journal(w: &World) -> PathBuf {
    ct(w).join(".mcp-deploy/promote.journal.json")
}

fn history(w: &World) -> Vec<Value> {
    fs::read_to_string(ct(w).join(".mcp-deploy/history.ndjson"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Everything a promote may change: `current`, the claude config, the flat document, the
/// history, the rendered document.
type State = (String, Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);

fn state(w: &World) -> State {
    (
        current(w),
        fs::read(w.claude_json()).ok(),
        fs::read(w.registered()).ok(),
        fs::read(ct(w).join(".mcp-deploy/history.ndjson")).ok(),
    )
}

fn install_codetools(w: &World) {
    w.sample_cmd("install")
        .args(["--server", "codetools"])
        .run()
        .success();
}

fn the_entry(w: &World) -> Value {
    serde_json::json!({"command": ct(w).join("bin/codetools"), "args": ["mcp", "serve"]})
}

fn mutating(w: &World) -> Vec<String> {
    w.calls()
        .into_iter()
        .filter(|c| c.contains("add-json") || c.contains("mcp remove"))
        .collect()
}

#[test]
fn promote_of_a_good_release_switches_registers_verifies_and_records_it() {
    let w = World::with_real_claude();
    w.wrap_claude(&[]);
    with_releases(&w, &[NEW]);
    let r = promote(&w, NEW, &["--json"]);
    r.success();
    let j = r.json();
    assert_eq!(j["ok"], true);
    assert_eq!(j["exit"], 0);
    assert_eq!(j["switched"], true);
    assert_eq!(j["from"], CT_SHA);
    assert_eq!(j["to"], NEW);
    assert_eq!(current(&w), format!("releases/{NEW}"));
    assert_eq!(w.user_servers()["codetools-test"], the_entry(&w));
    assert_eq!(w.flat_servers()["codetools-test"], the_entry(&w));
    assert!(!journal(&w).exists());
    let h = history(&w);
    assert_eq!(h.len(), 1);
    assert_eq!(h[0]["from"], CT_SHA);
    assert_eq!(h[0]["to"], NEW);
    assert_eq!(h[0]["action"], "promote");
    assert_eq!(h[0]["clients"], serde_json::json!(["claude"]));
    let mode = fs::metadata(ct(&w).join(".mcp-deploy"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let mode = fs::metadata(ct(&w).join(".mcp-deploy/history.ndjson"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // No temporary link is left in the prefix.
    let stray: Vec<_> = fs::read_dir(ct(&w))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".current"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");

    // A no-op re-promote: no mutating client call, no history, the document left alone.
    w.clear_calls();
    let before = state(&w);
    let doc_mtime = fs::metadata(w.registered()).unwrap().modified().unwrap();
    let r = promote(&w, NEW, &[]);
    r.success().stdout_has("already live: nothing switched");
    assert_eq!(mutating(&w), Vec::<String>::new());
    assert_eq!(state(&w).0, before.0);
    assert_eq!(state(&w).2, before.2);
    assert_eq!(state(&w).3, before.3, "a no-op writes no history");
    assert_eq!(
        fs::metadata(w.registered()).unwrap().modified().unwrap(),
        doc_mtime
    );
    assert!(!journal(&w).exists());
}

/// Each preflight check that fails: nothing switched, nothing registered, no file changed.
#[test]
fn a_release_failing_a_preflight_check_changes_nothing() {
    type Spoil = fn(&World, &Path);
    let rows: Vec<(&str, Spoil, &str)> = vec![
        (
            "VERSION names another commit",
            |_, rel| fs::write(rel.join("VERSION"), format!("{THIRD}\n")).unwrap(),
            "FAIL commit",
        ),
        (
            "VERSION is garbage",
            |_, rel| fs::write(rel.join("VERSION"), "not a sha\n").unwrap(),
            "FAIL commit",
        ),
        (
            "no such release",
            |_, rel| fs::remove_dir_all(rel).unwrap(),
            "FAIL release",
        ),
        (
            "the release is a symlink out of the prefix",
            |w, rel| {
                let outside = w.root().join("outside");
                fs::rename(rel, &outside).unwrap();
                symlink(&outside, rel).unwrap();
            },
            "is a symlink",
        ),
        (
            "the command is not executable",
            |_, rel| {
                fs::set_permissions(rel.join("bin/codetools"), fs::Permissions::from_mode(0o644))
                    .unwrap()
            },
            "not executable",
        ),
        (
            "the command is missing",
            |_, rel| fs::remove_file(rel.join("bin/codetools")).unwrap(),
            "FAIL mcp-registration",
        ),
        (
            "the command is a link out of the release",
            |_, rel| {
                fs::remove_file(rel.join("bin/codetools")).unwrap();
                symlink("/bin/sh", rel.join("bin/codetools")).unwrap();
            },
            "outside",
        ),
        (
            "a file changed after the manifest was made",
            |w, rel| {
                w.run(&["manifest", "create", rel.to_str().unwrap()])
                    .success();
                fs::write(rel.join("bin/codetools"), "#!/bin/sh\necho tampered\n").unwrap();
            },
            "FAIL content",
        ),
        (
            "<prefix>/VERSION is a plain file of the old commit",
            |w, _| {
                let v = ct(w).join("VERSION");
                fs::remove_file(&v).unwrap();
                fs::write(&v, format!("{CT_SHA}\n")).unwrap();
            },
            "would disagree after the switch",
        ),
    ];
    for (what, spoil, says) in rows {
        let w = World::with_real_claude();
        with_releases(&w, &[NEW]);
        let rel = ct(&w).join("releases").join(NEW);
        install_codetools(&w);
        spoil(&w, &rel);
        w.wrap_claude(&[]);
        let before = state(&w);
        let r = promote(&w, NEW, &[]);
        assert_eq!(r.code, 1, "{what}\n{r}");
        assert!(r.said().contains(says), "{what}: {says:?}\n{r}");
        assert!(
            r.said().contains("nothing was switched or registered"),
            "{what}\n{r}"
        );
        assert_eq!(state(&w), before, "{what}: something changed\n{r}");
        assert_eq!(
            w.calls(),
            Vec::<String>::new(),
            "{what}: a client was called"
        );
        assert!(!journal(&w).exists(), "{what}");
        assert_eq!(current(&w), format!("releases/{CT_SHA}"), "{what}");
        let j = promote(&w, NEW, &["--json"]).json();
        assert_eq!(j["ok"], false, "{what}");
        assert_eq!(j["exit"], 1, "{what}");
        assert_eq!(j["switched"], false, "{what}");
        assert!(
            j["servers"][0]["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["ok"] == false),
            "{what}: {j}"
        );
    }
}

#[test]
fn hostile_inputs_are_refused_with_exit_2_and_nothing_lost() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    install_codetools(&w);
    for bad in ["../x", "../../etc", &NEW[..12], "releases/x"] {
        let r = promote(&w, bad, &[]);
        r.code(2)
            .stderr_has("is not a full commit sha")
            .stderr_has("help:");
    }
    let r = rollback(&w, &["--to", "../x"]);
    r.code(2).stderr_has("is not a full commit sha");
    // With --json, the error is the one JSON envelope on stdout.
    let j = promote(&w, "../x", &["--json"]).json();
    assert_eq!(
        (j["ok"].clone(), j["exit"].clone()),
        (Value::Bool(false), Value::from(2))
    );
    assert!(j["error"]
        .as_str()
        .unwrap()
        .contains("not a full commit sha"));
    assert!(j["help"].is_string());

    // `current` a regular file: refused, kept byte for byte.
    let cur = ct(&w).join("current");
    fs::remove_file(&cur).unwrap();
    fs::write(&cur, b"precious").unwrap();
    promote(&w, NEW, &[])
        .code(2)
        .stderr_has("a regular file, not a symlink")
        .stderr_has("help:");
    assert_eq!(fs::read(&cur).unwrap(), b"precious");
    // Dangling: refused, the link kept.
    fs::remove_file(&cur).unwrap();
    symlink("releases/gone", &cur).unwrap();
    promote(&w, NEW, &[]).code(2).stderr_has("is broken");
    assert_eq!(current(&w), "releases/gone");
    // A directory: refused, kept.
    fs::remove_file(&cur).unwrap();
    fs::create_dir(&cur).unwrap();
    promote(&w, NEW, &[])
        .code(2)
        .stderr_has("a directory, not a symlink");
    assert!(cur.is_dir());
    fs::remove_dir(&cur).unwrap();
    symlink(format!("releases/{CT_SHA}"), &cur).unwrap();

    // The history a FIFO: refused at once, not waited on; kept.
    let hist = ct(&w).join(".mcp-deploy/history.ndjson");
    fs::create_dir_all(hist.parent().unwrap()).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(&hist)
        .status()
        .unwrap()
        .success());
    let start = Instant::now();
    promote(&w, NEW, &[])
        .code(2)
        .stderr_has("FIFO")
        .stderr_has("help:");
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
    fs::remove_file(&hist).unwrap();
    // Garbage: refused, kept byte for byte, nothing switched.
    fs::write(&hist, b"{\"not\": \"a record\"}\n").unwrap();
    for r in [
        promote(&w, NEW, &[]),
        rollback(&w, &[]),
        prune(&w, &["--keep", "0"]),
    ] {
        r.code(2).stderr_has("cannot be read at line 1");
    }
    assert_eq!(fs::read(&hist).unwrap(), b"{\"not\": \"a record\"}\n");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
    assert!(ct(&w).join("releases").join(NEW).is_dir());

    // A prefix that is not a release layout.
    w.cmd()
        .args(["promote", "--prefix"])
        .arg(w.opt().join("orchestrata"))
        .args(["--release", NEW])
        .run()
        .code(2)
        .stderr_has("prefix layout");
}

/// A failure after the switch (a client call fails) puts `current` and every registration
/// back.
#[test]
fn a_client_failure_after_the_switch_puts_everything_back() {
    let w = World::with_real_claude();
    w.wrap_claude(&[]);
    with_releases(&w, &[NEW]);
    w.wrap_claude(&[("add-json", 1, Fault::Fail)]);
    let before = state(&w);
    let r = promote(&w, NEW, &[]);
    r.code(2)
        .stderr_has("injected failure")
        .stderr_has("every change was rolled back")
        .stderr_has("the previous release is live again");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
    assert!(!w.user_servers().contains_key("codetools-test"));
    assert_eq!(state(&w).3, before.3, "no history");
    assert!(!journal(&w).exists());
    assert!(!w.journal().exists(), "no client journal left");
}

/// A check failing after the registration committed: the registration is undone too.
#[test]
fn a_check_failing_after_the_registration_undoes_it_and_the_switch() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    let r = promote_cmd(&w, NEW)
        .env("MCP_DEPLOY_FAIL_AT", "after-verify")
        .run();
    r.code(1)
        .stdout_has("FAIL injected")
        .stdout_has("the previous release is live again")
        .stderr_has("codetools-test put back");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
    assert!(!w.user_servers().contains_key("codetools-test"));
    assert!(!w.flat_servers().contains_key("codetools-test"));
    assert!(!journal(&w).exists());
    assert!(history(&w).is_empty());
}

/// Killed right after the switch, or after the registration: the next run undoes the
/// interrupted promote (saying so), then does its own.
#[test]
fn a_run_killed_after_the_switch_is_undone_by_the_next_run() {
    for point in [
        "after-switch",
        "after-record",
        "after-register",
        "after-history",
    ] {
        let w = World::with_real_claude();
        with_releases(&w, &[NEW]);
        let r = promote_cmd(&w, NEW).env("MCP_DEPLOY_CRASH_AT", point).run();
        assert_ne!(r.code, 0, "{point}\n{r}");
        assert_eq!(current(&w), format!("releases/{NEW}"), "{point}: switched");
        assert!(journal(&w).exists(), "{point}: journalled");
        if point == "after-register" {
            assert!(w.user_servers().contains_key("codetools-test"));
        }
        if point != "after-history" {
            // install warns (and goes on: at after-record it also rolls back the registration
            // transaction's own journal, as for any install); status fails a `promote` check.
            w.sample_cmd("install")
                .args(["--server", "codetools"])
                .run()
                .success()
                .stderr_has("interrupted promote of codetools");
            w.sample_cmd("status")
                .args(["--server", "codetools"])
                .run()
                .code(1)
                .stdout_has("FAIL promote");
            // prune will not remove anything until it is undone.
            prune(&w, &["--keep", "0"])
                .code(2)
                .stderr_has("an interrupted promote is journalled");
        }
        // The next run of rollback recovers first: back to the release live before.
        let r = rollback(&w, &["--to", CT_SHA]);
        r.success();
        if point == "after-history" {
            // That promote had committed: only its journal was left.
            assert!(!r.stderr.contains("recovering"), "{point}\n{r}");
            assert_eq!(history(&w).len(), 2, "{point}");
        } else {
            r.stderr_has("recovering the interrupted promote")
                .stderr_has(&format!("current: back at releases/{CT_SHA}"));
            if point == "after-register" {
                r.stderr_has("codetools-test put back");
            }

            assert!(history(&w).is_empty(), "{point}: nothing committed");
        }
        assert_eq!(current(&w), format!("releases/{CT_SHA}"), "{point}");
        assert!(!journal(&w).exists(), "{point}");
        // And promote then ends where an uninterrupted one would.
        promote(&w, NEW, &[]).success();
        assert_eq!(current(&w), format!("releases/{NEW}"));
        assert_eq!(w.user_servers()["codetools-test"], the_entry(&w));
        assert_eq!(w.flat_servers()["codetools-test"], the_entry(&w));
    }
}

#[test]
fn rollback_returns_to_the_previous_release_or_a_named_one() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW, THIRD]);
    rollback(&w, &[])
        .code(2)
        .stderr_has("nothing to roll back to")
        .stderr_has("--to SHA");
    promote(&w, NEW, &[]).success();
    promote(&w, THIRD, &[]).success();
    let r = rollback(&w, &["--json"]);
    r.success();
    assert_eq!(r.json()["from"], THIRD);
    assert_eq!(r.json()["to"], NEW);
    // Issue 23: the result was "rollbackd: …" (the action's name with a "d").
    let result = r.json()["result"].as_str().unwrap().to_string();
    assert!(result.starts_with("rolled back: releases/"), "{result}");
    assert_eq!(current(&w), format!("releases/{NEW}"));
    rollback(&w, &["--to", CT_SHA])
        .success()
        .stdout_has("rolled back: releases/");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
    let h = history(&w);
    let actions: Vec<&str> = h.iter().map(|r| r["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["promote", "promote", "rollback", "rollback"]);
    assert_eq!(h[3]["from"], NEW);
    // The target is checked like a promote's: a spoiled one changes nothing.
    fs::write(ct(&w).join("releases").join(THIRD).join("VERSION"), "x\n").unwrap();
    rollback(&w, &["--to", THIRD])
        .code(1)
        .stdout_has("FAIL commit");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
}

#[test]
fn prune_keeps_the_live_release_the_rollback_target_and_what_a_registration_points_into() {
    let w = World::with_real_claude();
    let a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let d = "dddddddddddddddddddddddddddddddddddddddd";
    let e = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
    with_releases(&w, &[a, NEW, THIRD, d]);
    promote(&w, a, &[]).success();
    promote(&w, NEW, &[]).success();
    promote(&w, THIRD, &[]).success();
    // A name registered straight into release a, and e registered in the flat document only.
    let pinned = ct(&w).join("releases").join(a).join("bin/codetools");
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "pinned",
        &serde_json::json!({"command": pinned}).to_string(),
    ])
    .success();
    add_sample_release(&w, e);
    let mut doc: Value = serde_json::from_slice(&fs::read(w.registered()).unwrap()).unwrap();
    doc["mcpServers"]["pinned-e"] =
        serde_json::json!({"command": ct(&w).join("releases").join(e).join("bin/codetools")});
    fs::write(w.registered(), doc.to_string()).unwrap();
    // A link in releases/ to a directory outside the prefix: never followed, never removed.
    let outside = w.root().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("keep"), "x").unwrap();
    symlink(&outside, ct(&w).join("releases/ffff")).unwrap();
    // A link inside a release that goes: removed as a link, never descended through.
    symlink(&outside, ct(&w).join("releases").join(d).join("escape")).unwrap();

    let releases = || -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(ct(&w).join("releases"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    let all = releases();
    let r = prune(&w, &["--keep", "0", "--dry-run", "--json"]);
    r.success();
    let j = r.json();
    let gone: Vec<&str> = j["remove"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["release"].as_str().unwrap())
        .collect();
    // Oldest first: the sample's release (last live before a), then d (unpacked, never live).
    assert_eq!(gone, [CT_SHA, d], "{r}");
    let why = |rel: &str| -> String {
        j["keep"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["release"] == rel)
            .map(|k| k["why"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    assert!(why(THIRD).contains("the live release"), "{r}");
    assert!(why(NEW).contains("rollback would return to"), "{r}");
    assert!(
        why(a).contains("a registration points into it (pinned in"),
        "{r}"
    );
    assert!(why(e).contains("pinned-e in"), "{r}");
    assert!(why("ffff").contains("not a release directory"), "{r}");
    assert_eq!(releases(), all, "a dry run removes nothing");

    let r = prune(&w, &["--keep", "0"]);
    r.success()
        .stdout_has(&format!("removed releases/{}", &CT_SHA[..12]));
    let mut left = all.clone();
    left.retain(|n| n != CT_SHA && n != d);
    assert_eq!(releases(), left);
    assert_eq!(fs::read(outside.join("keep")).unwrap(), b"x");
    assert_eq!(current(&w), format!("releases/{THIRD}"));
    // --keep N keeps the N newest besides: a second prune with --keep 5 removes nothing.
    prune(&w, &["--keep", "5"])
        .success()
        .stdout_has("nothing to remove");
}

fn finish(child: Child) -> (i32, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Two promotes of one prefix never interleave: the second waits for the prefix lock (or
/// gives up after --lock-timeout, having changed nothing). Killed while it holds the lock,
/// the first leaves the lock free and its journal for the waiting run to undo. An install
/// of another server is not held up by a promote in progress.
#[test]
fn concurrent_promotes_of_one_prefix_serialize_and_a_kill_is_undone() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW, THIRD]);
    let first = promote_cmd(&w, NEW)
        .env("MCP_DEPLOY_PAUSE_AT", "after-switch")
        .spawn();
    wait_until("the first promote to switch", secs(30), || {
        journal(&w).exists() && current(&w) == format!("releases/{NEW}")
    });
    // Refused after its timeout, nothing changed.
    let r = promote(&w, THIRD, &["--lock-timeout", "1"]);
    r.code(2)
        .stderr_has("prefix.lock is held now by pid")
        .stderr_has("an mcp-deploy run (`");
    assert_eq!(current(&w), format!("releases/{NEW}"));
    // An install of another server runs meanwhile: the promote holds no client lock yet.
    let start = Instant::now();
    w.sample_cmd("install")
        .args(["--server", "orchestrata", "--lock-timeout", "5"])
        .run()
        .success();
    assert!(start.elapsed() < Duration::from_secs(20));
    // A waiting promote, then the first is killed (SIGKILL) at the worst moment.
    let mut second = promote_cmd(&w, THIRD).start();
    second.wait_for_stderr(
        "the second promote to wait for the prefix lock",
        "waiting for",
        secs(60),
    );
    let mut first = first;
    first.kill().unwrap();
    let _ = first.wait();
    let r = second.finish();
    let (code, stderr) = (r.code, r.stderr);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("waiting for"), "{stderr}");
    assert!(
        stderr.contains("recovering the interrupted promote"),
        "{stderr}"
    );
    assert_eq!(current(&w), format!("releases/{THIRD}"));
    let h = history(&w);
    assert_eq!(h.len(), 1);
    assert_eq!(h[0]["from"], CT_SHA, "the killed promote never committed");
    assert_eq!(h[0]["to"], THIRD);
    assert!(!journal(&w).exists());
}

/// The lock and state files in the prefix are refused when planted as something else.
#[test]
fn a_planted_state_directory_or_lock_is_refused() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    let outside = w.root().join("elsewhere");
    fs::create_dir(&outside).unwrap();
    symlink(&outside, ct(&w).join(".mcp-deploy")).unwrap();
    promote(&w, NEW, &[]).code(2).stderr_has("not a directory");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
    fs::remove_file(ct(&w).join(".mcp-deploy")).unwrap();
    fs::create_dir(ct(&w).join(".mcp-deploy")).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(ct(&w).join(".mcp-deploy/prefix.lock"))
        .status()
        .unwrap()
        .success());
    promote(&w, NEW, &[])
        .code(2)
        .stderr_has("not a regular file");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
}

/// The first promote of a layout with no `current` yet creates it; undone, it is removed again.
#[test]
fn the_first_promote_creates_current_and_its_undo_removes_it() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    fs::remove_file(ct(&w).join("current")).unwrap();
    w.wrap_claude(&[("add-json", 1, Fault::Fail)]);
    promote(&w, NEW, &[])
        .code(2)
        .stderr_has("`current` is removed again, as it was before");
    assert!(ct(&w).join("current").symlink_metadata().is_err());
    w.wrap_claude(&[]);
    promote(&w, NEW, &[]).success();
    assert_eq!(current(&w), format!("releases/{NEW}"));
    let h = history(&w);
    assert_eq!(h[0]["from"], Value::Null);
    rollback(&w, &[])
        .code(2)
        .stderr_has("nothing was live before it");
}

/// A prefix reached through a symlinked component: the switch happens in the real directory,
/// and both spellings take the same prefix lock.
#[test]
fn a_prefix_through_a_symlinked_component_is_switched_in_place() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    let link = w.root().join("link");
    symlink(w.opt(), &link).unwrap();
    let r = w
        .cmd()
        .args(["promote", "--prefix"])
        .arg(link.join("codetools"))
        .args(["--release", NEW, "--name-suffix", "-test"])
        .run();
    r.success();
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(current(&w), format!("releases/{NEW}"));
    // Registered under the path as given (what the agent runs), proven inside the release.
    assert_eq!(
        w.user_servers()["codetools-test"]["command"],
        link.join("codetools/bin/codetools").to_str().unwrap()
    );
    // One lock for both spellings: a promote through the real path waits for one through
    // the link.
    let first = w
        .cmd()
        .args(["promote", "--prefix"])
        .arg(link.join("codetools"))
        .args(["--release", CT_SHA, "--name-suffix", "-test"])
        .env("MCP_DEPLOY_PAUSE_AT", "after-switch")
        .spawn();
    wait_until("the promote through the link to switch", secs(30), || {
        journal(&w).exists()
    });
    promote(&w, NEW, &["--lock-timeout", "1"])
        .code(2)
        .stderr_has("prefix.lock is held now by pid")
        .stderr_has("an mcp-deploy run (`");
    let mut first = first;
    first.kill().unwrap();
    let _ = first.wait();
    promote(&w, NEW, &[])
        .success()
        .stderr_has("recovering the interrupted promote");
    assert_eq!(current(&w), format!("releases/{NEW}"));
}

/// SIGTERM or SIGINT after the switch: the run stops, undoes the switch and exits 2.
#[test]
fn a_signal_after_the_switch_undoes_it_and_exits_2() {
    for sig in ["-TERM", "-INT"] {
        let w = World::with_real_claude();
        with_releases(&w, &[NEW]);
        let mut child = promote_cmd(&w, NEW)
            .env("MCP_DEPLOY_PAUSE_AT", "after-switch")
            .start();
        child.paused_at("after-switch");
        assert!(journal(&w).exists() && current(&w) == format!("releases/{NEW}"));
        child.signal(sig);
        let r = child.finish();
        let (code, stderr) = (r.code, r.stderr);
        assert_eq!(code, 2, "{sig}: {stderr}");
        assert!(
            stderr.contains("the previous release is live again"),
            "{sig}: {stderr}"
        );
        assert_eq!(current(&w), format!("releases/{CT_SHA}"), "{sig}");
        assert!(!journal(&w).exists(), "{sig}");
        assert!(!w.user_servers().contains_key("codetools-test"), "{sig}");
        assert!(history(&w).is_empty(), "{sig}");
    }
}

/// What a person sees when the new release fails its preflight, and when it is promoted.
#[test]
fn promote_human_output() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    let rel = ct(&w).join("releases").join(NEW);
    fs::write(rel.join("VERSION"), format!("{THIRD}\n")).unwrap();
    let r = promote(&w, NEW, &[]);
    r.code(1);
    crate::snapshot!("promote_preflight_fails", r);
    fs::write(rel.join("VERSION"), format!("{NEW}\n")).unwrap();
    let r = promote(&w, NEW, &[]);
    r.success();
    crate::snapshot!("promote_succeeds", r);
}

/// The release swapped for a link out of the prefix after the preflight passed (while the
/// client is being called): the verification after the switch catches it, and everything is
/// put back.
#[test]
fn a_release_swapped_for_a_link_after_the_preflight_is_caught_and_undone() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    let rel = ct(&w).join("releases").join(NEW);
    let outside = w.root().join("outside");
    w.write_claude(&format!(
        "#!/bin/sh\n\
         if [ \"$2\" = add-json ] && [ ! -L '{rel}' ]; then mv '{rel}' '{out}' && ln -s '{out}' '{rel}'; fi\n\
         exec '{real}' \"$@\"\n",
        rel = rel.display(),
        out = outside.display(),
        real = real_claude().display()
    ));
    let r = promote(&w, NEW, &[]);
    r.code(1)
        .stdout_has("FAIL release")
        .stdout_has("the previous release is live again");
    assert_eq!(current(&w), format!("releases/{CT_SHA}"));
    assert!(!w.user_servers().contains_key("codetools-test"));
    assert!(!w.flat_servers().contains_key("codetools-test"));
    assert!(history(&w).is_empty());
    assert!(!journal(&w).exists());
}

/// `--dry-run`: the preflight, and whether `current` would switch; no lock, no call, no file.
#[test]
fn a_dry_run_checks_and_predicts_and_changes_nothing() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    w.wrap_claude(&[]);
    let before = state(&w);
    let r = promote(&w, NEW, &["--dry-run", "--json"]);
    r.success();
    let j = r.json();
    assert_eq!(j["dry_run"], true);
    assert_eq!(j["switched"], true);
    assert_eq!(j["from"], CT_SHA);
    assert!(
        j["result"].as_str().unwrap().contains("would switch"),
        "{j}"
    );
    assert_eq!(state(&w), before);
    assert!(
        !ct(&w).join(".mcp-deploy").exists(),
        "a dry run creates nothing"
    );
    assert_eq!(w.calls(), Vec::<String>::new());
    // Issue 36.10: the human dry run printed the handshake twice, as a check row and as a
    // line after it; once now.
    let human = promote(&w, NEW, &["--dry-run"]);
    human.success();
    assert_eq!(
        human.stdout.matches("started as").count(),
        1,
        "{}",
        human.stdout
    );
    // The live release: nothing would switch.
    let j = promote(&w, CT_SHA, &["--dry-run", "--json"]).json();
    assert_eq!(j["switched"], false);
    // A spoiled release: the preflight fails, exit 1.
    fs::write(ct(&w).join("releases").join(NEW).join("VERSION"), "x\n").unwrap();
    promote(&w, NEW, &["--dry-run"])
        .code(1)
        .stdout_has("FAIL commit");
    assert_eq!(state(&w), before);
    // rollback --dry-run finds its target in the history without changing it.
    fs::write(
        ct(&w).join("releases").join(NEW).join("VERSION"),
        format!("{NEW}\n"),
    )
    .unwrap();
    promote(&w, NEW, &[]).success();
    let before = state(&w);
    let j = w
        .cmd()
        .args(["rollback", "--prefix"])
        .arg(ct(&w))
        .args(["--name-suffix", "-test", "--dry-run", "--json"])
        .run()
        .json();
    assert_eq!(j["to"], CT_SHA);
    assert_eq!(j["switched"], true);
    assert_eq!(state(&w), before);
}

/// `ln -sfn releases/<sha> current.tmp && mv -T`: a person switching `current` by hand,
/// without the prefix lock.
fn hand_switch(w: &World, sha: &str) {
    let tmp = ct(w).join("current.by-hand");
    symlink(format!("releases/{sha}"), &tmp).unwrap();
    fs::rename(&tmp, ct(w).join("current")).unwrap();
}

fn term(child: &Child) {
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
}

/// Attack: `current` switched by hand while a promote runs — between its preflight and its
/// switch, or between its switch and a failure's undo. Before, the switch renamed over the
/// hand change, and the undo put back the release it had read, over someone else's switch.
/// Now both compare first: the switch is refused (exit 2, nothing switched, nothing
/// registered), and the undo leaves the other's `current` as it is, saying so.
#[test]
fn current_switched_by_hand_during_a_promote_is_never_overwritten() {
    for point in ["promote-journal-written", "after-switch"] {
        let w = World::with_real_claude();
        with_releases(&w, &[NEW, THIRD]);
        let mut child = promote_cmd(&w, NEW)
            .env("MCP_DEPLOY_PAUSE_AT", point)
            .start();
        child.paused_at(point);
        assert!(
            journal(&w).exists()
                && (point != "after-switch" || current(&w) == format!("releases/{NEW}"))
        );
        hand_switch(&w, THIRD);
        child.signal("-TERM");
        let r = child.finish();
        let (code, stderr) = (r.code, r.stderr);
        assert_eq!(code, 2, "{point}: {stderr}");
        if point == "after-switch" {
            assert!(stderr.contains("`current` was NOT put back"), "{stderr}");
            assert!(
                stderr.contains(&format!("it is -> releases/{THIRD} now")),
                "{stderr}"
            );
        } else {
            assert!(
                stderr.contains("changed while this promote ran"),
                "{stderr}"
            );
            assert!(stderr.contains("nothing was switched"), "{stderr}");
        }
        assert_eq!(current(&w), format!("releases/{THIRD}"), "{point}");
        assert!(!journal(&w).exists(), "{point}");
        assert!(!w.user_servers().contains_key("codetools-test"), "{point}");
        assert!(history(&w).is_empty(), "{point}");
    }
}

/// Attack: the journal of an interrupted promote (killed after its switch) names a `from`
/// that must not become `current` — `releases/evil`, a link to a directory outside the
/// prefix, or a release removed since — or `current` was switched by hand after the kill.
/// Before, recovery switched `current` to whatever `from` named whenever it differed: a link
/// out of the prefix, a dangling link, or over the hand change. Now it puts back only a
/// release directory, only over the release the interrupted run switched to; otherwise it
/// stops with exit 2 keeping the journal and `current`, or leaves the hand change, saying so.
#[test]
fn recovery_never_switches_to_a_journalled_release_that_is_not_one_nor_over_a_hand_change() {
    for attack in ["a link out of the prefix", "removed since", "hand switch"] {
        let w = World::with_real_claude();
        with_releases(&w, &[NEW, THIRD]);
        promote_cmd(&w, NEW)
            .env("MCP_DEPLOY_CRASH_AT", "after-switch")
            .run();
        assert!(journal(&w).exists(), "{attack}");
        match attack {
            "a link out of the prefix" => {
                let outside = w.root().join("outside");
                fs::create_dir_all(&outside).unwrap();
                symlink(&outside, ct(&w).join("releases/evil")).unwrap();
                let text = fs::read_to_string(journal(&w)).unwrap();
                fs::write(journal(&w), text.replace(CT_SHA, "evil")).unwrap();
            }
            "removed since" => {
                fs::rename(
                    ct(&w).join("releases").join(CT_SHA),
                    w.root().join("moved-away"),
                )
                .unwrap();
            }
            _ => hand_switch(&w, THIRD),
        }
        let r = promote(&w, THIRD, &[]);
        if attack == "hand switch" {
            r.success()
                .stderr_has("changed since by someone else, left as it is");
            assert_eq!(current(&w), format!("releases/{THIRD}"));
            assert!(!journal(&w).exists());
            continue;
        }
        r.code(2)
            .stderr_has("cannot be put back")
            .stderr_has(&format!("`current` is left at releases/{NEW}"))
            .stderr_has("help:");
        assert_eq!(current(&w), format!("releases/{NEW}"), "{attack}");
        assert!(journal(&w).exists(), "{attack}: the journal is kept");
    }
}

/// Attack: the release live before is removed (by hand, without the lock) while a promote
/// runs, and then the promote fails. Before, the undo pointed `current` at the removed
/// release: a dangling link. Now `current` stays at the new release and the journal is kept,
/// naming what to do.
#[test]
fn an_undo_never_points_current_at_a_release_removed_meanwhile() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    let child = promote_cmd(&w, NEW)
        .env("MCP_DEPLOY_PAUSE_AT", "after-switch")
        .spawn();
    wait_until("the promote to switch", secs(30), || {
        journal(&w).exists() && current(&w) == format!("releases/{NEW}")
    });
    fs::rename(
        ct(&w).join("releases").join(CT_SHA),
        w.root().join("moved-away"),
    )
    .unwrap();
    term(&child);
    let (code, stderr) = finish(child);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("could NOT be put back"), "{stderr}");
    assert_eq!(current(&w), format!("releases/{NEW}"));
    assert!(ct(&w).join("current").exists(), "never dangling");
    assert!(journal(&w).exists());
}

/// Attack: `current` switched by hand (no lock) to a release prune has decided to remove,
/// after it decided and before it removes. Before, prune removed the release that was live
/// by then, leaving `current` dangling. Now each removal first compares with what `current`
/// names: refused with exit 2, the release and `current` kept.
#[test]
fn prune_never_removes_a_release_made_live_after_it_decided() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW, THIRD]);
    promote(&w, NEW, &[]).success();
    promote(&w, THIRD, &[]).success();
    // The sample's release is neither live nor rollback's target: prune --keep 0 removes it.
    let mut child = w
        .cmd()
        .args(["prune", "--prefix"])
        .arg(ct(&w))
        .args(["--keep", "0"])
        .env("MCP_DEPLOY_PAUSE_AT", "prune-planned")
        .start();
    // prune has decided, and pauses for 30 s at the checkpoint (a SIGTERM ends the pause).
    child.paused_at("prune-planned");
    hand_switch(&w, CT_SHA);
    child.resume();
    let r = child.finish();
    let (code, stderr) = (r.code, r.stderr);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("it is the live release now"), "{stderr}");
    assert!(ct(&w).join("releases").join(CT_SHA).is_dir());
    assert!(ct(&w).join("current").exists(), "never dangling");
}

/// The first promote (no `current` before) killed after its switch: `prune` refuses to act
/// on the half-done state, and the next promote removes `current` again
/// (compare-and-swap: it still names the killed run's release) before its own.
#[test]
fn a_first_promote_killed_after_the_switch_is_undone_to_no_current() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    fs::remove_file(ct(&w).join("current")).unwrap();
    promote_cmd(&w, NEW)
        .env("MCP_DEPLOY_CRASH_AT", "after-switch")
        .run();
    assert_eq!(current(&w), format!("releases/{NEW}"));
    prune(&w, &["--keep", "0"])
        .code(2)
        .stderr_has("an interrupted promote is journalled");
    assert!(ct(&w).join("releases").join(CT_SHA).is_dir());
    let r = promote(&w, NEW, &[]);
    r.success()
        .stderr_has("current: removed again (there was none before)");
    assert_eq!(current(&w), format!("releases/{NEW}"));
    let h = history(&w);
    assert_eq!((h.len(), &h[0]["from"]), (1, &Value::Null));
}

/// Attack: a promote journal planted in the prefix's state directory by someone else — the
/// prefix's owner when root runs the promote (root may use a `.mcp-deploy` another user
/// owns), naming as "the entry before" a registration that runs their program. Before, the
/// next promote "undid" it: the planted entry went into root's client config, outside any
/// signature, and stayed there whenever that promote then failed its preflight. Now a
/// journal that is not ours (another owner, writable by group or others, a link) is refused
/// with exit 2 and never acted on.
#[test]
fn a_planted_promote_journal_is_never_acted_on() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::with_real_claude();
    with_releases(&w, &[NEW, THIRD]);
    promote(&w, NEW, &[]).success();
    // A release that fails its preflight: the promote stops right after the recovery.
    fs::write(ct(&w).join("releases").join(THIRD).join("VERSION"), "0\n").unwrap();
    let evil = serde_json::json!({"command": "/bin/sh", "args": ["-c", "echo pwned"]});
    let planted = serde_json::json!({
        "journal": 1, "id": "planted", "pid": 1, "action": "promote",
        "from": CT_SHA, "to": NEW, "registered_document": w.registered(),
        "registered": [{"client": "claude", "changes": [
            {"name": "codetools-test", "previous": evil, "target": the_entry(&w)}
        ]}]
    });
    let j = journal(&w);
    let root = rustix::process::geteuid().is_root();
    for other_owner in [false, true] {
        fs::write(&j, planted.to_string()).unwrap();
        let want = if other_owner && root {
            fs::set_permissions(&j, fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::chown(&j, Some(65534), None).unwrap();
            "belongs to uid 65534"
        } else {
            fs::set_permissions(&j, fs::Permissions::from_mode(0o666)).unwrap();
            "group or others"
        };
        promote(&w, THIRD, &[])
            .code(2)
            .stderr_has(want)
            .stderr_has("help:");
        assert_eq!(w.user_servers()["codetools-test"], the_entry(&w), "{want}");
        assert_eq!(current(&w), format!("releases/{NEW}"), "{want}");
        assert!(j.exists(), "{want}: kept");
        fs::remove_file(&j).unwrap();
    }
}

// Issue 20, items 5–7: running processes are a witness, prune never breaks something live, a
// promote is gated on the new release answering.

/// A copy of `sleep` inside `release` (its exe lies there), started, with its pid.
fn sleeper_in(release: &Path) -> Child {
    let exe = release.join("bin/sleep");
    fs::copy(system_tool("sleep"), &exe).unwrap();
    std::process::Command::new(&exe).arg("300").spawn().unwrap()
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Every live process whose executable lies inside `dir`, read from /proc by the test itself.
fn processes_in(dir: &Path) -> Vec<String> {
    let dir = fs::canonicalize(dir).unwrap();
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_name().to_str()?.parse::<u32>().ok()?;
            let exe = fs::read_link(e.path().join("exe")).ok()?;
            exe.starts_with(&dir)
                .then(|| format!("{} {}", e.file_name().to_string_lossy(), exe.display()))
        })
        .collect()
}

#[test]
fn status_and_promote_name_processes_still_running_the_previous_release() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    install_codetools(&w);
    let old = ct(&w).join("releases").join(CT_SHA);
    // A binary server started from the old release, and a node server started through the
    // stable path (exe: node; its script resolves through `current`) before the promote.
    let sleeper = sleeper_in(&old);
    let node = std::process::Command::new(ct(&w).join("bin/codetools"))
        .args(["mcp", "serve"])
        .env("PATH", std::env::var_os("PATH").unwrap())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("node to start", secs(10), || {
        fs::read(format!("/proc/{}/cmdline", node.id()))
            .is_ok_and(|c| c.windows(9).any(|w| w == b"codetools"))
    });
    let (sp, np) = (sleeper.id(), node.id());
    let r = promote(&w, NEW, &["--json"]);
    r.success();
    let j = r.json();
    assert_eq!(j["still_running"]["release"], CT_SHA, "{r}");
    assert_eq!(j["still_running"]["processes"], 2, "{r}");
    let pids = j["still_running"]["pids"].to_string();
    assert!(
        pids.contains(&sp.to_string()) && pids.contains(&np.to_string()),
        "{r}"
    );

    // status: a warning row that passes, naming pid, release and path; --strict fails it.
    let r = w.on_sample("status", &["--server", "codetools", "--json"]);
    r.success();
    let d = r.detail("processes");
    assert!(
        d.starts_with("warning: 2 processes still run releases/"),
        "{d}"
    );
    assert!(
        d.contains(&format!(
            "pid {sp} (exe {}",
            fs::canonicalize(&old).unwrap().display()
        )),
        "{d}"
    );
    assert!(
        d.contains(&format!(
            "pid {np} (cmdline, started before `current` was switched"
        )),
        "{d}"
    );
    w.on_sample("status", &["--server", "codetools", "--strict"])
        .code(1)
        .stdout_has("FAIL processes");
    // The release's file deleted under the running process: still named by its release.
    fs::remove_file(old.join("bin/sleep")).unwrap();
    let d = w
        .on_sample("status", &["--server", "codetools", "--json"])
        .detail("processes");
    assert!(d.contains("bin/sleep (deleted)"), "{d}");
    stop(sleeper);
    stop(node);
    let r = w.on_sample("status", &["--server", "codetools", "--strict", "--json"]);
    r.success();
    assert!(
        r.detail("processes")
            .contains("process runs another release"),
        "{r}"
    );
}

#[test]
fn prune_keeps_a_release_a_running_process_uses_and_names_it() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW, THIRD]);
    promote(&w, NEW, &[]).success();
    promote(&w, THIRD, &[]).success();
    // The sample's release is neither live nor the rollback target: only the process holds it.
    let old = ct(&w).join("releases").join(CT_SHA);
    let child = sleeper_in(&old);
    let pid = child.id();
    let r = prune(&w, &["--keep", "0", "--json"]);
    r.success();
    let kept = r.json()["keep"].to_string();
    assert!(
        kept.contains(&format!("a running process uses it: pid {pid} (exe ")),
        "{r}"
    );
    assert!(old.is_dir(), "{r}");
    stop(child);
    prune(&w, &["--keep", "0"])
        .success()
        .stdout_has(&format!("removed releases/{}", &CT_SHA[..12]));
}

#[test]
fn prune_keeps_releases_a_claude_local_scope_registration_points_into_even_by_dot_dot() {
    let w = World::with_real_claude();
    let a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    with_releases(&w, &[a, NEW, THIRD]);
    promote(&w, a, &[]).success();
    promote(&w, NEW, &[]).success();
    promote(&w, THIRD, &[]).success();
    // Neither the sample's release nor a is live or the rollback target (NEW is). A local
    // scope entry names the sample's release; another reaches a by climbing out of THIRD.
    let project = w.root().join("home/project");
    fs::create_dir_all(&project).unwrap();
    let rel = ct(&w).join("releases");
    let direct = rel.join(CT_SHA).join("bin/codetools");
    let climbing = format!("{}/{THIRD}/../{a}/bin/codetools", rel.display());
    for (name, command) in [
        ("old-local", direct.display().to_string()),
        ("climb", climbing),
    ] {
        w.program(real_claude())
            .args(["mcp", "add-json", "-s", "local", name])
            .arg(serde_json::json!({ "command": command }).to_string())
            .current_dir(&project)
            .run()
            .success();
        // The client confirms the state: the entry is in the local scope of that project.
        w.program(real_claude())
            .args(["mcp", "get", name])
            .env("MCP_TIMEOUT", "3000")
            .current_dir(&project)
            .run()
            .stdout_has("Local config");
    }
    let r = prune(&w, &["--keep", "0", "--json"]);
    r.success();
    let j = r.json();
    assert_eq!(j["remove"], serde_json::json!([]), "{r}");
    let why = |rel: &str| -> String {
        j["keep"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["release"] == rel)
            .map(|k| k["why"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let local = format!("local scope of project {}", project.display());
    assert!(why(CT_SHA).contains("old-local in"), "{r}");
    assert!(why(CT_SHA).contains(&local), "{r}");
    assert!(why(a).contains("climb in"), "{r}");
    assert!(why(a).contains(&local), "{r}");
}

#[test]
fn prune_keeps_everything_it_cannot_rule_out_when_a_source_cannot_be_read() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW, THIRD]);
    promote(&w, NEW, &[]).success();
    promote(&w, THIRD, &[]).success();
    // A project .mcp.json in the directory prune runs from that mcp-deploy cannot parse.
    let project = w.root().join("home/p2");
    fs::create_dir_all(&project).unwrap();
    fs::write(project.join(".mcp.json"), "{not json").unwrap();
    let r = w
        .cmd()
        .args(["prune", "--prefix"])
        .arg(ct(&w))
        .args(["--keep", "0", "--json"])
        .current_dir(&project)
        .run();
    r.success();
    let j = r.json();
    assert_eq!(j["remove"], serde_json::json!([]), "{r}");
    assert!(
        j["keep"]
            .to_string()
            .contains("a registration source cannot be read"),
        "{r}"
    );
    assert!(ct(&w).join("releases").join(CT_SHA).is_dir());
}

/// A release NEW whose server is the shell script `script`.
fn release_with_server(w: &World, sha: &str, script: &str) -> PathBuf {
    let dir = add_sample_release(w, sha);
    write_exec(&dir.join("bin/codetools"), script);
    dir
}

fn assert_refused_by_handshake(w: &World, r: &Run, before: &State, what: &str) {
    r.code(1);
    let d = r.detail("handshake");
    assert!(d.contains(what), "{d}\n{r}");
    assert_eq!(&state(w), before, "nothing switched or registered\n{r}");
    assert!(!journal(w).exists());
}

#[test]
fn a_release_whose_server_does_not_answer_is_refused_with_nothing_switched() {
    let w = World::with_real_claude();
    with_releases(&w, &[]);
    install_codetools(&w);
    let before = state(&w);
    // Exits at once.
    release_with_server(&w, NEW, "#!/bin/sh\necho 'no MCP here' >&2\nexit 3\n");
    let r = promote(&w, NEW, &["--json"]);
    assert_refused_by_handshake(&w, &r, &before, "exit status 3");
    assert!(r.detail("handshake").contains("no MCP here"), "{r}");
    assert!(r.json()["handshake"]
        .as_str()
        .unwrap()
        .contains("before answering initialize"));
    // Human form names it too.
    promote(&w, NEW, &[])
        .code(1)
        .stdout_has("FAIL handshake")
        .stdout_has("nothing was switched or registered");
    // --no-handshake skips the gate and says so (a dry run: the release is still broken).
    let r = promote(&w, NEW, &["--no-handshake", "--dry-run", "--json"]);
    r.success();
    assert_eq!(r.json()["handshake"], "skipped (--no-handshake)", "{r}");
    promote(&w, NEW, &["--no-handshake", "--dry-run"])
        .success()
        .stdout_has("handshake: skipped (--no-handshake)");
}

#[test]
fn a_server_hanging_on_initialize_is_bounded_by_the_handshake_timeout() {
    let w = World::with_real_claude();
    with_releases(&w, &[]);
    install_codetools(&w);
    let before = state(&w);
    release_with_server(&w, NEW, "#!/bin/sh\nexec sleep 300\n");
    let t = Instant::now();
    let r = promote(&w, NEW, &["--handshake-timeout", "1", "--json"]);
    let took = t.elapsed();
    assert_refused_by_handshake(&w, &r, &before, "no answer to initialize within 1s");
    // The timeout plus the 2 s grace between SIGTERM and SIGKILL, and the rest of the run.
    assert!(took < Duration::from_secs(8), "took {took:?}");
}

#[test]
fn a_server_answering_initialize_but_not_tools_list_is_refused() {
    let w = World::with_real_claude();
    with_releases(&w, &[]);
    install_codetools(&w);
    let before = state(&w);
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"half","version":"1"}}}"#;
    release_with_server(
        &w,
        NEW,
        &format!("#!/bin/sh\nread -r _\necho '{init}'\nexec sleep 300\n"),
    );
    let r = promote(&w, NEW, &["--handshake-timeout", "2", "--json"]);
    assert_refused_by_handshake(&w, &r, &before, "no answer to tools/list within 2s");
}

#[test]
fn a_server_that_forks_a_child_and_exits_leaves_no_process_behind() {
    let w = World::with_real_claude();
    with_releases(&w, &[]);
    install_codetools(&w);
    let before = state(&w);
    let dir = release_with_server(
        &w,
        NEW,
        "#!/bin/sh\n\"$(dirname \"$0\")/sleep\" 300 >/dev/null 2>&1 &\nexit 0\n",
    );
    fs::copy(system_tool("sleep"), dir.join("bin/sleep")).unwrap();
    let r = promote(&w, NEW, &["--json"]);
    assert_refused_by_handshake(&w, &r, &before, "before answering initialize");
    wait_until("the forked child to be gone", secs(5), || {
        processes_in(&dir).is_empty()
    });
}

#[test]
fn rollback_is_gated_on_the_release_it_returns_to_answering() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    promote(&w, NEW, &[]).success();
    // The release rollback would return to no longer answers.
    write_exec(
        &ct(&w).join("releases").join(CT_SHA).join("bin/codetools"),
        "#!/bin/sh\nexit 9\n",
    );
    let before = state(&w);
    let r = rollback(&w, &["--json"]);
    assert_refused_by_handshake(&w, &r, &before, "exit status 9");
    assert_eq!(current(&w), format!("releases/{NEW}"));
}

#[test]
fn the_gate_starts_the_candidate_not_the_release_current_names() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW]);
    install_codetools(&w);
    // The live release's server is broken, the candidate's fine: the gate must start the
    // candidate through the stable path as it will resolve after the switch.
    write_exec(
        &ct(&w).join("releases").join(CT_SHA).join("bin/codetools"),
        "#!/bin/sh\nexit 9\n",
    );
    let r = promote(&w, NEW, &["--json"]);
    r.success();
    let h = r.json()["handshake"].as_str().unwrap().to_string();
    assert!(
        h.contains(&format!("releases/{NEW}/bin/codetools: server")),
        "{h}"
    );
}

#[test]
fn prune_keeps_a_release_a_server_started_from_after_it_decided() {
    let w = World::with_real_claude();
    with_releases(&w, &[NEW, THIRD]);
    promote(&w, NEW, &[]).success();
    promote(&w, THIRD, &[]).success();
    let old = ct(&w).join("releases").join(CT_SHA);
    fs::copy(system_tool("sleep"), old.join("bin/sleep")).unwrap();
    let mut child = w
        .cmd()
        .args(["prune", "--prefix"])
        .arg(ct(&w))
        .args(["--keep", "0", "--json"])
        .env("MCP_DEPLOY_PAUSE_AT", "prune-planned")
        .start();
    // prune has decided to remove the sample's release; a server starts from it meanwhile.
    child.paused_at("prune-planned");
    let server = std::process::Command::new(old.join("bin/sleep"))
        .arg("300")
        .spawn()
        .unwrap();
    let pid = server.id();
    wait_until("the server to run from the old release", secs(10), || {
        fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e.starts_with(&old))
    });
    child.resume();
    let r = child.finish();
    let (code, stdout) = (r.code, r.stdout);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(&format!(
            "started since prune decided: a running process uses it: pid {pid}"
        )),
        "{stdout}"
    );
    assert!(old.join("bin/sleep").is_file(), "renamed back, whole");
    stop(server);
}

/// Issue 36.5: the first promote of a new prefix failed ("…/bin/codetools cannot be
/// resolved"): nothing created the stable link `bin/<exe> -> ../current/bin/<exe>` that the
/// registration names. Now the preflight checks the command as that link will resolve, the
/// promote creates it (saying so), and an undone first promote removes it again.
#[test]
fn the_first_promote_of_a_new_prefix_creates_the_stable_link_and_its_undo_removes_it() {
    let w = World::with_real_claude();
    w.sample();
    // A new prefix: nothing but releases/<sha>, as a pipeline's tar leaves it.
    for name in ["current", "bin", "mcp", "VERSION"] {
        let p = ct(&w).join(name);
        if p.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            fs::remove_dir_all(&p).unwrap();
        } else {
            let _ = fs::remove_file(&p);
        }
    }
    let link = ct(&w).join("bin/codetools");
    // A release without the file its link would lead to: said as a file missing from the
    // release, never as a registration edited by hand (the gate checks the declared path).
    let own = ct(&w).join("releases").join(CT_SHA).join("bin/codetools");
    let aside = w.root().join("codetools.aside");
    fs::rename(&own, &aside).unwrap();
    let r = promote(&w, CT_SHA, &["--dry-run"]);
    r.code(1).stdout_has("missing from the release");
    assert!(!r.said().contains("edited by hand"), "{}", r.stdout);
    fs::rename(&aside, &own).unwrap();
    // A dry run says it would create the link, and creates nothing.
    promote(&w, CT_SHA, &["--dry-run"])
        .code(0)
        .stdout_has("it would create the stable link bin/codetools -> ../current/bin/codetools");
    assert!(link.symlink_metadata().is_err());
    // Undone after the switch: `current` and the link both go again.
    promote_cmd(&w, CT_SHA)
        .env("MCP_DEPLOY_FAIL_AT", "after-verify")
        .run()
        .code(1)
        .stdout_has("the stable link")
        .stdout_has("removed again");
    assert!(link.symlink_metadata().is_err(), "the link was left");
    assert!(ct(&w).join("current").symlink_metadata().is_err());
    // Then the promote itself: live, registered, the link as the layout wants it.
    promote(&w, CT_SHA, &[])
        .code(0)
        .stdout_has("created the stable link bin/codetools -> ../current/bin/codetools");
    assert_eq!(
        fs::read_link(&link).unwrap(),
        PathBuf::from("../current/bin/codetools")
    );
    assert_eq!(
        w.user_servers()["codetools-test"]["command"],
        link.to_str().unwrap()
    );
    // A second promote finds the link and creates nothing.
    add_sample_release(&w, NEW);
    let r = promote(&w, NEW, &[]);
    r.code(0);
    assert!(!r.said().contains("stable link"), "{}", r.stdout);
}
