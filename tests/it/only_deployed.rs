//! Issue 25, item 2: `verify-identity --only-deployed` passes only when the agent can load the
//! declared servers and nothing else. A hand-added server fails it, naming its file; a
//! managed policy that keeps it out makes it pass, named as the evidence, and the real client
//! agrees that it does not load it. Every `/etc` file is written inside a private mount
//! namespace ([`Cmd::in_private_etc`]); mcp-deploy and the client both run in it.

use std::fs;

use serde_json::Value;

use crate::harness::*;

/// `verify-identity` of the sample servers SERVERS (`--root opt`, `-test` names) in CLIENT,
/// `EXTRA` appended, in the private `/etc`.
fn verify<'w>(w: &'w World, client: &str, servers: &[&str], extra: &[&str]) -> Cmd<'w> {
    verify_as(w, client, servers, "json", extra)
}

/// [`verify`] with its report in `format`.
fn verify_as<'w>(
    w: &'w World,
    client: &str,
    servers: &[&str],
    format: &str,
    extra: &[&str],
) -> Cmd<'w> {
    let mut cmd = w
        .cmd()
        .args(["verify-identity", "--root"])
        .arg(w.opt())
        .args(["--name-suffix", "-test"]);
    for s in servers {
        let sha = if *s == "codetools" { CT_SHA } else { OR_SHA };
        cmd = cmd
            .args(["--server", s, "--expect-commit"])
            .arg(format!("{s}={sha}"));
    }
    cmd.arg("--mcp-json")
        .arg(w.registered())
        .args(["--client", client, "--format", format])
        .args(extra)
        .in_private_etc()
}

const BOTH: &[&str] = &["codetools", "orchestrata"];

