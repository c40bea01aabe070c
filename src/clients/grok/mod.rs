//! Grok CLI (npm `@vibe-kit/grok-cli`), through its CLI (`grok mcp add-json|remove`).
//!
//! What grok 0.0.34 does, read in its source (`dist/commands/mcp.js`, `dist/mcp/`,
//! `dist/utils/settings-manager.js`) and confirmed with the binary:
//! - Its MCP servers live in `.grok/settings.json` *of the directory it runs in*, under
//!   `mcpServers`, each `{"name": N, "transport": {"type": "stdio", "command", "args", "env"}}`
//!   (an older form has `command`/`args`/`env` beside `name`). There is no user-wide list and
//!   no variable that moves it: `~/.grok/user-settings.json` holds only its API key and models.
//!   So the closest to a user scope is the home directory's `~/.grok/settings.json`, which grok
//!   uses when started in the home directory: every call runs *there* (not from an empty
//!   directory as for the other clients), and a `.grok/settings.json` of the directory
//!   mcp-deploy runs in holding the same name is reported as shadowing.
//! - `mcp add` takes args and env through variadic options that stop at an argument starting
//!   with `-`, cut `K=a=b` to `a` and drop empty values; `mcp add-json` stores the JSON it is
//!   given (command, args, env) exactly, so it is the one used.
//! - `add`/`add-json` overwrite a registered name without a word and `remove` of a missing name
//!   exits 0 ("✓ Removed"): `add` refuses a registered name, `remove` a missing one, and both
//!   check the file after the call. `__proto__` is "added" and never stored: refused.
//! - After saving, `add-json` connects to the server it added (so it *starts* it), and when the
//!   connection works it stays connected and never exits. The call is stopped once grok says it
//!   saved (its "✓ Added MCP server: NAME" line, printed after a synchronous write), and its
//!   exit status, which says only whether the server answered, is not taken as the outcome:
//!   the file read afterwards is.
//! - Its `http`, `sse` and `streamable_http` transports speak no MCP HTTP transport (`http`
//!   POSTs each message to `<url>/rpc`, `streamable_http` throws): remote servers are refused.
//!   It starts a stdio server with `DEBUG=""`, `NODE_ENV=production`, `MCP_REMOTE_QUIET=1` and
//!   `MCP_REMOTE_SILENT=1` over the entry's env, so a declared other value of those is refused.
//! - A settings file it cannot parse it replaces with a fresh one on `add` (losing every
//!   entry): the file is parsed before any call, and a call is refused when it cannot be.
//!   Saving re-serialises every entry (`1.0` becomes `1`), so the others are checked after.
//! - It needs no API key (GROK_API_KEY) to manage servers; it runs with only PATH and HOME.

pub(crate) mod layers;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::cli_driven::{AddArgs, CliDriven, Dialect, Spelling};
use super::kit::node_json;
use super::runner::Runner;
use super::{only_keys, string_map, ClientError, ClientOptions};
use crate::entry::{Entry, Transport};

/// What grok sets over the entry's env when it starts a stdio server, whatever is declared.
const FORCED_ENV: &[(&str, &str)] = &[
    ("MCP_REMOTE_QUIET", "1"),
    ("MCP_REMOTE_SILENT", "1"),
    ("DEBUG", ""),
    ("NODE_ENV", "production"),
];

/// What grok does its own way ([`super::cli_driven`]).
pub(crate) struct GrokCli;

pub(crate) type Grok = CliDriven<GrokCli>;

pub(crate) fn open(
    row: &super::table::About,
    options: &ClientOptions,
) -> Result<Grok, ClientError> {
    let home = resolve_home(options.home("grok"), crate::dirs::home());
    // Every call runs there: without it, no call could start, and "cannot start grok"
    // would point at the binary.
    if options.calls_binary && !home.is_dir() {
        return Err(ClientError::Spawn {
            step: "grok mcp".into(),
            reason: format!(
                "grok runs in the home directory {} (its servers are those of the \
                 directory it runs in), which does not exist",
                home.display()
            ),
        });
    }
    let mut env: Vec<(&'static str, OsString)> = vec![
        ("HOME", crate::dirs::home().into_os_string()),
        ("NO_COLOR", "1".into()),
    ];
    // Its launcher is a node script that finds node on PATH.
    if let Some(path) = std::env::var_os("PATH") {
        env.push(("PATH", path));
    }
    let runner = Runner::of_client(row, options, env)?
        // The server `add-json` starts inherits grok's environment: keep the caller's out.
        .clearing_env()
        // Grok's servers are those of the directory it runs in.
        .in_dir(home.clone())
        .detect_version("grok")?;
    Ok(CliDriven {
        runner,
        config: settings_in(&home),
        dialect: GrokCli,
    })
}

