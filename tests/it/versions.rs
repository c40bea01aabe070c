//! Issue 21: every client release a host runs. The core flow (install, a no-op re-install,
//! verify-identity, status, uninstall) against older Claude Code releases from the shared
//! compatibility cache ([`compat_client`]); a release outside the supported range refused
//! before any change (the real Claude Code 1.0.128, and fake binaries for what no real one
//! prints); the version asked once and cached; and a no-op that leaves no file behind.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::{clock_past, compat_client, every_client, write_exec, World, CT_SHA};

/// Every path under `dir` (files and directories), relative to it.
fn tree(dir: &Path) -> BTreeSet<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            out.insert(p.strip_prefix(root).unwrap().to_path_buf());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(root, &p, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn ledger(w: &World) -> Vec<Value> {
    fs::read_to_string(w.root().join("home/.local/state/mcp-deploy/ledger.ndjson"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A `claude` that logs each argv to `<root>/wrapped.log` and runs `real`: it has no package
/// files, so mcp-deploy asks it `--version`.
fn logging_wrapper(w: &World, real: &Path) -> PathBuf {
    let wrapper = w.root().join("wrap/claude");
    write_exec(
        &wrapper,
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            w.root().join("wrapped.log").display(),
            real.display()
        ),
    );
    wrapper
}

fn wrapped_calls(w: &World) -> Vec<String> {
    fs::read_to_string(w.root().join("wrapped.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The core flow against the Claude Code release `version` from the compatibility cache.
fn claude_core_flow(version: &str) {
    let claude = compat_client("claude", version);
    let w = World::new();
    // On PATH too, for status (which takes no --claude) to find and read its version.
    symlink(&claude, w.bin().join("claude")).unwrap();
    // A home where npm has run before: the `npm config get prefix` a claude before 2.1 runs
    // on every call would write its update check's stamp there (it lands only where ~/.npm
    // exists, unawaited: a CI run saw it appear during the no-op install below).
    let stamp = w.root().join("home/.npm/_update-notifier-last-checked");
    fs::create_dir_all(stamp.parent().unwrap()).unwrap();
    // That write is a race npm loses or wins, so the test also sees what each npm claude
    // starts is told: an `npm` first on PATH logs its update-notifier setting, then runs the
    // real one (or fails as a missing npm would).
    let npm_log = w.root().join("npm-calls.log");
    let real_npm = crate::harness::SYSTEM_PATH
        .iter()
        .map(|d| Path::new(d).join("npm"))
        .find(|p| p.is_file());
    write_exec(
        &w.bin().join("npm"),
        &format!(
            "#!/bin/sh\necho \"update_notifier=$npm_config_update_notifier $*\" >> '{}'\n{}\n",
            npm_log.display(),
            match &real_npm {
                Some(npm) => format!("exec '{}' \"$@\"", npm.display()),
                None => "exit 127".into(),
            }
        ),
    );
    let opt = w.sample();
    let with = |cmd: &str, bin: &Path, extra: &[&str]| {
        w.sample_cmd(cmd).arg("--claude").arg(bin).args(extra).run()
    };

    let r = with("install", &claude, &["--json"]);
    r.code(0);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "added", "{r}");
    }
    // Before 2.1.285 the entry is sent, and stored, with "type":"stdio" (else `mcp get` shows
    // neither command nor args); the flat document keeps its exact shape all the same.
    let stored = &w.user_servers()["codetools-test"];
    let typed = version_lt(version, "2.1.285");
    assert_eq!(stored.get("type").is_some(), typed, "{stored}");
    assert_eq!(
        stored["command"],
        json!(opt.join("codetools/bin/codetools"))
    );
    assert_eq!(
        w.flat_servers()["codetools-test"],
        json!({"command": opt.join("codetools/bin/codetools"), "args": ["mcp", "serve"]})
    );
    for line in ledger(&w) {
        assert_eq!(line["client_version"], version, "{line}");
    }

    // A no-op: no mutating call, the client's config the same bytes, and no new file in the
    // home, the client's directory or the temp dir.
    let wrapper = logging_wrapper(&w, &claude);
    let config = fs::read(w.claude_json()).unwrap();
    let before = tree(w.root());
    let r = with("install", &wrapper, &["--json"]);
    r.code(0);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged", "{r}");
    }
    let calls = wrapped_calls(&w);
    assert!(
        calls
            .iter()
            .all(|c| !c.starts_with("mcp add-json") && !c.starts_with("mcp remove")),
        "a no-op install mutated: {calls:?}"
    );
    assert_eq!(
        fs::read(w.claude_json()).unwrap(),
        config,
        "the config changed"
    );
    let new: Vec<_> = tree(w.root())
        .difference(&before)
        .filter(|p| !p.starts_with("wrap") && !p.starts_with("wrapped.log"))
        // The wrapper is a new binary: its answer to `--version` is cached.
        .filter(|p| *p != Path::new("home/.cache") && !p.starts_with("home/.cache/mcp-deploy"))
        .cloned()
        .collect();
    assert!(new.is_empty(), "a no-op install left {new:?}");

    w.verify_identity(
        &opt.join("codetools"),
        CT_SHA,
        &w.registered(),
        &["--name", "codetools-test"],
    )
    .code(0);
    let r = w.on_sample("status", &["--json"]);
    r.code(0);
    assert_eq!(
        r.json()["clients"],
        json!([{"client": "claude", "version": version}]),
        "{r}"
    );

    let r = with("uninstall", &claude, &[]);
    r.code(0).stdout_has("codetools-test): removed");
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    // Uninstalling again: absent, which the old client says in its own words.
    with("uninstall", &claude, &[]).code(0).stdout_has("absent");
    // mcp-deploy runs claude with npm's update notifier off (npm_config_update_notifier).
    let calls = fs::read_to_string(&npm_log).unwrap_or_default();
    if version_lt(version, "2.1.0") {
        assert!(
            !calls.is_empty(),
            "claude {version} started no npm: the pin above proves nothing"
        );
    }
    for call in calls.lines() {
        assert!(
            call.starts_with("update_notifier=false "),
            "claude {version} started npm with its update notifier on: {call}"
        );
    }
    assert!(
        !stamp.exists(),
        "npm's update check, started by claude {version}, wrote {}",
        stamp.display()
    );
}

fn version_lt(a: &str, b: &str) -> bool {
    let n = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap()).collect() };
    n(a) < n(b)
}

/// Issue 21: before 2.1.285 every install failed ("`claude mcp get codetools` printed output
/// that cannot be read: it has no Type line") and rolled back.
#[test]
fn claude_before_2_1_285_2_0_0_installs_converges_verifies_and_uninstalls() {
    claude_core_flow("2.0.0");
}

#[test]
fn claude_before_2_1_285_2_1_100_installs_converges_verifies_and_uninstalls() {
    claude_core_flow("2.1.100");
}

#[test]
fn claude_before_2_1_285_2_1_284_installs_converges_verifies_and_uninstalls() {
    claude_core_flow("2.1.284");
}

#[test]
fn claude_2_1_285_the_first_to_show_untyped_entries_runs_the_core_flow() {
    claude_core_flow("2.1.285");
}

/// An entry that a Claude Code 2.1.332 registered (no "type") and a 2.0.0 then reads: its
/// `mcp get` shows no Type line, and the re-run is still a no-op, not a failure.
#[test]
fn claude_before_2_1_285_reads_an_untyped_entry_a_newer_claude_stored() {
    let old = compat_client("claude", "2.0.0");
    let w = World::with_real_claude();
    w.sample();
    w.on_sample("install", &[]).code(0);
    assert!(w.user_servers()["codetools-test"].get("type").is_none());
    let r = w
        .sample_cmd("install")
        .arg("--claude")
        .arg(&old)
        .arg("--json")
        .run();
    r.code(0);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged", "{r}");
    }
    // A wrong type still fails: the entry is malformed, whatever the release.
    let text = fs::read_to_string(w.claude_json()).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["mcpServers"]["codetools-test"]["type"] = json!("sse");
    fs::write(w.claude_json(), doc.to_string()).unwrap();
    let r = w
        .sample_cmd("install")
        .arg("--claude")
        .arg(&old)
        .arg("--server")
        .arg("codetools")
        .run();
    assert_ne!(r.code, 0, "{r}");
}