/// The `only-deployed` row's detail (the one check of the "other servers" report).
fn only_deployed(r: &Run) -> (bool, String) {
    let doc = r.json();
    let row = doc["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["checks"].as_array().unwrap().iter())
        .find(|c| c["check"] == "only-deployed")
        .unwrap_or_else(|| panic!("no only-deployed check:\n{}", r.shown))
        .clone();
    (
        row["ok"].as_bool().unwrap(),
        row["detail"].as_str().unwrap().to_string(),
    )
}

/// The sample (both servers, `-test`) installed in `client` alone, the real CLI of every
/// client on PATH.
fn installed_in(client: &str) -> World {
    let w = World::with_every_client();
    w.sample();
    w.on_sample("install", &["--client", client]).code(0);
    w
}

/// `--only-deployed` in `client` exits 1, and the `only-deployed` detail holds `want`.
fn fails_naming(w: &World, client: &str, want: &str) -> Run {
    let r = verify(w, client, BOTH, &["--only-deployed"]).run();
    r.code(1);
    let (ok, detail) = only_deployed(&r);
    assert!(
        !ok && detail.contains(want),
        "{want:?} missing from: {detail}"
    );
    r
}

/// The other checks all pass: only `only-deployed` decides the verdict.
fn others_pass(r: &Run) {
    for (check, ok) in r.checks() {
        if check != "only-deployed" {
            assert!(ok, "{check} failed:\n{}", r.shown);
        }
    }
}

#[test]
fn a_hand_added_claude_server_fails_only_deployed_and_the_managed_policy_keeps_it_out() {
    let w = World::claude_sample_with_a_hand_added_server();
    let r = verify(&w, "claude", BOTH, &["--only-deployed"]).run();
    r.code(1);
    others_pass(&r);
    let (ok, detail) = only_deployed(&r);
    assert!(!ok);
    let file = w.claude_json().display().to_string();
    assert!(
        detail.contains(&format!(
            "handadded in {file} (claude, user scope) can be loaded"
        )),
        "{detail}"
    );

    w.sample_cmd("policy")
        .args(["--write"])
        .in_private_etc()
        .run()
        .code(0);
    let r = verify(&w, "claude", BOTH, &["--only-deployed"]).run();
    r.code(0);
    let (ok, detail) = only_deployed(&r);
    assert!(ok);
    assert!(
        detail.contains(&format!(
            "handadded in {file} (claude, user scope) is kept out by \
             /etc/claude-code/managed-settings.json allowedMcpServers"
        )),
        "{detail}"
    );
    assert!(
        detail.contains(
            "a stdio server added later is kept out by /etc/claude-code/managed-settings.json"
        ),
        "{detail}"
    );
    // The real claude agrees: under the same /etc it does not list handadded.
    let listed = w.claude_listed();
    assert!(listed.contains(&"codetools-test".to_string()), "{listed:?}");
    assert!(!listed.contains(&"handadded".to_string()), "{listed:?}");
}

#[test]
fn without_the_flag_a_hand_added_server_does_not_fail_verify_identity() {
    let w = World::claude_sample_with_a_hand_added_server();
    let r = verify(&w, "claude", BOTH, &[]).run();
    r.code(0);
    assert!(!r.said().contains("only-deployed"), "{}", r.shown);
}

#[test]
fn only_the_declared_servers_and_no_policy_passes_saying_a_later_server_would_run() {
    let w = installed_in("claude");
    let r = verify(&w, "claude", BOTH, &["--only-deployed"]).run();
    r.code(0);
    let (ok, detail) = only_deployed(&r);
    assert!(ok);
    assert!(
        detail.contains("no other server; no policy: a stdio server added later would run"),
        "{detail}"
    );
}

#[test]
fn a_project_mcp_json_server_in_the_working_directory_fails_only_deployed() {
    let w = installed_in("claude");
    let project = w.write(
        "work/.mcp.json",
        r#"{"mcpServers": {"fromproject": {"command": "/bin/cat"}}}"#,
    );
    fails_naming(
        &w,
        "claude",
        &format!(
            "fromproject in {} (claude, project scope) can be loaded",
            project.display()
        ),
    );
    // The real claude sees it from there too.
    let listed = w.claude_listed();
    assert!(listed.contains(&"fromproject".to_string()), "{listed:?}");
}

#[test]
fn an_unreadable_mcp_json_fails_only_deployed() {
    let w = installed_in("claude");
    let fifo = w.root().join("work/.mcp.json");
    let made = std::process::Command::new(system_tool("mkfifo"))
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    fails_naming(
        &w,
        "claude",
        &format!("{} (claude, project scope): ", fifo.display()),
    )
    .stdout_has("cannot be read");
}

/// The sample installed in codex only, and `handadded` added by hand with the real codex.
fn codex_with_a_hand_added_server() -> World {
    let w = installed_in("codex");
    w.program(real_client("codex"))
        .args(["mcp", "add", "handadded", "--", "/bin/cat"])
        .run()
        .code(0);
    w
}

/// What the real codex says of `name` under the private `/etc` (`codex mcp get --json`).
fn codex_entry(w: &World, name: &str) -> Value {
    let r = w
        .program(real_client("codex"))
        .args(["mcp", "get", name, "--json"])
        .in_private_etc()
        .run();
    r.code(0);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.shown))
}

