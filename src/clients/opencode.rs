//! OpenCode (npm `opencode-ai`), a locally managed one: its `mcp add` is interactive, so
//! mcp-deploy edits its user config file itself ([`super::file_backed`]).
//!
//! What OpenCode 1.18.33 reads (from its bundled source and checked with the real binary):
//! - The user config directory is `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`. In
//!   it `config.json`, `opencode.json` and `opencode.jsonc` are *all* read and deep-merged, in
//!   that order (a later file wins key by key). The file OpenCode itself writes is the first
//!   that exists of `opencode.jsonc`, `opencode.json`, `config.json`, else a new
//!   `opencode.jsonc`: mcp-deploy writes the same one, and reports a same-name server in the
//!   other two as shadowing (its keys are merged into ours).
//! - Deep-merged after the user config, so winning over it: the file `$OPENCODE_CONFIG`,
//!   project `opencode.json(c)` from the working directory up to the git root,
//!   `.opencode/opencode.json(c)` there and in `~`, `$OPENCODE_CONFIG_DIR/opencode.json(c)`,
//!   `$OPENCODE_CONFIG_CONTENT`, and the managed `/etc/opencode/opencode.json(c)`. Merged
//!   before it (so adding keys to our entry): remote organisation defaults,
//!   `<url>/.well-known/opencode` of every `wellknown` login in `auth.json`, which cannot be
//!   read offline and so count whenever such a login exists. Each is reported as shadowing.
//! - Entries: `{"type":"local","command":[cmd, ...args],"environment":{...},"enabled":true}`
//!   and `{"type":"remote","url":...,"headers":{...}}`. OpenCode substitutes `{env:NAME}`
//!   (an unset one becomes the empty string) and `{file:path}` anywhere in the file's text,
//!   and leaves `${NAME}` alone: claude's `${NAME}` is written as `{env:NAME}` and read back;
//!   a `${NAME:-default}` (OpenCode has no default) and a literal `{env:` or `{file:` are
//!   refused; an entry holding a literal `${` is read in OpenCode's own shape, which no
//!   check accepts.
//! - A remote server is tried as streamable HTTP, then SSE: claude's `http` maps to
//!   `remote`; `sse` cannot be pinned and is refused.
//! - An OpenCode server started elsewhere (`opencode serve`, reached with `--attach URL` and
//!   `OPENCODE_SERVER_PASSWORD`) reads its own config, once: it is not supported, and a run
//!   whose environment points at one (`OPENCODE_SERVER_PASSWORD`/`_USERNAME` set) is refused.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::file_backed::{self, map_refs, JsoncFile};
use super::runner::{self, Runner};
use super::{Client, ClientError, ClientOptions, Op};
use crate::entry::Entry;

/// The npm package and version the project is tested with.
pub(crate) const NPM_PACKAGE: &str = "opencode-ai@1.18.33";

/// The variables of ours the confirming `opencode debug config` runs with; its HOME and XDG
/// directories are a scratch copy (see [`Opencode::confirm`]).
const PASSED: &[&str] = &["PATH"];

/// What OpenCode writes into a config file it creates.
const NEW_FILE: &str = "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n";

/// The user config files OpenCode merges, lowest first.
pub(crate) const USER_FILES: [&str; 3] = ["config.json", "opencode.json", "opencode.jsonc"];

pub(crate) struct Opencode {
    file: JsoncFile,
    /// The real opencode and its deadline, to confirm each write (`None` for the commands
    /// that only read).
    binary: Option<(PathBuf, std::time::Duration)>,
    /// OpenCode's release, when known ([`super::version::detect`]).
    version: Option<super::version::Version>,
}

impl Opencode {
    pub(crate) fn open(options: &ClientOptions) -> Result<Opencode, ClientError> {
        if let Some(var) = ["OPENCODE_SERVER_PASSWORD", "OPENCODE_SERVER_USERNAME"]
            .into_iter()
            .find(|v| crate::dirs::var(v).is_some())
        {
            return Err(ClientError::NotSupported {
                client: "opencode",
                reason: format!(
                    "{var} is set, so the OpenCode in use is a server started elsewhere \
                     (`opencode serve`, reached with --attach): an externally managed OpenCode"
                ),
                help: "mcp-deploy registers servers with a locally managed OpenCode only (its \
                       user config on this host); register them on the host that runs the \
                       server, or unset the variable if no server is involved"
                    .into(),
            });
        }
        let binary = if options.calls_binary {
            let runner = Runner::open(
                "opencode",
                options.binary("opencode"),
                true,
                options.timeout,
                Vec::new(),
                format!(
                    "install OpenCode (npm install -g {NPM_PACKAGE}), or pass --opencode PATH \
                     (or set MCP_DEPLOY_OPENCODE): it confirms each write"
                ),
            )?
            .detect_version("opencode")?;
            Some((runner.binary, options.timeout, runner.version))
        } else {
            None
        };
        // `status` runs no opencode: its release is read from its package files, if found.
        let version = match &binary {
            Some((_, _, v)) => *v,
            None => options
                .binary("opencode")
                .map(Path::to_path_buf)
                .or_else(|| which::which("opencode").ok())
                .and_then(|b| super::version::detect("opencode", &b, None).ok().flatten()),
        };
        let binary = binary.map(|(b, t, _)| (b, t));
        Ok(Opencode {
            file: JsoncFile {
                path: config_path(),
                key: "mcp",
                new_file: NEW_FILE,
            },
            binary,
            version,
        })
    }

