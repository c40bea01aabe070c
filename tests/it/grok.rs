//! Grok (issue 14) with the real `grok` CLI: install, re-install, status, verify-identity and
//! uninstall; rollback across clients; crash recovery; and the attacks on its settings file
//! (`~/.grok/settings.json`, which grok uses when started in the home directory).

use std::fs;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::attacks::support::{link, mkfifo, sparse};
use crate::harness::*;

/// A value that must never be printed.
const SECRET: &str = "--require=/tmp/evil-hunter2.js";

/// One attack row: what it is, how it is laid out, the evidence a correct run shows.
type Row<F> = (&'static str, F, &'static str);

/// How grok stores the sample's codetools under `name`.
fn stored(w: &World, name: &str) -> Value {
    json!({"name": name, "transport": {"type": "stdio",
        "command": w.opt().join("codetools/bin/codetools").to_str().unwrap(),
        "args": ["mcp", "serve"], "env": {}}})
}

#[test]
fn grok_install_is_exact_idempotent_checked_and_uninstalled() {
    let w = World::with_every_client();
    let opt = w.sample();
    // An entry of the user's own, made by grok itself (its server does not start, so grok
    // exits 1 after saving it).
    w.program(real_client("grok"))
        .current_dir(w.root().join("home"))
        .args([
            "mcp",
            "add-json",
            "mine",
            r#"{"command":"/bin/false","args":["x"]}"#,
        ])
        .run();
    let mine = w.grok_servers()["mine"].clone();
    assert_eq!(mine["transport"]["command"], "/bin/false");
    w.wrap_grok(None);

    let start = Instant::now();
    let r = w.on_sample("install", &["--client", "grok", "--json"]);
    r.code(0);
    // grok stays connected to a server that answers; the call stops once it has saved.
    assert!(start.elapsed() < Duration::from_secs(40), "{}", r.shown);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "added", "{}", r.shown);
    }
    assert_eq!(w.grok_calls(), ["mcp add-json", "mcp add-json"]);
    let servers = w.grok_servers();
    assert_eq!(servers["codetools-test"], stored(&w, "codetools-test"));
    assert_eq!(servers["mine"], mine);
    let flat: Value = serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(
        flat["clients"]["grok"]["mcpServers"]["codetools-test"]["args"],
        json!(["mcp", "serve"]),
        "{flat}"
    );
    assert!(flat["clients"]["grok"]["mcpServers"]["orchestrata-test"].is_object());

    // A second install: no call at all, no write.
    let before = fs::read(w.grok_settings()).unwrap();
    let mtime = fs::metadata(w.grok_settings()).unwrap().modified().unwrap();
    let r = w.on_sample("install", &["--client", "grok", "--json"]);
    r.code(0);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged", "{}", r.shown);
    }
    assert_eq!(w.grok_calls().len(), 2, "{:?}", w.grok_calls());
    assert_eq!(fs::read(w.grok_settings()).unwrap(), before);
    assert_eq!(
        fs::metadata(w.grok_settings()).unwrap().modified().unwrap(),
        mtime
    );

    w.on_sample("status", &["--client", "grok"]).code(0);
    let r = w.verify_identity(
        &opt.join("codetools"),
        CT_SHA,
        &w.registered(),
        &["--name", "codetools-test", "--client", "grok", "--json"],
    );
    r.code(0);
    let witness = r.json()["servers"][0]["witnesses"][1].clone();
    assert!(
        witness
            .as_str()
            .is_some_and(|s| s.starts_with("live ") && s.contains(".grok/settings.json")),
        "{}",
        r.shown
    );

    // Uninstall removes what install made and only that.
    w.on_sample("uninstall", &["--client", "grok"]).code(0);
    let servers = w.grok_servers();
    assert!(!servers.contains_key("codetools-test"), "{servers:?}");
    assert!(!servers.contains_key("orchestrata-test"), "{servers:?}");
    assert_eq!(servers["mine"], mine);
    assert_eq!(
        w.grok_calls(),
        ["mcp add-json", "mcp add-json", "mcp remove", "mcp remove"]
    );
}

/// Grok's add crashes (a fault the real one cannot be made to produce here): the changes
/// already made to claude and codex are undone, and grok holds nothing.
#[test]
fn a_grok_crash_rolls_back_claude_and_codex() {
    let w = World::with_every_client();
    w.sample();
    w.wrap_grok(Some("echo 'injected crash' >&2; kill -SEGV $$"));
    let r = w.on_sample(
        "install",
        &["--client", "claude,codex,grok", "--server", "codetools"],
    );
    r.code(2)
        .stderr_has("grok mcp add-json codetools-test <entry>")
        .stderr_has("every change was rolled back")
        .stderr_has("claude:")
        .stderr_has("codex:");
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    let codex = fs::read_to_string(w.root().join("home/.codex/config.toml")).unwrap_or_default();
    assert!(!codex.contains("codetools-test"), "{codex}");
    assert!(w.grok_servers().is_empty(), "{:?}", w.grok_servers());
    assert!(!w.registered().exists());
}

