//! The layers Claude Code applies to a user-scope entry ([`super`]), each rule found in its
//! bundled JavaScript (2.1.332, `strings` on the native binary) and confirmed with the real
//! CLI (`claude mcp get`, `claude -p`) in tests/it/attacks/layers_claude.rs:
//!
//! 1. `/etc/claude-code/managed-mcp.json`: when it exists at all (valid, `{}`, or not even
//!    JSON) claude loads only the servers it defines; one of our name replaces ours.
//! 2. Settings, lowest first: user (`$CLAUDE_CONFIG_DIR/settings.json`, else
//!    `~/.claude/settings.json`), project `.claude/settings.json` and local
//!    `.claude/settings.local.json` of the working directory, managed
//!    (`/etc/claude-code/managed-settings.json`, then `managed-settings.d/*.json` in name
//!    order, dot files and other extensions skipped). From each:
//!    - `env`: put into claude's own environment, which every stdio server inherits under its
//!      own `env` (the declaration's variables win). `CLAUDE_CODE_SHELL_PREFIX` there also
//!      wraps the server's command.
//!    - `deniedMcpServers`: merged from every source; an entry `{serverName}` matches the name
//!      exactly (case and spaces count), `{serverCommand}` the array `[command, ...args]`
//!      element by element after claude expands `${VAR}` in the entry with its environment,
//!      `{serverUrl}` a wildcard pattern on the url. Deny wins over allow.
//!    - `allowedMcpServers`: merged from every source, or read from managed settings only when
//!      a managed source sets `allowManagedMcpServersOnly: true`. No source sets it: no
//!      restriction. Empty: nothing loads. Holding a `serverCommand` entry, a stdio server
//!      must match one by command (names no longer admit it); else the name must be listed.
//!      A list entry that is not exactly one of the three shapes is skipped; a list that is not
//!      an array is dropped. A user or project file that is not a JSON object is ignored by
//!      claude (so by us); a managed one that is not makes claude refuse to start.
//! 3. `.claude.json`'s `projects.<dir>.disabledMcpServers` (`/mcp disable`): the name is off
//!    in that project.
//! 4. Settings a server delivered (`remote-settings.json`, `policy-limits.json` in the config
//!    dir): cached from Anthropic's API for an organization, refreshed by claude itself: not
//!    compared, named.
//!
//! Which working directory the agent runs in is not known here: project files are read for
//! the current directory and every project `.claude.json` knows (as the `.mcp.json` shadows
//! are), and any one of them that drops or changes the server counts.
//!
//! Where claude is more lenient than its own schema on one key of a file (it drops the whole
//! user file for some wrongly typed keys, e.g. `"model": 5`), the lists and `env` still
//! count: a false failure over a file the client might still obey.

// Parts of this are unused outside tests, as when it sat in layers/ (whose module allowed it).
#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::clients::layers::{env_not_declared, Context, Effect, Finding};
use crate::fsio;

/// Claude Code's managed directory on Linux (function `pr` of 2.1.332).
const MANAGED_DIR: &str = "/etc/claude-code";

/// How much of a settings file is read. claude 2.1.332 stops obeying some settings files
/// of about 2 MiB (a deny before a 2 MiB string is dropped, one beside 100k levels of
/// nesting in 2 MiB is not; its exact rule is not pinned yet): a larger one still counts
/// here, a false failure rather than a missed deny.
const SETTINGS_MAX: u64 = fsio::limits::CLIENT_CONFIG;

/// The settings keys read here; every other key is skipped unparsed.
const SETTINGS_KEYS: &[&str] = &[
    "env",
    "deniedMcpServers",
    "allowedMcpServers",
    "allowManagedMcpServersOnly",
    "managedMcpServers",
    "strictPluginOnlyCustomization",
];

pub(crate) fn read(cx: &Context) -> Vec<Finding> {
    crate::clients::layers::Loaded::findings(&load_host(cx.user_config), cx)
}

