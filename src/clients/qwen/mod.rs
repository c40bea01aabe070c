//! Qwen Code, through its CLI (`qwen mcp add|remove -s user`). Qwen Code is a fork of Gemini
//! CLI, and its `mcp` commands are gemini's with other paths; what is the same is gemini's
//! code, called from here ([`super::gemini`]). Found in `@qwen-code/qwen-code` 0.24.4's bundle
//! (`packages/cli/src/commands/mcp/add.ts`, `remove.ts`, `config/settings.ts`,
//! `config/storage-paths-lite.ts`, `config/mcpServers.ts`) and pinned by tests against the
//! real CLI (0.21.2, 0.23.4 and 0.24.4):
//!
//! - The user settings are `$QWEN_HOME/settings.json` when `QWEN_HOME` is set (a leading `~`
//!   and a relative path resolved as qwen does), else `~/.qwen/settings.json`: `mcpServers`,
//!   JSON with comments. A stdio entry is in the claude shape; a streamable HTTP one is
//!   `httpUrl`, an SSE one `url` with no `type` (qwen's `createTransport` takes `url` for SSE
//!   whatever `type` says), read here as `type: http` and `type: sse`.
//! - `mcp add` overwrites an existing name (it only says so) and `remove` of a missing name
//!   exits 0 ("not found in user settings"), as gemini's do; its yargs parser rewrites
//!   number-like arguments (`1.50` becomes `1.5`), drops an empty env value and trims header
//!   names and values (an env value's `=` it keeps, unlike gemini and its own 0.15.10).
//!   Saving writes every user server back with
//!   `$VAR`/`${VAR}` references expanded from its own environment, so it runs with only
//!   [`PASSED`]; a reference to one of those, or a `${VAR:-default}`, is refused before a
//!   mutating call ([`super::gemini::would_expand`]). HOME is the caller's (a test's scratch
//!   home), QWEN_HOME the directory of the settings file read, and TMPDIR this run's scratch
//!   directory (its launcher writes Node's compile cache there).
//! - The oldest supported release is 0.21.2: 0.15.10's `mcp remove` says it removed the entry
//!   and leaves it in the file when the file holds another server, and 0.1.3 to 0.10.1 take
//!   `-e`/`-H` as greedy lists that swallow the name (docs/clients.md, Qwen Code versions).
//! - Shadows: qwen merges system defaults, user, workspace (`.qwen/settings.json` of the
//!   working directory, when it is trusted) and system settings in that order, each later
//!   server of the same name replacing the earlier; a project's `.mcp.json` (Claude Code's
//!   shape, 0.24's `assembleMcpServers`) wins over the user's too, even while it waits for
//!   approval. The workspace file counts whether or not the folder is trusted (failing rather
//!   than passing).

pub(crate) mod layers;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::cli_driven::{AddArgs, CliDriven, Dialect, Spelling};
use super::runner::Runner;
use super::{ClientError, ClientOptions};
use crate::entry::Entry;

/// The variables qwen runs with (and may expand in what it saves).
pub(crate) const PASSED: &[&str] = &["PATH", "HOME", "QWEN_HOME", "TMPDIR"];

/// What qwen does its own way ([`super::cli_driven`]): nothing beyond gemini's guard.
pub(crate) struct QwenCli;

pub(crate) type Qwen = CliDriven<QwenCli>;

pub(crate) fn open(
    row: &super::table::About,
    options: &ClientOptions,
) -> Result<Qwen, ClientError> {
    let (home, config) = match options.home("qwen") {
        Some(home) => (home.to_path_buf(), home.join(".qwen").join("settings.json")),
        None => (crate::dirs::home(), config_path()),
    };
    // QWEN_HOME set to the directory mcp-deploy reads (every supported release takes its
    // settings from `$QWEN_HOME/settings.json`), so that none looks for it in `~/.env`.
    let qwen_dir = config.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut env: Vec<(&'static str, OsString)> = vec![
        ("HOME", home.into_os_string()),
        ("QWEN_HOME", qwen_dir.into_os_string()),
    ];
    // Its launcher is a node script that finds node on PATH.
    if let Some(path) = std::env::var_os("PATH") {
        env.push(("PATH", path));
    }
    let runner = Runner::of_client(row, options, env)?
        .clearing_env()
        // Its launcher keeps Node's compile cache in `$TMPDIR/node-compile-cache` (0.24's
        // cli-entry.js `enableCompileCache`): into this run's scratch directory, removed after.
        .scratch_for(&["TMPDIR"])
        .detect_version("qwen")?;
    Ok(CliDriven {
        runner,
        config,
        dialect: QwenCli,
    })
}

