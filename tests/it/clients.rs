//! One declaration, every agent: install, verify, status and uninstall across every client of
//! the table — claude, codex, gemini, opencode, grok, copilot (their real CLIs), cursor and
//! vscode (their files) — and all-or-nothing across clients.

use std::fs;

use serde_json::json;

use crate::harness::*;

/// A third server, declared only by data, next to the sample's two.
fn declare_third(w: &World) -> std::path::PathBuf {
    let third = w.opt().join("thirdparty");
    fs::create_dir_all(third.join("bin")).unwrap();
    fs::write(third.join("VERSION"), format!("{OR_SHA}\n")).unwrap();
    write_exec(&third.join("bin/thirdparty-mcp"), "#!/bin/sh\nexit 0\n");
    let cfg = w.root().join("servers.json");
    fs::write(
        &cfg,
        json!({"servers": [
            {"name": "codetools", "prefix": "/opt/codetools", "layout": "release",
             "entry": {"command": "{{prefix}}/bin/codetools", "args": ["mcp", "serve"]}},
            {"name": "thirdparty", "prefix": "/opt/thirdparty", "layout": "prefix",
             "entry": {"command": "{{prefix}}/bin/thirdparty-mcp", "args": ["--stdio", "two words"],
                       "env": {"THIRDPARTY_API_TOKEN": "${THIRDPARTY_API_TOKEN}"}}}
        ]})
        .to_string(),
    )
    .unwrap();
    cfg
}

