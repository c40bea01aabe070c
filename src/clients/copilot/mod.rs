//! GitHub Copilot CLI (npm `@github/copilot`), through its CLI (`copilot mcp add|get|remove`).
//! The whole client is here: where its config lives, its calls, the entry mapping, its shadows,
//! its layers and its scopes, each referenced from its row of [`super::CLIENTS`].
//!
//! What copilot 1.0.102 does, read in its code (the npm package is a loader that runs the
//! platform package's single executable; on first run that extracts the JavaScript and the
//! Rust native parts, `prebuilds/linux-x64/runtime.node` and `cli-native.node`, into its
//! package cache) and confirmed with the binary:
//! - **Where.** User servers live in `$COPILOT_HOME/mcp-config.json`, else
//!   `~/.copilot/mcp-config.json` (an empty COPILOT_HOME counts as unset; `XDG_CONFIG_HOME`
//!   moves nothing), under `mcpServers`. A relative COPILOT_HOME is taken from the directory
//!   copilot runs in, so it names another file for every directory: refused. The deprecated
//!   `--config-dir` flag is the agent's own command line, not the host's.
//! - **Shape.** `mcp add` stores `{"tools":["*"],"type":"local","command","args","env"}` or
//!   `{"tools":["*"],"type":"http"|"sse","url","headers"}` exactly as given, but trims
//!   surrounding white space from env keys and values and from header names and values, and
//!   cannot hold an env key holding `=` or an empty one (`--env K=V` is cut at the first `=`):
//!   such entries are refused. It has no flag for `cwd` or any other key, so an entry with a
//!   key mcp-deploy does not know is refused. Read back, `type: local|stdio` is the stdio
//!   default, and `tools: ["*"]` (or no `tools`) is "every tool", the default: both dropped;
//!   every other key stays, so that the check fails on it.
//! - **Calls.** `mcp add` of a registered name exits 1 ("already exists... remove it first"),
//!   `mcp remove` and `mcp get` of a missing one exit 1 ("not found"). Every call puts `--`
//!   before the name (clap: a name or command starting with `-` is then no option).
//!   `mcp get --json -- NAME` prints the entry as held plus `source` (`user`, `workspace`,
//!   `plugin`) and `enabled` — env and header values *unmasked*: parsed, compared with the
//!   file, never echoed.
//! - **Which release runs.** Unless `COPILOT_AUTO_UPDATE=false` (or `--no-auto-update`), the
//!   loader runs the newest release it finds in any package cache (`COPILOT_PKG_CACHE_HOME`,
//!   `COPILOT_CACHE_HOME`, `$XDG_CACHE_HOME/copilot`, `$COPILOT_HOME`, `~/.copilot`, each
//!   `/pkg/`) that is at least its own: every call sets `COPILOT_AUTO_UPDATE=false`, so the
//!   release that runs is the installed package's, the one whose version is checked.
//! - **Workspace.** Copilot reads one workspace file: `.mcp.json` at the workspace root (the
//!   git work tree's top, else the directory it runs in), else `.github/mcp.json` there; a
//!   same-name workspace server wins over the user's. It loads it only once the folder is
//!   trusted (`trustedFolders` of `$COPILOT_HOME/config.json`, a parent trusting its
//!   children). [`shadows_in`] reports it, trusted or not (the agent asks to trust a folder
//!   when it starts there).
//! - **Layers** ([`layers`]): `disabledMcpServers` of `$COPILOT_HOME/settings.json`
//!   (what `copilot mcp disable` writes) stops the server; the managed policy file
//!   `/etc/github-copilot/managed-settings.json` (`allowedMcpServers`, `deniedMcpServers`,
//!   `strictPluginOnlyCustomization`, `allowManagedMcpServersOnly`) and the same keys in the
//!   user settings; `/etc/github-copilot/policy.d`. Policy delivered by GitHub's servers cannot
//!   be read on the host (docs/clients.md).

mod layers;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::cli_driven::{disagrees, AddArgs, CliDriven, Dialect, Spelling};
use super::runner::Runner;
use super::scopes::Found;
use super::{file_backed, git_root};
use super::{only_keys, string_map, ClientError, ClientOptions, Op};
use crate::entry::{Entry, Transport};
use crate::fsio;

