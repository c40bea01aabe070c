//! VS Code (`--client vscode`): mcp-deploy writes VS Code's user `mcp.json` itself. No real
//! VS Code runs here (none can be installed): these tests pin what mcp-deploy does with the
//! file, the shadows and the layers, each read from VS Code's own source (docs/clients.md).
//! Files under `/etc` are written only inside a private mount namespace.

use std::fs;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::*;

const NAME: &str = "codetools-test";

/// A user file as VS Code's "MCP: Add Server" leaves it (tabs, `inputs`), with a comment and
/// a server of the user's own that uses an input.
const USER_JSON: &str = r#"{
	// my servers; the key is prompted once
	"servers": {
		"perplexity": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "server-perplexity-ask"],
			"env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}
		}
	},
	"inputs": [
		{"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}
	]
}
"#;

fn user_dir(w: &World) -> PathBuf {
    w.root().join("home/.config/Code/User")
}

fn config(w: &World) -> PathBuf {
    user_dir(w).join("mcp.json")
}

fn mtime(p: &std::path::Path) -> std::time::SystemTime {
    fs::metadata(p).unwrap().modified().unwrap()
}

fn verify(w: &World, extra: &[&str]) -> Run {
    let prefix = w.opt().join("codetools");
    let mut args = vec!["--name", NAME, "--client", "vscode", "--json"];
    args.extend_from_slice(extra);
    w.verify_identity(&prefix, CT_SHA, &w.registered(), &args)
}

/// A world with the sample deployment and codetools installed for VS Code alone.
fn installed() -> World {
    let w = World::new();
    w.sample();
    w.on_sample("install", &["--client", "vscode", "--server", "codetools"])
        .code(0);
    verify(&w, &[]).code(0);
    w
}

#[test]
fn vscode_install_rerun_verify_status_and_uninstall_keep_inputs_comments_and_every_byte() {
    let w = World::new();
    w.sample();
    fs::create_dir_all(user_dir(&w)).unwrap();
    fs::write(config(&w), USER_JSON).unwrap();
    let r = w.on_sample("install", &["--client", "vscode", "--json"]);
    r.code(0);
    let servers = r.json()["servers"].as_array().unwrap().clone();
    assert_eq!(servers.len(), 2, "{}", r.shown);
    for s in &servers {
        assert_eq!(s["registration"], "added", "{}", r.shown);
    }
    let ct = w.opt().join("codetools/bin/codetools");
    let ct = ct.to_str().unwrap();

    // VS Code's form, and everything else as it was.
    let text = fs::read_to_string(config(&w)).unwrap();
    for kept in [
        "// my servers; the key is prompted once",
        "\"PERPLEXITY_API_KEY\": \"${input:perplexity-key}\"",
        "{\"type\": \"promptString\", \"id\": \"perplexity-key\"",
    ] {
        assert!(text.contains(kept), "{text}");
    }
    let doc: Value =
        serde_json::from_str(&text.replace("\t// my servers; the key is prompted once\n", ""))
            .unwrap();
    assert_eq!(
        doc["servers"][NAME],
        json!({"type": "stdio", "command": ct, "args": ["mcp", "serve"]})
    );
    assert_eq!(doc["inputs"].as_array().unwrap().len(), 1);

    // Recorded under clients.vscode.
    let flat: Value = serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert_eq!(
        flat["clients"]["vscode"]["mcpServers"][NAME]["command"],
        json!(ct),
        "{flat}"
    );

    // A re-run changes nothing: no write, same bytes, same mtime.
    let before = (mtime(&config(&w)), fs::read(config(&w)).unwrap());
    let r = w.on_sample("install", &["--client", "vscode", "--json"]);
    r.code(0);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged", "{}", r.shown);
    }
    assert_eq!((mtime(&config(&w)), fs::read(config(&w)).unwrap()), before);

    // verify-identity reads the live file; status with --client too.
    let r = verify(&w, &[]);
    r.code(0);
    assert_eq!(r.json()["servers"][0]["client"], "vscode", "{}", r.shown);
    w.on_sample("status", &["--client", "vscode"]).code(0);

    // Uninstall gives back the very bytes.
    w.on_sample("uninstall", &["--client", "vscode"]).code(0);
    assert_eq!(fs::read_to_string(config(&w)).unwrap(), USER_JSON);
}

