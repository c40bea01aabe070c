//! Qwen Code's module, its rules pinned by hand and against the real pinned CLI
//! (`node_modules/.bin/qwen`, `npm ci`), each test in its own scratch home.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::*;
use crate::clients::tests::{assert_refused, assert_round_trip, entry};
use crate::clients::{self, Client, ClientKind, ClientOptions};

/// The tests that start the real pinned CLI (the fast tier skips every `real_cli` module).
mod real_cli {
    use super::*;

    fn real() -> PathBuf {
        let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin/qwen");
        assert!(
            pinned.exists(),
            "the real qwen CLI is missing: run `npm ci` in {} (package.json pins it)",
            env!("CARGO_MANIFEST_DIR")
        );
        pinned
    }

    fn open(home: &Path) -> Box<dyn Client> {
        let options = ClientOptions {
            binaries: [("qwen", real())].into_iter().collect(),
            homes: [("qwen", home.to_path_buf())].into_iter().collect(),
            timeout: Duration::from_secs(60),
            mcp_timeout: Duration::from_millis(5000),
            calls_binary: true,
            said: None,
        };
        let kind = ClientKind::named("qwen").expect("the qwen row");
        clients::open(kind, &options).unwrap_or_else(|e| panic!("open qwen: {e}"))
    }

    #[test]
    fn stdio_and_remote_entries_round_trip_then_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let c = open(dir.path());
        assert_eq!(c.config_path(), dir.path().join(".qwen/settings.json"));
        let stdio = json!({
            "command": "/opt/codetools/bin/codetools",
            "args": ["mcp serve", "it\"s", "--scope", "10"],
            "env": {"CT_TOKEN": "${CT_TOKEN}", "CT_MODE": "fast lane", "CT_OPTS": "a=b=c"}
        });
        let http = json!({"type": "http", "url": "http://h/mcp", "headers": {"X-K": "v: w"}});
        let sse = json!({"type": "sse", "url": "http://s/sse"});
        for (name, e) in [("ct", &stdio), ("h", &http), ("s", &sse)] {
            c.add(name, &entry(e.clone())).unwrap();
            assert_round_trip(c.as_ref(), name, e);
        }
        // As qwen writes them: `httpUrl` for HTTP, a bare `url` for SSE.
        let raw: Value =
            serde_json::from_str(&std::fs::read_to_string(c.config_path()).unwrap()).unwrap();
        assert_eq!(raw["mcpServers"]["h"]["httpUrl"], "http://h/mcp");
        assert_eq!(raw["mcpServers"]["s"], json!({"url": "http://s/sse"}));
        // An add of a registered name is refused (qwen would overwrite it).
        let err = c.add("ct", &entry(json!({"command": "/x"}))).unwrap_err();
        assert!(err.to_string().contains("already registered"), "{err}");
        for name in ["ct", "h", "s"] {
            c.remove(name).unwrap();
            assert!(c.observe(name).unwrap().is_none(), "{name}");
        }
        // A missing name: qwen exits 0 and says so; mcp-deploy refuses.
        let err = c.remove("ct").unwrap_err();
        assert!(err.to_string().contains("nothing to remove"), "{err}");
    }

    #[test]
    fn refusals_name_the_key_and_make_no_call() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".qwen")).unwrap();
        let settings = dir.path().join(".qwen/settings.json");
        // A reference qwen expands on any save (its HOME), pinned with 0.24.4.
        let seeded = json!({"mcpServers": {"other": {"command": "/o", "args": ["$HOME"]}}});
        std::fs::write(&settings, seeded.to_string()).unwrap();
        let c = open(dir.path());
        let err = c
            .add("ct", &entry(json!({"command": "/x"})))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("qwen rewrites every user-scope server"),
            "{err}"
        );
        assert!(err.contains("other"), "{err}");
        std::fs::write(&settings, "{}").unwrap();
        assert_refused(
            |e| c.add("ct", e),
            [
                (
                    json!({"command": "/x", "args": ["1.50"]}),
                    "looks like a number",
                ),
                (
                    json!({"command": "/x", "env": {"T": ""}}),
                    "which qwen drops",
                ),
                (
                    json!({"type": "http", "url": "u", "headers": {"K": " hunter2"}}),
                    "header \"K\"",
                ),
                (json!({"command": "/x", "trust": true}), "key \"trust\""),
            ],
        );
        let after: Value =
            serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
        assert_eq!(after, json!({}), "no call was made");
    }
}

#[test]
fn entries_are_read_in_the_claude_shape() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("settings.json");
    std::fs::write(
        &p,
        r#"{ // qwen's own spellings
  "mcpServers": {
    "h": {"httpUrl": "http://h/mcp", "headers": {"K": "v"}},
    "s": {"url": "http://s/sse"},
    "t": {"type": "http", "url": "http://t/mcp"},
    "both": {"httpUrl": "http://b/mcp", "url": "http://b/sse"},
    "c": {"command": "/x", "args": []}
  }, "$version": 4}"#,
    )
    .unwrap();
    let m = read_user_entries(&p).unwrap();
    assert_eq!(
        m["h"],
        json!({"type": "http", "url": "http://h/mcp", "headers": {"K": "v"}})
    );
    assert_eq!(m["s"], json!({"type": "sse", "url": "http://s/sse"}));
    // qwen connects to a `url` over SSE whatever `type` says.
    assert_eq!(m["t"], json!({"type": "sse", "url": "http://t/mcp"}));
    assert_eq!(m["both"], json!({"type": "http", "url": "http://b/mcp"}));
    assert_eq!(m["c"], json!({"command": "/x", "args": []}));
}

#[test]
fn qwen_home_resolves_as_qwen_resolves_it() {
    let home = Path::new("/h");
    assert_eq!(qwen_dir(None, home), PathBuf::from("/h/.qwen"));
    assert_eq!(qwen_dir(Some("".into()), home), PathBuf::from("/h/.qwen"));
    assert_eq!(qwen_dir(Some("/q".into()), home), PathBuf::from("/q"));
    assert_eq!(qwen_dir(Some("~/q".into()), home), PathBuf::from("/h/q"));
    assert_eq!(
        qwen_dir(Some("q".into()), home),
        std::env::current_dir().unwrap().join("q")
    );
    let text = "# c\nexport QWEN_HOME = \"/a b\" # x\nOTHER=1\n";
    assert_eq!(dotenv_value(text, "QWEN_HOME").as_deref(), Some("/a b"));
    assert_eq!(
        dotenv_value("QWEN_HOME=/x # c", "QWEN_HOME").as_deref(),
        Some("/x")
    );
    assert_eq!(dotenv_value("QWEN_HOME=/x\nQWEN_HOME=", "QWEN_HOME"), None);
    assert_eq!(dotenv_value("QWEN_HOMEX=/x", "QWEN_HOME"), None);
}

#[test]
fn a_project_mcp_json_is_read_in_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(".mcp.json");
    std::fs::write(
        &f,
        r#"{"mcpServers": {"ct": {"type": "http", "url": "u"}}}"#,
    )
    .unwrap();
    let m = read_project(&f).unwrap();
    assert!(m.contains_key("ct"));
}
