//! Issue 20, Claude Code's layers: every source beyond the user-scope entry that changes
//! whether and how claude runs the registered name. Each row installs codetools through the
//! real claude, sets up one state, CONFIRMS it with the real claude 2.1.332 (the server
//! really is gone from `claude mcp get`, really gets the variable, ...), then requires
//! `verify-identity` to fail `mcp-registration` naming the file and key. Every row passed
//! (exit 0) before the claude layers reader: it returned nothing.
//!
//! Files under `/etc` are written only inside a private mount namespace
//! ([`Cmd::in_private_etc`]); claude and mcp-deploy both run in it.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::support::mkfifo;
use crate::harness::*;

const NAME: &str = "codetools-test";

/// A server that records the environment and argv it was started with into
/// `$ORACLE_OUT` and answers `initialize`: registered beside ours as `oracle`, it shows what
/// claude gives every user-scope stdio server.
const ORACLE: &str = r#"#!/usr/bin/python3
import os, sys, json
with open(os.environ["ORACLE_OUT"], "w") as f:
    json.dump({"env": dict(os.environ), "argv": sys.argv}, f)
for line in sys.stdin:
    try:
        m = json.loads(line)
    except Exception:
        continue
    if "id" in m:
        r = {"tools": []}
        if m.get("method") == "initialize":
            r = {"protocolVersion": m["params"].get("protocolVersion", "2024-11-05"),
                 "capabilities": {"tools": {}}, "serverInfo": {"name": "oracle", "version": "1"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
        sys.stdout.flush()
"#;

/// Where the row's files go.
#[derive(Clone, Copy, PartialEq)]
enum Etc {
    Host,
    Private,
}

struct Row {
    w: World,
    etc: Etc,
}

impl Row {
    fn install(etc: Etc) -> Row {
        let w = World::with_real_claude();
        w.sample();
        let r = Row { w, etc };
        r.verify(&[]).code(0);
        r
    }

    fn wrap<'a>(&self, c: Cmd<'a>) -> Cmd<'a> {
        match self.etc {
            Etc::Host => c,
            Etc::Private => c.in_private_etc(),
        }
    }

    fn verify(&self, extra: &[&str]) -> Run {
        if !self.w.user_servers().contains_key(NAME) {
            self.w
                .on_sample("install", &["--server", "codetools"])
                .code(0);
        }
        let prefix = self.w.opt().join("codetools");
        let mut args = vec![
            "verify-identity".to_string(),
            "--prefix".into(),
            prefix.display().to_string(),
            "--expect-commit".into(),
            CT_SHA.into(),
            "--mcp-json".into(),
            self.w.registered().display().to_string(),
            "--name".into(),
            NAME.into(),
            "--json".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        self.wrap(self.w.cmd().args(&args)).run()
    }

    /// Real claude, in the row's namespace, in `dir` (the world's `work/` by default).
    fn claude(&self, args: &[&str], dir: Option<&Path>) -> Run {
        let mut c = self
            .w
            .program(real_claude())
            .args(args)
            .env("MCP_TIMEOUT", "5000");
        if let Some(d) = dir {
            c = c.current_dir(d);
        }
        self.wrap(c).run()
    }

    /// Confirm claude does not load our name: `claude mcp get` does not know it.
    fn confirm_gone(&self, dir: Option<&Path>) {
        let r = self.claude(&["mcp", "get", NAME], dir);
        assert!(
            r.stdout
                .contains(&format!("No MCP server named \"{NAME}\""))
                || r.stderr
                    .contains(&format!("No MCP server named \"{NAME}\"")),
            "setup error: claude still loads {NAME}:\n{r}"
        );
    }

    /// Register the env oracle and return what claude started it with (through `mcp get`).
    fn oracle(&self) -> Value {
        let script = self.w.root().join("oracle.py");
        write_exec(&script, ORACLE);
        let out = self.w.root().join("oracle.json");
        let entry = json!({"command": script, "env": {"ORACLE_OUT": out}});
        self.claude(
            &[
                "mcp",
                "add-json",
                "-s",
                "user",
                "oracle",
                &entry.to_string(),
            ],
            None,
        )
        .code(0);
        let _ = fs::remove_file(&out);
        self.claude(&["mcp", "get", "oracle"], None);
        let text = fs::read_to_string(&out)
            .unwrap_or_else(|_| panic!("setup error: claude did not start the oracle"));
        serde_json::from_str(&text).unwrap()
    }

    fn user_settings(&self, v: &Value) -> PathBuf {
        self.w
            .write("claude/settings.json", serde_json::to_vec(v).unwrap())
    }

    fn managed(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.w.etc().join("claude-code").join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        PathBuf::from("/etc/claude-code").join(rel)
    }

    /// verify-identity fails `mcp-registration`, its detail naming every one of `evidence`;
    /// install's verification fails too, and status's `layers` row.
    fn fails(&self, evidence: &[&str]) {
        let r = self.verify(&[]);
        r.code(1);
        let detail = r.detail("mcp-registration");
        for e in evidence {
            assert!(detail.contains(e), "{e:?} not in the detail: {detail}\n{r}");
        }
        let install =
            self.wrap(
                self.w
                    .sample_cmd("install")
                    .args(["--server", "codetools", "--json"]),
            );
        let ir = install.run();
        assert_ne!(ir.code, 0, "install passed:\n{ir}");
        let st = self
            .wrap(self.w.sample_cmd("status").args(["--json"]))
            .run();
        st.code(1);
        assert!(
            st.checks().iter().any(|(c, ok)| c == "layers" && !ok),
            "no failing layers row:\n{st}"
        );
    }
}

fn deny_name() -> Value {
    json!({"deniedMcpServers": [{"serverName": NAME}]})
}

#[test]
fn user_settings_env_node_options_reaches_the_server() {
    let r = Row::install(Etc::Host);
    let s = r.user_settings(&json!({"env": {"NODE_OPTIONS": "--require /tmp/evil.js"}}));
    let seen = r.oracle();
    assert_eq!(seen["env"]["NODE_OPTIONS"], "--require /tmp/evil.js");
    r.fails(&[&format!("{} env", s.display()), "env.NODE_OPTIONS"]);
    // The value is never shown.
    assert!(!r.verify(&[]).stdout.contains("evil.js"));
}

#[test]
fn user_settings_env_ld_preload_and_path_reach_the_server() {
    let r = Row::install(Etc::Host);
    r.user_settings(
        &json!({"env": {"LD_PRELOAD": "/tmp/x.so", "PATH": "/tmp/evil:/usr/bin:/bin"}}),
    );
    let seen = r.oracle();
    assert_eq!(seen["env"]["PATH"], "/tmp/evil:/usr/bin:/bin");
    assert_eq!(seen["env"]["LD_PRELOAD"], "/tmp/x.so");
    r.fails(&["env.LD_PRELOAD", "env.PATH"]);
}

#[test]
fn shell_prefix_in_settings_env_wraps_the_command() {
    let r = Row::install(Etc::Host);
    let wrapper = r.w.root().join("wrap.sh");
    let log = r.w.root().join("wrapped");
    write_exec(
        &wrapper,
        &format!("#!/bin/sh\necho \"$@\" > {}\nexec \"$@\"\n", log.display()),
    );
    r.user_settings(&json!({"env": {"CLAUDE_CODE_SHELL_PREFIX": wrapper}}));
    r.claude(&["mcp", "get", NAME], None);
    let wrapped = fs::read_to_string(&log).expect("setup error: claude did not run the prefix");
    assert!(wrapped.contains("bin/codetools"), "{wrapped}");
    r.fails(&["command", "env.CLAUDE_CODE_SHELL_PREFIX"]);
}

#[test]
fn managed_settings_env_reaches_the_server() {
    let r = Row::install(Etc::Private);
    let p = r.managed(
        "managed-settings.json",
        r#"{"env": {"NODE_OPTIONS": "--require /x"}}"#,
    );
    assert_eq!(r.oracle()["env"]["NODE_OPTIONS"], "--require /x");
    r.fails(&[&format!("{} env", p.display()), "env.NODE_OPTIONS"]);
}

#[test]
fn denied_by_name_in_user_settings() {
    let r = Row::install(Etc::Host);
    let s = r.user_settings(&deny_name());
    r.confirm_gone(None);
    r.fails(&[&format!("{} deniedMcpServers", s.display())]);
}

#[test]
fn denied_by_command_in_project_settings() {
    let r = Row::install(Etc::Host);
    let cmd = r.w.opt().join("codetools/bin/codetools");
    let p = r.w.write(
        "work/.claude/settings.json",
        json!({"deniedMcpServers": [{"serverCommand": [cmd, "mcp", "serve"]}]}).to_string(),
    );
    r.confirm_gone(None);
    r.fails(&[&format!("{} deniedMcpServers", p.display())]);
}

#[test]
fn denied_in_local_settings_of_a_known_project() {
    let r = Row::install(Etc::Host);
    let proj = r.w.root().join("proj");
    let p =
        r.w.write("proj/.claude/settings.local.json", deny_name().to_string());
    // claude knows the project (it has an entry in .claude.json), the agent may run there.
    let cj = r.w.claude_json();
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(&cj).unwrap()).unwrap();
    doc["projects"] = json!({ proj.display().to_string(): {} });
    fs::write(&cj, doc.to_string()).unwrap();
    r.confirm_gone(Some(&proj));
    r.fails(&[&format!("{} deniedMcpServers", p.display())]);
}