/// What copilot does its own way ([`super::cli_driven`]).
pub(crate) struct CopilotCli;

pub(crate) type Copilot = CliDriven<CopilotCli>;

pub(crate) fn open(
    row: &super::table::About,
    options: &ClientOptions,
) -> Result<Copilot, ClientError> {
    let home = match options.home("copilot") {
        Some(dir) => dir.to_path_buf(),
        None => home_dir()?,
    };
    let mut env: Vec<(&'static str, OsString)> = vec![
        // The installed release, not a newer one from a package cache (module header).
        ("COPILOT_AUTO_UPDATE", "false".into()),
        ("NO_COLOR", "1".into()),
    ];
    if options.home("copilot").is_some() {
        env.push(("COPILOT_HOME", home.clone().into_os_string()));
    }
    let runner = Runner::of_client(row, options, env)?.detect_version("copilot")?;
    Ok(CliDriven {
        runner,
        config: home.join(CONFIG_FILE),
        dialect: CopilotCli,
    })
}

const CONFIG_FILE: &str = "mcp-config.json";

/// Copilot's own directory: `$COPILOT_HOME` (not empty), else `~/.copilot`; a relative
/// COPILOT_HOME is refused (copilot takes it from the directory it runs in).
fn home_dir() -> Result<PathBuf, ClientError> {
    resolve_home(crate::dirs::var("COPILOT_HOME"), crate::dirs::home())
}

fn resolve_home(copilot_home: Option<OsString>, home: PathBuf) -> Result<PathBuf, ClientError> {
    match copilot_home.map(PathBuf::from) {
        Some(dir) if dir.is_relative() => Err(ClientError::NotSupported {
            client: "copilot",
            reason: format!(
                "COPILOT_HOME is the relative path {}, which copilot takes from the directory \
                 it runs in",
                dir.display()
            ),
            help: "set COPILOT_HOME to an absolute path, or unset it to use ~/.copilot".into(),
        }),
        Some(dir) => Ok(dir),
        None => Ok(home.join(".copilot")),
    }
}

/// Where copilot keeps its user servers on this host, found without its binary (a relative
/// COPILOT_HOME, refused by [`open`], is read from the working directory, as copilot started
/// here would).
pub(crate) fn config_path() -> PathBuf {
    home_dir()
        .unwrap_or_else(|_| PathBuf::from(crate::dirs::var("COPILOT_HOME").unwrap_or_default()))
        .join(CONFIG_FILE)
}

impl Dialect for CopilotCli {
    const KIND: &'static dyn super::table::Kind = &CopilotKind;
    // `remove` of a missing name exits 1 ("not found"); flow checks the file first anyway.
    const REMOVE_MISSING: Option<&'static str> = None;
    // It parses and writes the whole file on every change.
    const REWRITES_OTHERS: bool = true;

    const SHOW: Spelling = Spelling {
        add: "copilot mcp add {} <entry>",
        remove: "copilot mcp remove {}",
        observe: "copilot mcp get --json {}",
    };
    const REMOVE: &'static [&'static str] = &["mcp", "remove", "--"];
    const ADD_ARGS: AddArgs = add_args;

    /// `copilot mcp get --json -- NAME`, compared with the config file.
    fn observe(c: &Copilot, name: &str) -> Result<Option<Entry>, ClientError> {
        observe(c, name)
    }
}

