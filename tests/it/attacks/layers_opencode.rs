//! Issue 20, OpenCode: a config OpenCode refuses as a whole. OpenCode 1.18.33 decodes every
//! file it merges against its schema and, for one value of the wrong type anywhere, stops
//! with "Configuration is invalid at FILE": no server runs. Each row confirms that with the
//! real `opencode debug config`, then requires verify-identity and status to fail naming the
//! file and key. Every failing row passed before the OpenCode reader
//! (`src/clients/layers/opencode.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use super::layers_gemini::{client_verify, client_verify_args, fails_naming};
use crate::harness::*;

fn installed() -> (World, PathBuf) {
    let w = World::new();
    std::os::unix::fs::symlink(real_client("opencode"), w.bin().join("opencode")).unwrap();
    let opt = w.sample();
    w.on_sample("install", &["--client", "opencode"]).code(0);
    client_verify(&w, &opt, "opencode", &[]).code(0);
    (w, opt)
}

fn status(w: &World) -> Run {
    w.on_sample("status", &["--client", "opencode", "--json"])
}

/// Put `property` (`"key": value`) first in the object of the file at `path`.
fn insert_top(path: &Path, property: &str) {
    let text = fs::read_to_string(path).unwrap_or_else(|_| "{}".into());
    let i = text.find('{').expect("an object");
    let rest = text[i + 1..].trim_start();
    let sep = if rest.starts_with('}') { "" } else { "," };
    fs::write(
        path,
        format!("{}{{\n  {property}{sep}\n  {rest}", &text[..i]),
    )
    .unwrap();
}

/// The real `opencode debug config` refuses the config, naming `file`.
fn opencode_refuses(w: &World, file: &str) {
    let r = w.opencode(&["debug", "config"]);
    assert!(
        r.code != 0 && r.stderr.contains("Configuration is invalid") && r.stderr.contains(file),
        "OpenCode did not refuse it\n{}",
        r.shown
    );
}

