//! Why mcp-deploy edits OpenCode's user file itself rather than running OpenCode's own
//! `opencode mcp add NAME [--url URL] [--env K=V] [--header K=V] [-- CMD ARGS...]`: each fact
//! the decision rests on, pinned against the real CLI (docs/clients.md, "Why not
//! `opencode mcp add`"). In OpenCode 1.18.33's bundled source the command is `McpAddCommand`
//! (`packages/opencode/src/cli/cmd/mcp.ts`): the server's argv is yargs' `"--"` array, the
//! file is the first that exists of the global `opencode.json`, `opencode.jsonc` (else a new
//! `opencode.json`), and `addMcpToConfig` is jsonc-parser's `modify` of `["mcp", NAME]` with
//! `Filesystem.write` (a plain `writeFile`) after it. There is no `mcp remove`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use serde_json::{json, Value};

use crate::harness::*;

/// The user config directory of a world's OpenCode.
const DIR: &str = "home/.config/opencode";

/// `opencode mcp add` in the world (the pinned release), from its working directory.
fn mcp_add(w: &World, args: &[&str]) -> Run {
    let mut all = vec!["mcp", "add"];
    all.extend_from_slice(args);
    w.opencode(&all)
}

/// The value of a config file OpenCode wrote (JSON with comments and trailing commas: its
/// "$schema" insertion leaves one).
fn read_json(path: &std::path::Path) -> Value {
    let text = fs::read_to_string(path).unwrap();
    let ast = jsonc_parser::parse_to_ast(&text, &Default::default(), &Default::default())
        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
    ast.value.expect("a value").into()
}

#[test]
fn opencode_mcp_add_writes_a_numeric_argument_as_a_number_and_opencode_then_refuses_the_config() {
    // yargs coerces what follows `--` like any positional: "8080", "0x10" and "1e3" reach the
    // file as the numbers 8080, 16 and 1000. OpenCode's schema wants strings there, so the
    // whole config is refused and no server runs: not what was declared, nor anything.
    let w = World::new();
    mcp_add(
        &w,
        &[
            "srv", "--", "/bin/srv", "--port", "8080", "0x10", "1e3", "0123",
        ],
    )
    .code(0);
    let written = read_json(&w.root().join(DIR).join("opencode.jsonc"));
    assert_eq!(
        written["mcp"]["srv"],
        json!({"type": "local", "command": ["/bin/srv", "--port", 8080, 16, 1000, "0123"]})
    );
    w.opencode(&["debug", "config"])
        .code(1)
        .stderr_has("Configuration is invalid")
        .stderr_has("Expected string, got 8080 mcp.srv.command.2");
}

#[test]
fn opencode_mcp_add_takes_env_and_header_values_on_its_command_line_and_echoes_a_malformed_one() {
    // A value reaches the file only as an argument (visible in /proc/PID/cmdline to every
    // user of the host while it runs), and one without `=` is quoted back in the error.
    let w = World::new();
    mcp_add(&w, &["srv", "--env", "TOKEN=hunter2", "--", "/bin/srv"]).code(0);
    mcp_add(
        &w,
        &[
            "web",
            "--url",
            "https://mcp.example/mcp",
            "--header",
            "Authorization=Bearer hunter2",
        ],
    )
    .code(0);
    let written = read_json(&w.root().join(DIR).join("opencode.jsonc"));
    assert_eq!(
        written["mcp"]["srv"]["environment"],
        json!({"TOKEN": "hunter2"})
    );
    assert_eq!(
        written["mcp"]["web"]["headers"],
        json!({"Authorization": "Bearer hunter2"})
    );
    mcp_add(&w, &["bad", "--env", "hunter2", "--", "/bin/srv"])
        .code(1)
        .stderr_has("Invalid environment variable: hunter2. Expected KEY=VALUE");
}

#[test]
fn opencode_mcp_add_rewrites_bytes_outside_its_entry_where_install_keeps_them() {
    // OpenCode inserts "$schema" into the user file (and into a project's opencode.json in
    // the working directory) as it starts, and jsonc-parser's `modify` re-lays out the line
    // it appends after: a neighbour written on one line. mcp-deploy's install keeps both, and
    // its uninstall gives back the very bytes.
    let user = "{\n  // mine\n  \"mcp\": {\n    \"lint\": {\"type\": \"local\", \"command\": [\"/bin/true\"]}\n  }\n}\n";
    let neighbour = "    \"lint\": {\"type\": \"local\", \"command\": [\"/bin/true\"]}";
    let project = "{}\n";

    let w = World::new();
    w.write(&format!("{DIR}/opencode.jsonc"), user);
    let project_file = w.write("work/opencode.json", project);
    mcp_add(&w, &["srv", "--", "/bin/srv"]).code(0);
    let text = fs::read_to_string(w.root().join(DIR).join("opencode.jsonc")).unwrap();
    assert!(text.contains("// mine"), "{text}");
    assert!(
        text.contains("\"$schema\": \"https://opencode.ai/config.json\""),
        "{text}"
    );
    assert!(!text.contains(neighbour), "{text}");
    assert!(w.root().join(DIR).join(".gitignore").exists());
    let project_text = fs::read_to_string(&project_file).unwrap();
    assert!(
        project_text.contains("opencode.ai/config.json"),
        "{project_text}"
    );

    let w = World::with_opencode();
    w.sample();
    w.write(&format!("{DIR}/opencode.jsonc"), user);
    let project_file = w.write("work/opencode.json", project);
    let args = ["--client", "opencode", "--server", "codetools"];
    w.on_sample("install", &args).code(0);
    let text = fs::read_to_string(w.opencode_config()).unwrap();
    assert!(text.contains(neighbour), "{text}");
    assert!(!text.contains("$schema"), "{text}");
    assert!(!w.root().join(DIR).join(".gitignore").exists());
    assert_eq!(fs::read_to_string(&project_file).unwrap(), project);
    w.on_sample("uninstall", &args).code(0);
    assert_eq!(fs::read_to_string(w.opencode_config()).unwrap(), user);
}