    /// Ask the real OpenCode what it resolves `name` to (`opencode debug config`, which starts
    /// no server) and compare with what was written, `{env:NAME}` substituted as OpenCode
    /// does in the environment it ran with. Its output holds substituted environment values:
    /// it is never shown, and a difference names keys only.
    ///
    /// Any opencode command edits files: it inserts `"$schema"` into a config file without
    /// one, writes a `.gitignore` into the config directory, keeps a database and logs in its
    /// data and state directories. So it runs on a scratch copy of the three user files
    /// (`XDG_CONFIG_HOME`, and the data, state and cache directories, in a temporary
    /// directory), and with a scratch HOME holding a copy of `~/.opencode/opencode.json(c)`
    /// (the managed directory still applies): what it resolves is what these bytes mean, and
    /// the user's files are not touched.
    ///
    /// OpenCode loads (executes) every plugin it finds while it reads its config: the files of
    /// `~/.opencode/plugin(s)/` and the packages or `file://` URLs a config's `plugin` key
    /// names (it even installs packages into `~/.opencode`). A confirmation must run no code
    /// of the config's, so the scratch HOME has no plugin directory and each copy is made
    /// without its top-level `plugin` key (and without a key OpenCode's `{env:...}`/`{file:...}`
    /// substitution could turn into it). What a plugin could change is reported as shadowing
    /// instead ([`shadows_in`]).
    fn confirm(&self, name: &str, written: &Value) -> Result<(), ClientError> {
        let Some((binary, timeout)) = &self.binary else {
            return Ok(());
        };
        let step = "opencode debug config".to_string();
        let io = |e: std::io::Error| ClientError::Spawn {
            step: step.clone(),
            reason: format!("cannot prepare its scratch copy: {e}"),
        };
        let scratch = tempfile::Builder::new()
            .prefix("mcp-deploy-opencode.")
            .tempdir()
            .map_err(io)?;
        let copy = scratch.path().join("config").join("opencode");
        std::fs::create_dir_all(&copy).map_err(io)?;
        let real_dir = self.file.path.parent().unwrap_or(Path::new("."));
        let home_copy = scratch.path().join("home").join(".opencode");
        std::fs::create_dir_all(&home_copy).map_err(io)?;
        // Its TMPDIR must exist: 1.x unpacks a native library there before anything else.
        std::fs::create_dir_all(scratch.path().join("tmp")).map_err(io)?;
        let home_dir = crate::dirs::home().join(".opencode");
        let files = USER_FILES
            .iter()
            .map(|f| (real_dir.join(f), copy.join(f)))
            .chain(
                ["opencode.json", "opencode.jsonc"]
                    .iter()
                    .map(|f| (home_dir.join(f), home_copy.join(f))),
            );
        for (from, to) in files {
            let text = crate::fsio::read_input_if_exists(
                &from,
                "client config",
                crate::fsio::limits::CLIENT_JSONC,
            )
            .map_err(|e| ClientError::File {
                path: from.clone(),
                reason: e.source.to_string(),
            })?;
            if let Some(text) = text {
                let dir = from.parent().unwrap_or(Path::new("/"));
                let text = absolute_file_refs(&text, dir, &crate::dirs::home());
                // Text mcp-deploy cannot parse is copied as it is: OpenCode refuses it too,
                // before it loads any plugin.
                let text =
                    file_backed::without_top_keys(&text, |k| k == "plugin" || substituted(k))
                        .unwrap_or(text);
                std::fs::write(to, text).map_err(io)?;
            }
        }
        let mut env: Vec<(&'static str, std::ffi::OsString)> = PASSED
            .iter()
            .filter_map(|k| std::env::var_os(k).map(|v| (*k, v)))
            .collect();
        for (var, sub) in [
            ("HOME", "home"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CACHE_HOME", "cache"),
            // It makes `os.tmpdir()/opencode` at every start (its Global paths): without
            // TMPDIR that is the host's /tmp/opencode, outside every home it was given.
            ("TMPDIR", "tmp"),
        ] {
            env.push((var, scratch.path().join(sub).into_os_string()));
        }
        env.push(("OPENCODE_DISABLE_AUTOUPDATE", "1".into()));
        env.push(("OPENCODE_DISABLE_MODELS_FETCH", "1".into()));
        // At every start OpenCode installs its default plugins (auth helpers) from npm with its
        // bundled bun and loads them: the confirmation would download and run code, and 1.0.x
        // fails outright where that bun cannot reach or trust the registry. They change no
        // server (a plugin the user configures is refused before this: see above).
        env.push(("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()));
        // The user-level view: no project file of wherever the call runs.
        env.push(("OPENCODE_DISABLE_PROJECT_CONFIG", "1".into()));
        let seen: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned()))
            .collect();
        let runner = Runner::open("opencode", Some(binary), true, *timeout, env, String::new())?
            .clearing_env();
        let out = runner.call_raw(&["debug", "config"], &step)?;
        if !out.status.success() {
            // Its config errors quote the offending entry, values included: only the first
            // line (which names the file) is kept, with known values redacted.
            let first = strip_ansi(
                out.stderr
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or(""),
            );
            let first = first
                .split(" ↳")
                .next()
                .unwrap_or("")
                .trim()
                .replace(&*copy.to_string_lossy(), &real_dir.to_string_lossy());
            let mut held = self
                .user_entries()
                .map(|m| runner::secret_strings(&m))
                .unwrap_or_default();
            let mut one = Map::new();
            one.insert(name.to_string(), written.clone());
            held.extend(runner::secret_strings(&one));
            return Err(ClientError::Failed {
                step,
                status: out.status.to_string(),
                stderr: if first.is_empty() {
                    "no output on stderr".into()
                } else {
                    crate::entry::secrets::redact(&first, &held)
                },
            });
        }
        let start = out.stdout.find('{').unwrap_or(0);
        let resolved: Value =
            serde_json::from_str(&out.stdout[start..]).map_err(|_| ClientError::Garbage {
                step: step.clone(),
                reason: "not the JSON of a config".into(),
            })?;
        let got = resolved.get("mcp").and_then(|m| m.get(name));
        let want = substitute(written, &seen);
        let differs = match (got, &want) {
            (None, _) => vec!["the whole entry (OpenCode does not list it)".to_string()],
            (Some(Value::Object(g)), Value::Object(w)) => {
                let keys: std::collections::BTreeSet<&String> = g
                    .keys()
                    .chain(w.keys())
                    .filter(|k| !same_resolved(k, g.get(*k), w.get(*k)))
                    .collect();
                keys.into_iter().cloned().collect()
            }
            _ => vec!["the whole entry".to_string()],
        };
        if differs.is_empty() {
            return Ok(());
        }
        Err(ClientError::Disagrees {
            name: name.to_string(),
            reason: format!(
                "OpenCode resolves it to something else than mcp-deploy wrote to {} ({} \
                 differ: a same-name entry in another of its config files is merged into it)",
                self.file.path.display(),
                differs.join(", ")
            ),
        })
    }
}

/// Whether OpenCode would substitute part of `s` (`{env:NAME}`, `{file:path}`) before it
/// parses the file's text: a property name holding one means what OpenCode reads as that
/// name cannot be known from the file.
pub(crate) fn substituted(s: &str) -> bool {
    s.contains("{env:") || s.contains("{file:")
}

/// `text` with each `{file:path}` that OpenCode would resolve against the file's directory
/// (a relative path) or the home directory (`~/...`) made absolute, so that the scratch copy
/// reads the same files as the original: a legitimate `"apiKey": "{file:./key}"` must not
/// fail the confirmation. OpenCode takes the path from the raw text; a directory whose name
/// would need escaping in JSON is left alone (the confirmation then fails, safely).
fn absolute_file_refs(text: &str, dir: &Path, home: &Path) -> String {
    let plain = |p: &Path| {
        let s = p.to_string_lossy().into_owned();
        (!s.contains(['"', '\\', '}']) && !s.chars().any(char::is_control)).then_some(s)
    };
    let (Some(dir), Some(home)) = (plain(dir), plain(home)) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{file:") {
        let after = &rest[i + 6..];
        out.push_str(&rest[..i + 6]);
        let Some(end) = after.find('}') else {
            rest = after;
            continue;
        };
        let path = &after[..end];
        if let Some(under) = path.strip_prefix("~/") {
            out.push_str(&format!("{home}/{under}"));
        } else if path.starts_with('/') || path.starts_with('{') || path.is_empty() {
            out.push_str(path);
        } else {
            out.push_str(&format!("{dir}/{path}"));
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// `s` without terminal colour sequences (`ESC [ ... m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Whether the resolved value `g` of key `k` is the written `w`. `debug config` prints
/// `***` for a string it deems secret (header values, a variable named like a token, a URL
/// with credentials): such a string matches any written string (the file read-back has
/// compared it already).
fn same_resolved(_k: &str, g: Option<&Value>, w: Option<&Value>) -> bool {
    match (g, w) {
        (Some(g), Some(w)) => masked_eq(g, w),
        (None, None) => true,
        _ => false,
    }
}

fn masked_eq(g: &Value, w: &Value) -> bool {
    match (g, w) {
        (Value::String(m), Value::String(_)) if m == "***" => true,
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(g, w)| masked_eq(g, w))
        }
        (Value::Object(g), Value::Object(w)) => {
            g.len() == w.len()
                && g.iter()
                    .all(|(k, x)| w.get(k).is_some_and(|y| masked_eq(x, y)))
        }
        _ => g == w,
    }
}

/// `v` with every `{env:NAME}` replaced by NAME's value in `env`, else the empty string (as
/// OpenCode does).
fn substitute(v: &Value, env: &[(String, String)]) -> Value {
    match v {
        Value::String(s) => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find("{env:") {
                let after = &rest[i + 5..];
                let Some(end) = after.find('}') else { break };
                out.push_str(&rest[..i]);
                let name = &after[..end];
                if let Some((_, val)) = env.iter().find(|(k, _)| k == name) {
                    out.push_str(val);
                }
                rest = &after[end + 1..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, env)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), substitute(x, env)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
pub(crate) fn config_dir() -> PathBuf {
    crate::dirs::var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::dirs::home().join(".config"))
        .join("opencode")
}

/// The user config file OpenCode writes (and so mcp-deploy): the first of `opencode.jsonc`,
/// `opencode.json`, `config.json` that exists (a dangling link counts: it is refused later),
/// else `opencode.jsonc`.
pub(crate) fn config_path() -> PathBuf {
    let dir = config_dir();
    USER_FILES
        .iter()
        .rev()
        .map(|f| dir.join(f))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
        .unwrap_or_else(|| dir.join("opencode.jsonc"))
}

/// The user entries of `path` in the claude shape.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    Ok(file_backed::read_servers(path, "mcp")?
        .into_iter()
        .map(|(k, v)| {
            let shaped = to_claude(&v);
            (k, shaped)
        })
        .collect())
}

/// Where else OpenCode takes a server `name` from, merging it with the user entry of
/// `config`; one description each. Read-only, no binary needed.
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = substitution_hazards("the user config", config, name);
    let mut seen = std::collections::HashSet::new();
    let mut look = |what: &str, file: PathBuf| {
        if !seen.insert(file.clone()) {
            return;
        }
        found.extend(plugins_named_in(what, &file));
        if file == *config {
            return;
        }
        found.extend(substitution_hazards(what, &file, name));
        match file_backed::read_servers(&file, "mcp") {
            Ok(m) if m.contains_key(name) => found.push(format!("{what} {}", file.display())),
            Ok(_) => {}
            Err(e) => found.push(format!(
                "{what} {} (mcp-deploy cannot read it: {e}; OpenCode may, so it counts)",
                file.display()
            )),
        }
    };
    let dir = config
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(config_dir);
    for f in USER_FILES {
        look("user config merged with it", dir.join(f));
    }
    if let Some(f) = crate::dirs::var("OPENCODE_CONFIG") {
        look("OPENCODE_CONFIG", PathBuf::from(f));
    }
    let mut dirs: Vec<(&str, PathBuf)> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        if crate::dirs::var("OPENCODE_DISABLE_PROJECT_CONFIG").is_none() {
            for d in project_dirs(&cwd) {
                dirs.push(("project config", d.clone()));
                dirs.push(("project config", d.join(".opencode")));
            }
        }
    }
    dirs.push(("config", crate::dirs::home().join(".opencode")));
    if let Some(d) = crate::dirs::var("OPENCODE_CONFIG_DIR") {
        dirs.push(("OPENCODE_CONFIG_DIR", PathBuf::from(d)));
    }
    let managed = crate::dirs::var("OPENCODE_TEST_MANAGED_CONFIG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/opencode"));
    dirs.push(("managed config", managed));
    let mut plugin_dirs = vec![dir.clone()];
    // OpenCode's config directories (not a project's own `plugin/` folder).
    plugin_dirs.extend(
        dirs.iter()
            .filter(|(what, d)| d.ends_with(".opencode") || *what == "OPENCODE_CONFIG_DIR")
            .map(|(_, d)| d.clone()),
    );
    for (what, d) in dirs {
        for f in ["opencode.json", "opencode.jsonc"] {
            if std::fs::symlink_metadata(d.join(f)).is_ok() {
                look(what, d.join(f));
            }
        }
    }
    // Plugin files of every config directory OpenCode loads (and so runs).
    for d in plugin_dirs {
        for sub in ["plugin", "plugins"] {
            let pd = d.join(sub);
            // OpenCode loads `{plugin,plugins}/*.{ts,js}` (dot files and links included).
            let any = std::fs::read_dir(&pd).is_ok_and(|r| {
                r.filter_map(Result::ok).any(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.ends_with(".ts") || n.ends_with(".js")
                })
            });
            if any {
                found.push(format!(
                    "plugin directory {} (OpenCode runs its plugins when it starts, and a \
                     plugin can rewrite any server; mcp-deploy does not run them, so it counts)",
                    pd.display()
                ));
            }
        }
    }
    if let Some(content) = crate::dirs::var("OPENCODE_CONFIG_CONTENT") {
        let text = content.to_string_lossy().into_owned();
        match file_backed::parse_value(&text) {
            Some(d)
                if d.get("mcp").and_then(|m| m.get(name)).is_none()
                    && d.get("plugin").is_none_or(empty) => {}
            Some(_) => found.push("OPENCODE_CONFIG_CONTENT".into()),
            None => found.push(
                "OPENCODE_CONFIG_CONTENT (mcp-deploy cannot read it; OpenCode may, so it counts)"
                    .into(),
            ),
        }
    }
    found.extend(remote_defaults());
    Ok(found)
}