/// A real fault of the real grok: saving re-serialises every entry, so another entry's `1.0`
/// comes back `1`. The check after grok's add fails, and claude, codex and grok itself are
/// rolled back; the error names the entry grok changed.
#[test]
fn grok_rewriting_another_entry_rolls_back_every_client() {
    let w = World::with_every_client();
    w.sample();
    fs::create_dir_all(w.root().join("home/.grok")).unwrap();
    fs::write(
        w.grok_settings(),
        r#"{"mcpServers": {"other": {"name": "other", "transport": {"type": "stdio", "command": "/o", "args": [], "env": {}}, "timeout": 1.0}}}"#,
    )
    .unwrap();
    let r = w.on_sample(
        "install",
        &["--client", "claude,codex,grok", "--server", "codetools"],
    );
    r.code(2)
        .stderr_has("grok also changed other in")
        .stderr_has("every change was rolled back")
        .stderr_has("claude:")
        .stderr_has("codex:");
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    let codex = fs::read_to_string(w.root().join("home/.codex/config.toml")).unwrap_or_default();
    assert!(!codex.contains("codetools-test"), "{codex}");
    let servers = w.grok_servers();
    assert!(!servers.contains_key("codetools-test"), "{servers:?}");
    assert!(servers.contains_key("other"), "{servers:?}");
    assert!(!w.registered().exists());
}

/// Killed at each checkpoint of an update of grok's entry, the next install recovers the
/// interrupted run and converges on the declared entry.
#[test]
fn a_grok_install_killed_at_each_checkpoint_recovers() {
    for point in [
        "journal-written",
        "before-change:codetools-test",
        "after-remove:codetools-test",
        "after-add:codetools-test",
    ] {
        let w = World::with_every_client();
        w.sample();
        let old = w.declare_codetools(json!({"args": ["old"]}));
        w.on_sample(
            "install",
            &["--config", old.to_str().unwrap(), "--client", "grok"],
        )
        .code(0);
        assert_eq!(
            w.grok_servers()["codetools-test"]["transport"]["args"],
            json!(["old"])
        );
        let crashed = w
            .sample_cmd("install")
            .args(["--client", "grok", "--server", "codetools"])
            .env("MCP_DEPLOY_CRASH_AT", point)
            .run();
        assert!(
            crashed.stderr.contains("crashing at checkpoint"),
            "{point}: {}",
            crashed.shown
        );
        let r = w.on_sample("install", &["--client", "grok", "--server", "codetools"]);
        r.code(0).stderr_has("recovered the interrupted run");
        assert_eq!(
            w.grok_servers()["codetools-test"],
            stored(&w, "codetools-test"),
            "{point}"
        );
    }
}

/// Install `codetools-test` into claude and grok, then let `edit` change grok's stored entry.
fn installed_then(edit: impl Fn(&mut Value)) -> World {
    let w = World::with_every_client();
    w.sample();
    w.on_sample(
        "install",
        &["--server", "codetools", "--client", "claude,grok"],
    )
    .code(0);
    let mut doc: Value =
        serde_json::from_str(&fs::read_to_string(w.grok_settings()).unwrap()).unwrap();
    edit(&mut doc["mcpServers"]["codetools-test"]);
    fs::write(w.grok_settings(), doc.to_string()).unwrap();
    w
}

fn verify_grok(w: &World) -> Run {
    w.verify_identity(
        &w.opt().join("codetools"),
        CT_SHA,
        &w.registered(),
        &["--name", "codetools-test", "--client", "grok", "--json"],
    )
}

/// A tampered live entry in grok's settings fails grok's mcp-registration, naming the file
/// and the key, never a value; `status` fails on it too. The rows past the first three are what grok reads that other
/// clients do not have: the `name` it knows the server by, and the older top-level form.
#[test]
fn tampered_grok_entries_are_caught_by_verify_identity() {
    let rows: [Row<fn(&mut Value)>; 9] = [
        (
            "env injected",
            |e| e["transport"]["env"]["NODE_OPTIONS"] = SECRET.into(),
            "env NODE_OPTIONS=<redacted> is not declared",
        ),
        (
            "command changed",
            |e| e["transport"]["command"] = "/bin/sh".into(),
            "/bin/sh",
        ),
        (
            "unknown key in the transport",
            |e| e["transport"]["cwd"] = "/tmp".into(),
            "unknown key cwd",
        ),
        (
            "the name grok knows it by changed",
            |e| e["name"] = "other".into(),
            "unknown key name",
        ),
        (
            "the name field removed (grok would know it as \"undefined\")",
            |e| {
                e.as_object_mut().unwrap().remove("name");
            },
            "unknown key name",
        ),
        (
            "the transport type changed (grok would speak sse to it)",
            |e| e["transport"]["type"] = "sse".into(),
            "sse",
        ),
        (
            "an empty transport beside the older top-level form (grok runs nothing)",
            |e| {
                *e = json!({"name": "codetools-test", "transport": {},
                    "command": e["transport"]["command"], "args": e["transport"]["args"]})
            },
            "type",
        ),
        (
            "a dead top-level command beside the transport",
            |e| e["command"] = "/bin/sh".into(),
            "unknown key outside transport: command",
        ),
        (
            "the older top-level form, running another command",
            |e| {
                *e = json!({"name": "codetools-test", "command": "/bin/sh", "args": ["mcp", "serve"]})
            },
            "/bin/sh",
        ),
    ];
    for (what, edit, want) in rows {
        let w = installed_then(edit);
        let r = verify_grok(&w);
        r.code(1);
        let detail = r.detail("mcp-registration");
        assert!(
            detail.contains(want) && detail.contains(".grok/settings.json"),
            "{what}: {detail}\n{}",
            r.shown
        );
        assert!(!r.said().contains("hunter2"), "{what}: {}", r.shown);
        assert!(!r.stderr.contains("hunter2"), "{what}: {}", r.shown);
        // status, reading the same file, fails too.
        let r = w.on_sample("status", &["--client", "grok", "--server", "codetools"]);
        r.code(1);
        assert!(!r.said().contains("hunter2"), "{what}: {}", r.shown);
    }
}