#[test]
fn a_hand_added_codex_server_fails_only_deployed_and_a_requirements_allowlist_keeps_it_out() {
    let w = codex_with_a_hand_added_server();
    let r = verify(&w, "codex", BOTH, &["--only-deployed"]).run();
    r.code(1);
    others_pass(&r);
    let (_, detail) = only_deployed(&r);
    let file = w.root().join("home/.codex/config.toml");
    assert!(
        detail.contains(&format!(
            "handadded in {} (codex, user) can be loaded",
            file.display()
        )),
        "{detail}"
    );
    assert_eq!(codex_entry(&w, "handadded")["enabled"], true);

    // The allowlist names the declared servers by their stable command paths, as codex
    // itself reports them.
    let mut req = String::new();
    for name in ["codetools-test", "orchestrata-test"] {
        let e = codex_entry(&w, name);
        let command = e["transport"]["command"]
            .as_str()
            .or_else(|| e["command"].as_str())
            .unwrap_or_else(|| panic!("no command in {e}"));
        assert!(!command.contains("releases/"), "{command}");
        req.push_str(&format!(
            "[mcp_servers.{name}.identity]\ncommand = {}\n",
            Value::from(command)
        ));
    }
    let f = w.etc().join("codex/requirements.toml");
    fs::create_dir_all(f.parent().unwrap()).unwrap();
    fs::write(&f, req).unwrap();

    let r = verify(&w, "codex", BOTH, &["--only-deployed"]).run();
    r.code(0);
    let (ok, detail) = only_deployed(&r);
    assert!(ok);
    assert!(
        detail.contains(&format!(
            "handadded in {} (codex, user) is kept out by /etc/codex/requirements.toml [mcp_servers]",
            file.display()
        )),
        "{detail}"
    );
    // The real codex agrees: it disables handadded, and keeps ours.
    let e = codex_entry(&w, "handadded");
    assert_eq!(e["enabled"], false, "{e}");
    assert!(
        e["disabled_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("requirements"),
        "{e}"
    );
    assert_eq!(codex_entry(&w, "codetools-test")["enabled"], true);
}

/// A policy that applies in one project only (the working directory's `.claude/settings.json`
/// denying the server) keeps it out there and nowhere else: the check still fails, and the
/// real claude still loads it from another directory.
#[test]
fn a_project_deny_list_does_not_keep_a_hand_added_server_out() {
    let w = World::claude_sample_with_a_hand_added_server();
    w.write(
        "work/.claude/settings.json",
        r#"{"deniedMcpServers": [{"serverName": "handadded"}]}"#,
    );
    fails_naming(&w, "claude", "(claude, user scope) can be loaded");
    // In the working directory the real claude obeys the deny; from another it loads it.
    let here = w.claude_listed();
    assert!(!here.contains(&"handadded".to_string()), "{here:?}");
    let elsewhere = w.root().join("home");
    let r = w
        .program(real_claude())
        .args(["mcp", "list"])
        .env("MCP_TIMEOUT", "3000")
        .current_dir(&elsewhere)
        .run();
    r.code(0).stdout_has("handadded: /bin/cat");
}

/// A project named in `.claude.json` through `..` (`/etc/../<home>/p`) is still the user's
/// project: its deny list does not keep a server out everywhere, though its path begins with
/// `/etc` (the source is judged by components, `..` refused).
#[test]
fn a_project_deny_list_named_through_etc_dot_dot_does_not_pass_as_a_managed_file() {
    let w = World::claude_sample_with_a_hand_added_server();
    w.write(
        "p/.claude/settings.json",
        r#"{"deniedMcpServers": [{"serverName": "handadded"}]}"#,
    );
    let dotted = format!("/etc/..{}", w.root().join("p").display());
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(w.claude_json()).unwrap()).unwrap();
    doc["projects"][&dotted] = serde_json::json!({});
    std::fs::write(w.claude_json(), doc.to_string()).unwrap();
    fails_naming(&w, "claude", "(claude, user scope) can be loaded");
}

/// A server that only a codex profile file adds (`$CODEX_HOME/p.config.toml`, loaded with
/// `codex --profile p`) fails it, naming the profile.
#[test]
fn a_server_in_a_codex_profile_fails_only_deployed() {
    let w = installed_in("codex");
    let profile = w.write(
        "home/.codex/p.config.toml",
        "[mcp_servers.fromprofile]\ncommand = \"/bin/cat\"\n",
    );
    let got = w
        .program(real_client("codex"))
        .args(["--profile", "p", "mcp", "get", "fromprofile", "--json"])
        .run();
    got.code(0);
    fails_naming(
        &w,
        "codex",
        &format!(
            "fromprofile in {} (codex, profile p (codex --profile p)) can be loaded",
            profile.display()
        ),
    );
}

/// Write `text` at `/etc/PATH` of the world's private `/etc`.
fn etc_file(w: &World, path: &str, text: &str) {
    let f = w.etc().join(path);
    fs::create_dir_all(f.parent().unwrap()).unwrap();
    fs::write(f, text).unwrap();
}