/// Whether a `plugin` value names no plugin.
fn empty(v: &Value) -> bool {
    v.is_null() || v.as_array().is_some_and(|a| a.is_empty())
}

/// The plugins `file` names in its `plugin` key (or in a key OpenCode's substitution may turn
/// into it): OpenCode runs each when it starts, and a plugin's `config` hook can rewrite any
/// server (checked with the real binary), so a verified entry is not what it would run.
fn plugins_named_in(what: &str, file: &Path) -> Vec<String> {
    match file_backed::read_document(file) {
        Ok(Some(Value::Object(doc))) => doc
            .iter()
            .filter(|(k, v)| (k.as_str() == "plugin" || substituted(k)) && !empty(v))
            .map(|(k, _)| {
                format!(
                    "plugins named by {k:?} in {what} {} (OpenCode runs them when it starts, \
                     and a plugin can rewrite any server; mcp-deploy does not run them, so \
                     they count)",
                    file.display()
                )
            })
            .collect(),
        // Not there, or reported by the look at its servers.
        _ => Vec::new(),
    }
}

/// Property names of `file` that OpenCode's text substitution (`{env:...}`, `{file:...}`,
/// done before it parses) may turn into the top-level `mcp` key or into the server `name`:
/// a later duplicate replaces ours in what OpenCode runs (checked with the real binary), and
/// what it becomes cannot be known from the file, so each counts.
fn substitution_hazards(what: &str, file: &Path, name: &str) -> Vec<String> {
    let Ok(Some(Value::Object(doc))) = file_backed::read_document(file) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for k in doc.keys().filter(|k| could_become(k, "mcp")) {
        found.push(format!(
            "the key {k:?} of {what} {}, which OpenCode's substitution may turn into \"mcp\"",
            file.display()
        ));
    }
    if let Some(Value::Object(servers)) = doc.get("mcp") {
        for k in servers.keys().filter(|k| could_become(k, name)) {
            found.push(format!(
                "the server {k:?} of {what} {}, which OpenCode's substitution may name {name:?}",
                file.display()
            ));
        }
    }
    found
}