fn resolve_home(explicit: Option<&Path>, home: PathBuf) -> PathBuf {
    explicit.map(Path::to_path_buf).unwrap_or(home)
}

fn settings_in(dir: &Path) -> PathBuf {
    dir.join(".grok").join("settings.json")
}

/// The line grok prints once it has saved `name` (synchronously, before it connects).
fn added_line(name: &str) -> String {
    format!("✓ Added MCP server: {name}\n")
}

/// `mcp add-json -- NAME JSON`'s line once it has saved, for that call.
fn added_by(args: &[&str]) -> Option<String> {
    match args {
        ["mcp", "add-json", "--", name, _] => Some(added_line(name)),
        _ => None,
    }
}

impl Dialect for GrokCli {
    const KIND: &'static dyn super::table::Kind = &GrokKind;
    // It prints "✓ Removed" and exits 0 for a name it does not have: flow checks first.
    const REMOVE_MISSING: Option<&'static str> = None;
    const REWRITES_OTHERS: bool = true;

    const SHOW: Spelling = Spelling {
        add: "grok mcp add-json {} <entry>",
        remove: "grok mcp remove {}",
        observe: "read {} from the grok settings",
    };
    const REMOVE: &'static [&'static str] = &["mcp", "remove", "--"];
    const ADD_ARGS: AddArgs = add_args;

    /// `add-json` is stopped once it has saved (it may never exit).
    fn run(
        &self,
        runner: &Runner,
        _config: &Path,
        args: &[&str],
        shown: &str,
    ) -> Result<crate::process::Output, ClientError> {
        match added_by(args) {
            Some(line) => runner.call_until(args, shown, &line),
            None => runner.call_raw(args, shown),
        }
    }

    /// After it saved, its exit status says whether the server answered, not whether it
    /// saved: the file read after the call decides.
    fn succeeded(&self, args: &[&str], out: &crate::process::Output) -> bool {
        out.stopped
            || added_by(args).is_some_and(|line| out.stdout.contains(&line))
            || out.status.success()
    }

    // Grok has no `get` and its `list` prints args joined by spaces (and creates the file):
    // what it holds is what its settings file holds (the default `observe`).
}

/// Where grok keeps the servers it uses when started in the home directory
/// (`~/.grok/settings.json`), found without the grok binary, for a read-only look.
pub(crate) fn config_path() -> PathBuf {
    settings_in(&crate::dirs::home())
}

/// Where another entry takes the name `name` from the entry `name` of `config`, read-only (no
/// grok binary needed). Grok started in the directory mcp-deploy runs in uses that directory's
/// `.grok/settings.json` and no other (it does not look further up). And grok knows a server
/// by its `name` field, not its key: another entry of the same file whose `name` is `name`
/// runs under that name too (the later one's tools win).
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = Vec::new();
    if let Ok(m) = read_user_entries(config) {
        for key in known_as(&m, name).into_iter().filter(|k| k != name) {
            found.push(format!(
                "entry {key:?} of {}, whose \"name\" is {name:?} (grok knows servers by that \
                 field)",
                config.display()
            ));
        }
    }
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(found);
    };
    let file = settings_in(&cwd);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(&file, config) || std::fs::symlink_metadata(&file).is_err() {
        return Ok(found);
    }
    let what = format!(
        "project settings {} (grok started in {} uses only that file)",
        file.display(),
        cwd.display()
    );
    match read_user_entries(&file) {
        Ok(m) if !known_as(&m, name).is_empty() => found.push(what),
        Ok(_) => {}
        // Node may read what we cannot (a lone surrogate escape): a file that is there and
        // cannot be read counts.
        Err(e) => found.push(format!(
            "{what}; mcp-deploy cannot read it: {e}; grok may, so it counts"
        )),
    }
    Ok(found)
}

/// The keys of `entries` (as [`read_user_entries`] gives them) that grok knows as `name`: the
/// key `name` unless its `name` field says otherwise, and any key whose `name` field is `name`.
fn known_as(entries: &Map<String, Value>, name: &str) -> Vec<String> {
    entries
        .iter()
        .filter(|(k, v)| match v.get("name") {
            Some(n) => n == name,
            None => k.as_str() == name,
        })
        .map(|(k, _)| k.clone())
        .collect()
}

