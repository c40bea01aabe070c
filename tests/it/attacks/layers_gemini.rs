//! Issue 20, gemini: every layer gemini 0.61.0 applies to a user-scope server, one row each.
//! Each row installs the sample into gemini, lays out one layer, confirms with the real
//! `gemini mcp list` that gemini really runs the server differently or not at all (it starts
//! every server it would load, in a trusted folder: `GEMINI_CLI_TRUST_WORKSPACE=true`), then
//! requires `verify-identity --client gemini` and `status --client gemini` to fail naming the
//! file and key. Every row passed before the gemini reader (`src/clients/layers/gemini.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::*;

/// A world with the real gemini, the sample installed into it.
fn installed() -> (World, PathBuf) {
    let w = World::new();
    std::os::unix::fs::symlink(real_client("gemini"), w.bin().join("gemini")).unwrap();
    let opt = w.sample();
    w.on_sample("install", &["--client", "gemini"]).code(0);
    verify(&w, &opt, &[]).code(0);
    (w, opt)
}

fn home(w: &World) -> PathBuf {
    w.root().join("home")
}

/// The real `gemini mcp list` in the world, from `cwd`, in a trusted folder; its output.
fn mcp_list(w: &World, cwd: &Path) -> Run {
    gemini_list(w, cwd).run()
}

fn gemini_list<'w>(w: &'w World, cwd: &Path) -> Cmd<'w> {
    w.program(real_client("gemini"))
        .args(["mcp", "list"])
        .current_dir(cwd)
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
}

/// The line `gemini mcp list` prints for codetools-test.
fn status_line(r: &Run) -> String {
    format!("{}{}", r.stdout, r.stderr)
        .lines()
        .find(|l| l.contains("codetools-test:"))
        .unwrap_or_else(|| panic!("gemini lists no codetools-test\n{}", r.shown))
        .to_string()
}

fn verify_args(opt: &Path) -> Vec<String> {
    client_verify_args(opt, "gemini")
}

/// `verify-identity` of the sample's codetools-test in `client`, JSON report.
pub(super) fn client_verify_args(opt: &Path, client: &str) -> Vec<String> {
    [
        "verify-identity",
        "--prefix",
        opt.join("codetools").to_str().unwrap(),
        "--expect-commit",
        CT_SHA,
        "--name",
        "codetools-test",
        "--client",
        client,
        "--json",
    ]
    .map(String::from)
    .to_vec()
}

fn verify(w: &World, opt: &Path, extra: &[&str]) -> Run {
    client_verify(w, opt, "gemini", extra)
}

pub(super) fn client_verify(w: &World, opt: &Path, client: &str, extra: &[&str]) -> Run {
    let doc = w.registered();
    w.cmd()
        .args(client_verify_args(opt, client))
        .args(["--mcp-json", doc.to_str().unwrap()])
        .args(extra)
        .run()
}

/// verify-identity and status both fail, naming `file` and `key` in mcp-registration's
/// detail and in status's `layers` row.
pub(super) fn fails_naming(w: &World, verify: Run, status: Run, file: &str, key: &str) {
    verify.code(1);
    let detail = verify.detail("mcp-registration");
    assert!(
        detail.contains(file) && detail.contains(key),
        "mcp-registration does not name {file} and {key}: {detail}\n{}",
        verify.shown
    );
    status.code(1);
    let row = status
        .json()
        .pointer("/servers")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
        .flat_map(|s| s["checks"].as_array().cloned().unwrap_or_default())
        .find(|c| c["check"] == "layers" && c["ok"] == false)
        .unwrap_or_else(|| panic!("no failing layers row\n{}", status.shown));
    let text = row["detail"].as_str().unwrap();
    assert!(
        text.contains(file) && text.contains(key),
        "the layers row does not name {file} and {key}: {text}"
    );
    let _ = w;
}

fn status(w: &World) -> Run {
    w.on_sample("status", &["--client", "gemini", "--json"])
}

/// A script node runs through `NODE_OPTIONS=--require`: it leaves a marker when the server
/// gemini starts loads it.
pub(super) fn probe(w: &World) -> (PathBuf, PathBuf) {
    let marker = w.root().join("probe-ran");
    let js = w.write(
        "probe.js",
        format!(
            "require('fs').appendFileSync({:?}, (process.argv[1] || '') + '\\n');\n",
            marker.to_str().unwrap()
        ),
    );
    (js, marker)
}