/// A server the organization delivers in `managed-mcp.json` is admitted by claude without an
/// `allowedMcpServers` entry: a managed allowlist leaving it out does not keep it out (claude
/// still lists it), a managed `deniedMcpServers` does.
#[test]
fn a_managed_mcp_json_server_is_kept_out_by_a_deny_list_and_not_by_an_allowlist() {
    let w = installed_in("claude");
    etc_file(
        &w,
        "claude-code/managed-mcp.json",
        r#"{"mcpServers": {"mgd": {"command": "/bin/cat"}}}"#,
    );
    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"allowedMcpServers": [{"serverName": "codetools-test"}]}"#,
    );
    fails_naming(
        &w,
        "claude",
        "mgd in /etc/claude-code/managed-mcp.json (claude, managed scope) can be loaded",
    );
    assert!(w.claude_listed().contains(&"mgd".to_string()));

    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"deniedMcpServers": [{"serverName": "mgd"}]}"#,
    );
    let r = verify(&w, "claude", BOTH, &["--only-deployed"]).run();
    let (ok, detail) = only_deployed(&r);
    assert!(ok, "{detail}");
    assert!(
        detail.contains(
            "mgd in /etc/claude-code/managed-mcp.json (claude, managed scope) is kept out by \
             /etc/claude-code/managed-settings.json deniedMcpServers"
        ),
        "{detail}"
    );
    assert!(!w.claude_listed().contains(&"mgd".to_string()));
}

/// `managedMcpServers` in the managed settings delivers a server to every user: it fails the
/// check, naming the file, and the real claude lists it.
#[test]
fn a_server_in_managed_settings_managed_mcp_servers_fails_only_deployed() {
    let w = installed_in("claude");
    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"managedMcpServers": {"orgsrv": {"type": "http", "url": "https://example.invalid/mcp"}}}"#,
    );
    let r = fails_naming(
        &w,
        "claude",
        "orgsrv in /etc/claude-code/managed-settings.json (claude, managed settings \
             managedMcpServers) can be loaded",
    );
    others_pass(&r);
    assert!(w.claude_listed().contains(&"orgsrv".to_string()));
}

/// A gemini extension's servers (`~/.gemini/extensions/NAME/gemini-extension.json`) fail it,
/// naming the extension; the real gemini lists the server as the extension's (on stderr).
#[test]
fn a_server_of_a_gemini_extension_fails_only_deployed() {
    let w = installed_in("gemini");
    let manifest = w.write(
        "home/.gemini/extensions/ext1/gemini-extension.json",
        r#"{"name": "ext1", "version": "1.0.0", "mcpServers": {"extsrv": {"command": "/bin/cat"}}}"#,
    );
    let r = fails_naming(
        &w,
        "gemini",
        &format!(
            "extsrv in {} (gemini, extension ext1) can be loaded",
            manifest.display()
        ),
    );
    others_pass(&r);
    w.program(real_client("gemini"))
        .args(["mcp", "list"])
        .run()
        .code(0)
        .stderr_has("extsrv (from ext1)");
}

/// claude's plugins can bring servers mcp-deploy does not read: a plugins directory in
/// claude's config dir fails it, naming the directory.
#[test]
fn a_claude_plugins_directory_fails_only_deployed() {
    let w = installed_in("claude");
    let plugins = w.config_dir().join("plugins");
    fs::create_dir_all(&plugins).unwrap();
    fails_naming(
        &w,
        "claude",
        &format!("{} (claude, plugins)", plugins.display()),
    );
}

/// A claude logged in with a claude.ai account connects that account's connectors, which
/// mcp-deploy cannot see: it fails, until the managed settings turn them off
/// (`disableClaudeAiConnectors`).
#[test]
fn a_claude_ai_login_fails_only_deployed_unless_managed_settings_disable_its_connectors() {
    let w = installed_in("claude");
    let credentials = w.config_dir().join(".credentials.json");
    fs::write(&credentials, "{}").unwrap();
    fails_naming(
        &w,
        "claude",
        &format!("{} (claude, claude.ai connectors)", credentials.display()),
    );
    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"disableClaudeAiConnectors": true}"#,
    );
    let r = verify(&w, "claude", BOTH, &["--only-deployed"]).run();
    r.code(0);
}