#[test]
fn a_missing_vscode_file_is_created_as_vscode_writes_it_and_is_private() {
    let w = installed();
    let text = fs::read_to_string(config(&w)).unwrap();
    assert!(text.starts_with("{\n\t\"servers\": {"), "{text}");
    assert!(text.contains("\"inputs\": []"), "{text}");
    let mode = fs::metadata(config(&w)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

use std::os::unix::fs::PermissionsExt;

#[test]
fn vscode_user_data_follows_xdg_config_home_vscode_appdata_and_vscode_portable() {
    for (var, rel, file) in [
        ("XDG_CONFIG_HOME", "xdg", "xdg/Code/User/mcp.json"),
        ("VSCODE_APPDATA", "appdata", "appdata/Code/User/mcp.json"),
        (
            "VSCODE_PORTABLE",
            "portable",
            "portable/user-data/User/mcp.json",
        ),
    ] {
        let w = World::new();
        w.sample();
        let dir = w.root().join(rel);
        let run = |cmd: &str| {
            w.sample_cmd(cmd)
                .args(["--client", "vscode", "--server", "codetools"])
                .env(var, &dir)
                .run()
        };
        run("install").code(0);
        let text = fs::read_to_string(w.root().join(file)).unwrap();
        assert!(text.contains(NAME), "{var}: {text}");
        assert!(!config(&w).exists(), "{var}");
        run("uninstall").code(0);
    }
}

#[test]
fn a_tampered_live_vscode_entry_fails_verify_identity() {
    for tamper in [
        Box::new(|e: &mut Value| e["env"] = json!({"NODE_OPTIONS": "-r evil"}))
            as Box<dyn Fn(&mut Value)>,
        Box::new(|e: &mut Value| e["envFile"] = json!("/tmp/evil.env")),
        Box::new(|e: &mut Value| e["cwd"] = json!("/tmp")),
        Box::new(|e: &mut Value| e["args"][0] = json!("${input:which}")),
        Box::new(|e: &mut Value| e["command"] = json!("${userHome}/evil")),
        Box::new(|e: &mut Value| e["type"] = json!("http")),
        Box::new(|e: &mut Value| e["dev"] = json!({"watch": "**"})),
    ] {
        let w = installed();
        let mut doc: Value =
            serde_json::from_str(&fs::read_to_string(config(&w)).unwrap()).unwrap();
        tamper(&mut doc["servers"][NAME]);
        fs::write(config(&w), doc.to_string()).unwrap();
        let r = verify(&w, &[]);
        r.code(1);
        assert!(
            r.checks()
                .contains(&("mcp-registration".to_string(), false)),
            "{}",
            r.shown
        );
    }
}

#[test]
fn same_name_vscode_servers_of_a_workspace_are_reported_as_shadowing() {
    let evil = json!({"command": "/tmp/evil"});
    for (rel, content) in [
        ("work/.vscode/mcp.json", json!({"servers": {NAME: evil}})),
        ("work/.mcp.json", json!({"mcpServers": {NAME: evil}})),
        ("work/.mcp.json", json!({NAME: evil})),
        (
            "work/team.code-workspace",
            json!({"folders": [], "settings": {"mcp": {"servers": {NAME: evil}}}}),
        ),
        (
            "home/.config/Code/User/settings.json",
            json!({"mcp": {"servers": {NAME: evil}}}),
        ),
    ] {
        let w = installed();
        let file = w.write(rel, content.to_string());
        // Install fails as verify-identity does (issue 35: one verdict; it warned before).
        w.on_sample("install", &["--client", "vscode", "--server", "codetools"])
            .code(1)
            .stdout_has(file.to_str().unwrap());
        let r = verify(&w, &[]);
        r.code(1).stdout_has(file.to_str().unwrap());
    }
}

/// `verify-identity` after `settings` went into the user settings.json: it fails
/// `mcp-registration` with `want` in its detail.
fn blocked_by_settings(settings: Value, want: &str) {
    let w = installed();
    w.write(
        "home/.config/Code/User/settings.json",
        format!("// mine\n{settings}"),
    );
    let r = verify(&w, &[]);
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(detail.contains(want), "{want}: {}", r.shown);
    assert!(detail.contains("settings.json"), "{}", r.shown);
}

#[test]
fn chat_mcp_access_none_or_registry_blocks_the_vscode_server() {
    blocked_by_settings(json!({"chat.mcp.access": "none"}), "starts no MCP server");
    blocked_by_settings(
        json!({"chat": {"mcp": {"access": "registry"}}}),
        "installed from the MCP registry",
    );
    blocked_by_settings(json!({"chat.mcp.enabled": false}), "switched off");
}

#[test]
fn a_vscode_deny_or_allow_list_that_leaves_the_server_out_blocks_it() {
    blocked_by_settings(
        json!({"chat.mcp.deniedServers": [{"serverName": NAME}]}),
        "a deny entry matches it",
    );
    blocked_by_settings(
        json!({"chat.mcp.allowedServers": [{"serverName": "other"}]}),
        "no entry of it matches it",
    );
    // An allow list naming it, by name or by its command, lets it run.
    for allow in [
        json!([{"serverName": NAME}]),
        json!([{"serverCommand": ["{CT}", "mcp", "serve"]}]),
    ] {
        let w = installed();
        let ct = w.opt().join("codetools/bin/codetools");
        let allow = allow.to_string().replace("{CT}", ct.to_str().unwrap());
        w.write(
            "home/.config/Code/User/settings.json",
            format!("{{\"chat.mcp.allowedServers\": {allow}}}"),
        );
        verify(&w, &[]).code(0);
    }
}

#[test]
fn a_discovered_same_name_server_of_another_application_is_reported() {
    let w = installed();
    w.write(
        "home/.cursor/mcp.json",
        json!({"mcpServers": {NAME: {"command": "/tmp/evil"}}}).to_string(),
    );
    // Discovery off (VS Code's default): Cursor's file is not VS Code's.
    verify(&w, &[]).code(0);
    w.write(
        "home/.config/Code/User/settings.json",
        json!({"chat.mcp.discovery.enabled": {"cursor-global": true}}).to_string(),
    );
    let r = verify(&w, &[]);
    r.code(1);
    assert!(
        r.detail("mcp-registration").contains(".cursor/mcp.json"),
        "{}",
        r.shown
    );
}

#[test]
fn a_vscode_profile_with_its_own_mcp_json_is_named_not_compared_and_fails() {
    let w = installed();
    w.write(
        "home/.config/Code/User/globalStorage/storage.json",
        json!({"userDataProfiles": [
            {"location": "-5a1b2c3d", "name": "Work"},
            {"location": "-6e7f8a9b", "name": "Shared", "useDefaultFlags": {"mcp": true}}
        ]})
        .to_string(),
    );
    // Which profile a window uses is not known here: a doubt, which fails with or without
    // --strict (issue 35: it was a note, exit 0).
    let r = verify(&w, &[]);
    r.code(1);
    assert!(
        r.shown.contains("profile \\\"Work\\\"") || r.shown.contains("profile \"Work\""),
        "{}",
        r.shown
    );
    assert!(
        r.shown.contains("profiles/-5a1b2c3d/mcp.json"),
        "{}",
        r.shown
    );
    assert!(!r.shown.contains("Shared"), "{}", r.shown);
    verify(&w, &["--strict"]).code(1);
}

#[test]
fn the_linux_policy_file_blocks_the_vscode_server_over_the_user_setting() {
    let w = installed();
    // The user allows everything; the policy turns MCP off, and wins.
    w.write(
        "home/.config/Code/User/settings.json",
        json!({"chat.mcp.access": "all"}).to_string(),
    );
    let prefix = w.opt().join("codetools");
    let registered = w.registered();
    let args = [
        "verify-identity",
        "--prefix",
        prefix.to_str().unwrap(),
        "--expect-commit",
        CT_SHA,
        "--mcp-json",
        registered.to_str().unwrap(),
        "--name",
        NAME,
        "--client",
        "vscode",
        "--json",
    ];
    for (policy, want) in [
        (json!({"ChatMCP": "none"}), "starts no MCP server"),
        (
            json!({"ChatDeniedMcpServers": format!("[{{\"serverName\":\"{NAME}\"}}]")}),
            "a deny entry matches it",
        ),
        (
            json!({"ChatAllowManagedMcpServersOnly": true}),
            "no entry of it matches it",
        ),
    ] {
        let r = w
            .in_private_etc(
                &[("/etc/vscode/policy.json", &policy.to_string())],
                env!("CARGO_BIN_EXE_mcp-deploy"),
                &args,
            )
            .run();
        r.code(1);
        let detail = r.detail("mcp-registration");
        assert!(detail.contains("/etc/vscode/policy.json"), "{}", r.shown);
        assert!(detail.contains(want), "{want}: {}", r.shown);
    }
    // VS Code reads its policy file with `JSON.parse`: one with a comment gives no policy at
    // all, so it blocks nothing, and is named as not compared.
    let commented = "// off for everyone\n{\"ChatMCP\": \"none\"}";
    let r = w
        .in_private_etc(
            &[("/etc/vscode/policy.json", commented)],
            env!("CARGO_BIN_EXE_mcp-deploy"),
            &args,
        )
        .run();
    r.code(0);
    assert!(r.shown.contains("applies none of it"), "{}", r.shown);
    // On the host, without the policy, it passes.
    verify(&w, &[]).code(0);
}

#[test]
fn a_failure_in_another_client_rolls_back_the_vscode_file() {
    let w = World::new();
    w.sample();
    fs::create_dir_all(user_dir(&w)).unwrap();
    fs::write(config(&w), USER_JSON).unwrap();
    // `cwd` is a key VS Code has and Cursor has not: VS Code's file is changed first, then
    // Cursor refuses, and VS Code's change is rolled back.
    let cfg = w.declare_codetools(json!({"cwd": "/srv"}));
    let r = w.on_sample(
        "install",
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--client",
            "vscode,cursor",
        ],
    );
    r.code(2)
        .stderr_has("Cursor has no key \"cwd\"")
        .stderr_has("every change was rolled back")
        // VS Code's file was changed, then put back.
        .stderr_has("codetools-test: removed again");
    assert_eq!(fs::read_to_string(config(&w)).unwrap(), USER_JSON);
    assert!(!w.registered().exists());
}

#[test]
fn a_secret_in_a_live_vscode_entry_is_never_printed() {
    let w = installed();
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(config(&w)).unwrap()).unwrap();
    doc["servers"][NAME]["env"] = json!({"API_TOKEN": "sk-hunter2-secret"});
    fs::write(config(&w), doc.to_string()).unwrap();
    for r in [
        verify(&w, &[]),
        w.on_sample("status", &["--client", "vscode"]),
        w.on_sample("status", &["--client", "vscode", "--json"]),
        w.on_sample("install", &["--client", "vscode", "--server", "codetools"]),
    ] {
        assert!(!r.shown.contains("hunter2"), "{}", r.shown);
    }
}