/// What `copilot mcp get --json` reports, cross-checked against the config file.
fn observe(c: &Copilot, name: &str) -> Result<Option<Entry>, ClientError> {
    let step = CopilotCli::SHOW.show(Op::Observe, name);
    let Some(got) = c.exact_get(
        name,
        &["mcp", "get", "--json", "--", name],
        &step,
        "not found",
    )?
    else {
        return Ok(None);
    };
    // Never echo `got.stdout`: it holds env and header values.
    let garbage = |reason: String| ClientError::Garbage {
        step: step.clone(),
        reason,
    };
    let shown: Value = serde_json::from_str(&got.stdout)
        .map_err(|e| garbage(format!("not JSON (line {})", e.line())))?;
    let Some(Value::Object(shown)) = shown.get(name) else {
        return Err(garbage(format!("no object for {name:?}")));
    };
    let mut shown = shown.clone();
    match shown.remove("source") {
        Some(Value::String(s)) if s == "user" => {}
        other => {
            let from = other
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or("an unnamed source");
            let path = shown
                .get("sourcePath")
                .and_then(Value::as_str)
                .map(|p| format!(" ({p})"))
                .unwrap_or_default();
            return Err(disagrees(
                name,
                format!(
                    "copilot runs it from its {from} config{path}, not the user one: a \
                     same-name entry there wins"
                ),
            ));
        }
    }
    // Whether it is disabled is a layer ([`layers`]), read from the settings file.
    shown.remove("enabled");
    let shown = to_claude_shape(&shown);
    c.agreed(name, &step, &got.config, |entry| {
        crate::entry::normalized(&shown) == crate::entry::normalized(&entry.raw)
    })
    .map(Some)
}

/// The argv of `copilot mcp add` for `entry`, and the values to keep out of error messages;
/// or why copilot would hold something else.
fn add_args(name: &str, entry: &Entry) -> Result<(Vec<String>, Vec<String>), ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client: "copilot",
        name: name.to_string(),
        reason,
    };
    if name.is_empty() {
        return Err(refuse("copilot refuses an empty server name".into()));
    }
    // The `key` map (env or headers) as `copilot mcp add <flag>` takes it: cut at the first
    // `sep` and trimmed, so a name holding `sep` or either with white space around is refused.
    let pairs = |key: &str, what: &str, flag: &str, sep: char, noun: &str| {
        let trimmed = |s: &str| s.trim() == s;
        let mut out = Vec::new();
        for (k, v) in string_map(&entry.raw, key) {
            if k.is_empty() || k.contains(sep) || !trimmed(&k) {
                return Err(refuse(format!(
                    "{what} {k:?}: `copilot mcp add {flag}` cuts at the first `{sep}` and trims \
                     white space, so it cannot hold that {noun} name"
                )));
            }
            if !trimmed(&v) {
                return Err(refuse(format!(
                    "{what} {k:?}: copilot trims white space around a value, so it would store \
                     another one"
                )));
            }
            out.push((k, v));
        }
        Ok(out)
    };
    let mut argv: Vec<String> = vec!["mcp".into(), "add".into()];
    let mut secrets = Vec::new();
    let tail = match &entry.transport {
        Transport::Stdio { command, args } => {
            only_keys(&entry.raw, &["type", "command", "args", "env"])
                .map_err(|e| refuse(e.to_string()))?;
            for (k, v) in pairs("env", "env", "--env K=V", '=', "variable")? {
                argv.push("--env".into());
                argv.push(format!("{k}={v}"));
                secrets.push(v);
            }
            let mut tail = vec![command.clone()];
            tail.extend(args.iter().cloned());
            tail
        }
        Transport::Remote { kind, url } => {
            only_keys(&entry.raw, &["type", "url", "headers"])
                .map_err(|e| refuse(e.to_string()))?;
            argv.push("--transport".into());
            argv.push(kind.clone());
            for (k, v) in pairs("headers", "header", "--header \"K: V\"", ':', "header")? {
                argv.push("--header".into());
                argv.push(format!("{k}: {v}"));
                secrets.push(v);
            }
            vec![url.clone()]
        }
    };
    // After `--` neither the name nor the command is read as an option.
    argv.push("--".into());
    argv.push(name.to_string());
    argv.extend(tail);
    Ok((argv, secrets))
}

/// Read `mcpServers` of a copilot MCP config file, each entry in the claude shape
/// ([`to_claude_shape`]). A missing file has no entries. Copilot reads the file past a byte
/// order mark, comments and trailing commas (1.0.22 and 1.0.102, checked with `copilot mcp
/// list --json`; `differential::copilot_runs_what_verify_identity_passes_in_every_variant_of_its_config`
/// found it): read as JSON with comments, the last of a key given twice winning.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    super::read_jsonc_servers(path, |_, m| to_claude_shape(m))
}