/// The real Claude Code 1.0.128, below the range: refused with the bound and a `help:` line,
/// before anything is written (no client config, no document, no ledger).
#[test]
fn claude_1_0_is_refused_before_any_change() {
    let old = compat_client("claude", "1.0.128");
    let w = World::new();
    w.sample();
    let before = tree(w.root());
    let r = w.sample_cmd("install").arg("--claude").arg(&old).run();
    r.code(2)
        .stderr_has("claude 1.0.128 is older than the oldest supported (2.0.0)")
        .stderr_has(
            "help: install a supported version (npm install -g @anthropic-ai/claude-code@2.1.332",
        );
    assert!(!w.claude_json().exists(), "{r}");
    assert!(!w.registered().exists(), "{r}");
    assert!(ledger(&w).is_empty());
    let new: Vec<_> = tree(w.root()).difference(&before).cloned().collect();
    assert!(
        new.iter()
            .all(|p| p.starts_with("tmp") || p.starts_with("home/.cache/mcp-deploy")),
        "{new:?}"
    );
}

/// What no real client in reach prints: a new major, a codex below its bound, and output
/// with no version in it. Each is refused, exit 2, with a `help:` line, before any change.
#[test]
fn a_client_release_outside_the_range_or_unreadable_is_refused_before_any_change() {
    for (client, printed, want) in [
        (
            "claude",
            "3.0.1 (Claude Code)",
            "claude 3.0.1 is a new major release: mcp-deploy supports claude 2.0.0 to 2.x",
        ),
        (
            "codex",
            "codex-cli 0.44.0",
            "codex 0.44.0 is older than the oldest supported (0.45.0)",
        ),
        (
            "claude",
            "Claude Code, the banana edition",
            "the version of claude",
        ),
    ] {
        let w = World::new();
        w.sample();
        let fake = w.root().join("fake").join(client);
        write_exec(
            &fake,
            &format!(
                "#!/bin/sh\n[ \"$1\" = --version ] && echo '{printed}' && exit 0\n\
                 echo \"$*\" >> '{}'\nexit 0\n",
                w.root().join("mutated").display()
            ),
        );
        let r = w
            .sample_cmd("install")
            .args(["--client", client])
            .arg(format!("--{client}"))
            .arg(&fake)
            .run();
        r.code(2).stderr_has(want);
        assert!(r.stderr.lines().any(|l| l.starts_with("help: ")), "{r}");
        assert!(
            !w.root().join("mutated").exists(),
            "{client} was called: {r}"
        );
        assert!(!w.registered().exists(), "{r}");
    }
}