impl Dialect for QwenCli {
    const KIND: &'static dyn super::table::Kind = &QwenKind;
    // A fork of gemini: the same calls and answers at user scope.
    const REMOVE_MISSING: Option<&'static str> = super::gemini::REMOVE_MISSING;
    const REWRITES_OTHERS: bool = true;
    const SHOW: Spelling = super::gemini::user_scope_spelling!("qwen");
    const REMOVE: &'static [&'static str] = super::gemini::REMOVE;
    const ADD_ARGS: AddArgs = add_args;

    super::gemini::guard_refusing_expansion!("qwen", PASSED);
}

fn add_args(name: &str, entry: &Entry) -> Result<(Vec<String>, Vec<String>), ClientError> {
    // Every supported release keeps an env value's `=` (0.15.10 cut it at the first).
    super::gemini::add_args_for("qwen", false, name, entry)
}

/// Where qwen keeps its user settings for this environment, found without its binary:
/// `$QWEN_HOME/settings.json`, else `~/.qwen/settings.json`. QWEN_HOME may also come from
/// `~/.qwen/.env` or `~/.env` (0.24's `preResolveHomeEnvOverrides`), read here the same way.
pub(crate) fn config_path() -> PathBuf {
    let home = crate::dirs::home();
    let from_env = crate::dirs::var("QWEN_HOME").or_else(|| {
        [home.join(".qwen/.env"), home.join(".env")]
            .iter()
            .find_map(|f| qwen_home_in(f))
    });
    qwen_dir(from_env, &home).join("settings.json")
}

/// `QWEN_HOME=` of a dotenv file, when it sets it to something.
fn qwen_home_in(file: &Path) -> Option<OsString> {
    let text =
        crate::fsio::read_input_if_exists(file, "dotenv file", crate::fsio::limits::DOCUMENT)
            .ok()??;
    dotenv_value(&text, "QWEN_HOME").map(OsString::from)
}

/// The last value a dotenv file gives `key` on a line of its own (`KEY=value`, `export`,
/// quotes and a trailing `# comment` as dotenv reads them; a quoted value spanning lines is
/// not followed).
fn dotenv_value(text: &str, key: &str) -> Option<String> {
    let mut found = None;
    for line in text.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some(rest) = line.strip_prefix(key) else {
            continue;
        };
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim();
        let value = match value.chars().next() {
            Some(q @ ('"' | '\'' | '`')) => match value[1..].find(q) {
                Some(end) => value[1..1 + end].to_string(),
                None => continue,
            },
            _ => value.split('#').next().unwrap_or("").trim().to_string(),
        };
        found = Some(value).filter(|v| !v.is_empty());
    }
    found
}

/// qwen's directory: `QWEN_HOME` with `~` and a relative path resolved (against the working
/// directory), else `<home>/.qwen`.
fn qwen_dir(qwen_home: Option<OsString>, home: &Path) -> PathBuf {
    let Some(dir) = qwen_home.filter(|d| !d.is_empty()) else {
        return home.join(".qwen");
    };
    let dir = PathBuf::from(dir);
    let dir = match dir.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => dir,
    };
    if dir.is_absolute() {
        return dir;
    }
    std::env::current_dir().unwrap_or_default().join(dir)
}