/// Every file the layers come from, read once ([`Loaded::findings`] answers per name): a run
/// over many servers reads them once, not once per server.
pub(crate) fn load(user_config: &Path) -> Box<dyn crate::clients::layers::Loaded> {
    Box::new(load_host(user_config))
}

fn load_host(user_config: &Path) -> Loaded {
    let config_home = crate::clients::claude::config_home();
    let cwd = std::env::current_dir().ok();
    load_in(
        user_config,
        &Where {
            managed: PathBuf::from(MANAGED_DIR),
            config_home,
            cwd,
        },
    )
}

/// Where the files are (the host's, or a test's).
pub(crate) struct Where {
    pub(crate) managed: PathBuf,
    pub(crate) config_home: PathBuf,
    pub(crate) cwd: Option<PathBuf>,
}

/// A settings file as claude reads it.
struct Settings {
    path: PathBuf,
    managed: bool,
    keys: HashMap<String, Value>,
}

/// What claude's layer files held when they were read, for every name.
pub(crate) struct Loaded {
    /// `managed-mcp.json` when it exists, and its `mcpServers` when it could be read.
    managed_mcp: Option<(PathBuf, Option<Value>)>,
    /// `.claude.json`, and its `projects` when it has them.
    claude_json: PathBuf,
    projects: Option<serde_json::Map<String, Value>>,
    /// What could not be read of `projects`, named.
    projects_unread: Option<Finding>,
    /// Why claude before 2.1.284 loads no user-scope server from `.claude.json`: an entry
    /// under `mcpServers` its schema refuses (named), or the file's depth.
    malformed: Option<(Option<String>, String)>,
    /// What the settings files said of themselves (a drop-in directory or a file that could
    /// not be read, a managed file claude refuses), in the order they were read.
    unread: Vec<Finding>,
    settings: Vec<Settings>,
    /// Server-delivered settings found in the config dir.
    delivered: Vec<Finding>,
}

pub(crate) fn read_in(cx: &Context, at: &Where) -> Vec<Finding> {
    crate::clients::layers::Loaded::findings(&load_in(cx.user_config, at), cx)
}

fn load_in(user_config: &Path, at: &Where) -> Loaded {
    let managed_mcp = at.managed.join("managed-mcp.json");
    let managed_mcp = std::fs::symlink_metadata(&managed_mcp).is_ok().then(|| {
        let servers = read_json(&managed_mcp, &["mcpServers"], fsio::limits::CLIENT_CONFIG)
            .ok()
            .and_then(|mut k| k.remove("mcpServers"));
        (managed_mcp, servers)
    });
    let (projects, projects_unread, malformed) = read_projects(user_config);
    let mut dirs: Vec<PathBuf> = at.cwd.clone().into_iter().collect();
    // Each once, by a set: a search of the list for each of many projects is quadratic.
    let mut seen: std::collections::HashSet<PathBuf> = dirs.iter().cloned().collect();
    for dir in projects.iter().flat_map(|p| p.keys()).map(PathBuf::from) {
        if dir.is_absolute() && seen.insert(dir.clone()) {
            dirs.push(dir);
        }
    }
    let mut unread = Vec::new();
    let mut files: Vec<(PathBuf, bool)> = vec![(at.config_home.join("settings.json"), false)];
    for dir in &dirs {
        files.push((dir.join(".claude/settings.json"), false));
        files.push((dir.join(".claude/settings.local.json"), false));
    }
    files.push((at.managed.join("managed-settings.json"), true));
    files.extend(
        drop_ins(&at.managed.join("managed-settings.d"), &mut unread)
            .into_iter()
            .map(|p| (p, true)),
    );
    let mut settings = Vec::new();
    for (path, managed) in files {
        match read_json_measured(&path, SETTINGS_KEYS, SETTINGS_MAX) {
            Ok((keys, deep)) => {
                if deep {
                    unread.push(Finding::new(
                        path.display(),
                        Effect::Blocked(format!("{}; repair the file", too_deep())),
                    ));
                }
                settings.push(Settings {
                    path,
                    managed,
                    keys,
                })
            }
            Err(Unread::Absent) => {}
            Err(Unread::NotAnObject(why)) if managed => unread.push(Finding::new(
                path.display(),
                Effect::Blocked(format!(
                    "claude refuses to start on a managed settings file that is not a JSON \
                     object ({why})"
                )),
            )),
            // claude ignores a user or project settings file it cannot parse.
            Err(Unread::NotAnObject(_)) => {}
            Err(Unread::Unreadable(why)) => {
                unread.push(Finding::new(path.display(), Effect::not_compared(why)))
            }
        }
    }
    let mut delivered = Vec::new();
    for name in ["remote-settings.json", "policy-limits.json"] {
        let p = at.config_home.join(name);
        if std::fs::symlink_metadata(&p).is_ok() {
            delivered.push(Finding::new(
                p.display(),
                Effect::not_compared(
                    "settings an organization's server delivers to claude (it refreshes them \
                     itself)",
                ),
            ));
        }
    }
    Loaded {
        managed_mcp,
        claude_json: user_config.to_path_buf(),
        projects,
        projects_unread,
        malformed,
        unread,
        settings,
        delivered,
    }
}