/// The version of a binary without package files is asked once (`--version`) and cached by
/// its path, size and mtime: the next run asks nothing and writes no file; a changed binary
/// is asked again.
#[test]
fn the_version_of_a_binary_is_asked_once_and_a_no_op_writes_no_cache() {
    let w = World::new();
    w.sample();
    let wrapper = logging_wrapper(&w, &crate::harness::real_claude());
    let install = || {
        w.sample_cmd("install")
            .arg("--claude")
            .arg(&wrapper)
            .run()
            .code(0);
    };
    let asked = || {
        wrapped_calls(&w)
            .iter()
            .filter(|c| *c == "--version")
            .count()
    };
    install();
    assert_eq!(asked(), 1, "{:?}", wrapped_calls(&w));
    let cache = w.root().join("home/.cache/mcp-deploy/client-versions.json");
    let text = fs::read_to_string(&cache).unwrap();
    assert!(text.contains("2.1.332"), "{text}");
    let mtime = fs::metadata(&cache).unwrap().modified().unwrap();
    clock_past(w.root(), mtime);

    install();
    assert_eq!(asked(), 1, "asked again: {:?}", wrapped_calls(&w));
    assert_eq!(fs::read_to_string(&cache).unwrap(), text);
    assert_eq!(fs::metadata(&cache).unwrap().modified().unwrap(), mtime);
    let r = w.on_sample("status", &["--json"]);
    assert_eq!(
        r.json()["clients"][0]["version"],
        json!(null),
        "not on PATH"
    );

    // Another binary at the same path (an upgrade): asked again.
    let body = fs::read_to_string(&wrapper).unwrap();
    write_exec(&wrapper, &format!("{body}# upgraded\n"));
    install();
    assert_eq!(asked(), 2, "{:?}", wrapped_calls(&w));
}