/// Why grok holds no remote server: its row's [`super::Http::Refused`].
pub(crate) const NO_REMOTE: &str = "grok 0.0.34 has no working MCP HTTP or SSE transport (its \
                                    `http` POSTs each message to <url>/rpc, its \
                                    `streamable_http` refuses to send): only stdio servers";

/// The argv of `grok mcp add-json` for `entry`, and the values to keep out of error messages;
/// or why grok would hold or run something else.
fn add_args(name: &str, entry: &Entry) -> Result<(Vec<String>, Vec<String>), ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client: "grok",
        name: name.to_string(),
        reason,
    };
    node_json::refuse_proto(
        "grok",
        name,
        "grok",
        "it says it added it and stores nothing",
    )?;
    // Its row refuses a remote entry before this ([`super::Description::refuse_unheld`]).
    let Transport::Stdio { command, args } = &entry.transport else {
        return Err(refuse(NO_REMOTE.into()));
    };
    only_keys(&entry.raw, &["type", "command", "args", "env"])
        .map_err(|e| refuse(e.to_string()))?;
    let env = string_map(&entry.raw, "env");
    for (k, v) in &env {
        if let Some((_, forced)) = FORCED_ENV.iter().find(|(f, _)| f == k) {
            if v != forced {
                return Err(refuse(format!(
                    "env {k:?}: grok starts every stdio server with {k}={forced:?}, whatever \
                     the entry says"
                )));
            }
        }
    }
    let mut json = Map::new();
    json.insert("command".into(), command.clone().into());
    json.insert(
        "args".into(),
        Value::Array(args.iter().cloned().map(Value::from).collect()),
    );
    json.insert(
        "env".into(),
        Value::Object(
            env.iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect(),
        ),
    );
    let argv = vec![
        "mcp".into(),
        "add-json".into(),
        // A name starting with `-` would read as an option.
        "--".into(),
        name.to_string(),
        Value::Object(json).to_string(),
    ];
    Ok((argv, env.into_iter().map(|(_, v)| v).collect()))
}

/// Read `mcpServers` of a grok settings file (strict JSON, as grok's `JSON.parse` reads it),
/// each entry in the claude shape. A missing file has no entries. (Grok would replace a file it
/// cannot parse by a fresh one on its next `add`, losing every entry: such a file is an error.)
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    super::read_json_servers(path, to_claude_shape)
}