impl crate::clients::layers::Loaded for Loaded {
    /// Every layer claude applies to the user-scope entry `cx.name`, from the files as read.
    fn findings(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();

        // 1. managed-mcp.json: its mere presence is exclusive control. Its own entry of the
        // name, equal to the declared one, is the registration itself (`install --scope
        // managed`).
        if let Some((managed_mcp, servers)) = &self.managed_mcp {
            let same_name = servers.as_ref().and_then(|s| s.get(cx.name));
            let ours = same_name
                .and_then(|v| crate::entry::Entry::from_value(v).ok())
                .is_some_and(|e| e.same_registration(cx.declared));
            let replaced = same_name.is_some();
            if !ours {
                out.push(Finding::new(
                    format!("{} mcpServers", managed_mcp.display()),
                    if replaced {
                        Effect::Replaced("a managed server of the same name".into())
                    } else {
                        Effect::Blocked(
                            "an enterprise MCP config exists: claude loads only its servers".into(),
                        )
                    },
                ));
            }
        }

        // 2. One malformed user-scope entry: releases before 2.1.284 then load none. Whether
        // the release here is one of those is not known to the layers (the binary a command
        // is given may not be the one on PATH), so it counts for every release.
        if let Some((entry, why)) = &self.malformed {
            let source = match entry {
                Some(e) => format!(
                    "{} mcpServers \"{}\"",
                    self.claude_json.display(),
                    crate::text::printable(e)
                ),
                None => self.claude_json.display().to_string(),
            };
            out.push(Finding::new(source, Effect::Blocked(why.clone())));
        }

        // 3. `.claude.json`'s projects that disable the name, then the settings, lowest first.
        out.extend(self.projects_unread.clone());
        for (dir, p) in self.projects.iter().flatten() {
            // claude reads the list with `Array.isArray(x) ? x : []` and `includes`.
            let disabled = p
                .get("disabledMcpServers")
                .and_then(Value::as_array)
                .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(cx.name)));
            if disabled {
                out.push(Finding::new(
                    format!(
                        "{} projects.{dir}.disabledMcpServers",
                        self.claude_json.display()
                    ),
                    Effect::Blocked(format!("disabled in the project {dir} (/mcp disable)")),
                ));
            }
        }
        out.extend(self.unread.iter().cloned());
        for s in &self.settings {
            if let Some(Value::Object(env)) = s.keys.get("env") {
                let mut keys = env_not_declared(cx.declared, env.keys().map(String::as_str));
                if keys.iter().any(|k| k == "env.CLAUDE_CODE_SHELL_PREFIX") {
                    keys.insert(0, "command".into());
                }
                if !keys.is_empty() {
                    out.push(Finding::new(
                        format!("{} env", s.path.display()),
                        Effect::Changed(keys),
                    ));
                }
            }
        }
        out.extend(policy(cx, &self.settings));
        // `strictPluginOnlyCustomization` in managed settings: `true`, or a list holding "mcp",
        // and claude loads only the MCP servers plugins provide — no user-scope one (2.1.100,
        // 2.1.284 and 2.1.332 list none; 2.0.0 does not know the key). Another value (a string,
        // a number) locks every surface in 2.1.284 and 2.1.332 and nothing in 2.1.100: a doubt.
        for s in self.settings.iter().filter(|s| s.managed) {
            let source = format!("{} strictPluginOnlyCustomization", s.path.display());
            let effect = match s.keys.get("strictPluginOnlyCustomization") {
                None | Some(Value::Null) | Some(Value::Bool(false)) => continue,
                Some(Value::Bool(true)) => Effect::Blocked(
                    "true: claude loads only the MCP servers plugins provide".into(),
                ),
                Some(Value::Array(a)) if a.iter().any(|v| v == "mcp") => Effect::Blocked(
                    "it lists \"mcp\": claude loads only the MCP servers plugins provide".into(),
                ),
                Some(Value::Array(_)) => continue,
                Some(_) => Effect::not_compared(
                    "a value that is neither a boolean nor a list: claude 2.1.284 and newer lock \
                     every surface for it (no user-scope server loads), 2.1.100 none",
                ),
            };
            out.push(Finding::new(source, effect));
        }
        // The organization's own server of the same name (`managedMcpServers` of a managed
        // settings file, http or sse only): claude 2.1.332's `claude mcp list` shows the user
        // entry then, but which of the two a session runs is not settled here — a doubt.
        for s in self.settings.iter().filter(|s| s.managed) {
            if let Some(Value::Object(servers)) = s.keys.get("managedMcpServers") {
                if servers.contains_key(cx.name) {
                    out.push(Finding::new(
                        format!("{} managedMcpServers", s.path.display()),
                        Effect::not_compared(
                            "the organization delivers a server of that name too: which of the \
                             two a session runs is not known to mcp-deploy",
                        ),
                    ));
                }
            }
        }

        // 3. Server-delivered settings, cached in the config dir.
        out.extend(self.delivered.iter().cloned());
        out
    }
}

