//! `mcp-deploy clients`: every row of the client table, with what the world has of it — the
//! real claude for behaviour, fake binaries on PATH for the faults a real client cannot
//! produce on demand (an old or new release, a failing or garbage `--version`).

use serde_json::Value;

use crate::harness::*;
use crate::snapshot;

/// The `clients` array of a `--format json` run, which must exit 0.
fn listed(r: &Run) -> Vec<serde_json::Map<String, Value>> {
    r.success();
    let doc = r.json();
    assert_eq!(doc["ok"], true, "{r}");
    assert_eq!(doc["exit"], 0, "{r}");
    doc["clients"]
        .as_array()
        .unwrap_or_else(|| panic!("no \"clients\" array\n{r}"))
        .iter()
        .map(|c| c.as_object().expect("an object per client").clone())
        .collect()
}

/// The listed object of client `name`.
fn of(all: &[serde_json::Map<String, Value>], name: &str) -> serde_json::Map<String, Value> {
    all.iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not listed: {all:?}"))
        .clone()
}

/// With no client anywhere on the world's PATH: every row of the table is listed, in its
/// order, `name` the first key; each client with a binary is "not found", each without one
/// has none to find; and that is no error.
#[test]
fn every_client_of_the_table_is_listed_and_none_found_is_no_error() {
    let w = World::new();
    let r = w.run(&["clients", "--format", "json"]);
    let all = listed(&r);
    let names: Vec<&str> = all.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, mcp_deploy::client_names(), "{r}");
    let binaries = client_binaries();
    for c in &all {
        assert_eq!(c.keys().next().map(String::as_str), Some("name"), "{c:?}");
        let name = c["name"].as_str().unwrap();
        match c["binary"].as_str() {
            Some(b) => {
                assert!(
                    binaries.contains(&b),
                    "{name}: {b} is no binary of the table"
                );
                assert_eq!(c["state"], "not-found", "{name}: {r}");
                assert_eq!(c["found"], Value::Null, "{name}");
                assert!(c["package"].is_string(), "{name}: {c:?}");
                assert!(c["supported"].is_string(), "{name}: {c:?}");
            }
            None => assert_eq!(c["state"], "no-binary", "{name}: {r}"),
        }
        let config = c["config"].as_str().unwrap();
        assert!(
            config.starts_with(w.root().to_str().unwrap()),
            "{name}: its user config {config} is not in the world's home"
        );
    }
    // `--json` is the same, and the human form has a block per client, each within 100
    // columns.
    let alias = w.run(&["clients", "--json"]);
    assert_eq!(listed(&alias).len(), all.len());
    let human = w.run(&["clients"]);
    human.success();
    let heads: Vec<&str> = human
        .stdout
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' '))
        .collect();
    assert_eq!(heads, mcp_deploy::client_names(), "{human}");
    assert!(
        human
            .stdout
            .contains("not found: claude was not found on PATH"),
        "{human}"
    );
}

/// A release inside the range is supported; one older than the oldest, or of another major,
/// is unsupported, its release and the range named — what install would refuse.
#[test]
fn a_release_inside_the_range_is_supported_and_one_outside_is_named() {
    let w = World::new();
    w.write_claude("#!/bin/sh\necho '2.1.400 (Claude Code)'\n");
    write_exec(
        &w.bin().join("codex"),
        "#!/bin/sh\necho 'codex-cli 1.2.0'\n",
    );
    let old = w.root().join("elsewhere/gemini");
    write_exec(&old, "#!/bin/sh\necho 0.8.2\n");
    let r = w
        .cmd()
        .args(["clients", "--client", "claude,codex,gemini", "--json"])
        .env("MCP_DEPLOY_GEMINI", &old)
        .run();
    let all = listed(&r);
    assert_eq!(all.len(), 3, "{r}");
    let claude = of(&all, "claude");
    assert_eq!(claude["state"], "supported", "{r}");
    assert_eq!(claude["version"], "2.1.400");
    assert_eq!(
        claude["found"],
        w.bin().join("claude").to_str().unwrap(),
        "{r}"
    );
    let codex = of(&all, "codex");
    assert_eq!(codex["state"], "unsupported", "{r}");
    assert_eq!(codex["version"], "1.2.0");
    assert!(
        codex["detail"]
            .as_str()
            .unwrap()
            .contains("new major release: mcp-deploy supports codex 0.45.0 to 0.x"),
        "{r}"
    );
    // MCP_DEPLOY_GEMINI names the binary, as for every other command.
    let gemini = of(&all, "gemini");
    assert_eq!(gemini["found"], old.to_str().unwrap(), "{r}");
    assert_eq!(gemini["state"], "unsupported", "{r}");
    assert!(
        gemini["detail"]
            .as_str()
            .unwrap()
            .contains("gemini 0.8.2 is older than the oldest supported (0.10.0)"),
        "{r}"
    );
}