/// Issue 21: every install, a no-op included, left a new
/// `~/.cache/claude-cli-nodejs/-tmp-mcp-deploy-client-<pid>-<random>/` (Claude keys a cache
/// directory on its working directory, and each call ran from a fresh one), and a session
/// directory in `$TMPDIR/claude-<uid>/`. A host that converges on every pipeline run grew
/// them without bound. Now a no-op leaves no new file anywhere in the world, with every
/// client.
#[test]
fn a_no_op_install_leaves_no_new_file_in_the_home_or_the_temp_dir() {
    let w = World::with_every_client();
    w.sample();
    let every = every_client();
    let every = every.as_str();
    w.on_sample("install", &["--client", every]).code(0);
    let before = tree(w.root());
    let cache_before = tree(&w.root().join("home/.cache"));
    for _ in 0..2 {
        let r = w.on_sample("install", &["--client", every, "--json"]);
        r.code(0);
        for s in r.json()["servers"].as_array().unwrap() {
            assert_eq!(s["registration"], "unchanged", "{r}");
        }
    }
    assert_eq!(tree(&w.root().join("home/.cache")), cache_before);
    let new: Vec<_> = tree(w.root()).difference(&before).cloned().collect();
    assert!(new.is_empty(), "a no-op install left {new:?}");
    let gone: Vec<_> = before.difference(&tree(w.root())).cloned().collect();
    assert!(gone.is_empty(), "a no-op install removed {gone:?}");
}

/// The working directory every client call runs from is ours alone and empty: a planted
/// `.mcp.json` would be a project scope of the call, a symlink could lead into a project,
/// and a directory others may write in could get either. Each is refused before any change.
#[test]
fn a_client_working_directory_that_is_not_private_and_empty_is_refused() {
    let w = World::with_real_claude();
    w.sample();
    let uid = fs::metadata(w.root()).unwrap().uid();
    let dir = w.root().join(format!("tmp/mcp-deploy-cwd.{uid}.claude"));
    let planted = w.root().join("planted");
    fs::create_dir_all(&planted).unwrap();
    type Setup = fn(&Path, &Path);
    let cases: [(&str, Setup, &str); 3] = [
        (
            "a planted .mcp.json",
            |dir, _| {
                fs::create_dir_all(dir).unwrap();
                fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).unwrap();
                fs::write(dir.join(".mcp.json"), r#"{"mcpServers":{}}"#).unwrap();
            },
            "it is not empty",
        ),
        (
            "a symlink",
            |dir, planted| symlink(planted, dir).unwrap(),
            "not a directory",
        ),
        (
            "a directory others may write in",
            |dir, _| {
                fs::create_dir_all(dir).unwrap();
                fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
            },
            "others may write in it",
        ),
    ];
    for (what, setup, want) in cases {
        let _ = fs::remove_file(&dir);
        let _ = fs::remove_dir_all(&dir);
        setup(&dir, &planted);
        let r = w.on_sample("install", &[]);
        r.code(2)
            .stderr_has("refusing to run client calls from")
            .stderr_has(want)
            .stderr_has("help: ");
        assert!(w.user_servers().is_empty(), "{what}: {r}");
        assert!(!w.registered().exists(), "{what}: {r}");
    }
    // Removed, it is made again, private, and the install goes through.
    let _ = fs::remove_file(&dir);
    let _ = fs::remove_dir_all(&dir);
    w.on_sample("install", &[]).code(0);
    let meta = fs::symlink_metadata(&dir).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.mode() & 0o777, 0o700);
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
}