#[test]
fn a_bad_value_outside_mcp_makes_opencode_load_nothing() {
    let (w, opt) = installed();
    insert_top(&w.opencode_config(), r#""model": 1"#);
    opencode_refuses(&w, "opencode.jsonc");
    fails_naming(
        &w,
        client_verify(&w, &opt, "opencode", &[]),
        status(&w),
        "opencode.jsonc model",
        "Configuration is invalid",
    );
}

#[test]
fn another_servers_bad_entry_makes_opencode_load_nothing() {
    let (w, opt) = installed();
    // The next instance: inside the very servers object, another server's entry.
    let p = w.opencode_config();
    let text = fs::read_to_string(&p).unwrap();
    let text = text.replacen(
        "\"mcp\": {",
        "\"mcp\": {\n    \"other\": {\"type\": \"local\", \"command\": \"/bin/true\"},",
        1,
    );
    fs::write(&p, text).unwrap();
    opencode_refuses(&w, "opencode.jsonc");
    fails_naming(
        &w,
        client_verify(&w, &opt, "opencode", &[]),
        status(&w),
        "opencode.jsonc mcp.other",
        "Configuration is invalid",
    );
}

#[test]
fn a_lower_user_file_opencode_refuses_stops_it_too() {
    let (w, opt) = installed();
    // config.json merges below opencode.jsonc, and holds no server: still refused as a whole.
    let lower = w.root().join("home/.config/opencode/config.json");
    fs::write(&lower, r#"{"share": "sometimes"}"#).unwrap();
    opencode_refuses(&w, "config.json");
    fails_naming(
        &w,
        client_verify(&w, &opt, "opencode", &[]),
        status(&w),
        "config.json share",
        "Configuration is invalid",
    );
}

#[test]
fn the_managed_file_opencode_refuses_stops_it() {
    let (w, opt) = installed();
    let files = [(
        "/etc/opencode/opencode.json",
        r#"{"autoupdate": "sometimes"}"#,
    )];
    let r = w
        .in_private_etc(&files, real_client("opencode"), &["debug", "config"])
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .run();
    assert_ne!(
        r.code, 97,
        "the private /etc could not be made\n{}",
        r.shown
    );
    assert!(
        r.code != 0 && r.stderr.contains("/etc/opencode/opencode.json"),
        "OpenCode did not refuse it\n{}",
        r.shown
    );
    let doc = w.registered();
    let mut args = client_verify_args(&opt, "opencode");
    args.extend(["--mcp-json".into(), doc.to_str().unwrap().into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = w
        .in_private_etc(&files, env!("CARGO_BIN_EXE_mcp-deploy"), &refs)
        .run();
    v.code(1);
    let detail = v.detail("mcp-registration");
    assert!(
        detail.contains("/etc/opencode/opencode.json autoupdate"),
        "{}",
        v.shown
    );
    assert!(!Path::new("/etc/opencode/opencode.json").exists());
}

/// A key whose schema mcp-deploy does not carry is a doubt, put to OpenCode itself
/// (`opencode debug config`): taken, its answer is the pass's evidence.
#[test]
fn a_key_whose_schema_is_not_carried_passes_on_opencode_own_answer() {
    let (w, opt) = installed();
    insert_top(&w.opencode_config(), r#""provider": {}"#);
    // OpenCode takes it.
    w.opencode(&["debug", "config"]).code(0);
    let r = client_verify(&w, &opt, "opencode", &[]);
    r.code(0);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("accepts its whole configuration")
            && detail.contains("`opencode debug config`")
            && detail.contains("provider"),
        "{}",
        r.shown
    );
    status(&w).code(0);
}

/// Issue 35, item 1 (doubt never passed): a wrong type inside a key whose schema mcp-deploy
/// does not carry (`provider.x.options: 5`) was a note, and verify-identity passed, exit 0,
/// while OpenCode refuses the whole config and runs no server. OpenCode's own refusal now
/// fails it.
#[test]
fn a_wrong_type_inside_an_uncarried_schema_fails_on_opencode_own_answer() {
    let (w, opt) = installed();
    insert_top(&w.opencode_config(), r#""provider": {"x": {"options": 5}}"#);
    opencode_refuses(&w, "opencode.jsonc");
    fails_naming(
        &w,
        client_verify(&w, &opt, "opencode", &[]),
        status(&w),
        "refuses its whole configuration",
        "`opencode debug config`",
    );
}

/// Putting a doubt to OpenCode runs none of the config's code: OpenCode executes every plugin
/// it finds while it reads its config (`~/.opencode/plugin/`), so it is asked on the
/// plugin-free scratch copy that confirms a write (run on the real files, the plugin wrote its
/// marker). The plugin directory itself still fails the run as a shadow.
#[test]
fn asking_opencode_runs_no_plugin_of_the_config() {
    let (w, opt) = installed();
    let marker = w.root().join("tmp/PWNED-asked");
    w.write(
        "home/.opencode/plugin/evil.js",
        format!(
            "require('fs').writeFileSync({:?}, 'x');\nexport const P = async () => ({{}});\n",
            marker.to_str().unwrap()
        ),
    );
    insert_top(&w.opencode_config(), r#""provider": {}"#);
    let r = client_verify(&w, &opt, "opencode", &[]);
    assert!(
        !marker.exists(),
        "asking OpenCode ran the plugin\n{}",
        r.shown
    );
    r.code(1);
    // status's layers row shows OpenCode was asked (and the plugin still did not run).
    let s = status(&w);
    assert!(
        !marker.exists(),
        "asking OpenCode ran the plugin\n{}",
        s.shown
    );
    let layers = s
        .json()
        .pointer("/servers/0/checks")
        .and_then(|c| c.as_array())
        .and_then(|c| c.iter().find(|c| c["check"] == "layers").cloned())
        .unwrap_or_else(|| panic!("no layers row\n{}", s.shown));
    assert!(
        layers["detail"]
            .as_str()
            .is_some_and(|d| d.contains("accepts its whole configuration")),
        "{}",
        s.shown
    );
}

/// Next instance: the same doubt in the working directory's own project file. OpenCode is
/// asked from an empty directory (run in the caller's, it writes into the project's
/// `.opencode/`), where that file is not loaded: the doubt is not put to it, and fails — even
/// for a value OpenCode takes.
#[test]
fn a_doubt_in_a_project_file_is_not_asked_and_fails() {
    let (w, opt) = installed();
    w.write("work/opencode.json", r#"{"provider": {}}"#);
    w.opencode(&["debug", "config"]).code(0);
    let r = client_verify(&w, &opt, "opencode", &[]);
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("not compared: ") && detail.contains("work/opencode.json"),
        "{}",
        r.shown
    );
}

#[test]
fn a_project_file_opencode_refuses_stops_it_there() {
    // The next instance: the working directory's own opencode.json, which holds no server.
    let (w, opt) = installed();
    w.write("work/opencode.json", r#"{"snapshot": "yes"}"#);
    let r = w.opencode(&["debug", "config"]);
    assert!(
        r.code != 0 && r.stderr.contains("work/opencode.json"),
        "OpenCode did not refuse it\n{}",
        r.shown
    );
    fails_naming(
        &w,
        client_verify(&w, &opt, "opencode", &[]),
        status(&w),
        "work/opencode.json snapshot",
        "Configuration is invalid",
    );
}