#[test]
fn a_third_server_declared_by_data_reaches_every_client_and_verifies() {
    let every = every_client();
    let every = every.as_str();
    assert_eq!(
        every, "claude,codex,gemini,opencode,grok,cursor,copilot,vscode,qwen",
        "the table's clients, each checked below in its own shape"
    );
    let w = World::with_every_client();
    w.sample();
    let cfg = declare_third(&w);
    let c = cfg.to_str().unwrap();
    let third = w.opt().join("thirdparty");
    // thirdparty's command is no MCP server: the handshake gate is not this test's subject.
    let r = w.on_sample(
        "install",
        &["--config", c, "--client", every, "--json", "--no-handshake"],
    );
    r.code(0);
    let servers = r.json()["servers"].as_array().unwrap().clone();
    assert_eq!(servers.len(), 18, "{}", r.shown);
    for s in &servers {
        assert_eq!(s["registration"], "added", "{}", r.shown);
    }

    // Each client holds both, as declared.
    let codex = fs::read_to_string(w.root().join("home/.codex/config.toml")).unwrap();
    assert!(
        codex.contains("thirdparty-test") && codex.contains("codetools-test"),
        "{codex}"
    );
    let gemini: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(w.root().join("home/.gemini/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        gemini["mcpServers"]["thirdparty-test"]["args"],
        json!(["--stdio", "two words"])
    );
    let qwen: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(w.root().join("home/.qwen/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        qwen["mcpServers"]["thirdparty-test"]["args"],
        json!(["--stdio", "two words"])
    );
    assert!(w.user_servers().contains_key("thirdparty-test"));
    // OpenCode's, grok's and Cursor's own files hold it in their own shapes.
    let opencode = fs::read_to_string(w.opencode_config()).unwrap();
    assert!(
        opencode.contains("\"thirdparty-test\"") && opencode.contains("{env:THIRDPARTY_API_TOKEN}"),
        "{opencode}"
    );
    assert_eq!(
        w.grok_servers()["thirdparty-test"]["transport"]["args"],
        json!(["--stdio", "two words"])
    );
    let cursor: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.cursor_config()).unwrap()).unwrap();
    assert_eq!(
        cursor["mcpServers"]["thirdparty-test"]["env"],
        json!({"THIRDPARTY_API_TOKEN": "${env:THIRDPARTY_API_TOKEN}"})
    );
    assert_eq!(
        w.copilot_servers()["thirdparty-test"]["args"],
        json!(["--stdio", "two words"])
    );
    let vscode = fs::read_to_string(w.vscode_config()).unwrap();
    let vscode: serde_json::Value = serde_json::from_str(&vscode).unwrap();
    assert_eq!(
        vscode["servers"]["thirdparty-test"],
        json!({"type": "stdio", "command": third.join("bin/thirdparty-mcp"),
               "args": ["--stdio", "two words"],
               "env": {"THIRDPARTY_API_TOKEN": "${env:THIRDPARTY_API_TOKEN}"}})
    );

    // The flat document records each client's entries; no env value in it.
    let flat: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.registered()).unwrap()).unwrap();
    assert!(flat["mcpServers"]["thirdparty-test"].is_object());
    let others: Vec<&str> = every.split(',').filter(|&c| c != "claude").collect();
    for &client in &others {
        assert_eq!(
            flat["clients"][client]["mcpServers"]["thirdparty-test"]["args"],
            json!(["--stdio", "two words"]),
            "{client}"
        );
    }
    // Env is recorded as its reference, for every client (issue 10: it used to be left out).
    let recorded = std::iter::once(&flat["mcpServers"])
        .chain(others.iter().map(|c| &flat["clients"][c]["mcpServers"]));
    for servers in recorded {
        assert_eq!(
            servers["thirdparty-test"]["env"],
            json!({"THIRDPARTY_API_TOKEN": "${THIRDPARTY_API_TOKEN}"}),
            "{flat}"
        );
    }

    // A second install is a no-op on every client: no file of any of the nine (nor the flat
    // document) is written — the CLI-driven clients save their file on every mutating call, so
    // this also shows that none was made.
    let files = [
        w.claude_json(),
        w.root().join("home/.codex/config.toml"),
        w.root().join("home/.gemini/settings.json"),
        w.opencode_config(),
        w.grok_settings(),
        w.cursor_config(),
        w.copilot_config(),
        w.vscode_config(),
        w.root().join("home/.qwen/settings.json"),
        w.registered(),
    ];
    let stamp = |f: &std::path::PathBuf| {
        let meta = fs::metadata(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        (fs::read(f).unwrap(), meta.modified().unwrap())
    };
    let before: Vec<_> = files.iter().map(stamp).collect();
    clock_past(w.root(), before.iter().map(|b| b.1).max().unwrap());
    let r = w.on_sample(
        "install",
        &["--config", c, "--client", every, "--json", "--no-handshake"],
    );
    r.code(0);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged", "{}", r.shown);
    }
    for (f, was) in files.iter().zip(&before) {
        let now = stamp(f);
        assert!(
            now.0 == was.0,
            "the re-run changed {}: {}",
            f.display(),
            String::from_utf8_lossy(&now.0)
        );
        assert!(now.1 == was.1, "the re-run wrote {}", f.display());
    }

    // verify-identity and status per client.
    let r = w.run(&[
        "verify-identity",
        "--config",
        c,
        "--prefix",
        third.to_str().unwrap(),
        "--expect-commit",
        OR_SHA,
        "--mcp-json",
        w.registered().to_str().unwrap(),
        "--name",
        "thirdparty-test",
        "--client",
        every,
        "--json",
    ]);
    r.code(0);
    let clients: Vec<_> = r.json()["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["client"].clone())
        .collect();
    let each: Vec<_> = every.split(',').map(|c| json!(c)).collect();
    assert_eq!(clients, each);
    w.on_sample("status", &["--config", c, "--client", every])
        .code(0);

    // Uninstall removes them from every client and the flat document.
    w.on_sample("uninstall", &["--config", c, "--client", every])
        .code(0);
    let codex = fs::read_to_string(w.root().join("home/.codex/config.toml")).unwrap_or_default();
    assert!(!codex.contains("thirdparty-test"), "{codex}");
    let gemini = fs::read_to_string(w.root().join("home/.gemini/settings.json")).unwrap();
    assert!(!gemini.contains("thirdparty-test"), "{gemini}");
    let qwen = fs::read_to_string(w.root().join("home/.qwen/settings.json")).unwrap();
    assert!(!qwen.contains("thirdparty-test"), "{qwen}");
    assert!(!w.user_servers().contains_key("thirdparty-test"));
    assert!(!w.grok_servers().contains_key("thirdparty-test"));
    assert!(!w.copilot_servers().contains_key("thirdparty-test"));
    for file in [w.opencode_config(), w.cursor_config(), w.vscode_config()] {
        let text = fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("thirdparty-test"),
            "{}: {text}",
            file.display()
        );
    }
}