/// A claude agent definition whose frontmatter names `mcpServers` gives that agent servers of
/// its own, which mcp-deploy does not read: it fails, naming the file; one without passes.
#[test]
fn a_claude_agent_with_its_own_mcp_servers_fails_only_deployed() {
    let w = installed_in("claude");
    w.write(
        "claude/agents/plain.md",
        "---\nname: plain\ndescription: reviews\n---\nReview the diff.\n",
    );
    verify(&w, "claude", BOTH, &["--only-deployed"])
        .run()
        .code(0);
    let agent = w.write(
        "work/.claude/agents/helper.md",
        "---\nname: helper\ndescription: helps\nmcpServers:\n  - extra:\n      command: /bin/cat\n---\nHelp.\n",
    );
    fails_naming(
        &w,
        "claude",
        &format!("{} (claude, agent frontmatter)", agent.display()),
    );
}

/// A managed `allowedMcpServers` without `allowManagedMcpServersOnly` does not keep a server
/// out everywhere: claude merges the list with a project's, and a project whose settings list
/// the server admits it there (the real claude lists it from that directory).
#[test]
fn a_managed_allowlist_without_managed_only_does_not_keep_a_server_out() {
    let w = World::claude_sample_with_a_hand_added_server();
    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"allowedMcpServers": [{"serverName": "codetools-test"}, {"serverName": "orchestrata-test"}]}"#,
    );
    assert!(!w.claude_listed().contains(&"handadded".to_string()));
    fails_naming(&w, "claude", "handadded in ");
    let project = w.root().join("elsewhere");
    w.write(
        "elsewhere/.claude/settings.json",
        r#"{"allowedMcpServers": [{"serverName": "handadded"}]}"#,
    );
    let r = w
        .program(real_claude())
        .args(["mcp", "list"])
        .env("MCP_TIMEOUT", "3000")
        .current_dir(&project)
        .in_private_etc()
        .run();
    r.code(0).stdout_has("handadded: /bin/cat");

    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"allowManagedMcpServersOnly": true, "allowedMcpServers": [{"serverName": "codetools-test"}, {"serverName": "orchestrata-test"}]}"#,
    );
    let r = verify(&w, "claude", BOTH, &["--only-deployed"]).run();
    r.code(0);
}

/// A project's `.mcp.json` comes with the repository someone cloned: the server names in it
/// are anyone's. One named with a terminal escape and a newline cleared the screen and printed
/// a line of its own ("  ok only-deployed ...") in the human report; the detail is now shown
/// escaped, and the JSON keeps the name as it is.
#[test]
fn a_project_server_named_with_escapes_cannot_forge_the_human_report() {
    let w = installed_in("claude");
    let name = "evil\u{1b}[2J\n  ok only-deployed      no other server";
    w.write(
        "work/.mcp.json",
        serde_json::json!({"mcpServers": {name: {"command": "/bin/cat"}}}).to_string(),
    );
    let (ok, detail) = only_deployed(&verify(&w, "claude", BOTH, &["--only-deployed"]).run());
    assert!(!ok && detail.contains(name), "{detail}");
    let r = verify_as(&w, "claude", BOTH, "human", &["--only-deployed"]).run();
    // The name escaped (its spaces as the report's wrapping at 100 columns left them: the
    // words, each once, in order), no escape byte, and no line of its own.
    r.code(1).stdout_has("evil\\u{1b}[2J\\n");
    let said = r.said();
    let words: Vec<&str> = said.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.ends_with("evil\\u{1b}[2J\\n"))
        .unwrap_or_else(|| panic!("{}", r.shown));
    assert_eq!(
        words[at + 1..at + 5],
        ["ok", "only-deployed", "no", "other"],
        "{}",
        r.shown
    );
    assert!(!r.said().contains('\u{1b}'), "{}", r.shown);
    assert!(
        !r.stdout
            .lines()
            .any(|l| l.starts_with("  ok only-deployed")),
        "{}",
        r.shown
    );
}