/// Edit the user settings gemini wrote, as JSON.
fn edit_user_settings(w: &World, f: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let p = home(w).join(".gemini/settings.json");
    let mut v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut v);
    fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    p
}

#[test]
fn home_env_file_gives_the_server_node_options() {
    let (w, opt) = installed();
    let (js, marker) = probe(&w);
    w.write(
        "home/.env",
        format!("NODE_OPTIONS=--require {}\n", js.display()),
    );
    // Gemini loads ~/.env into itself and the server it starts inherits it.
    let r = mcp_list(&w, &home(&w));
    assert!(status_line(&r).contains("Connected"), "{}", r.shown);
    assert!(
        fs::read_to_string(&marker).is_ok_and(|s| s.contains("codetools")),
        "the server did not load the probe\n{}",
        r.shown
    );
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        "home/.env",
        "env.NODE_OPTIONS",
    );
}

#[test]
fn gemini_dir_env_file_of_the_working_directory_gives_the_server_a_variable() {
    let (w, opt) = installed();
    let (js, marker) = probe(&w);
    // The next instance: another file (the working directory's .gemini/.env, found first),
    // seen from the directory verify-identity runs in.
    w.write(
        "work/.gemini/.env",
        format!("export NODE_OPTIONS='--require {}'\n", js.display()),
    );
    let r = mcp_list(&w, &w.root().join("work"));
    assert!(
        marker.exists(),
        "the server did not load the probe\n{}",
        r.shown
    );
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        "work/.gemini/.env",
        "env.NODE_OPTIONS",
    );
}

#[test]
fn an_ancestors_env_file_gives_the_server_a_variable() {
    // The next instance: a .env above the working directory (gemini looks up to `/`).
    let (w, opt) = installed();
    let (js, marker) = probe(&w);
    w.write(
        ".env",
        format!("NODE_OPTIONS=\"--require {}\"\n", js.display()),
    );
    let r = mcp_list(&w, &w.root().join("work"));
    assert!(
        marker.exists(),
        "the server did not load the probe\n{}",
        r.shown
    );
    let root = w.root().display().to_string();
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        &format!("{root}/.env"),
        "env.NODE_OPTIONS",
    );
}

#[test]
fn a_variable_the_settings_exclude_never_reaches_the_server_and_passes() {
    // advanced.excludedEnvVars keeps NODE_OPTIONS out of every server: as lenient as gemini.
    let (w, opt) = installed();
    let (js, marker) = probe(&w);
    w.write(
        "home/.env",
        format!("NODE_OPTIONS=--require {}\n", js.display()),
    );
    edit_user_settings(&w, |v| {
        v["advanced"] = serde_json::json!({"excludedEnvVars": ["NODE_OPTIONS"]});
    });
    let r = mcp_list(&w, &home(&w));
    assert!(status_line(&r).contains("Connected"), "{}", r.shown);
    assert!(!marker.exists(), "gemini passed it on\n{}", r.shown);
    verify(&w, &opt, &[]).code(0);
}

#[test]
fn a_token_named_variable_of_the_env_file_is_not_passed_and_passes() {
    // Gemini's MCP sanitization keeps TOKEN-like names and DEBUG out of every server: such a
    // .env changes nothing, so it is no finding (the reader is as lenient as the client).
    let (w, opt) = installed();
    let rec = w.write(
        "rec.sh",
        format!("#!/bin/sh\nenv > {}/recorded\n", w.root().display()),
    );
    fs::set_permissions(&rec, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    w.write("home/.env", "API_TOKEN=hunter2\nDEBUG=1\n");
    // Confirm with a recorder server of gemini's own adding, in a copy of the home.
    let copy = w.root().join("copy");
    fs::create_dir_all(copy.join(".gemini")).unwrap();
    fs::copy(home(&w).join(".env"), copy.join(".env")).unwrap();
    w.program(real_client("gemini"))
        .args(["mcp", "add", "-s", "user", "rec", rec.to_str().unwrap()])
        .env("HOME", &copy)
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .current_dir(&copy)
        .run()
        .code(0);
    gemini_list(&w, &copy).env("HOME", &copy).run();
    let recorded = fs::read_to_string(w.root().join("recorded")).unwrap();
    assert!(
        !recorded.contains("API_TOKEN") && !recorded.contains("DEBUG=1"),
        "{recorded}"
    );
    verify(&w, &opt, &[]).code(0);
}

#[test]
fn mcp_excluded_in_the_compared_settings_file_blocks_it() {
    let (w, opt) = installed();
    edit_user_settings(&w, |v| {
        v["mcp"] = serde_json::json!({"excluded": ["Codetools-Test "]});
    });
    let r = mcp_list(&w, &home(&w));
    assert!(status_line(&r).contains("Blocked"), "{}", r.shown);
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        ".gemini/settings.json mcp.excluded",
        "mcp.excluded",
    );
}

