//! The codex and gemini client modules, driven through the `Client` trait against the real
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
        for d in ["codex", "gemini"] {
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
    fn gemini_settings(&self) -> PathBuf {
        self.gemini_home().join(".gemini/settings.json")
    }
    fn options(&self) -> ClientOptions {
        ClientOptions {
            claude: None,
            codex: Some(real("codex")),
            gemini: Some(real("gemini")),
            opencode: None,
            codex_home: Some(self.codex_home()),
            gemini_home: Some(self.gemini_home()),
            timeout: Duration::from_secs(60),
            mcp_timeout_ms: 5000,
            calls_binary: true,
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
    opts.codex_home = Some(missing.clone());
    let err = clients::open(ClientKind::Codex, &opts)
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
    // An entry gemini would rewrite with the value of HOME, were HOME in its environment.
    std::fs::create_dir_all(s.gemini_home().join(".gemini")).unwrap();
    let other = json!({"command": "/y", "args": [], "env": {"H": "${HOME}/x"}});
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

#[test]
fn a_missing_binary_names_the_npm_package() {
    let s = Scratch::new();
    for (name, package) in [
        ("codex", "@openai/codex@0.171.0"),
        ("gemini", "@google/gemini-cli@0.61.0"),
    ] {
        let mut opts = s.options();
        opts.codex = Some("/nonexistent/codex".into());
        opts.gemini = Some("/nonexistent/gemini".into());
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
    assert_eq!(names, ["claude", "codex", "gemini", "opencode", "cursor"]);
    for k in ClientKind::value_variants() {
        assert_eq!(ClientKind::from_str(k.name(), false), Ok(*k));
    }
    assert!(ClientKind::from_str("vscode", false).is_err());
    assert_eq!(
        ClientKind::unique(&[ClientKind::Gemini, ClientKind::Claude, ClientKind::Gemini]),
        [ClientKind::Gemini, ClientKind::Claude]
    );
}