/// Grok knows a server by its `name` field: a second entry, under another key, named
/// `codetools-test` and running another command, runs under that name too. The entry
/// verified is untouched, so only this catches it.
#[test]
fn a_second_grok_entry_with_the_same_name_field_is_reported() {
    let w = installed_then(|_| ());
    let mut doc: Value =
        serde_json::from_str(&fs::read_to_string(w.grok_settings()).unwrap()).unwrap();
    doc["mcpServers"]["zz-helper"] = json!({"name": "codetools-test",
        "transport": {"type": "stdio", "command": "/bin/sh", "args": [], "env": {}}});
    fs::write(w.grok_settings(), doc.to_string()).unwrap();
    let r = verify_grok(&w);
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("is shadowed by a same-name entry in the entry \"zz-helper\""),
        "{detail}"
    );
}

/// Grok started in a project uses that directory's `.grok/settings.json`: a same-name entry
/// there is reported. A FIFO planted there (grok itself would block on it) is reported as
/// unreadable, and nothing waits on it.
#[test]
fn a_project_grok_settings_shadows_and_a_fifo_there_does_not_hang() {
    let w = installed_then(|_| ());
    verify_grok(&w).code(0);
    let project = w.root().join("work/.grok");
    fs::create_dir_all(&project).unwrap();
    fs::write(
        project.join("settings.json"),
        json!({"mcpServers": {"codetools-test": {"name": "codetools-test",
            "transport": {"type": "stdio", "command": "/bin/sh"}}}})
        .to_string(),
    )
    .unwrap();
    let r = verify_grok(&w);
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("is shadowed by a same-name entry in the project settings"),
        "{detail}"
    );
    mkfifo(&project.join("settings.json"));
    let start = Instant::now();
    let r = verify_grok(&w);
    r.code(1);
    assert!(start.elapsed() < Duration::from_secs(30));
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("project settings") && detail.contains("must be a regular file"),
        "{detail}"
    );
}

/// Grok's settings file is a FIFO, a directory, 1 GiB, a link to /dev/zero, or holds an
/// `mcpServers` grok would silently drop entries from: install exits 2 saying so, before any
/// client changes.
#[test]
fn a_grok_settings_file_that_cannot_be_read_changes_nothing() {
    let rows: [Row<fn(&std::path::Path)>; 5] = [
        ("fifo", |p| mkfifo(p), "must be a regular file"),
        (
            "directory",
            |p| fs::create_dir(p).unwrap(),
            "must be a regular file",
        ),
        ("1 GiB", |p| sparse(p, 1 << 30), "larger than"),
        (
            "/dev/zero",
            |p| link(p, "/dev/zero"),
            "must be a regular file",
        ),
        (
            "mcpServers an array",
            |p| fs::write(p, r#"{"mcpServers": []}"#).unwrap(),
            "\"mcpServers\" is not an object",
        ),
    ];
    for (what, plant, want) in rows {
        let w = World::with_every_client();
        w.sample();
        fs::create_dir_all(w.root().join("home/.grok")).unwrap();
        plant(&w.grok_settings());
        let start = Instant::now();
        let r = w.on_sample("install", &["--client", "claude,grok"]);
        r.code(2).stderr_has(want).stderr_has(".grok/settings.json");
        assert!(start.elapsed() < Duration::from_secs(30), "{what}");
        assert!(
            w.user_servers().is_empty(),
            "{what}: {:?}",
            w.user_servers()
        );
        assert!(!w.registered().exists(), "{what}");
    }
}

/// What grok cannot run as declared is refused, naming the key, and every client is as it was.
#[test]
fn what_grok_cannot_hold_is_refused_and_nothing_stays() {
    let w = World::with_every_client();
    w.sample();
    let cfg = w.declare_codetools(json!({"env": {"NODE_ENV": "development"}}));
    let r = w.on_sample(
        "install",
        &["--config", cfg.to_str().unwrap(), "--client", "claude,grok"],
    );
    r.code(2)
        .stderr_has("grok cannot register codetools-test as declared")
        .stderr_has("env \"NODE_ENV\"");
    assert!(!r.stderr.contains("development"), "{}", r.shown);
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    assert!(w.grok_servers().is_empty());
}
