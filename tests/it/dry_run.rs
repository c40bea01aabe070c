//! Issue 23, items 7 and 8: a dry run tells the truth. It lists exactly what the real run
//! writes and the mutating client calls it makes, it needs no client binary when it calls no
//! client, and `prune --dry-run` writes nothing at all.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::harness::*;

/// Every path under `dir` with what identifies its state: type, mode, size, mtime and, for a
/// file, its bytes.
pub fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let m = fs::symlink_metadata(&p).unwrap();
            let what = if m.is_dir() {
                stack.push(p.clone());
                "dir".to_string()
            } else if m.file_type().is_symlink() {
                format!("link {}", fs::read_link(&p).unwrap().display())
            } else {
                format!("file {:?}", fs::read(&p).unwrap_or_default())
            };
            out.insert(
                p,
                format!(
                    "{what} mode {:o} size {} mtime {}.{}",
                    m.mode(),
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec()
                ),
            );
        }
    }
    out
}

/// [`tree`] of the world, without its TMPDIR: the private scratch directory a run makes for
/// a client's caches there is removed when the run ends (but the directory's mtime moves).
fn world_tree(w: &World) -> BTreeMap<PathBuf, String> {
    let tmp = w.root().join("tmp");
    let mut t = tree(w.root());
    t.retain(|p, _| !p.starts_with(&tmp));
    t
}

/// The paths whose state differs between two [`tree`]s (added, removed or changed).
pub fn changed(
    before: &BTreeMap<PathBuf, String>,
    after: &BTreeMap<PathBuf, String>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = after
        .iter()
        .filter(|(p, v)| before.get(*p) != Some(v))
        .map(|(p, _)| p.clone())
        .collect();
    out.extend(before.keys().filter(|p| !after.contains_key(*p)).cloned());
    out.sort();
    out
}

fn prune_dry_run<'a>(w: &'a World, prefix: &Path) -> Cmd<'a> {
    w.cmd()
        .args(["prune", "--prefix"])
        .arg(prefix)
        .args(["--keep", "0", "--dry-run"])
}

/// Item 8: `prune --dry-run` created `<prefix>/.mcp-deploy/` and its lock file. It writes
/// nothing: the whole prefix (and the world around it) is the same before and after.
#[test]
fn prune_dry_run_writes_nothing_not_even_a_lock() {
    let w = World::new();
    w.sample();
    let prefix = w.opt().join("codetools");
    assert!(!prefix.join(".mcp-deploy").exists());
    let before = world_tree(&w);
    prune_dry_run(&w, &prefix)
        .run()
        .code(0)
        .stdout_has("dry run: nothing is removed");
    let after = world_tree(&w);
    assert_eq!(changed(&before, &after), Vec::<PathBuf>::new());
}

/// Item 8: and so it works on a prefix its user may not write (a read-only bind mount, in a
/// private mount namespace: read-only even for root), where it failed creating the lock.
#[test]
fn prune_dry_run_works_on_a_prefix_it_cannot_write() {
    let w = World::new();
    w.sample();
    let prefix = w.opt().join("codetools");
    let before = world_tree(&w);
    prune_dry_run(&w, &prefix)
        .read_only(&prefix)
        .run()
        .code(0)
        .stdout_has("dry run: nothing is removed");
    assert_eq!(changed(&before, &world_tree(&w)), Vec::<PathBuf>::new());
    // The real run there says it cannot take the lock (exit 2), as before.
    w.cmd()
        .args(["prune", "--prefix"])
        .arg(&prefix)
        .args(["--keep", "0"])
        .read_only(&prefix)
        .run()
        .code(2)
        .stderr_has("help: ");
}

/// What a run wrote that mcp-deploy writes itself: the changed paths of the world, without
/// the client's own files (its config is compared through the mutating calls), the run's
/// scratch and state directories (lock files, created once, and journals, removed on
/// commit: not listed by a dry run, as docs/commands.md says).
fn our_writes(w: &World, before: &BTreeMap<PathBuf, String>) -> Vec<String> {
    let flat = w.registered();
    changed(before, &world_tree(w))
        .into_iter()
        .filter(|p| {
            let under = |d: PathBuf| p.starts_with(d);
            *p == flat
                || !(under(w.config_dir())
                    || under(w.root().join("home"))
                    || under(w.root().join("tmp"))
                    || p.components().any(|c| c.as_os_str() == ".mcp-deploy")
                    || p.is_dir())
        })
        .map(|p| p.display().to_string())
        .collect()
}