#[test]
fn mcp_allowed_without_the_name_blocks_it() {
    let (w, opt) = installed();
    edit_user_settings(&w, |v| {
        v["mcp"] = serde_json::json!({"allowed": ["orchestrata-test"]});
    });
    let r = mcp_list(&w, &home(&w));
    assert!(status_line(&r).contains("Blocked"), "{}", r.shown);
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        ".gemini/settings.json mcp.allowed",
        "does not name codetools-test",
    );
}

#[test]
fn disabled_in_the_enablement_file_blocks_it() {
    let (w, opt) = installed();
    // What gemini's enablement manager writes for `/mcp disable` in a session (the CLI's
    // `gemini mcp disable` of 0.61.0 never finds a server: it looks up the names in the
    // `{mcpServers, blockedServerNames}` pair it gets back, and exits 0 saying "not found").
    w.write(
        "home/.gemini/mcp-server-enablement.json",
        "{\n  \"codetools-test\": {\n    \"enabled\": false\n  }\n}",
    );
    let r = mcp_list(&w, &home(&w));
    assert!(status_line(&r).contains("Disabled"), "{}", r.shown);
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        "mcp-server-enablement.json",
        "enabled",
    );
}

#[test]
fn workspace_settings_gemini_refuses_stop_every_server() {
    let (w, opt) = installed();
    // Valid JSON, but not an object: gemini stops ("Please fix the configuration file(s)").
    // The shadow check read it as a file without servers.
    w.write("work/.gemini/settings.json", "[]");
    let r = mcp_list(&w, &w.root().join("work"));
    assert!(
        r.code != 0 && r.stderr.contains("not a valid JSON object"),
        "gemini did not refuse it\n{}",
        r.shown
    );
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        "work/.gemini/settings.json",
        "refuses to start",
    );
}

#[test]
fn a_trusted_folders_file_gemini_refuses_stops_every_server() {
    // The next instance of a refused file: not a settings file at all. Gemini reads
    // ~/.gemini/trustedFolders.json to decide whether the folder is trusted, before any
    // server, and stops on a trust level it does not know.
    let (w, opt) = installed();
    w.write(
        "home/.gemini/trustedFolders.json",
        r#"{"/work": "TRUST_EVERYTHING"}"#,
    );
    let r = w
        .program(real_client("gemini"))
        .args(["mcp", "list"])
        .current_dir(w.root().join("work"))
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .run();
    assert!(
        r.code != 0 && r.stderr.contains("Invalid trust level"),
        "gemini did not refuse it\n{}",
        r.shown
    );
    fails_naming(
        &w,
        verify(&w, &opt, &[]),
        status(&w),
        "trustedFolders.json",
        "refuses to start",
    );
}

/// Run `args` of mcp-deploy, or the real gemini, inside a private /etc holding `files`.
fn in_etc(w: &World, files: &[(&str, &str)], program: &Path, args: &[String]) -> Run {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = w.in_private_etc(files, program, &refs).run();
    assert_ne!(
        r.code, 97,
        "the private /etc could not be made\n{}",
        r.shown
    );
    r
}

#[test]
fn system_defaults_exclude_it() {
    let (w, opt) = installed();
    let files = [(
        "/etc/gemini-cli/system-defaults.json",
        r#"{"mcp": {"excluded": ["codetools-test"]}}"#,
    )];
    let trusted = w
        .in_private_etc(&files, real_client("gemini"), &["mcp", "list"])
        .current_dir(home(&w))
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .run();
    assert!(
        status_line(&trusted).contains("Blocked"),
        "{}",
        trusted.shown
    );
    let doc = w.registered();
    let mut args = verify_args(&opt);
    args.extend(["--mcp-json".into(), doc.to_str().unwrap().into()]);
    let v = in_etc(
        &w,
        &files,
        Path::new(env!("CARGO_BIN_EXE_mcp-deploy")),
        &args,
    );
    let s = in_etc(
        &w,
        &files,
        Path::new(env!("CARGO_BIN_EXE_mcp-deploy")),
        &[
            "status".into(),
            "--prefix".into(),
            opt.to_str().unwrap().into(),
            "--name-suffix".into(),
            "-test".into(),
            "--client".into(),
            "gemini".into(),
            "--json".into(),
        ],
    );
    fails_naming(
        &w,
        v,
        s,
        "/etc/gemini-cli/system-defaults.json",
        "mcp.excluded",
    );
    // The host's /etc is untouched.
    assert!(!Path::new("/etc/gemini-cli/system-defaults.json").exists());
}

