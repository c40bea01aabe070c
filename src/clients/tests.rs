//! The codex, gemini and grok client modules, driven through the `Client` trait against the real
//! pinned CLIs (`npm ci` in the repo brings them), each test in its own scratch homes passed
//! through `ClientOptions`, so that tests running side by side share nothing.
//!
//! Tests that need a real CLI fail, never skip, when it is missing. Gemini takes about a
//! second a call, so its tests make few calls; refusals are checked before any call is made.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::clients::{self, Client, ClientError, ClientKind, ClientOptions};
use crate::entry::Entry;
use serde_json::{json, Value};

/// The real CLI: `MCP_DEPLOY_TEST_<NAME>`, else the repo's pinned `node_modules/.bin/<name>`.
fn real(name: &str) -> PathBuf {
    let var = format!("MCP_DEPLOY_TEST_{}", name.to_uppercase());
    if let Some(p) = std::env::var_os(&var) {
        return PathBuf::from(p);
    }
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/.bin")
        .join(name);
    assert!(
        pinned.exists(),
        "the real {name} CLI is missing: run `npm ci` in {} (package.json pins it), or set {var}",
        env!("CARGO_MANIFEST_DIR")
    );
    pinned
}

pub(crate) struct Scratch {
    pub(crate) dir: tempfile::TempDir,
}

impl Scratch {
    pub(crate) fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        for d in ["codex", "gemini", "grok", "copilot"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        Scratch { dir }
    }
    fn codex_home(&self) -> PathBuf {
        self.dir.path().join("codex")
    }
    fn gemini_home(&self) -> PathBuf {
        self.dir.path().join("gemini")
    }
    fn grok_home(&self) -> PathBuf {
        self.dir.path().join("grok")
    }
    fn grok_settings(&self) -> PathBuf {
        self.grok_home().join(".grok/settings.json")
    }
    fn gemini_settings(&self) -> PathBuf {
        self.gemini_home().join(".gemini/settings.json")
    }
    fn options(&self) -> ClientOptions {
        ClientOptions {
            binaries: ["codex", "gemini", "grok", "copilot"]
                .map(|c| (c, real(c)))
                .into_iter()
                .collect(),
            homes: [
                ("codex", self.codex_home()),
                ("gemini", self.gemini_home()),
                ("grok", self.grok_home()),
                // Its COPILOT_HOME: `<home>/mcp-config.json`.
                ("copilot", self.dir.path().join("copilot")),
            ]
            .into_iter()
            .collect(),
            timeout: Duration::from_secs(60),
            mcp_timeout: Duration::from_millis(5000),
            calls_binary: true,
            said: None,
        }
    }
    pub(crate) fn open(&self, name: &str) -> Box<dyn Client> {
        clients::open(kind(name), &self.options()).unwrap_or_else(|e| panic!("open {name}: {e}"))
    }
}

fn kind(name: &str) -> ClientKind {
    <ClientKind as clap::ValueEnum>::from_str(name, false).unwrap()
}

pub(crate) fn entry(v: Value) -> Entry {
    Entry::from_value(&v).unwrap()
}