/// Whether `key`, holding a `{env:...}` or `{file:...}` (each of which may become any text),
/// can become `target`.
fn could_become(key: &str, target: &str) -> bool {
    if !substituted(key) {
        return false;
    }
    // The literal pieces between the substitutions, which must appear in order.
    let mut pieces = Vec::new();
    let mut rest = key;
    loop {
        let next = ["{env:", "{file:"]
            .iter()
            .filter_map(|m| rest.find(m))
            .min();
        let Some(i) = next else { break };
        match rest[i..].find('}') {
            Some(end) => {
                pieces.push(&rest[..i]);
                rest = &rest[i + end + 1..];
            }
            None => break,
        }
    }
    pieces.push(rest);
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return key == target;
    }
    if !target.starts_with(first) || target.len() < first.len() + last.len() {
        return false;
    }
    let mut at = first.len();
    let end = target.len() - last.len();
    if !target[end..].eq(last) {
        return false;
    }
    for p in &pieces[1..pieces.len() - 1] {
        match target.get(at..end).and_then(|t| t.find(p)) {
            Some(i) => at += i + p.len(),
            None => return false,
        }
    }
    true
}

/// From `cwd` up to its git root (OpenCode's worktree), or to `/` outside a repository.
pub(crate) fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in cwd.ancestors() {
        out.push(d.to_path_buf());
        if d.join(".git").exists() {
            break;
        }
    }
    out
}