#[test]
fn system_settings_gemini_refuses_stop_every_server() {
    let (w, opt) = installed();
    let files = [("/etc/gemini-cli/settings.json", "{\"mcp\": ")];
    let g = w
        .in_private_etc(&files, real_client("gemini"), &["mcp", "list"])
        .current_dir(home(&w))
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .run();
    assert!(
        g.code != 0 && g.stderr.contains("/etc/gemini-cli/settings.json"),
        "gemini did not refuse it\n{}",
        g.shown
    );
    let doc = w.registered();
    let mut args = verify_args(&opt);
    args.extend(["--mcp-json".into(), doc.to_str().unwrap().into()]);
    let v = in_etc(
        &w,
        &files,
        Path::new(env!("CARGO_BIN_EXE_mcp-deploy")),
        &args,
    );
    v.code(1);
    let detail = v.detail("mcp-registration");
    assert!(
        detail.contains("/etc/gemini-cli/settings.json") && detail.contains("refuses to start"),
        "{}",
        v.shown
    );
}

#[test]
fn a_large_env_file_is_read_within_a_memory_limit() {
    let (w, opt) = installed();
    // 12 MiB of definitions and an unclosed quote, under a 1 GiB address-space limit.
    let mut text = "A=\"open\n".to_string();
    text.push_str(&"SOME_VAR=1\n".repeat(1 << 20));
    text.push_str("NODE_OPTIONS=--x\n");
    w.write("home/.env", text);
    let doc = w.registered();
    let mut args: Vec<String> = vec!["--as=1073741824".into(), "--".into()];
    args.push(env!("CARGO_BIN_EXE_mcp-deploy").into());
    args.extend(verify_args(&opt));
    args.extend(["--mcp-json".into(), doc.to_str().unwrap().into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = std::time::Instant::now();
    let r = w.program(system_tool("prlimit")).args(&refs).run();
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(detail.contains("env.NODE_OPTIONS"), "{}", r.shown);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}

/// The main rules again with each supported release of compat/versions.txt as the oracle
/// (issue 20 across issue 21's range), one test per release and rule so that a failure names
/// the release. The oracle is a session: `gemini -p` (a dummy key, the API behind a closed
/// proxy port) starts every server it loads before it fails to reach the model; 0.10.0's
/// `gemini mcp list` applies neither `mcp.excluded` nor `mcp.allowed`, so it cannot be the
/// oracle there. Two env-recording servers sit beside ours: `witness`, which no rule names
/// (the session did start its servers), and `oracle`, which the rule names as it names ours.
/// mcp-deploy's verdict must fail wherever a release runs ours differently, and may fail
/// (errs toward failing) where a release runs it as registered.
mod across {
    use super::*;
    use serde_json::{json, Value};

    use super::super::support::ORACLE;

    fn gemini_of(release: &str) -> PathBuf {
        match release {
            "pinned" => real_client("gemini"),
            v => compat_client("gemini", v),
        }
    }

    /// The sample installed through `release`, the two recording servers added beside it.
    fn installed_with(release: &str) -> (World, PathBuf) {
        let w = World::new();
        std::os::unix::fs::symlink(gemini_of(release), w.bin().join("gemini")).unwrap();
        let opt = w.sample();
        w.on_sample("install", &["--client", "gemini"]).code(0);
        verify(&w, &opt, &[]).code(0);
        let script = w.root().join("oracle.py");
        write_exec(&script, ORACLE);
        edit_user_settings(&w, |v| {
            for name in ["oracle", "witness"] {
                let out = w.root().join(format!("{name}.json"));
                v["mcpServers"][name] = json!({"command": script, "env": {"ORACLE_OUT": out}});
            }
        });
        verify(&w, &opt, &[]).code(0);
        (w, opt)
    }

    /// One `gemini -p` session from the home directory: what `oracle` was started with, if
    /// it was started. Asserts that the session started `witness`.
    fn session(w: &World, release: &str) -> Option<Value> {
        let r = w
            .program(system_tool("timeout"))
            .arg("30")
            .arg(gemini_of(release))
            .args(["-p", "hi"])
            .current_dir(home(w))
            .env("GEMINI_CLI_NO_RELAUNCH", "true")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("GEMINI_API_KEY", "mcp-deploy-test-dummy")
            .env("HTTPS_PROXY", "http://127.0.0.1:9")
            .env("HTTP_PROXY", "http://127.0.0.1:9")
            .run();
        let read = |name: &str| -> Option<Value> {
            let text = fs::read_to_string(w.root().join(format!("{name}.json"))).ok()?;
            serde_json::from_str(&text).ok()
        };
        assert!(
            read("witness").is_some(),
            "setup error: gemini {release} started no server\n{}",
            r.shown
        );
        read("oracle")
    }

    fn set_user(w: &World, key: &str, value: Value) {
        edit_user_settings(w, |v| {
            v[key] = value;
        });
    }

    pub(super) fn home_env(release: &str) {
        let (w, opt) = installed_with(release);
        w.write("home/.env", "NODE_OPTIONS=--max-old-space-size=4000\n");
        fails_naming(
            &w,
            verify(&w, &opt, &[]),
            status(&w),
            "home/.env",
            "env.NODE_OPTIONS",
        );
        let seen = session(&w, release).expect("gemini did not start the oracle");
        assert_eq!(seen["env"]["NODE_OPTIONS"], "--max-old-space-size=4000");
    }

    pub(super) fn excluded(release: &str) {
        let (w, opt) = installed_with(release);
        set_user(&w, "mcp", json!({"excluded": ["oracle", "codetools-test"]}));
        fails_naming(
            &w,
            verify(&w, &opt, &[]),
            status(&w),
            ".gemini/settings.json mcp.excluded",
            "mcp.excluded",
        );
        assert!(session(&w, release).is_none(), "gemini {release} ran it");
    }

    pub(super) fn allowed(release: &str) {
        let (w, opt) = installed_with(release);
        set_user(&w, "mcp", json!({"allowed": ["witness"]}));
        fails_naming(
            &w,
            verify(&w, &opt, &[]),
            status(&w),
            ".gemini/settings.json mcp.allowed",
            "does not name codetools-test",
        );
        assert!(session(&w, release).is_none(), "gemini {release} ran it");
    }

    /// An allow list naming us in another case: no release's session runs the server (the
    /// allow list compares exactly in every release, 0.61.0 included, whose exclusions
    /// lowercase and trim). The reader, which matched it lowercased, passed this before.
    pub(super) fn allowed_in_another_case(release: &str) {
        let (w, opt) = installed_with(release);
        set_user(
            &w,
            "mcp",
            json!({"allowed": ["witness", "Oracle", "Codetools-Test"]}),
        );
        fails_naming(
            &w,
            verify(&w, &opt, &[]),
            status(&w),
            ".gemini/settings.json mcp.allowed",
            "another case",
        );
        assert!(session(&w, release).is_none(), "gemini {release} ran it");
    }

    /// The v1 key `excludeMCPServers`: 0.10.0 migrates it into `mcp.excluded` (and rewrites
    /// the file so), 0.24.5 on ignore it. The verdict fails before and after 0.10.0's
    /// rewrite. Before the reader read it, verify-identity passed what 0.10.0 does not run.
    pub(super) fn v1_exclude(release: &str, obeys: bool) {
        let (w, opt) = installed_with(release);
        set_user(&w, "excludeMCPServers", json!(["oracle", "codetools-test"]));
        fails_naming(
            &w,
            verify(&w, &opt, &[]),
            status(&w),
            ".gemini/settings.json excludeMCPServers",
            "names codetools-test",
        );
        assert_eq!(session(&w, release).is_none(), obeys, "gemini {release}");
        verify(&w, &opt, &[]).code(1);
    }

    macro_rules! releases {
        ($($m:ident: $v:expr, v1: $v1:expr);* $(;)?) => {$(
            mod $m {
                #[test]
                fn home_env_file_reaches_the_server() {
                    super::home_env($v)
                }
                #[test]
                fn mcp_excluded_drops_it() {
                    super::excluded($v)
                }
                #[test]
                fn mcp_allowed_without_the_name_drops_it() {
                    super::allowed($v)
                }
                #[test]
                fn mcp_allowed_in_another_case() {
                    super::allowed_in_another_case($v)
                }
                #[test]
                fn v1_exclude_mcp_servers() {
                    super::v1_exclude($v, $v1)
                }
            }
        )*};
    }

    releases! {
        v0_10_0: "0.10.0", v1: true;
        v0_24_5: "0.24.5", v1: false;
        pinned: "pinned", v1: false;
    }
}