/// Why a file gave no keys.
enum Unread {
    Absent,
    /// Read, but not a JSON object: the client refuses the file as a whole.
    NotAnObject(String),
    /// There, but not readable by us (a FIFO, a directory, too large, no permission, not
    /// UTF-8): claude may still read it.
    Unreadable(String),
}

/// Read `path` as claude's `JSON.parse` does (a leading BOM dropped, any nesting depth, a
/// duplicate key's last value wins), keeping only `keys` of its top-level object: the rest is
/// skipped without being held, so memory stays linear in the file.
fn read_json(path: &Path, keys: &[&str], max: u64) -> Result<HashMap<String, Value>, Unread> {
    read_json_measured(path, keys, max).map(|(keys, _)| keys)
}

/// [`read_json`], and whether the text nests deeper than [`OVERFLOWS_OLD_RELEASES`].
fn read_json_measured(
    path: &Path,
    keys: &[&str],
    max: u64,
) -> Result<(HashMap<String, Value>, bool), Unread> {
    let text = match fsio::read_input_if_exists(path, "client settings", max) {
        Ok(Some(t)) => t,
        Ok(None) => return Err(Unread::Absent),
        Err(e) if e.source.kind() == std::io::ErrorKind::InvalidData => {
            // Node reads a file that is not UTF-8 with replacement characters; whether that
            // still parses to something that matters cannot be told cheaply.
            return Err(Unread::Unreadable(e.source.to_string()));
        }
        Err(e) => return Err(Unread::Unreadable(e.source.to_string())),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    KEYS.with(|k| *k.borrow_mut() = keys.iter().map(|s| s.to_string()).collect());
    let deep = crate::clients::kit::node_json::nested_deeper_than(text, OVERFLOWS_OLD_RELEASES);
    match crate::clients::kit::node_json::parse_lenient::<Picked>(text) {
        Ok((Picked(Some(map)), _)) => Ok((map, deep)),
        Ok((Picked(None), _)) => Err(Unread::NotAnObject("not an object".into())),
        Err(e) => Err(Unread::NotAnObject(format!("not valid JSON: {e}"))),
    }
}

thread_local! {
    /// The keys [`Picked`] keeps (serde's `Deserialize` takes no arguments).
    static KEYS: std::cell::RefCell<BTreeSet<String>> = const {
        std::cell::RefCell::new(BTreeSet::new())
    };
}

/// A top-level JSON value: `Some(kept keys)` when it is an object, `None` otherwise.
struct Picked(Option<HashMap<String, Value>>);

impl<'de> serde::Deserialize<'de> for Picked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Picked;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Picked, A::Error> {
                let keep = KEYS.with(|k| k.borrow().clone());
                let mut out = HashMap::new();
                while let Some(key) = m.next_key::<String>()? {
                    if keep.contains(&key) {
                        out.insert(key, m.next_value::<Value>()?);
                    } else {
                        m.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(Picked(Some(out)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Picked, A::Error> {
                while s.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Picked(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Picked, E> {
                Ok(Picked(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Picked, E> {
                Ok(Picked(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Picked, E> {
                Ok(Picked(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Picked, E> {
                Ok(Picked(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Picked, E> {
                Ok(Picked(None))
            }
            fn visit_unit<E>(self) -> Result<Picked, E> {
                Ok(Picked(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// `managed-settings.d/*.json` in name order, as claude takes them: names ending `.json`
/// that do not start with `.`, files or links. A directory there we cannot list is named.
pub(crate) fn drop_ins(dir: &Path, out: &mut Vec<Finding>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            out.push(Finding::new(
                dir.display(),
                Effect::not_compared(e.to_string()),
            ));
            return Vec::new();
        }
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".json")
                && !name.starts_with('.')
                && e.file_type().is_ok_and(|t| !t.is_dir())
        })
        .map(|e| e.path())
        .collect();
    names.sort();
    names
}

/// What [`read_projects`] reads of `.claude.json`.
type Projects = (
    Option<serde_json::Map<String, Value>>,
    Option<Finding>,
    Option<(Option<String>, String)>,
);

/// `.claude.json`'s `projects` (whose keys are the project directories whose
/// `.claude/settings*.json` may apply, and whose `disabledMcpServers` turn a name off there),
/// or the finding that names why they could not be read; and why claude before 2.1.284 would
/// load no user-scope server from it (its depth, or its first malformed entry:
/// [`malformed_entry`]).
fn read_projects(claude_json: &Path) -> Projects {
    let keys = &["projects", "mcpServers"];
    match read_json_measured(claude_json, keys, fsio::limits::CLIENT_CONFIG) {
        Ok((mut k, deep)) => {
            let malformed = match deep {
                true => Some((None, format!("{}; repair the file", too_deep()))),
                false => malformed_entry(k.get("mcpServers")),
            };
            match k.remove("projects") {
                Some(Value::Object(projects)) => (Some(projects), None, malformed),
                _ => (None, None, malformed),
            }
        }
        // A config claude cannot parse fails the user-scope read itself, elsewhere.
        Err(Unread::Absent | Unread::NotAnObject(_)) => (None, None, None),
        Err(Unread::Unreadable(why)) => (
            None,
            Some(Finding::new(
                format!("{} projects", claude_json.display()),
                Effect::not_compared(why),
            )),
            None,
        ),
    }
}

/// The first release seen to skip only a malformed entry under `mcpServers`, and to read a
/// `.claude.json` nested 5,000 deep. Before it,
/// claude 2.0.0 and 2.1.100 (checked with `claude mcp list`, differential::claude) load no
/// user-scope server at all when one entry there is malformed (a type that is not a string,
/// args or env of another type, an sse entry without a url).
const SKIPS_ONLY_THE_MALFORMED: &str = "2.1.284";

/// The first entry of `servers` (`mcpServers` of `.claude.json`) that claude's schema
/// refuses, and why, as [`crate::entry::Entry::from_value`] reads it (where it is stricter
/// than claude's schema, the check only errs toward failing).
fn malformed_entry(servers: Option<&Value>) -> Option<(Option<String>, String)> {
    servers?.as_object()?.iter().find_map(|(name, v)| {
        crate::entry::Entry::from_value(v).err().map(|e| {
            let why = format!(
                "its entry is malformed ({e}): claude before {SKIPS_ONLY_THE_MALFORMED} then \
                     loads no user-scope server (later releases skip only that entry); repair or \
                     remove it"
            );
            (Some(name.clone()), why)
        })
    })
}

/// Why a file nested deeper than [`OVERFLOWS_OLD_RELEASES`] counts.
fn too_deep() -> String {
    format!(
        "it nests arrays or objects more than {OVERFLOWS_OLD_RELEASES} deep, where claude 2.0.0 \
         and 2.1.100 overflow their stack (RangeError at 4,500 levels) and load no server \
         (2.1.284 on read it)"
    )
}

/// A depth of nesting in `.claude.json` or a settings file past which claude before 2.1.284 may overflow its
/// stack reading it, and then load no server: 2.0.0 and 2.1.100 did at 4,500 levels, not at
/// 4,000 (node's default stack; checked with `claude mcp list`). A bound well below, as the
/// exact one moves with node's stack size.
const OVERFLOWS_OLD_RELEASES: usize = 1_000;

/// One valid entry of a deny or allow list (exactly one of the three shapes, as claude's
/// schema refines it); other entries are skipped.
enum Rule {
    Name(String),
    Command(Vec<String>),
    Url(String),
}

fn rules(v: Option<&Value>) -> Option<Vec<Rule>> {
    let list = v?.as_array()?;
    Some(
        list.iter()
            .filter_map(|e| {
                let e = e.as_object()?;
                let name = e.get("serverName");
                let command = e.get("serverCommand");
                let url = e.get("serverUrl");
                match (name, command, url) {
                    (Some(Value::String(n)), None, None) => Some(Rule::Name(n.clone())),
                    (None, Some(Value::Array(c)), None) if !c.is_empty() => c
                        .iter()
                        .map(|a| a.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .map(Rule::Command),
                    (None, None, Some(Value::String(u))) => Some(Rule::Url(u.clone())),
                    _ => None,
                }
            })
            .collect(),
    )
}

/// Whether a rule matches the declared server: yes, no, or it cannot be told here (a
/// `${VAR}` claude expands with an environment we do not see).
#[derive(PartialEq)]
enum Match {
    Yes,
    No,
    Unknown,
}

fn matches(rule: &Rule, name: &str, declared: &crate::entry::Entry) -> Match {
    let raw = &declared.raw;
    match rule {
        Rule::Name(n) => bool_match(n == name),
        Rule::Command(pattern) => {
            let Some(command) = raw.get("command").and_then(Value::as_str) else {
                return Match::No;
            };
            let mut ours = vec![command.to_string()];
            ours.extend(
                raw.get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|a| a.as_str().unwrap_or_default().to_string()),
            );
            if ours.len() != pattern.len() {
                return Match::No;
            }
            let mut m = Match::Yes;
            for (p, o) in pattern.iter().zip(&ours) {
                if p == o {
                    continue;
                }
                if p.contains('$') || o.contains('$') {
                    m = Match::Unknown;
                } else {
                    return Match::No;
                }
            }
            m
        }
        Rule::Url(pattern) => match raw.get("url").and_then(Value::as_str) {
            Some(url) => bool_match(url_matches(pattern, url)),
            // claude also judges urls inside a stdio server's command line (`mcp-remote
            // https://...`): one there cannot be told apart here.
            None => {
                let line = std::iter::once(raw.get("command"))
                    .chain(
                        raw.get("args")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(Some),
                    )
                    .flatten()
                    .filter_map(Value::as_str)
                    .any(|a| a.contains("://"));
                if line {
                    Match::Unknown
                } else {
                    Match::No
                }
            }
        },
    }
}

fn bool_match(b: bool) -> Match {
    if b {
        Match::Yes
    } else {
        Match::No
    }
}

/// claude's `serverUrl` pattern: `*` matches any run of characters, the rest literally, the
/// whole url; a pattern with no query also matches the url without its query, and with a
/// trailing slash added or removed.
fn url_matches(pattern: &str, url: &str) -> bool {
    let base = url.split_once('?').map_or(url, |(b, _)| b);
    let toggled = base
        .strip_suffix('/')
        .map(str::to_string)
        .unwrap_or_else(|| format!("{base}/"));
    let mut candidates = vec![url.to_string()];
    if !pattern.contains('?') {
        candidates.push(base.to_string());
        candidates.push(toggled);
    }
    candidates
        .iter()
        .any(|c| crate::clients::layers::glob(pattern, c))
}

/// Deny and allow lists for `cx.name`, merged the client's way.
fn policy(cx: &Context, settings: &[Settings]) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in settings {
        let Some(rules) = rules(s.keys.get("deniedMcpServers")) else {
            continue;
        };
        let verdicts: Vec<Match> = rules
            .iter()
            .map(|r| matches(r, cx.name, cx.declared))
            .collect();
        let effect = if verdicts.contains(&Match::Yes) {
            Effect::Blocked("denied by deniedMcpServers".into())
        } else if verdicts.contains(&Match::Unknown) {
            Effect::not_compared(
                "a deniedMcpServers entry with a ${VAR} or a url that claude resolves with its \
                 own environment",
            )
        } else {
            continue;
        };
        out.push(Finding::new(
            format!("{} deniedMcpServers", s.path.display()),
            effect,
        ));
    }

    let managed_only = settings
        .iter()
        .any(|s| s.managed && s.keys.get("allowManagedMcpServersOnly") == Some(&Value::Bool(true)));
    let sources: Vec<(&Settings, Vec<Rule>)> = settings
        .iter()
        .filter(|s| s.managed || !managed_only)
        .filter_map(|s| Some((s, rules(s.keys.get("allowedMcpServers"))?)))
        .collect();
    if sources.is_empty() {
        return out;
    }
    let named: Vec<String> = sources
        .iter()
        .map(|(s, _)| format!("{} allowedMcpServers", s.path.display()))
        .collect();
    let source = named.join(", ");
    let all: Vec<&Rule> = sources.iter().flat_map(|(_, r)| r).collect();
    let stdio = cx.declared.raw.get("url").is_none();
    let by_command = stdio && all.iter().any(|r| matches!(r, Rule::Command(_)));
    let by_url = !stdio && all.iter().any(|r| matches!(r, Rule::Url(_)));
    let relevant: Vec<&&Rule> = all
        .iter()
        .filter(|r| match r {
            Rule::Command(_) => by_command,
            Rule::Url(_) => by_url,
            Rule::Name(_) => !by_command && !by_url,
        })
        .collect();
    let verdicts: Vec<Match> = relevant
        .iter()
        .map(|r| matches(r, cx.name, cx.declared))
        .collect();
    if verdicts.contains(&Match::Yes) {
        return out;
    }
    let why = if all.is_empty() {
        "allowedMcpServers is empty: claude loads no server".to_string()
    } else if by_command {
        "not in allowedMcpServers: it lists commands, and none is this server's".to_string()
    } else if by_url {
        "not in allowedMcpServers: it lists urls, and none is this server's".to_string()
    } else {
        "not in allowedMcpServers".to_string()
    };
    out.push(Finding::new(
        source,
        if verdicts.contains(&Match::Unknown) {
            Effect::not_compared(format!(
                "an allowedMcpServers entry with a ${{VAR}} that claude expands with its own \
                 environment; without it: {why}"
            ))
        } else {
            Effect::Blocked(why)
        },
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::entry;
    use serde_json::json;

    /// The findings for `name` declared as `{"command": "/x"}` with `managed` as the managed
    /// file's text (none: no file).
    fn findings(managed: Option<&str>) -> Vec<Finding> {
        let dir = tempfile::tempdir().unwrap();
        let etc = dir.path().join("etc");
        std::fs::create_dir_all(&etc).unwrap();
        if let Some(text) = managed {
            std::fs::write(etc.join("managed-mcp.json"), text).unwrap();
        }
        let declared = entry(json!({"command": "/x", "args": []}));
        read_in(
            &Context {
                name: "ours",
                declared: &declared,
                user_config: &dir.path().join(".claude.json"),
            },
            &Where {
                managed: etc,
                config_home: dir.path().join("home"),
                cwd: None,
            },
        )
    }

    #[test]
    fn our_own_managed_entry_as_declared_is_the_registration_and_any_other_is_not() {
        assert!(findings(None).is_empty());
        let ours = json!({"mcpServers": {"ours": {"command": "/x", "args": []}}}).to_string();
        assert_eq!(findings(Some(&ours)), vec![]);
        let typed = json!({"mcpServers": {"ours": {"type": "stdio", "command": "/x", "args": []}}});
        assert_eq!(findings(Some(&typed.to_string())), vec![]);
        let other = json!({"mcpServers": {"ours": {"command": "/y"}}}).to_string();
        assert!(matches!(
            findings(Some(&other))[0].effect,
            Effect::Replaced(_)
        ));
        let none = json!({"mcpServers": {"theirs": {"command": "/x"}}}).to_string();
        assert!(matches!(
            findings(Some(&none))[0].effect,
            Effect::Blocked(_)
        ));
        // A file claude refuses loads nothing, ours included.
        let commented = "{\"mcpServers\": {\"ours\": {\"command\": \"/x\", \"args\": []}} // c\n}";
        assert!(matches!(
            findings(Some(commented))[0].effect,
            Effect::Blocked(_)
        ));
    }

    /// Issue 35, item 8: the organization's `managedMcpServers` naming our server too is a
    /// doubt (which entry a session runs is not settled), in a managed settings file only; a
    /// user settings file's is no setting of claude's.
    #[test]
    fn a_managed_mcp_servers_entry_of_our_name_is_a_doubt() {
        let dir = tempfile::tempdir().unwrap();
        let etc = dir.path().join("etc");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&etc).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let org = json!({"managedMcpServers": {"ours": {"type": "http", "url": "https://o/mcp"}}});
        let declared = entry(json!({"command": "/x", "args": []}));
        let read = || {
            read_in(
                &Context {
                    name: "ours",
                    declared: &declared,
                    user_config: &dir.path().join(".claude.json"),
                },
                &Where {
                    managed: etc.clone(),
                    config_home: home.clone(),
                    cwd: None,
                },
            )
        };
        std::fs::write(home.join("settings.json"), org.to_string()).unwrap();
        assert_eq!(read(), vec![]);
        std::fs::write(etc.join("managed-settings.json"), org.to_string()).unwrap();
        let found = read();
        assert!(
            matches!(&found[..], [f] if f.source.ends_with("managed-settings.json managedMcpServers")
                && matches!(f.effect, Effect::NotCompared(_))),
            "{found:?}"
        );
    }
}