/// The pinned real clients' releases come from their package files: shown by status (which
/// starts no client), recorded in every ledger line, and no `--version` cache is written.
#[test]
fn the_pinned_clients_releases_are_read_from_their_packages_into_status_and_the_ledger() {
    let w = World::with_every_client();
    w.sample();
    let every = every_client();
    let every = every.as_str();
    w.on_sample("install", &["--client", every, "--server", "codetools"])
        .code(0);
    let want = [
        ("claude", json!("2.1.332")),
        ("codex", json!("0.171.0")),
        ("gemini", json!("0.61.0")),
        ("opencode", json!("1.18.33")),
        ("grok", json!("0.0.34")),
        ("cursor", json!(null)),
        ("copilot", json!("1.0.102")),
        ("vscode", json!(null)),
        ("qwen", json!("0.24.4")),
    ];
    let r = w.on_sample(
        "status",
        &["--client", every, "--server", "codetools", "--json"],
    );
    r.code(0);
    let shown: Vec<_> = want
        .iter()
        .map(|(c, v)| json!({"client": c, "version": v}))
        .collect();
    assert_eq!(r.json()["clients"], json!(shown), "{r}");
    let human = w.on_sample("status", &["--client", every, "--server", "codetools"]);
    human.stdout_has(
        "clients: claude 2.1.332, codex 0.171.0, gemini 0.61.0, opencode 1.18.33, grok 0.0.34, \
         cursor (no binary), copilot 1.0.102, vscode (no binary), qwen 0.24.4",
    );
    let lines = ledger(&w);
    assert_eq!(lines.len(), 9, "{lines:?}");
    for line in lines {
        let client = line["client"].as_str().unwrap();
        let (_, v) = want.iter().find(|(c, _)| *c == client).unwrap();
        match v {
            Value::Null => assert!(line.get("client_version").is_none(), "{line}"),
            v => assert_eq!(&line["client_version"], v, "{line}"),
        }
    }
    assert!(
        !w.root().join("home/.cache/mcp-deploy").exists(),
        "the package files told: nothing to cache"
    );
}

/// A client that writes into the working directory during a run (as Claude Code does with
/// `CLAUDE_CONFIG_DIR=""`, which is handled) does not block the rollback: the restoring
/// calls run from the run's own scratch directory. The next run refuses the directory,
/// before any change, naming what it holds.
#[test]
fn a_working_directory_a_client_wrote_into_does_not_block_the_rollback() {
    let w = World::new();
    w.sample();
    let real = crate::harness::real_claude();
    write_exec(
        &w.bin().join("claude"),
        &format!(
            "#!/bin/sh\nif [ \"$2\" = add-json ] && [ \"$5\" = orchestrata-test ]; then \
             touch ./litter; echo 'injected failure: boom' >&2; exit 3; fi\n\
             exec '{}' \"$@\"\n",
            real.display()
        ),
    );
    let r = w.on_sample("install", &[]);
    r.code(2)
        .stderr_has("injected failure")
        .stderr_has("every change was rolled back");
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    let uid = fs::metadata(w.root()).unwrap().uid();
    let dir = w.root().join(format!("tmp/mcp-deploy-cwd.{uid}.claude"));
    assert!(dir.join("litter").exists());
    w.on_sample("install", &[])
        .code(2)
        .stderr_has("it is not empty (it holds \"litter\")")
        .stderr_has("help: ");
    assert!(w.user_servers().is_empty());
}