#[test]
fn allow_list_leaves_it_out() {
    let r = Row::install(Etc::Host);
    let s = r.user_settings(&json!({"allowedMcpServers": [{"serverName": "other"}]}));
    r.confirm_gone(None);
    r.fails(&[&format!("{} allowedMcpServers", s.display())]);
}

#[test]
fn allow_list_of_commands_no_longer_admits_by_name() {
    let r = Row::install(Etc::Host);
    r.user_settings(&json!({"allowedMcpServers": [
        {"serverName": NAME}, {"serverCommand": ["/usr/bin/other"]}]}));
    r.confirm_gone(None);
    r.fails(&["allowedMcpServers", "lists commands"]);
}

#[test]
fn disabled_in_a_project() {
    let r = Row::install(Etc::Host);
    let work = r.w.root().join("work");
    let cj = r.w.claude_json();
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(&cj).unwrap()).unwrap();
    doc["projects"] = json!({ work.display().to_string(): {"disabledMcpServers": [NAME]} });
    fs::write(&cj, doc.to_string()).unwrap();
    let g = r.claude(&["mcp", "get", NAME], None);
    assert!(g.stdout.contains("Disabled"), "setup error:\n{g}");
    r.fails(&["disabledMcpServers"]);
}

#[test]
fn managed_drop_in_denies_it() {
    let r = Row::install(Etc::Private);
    r.managed("managed-settings.d/10-a.json", r#"{"env": {}}"#);
    let p = r.managed("managed-settings.d/20-b.json", &deny_name().to_string());
    r.confirm_gone(None);
    r.fails(&[&format!("{} deniedMcpServers", p.display())]);
}

#[test]
fn managed_only_allow_list_overrides_the_users() {
    let r = Row::install(Etc::Private);
    r.user_settings(&json!({"allowedMcpServers": [{"serverName": NAME}]}));
    r.managed(
        "managed-settings.json",
        r#"{"allowManagedMcpServersOnly": true, "allowedMcpServers": [{"serverName": "other"}]}"#,
    );
    r.confirm_gone(None);
    r.fails(&["/etc/claude-code/managed-settings.json allowedMcpServers"]);
}

#[test]
fn managed_mcp_json_takes_exclusive_control() {
    let r = Row::install(Etc::Private);
    r.managed(
        "managed-mcp.json",
        r#"{"mcpServers": {"other": {"command": "/bin/true"}}}"#,
    );
    r.confirm_gone(None);
    r.fails(&["/etc/claude-code/managed-mcp.json", "only its servers"]);
}

#[test]
fn managed_mcp_json_same_name_replaces_ours() {
    let r = Row::install(Etc::Private);
    r.managed(
        "managed-mcp.json",
        &json!({"mcpServers": {NAME: {"command": "/bin/true", "args": ["managed"]}}}).to_string(),
    );
    let g = r.claude(&["mcp", "get", NAME], None);
    assert!(g.stdout.contains("/bin/true"), "setup error:\n{g}");
    r.fails(&["another definition", "/etc/claude-code/managed-mcp.json"]);
}

#[test]
fn managed_settings_not_json_claude_refuses_to_start() {
    let r = Row::install(Etc::Private);
    r.managed("managed-settings.json", "{nope");
    let g = r.claude(&["mcp", "list"], None);
    assert_ne!(g.code, 0, "setup error:\n{g}");
    assert!(g.stderr.contains("could not be parsed") || g.stdout.contains("could not be parsed"));
    r.fails(&["refuses to start"]);
}

// A witness that silently drops out: each file is odd in a way claude tolerates, and the
// deny it holds must still count.

#[test]
fn deny_behind_a_bom_still_counts() {
    let r = Row::install(Etc::Host);
    let mut text = "\u{feff}".to_string();
    text.push_str(&deny_name().to_string());
    r.w.write("claude/settings.json", text);
    r.confirm_gone(None);
    r.fails(&["deniedMcpServers"]);
}

#[test]
fn deny_after_a_duplicate_key_still_counts() {
    let r = Row::install(Etc::Host);
    r.w.write(
        "claude/settings.json",
        format!(r#"{{"deniedMcpServers": [], "deniedMcpServers": [{{"serverName": "{NAME}"}}]}}"#),
    );
    r.confirm_gone(None);
    r.fails(&["deniedMcpServers"]);
}

/// verify-identity under a 1 GB address-space limit.
fn verify_bounded(r: &Row) -> Run {
    let prefix = r.w.opt().join("codetools");
    r.w.program(system_tool("prlimit"))
        .arg("--as=1000000000")
        .arg(env!("CARGO_BIN_EXE_mcp-deploy"))
        .args(["verify-identity", "--prefix"])
        .arg(&prefix)
        .args(["--expect-commit", CT_SHA, "--mcp-json"])
        .arg(r.w.registered())
        .args(["--name", NAME, "--json"])
        .run()
}

/// A settings file just under claude's 2 MiB: 100k levels of nesting and a large string
/// under unrelated keys.
fn big_settings(len: usize) -> String {
    let mut text = String::from(r#"{"y": "#);
    text.push_str(&"[".repeat(100_000));
    text.push_str(&"]".repeat(100_000));
    text.push_str(&format!(
        r#", "deniedMcpServers": [{{"serverName": "{NAME}"}}], "x": ""#
    ));
    let pad = len - text.len() - 2;
    text.push_str(&"a".repeat(pad));
    text.push_str("\"}");
    text
}

#[test]
fn deny_beside_a_huge_deep_value_still_counts_under_a_memory_limit() {
    let r = Row::install(Etc::Host);
    r.w.write("claude/settings.json", big_settings((2 << 20) - 1));
    r.confirm_gone(None);
    let run = verify_bounded(&r);
    run.code(1);
    assert!(
        run.detail("mcp-registration").contains("deniedMcpServers"),
        "{run}"
    );
}

/// claude 2.1.332 drops this 50 MiB file (confirmed: the server stays); its exact size rule
/// is not pinned, so the deny in it still counts (fail closed), and reading it stays within
/// the memory limit.
#[test]
fn a_50_mib_settings_file_is_read_within_a_memory_limit() {
    let r = Row::install(Etc::Host);
    r.w.write("claude/settings.json", big_settings(50 << 20));
    r.claude(&["mcp", "get", NAME], None).code(0);
    let run = verify_bounded(&r);
    run.code(1);
    assert!(
        run.detail("mcp-registration").contains("deniedMcpServers"),
        "{run}"
    );
}

#[test]
fn a_settings_fifo_is_not_compared_never_absent() {
    let r = Row::install(Etc::Host);
    // claude would block on it; what matters is that we neither hang nor read it as absent.
    mkfifo(&r.w.config_dir().join("settings.json"));
    let run = r.verify(&[]);
    run.code(0);
    assert!(
        run.detail("mcp-registration").contains("not compared"),
        "{run}"
    );
    r.verify(&["--strict"]).code(1);
}
