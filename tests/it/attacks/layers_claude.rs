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

use super::support::ORACLE;

/// Where the row's files go.
#[derive(Clone, Copy, PartialEq)]
enum Etc {
    Host,
    Private,
}

struct Row {
    w: World,
    etc: Etc,
    /// The claude the row confirms with (and that is on the world's PATH).
    claude: PathBuf,
}

impl Row {
    fn install(etc: Etc) -> Row {
        Row::install_with(etc, real_claude())
    }

    /// A row whose world has `claude` (an older release, [`across`]) on PATH: mcp-deploy
    /// installs through it and the row confirms with it.
    fn install_with(etc: Etc, claude: PathBuf) -> Row {
        let w = World::new();
        std::os::unix::fs::symlink(&claude, w.bin().join("claude")).unwrap();
        w.sample();
        let r = Row { w, etc, claude };
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
            .program(&self.claude)
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

    fn config_dir_settings(&self) -> PathBuf {
        self.w.config_dir().join("settings.json")
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
    assert!(g.said().contains("Disabled"), "setup error:\n{g}");
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
    assert!(g.said().contains("/bin/true"), "setup error:\n{g}");
    r.fails(&["another definition", "/etc/claude-code/managed-mcp.json"]);
}

#[test]
fn managed_settings_not_json_claude_refuses_to_start() {
    let r = Row::install(Etc::Private);
    r.managed("managed-settings.json", "{nope");
    let g = r.claude(&["mcp", "list"], None);
    assert_ne!(g.code, 0, "setup error:\n{g}");
    assert!(g.stderr.contains("could not be parsed") || g.said().contains("could not be parsed"));
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

/// Issue 35, item 8: the organization delivers a server of our name (`managedMcpServers` of
/// the managed settings, http only). claude 2.1.332's `claude mcp list` still shows the user
/// entry, and no session was recorded to say which one runs: before, verify-identity passed
/// (the key was not read); now it is a doubt, named, and fails.
#[test]
fn an_organization_server_of_our_name_is_a_doubt_and_fails() {
    let r = Row::install(Etc::Private);
    let org =
        json!({"managedMcpServers": {NAME: {"type": "http", "url": "http://127.0.0.1:9/mcp"}}});
    r.managed("managed-settings.json", &org.to_string());
    let listed = r.claude(&["mcp", "list"], None);
    assert!(listed.stdout.contains(&format!("{NAME}: ")), "{listed}");
    r.fails(&[
        "not compared: /etc/claude-code/managed-settings.json managedMcpServers",
        "delivers a server of that name too",
    ]);
}

/// Issue 35, item 8: `strictPluginOnlyCustomization` in the managed settings (claude 2.1.332's
/// schema: "blocks non-plugin customization sources") — `true`, or a list holding "mcp" — and
/// claude loads no user-scope server (`claude mcp list` lists none). verify-identity passed
/// before (the key was not read). Next instance: a value of no documented form ("skills"),
/// which 2.1.284 and 2.1.332 take as locking everything and 2.1.100 as nothing: a doubt.
#[test]
fn strict_plugin_only_customization_keeps_every_user_server_out() {
    let r = Row::install(Etc::Private);
    for (value, want) in [
        (
            json!(true),
            "true: claude loads only the MCP servers plugins provide",
        ),
        (json!(["skills", "mcp"]), "it lists \"mcp\""),
        (
            json!("skills"),
            "not compared: /etc/claude-code/managed-settings.json",
        ),
    ] {
        r.managed(
            "managed-settings.json",
            &json!({ "strictPluginOnlyCustomization": value }).to_string(),
        );
        r.confirm_gone(None);
        r.fails(&["managed-settings.json strictPluginOnlyCustomization", want]);
    }
    // A list without "mcp" locks other surfaces only: the server loads, and the check passes.
    r.managed(
        "managed-settings.json",
        &json!({"strictPluginOnlyCustomization": ["skills"]}).to_string(),
    );
    r.verify(&[]).code(0);
}

#[test]
fn a_settings_fifo_is_not_compared_never_absent() {
    let r = Row::install(Etc::Host);
    // claude would block on it; what matters is that we neither hang nor read it as absent.
    // What it holds is not known, and a doubt fails with or without --strict (issue 35: it
    // was a note, exit 0).
    mkfifo(&r.w.config_dir().join("settings.json"));
    let run = r.verify(&[]);
    run.code(1);
    assert!(
        run.detail("mcp-registration").contains("not compared"),
        "{run}"
    );
    r.verify(&["--strict"]).code(1);
}

/// The main rules again with each supported release of compat/versions.txt as the oracle
/// (issue 20 across issue 21's range): one test per release and rule, so a failure names the
/// release. mcp-deploy's reader follows the newest claude; where an older one differs, the
/// row pins what that release does and that the verdict still fails (errs toward failing),
/// never that it passes a state the release runs differently.
mod across {
    use super::*;

    /// The API key the session is started with (approved in `.claude.json`); the API itself
    /// is a closed port, so nothing leaves the host.
    const KEY: &str = "sk-ant-mcp-deploy-test-0000000000000000";

    /// Runs `$1` (claude) in the pty `script` gives it until `$2` has content, then a second
    /// more (claude connects its servers in parallel), and stops it.
    const SESSION: &str = r#"#!/bin/sh
"$1" & pid=$!
i=0
while [ ! -s "$2" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
sleep 1
kill $pid 2>/dev/null
sleep 0.3
kill -9 $pid 2>/dev/null
exit 0
"#;

    impl Row {
        /// Register an env oracle under `name` at user scope, recording into `name`.json.
        fn add_oracle(&self, name: &str) -> PathBuf {
            let script = self.w.root().join("oracle.py");
            write_exec(&script, ORACLE);
            let out = self.w.root().join(format!("{name}.json"));
            let entry = json!({"command": script, "env": {"ORACLE_OUT": out}});
            self.claude(
                &["mcp", "add-json", "-s", "user", name, &entry.to_string()],
                None,
            )
            .code(0);
            out
        }

        /// An interactive claude session in the world's `work/` (onboarding done, the folder
        /// trusted, the key approved): it starts every server it loads, with its settings'
        /// env applied (2.0.0 applies the whole `env` only here, after the trust dialog:
        /// neither `claude mcp get` nor `claude -p` give it to a server). Returns once
        /// `until` was written (or after 30 s).
        fn session(&self, until: &Path) {
            let cj = self.w.claude_json();
            let mut doc: Value = serde_json::from_str(&fs::read_to_string(&cj).unwrap()).unwrap();
            doc["hasCompletedOnboarding"] = json!(true);
            doc["theme"] = json!("dark");
            doc["customApiKeyResponses"] =
                json!({"approved": [&KEY[KEY.len() - 20..]], "rejected": []});
            let work = self.w.root().join("work").display().to_string();
            doc["projects"][work.as_str()] = json!({
                "hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true,
                "allowedTools": [], "mcpContextUris": [], "mcpServers": {},
                "enabledMcpjsonServers": [], "disabledMcpjsonServers": []});
            fs::write(&cj, doc.to_string()).unwrap();
            let run = self.w.root().join("session.sh");
            write_exec(&run, SESSION);
            let line = format!(
                "{} {} {}",
                run.display(),
                self.claude.display(),
                until.display()
            );
            let c = self
                .w
                .program(system_tool("script"))
                .args(["-qfec", &line, "/dev/null"])
                .env("TERM", "xterm")
                .env("ANTHROPIC_API_KEY", KEY)
                .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
                .env("MCP_TIMEOUT", "5000");
            self.wrap(c).run();
        }
    }

    fn claude_of(release: &str) -> PathBuf {
        match release {
            "pinned" => real_claude(),
            v => compat_client("claude", v),
        }
    }

    /// Does `release` obey `deniedMcpServers` / `allowedMcpServers`? 2.0.0 has neither key
    /// (its cli.js never names them); 2.0.77 on has both.
    fn has_mcp_policy(release: &str) -> bool {
        release != "2.0.0"
    }

    fn recorded(out: &Path) -> Option<Value> {
        let text = fs::read_to_string(out).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// settings `env` reaches the server a session starts, on every release.
    pub(super) fn settings_env(release: &str) {
        let r = Row::install_with(Etc::Host, claude_of(release));
        let s = r.user_settings(&json!({"env": {"NODE_OPTIONS": "--require /tmp/evil.js"}}));
        let out = r.add_oracle("oracle");
        r.session(&out);
        let seen = recorded(&out).expect("setup error: the session did not start the oracle");
        assert_eq!(seen["env"]["NODE_OPTIONS"], "--require /tmp/evil.js");
        r.fails(&[&format!("{} env", s.display()), "env.NODE_OPTIONS"]);
    }

    /// A session with `settings` in the user settings: whether it starts the `oracle` server
    /// (the `witness` server, which no rule touches, shows the session started its servers).
    fn oracle_runs_with(r: &Row, settings: &Value) -> bool {
        let witness = r.add_oracle("witness");
        let out = r.add_oracle("oracle");
        r.user_settings(settings);
        r.session(&witness);
        assert!(
            recorded(&witness).is_some(),
            "setup error: the session started no server"
        );
        recorded(&out).is_some()
    }

    /// `deniedMcpServers` by name: every release from 2.0.77 drops the name; 2.0.0 runs it
    /// (no such key), where mcp-deploy fails a state that release runs as registered.
    pub(super) fn denied_by_name(release: &str) {
        let r = Row::install_with(Etc::Host, claude_of(release));
        let runs = oracle_runs_with(
            &r,
            &json!({"deniedMcpServers": [{"serverName": "oracle"}, {"serverName": NAME}]}),
        );
        assert_eq!(runs, !has_mcp_policy(release), "claude {release}");
        let s = r.config_dir_settings();
        r.fails(&[&format!("{} deniedMcpServers", s.display())]);
    }

    /// `allowedMcpServers` without the name: as `deniedMcpServers`.
    pub(super) fn allow_list(release: &str) {
        let r = Row::install_with(Etc::Host, claude_of(release));
        let runs = oracle_runs_with(
            &r,
            &json!({"allowedMcpServers": [{"serverName": "witness"}]}),
        );
        assert_eq!(runs, !has_mcp_policy(release), "claude {release}");
        let s = r.config_dir_settings();
        r.fails(&[&format!("{} allowedMcpServers", s.display())]);
    }

    /// `/etc/claude-code/managed-mcp.json` takes exclusive control of a session on every
    /// release (2.0.0's `claude mcp get` still shows a user server beside it: its session
    /// does not start it).
    pub(super) fn managed_mcp_json(release: &str) {
        let r = Row::install_with(Etc::Private, claude_of(release));
        let out = r.add_oracle("oracle");
        let script = r.w.root().join("oracle.py");
        let witness = r.w.root().join("witness.json");
        r.managed(
            "managed-mcp.json",
            &json!({"mcpServers": {"witness": {"command": script, "env": {"ORACLE_OUT": witness}}}})
                .to_string(),
        );
        r.session(&witness);
        assert!(
            recorded(&witness).is_some(),
            "setup error: the session did not start the managed server"
        );
        assert!(
            recorded(&out).is_none(),
            "claude {release} ran a user server"
        );
        r.fails(&["/etc/claude-code/managed-mcp.json", "only its servers"]);
    }

    macro_rules! releases {
        ($($m:ident: $v:expr),* $(,)?) => {$(
            mod $m {
                #[test]
                fn settings_env_reaches_the_server() {
                    super::settings_env($v)
                }
                #[test]
                fn denied_by_name_drops_it() {
                    super::denied_by_name($v)
                }
                #[test]
                fn allow_list_without_the_name_drops_it() {
                    super::allow_list($v)
                }
                #[test]
                fn managed_mcp_json_takes_exclusive_control() {
                    super::managed_mcp_json($v)
                }
            }
        )*};
    }

    releases!(v2_0_0: "2.0.0", v2_1_100: "2.1.100", pinned: "pinned");
}