#[test]
fn prune_keeps_the_releases_vscode_workspace_and_profile_servers_point_into() {
    let w = World::new();
    w.sample();
    let releases = w.opt().join("codetools/releases");
    let (a, b, c) = (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "cccccccccccccccccccccccccccccccccccccccc",
    );
    for sha in [a, b, c] {
        fs::create_dir_all(releases.join(sha).join("bin")).unwrap();
        fs::write(releases.join(sha).join("VERSION"), format!("{sha}\n")).unwrap();
    }
    let bin = |sha: &str| releases.join(sha).join("bin/codetools");
    w.write(
        "work/.vscode/mcp.json",
        json!({"servers": {"old": {"type": "stdio", "command": bin(a)}}}).to_string(),
    );
    w.write(
        "home/.config/Code/User/globalStorage/storage.json",
        json!({"userDataProfiles": [{"location": "-5a1b2c3d", "name": "Work"}]}).to_string(),
    );
    w.write(
        "home/.config/Code/User/profiles/-5a1b2c3d/mcp.json",
        json!({"servers": {"older": {"command": bin(b)}}}).to_string(),
    );
    let r = w
        .cmd()
        .args(["prune", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--keep", "0", "--json"])
        .run();
    r.code(0);
    let j = r.json();
    let removed: Vec<&str> = j["remove"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["release"].as_str().unwrap())
        .collect();
    assert_eq!(removed, [c], "{}", r.shown);
    assert!(
        r.shown.contains("old in") && r.shown.contains(".vscode/mcp.json (vscode"),
        "{}",
        r.shown
    );
    assert!(
        r.shown.contains("older in") && r.shown.contains("profile \\\"Work\\\""),
        "{}",
        r.shown
    );
    assert!(releases.join(a).exists() && releases.join(b).exists() && !releases.join(c).exists());
}