/// Each entry of `cases` refused by `by` (a client's argv or shape for it) with a message that
/// holds its `want`, and never `hunter2`, the secret the cases hide in values.
pub(crate) fn assert_refused<T: std::fmt::Debug>(
    by: impl Fn(&Entry) -> Result<T, ClientError>,
    cases: impl IntoIterator<Item = (Value, &'static str)>,
) {
    for (v, want) in cases {
        let err = by(&entry(v.clone())).unwrap_err().to_string();
        assert!(err.contains(want), "{v}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}

/// The entries `read` (a client's reader of its `mcpServers` JSON file) finds at `path`:
/// none while the file is missing, then those of `text` written there.
pub(crate) fn entries_read(
    read: impl Fn(&Path) -> Result<serde_json::Map<String, Value>, ClientError>,
    path: &Path,
    text: &str,
) -> serde_json::Map<String, Value> {
    assert!(read(path).unwrap().is_empty(), "{} exists", path.display());
    std::fs::write(path, text).unwrap();
    read(path).unwrap()
}

/// A `mcpServers` JSON file that `read` cannot take (cut short, with a comment, not an object,
/// its servers not an object) is refused with a message naming what is wrong and never
/// `hunter2`, the secret the files hold.
pub(crate) fn assert_malformed_refused<T: std::fmt::Debug>(
    read: impl Fn(&Path) -> Result<T, ClientError>,
    path: &Path,
) {
    for (text, want) in [
        (
            "{\"mcpServers\": {\"s\": {\"env\": {\"T\": \"hunter2\"}}",
            "line 1",
        ),
        ("// hunter2\n{}", "not valid JSON"),
        ("[\"hunter2\"]", "not a JSON object"),
        ("{\"mcpServers\": [\"hunter2\"]}", "not an object"),
    ] {
        std::fs::write(path, text).unwrap();
        let err = read(path).unwrap_err().to_string();
        assert!(err.contains(want), "{text}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}

/// What the client holds for `name` equals the rendered entry exactly (the claude shape), and
/// `observe` agrees: the plan of a second install would be "unchanged".
pub(crate) fn assert_round_trip(c: &dyn Client, name: &str, rendered: &Value) {
    let held = c.user_entries().unwrap();
    assert_eq!(held.get(name), Some(rendered), "{} holds", c.name());
    let seen = c
        .observe(name)
        .unwrap()
        .unwrap_or_else(|| panic!("{} does not observe {name}", c.name()));
    assert_eq!(Value::Object(seen.raw.clone()), *rendered);
    assert!(seen.same_registration(&entry(rendered.clone())));
}

fn stdio_entry() -> Value {
    json!({
        "command": "/opt/codetools/bin/codetools",
        "args": ["mcp serve", "it\"s", "--scope", "10"],
        "env": {"CT_TOKEN": "${CT_TOKEN}", "CT_MODE": "fast lane"}
    })
}

// ---- codex ----

#[test]
fn codex_stdio_entry_round_trips_and_a_second_add_is_refused() {
    let s = Scratch::new();
    let c = s.open("codex");
    assert_eq!(c.config_path(), s.codex_home().join("config.toml"));
    assert!(c.observe("ct-test").unwrap().is_none());
    let rendered = stdio_entry();
    c.add("ct-test", &entry(rendered.clone())).unwrap();
    assert_round_trip(c.as_ref(), "ct-test", &rendered);

    // `codex mcp add` would overwrite it silently; the module refuses instead.
    let other = json!({"command": "/somewhere/else"});
    let err = c.add("ct-test", &entry(other)).unwrap_err();
    assert!(
        matches!(err, ClientError::AlreadyRegistered { .. }),
        "{err:?}"
    );
    assert_round_trip(c.as_ref(), "ct-test", &rendered);
}

#[test]
fn codex_env_value_with_equals_sign_survives() {
    let s = Scratch::new();
    let c = s.open("codex");
    let rendered = json!({"command": "/x", "env": {"OPTS": "a=b=c"}});
    c.add("eq", &entry(rendered.clone())).unwrap();
    assert_round_trip(c.as_ref(), "eq", &rendered);
}

#[test]
fn codex_http_entry_with_a_bearer_token_variable_round_trips() {
    let s = Scratch::new();
    let c = s.open("codex");
    let rendered = json!({
        "type": "http",
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer ${ORCH_TOKEN}"}
    });
    c.add("orch-test", &entry(rendered.clone())).unwrap();
    assert_round_trip(c.as_ref(), "orch-test", &rendered);
    let toml = std::fs::read_to_string(s.codex_home().join("config.toml")).unwrap();
    assert!(
        toml.contains("bearer_token_env_var = \"ORCH_TOKEN\""),
        "{toml}"
    );
}

#[test]
fn codex_literal_bearer_token_is_refused_before_any_call() {
    let s = Scratch::new();
    let c = s.open("codex");
    let literal = json!({"type": "http", "url": "http://h/mcp",
                         "headers": {"Authorization": "Bearer hunter2"}});
    let err = c.add("h", &entry(literal)).unwrap_err();
    assert!(
        matches!(err, ClientError::Unrepresentable { .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("literal value") && !msg.contains("hunter2"),
        "{msg}"
    );
    assert!(!s.codex_home().join("config.toml").exists());
}

#[test]
fn codex_remove_of_a_missing_name_is_refused_and_of_a_present_one_removes_it() {
    let s = Scratch::new();
    let c = s.open("codex");
    let err = c.remove("ct-test").unwrap_err();
    assert!(matches!(err, ClientError::NotRegistered { .. }), "{err:?}");
    c.add("ct-test", &entry(json!({"command": "/x"}))).unwrap();
    c.add("keep", &entry(json!({"command": "/y"}))).unwrap();
    c.remove("ct-test").unwrap();
    assert!(c.observe("ct-test").unwrap().is_none());
    let held = c.user_entries().unwrap();
    assert!(!held.contains_key("ct-test"));
    assert_eq!(held.get("keep"), Some(&json!({"command": "/y"})));
}

#[test]
fn codex_entry_edited_to_something_else_is_seen_as_such() {
    // A disabled entry is not the declared one, though command and args match.
    let s = Scratch::new();
    let c = s.open("codex");
    std::fs::write(
        s.codex_home().join("config.toml"),
        "[mcp_servers.ct]\ncommand = \"/x\"\nenabled = false\n",
    )
    .unwrap();
    let seen = c.observe("ct").unwrap().unwrap();
    assert!(!seen.same_registration(&entry(json!({"command": "/x"}))));
    assert_eq!(seen.raw.get("enabled"), Some(&json!(false)));
}

#[test]
fn codex_error_about_its_config_does_not_echo_a_value() {
    // Codex quotes the value it cannot load: `invalid type: string "…", expected a map`.
    let s = Scratch::new();
    let c = s.open("codex");
    std::fs::write(
        s.codex_home().join("config.toml"),
        "[mcp_servers.a]\ncommand = \"/x\"\nenv = \"hunter2-secret\"\n",
    )
    .unwrap();
    let err = c.observe("a").unwrap_err();
    assert!(matches!(err, ClientError::Failed { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("invalid type"), "{msg}");
    assert!(!msg.contains("hunter2"), "{msg}");
}

#[test]
fn codex_home_that_is_set_but_missing_is_refused() {
    let s = Scratch::new();
    let mut opts = s.options();
    let missing = s.dir.path().join("no-such-codex-home");
    opts.homes.insert("codex", missing.clone());
    let err = clients::open(kind("codex"), &opts)
        .err()
        .expect("open must fail");
    assert!(matches!(err, ClientError::HomeMissing { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("CODEX_HOME") && msg.contains(&missing.display().to_string()),
        "{msg}"
    );
    assert!(!missing.exists(), "it must not be created");
}

// ---- gemini ----

#[test]
fn gemini_stdio_entry_round_trips_then_is_removed() {
    let s = Scratch::new();
    let c = s.open("gemini");
    assert_eq!(c.config_path(), s.gemini_settings());
    let rendered = stdio_entry();
    c.add("ct-test", &entry(rendered.clone())).unwrap();
    assert_round_trip(c.as_ref(), "ct-test", &rendered);

    let err = c
        .add("ct-test", &entry(json!({"command": "/else"})))
        .unwrap_err();
    assert!(
        matches!(err, ClientError::AlreadyRegistered { .. }),
        "{err:?}"
    );
    assert_round_trip(c.as_ref(), "ct-test", &rendered);

    c.remove("ct-test").unwrap();
    assert!(c.observe("ct-test").unwrap().is_none());
    let err = c.remove("ct-test").unwrap_err();
    assert!(matches!(err, ClientError::NotRegistered { .. }), "{err:?}");
}

#[test]
fn gemini_http_entry_round_trips_and_other_entries_are_not_expanded() {
    let s = Scratch::new();
    // An entry gemini would rewrite with the value of USER, were USER in its environment.
    std::fs::create_dir_all(s.gemini_home().join(".gemini")).unwrap();
    let other = json!({"command": "/y", "args": [], "env": {"H": "${USER}/x"}});
    std::fs::write(
        s.gemini_settings(),
        serde_json::to_string(&json!({"mcpServers": {"other": other}})).unwrap(),
    )
    .unwrap();
    let c = s.open("gemini");
    let rendered = json!({
        "type": "http",
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer ${ORCH_TOKEN}", "X-Team": "tools: core"}
    });
    c.add("orch-test", &entry(rendered.clone())).unwrap();
    assert_round_trip(c.as_ref(), "orch-test", &rendered);
    assert_eq!(c.user_entries().unwrap().get("other"), Some(&other));
}

#[test]
fn gemini_refusals_name_the_key_and_make_no_call() {
    let s = Scratch::new();
    // A reference gemini would rewrite to its default on any save (checked with 0.61.0).
    std::fs::create_dir_all(s.gemini_home().join(".gemini")).unwrap();
    let seeded = json!({"mcpServers": {"other": {"command": "/y",
                                                  "env": {"S": "${MCP_T_SECRET:-hunter2}"}}}});
    std::fs::write(s.gemini_settings(), seeded.to_string()).unwrap();
    let c = s.open("gemini");
    for (v, want) in [
        (
            json!({"command": "/x", "env": {"TOKEN": "hunter2=more"}}),
            "env \"TOKEN\" has a value containing \"=\"",
        ),
        (json!({"command": "/x", "args": ["1e3"]}), "argument 1"),
        (json!({"command": "/x"}), "in other"),
    ] {
        let err = c.add("n", &entry(v.clone())).unwrap_err();
        assert!(
            matches!(err, ClientError::Unrepresentable { .. }),
            "{v}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(want) && !msg.contains("hunter2"), "{v}: {msg}");
    }
    let now: Value =
        serde_json::from_str(&std::fs::read_to_string(s.gemini_settings()).unwrap()).unwrap();
    assert_eq!(now, seeded, "nothing was registered");
}

// ---- grok ----

/// A stdio entry with what grok's `mcp add` flags would mangle: an argument starting with `-`,
/// one with spaces, one with `=`, an empty one; env values with `=` and empty.
fn grok_entry() -> Value {
    json!({
        "command": "/opt/codetools/bin/codetools",
        "args": ["-v", "mcp serve", "--scope=a=b", ""],
        "env": {"CT_TOKEN": "a=b=c", "CT_EMPTY": "", "CT_REF": "${CT_TOKEN}"}
    })
}

#[test]
fn grok_stdio_entry_round_trips_a_second_add_is_refused_and_remove_removes() {
    let s = Scratch::new();
    let c = s.open("grok");
    assert_eq!(c.config_path(), s.grok_settings());
    assert!(c.observe("ct-test").unwrap().is_none());
    // No API key anywhere, and the server it then connects to does not exist: the add is
    // still exact (the exit status of `add-json` says only whether the server answered).
    let rendered = grok_entry();
    c.add("ct-test", &entry(rendered.clone())).unwrap();
    let held = rendered.clone();
    assert_round_trip(c.as_ref(), "ct-test", &held);
    let raw: Value =
        serde_json::from_str(&std::fs::read_to_string(s.grok_settings()).unwrap()).unwrap();
    assert_eq!(raw["mcpServers"]["ct-test"]["name"], "ct-test");
    assert_eq!(raw["mcpServers"]["ct-test"]["transport"]["type"], "stdio");

    // `grok mcp add-json` would overwrite it silently; the module refuses instead.
    let err = c
        .add("ct-test", &entry(json!({"command": "/somewhere/else"})))
        .unwrap_err();
    assert!(
        matches!(err, ClientError::AlreadyRegistered { .. }),
        "{err:?}"
    );
    assert_round_trip(c.as_ref(), "ct-test", &held);

    // `grok mcp remove` of a missing name says "✓ Removed" and exits 0: refused before.
    let err = c.remove("nope").unwrap_err();
    assert!(matches!(err, ClientError::NotRegistered { .. }), "{err:?}");
    c.remove("ct-test").unwrap();
    assert!(c.observe("ct-test").unwrap().is_none());
}

#[test]
fn grok_add_of_a_server_that_answers_does_not_wait_for_it() {
    // After saving, grok connects to the server and, when it answers, stays connected for
    // ever: the call stops once grok says it saved, well inside the timeout.
    let s = Scratch::new();
    let server = s.dir.path().join("server");
    std::fs::write(
        &server,
        r#"#!/bin/sh
echo $$ > "$0.pid"
while read -r line; do
  case "$line" in
    *'"initialize"'*) echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}' ;;
    *'"tools/list"'*) echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}' ;;
  esac
done
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut opts = s.options();
    opts.timeout = Duration::from_secs(30);
    let c = clients::open(kind("grok"), &opts).unwrap();
    let rendered = json!({"command": server.to_str().unwrap()});
    let start = std::time::Instant::now();
    c.add("answers", &entry(rendered.clone())).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "{:?}",
        start.elapsed()
    );
    assert!(c.observe("answers").unwrap().is_some());
    // The server grok started (when it got that far) went with it: nothing outlives the call.
    if let Ok(pid) = std::fs::read_to_string(server.with_extension("pid")) {
        let stat = format!("/proc/{}/stat", pid.trim());
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let gone = || {
            std::fs::read_to_string(&stat)
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(true)
        };
        while !gone() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(), "the server grok started is still running ({stat})");
    }
}

#[test]
fn grok_settings_it_would_clobber_are_refused_before_any_call() {
    // Grok replaces a settings file it cannot parse by a fresh one on `add`, losing every
    // entry; mcp-deploy refuses to call it then, and the file stays as it was.
    let s = Scratch::new();
    std::fs::create_dir_all(s.grok_home().join(".grok")).unwrap();
    let broken =
        "{\"mcpServers\": {\"keep\": {\"name\": \"keep\", \"env\": {\"T\": \"hunter2\"}}},,}";
    std::fs::write(s.grok_settings(), broken).unwrap();
    let c = s.open("grok");
    let err = c.add("ct", &entry(json!({"command": "/x"}))).unwrap_err();
    assert!(matches!(err, ClientError::Config { .. }), "{err:?}");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert_eq!(std::fs::read_to_string(s.grok_settings()).unwrap(), broken);
}

#[test]
fn grok_other_entries_it_rewrites_are_reported() {
    // Saving re-serialises every entry: a `1.0` of another entry comes back `1`.
    let s = Scratch::new();
    std::fs::create_dir_all(s.grok_home().join(".grok")).unwrap();
    std::fs::write(
        s.grok_settings(),
        "{\"mcpServers\": {\"other\": {\"name\": \"other\", \"command\": \"/o\", \"timeout\": 1.0}}}",
    )
    .unwrap();
    let c = s.open("grok");
    let err = c
        .add("ct", &entry(json!({"command": "/x"})))
        .unwrap_err()
        .to_string();
    assert!(err.contains("also changed other"), "{err}");
}

#[test]
fn a_missing_binary_names_the_npm_package() {
    let s = Scratch::new();
    for (name, package) in [
        ("codex", "@openai/codex@0.171.0"),
        ("gemini", "@google/gemini-cli@0.61.0"),
        ("grok", "@vibe-kit/grok-cli@0.0.34"),
    ] {
        let mut opts = s.options();
        for c in ["codex", "gemini", "grok"] {
            opts.binaries.insert(c, format!("/nonexistent/{c}").into());
        }
        let err = clients::open(kind(name), &opts)
            .err()
            .expect("open must fail");
        assert!(matches!(err, ClientError::Missing { .. }), "{err:?}");
        assert!(err.to_string().contains(&format!("/nonexistent/{name}")));
        assert!(err.help().unwrap().contains(package), "{:?}", err.help());
    }
}

#[test]
fn the_client_list_is_what_client_takes() {
    // Today's `--client` spellings, in order; an unknown name is clap's refusal, which lists
    // them (tests/it checks the message).
    use clap::ValueEnum;
    let names: Vec<&str> = ClientKind::value_variants()
        .iter()
        .map(|k| k.name())
        .collect();
    assert_eq!(
        names,
        ["claude", "codex", "gemini", "opencode", "grok", "cursor", "copilot", "vscode", "qwen"]
    );
    for k in ClientKind::value_variants() {
        assert_eq!(ClientKind::from_str(k.name(), false), Ok(*k));
    }
    assert!(ClientKind::from_str("code", false).is_err());
    let (claude, gemini) = (kind("claude"), kind("gemini"));
    assert_eq!(
        ClientKind::unique(&[gemini, claude, gemini]),
        [gemini, claude]
    );
}