/// The remote organisation defaults OpenCode would fetch: one per `wellknown` login in
/// `$XDG_DATA_HOME/opencode/auth.json`. Offline their content cannot be known, so each counts.
fn remote_defaults() -> Vec<String> {
    let data = crate::dirs::var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::dirs::home().join(".local/share"));
    let auth = data.join("opencode").join("auth.json");
    let Ok(Some(text)) = crate::fsio::read_input_if_exists(
        &auth,
        "OpenCode login file",
        crate::fsio::limits::DOCUMENT,
    ) else {
        return Vec::new();
    };
    let Ok(Value::Object(logins)) = serde_json::from_str::<Value>(&text) else {
        return vec![format!(
            "remote organisation defaults: {} cannot be read, and may name one",
            auth.display()
        )];
    };
    logins
        .iter()
        .filter(|(_, v)| v.get("type").and_then(Value::as_str) == Some("wellknown"))
        .map(|(url, _)| {
            format!(
                "remote organisation default {}/.well-known/opencode (a login in {}; it cannot \
                 be read offline, so it counts)",
                url.trim_end_matches('/'),
                auth.display()
            )
        })
        .collect()
}

/// An OpenCode entry in the claude shape: `local` becomes `command`/`args`/`env`, `remote`
/// becomes `type: http`/`url`/`headers`, `{env:NAME}` becomes `${NAME}`, `enabled: true` (the
/// default) is dropped. Anything else (`enabled: false`, `timeout`, `cwd`, `oauth`, an unknown key)
/// is kept, so that a check sees it. An entry that cannot be mapped exactly (a literal `${`,
/// a `{file:...}`, a `command` that is not an array of strings) is returned as it is.
pub(crate) fn to_claude(v: &Value) -> Value {
    let Some(m) = v.as_object() else {
        return v.clone();
    };
    let back = |s: &str| -> Option<String> {
        if s.contains("${") || s.contains("{file:") {
            return None;
        }
        Some(unmap_env(s))
    };
    let strings = |v: &Value| -> Option<Map<String, Value>> {
        v.as_object()?
            .iter()
            .map(|(k, x)| Some((k.clone(), Value::String(back(x.as_str()?)?))))
            .collect()
    };
    let mut out = Map::new();
    match m.get("type").and_then(Value::as_str) {
        Some("local") => {
            let Some(cmd) = m.get("command").and_then(Value::as_array) else {
                return v.clone();
            };
            let Some(cmd) = cmd
                .iter()
                .map(|x| x.as_str().and_then(back))
                .collect::<Option<Vec<String>>>()
            else {
                return v.clone();
            };
            let Some((first, rest)) = cmd.split_first() else {
                return v.clone();
            };
            out.insert("command".into(), first.clone().into());
            out.insert("args".into(), rest.to_vec().into());
            if let Some(env) = m.get("environment") {
                let Some(env) = strings(env) else {
                    return v.clone();
                };
                out.insert("env".into(), Value::Object(env));
            }
            for (k, x) in m {
                if ["type", "command", "environment"].contains(&k.as_str())
                    || (k == "enabled" && x == &Value::Bool(true))
                {
                    continue;
                }
                if ["args", "env", "url", "headers"].contains(&k.as_str()) {
                    // A key of the claude shape in an OpenCode entry: keep OpenCode's shape.
                    return v.clone();
                }
                out.insert(k.clone(), x.clone());
            }
        }
        Some("remote") => {
            let Some(url) = m.get("url").and_then(Value::as_str).and_then(back) else {
                return v.clone();
            };
            out.insert("type".into(), "http".into());
            out.insert("url".into(), url.into());
            if let Some(h) = m.get("headers") {
                let Some(h) = strings(h) else {
                    return v.clone();
                };
                out.insert("headers".into(), Value::Object(h));
            }
            for (k, x) in m {
                if ["type", "url", "headers"].contains(&k.as_str())
                    || (k == "enabled" && x == &Value::Bool(true))
                {
                    continue;
                }
                if ["command", "args", "env"].contains(&k.as_str()) {
                    return v.clone();
                }
                out.insert(k.clone(), x.clone());
            }
        }
        _ => return v.clone(),
    }
    Value::Object(out)
}