/// The mutating client calls a dry run lists: `(client, registered name)` of each.
fn mutating(plan: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in plan["servers"].as_array().unwrap() {
        for c in s["client_calls"].as_array().unwrap() {
            let c = c.as_str().unwrap();
            // claude's CLI calls, a file-written client's edits ("add NAME to FILE").
            if c.contains(" add-json ")
                || c.contains(" mcp remove ")
                || c.starts_with("add ")
                || c.starts_with("remove ")
            {
                out.push((
                    s["client"].as_str().unwrap().to_string(),
                    s["registered_name"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Each client's config file, by client name.
fn configs(w: &World) -> BTreeMap<&'static str, Option<Vec<u8>>> {
    BTreeMap::from([
        ("claude", fs::read(w.claude_json()).ok()),
        ("cursor", fs::read(w.cursor_config()).ok()),
    ])
}

/// Run `COMMAND --dry-run --json`, then the real run on the same state: the files the real
/// run wrote are exactly the dry run's `writes`, each client's config changed exactly when
/// the dry run listed a mutating call for it, and the ledger got one record per such name.
fn dry_run_predicts(w: &World, command: &str, extra: &[&str]) {
    let ledger = w.root().join("ledger.ndjson");
    let ledger = ledger.to_str().unwrap();
    let mut args = vec!["--ledger", ledger];
    args.extend_from_slice(extra);
    let before = world_tree(w);
    let configs_before = configs(w);
    let dry = w
        .sample_cmd(command)
        .args(&args)
        .args(["--dry-run", "--json"])
        .run();
    dry.code(0);
    assert_eq!(
        changed(&before, &world_tree(w)),
        Vec::<PathBuf>::new(),
        "the dry run wrote"
    );
    let plan = dry.json();
    let mut listed: Vec<String> = plan["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    let records_before = fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .count();
    w.sample_cmd(command).args(&args).run().code(0);
    let mut wrote = our_writes(w, &before);
    wrote.sort();
    assert_eq!(
        wrote, listed,
        "what the real run wrote, against the dry run's list"
    );
    let calls = mutating(&plan);
    let configs_after = configs(w);
    for (client, was) in &configs_before {
        assert_eq!(
            configs_after[client] != *was,
            calls.iter().any(|(c, _)| c == client),
            "{client}'s config changed, against the mutating calls listed: {calls:?}"
        );
    }
    let records = fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(
        records - records_before,
        calls.len(),
        "ledger records: {calls:?}"
    );
}

/// Item 7: a no-op `install --dry-run` listed writes that do not happen (both rendered
/// documents and the flat document). For a fresh state, a no-op, and one drifted server, the
/// dry run lists exactly what the real run then writes and the mutating calls it makes.
#[test]
fn install_dry_run_lists_exactly_what_the_real_run_writes_and_calls() {
    let w = World::with_real_claude();
    w.sample();
    // Fresh.
    dry_run_predicts(&w, "install", &[]);
    // No-op: nothing to write, no mutating call.
    let dry = w.on_sample("install", &["--dry-run", "--json"]);
    assert_eq!(dry.json()["writes"], serde_json::json!([]));
    dry_run_predicts(&w, "install", &[]);
    let human = w.on_sample("install", &["--dry-run"]);
    assert!(!human.said().contains("  write "), "{}", human.stdout);
    human.stdout_has("as it is (it records this already)");
    // One drifted server: codetools-test re-registered by hand with other args.
    let cmd = w.opt().join("codetools/bin/codetools");
    w.reregister_by_hand(
        "codetools-test",
        &serde_json::json!({"command": cmd, "args": ["other"]}),
    );
    dry_run_predicts(&w, "install", &[]);
}

/// Item 7: with several clients (claude and Cursor, whose file mcp-deploy edits), fresh,
/// no-op, then one client of the two drifted: only that client is listed as changing, and the
/// real run changes only it.
#[test]
fn install_dry_run_of_several_clients_lists_only_the_drifted_ones_changes() {
    let w = World::with_real_claude();
    w.sample();
    let both = ["--client", "claude,cursor"];
    dry_run_predicts(&w, "install", &both);
    dry_run_predicts(&w, "install", &both);
    // Cursor's entry for codetools-test edited by hand; claude's stays as installed.
    let mut cursor: serde_json::Value =
        serde_json::from_slice(&fs::read(w.cursor_config()).unwrap()).unwrap();
    cursor["mcpServers"]["codetools-test"]["args"] = serde_json::json!(["drifted"]);
    fs::write(w.cursor_config(), cursor.to_string()).unwrap();
    let dry = w.on_sample(
        "install",
        &["--client", "claude,cursor", "--dry-run", "--json"],
    );
    assert_eq!(
        mutating(&dry.json()),
        vec![("cursor".to_string(), "codetools-test".to_string())]
    );
    dry_run_predicts(&w, "install", &both);
}

/// Item 7: the same for uninstall --dry-run: the flat document is listed only when a line
/// of it goes, the ledger only when a name is removed.
#[test]
fn uninstall_dry_run_lists_exactly_what_the_real_run_writes_and_calls() {
    let w = World::with_real_claude();
    w.sample();
    w.on_sample("install", &[]).code(0);
    dry_run_predicts(&w, "uninstall", &[]);
    // Nothing left to remove: nothing to write.
    dry_run_predicts(&w, "uninstall", &[]);
}

/// Item 8: a dry run calls no client but for reading, so it needs no client binary: without
/// claude on PATH it plans from claude's config file, says the binary is missing and that the
/// real run needs it, and exits as the plan does (it exited 2).
#[test]
fn install_dry_run_without_the_client_binary_plans_from_its_config_file() {
    let w = World::new();
    assert!(!w.bin().join("claude").exists());
    w.sample();
    let before = world_tree(&w);
    let r = w.on_sample("install", &["--dry-run"]);
    r.code(0)
        .stdout_has("codetools-test: would be added in claude")
        .stdout_has("run   claude mcp add-json -s user codetools-test <entry>")
        .stdout_has(&format!(
            "note: claude was not found on PATH: this plan is read from its config file {}",
            w.claude_json().display()
        ))
        .stdout_has("the real run needs the binary (install Claude Code");
    let j = w.on_sample("install", &["--dry-run", "--json"]);
    j.code(0);
    assert!(j.json()["missing_binaries"][0]
        .as_str()
        .unwrap()
        .starts_with("claude was not found on PATH"));
    w.on_sample("uninstall", &["--dry-run"])
        .code(0)
        .stdout_has("note: claude was not found on PATH");
    assert_eq!(changed(&before, &world_tree(&w)), Vec::<PathBuf>::new());
    // The real run still needs it.
    w.on_sample("install", &[])
        .code(2)
        .stderr_has("claude was not found on PATH");
}

/// Item 8: promote --dry-run calls no client either (it exited 2 without claude): it runs the
/// preflight, says what would switch, and that the real run needs the binary.
#[test]
fn promote_dry_run_without_the_client_binary_still_predicts() {
    let w = World::new();
    assert!(!w.bin().join("claude").exists());
    w.sample();
    let ct = w.opt().join("codetools");
    let new = "b".repeat(40);
    let to = ct.join("releases").join(&new);
    fs::create_dir_all(to.join("bin")).unwrap();
    fs::copy(
        ct.join("releases").join(CT_SHA).join("bin/codetools"),
        to.join("bin/codetools"),
    )
    .unwrap();
    fs::write(to.join("VERSION"), format!("{new}\n")).unwrap();
    let before = world_tree(&w);
    let promote = || {
        w.cmd().args(["promote", "--prefix"]).arg(&ct).args([
            "--release",
            &new,
            "--name-suffix",
            "-test",
            "--dry-run",
        ])
    };
    promote()
        .run()
        .code(0)
        .stdout_has("would switch")
        .stdout_has("note: claude was not found on PATH")
        .stdout_has("the real run needs the binary");
    assert_eq!(changed(&before, &world_tree(&w)), Vec::<PathBuf>::new());
}

/// Item 7: when the deployment fails the gate, the real run writes nothing and calls no
/// client, so neither does the dry run list any write or call (it listed them all).
#[test]
fn install_dry_run_of_a_failing_gate_lists_no_write_and_no_call() {
    let w = World::new();
    w.sample();
    let wrong = format!("orchestrata={}", "0".repeat(40));
    let before = world_tree(&w);
    let dry = w.on_sample(
        "install",
        &["--expect-commit", &wrong, "--dry-run", "--json"],
    );
    dry.code(1);
    let plan = dry.json();
    assert_eq!(plan["writes"], serde_json::json!([]));
    for s in plan["servers"].as_array().unwrap() {
        assert_eq!(s["client_calls"], serde_json::json!([]), "{s}");
        assert_eq!(s["writes"], serde_json::json!([]), "{s}");
    }
    let human = w.on_sample("install", &["--expect-commit", &wrong, "--dry-run"]);
    human
        .code(1)
        .stdout_has("install would register nothing, write nothing and call no client");
    let listed = |verb: &str| {
        human
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with(verb))
    };
    assert!(
        !listed("write ") && !listed("append ") && !listed("run "),
        "{}",
        human.stdout
    );
    w.on_sample("install", &["--expect-commit", &wrong]).code(1);
    assert_eq!(changed(&before, &world_tree(&w)), Vec::<PathBuf>::new());
}