/// A grok entry in the claude shape: its `transport` object's keys (`type` `stdio` dropped),
/// or the older top-level `command`/`args`/`env`. Grok knows a server by its `name` field,
/// not its key: a `name` equal to the key goes, any other stays, as a key the check does not
/// know (a missing one as `"name": null`: grok would know the server as "undefined"). Every
/// other key stays too (a top-level key beside `transport`, which grok ignores,
/// as `outside transport: KEY` when the transport has the same key).
fn to_claude_shape(key: &str, m: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(Value::Object(t)) = m.get("transport") {
        // Grok picks the transport by `type` alone and throws without one ("Unsupported
        // transport type: undefined"): such an entry runs nothing, and must not read as a
        // stdio server (kept as `"type": null`, which no check accepts).
        if !t.contains_key("type") {
            out.insert("type".into(), Value::Null);
        }
        for (k, v) in t {
            if k == "type" && v == "stdio" {
                continue;
            }
            out.insert(k.clone(), v.clone());
        }
    }
    let flattened = matches!(m.get("transport"), Some(Value::Object(_)));
    if !m.contains_key("name") {
        out.insert("name".into(), Value::Null);
    }
    for (k, v) in m {
        if (k == "name" && v == key) || (k == "transport" && flattened) {
            continue;
        }
        if out.contains_key(k) {
            out.insert(format!("outside transport: {k}"), v.clone());
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// Every registration grok reads, for prune ([`super::scopes`]): its user settings and the working directory's `.grok/settings.json`.
pub(crate) fn scopes(found: &mut super::scopes::Found, cwd: Option<&std::path::Path>) {
    let user = config_path();
    found.add("grok", &user, "user", read_user_entries(&user));
    if let Some(c) = cwd {
        let f = c.join(".grok/settings.json");
        if f != user {
            found.add("grok", &f, "project", read_user_entries(&f));
        }
    }
}

/// Grok CLI, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct GrokKind;

static ABOUT: super::table::About = super::table::about!(cli grok "Grok CLI" MCP_DEPLOY_GROK,
    npm ["@vibe-kit/grok-cli"] (0, 0, 34) ..= (0, 0, 34))
// Its `--version` prints a fixed `1.0.1` (`.version("1.0.1")` in its dist/index.js), so only
// its package files count.
.without_version_flag()
// 0.0.34 speaks no MCP HTTP transport (grok.rs).
.remote(super::table::Http::Refused(NO_REMOTE));

super::table::folder_kind!(GrokKind, about: ABOUT, layers: layers::read, opens: open);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::{assert_malformed_refused, assert_refused, entries_read, entry};
    use serde_json::json;

    #[test]
    fn add_json_carries_the_entry_whole() {
        let (argv, secrets) = add_args(
            "-ct",
            &entry(json!({"command":"/x y","args":["-a","b=c d",""],"env":{"T":"a=b","E":""}})),
        )
        .unwrap();
        assert_eq!(argv[..4], ["mcp", "add-json", "--", "-ct"]);
        let sent: Value = serde_json::from_str(&argv[4]).unwrap();
        assert_eq!(
            sent,
            json!({"command":"/x y","args":["-a","b=c d",""],"env":{"T":"a=b","E":""}})
        );
        assert_eq!(secrets, ["a=b", ""]);
        // NODE_ENV as grok forces it is what runs anyway.
        add_args(
            "n",
            &entry(json!({"command":"/x","env":{"NODE_ENV":"production"}})),
        )
        .unwrap();
    }

    #[test]
    fn what_grok_cannot_hold_or_run_is_refused_by_key() {
        assert_refused(
            |e| add_args("n", e),
            [
                (json!({"type":"http","url":"http://h/mcp"}), "only stdio"),
                (json!({"type":"sse","url":"http://h/sse"}), "only stdio"),
                (json!({"command":"/x","cwd":"/"}), "key \"cwd\""),
                (
                    json!({"command":"/x","env":{"NODE_ENV":"hunter2"}}),
                    "env \"NODE_ENV\"",
                ),
                (
                    json!({"command":"/x","env":{"DEBUG":"hunter2"}}),
                    "env \"DEBUG\"",
                ),
            ],
        );
        assert_refused(
            |e| add_args("__proto__", e),
            [(json!({"command":"/x"}), "stores nothing")],
        );
    }

    #[test]
    fn entries_map_to_the_claude_shape_and_keep_what_grok_would_read_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        let m = entries_read(
            read_user_entries,
            &p,
            &json!({"model": "m", "mcpServers": {
                "s": {"name":"s","transport":{"type":"stdio","command":"/x","args":["a"],"env":{}}},
                "old": {"name":"old","command":"/y","args":[]},
                "renamed": {"name":"other","transport":{"type":"stdio","command":"/x"}},
                "both": {"name":"both","command":"/dead","transport":{"type":"stdio","command":"/x"}},
                "h": {"name":"h","transport":{"type":"http","url":"http://h","headers":{"K":"v"}}},
                "nameless": {"transport":{"type":"stdio","command":"/x"}}
            }})
            .to_string(),
        );
        assert_eq!(m["s"], json!({"command":"/x","args":["a"],"env":{}}));
        assert_eq!(m["old"], json!({"command":"/y","args":[]}));
        assert_eq!(m["renamed"], json!({"command":"/x","name":"other"}));
        assert_eq!(
            m["both"],
            json!({"command":"/x","outside transport: command":"/dead"})
        );
        assert_eq!(
            m["h"],
            json!({"type":"http","url":"http://h","headers":{"K":"v"}})
        );
        assert_eq!(m["nameless"], json!({"command":"/x","name":null}));
        // Grok knows "renamed" as "other", and "nameless" as no name we register.
        assert_eq!(known_as(&m, "other"), ["renamed"]);
        assert!(known_as(&m, "renamed").is_empty());
        assert!(known_as(&m, "nameless").is_empty());
        assert_eq!(known_as(&m, "s"), ["s"]);
        assert_malformed_refused(read_user_entries, &p);
    }

    #[test]
    fn a_missing_home_is_named_before_any_call() {
        let mut options = ClientOptions::files_only();
        options.calls_binary = true;
        options.binaries.insert("grok", "/bin/true".into());
        options.homes.insert("grok", "/nonexistent/home".into());
        let err = open(&ABOUT, &options)
            .err()
            .expect("open must fail")
            .to_string();
        assert!(
            err.contains("/nonexistent/home") && err.contains("does not exist"),
            "{err}"
        );
    }

    #[test]
    fn home_is_explicit_then_home() {
        assert_eq!(
            resolve_home(Some(Path::new("/e")), "/h".into()),
            PathBuf::from("/e")
        );
        assert_eq!(resolve_home(None, "/h".into()), PathBuf::from("/h"));
        assert_eq!(
            settings_in(Path::new("/h")),
            PathBuf::from("/h/.grok/settings.json")
        );
    }
}