/// Issue 35, items 1 and 9: keep-out evidence the release on the host does not honour. A
/// managed deny beside one key of a type claude does not take (`"model": 5`): claude 2.1.332
/// still applies the deny, 2.1.100 drops the whole file and loads the denied server. Before,
/// `--only-deployed` counted the deny on every release and passed under 2.1.100 (the release
/// on PATH was never asked); now the deny counts only from claude 2.1.284 on, the release
/// found without starting it.
#[test]
fn a_managed_deny_keeps_nothing_out_where_the_release_may_drop_its_file() {
    let w = World::claude_sample_with_a_hand_added_server();
    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"deniedMcpServers": [{"serverName": "handadded"}], "model": 5}"#,
    );
    // The pinned release applies it, and the deny keeps handadded out.
    assert!(!w.claude_listed().contains(&"handadded".to_string()));
    let r = verify(&w, "claude", BOTH, &["--only-deployed"]).run();
    r.code(0);
    let (ok, detail) = only_deployed(&r);
    assert!(
        ok && detail
            .contains("is kept out by /etc/claude-code/managed-settings.json deniedMcpServers"),
        "{detail}"
    );

    // The host's claude is 2.1.100: it drops the file and loads handadded.
    claude_release_lists_handadded(&w, "2.1.100");
    let r = fails_naming(
        &w,
        "claude",
        "/etc/claude-code/managed-settings.json deniedMcpServers does not count for certain: \
         claude 2.1.100",
    );
    others_pass(&r);
}

/// The next instance of the class: claude 2.0.0 obeys no list at all (its cli.js never names
/// `deniedMcpServers`): a plain managed deny keeps nothing out there either.
#[test]
fn a_managed_deny_keeps_nothing_out_under_a_release_without_lists() {
    let w = World::claude_sample_with_a_hand_added_server();
    etc_file(
        &w,
        "claude-code/managed-settings.json",
        r#"{"deniedMcpServers": [{"serverName": "handadded"}]}"#,
    );
    claude_release_lists_handadded(&w, "2.0.0");
    fails_naming(&w, "claude", "does not count for certain: claude 2.0.0");
}

/// Make claude `release` (of the compat cache) the one on the world's PATH, and confirm that
/// under the private `/etc` it lists (so loads) `handadded`.
fn claude_release_lists_handadded(w: &World, release: &str) {
    let old = compat_client("claude", release);
    fs::remove_file(w.bin().join("claude")).unwrap();
    std::os::unix::fs::symlink(&old, w.bin().join("claude")).unwrap();
    let listed = w
        .program(&old)
        .args(["mcp", "list"])
        .env("MCP_TIMEOUT", "3000")
        .in_private_etc()
        .run();
    listed.code(0);
    assert!(listed.stdout.contains("handadded: "), "{}", listed.shown);
}

/// Issue 35, item 9, codex: `enabled = false` for a hand-added server in the managed
/// `/etc/codex/managed_config.toml` keeps it out under the pinned codex (which disables it),
/// and under 0.100.0; codex 0.45.0 does not know `enabled` and starts it (its `mcp list
/// --json` lists it with no `enabled` at all, and 0.47.0 is the first to obey the key).
/// `--only-deployed` counted the switch on every release before.
#[test]
fn a_managed_enabled_false_keeps_nothing_out_under_codex_before_0_47() {
    let w = codex_with_a_hand_added_server();
    etc_file(
        &w,
        "codex/managed_config.toml",
        "[mcp_servers.handadded]\ncommand = \"/bin/cat\"\nenabled = false\n",
    );
    assert_eq!(codex_entry(&w, "handadded")["enabled"], false);
    let r = verify(&w, "codex", BOTH, &["--only-deployed"]).run();
    r.code(0);
    let (ok, detail) = only_deployed(&r);
    assert!(
        ok && detail.contains("kept out by /etc/codex/managed_config.toml"),
        "{detail}"
    );
    codex_release(&w, "0.100.0");
    verify(&w, "codex", BOTH, &["--only-deployed"])
        .run()
        .code(0);

    let listed = codex_release(&w, "0.45.0");
    let handadded = listed.iter().find(|s| s["name"] == "handadded");
    assert!(
        handadded.is_some_and(|s| s.get("enabled").is_none()),
        "{listed:?}"
    );
    let r = fails_naming(
        &w,
        "codex",
        "/etc/codex/managed_config.toml [mcp_servers.handadded] enabled does not count for \
         certain: codex 0.45.0 may not apply it: the first release known to obey `enabled = \
         false` is 0.47.0",
    );
    others_pass(&r);
}