/// A binary that fails, prints garbage (a terminal escape included) or hangs: "could not
/// tell", per client, and the run still exits 0 with every row.
#[test]
fn a_failing_or_garbage_version_is_could_not_tell_and_exit_0() {
    let w = World::new();
    w.write_claude("#!/bin/sh\necho 'no such option' >&2\nexit 3\n");
    write_exec(
        &w.bin().join("codex"),
        "#!/bin/sh\nprintf '\\033[2Jversion x.y.z\\n'\n",
    );
    write_exec(&w.bin().join("gemini"), "#!/bin/sh\nexec sleep 30\n");
    let args = [
        "clients",
        "--client",
        "claude,codex,gemini,cursor",
        "--client-timeout",
        "1s",
    ];
    let r = w.cmd().args(args).arg("--json").run();
    let all = listed(&r);
    for (name, why) in [
        (
            "claude",
            "`claude --version` failed (exit status: 3): no such option",
        ),
        ("codex", "cannot be read: `codex --version` printed"),
        ("gemini", "`gemini --version` timed out after 1s"),
    ] {
        let c = of(&all, name);
        assert_eq!(c["state"], "unknown", "{name}: {r}");
        assert_eq!(c["version"], Value::Null, "{name}: {r}");
        let detail = c["detail"].as_str().unwrap();
        assert!(detail.contains(why), "{name}: {detail}\n{r}");
    }
    assert_eq!(of(&all, "cursor")["state"], "no-binary");
    let human = w.cmd().args(args).run();
    human.success();
    assert!(
        !human.said().contains('\x1b'),
        "a terminal escape reached stdout\n{human}"
    );
    assert!(
        human
            .stdout
            .contains("state      could not tell: the version of codex"),
        "{human}"
    );
    // Snapshotted without codex, whose detail names its path: where that wraps depends on
    // the length of the world's temp dir.
    let shown = w
        .cmd()
        .args(["clients", "--client", "claude,gemini,cursor"])
        .args(["--client-timeout", "1s"])
        .run();
    snapshot!("clients_could_not_tell", shown);
}

/// The real claude of node_modules: found, its release the pinned package's, supported.
#[test]
fn the_real_claude_is_found_with_its_pinned_release() {
    let w = World::with_real_claude();
    let package = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/@anthropic-ai/claude-code/package.json");
    let pinned: Value = serde_json::from_str(&std::fs::read_to_string(&package).unwrap()).unwrap();
    let r = w.run(&["clients", "--client", "claude", "--json"]);
    let all = listed(&r);
    let claude = of(&all, "claude");
    assert_eq!(claude["state"], "supported", "{r}");
    assert_eq!(claude["version"], pinned["version"], "{r}");
    assert_eq!(claude["package"], "@anthropic-ai/claude-code");
    assert_eq!(
        claude["found"],
        w.bin().join("claude").to_str().unwrap(),
        "{r}"
    );
    w.run(&["clients", "--client", "claude"])
        .success()
        .stdout_has("  state      supported\n");
}