/// `{env:NAME}` back to `${NAME}`.
fn unmap_env(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("{env:") {
        let after = &rest[i + 5..];
        match after.find('}') {
            Some(end) if file_backed::is_var_name(&after[..end]) => {
                out.push_str(&rest[..i]);
                out.push_str("${");
                out.push_str(&after[..end]);
                out.push('}');
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[..i + 5]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `entry` (claude shape) as OpenCode holds it, or why it cannot hold it exactly.
pub(crate) fn to_opencode(name: &str, entry: &Entry) -> Result<Value, ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client: "opencode",
        name: name.to_string(),
        reason,
    };
    // JSON.parse keeps a "__proto__" key, but OpenCode copies its servers into plain
    // objects, where that name sets the prototype (the real OpenCode drops such a server).
    if name == "__proto__" {
        return Err(refuse(
            "OpenCode keeps its servers in a plain JavaScript object, where \"__proto__\" is no \
             key: it would not run it"
                .into(),
        ));
    }
    let map = |what: &str, s: &str| -> Result<String, ClientError> {
        if s.contains("{env:") || s.contains("{file:") {
            return Err(refuse(format!(
                "{what} holds a literal {{env:...}} or {{file:...}}, which OpenCode would \
                 substitute"
            )));
        }
        map_refs(s, |n| format!("{{env:{n}}}"))
            .map_err(|r| refuse(format!("{what} holds {r}, which OpenCode cannot express")))
    };
    let map_object = |what: &str, v: &Value| -> Result<Value, ClientError> {
        let Some(o) = v.as_object() else {
            return Err(refuse(format!("{what} is not an object of strings")));
        };
        let mut out = Map::new();
        for (k, x) in o {
            let x = x
                .as_str()
                .ok_or_else(|| refuse(format!("{what} {k:?} is not a string")))?;
            if k.contains("{env:") || k.contains("{file:") {
                return Err(refuse(format!("a key of {what} would be substituted")));
            }
            out.insert(k.clone(), map(&format!("{what} {k:?}"), x)?.into());
        }
        Ok(Value::Object(out))
    };
    let raw = &entry.raw;
    let mut out = Map::new();
    let (known, extra_ok): (&[&str], &[&str]) = match &entry.transport {
        crate::entry::Transport::Stdio { command, args } => {
            out.insert("type".into(), "local".into());
            let mut cmd = vec![Value::String(map("the command", command)?)];
            for (i, a) in args.iter().enumerate() {
                cmd.push(map(&format!("argument {}", i + 1), a)?.into());
            }
            out.insert("command".into(), Value::Array(cmd));
            if let Some(env) = raw.get("env") {
                out.insert("environment".into(), map_object("env", env)?);
            }
            (
                &["type", "command", "args", "env"],
                &["enabled", "timeout", "cwd"],
            )
        }
        crate::entry::Transport::Remote { kind, url } => {
            if kind != "http" {
                return Err(refuse(format!(
                    "OpenCode chooses the transport of a remote server itself (streamable HTTP, \
                     then SSE), so type {kind:?} cannot be pinned"
                )));
            }
            out.insert("type".into(), "remote".into());
            out.insert("url".into(), map("the url", url)?.into());
            if let Some(h) = raw.get("headers") {
                out.insert("headers".into(), map_object("headers", h)?);
            }
            (
                &["type", "url", "headers"],
                &["enabled", "timeout", "oauth"],
            )
        }
    };
    // OpenCode's own optional keys, as a restore of an entry read from its file carries them.
    for (k, v) in raw {
        if known.contains(&k.as_str()) {
            continue;
        }
        if !extra_ok.contains(&k.as_str()) {
            return Err(refuse(format!("OpenCode has no key {k:?} for it")));
        }
        out.insert(k.clone(), v.clone());
    }
    out.entry("enabled").or_insert(Value::Bool(true));
    Ok(Value::Object(out))
}

impl Client for Opencode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn version(&self) -> Option<super::version::Version> {
        self.version
    }

    fn config_path(&self) -> &Path {
        &self.file.path
    }

    fn shadows(&self, name: &str) -> Result<Vec<String>, ClientError> {
        shadows_in(&self.file.path, name)
    }

    fn user_entries(&self) -> Result<Map<String, Value>, ClientError> {
        read_user_entries(&self.file.path)
    }

    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        let value = to_opencode(name, entry)?;
        self.file.add("opencode", name, &value)?;
        self.confirm(name, &value)
    }

    fn remove(&self, name: &str) -> Result<(), ClientError> {
        self.file.remove(name)
    }

    /// What the file holds: OpenCode has no command that prints one entry exactly.
    fn observe(&self, name: &str) -> Result<Option<Entry>, ClientError> {
        super::entry_in(&self.user_entries()?, name, &self.file.path)
    }

    fn show(&self, op: Op, name: &str) -> String {
        self.file.show(op, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::entry;
    use serde_json::json;

    #[test]
    fn claude_shape_maps_both_ways() {
        for (claude, oc) in [
            (
                json!({"command":"/x","args":["a b","${T}"],"env":{"K":"Bearer ${TOKEN}"}}),
                json!({"type":"local","command":["/x","a b","{env:T}"],
                       "environment":{"K":"Bearer {env:TOKEN}"},"enabled":true}),
            ),
            (
                json!({"command":"/x","args":[]}),
                json!({"type":"local","command":["/x"],"enabled":true}),
            ),
            (
                json!({"type":"http","url":"https://h/${P}","headers":{"A":"${K}"}}),
                json!({"type":"remote","url":"https://h/{env:P}","headers":{"A":"{env:K}"},
                       "enabled":true}),
            ),
        ] {
            assert_eq!(to_opencode("n", &entry(claude.clone())).unwrap(), oc);
            assert_eq!(to_claude(&oc), claude);
        }
        // What a check must see is kept.
        assert_eq!(
            to_claude(&json!({"type":"local","command":["/x"],"enabled":false,"timeout":5})),
            json!({"command":"/x","args":[],"enabled":false,"timeout":5})
        );
        // A restore puts back OpenCode's own keys.
        assert_eq!(
            to_opencode("n", &entry(json!({"command":"/x","enabled":false}))).unwrap(),
            json!({"type":"local","command":["/x"],"enabled":false})
        );
        // Not mappable exactly: OpenCode's shape, which no check accepts.
        for raw in [
            json!({"type":"local","command":["/x","${T}"]}),
            json!({"type":"local","command":["/x"],"environment":{"A":"{file:/s}"}}),
            json!({"type":"local","command":"/x"}),
            json!({"type":"local","command":["/x"],"args":["a"]}),
        ] {
            assert_eq!(to_claude(&raw), raw);
        }
    }

    #[test]
    fn file_references_of_the_copy_point_at_the_original_files() {
        let (d, h) = (Path::new("/c/oc"), Path::new("/h"));
        assert_eq!(
            absolute_file_refs(
                r#"{"a": "{file:./k}", "b": "{file:~/k}", "c": "{file:/abs}", "d": "{file:k}x"}"#,
                d,
                h
            ),
            r#"{"a": "{file:/c/oc/./k}", "b": "{file:/h/k}", "c": "{file:/abs}", "d": "{file:/c/oc/k}x"}"#
        );
        assert_eq!(absolute_file_refs("{file:x", d, h), "{file:x");
        assert_eq!(
            absolute_file_refs("{file:./k}", Path::new("/a\"b"), h),
            "{file:./k}"
        );
    }

    #[test]
    fn a_key_opencode_substitutes_may_become_the_name() {
        for (key, target, want) in [
            ("codetools{env:X}", "codetools", true),
            ("code{env:X}tools", "codetools", true),
            ("{file:/n}", "codetools", true),
            ("{env:A}to{env:B}", "codetools", true),
            ("x{env:A}", "codetools", false),
            ("{env:A}x", "codetools", false),
            ("mc{env:A}p", "mcp", true),
            ("codetools", "codetools", false),
            ("{env:unclosed", "codetools", false),
        ] {
            assert_eq!(could_become(key, target), want, "{key} -> {target}");
        }
    }

    #[test]
    fn project_files_are_looked_for_up_to_the_git_root_else_to_the_root() {
        // As the real OpenCode 1.18.33 does: a project opencode.json above the git root is not
        // read; outside a repository every directory up to `/` is.
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("repo/a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir(dir.path().join("repo/.git")).unwrap();
        let found = project_dirs(&sub);
        assert_eq!(found.last().unwrap(), &dir.path().join("repo"));
        assert_eq!(found.len(), 3);
        let free = dir.path().join("free");
        std::fs::create_dir(&free).unwrap();
        assert_eq!(project_dirs(&free).last().unwrap(), Path::new("/"));
    }

    #[test]
    fn the_resolved_entry_is_compared_as_opencode_prints_it() {
        let env = vec![("HOME".to_string(), "/h".to_string())];
        assert_eq!(
            substitute(
                &json!({"c": ["{env:HOME}/x", "{env:UNSET}y", "{env:"]}),
                &env
            ),
            json!({"c": ["/h/x", "y", "{env:"]})
        );
        let written = json!({"url": "u", "headers": {"Authorization": "Bearer t"}});
        assert!(masked_eq(
            &json!({"url": "u", "headers": {"Authorization": "***"}}),
            &written
        ));
        assert!(!masked_eq(
            &json!({"url": "u", "headers": {"Authorization": "***", "X": "***"}}),
            &written
        ));
        assert!(!masked_eq(&json!({"url": "***x"}), &json!({"url": "u"})));
    }

    #[test]
    fn what_opencode_cannot_hold_is_refused_without_values() {
        for (v, want) in [
            (
                json!({"command":"/x","env":{"T":"${T:-hunter2}"}}),
                "NAME:-default",
            ),
            (json!({"command":"/x","args":["{env:HOME}"]}), "argument 1"),
            (
                json!({"command":"/x","env":{"T":"{file:/etc/hunter2}"}}),
                "env \"T\"",
            ),
            (json!({"type":"sse","url":"https://h"}), "cannot be pinned"),
            (
                json!({"command":"/x","description":"d"}),
                "no key \"description\"",
            ),
        ] {
            let err = to_opencode("n", &entry(v.clone())).unwrap_err().to_string();
            assert!(err.contains(want), "{v}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
        let err = to_opencode("__proto__", &entry(json!({"command":"/x"}))).unwrap_err();
        assert!(err.to_string().contains("would not run it"), "{err}");
        to_opencode("constructor", &entry(json!({"command":"/x"}))).unwrap();
    }
}