/// The next instance: the requirements allowlist that keeps a hand-added server out under the
/// pinned codex (`a_hand_added_codex_server_fails_only_deployed_...`) is not read by 0.45.0,
/// which lists the server as it is (0.87.0 is the first to apply it).
#[test]
fn a_requirements_allowlist_keeps_nothing_out_under_codex_before_0_87() {
    let w = codex_with_a_hand_added_server();
    etc_file(
        &w,
        "codex/requirements.toml",
        "[mcp_servers.other.identity]\ncommand = \"/bin/true\"\n",
    );
    assert_eq!(codex_entry(&w, "handadded")["enabled"], false);
    let listed = codex_release(&w, "0.45.0");
    assert!(
        listed.iter().any(|s| s["name"] == "handadded"),
        "{listed:?}"
    );
    fails_naming(
        &w,
        "codex",
        "does not count for certain: codex 0.45.0 may not apply it: the first release known \
         to apply requirements.toml's allowlist is 0.87.0",
    );
}

/// Make codex `release` (of the compat cache) the one on the world's PATH: what it lists
/// under the private `/etc` (`codex mcp list --json`).
fn codex_release(w: &World, release: &str) -> Vec<Value> {
    let old = compat_client("codex", release);
    fs::remove_file(w.bin().join("codex")).unwrap();
    std::os::unix::fs::symlink(&old, w.bin().join("codex")).unwrap();
    let listed = w
        .program(&old)
        .args(["mcp", "list", "--json"])
        .in_private_etc()
        .run();
    listed.code(0);
    let json = &listed.stdout[listed.stdout.find('[').unwrap_or(0)..];
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}\n{}", listed.shown))
}

/// Issue 35, item 8: a claude plugin that brings a server of our very name. Found in claude's
/// code (2.1.332: `plugin:${plugin}:${server}`) and seen with the real claude, offline, a local
/// marketplace added and its plugin installed: claude runs the plugin's server as
/// `plugin:p1:codetools-test`, beside ours, which stays the user entry — so verify-identity
/// passes ours, and `--only-deployed` fails on the plugins directory (the plugin's server is
/// one more that can run).
#[test]
fn a_claude_plugin_server_of_our_name_runs_beside_ours_and_fails_only_deployed() {
    let w = installed_in("claude");
    let market = w.root().join("market");
    let plugin = serde_json::json!({"name": "p1", "version": "1.0.0", "mcpServers": {
        "codetools-test": {"command": "/bin/cat", "args": ["plugin"]}}});
    w.write("market/p1/.claude-plugin/plugin.json", plugin.to_string());
    w.write(
        "market/.claude-plugin/marketplace.json",
        r#"{"name": "mk", "owner": {"name": "t"}, "plugins": [{"name": "p1", "source": "./p1"}]}"#,
    );
    w.claude(&["plugin", "marketplace", "add", market.to_str().unwrap()])
        .code(0);
    w.claude(&["plugin", "install", "p1@mk"]).code(0);
    let listed = w.claude_listed();
    for name in ["plugin:p1:codetools-test", "codetools-test"] {
        assert!(listed.contains(&name.to_string()), "{name}: {listed:?}");
    }
    verify(&w, "claude", BOTH, &[]).run().code(0);
    let plugins = w.config_dir().join("plugins");
    let r = fails_naming(
        &w,
        "claude",
        &format!("{} (claude, plugins)", plugins.display()),
    );
    others_pass(&r);
}