/// A copilot entry in the claude shape: `type` `local` or `stdio` dropped (the stdio
/// default), and `tools` dropped when it is `["*"]` (every tool, what copilot assumes without
/// it). Every other key stays as it is, for the check to see.
fn to_claude_shape(m: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in m {
        match (k.as_str(), v) {
            ("type", Value::String(t)) if t == "local" || t == "stdio" => {}
            ("tools", Value::Array(a)) if a.len() == 1 && a[0] == "*" => {}
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// The workspaces copilot started in `dir` may use: the top of the git work tree holding `dir`,
/// as `git rev-parse --show-toplevel` finds it ([`git_root`]: a `.git` directory git accepts,
/// or a `gitdir:` pointer to one; an empty `.git` directory, a dangling link or a FIFO does not
/// stop the search, an empty or odd `.git` file ends it outside any work tree), else `dir`
/// itself. Pinned with 1.0.102 (which runs git; without git it takes `dir`). More than one when
/// the files leave doubt: each is read.
fn workspace_roots(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for top in git_root::work_tree_tops(dir) {
        let root = top.unwrap_or_else(|| dir.to_path_buf());
        if !out.contains(&root) {
            out.push(root);
        }
    }
    out
}

/// The one workspace file copilot reads in the workspace `root`: `.mcp.json` there when it
/// exists (valid or not), else `.github/mcp.json`; `None` when neither does.
fn workspace_file_at(root: &Path) -> Option<PathBuf> {
    [root.join(".mcp.json"), root.join(".github/mcp.json")]
        .into_iter()
        .find(|f| std::fs::symlink_metadata(f).is_ok())
}

/// The workspace files copilot started in `dir` may read (one, unless the workspace is in
/// doubt), each with its workspace.
fn workspace_files(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    workspace_roots(dir)
        .into_iter()
        .filter_map(|root| workspace_file_at(&root).map(|f| (root, f)))
        .collect()
}

/// copilot's `config.json` (trusted folders, installed plugins) beside the user config `config`.
/// When that does not exist and the directory is `~/.copilot`, copilot moves
/// `$XDG_CONFIG_HOME/.copilot/config.json` there when it next starts, leaving a symlink behind
/// (its "XDG migration", `x4n` in 1.0.102's cli-main.js, seen with the real CLI): that file is
/// the one the agent will read.
fn config_json(config: &Path) -> PathBuf {
    let dir = config.parent().unwrap_or(Path::new("/"));
    let file = dir.join("config.json");
    if std::fs::symlink_metadata(&file).is_ok() || dir != crate::dirs::home().join(".copilot") {
        return file;
    }
    match crate::dirs::var("XDG_CONFIG_HOME") {
        Some(xdg) => {
            let old = PathBuf::from(xdg).join(".copilot").join("config.json");
            if std::fs::symlink_metadata(&old).is_ok() {
                old
            } else {
                file
            }
        }
        None => file,
    }
}

/// Whether `dir` is trusted by the `trustedFolders` of `config.json` in copilot's home (the
/// directory of `config`): `None` when that cannot be read.
fn trusted(config: &Path, dir: &Path) -> Option<bool> {
    let file = config_json(config);
    let text = match fsio::read_input_if_exists(&file, "client config", fsio::limits::DOCUMENT) {
        Ok(Some(t)) => t,
        Ok(None) => return Some(false),
        Err(_) => return None,
    };
    // copilot writes `//` lines at the top of config.json: it is JSON with comments.
    let doc = file_backed::parse_value(&text)?;
    let folders = match doc.get("trustedFolders") {
        None => return Some(false),
        Some(Value::Array(a)) => a,
        Some(_) => return None,
    };
    Some(
        folders
            .iter()
            .filter_map(Value::as_str)
            .any(|f| dir.starts_with(f)),
    )
}

/// Where a same-name entry wins over the user entry `name` of `config`, read-only (no copilot
/// binary needed): the workspace files copilot started in mcp-deploy's working directory may
/// read ([`workspace_files`]), trusted or not, and the MCP servers of its enabled installed
/// plugins ([`plugin_shadows`]).
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = plugin_shadows(config, name);
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(found);
    };
    for (root, file) in workspace_files(&cwd) {
        let trust = match trusted(config, &root) {
            Some(true) => "a trusted folder: copilot loads it",
            Some(false) => "copilot loads it once the folder is trusted",
            None => "whether the folder is trusted cannot be read",
        };
        let what = format!("workspace config {} ({trust})", file.display());
        match read_workspace(&file) {
            Ok(m) if m.contains_key(name) => found.push(what),
            Ok(_) => {}
            Err(e) => found.push(format!(
                "{what}; mcp-deploy cannot read it: {e}; copilot may, so it counts"
            )),
        }
    }
    Ok(found)
}

/// The installed plugins of `config.json` beside the user config (`installedPlugins`: each
/// `{name, marketplace, enabled, cache_path}`, as `copilot plugin install` records them) whose
/// MCP servers name `name`: a server a plugin brings wins over the user entry of the same name
/// (the real 1.0.102's `mcp get` then reports the plugin's, `source: plugin`). A plugin's
/// servers are its `<cache_path>/.mcp.json`; one whose servers cannot be read counts, named.
/// A plugin without `enabled: true` is not loaded. copilot drops the whole list when one entry
/// lacks a field it requires (`installed_at`, `marketplace`: checked), which is not reproduced
/// here: a plugin copilot ignores may be reported, never the other way round.
fn plugin_shadows(config: &Path, name: &str) -> Vec<String> {
    let file = config_json(config);
    let text = match super::read_config_text(&file) {
        Ok(Some(t)) => t,
        Ok(None) => return Vec::new(),
        Err(e) => {
            return vec![format!(
                "the installed plugins of {} (mcp-deploy cannot read it: {e}; copilot may, so \
                 they count)",
                file.display()
            )]
        }
    };
    // config.json is JSON with comments (copilot writes `//` lines at its top).
    let Some(doc) = file_backed::parse_value(&text) else {
        return vec![format!(
            "the installed plugins of {} (mcp-deploy cannot parse it; copilot may, so they \
             count)",
            file.display()
        )];
    };
    let Some(plugins) = doc.get("installedPlugins").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in plugins {
        // Without `enabled: true` copilot does not load it (checked: `false`, and none).
        if p.get("enabled") != Some(&Value::Bool(true)) {
            continue;
        }
        let label = format!(
            "{}@{}",
            p.get("name").and_then(Value::as_str).unwrap_or("?"),
            p.get("marketplace").and_then(Value::as_str).unwrap_or("?")
        );
        let Some(dir) = p.get("cache_path").and_then(Value::as_str) else {
            found.push(format!(
                "installed plugin {label} of {} (it names no cache_path: mcp-deploy cannot \
                 read its servers; copilot may, so it counts)",
                file.display()
            ));
            continue;
        };
        let servers = Path::new(dir).join(".mcp.json");
        match read_workspace(&servers) {
            Ok(m) if m.contains_key(name) => {
                found.push(format!("installed plugin {label} ({})", servers.display()))
            }
            Ok(_) => {}
            Err(e) => found.push(format!(
                "installed plugin {label} ({}; mcp-deploy cannot read it: {e}; copilot may, so \
                 it counts)",
                servers.display()
            )),
        }
    }
    found
}

/// A workspace file's servers: `mcpServers`, or, as copilot also reads it, the Claude-style
/// file without that wrapper (every top-level object).
fn read_workspace(file: &Path) -> Result<Map<String, Value>, ClientError> {
    let m = read_user_entries(file)?;
    if !m.is_empty() {
        return Ok(m);
    }
    let text = super::read_config_text(file)?.unwrap_or_default();
    let doc: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    Ok(match doc {
        Value::Object(o) if !o.contains_key("mcpServers") => {
            o.into_iter().filter(|(_, v)| v.is_object()).collect()
        }
        _ => Map::new(),
    })
}

/// Every registration copilot reads, for prune: its user config and the workspace file of the
/// working directory.
pub(crate) fn scopes(found: &mut Found, cwd: Option<&Path>) {
    let user = config_path();
    found.add("copilot", &user, "user", read_user_entries(&user));
    for (_, file) in cwd.map(workspace_files).unwrap_or_default() {
        if file != user {
            found.add("copilot", &file, "workspace", read_workspace(&file));
        }
    }
}

/// GitHub Copilot CLI, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct CopilotKind;

pub(crate) static ABOUT: super::table::About =
    // 1.0.22 is the first on npm with `copilot mcp` (docs/clients.md).
    super::table::about!(cli copilot "GitHub Copilot CLI" MCP_DEPLOY_COPILOT,
    npm ["@github/copilot"] (1, 0, 22) ..= (1, 0, 102));

super::table::folder_kind!(CopilotKind, about: ABOUT, layers: layers::read, opens: open,
    loads_config: layers::loads_config, load_layers: layers::load);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::{assert_refused, entries_read, entry};
    use serde_json::json;

    #[test]
    fn add_carries_command_args_and_env_after_a_double_dash() {
        let (argv, secrets) = add_args(
            "-ct",
            &entry(
                json!({"command":"-x y","args":["-a","b=c d","","--"],"env":{"T":"a=b","E":""}}),
            ),
        )
        .unwrap();
        assert_eq!(
            argv,
            [
                "mcp", "add", "--env", "T=a=b", "--env", "E=", "--", "-ct", "-x y", "-a", "b=c d",
                "", "--"
            ]
        );
        assert_eq!(secrets, ["a=b", ""]);
    }

    #[test]
    fn add_carries_a_remote_entry_with_its_transport_and_headers() {
        let (argv, secrets) = add_args(
            "r",
            &entry(
                json!({"type":"sse","url":"http://h/sse","headers":{"Authorization":"Bearer x:y"}}),
            ),
        )
        .unwrap();
        assert_eq!(
            argv,
            [
                "mcp",
                "add",
                "--transport",
                "sse",
                "--header",
                "Authorization: Bearer x:y",
                "--",
                "r",
                "http://h/sse"
            ]
        );
        assert_eq!(secrets, ["Bearer x:y"]);
    }

    #[test]
    fn what_copilot_cannot_hold_is_refused_by_key() {
        assert_refused(
            |e| add_args("n", e),
            [
                (json!({"command":"/x","cwd":"/"}), "key \"cwd\""),
                (json!({"command":"/x","tools":["a"]}), "key \"tools\""),
                (
                    json!({"command":"/x","env":{"K":" hunter2"}}),
                    "trims white space",
                ),
                (
                    json!({"command":"/x","env":{"A=B":"hunter2"}}),
                    "variable name",
                ),
                (
                    json!({"type":"http","url":"http://h","headers":{"K":"hunter2 "}}),
                    "trims white space",
                ),
                (
                    json!({"type":"http","url":"http://h","headers":{"K:L":"hunter2"}}),
                    "header name",
                ),
                (
                    json!({"type":"http","url":"http://h","headersHelper":"/h"}),
                    "key \"headersHelper\"",
                ),
            ],
        );
        assert_refused(
            |e| add_args("", e),
            [(json!({"command":"/x"}), "empty server name")],
        );
    }

    #[test]
    fn the_file_copilot_writes_maps_to_the_claude_shape() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mcp-config.json");
        // What `copilot mcp add` 1.0.102 wrote, byte for byte, plus hand-made variants.
        let m = entries_read(
            read_user_entries,
            &p,
            r#"{"mcpServers":{
              "srv":{"tools":["*"],"type":"local","command":"/bin/echo","args":["hi","there"],"env":{"A":"1"}},
              "h":{"tools":["*"],"type":"http","url":"http://h/mcp","headers":{"Authorization":"Bearer x:y"}},
              "s":{"tools":["*"],"type":"sse","url":"http://h/sse"},
              "plain":{"command":"/x","type":"stdio"},
              "some":{"tools":["a"],"type":"local","command":"/x","cwd":"/tmp","timeout":5}
            }}"#,
        );
        assert_eq!(
            m["srv"],
            json!({"command":"/bin/echo","args":["hi","there"],"env":{"A":"1"}})
        );
        assert_eq!(
            m["h"],
            json!({"type":"http","url":"http://h/mcp","headers":{"Authorization":"Bearer x:y"}})
        );
        assert_eq!(m["s"], json!({"type":"sse","url":"http://h/sse"}));
        assert_eq!(m["plain"], json!({"command":"/x"}));
        // Keys the check does not know stay, so that it fails on them.
        assert_eq!(
            m["some"],
            json!({"tools":["a"],"command":"/x","cwd":"/tmp","timeout":5})
        );
        // Copilot reads past a BOM, comments and trailing commas; the rest is refused, naming
        // what is wrong and never a value.
        std::fs::write(
            &p,
            "\u{feff}// hand-edited\n{\"mcpServers\": {/* x */ \"a\": {\"command\": \"/x\",},},}",
        )
        .unwrap();
        assert_eq!(
            read_user_entries(&p).unwrap()["a"],
            json!({"command": "/x"})
        );
        for (text, want) in [
            (
                "{\"mcpServers\": {\"s\": {\"env\": {\"T\": \"hunter2\"}}",
                "line 1",
            ),
            ("[\"hunter2\"]", "not a JSON object"),
            ("{\"mcpServers\": [\"hunter2\"]}", "not an object"),
            (
                "{'mcpServers': {'hunter2': {}}}",
                "not valid JSON with comments",
            ),
        ] {
            std::fs::write(&p, text).unwrap();
            let err = read_user_entries(&p).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
    }

    #[test]
    fn home_is_copilot_home_then_dot_copilot_and_a_relative_one_is_refused() {
        assert_eq!(
            resolve_home(Some("/c".into()), "/h".into()).unwrap(),
            PathBuf::from("/c")
        );
        assert_eq!(
            resolve_home(None, "/h".into()).unwrap(),
            PathBuf::from("/h/.copilot")
        );
        let err = resolve_home(Some("rel".into()), "/h".into()).unwrap_err();
        assert!(err.to_string().contains("relative path rel"), "{err}");
        assert!(err.help().unwrap().contains("absolute"));
    }

    #[test]
    fn the_workspace_file_is_the_git_roots_mcp_json_else_its_github_mcp_json() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(root.join(".github")).unwrap();
        let files =
            |d: &Path| -> Vec<PathBuf> { workspace_files(d).into_iter().map(|(_, f)| f).collect() };
        assert_eq!(files(&sub), Vec::<PathBuf>::new());
        std::fs::write(root.join(".github/mcp.json"), "{}").unwrap();
        // Not a git work tree: the directory itself is the workspace.
        assert_eq!(files(&sub), Vec::<PathBuf>::new());
        assert_eq!(files(root), vec![root.join(".github/mcp.json")]);
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(root.join(".git").join(d)).unwrap();
        }
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(files(&sub), vec![root.join(".github/mcp.json")]);
        // `.mcp.json` wins when it exists, even an empty one.
        std::fs::write(root.join(".mcp.json"), "").unwrap();
        assert_eq!(files(&sub), vec![root.join(".mcp.json")]);
    }

    #[test]
    fn a_folder_is_trusted_by_itself_or_a_parent_in_config_json() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join(CONFIG_FILE);
        assert_eq!(trusted(&config, Path::new("/w/p")), Some(false));
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"trustedFolders":["/w"]}"#,
        )
        .unwrap();
        assert_eq!(trusted(&config, Path::new("/w/p")), Some(true));
        assert_eq!(trusted(&config, Path::new("/wx")), Some(false));
        // As copilot itself writes the file: `//` lines before the object.
        std::fs::write(
            dir.path().join("config.json"),
            "// User settings belong in settings.json.\n// This file is managed automatically.\n\
             {\"trustedFolders\":[\"/w\"]}\n",
        )
        .unwrap();
        assert_eq!(trusted(&config, Path::new("/w/p")), Some(true));
        std::fs::write(dir.path().join("config.json"), "{").unwrap();
        assert_eq!(trusted(&config, Path::new("/w/p")), None);
    }
}