#[test]
fn a_failure_in_one_client_rolls_back_every_client() {
    let w = World::with_every_client();
    w.sample();
    // gemini's add fails: claude and codex were already changed and must be undone.
    let real = real_client("gemini");
    write_exec(
        &w.bin().join("gemini"),
        &format!(
            "#!/bin/sh\nif [ \"$2\" = add ]; then echo 'injected failure: boom' >&2; exit 3; fi\nexec '{}' \"$@\"\n",
            real.display()
        ),
    );
    let r = w.on_sample(
        "install",
        &["--client", &every_client(), "--server", "codetools"],
    );
    r.code(2)
        .stderr_has("gemini mcp add -s user codetools-test <entry>")
        .stderr_has("every change was rolled back")
        .stderr_has("claude:")
        .stderr_has("codex:");
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    let codex = fs::read_to_string(w.root().join("home/.codex/config.toml")).unwrap_or_default();
    assert!(!codex.contains("codetools-test"), "{codex}");
    assert!(!w.registered().exists());
}

/// Issue 14, and issue 24 with eight (nine since qwen): one run into every client is all or
/// nothing. VS Code, named last, fails for real (its file is a dangling link: absent when read,
/// refused when written) after claude, codex, gemini, opencode, grok, copilot and qwen were
/// changed through their real CLIs and files and cursor through its file: every one of them is
/// put back, and the files that existed before keep their bytes.
#[test]
fn a_failure_in_the_last_of_eight_clients_rolls_back_the_other_seven() {
    // vscode, which fails, named last.
    let every = every_client();
    let mut order: Vec<&str> = every.split(',').filter(|&c| c != "vscode").collect();
    order.push("vscode");
    let every = order.join(",");
    assert_eq!(order.len(), 9, "{every}");
    let w = World::with_every_client();
    w.sample();
    // A user's own OpenCode, grok, Cursor and copilot entries, which must come through
    // untouched.
    fs::create_dir_all(w.opencode_config().parent().unwrap()).unwrap();
    let opencode_before = "{\n  // the user's own\n  \"mcp\": {\"mine\": {\"type\": \"local\", \"command\": [\"/bin/true\"]}}\n}\n";
    fs::write(w.opencode_config(), opencode_before).unwrap();
    fs::create_dir_all(w.grok_settings().parent().unwrap()).unwrap();
    let grok_before = json!({"mcpServers": {"mine": {"name": "mine",
        "transport": {"type": "stdio", "command": "/bin/true", "args": []}}}})
    .to_string();
    fs::write(w.grok_settings(), &grok_before).unwrap();
    fs::create_dir_all(w.cursor_config().parent().unwrap()).unwrap();
    let cursor_before =
        "{\n  // mine\n  \"mcpServers\": {\"mine\": {\"command\": \"/bin/true\"}}\n}\n";
    fs::write(w.cursor_config(), cursor_before).unwrap();
    w.copilot(&["mcp", "add", "mine", "--", "/bin/true"])
        .code(0);
    let copilot_before = w.copilot_servers();
    fs::create_dir_all(w.vscode_config().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(w.root().join("nowhere/mcp.json"), w.vscode_config()).unwrap();

    let r = w.on_sample("install", &["--client", &every]);
    r.code(2)
        .stderr_has("a symlink to a file that does not exist")
        .stderr_has("every change was rolled back");
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    let codex = fs::read_to_string(w.root().join("home/.codex/config.toml")).unwrap_or_default();
    assert!(!codex.contains("-test"), "{codex}");
    let gemini =
        fs::read_to_string(w.root().join("home/.gemini/settings.json")).unwrap_or_default();
    assert!(!gemini.contains("-test"), "{gemini}");
    let qwen = fs::read_to_string(w.root().join("home/.qwen/settings.json")).unwrap_or_default();
    assert!(!qwen.contains("-test"), "{qwen}");
    // Every key, value and comment is back. The layout of a servers object written on one line
    // is not: jsonc-parser puts each property on a line of its own when it adds one, and the
    // removal keeps that (documented in docs/clients.md).
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    let opencode_after = fs::read_to_string(w.opencode_config()).unwrap();
    assert_eq!(
        squeeze(&opencode_after),
        squeeze(opencode_before),
        "{opencode_after}"
    );
    let cursor_after = fs::read_to_string(w.cursor_config()).unwrap();
    assert_eq!(
        squeeze(&cursor_after),
        squeeze(cursor_before),
        "{cursor_after}"
    );
    let grok = w.grok_servers();
    assert_eq!(grok.keys().collect::<Vec<_>>(), ["mine"], "{grok:?}");
    assert_eq!(w.copilot_servers(), copilot_before);
    assert!(!w.root().join("nowhere").exists());
    assert!(!w.registered().exists());
}

/// A shell loop that waits (up to 15 s) until `file` exists, then runs `then`; else prints
/// `why` and exits 4. A wait on the condition, not a sleep.
fn wait_for(file: &std::path::Path, then: &str, why: &str) -> String {
    format!(
        "i=0; while [ ! -e '{f}' ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done\n\
         if [ -e '{f}' ]; then {then}; else echo '{why}' >&2; exit 4; fi\n",
        f = file.display()
    )
}

/// Issue 22: the clients of a run are changed side by side, and a failure in the last one,
/// met while an earlier one is still registering, still rolls every client back. codex's
/// add waits until gemini (the last) has failed, and gemini fails only once codex's add has
/// begun: run one after another, codex would give up first (and gemini never fail).
#[test]
fn a_failure_in_the_last_client_while_the_others_still_register_rolls_them_all_back() {
    let w = World::with_every_client();
    w.sample();
    let (adding, failed) = (
        w.root().join("codex-adding"),
        w.root().join("gemini-failed"),
    );
    let codex = real_client("codex");
    write_exec(
        &w.bin().join("codex"),
        &format!(
            "#!/bin/sh\nif [ \"$2\" = add ]; then touch '{}'; {}fi\nexec '{}' \"$@\"\n",
            adding.display(),
            wait_for(
                &failed,
                "true",
                "codex ran before gemini failed: not side by side"
            ),
            codex.display()
        ),
    );
    write_exec(
        &w.bin().join("gemini"),
        &format!(
            "#!/bin/sh\nif [ \"$2\" = add ]; then {}fi\nexec '{}' \"$@\"\n",
            wait_for(
                &adding,
                &format!(
                    "echo 'injected failure: boom' >&2; touch '{}'; exit 3",
                    failed.display()
                ),
                "gemini ran after codex: not side by side"
            ),
            real_client("gemini").display()
        ),
    );
    let r = w.on_sample(
        "install",
        &["--client", "claude,codex,gemini", "--server", "codetools"],
    );
    r.code(2)
        .stderr_has("injected failure: boom")
        .stderr_has("every change was rolled back")
        .stderr_has("claude:")
        .stderr_has("codex:");
    assert!(!r.stderr.contains("not side by side"), "{}", r.stderr);
    assert!(w.user_servers().is_empty(), "{:?}", w.user_servers());
    let codex = fs::read_to_string(w.root().join("home/.codex/config.toml")).unwrap_or_default();
    assert!(!codex.contains("codetools-test"), "{codex}");
    assert!(!w.registered().exists());
    // Every journal is gone: each client's transaction ended rolled back, none left behind.
    fn journals(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                journals(&path, found);
            } else if path.to_string_lossy().ends_with(".journal.json") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    journals(w.root(), &mut found);
    assert!(found.is_empty(), "{found:?}");
}

/// Issue 22: side by side, the report, the ledger and the flat document keep the `--client`
/// order, whichever client finished first. gemini, named first, finishes last: its add waits
/// until claude's is done.
#[test]
fn the_report_and_the_ledger_keep_the_client_order_whichever_finishes_first() {
    let w = World::with_every_client();
    w.sample();
    let added = w.root().join("claude-added");
    let claude = real_claude();
    write_exec(
        &w.bin().join("claude"),
        &format!(
            "#!/bin/sh\nif [ \"$2\" = add-json ]; then '{c}' \"$@\"; rc=$?; touch '{a}'; exit $rc; fi\n\
             exec '{c}' \"$@\"\n",
            c = claude.display(),
            a = added.display()
        ),
    );
    write_exec(
        &w.bin().join("gemini"),
        &format!(
            "#!/bin/sh\nif [ \"$2\" = add ]; then {}fi\nexec '{}' \"$@\"\n",
            wait_for(&added, "true", "gemini ran before claude: not side by side"),
            real_client("gemini").display()
        ),
    );
    let ledger = w.root().join("ledger.ndjson");
    let r = w.on_sample(
        "install",
        &[
            "--client",
            "gemini,claude",
            "--json",
            "--ledger",
            ledger.to_str().unwrap(),
        ],
    );
    r.code(0);
    let order = |v: Vec<serde_json::Value>| {
        let mut clients: Vec<String> = v
            .iter()
            .map(|s| s["client"].as_str().unwrap().to_string())
            .collect();
        clients.dedup();
        clients
    };
    assert_eq!(
        order(r.json()["servers"].as_array().unwrap().clone()),
        ["gemini", "claude"]
    );
    let records: Vec<serde_json::Value> = fs::read_to_string(&ledger)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4, "{records:?}");
    assert_eq!(order(records), ["gemini", "claude"]);
}