/// Where a same-name entry shadows the user entry `name` of `config`, read-only.
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = Vec::new();
    type Read = fn(&Path) -> Result<Map<String, Value>, ClientError>;
    let mut candidates: Vec<(&str, PathBuf, Read)> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        let f = cwd.join(".qwen").join("settings.json");
        if f != *config {
            candidates.push(("workspace settings", f, read_user_entries));
        }
        candidates.push(("project", cwd.join(".mcp.json"), read_project));
    }
    candidates.push(("system settings", system_settings(), read_user_entries));
    for (what, file, read) in candidates {
        super::kit::shadows::note(&mut found, what, &file, read(&file), name, "qwen");
    }
    Ok(found)
}

/// Every registration qwen reads, for prune: user, workspace, the project's `.mcp.json`,
/// system, and each extension's `qwen-extension.json`.
pub(crate) fn scopes(found: &mut super::scopes::Found, cwd: Option<&Path>) {
    let n = "qwen";
    let user = config_path();
    found.add(n, &user, "user", read_user_entries(&user));
    if let Some(c) = cwd {
        let f = c.join(".qwen/settings.json");
        if f != user {
            found.add(n, &f, "workspace", read_user_entries(&f));
        }
        let f = c.join(".mcp.json");
        found.add(n, &f, "project", read_project(&f));
    }
    let system = system_settings();
    found.add(n, &system, "system", read_user_entries(&system));
    for (name, dir) in super::scopes::entries_of(&user.with_file_name("extensions")) {
        let f = dir.join("qwen-extension.json");
        found.add(n, &f, &format!("extension {name}"), read_user_entries(&f));
    }
}

/// `$QWEN_CODE_SYSTEM_SETTINGS_PATH`, else `/etc/qwen-code/settings.json`
/// (`getSystemSettingsPath`).
pub(crate) fn system_settings() -> PathBuf {
    crate::dirs::var("QWEN_CODE_SYSTEM_SETTINGS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/qwen-code/settings.json"))
}

/// The servers of a project's `.mcp.json` (JSON with comments, Claude Code's shape).
fn read_project(path: &Path) -> Result<Map<String, Value>, ClientError> {
    let Some(doc) = super::gemini::read_settings(path)? else {
        return Ok(Map::new());
    };
    match doc.get("mcpServers") {
        Some(Value::Object(m)) => Ok(m.clone()),
        _ => Ok(Map::new()),
    }
}

/// Read `mcpServers` of a qwen settings file (JSON with comments), each entry in the claude
/// shape. A missing file has no entries.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    super::gemini::read_servers(path, to_claude_shape)
}

/// `httpUrl` becomes `type: http`, `url`; a `url` without `command` or `httpUrl` is SSE
/// whatever its `type` says (qwen's `createTransport`); a stdio entry is kept as it is.
fn to_claude_shape(mut m: Map<String, Value>) -> Map<String, Value> {
    if m.contains_key("command") {
        return m;
    }
    let (kind, url) = match (m.remove("httpUrl"), m.remove("url")) {
        // qwen takes `httpUrl` first, and ignores a `url` beside it.
        (Some(u @ Value::String(_)), _) => ("http", u),
        (None, Some(u @ Value::String(_))) => ("sse", u),
        (h, u) => {
            // Neither holds a string: leave the entry as qwen has it, for the entry check to
            // refuse.
            if let Some(h) = h {
                m.insert("httpUrl".into(), h);
            }
            if let Some(u) = u {
                m.insert("url".into(), u);
            }
            return m;
        }
    };
    m.remove("type");
    let mut out = Map::new();
    out.insert("type".into(), kind.into());
    out.insert("url".into(), url);
    out.extend(m);
    out
}

/// Qwen Code, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct QwenKind;

static ABOUT: super::table::About =
    // 0.15.10's `mcp remove` can leave the entry (the module's header).
    super::table::about!(cli qwen "Qwen Code" MCP_DEPLOY_QWEN,
    npm ["@qwen-code/qwen-code"] (0, 21, 2) ..= (0, 24, 4));

super::table::folder_kind!(QwenKind, about: ABOUT, layers: layers::read, opens: open,
    load_layers: layers::load);

#[cfg(test)]
mod tests;