#[test]
fn opencode_mcp_add_writes_in_place_and_replaces_a_same_name_entry_without_a_word() {
    // `writeFile` truncates and rewrites the file itself (same inode: no temporary file and
    // rename, so a crash or a reader between the two sees it half-written); a name already
    // there is overwritten, exit 0. mcp-deploy renames a new file into place and refuses a
    // name it did not expect (AlreadyRegistered).
    let w = World::new();
    let path = w.write(&format!("{DIR}/opencode.jsonc"), "{\n  \"mcp\": {}\n}\n");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let inode = fs::metadata(&path).unwrap().ino();
    mcp_add(&w, &["srv", "--", "/bin/first"]).code(0);
    mcp_add(&w, &["srv", "--", "/bin/second"])
        .code(0)
        .stdout_has("MCP server \"srv\" added");
    assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
    assert_eq!(
        read_json(&path)["mcp"]["srv"],
        json!({"type": "local", "command": ["/bin/second"]})
    );
}

#[test]
fn opencode_mcp_add_writes_opencode_json_which_opencode_jsonc_overrides() {
    // It writes the global opencode.json when that exists, even beside an opencode.jsonc,
    // which OpenCode merges after it: a same-name entry there wins, and the add, which
    // "succeeded", changed nothing OpenCode runs. mcp-deploy writes the file OpenCode's own
    // config updates write (opencode.jsonc first) and reports the other as shadowing.
    let w = World::new();
    let json_file = w.write(&format!("{DIR}/opencode.json"), "{}\n");
    let jsonc_file = w.write(
        &format!("{DIR}/opencode.jsonc"),
        "{\"mcp\": {\"srv\": {\"type\": \"local\", \"command\": [\"/bin/old\"]}}}\n",
    );
    mcp_add(&w, &["srv", "--", "/bin/new"])
        .code(0)
        .stdout_has("opencode.json\n");
    assert_eq!(
        read_json(&json_file)["mcp"]["srv"]["command"],
        json!(["/bin/new"])
    );
    assert_eq!(
        read_json(&jsonc_file)["mcp"]["srv"]["command"],
        json!(["/bin/old"])
    );
    let cfg = w.opencode(&["debug", "config"]);
    cfg.code(0);
    let resolved: Value = serde_json::from_str(&cfg.stdout).unwrap();
    assert_eq!(resolved["mcp"]["srv"]["command"], json!(["/bin/old"]));

    // With only config.json it creates opencode.json, readable by every user (0644).
    let w = World::new();
    w.write(&format!("{DIR}/config.json"), "{}\n");
    mcp_add(&w, &["srv", "--", "/bin/new"]).code(0);
    let made = w.root().join(DIR).join("opencode.json");
    assert_eq!(
        fs::metadata(&made).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

#[test]
fn opencode_mcp_add_runs_the_users_plugins() {
    // It starts OpenCode on the user's own config, so every plugin there runs (`--pure` skips
    // them). mcp-deploy's confirming `opencode debug config` runs on a scratch copy without
    // them (file_clients::attack_a_plugin_is_not_executed_by_the_confirming_opencode_run).
    let w = World::new();
    let marker = w.root().join("tmp/plugin-ran");
    w.write(
        &format!("{DIR}/plugin/mark.js"),
        format!(
            "require('fs').writeFileSync({:?}, 'x');\nexport const P = async () => ({{}});\n",
            marker.to_str().unwrap()
        ),
    );
    mcp_add(&w, &["--pure", "srv", "--", "/bin/srv"]).code(0);
    assert!(!marker.exists());
    mcp_add(&w, &["srv", "--", "/bin/srv"]).code(0);
    assert!(marker.exists());
}

#[test]
fn opencode_1_0_61_and_1_3_2_have_no_non_interactive_mcp_add() {
    // The older releases of the supported range take no name, flag or command: `mcp add
    // NAME ...` prints the usage and exits 1 (bare `mcp add` prompts and waits on the
    // terminal), so the file edit would be needed for them anyway.
    for version in ["1.0.61", "1.3.2"] {
        let w = World::new();
        let r = w
            .program(compat_client("opencode", version))
            .args(["mcp", "add", "srv", "--url", "https://mcp.example/mcp"])
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .run();
        r.code(1).stdout_has("opencode mcp add\n");
        assert!(!r.said().contains("--url"), "{version}: {}", r.shown);
        assert!(
            !w.root().join(DIR).join("opencode.json").exists()
                && !w.root().join(DIR).join("opencode.jsonc").exists(),
            "{version}: {}",
            r.shown
        );
    }
}
