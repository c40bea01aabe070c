//! Claude Code, through its CLI (`claude mcp add-json|get|remove -s user`).
//!
//! - The user-scope entries live in `$CLAUDE_CONFIG_DIR/.claude.json` (or `~/.claude.json`)
//!   under `mcpServers`, unless Claude Code's legacy `.config.json` wins (see [`config_path`]);
//!   we read the file Claude Code itself reads, never write it.
//! - We read what Node's `JSON.parse` reads: nesting of any depth, and lone UTF-16 surrogate
//!   escapes (`"\ud800"`), which serde_json refuses; see [`parse_lenient`].
//! - Every call runs from an empty private directory ([`super::runner::work_dir`]), so that no
//!   project (`.mcp.json`) or local-scope entry of the caller's working directory shadows the
//!   user scope; the same one on every run, since Claude Code before 2.1 adds a
//!   `projects.<cwd>` entry to its config file for each directory it runs in. What it writes
//!   on every call besides (the health check's log in `$XDG_CACHE_HOME/claude-cli-nodejs/`, a
//!   session directory in `$TMPDIR/claude-<uid>/`; before 2.1, `npm config get prefix`'s log
//!   in `~/.npm/_logs/`) goes into the run's scratch directory or is not written.
//! - Every Claude Code 2.x is supported ([`super::version::SUPPORTED`]). They store the entry
//!   `add-json` is given as it is; before 2.1.285 `mcp get` prints Type, Command and Args
//!   only for an entry with `"type"`, so a stdio entry is sent to those with
//!   `"type":"stdio"` ([`entry_for`]); every comparison treats that key as the default it is.
//! - `claude mcp get` starts the server to health-check it; MCP_TIMEOUT bounds that. It prints
//!   args joined by spaces (lossy) and env and header values (secrets), so its output is
//!   parsed for scope, command, args and url only, compared with the config file, and never
//!   echoed.

pub(crate) mod layers;
pub(crate) mod managed;
pub(crate) mod policy;
mod scopes;

pub(crate) use scopes::scopes;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub(crate) use super::kit::node_json::parse_lenient;
use super::runner::Runner;
use super::{Client, ClientError, ClientOptions, Op, Reach, Shadow};
use crate::entry::{Entry, Transport};
use crate::fsio;

pub(crate) struct Claude {
    runner: Runner,
    config: PathBuf,
}

impl Claude {
    pub(crate) fn open(
        row: &super::table::About,
        options: &ClientOptions,
    ) -> Result<Claude, ClientError> {
        let runner = Runner::of_client(
            row,
            options,
            vec![
                (
                    "MCP_TIMEOUT",
                    options.mcp_timeout.as_millis().to_string().into(),
                ),
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
                // Before 2.1 every call runs `npm config get prefix`, which keeps a log file,
                // and whose update check writes ~/.npm/_update-notifier-last-checked once
                // ~/.npm exists (unawaited: it landed during a no-op install, after the run
                // that created the directory).
                ("npm_config_logs_max", "0".into()),
                ("npm_config_update_notifier", "false".into()),
            ],
        )?
        .scratch_for(&["XDG_CACHE_HOME", "TMPDIR"]);
        // `CLAUDE_CONFIG_DIR=""` makes Claude Code's own directory its working directory: it
        // writes `backups/` there. Then each run's scratch directory is the one to run from.
        let runner = match crate::dirs::var_raw("CLAUDE_CONFIG_DIR") {
            Some(d) if d.is_empty() => runner.in_scratch(),
            _ => runner,
        }
        .detect_version("claude")?;
        Ok(Claude {
            runner,
            config: config_path(),
        })
    }
}

/// Claude Code's own directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. Our lock and journal
/// for claude live in its `.mcp-deploy/`, whichever config file Claude Code reads.
pub(crate) fn config_home() -> PathBuf {
    crate::dirs::claude_config_dir()
}

/// The file Claude Code (2.1.332) reads and writes its user configuration in, by its own
/// rule (function `sE` of its bundled JavaScript, found with `strings` on the native binary):
/// - the main file is `.claude.json` (`.claude-custom-oauth.json` when
///   `CLAUDE_CODE_CUSTOM_OAUTH_URL` is set) in `$CLAUDE_CONFIG_DIR`, else in `$HOME`;
/// - the legacy file `.config.json` in `CLAUDE_CONFIG_DIR ?? ~/.claude` wins when it is a
///   regular file that is not empty; an empty one wins only when it is writable and the main
///   file is missing, cannot be looked at, or is itself empty, read-only and singly linked.
///   (`??`, not `||`: with `CLAUDE_CONFIG_DIR=""` it is `./.config.json`, checked with the
///   real CLI.)
pub(crate) fn config_path() -> PathBuf {
    let name = if crate::dirs::var_raw("CLAUDE_CODE_CUSTOM_OAUTH_URL").is_some() {
        ".claude-custom-oauth.json"
    } else {
        ".claude.json"
    };
    let main = match crate::dirs::var("CLAUDE_CONFIG_DIR") {
        Some(dir) => PathBuf::from(dir).join(name),
        None => crate::dirs::home().join(name),
    };
    // The legacy file's directory is `CLAUDE_CONFIG_DIR ?? ~/.claude`: a variable that is set
    // but empty puts it in the client's working directory, which for every call we make is
    // an empty temporary one, so then it never applies.
    let legacy = match crate::dirs::var_raw("CLAUDE_CONFIG_DIR") {
        Some(d) if d.is_empty() => return main,
        _ => config_home().join(".config.json"),
    };
    if legacy_wins(&legacy, &main) {
        legacy
    } else {
        main
    }
}

fn legacy_wins(legacy: &Path, main: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(l) = std::fs::metadata(legacy) else {
        return false;
    };
    let writable = l.mode() & 0o222 != 0;
    if !l.is_file() || (l.len() == 0 && !writable) {
        return false;
    }
    if l.len() > 0 {
        // Every branch Claude Code takes from here picks the legacy file on a case-sensitive
        // file system, even when the main file exists too (it then warns about two files).
        return true;
    }
    match std::fs::metadata(main) {
        Err(_) => true,
        Ok(m) => m.is_file() && m.len() == 0 && m.mode() & 0o222 == 0 && m.nlink() == 1,
    }
}

impl Client for Claude {
    fn show(&self, op: Op, name: &str) -> String {
        match op {
            Op::Add => format!("claude mcp add-json -s user {name} <entry>"),
            Op::Remove => format!("claude mcp remove {name} -s user"),
            Op::Observe => format!("claude mcp get {name}"),
        }
    }

    fn name(&self) -> &'static str {
        "claude"
    }

    fn version(&self) -> Option<super::version::Version> {
        self.runner.version
    }

    fn config_path(&self) -> &Path {
        &self.config
    }

    fn home(&self) -> PathBuf {
        config_home()
    }

    /// Local scope: `projects.<dir>.mcpServers.<name>` in the config file, for any project.
    /// Project scope: `.mcp.json` in the directory mcp-deploy runs from.
    fn shadows(&self, name: &str) -> Result<Vec<Shadow>, ClientError> {
        shadows_in(&self.config, name)
    }

    /// The same files as every check reads ([`load_live_shadows`]: one reading, one verdict).
    fn shadows_of(
        &self,
        names: &[&str],
    ) -> Result<std::collections::BTreeMap<String, Vec<Shadow>>, ClientError> {
        let read = LiveShadows::read_in(&self.config, Scan::Projects)?;
        Ok(names
            .iter()
            .map(|n| (n.to_string(), super::table::LoadedShadows::of(&read, n)))
            .collect())
    }

    fn user_entries(&self) -> Result<Map<String, Value>, ClientError> {
        read_user_entries(&self.config)
    }

    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        let json = entry_for(entry, self.runner.version);
        self.runner
            .call(
                &["mcp", "add-json", "-s", "user", name, &json],
                format!("claude mcp add-json -s user {name} <entry>"),
            )
            .map(drop)
    }

    fn remove(&self, name: &str) -> Result<(), ClientError> {
        self.runner
            .call(
                &["mcp", "remove", name, "-s", "user"],
                format!("claude mcp remove {name} -s user"),
            )
            .map(drop)
    }

    fn observe(&self, name: &str) -> Result<Option<Entry>, ClientError> {
        self.observe_in(
            name,
            &Witness {
                scope: USER_SCOPE,
                not_there: "not user scope: a local or project entry of the same name shadows it",
                path: &self.config,
                entries: &|| read_user_entries(&self.config),
            },
        )
    }
}

/// `claude mcp get`'s label of the user scope ("User config (available in all your
/// projects)"), and of the managed file's ("Enterprise config (managed by your
/// organization)", 2.1.332 with `/etc/claude-code/managed-mcp.json`).
pub(crate) const USER_SCOPE: &str = "User config";
pub(crate) const MANAGED_SCOPE: &str = "Enterprise config";

/// Where an entry `claude mcp get` reports must be, to be the one observed: the scope label it
/// prints (its start), what is wrong when it names another, and the file that holds the exact
/// entry, read by `entries`.
pub(crate) struct Witness<'a> {
    pub(crate) scope: &'static str,
    pub(crate) not_there: &'static str,
    pub(crate) path: &'a Path,
    pub(crate) entries: &'a dyn Fn() -> Result<Map<String, Value>, ClientError>,
}

impl Claude {
    /// What `claude mcp get NAME` reports for `name` (`None`: not registered), which must be
    /// in the scope of `at` and agree with the entry its file holds: that entry, exactly.
    pub(crate) fn observe_in(
        &self,
        name: &str,
        at: &Witness,
    ) -> Result<Option<Entry>, ClientError> {
        let step = format!("claude mcp get {name}");
        let out = match self.runner.call(&["mcp", "get", name], step.clone()) {
            Ok(out) => out,
            // `get` of an unknown name exits 1 with "No MCP server named ..." on stderr
            // (before 2.1.285: "No MCP server found with name: ...").
            Err(ClientError::Failed { stderr, .. })
                if stderr.contains("No MCP server named")
                    || stderr.contains("No MCP server found with name") =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        let shown = parse_get(name, &out).map_err(|e| ClientError::Garbage {
            step: step.clone(),
            reason: e.to_string(),
        })?;
        if !shown.scope.starts_with(at.scope) {
            // The managed file wins over every other scope: a name registered there (`install
            // --scope managed`) is what claude reports, whatever else registers it.
            let not_there = match shown.scope.starts_with(MANAGED_SCOPE) {
                true => {
                    "from /etc/claude-code/managed-mcp.json, which wins over every other \
                         scope: a registration there is changed with --scope managed"
                }
                false => at.not_there,
            };
            return Err(ClientError::Disagrees {
                name: name.to_string(),
                reason: format!("claude reports it in scope {:?}, {not_there}", shown.scope),
            });
        }
        let config = (at.entries)()?;
        let disagree = |reason: String| ClientError::Disagrees {
            name: name.to_string(),
            reason,
        };
        let raw = config.get(name).ok_or_else(|| {
            disagree(format!(
                "claude reports it, but {} has no entry for it",
                at.path.display()
            ))
        })?;
        let entry = Entry::from_value(raw).map_err(|e| {
            disagree(format!(
                "its entry in {} is malformed: {e}",
                at.path.display()
            ))
        })?;
        let agrees = match (&entry.transport, &shown.transport) {
            (
                Transport::Stdio { command, args },
                Shown::Stdio {
                    command: c,
                    args: a,
                },
            ) => {
                (command == c || expanded(command) == *c)
                    && (shown_by_get(args) == *a || expanded_args(args) == *a)
            }
            (Transport::Remote { url, .. }, Shown::Remote { url: u }) => url == u,
            // Before 2.1.285 an entry without "type" is shown without Type, Command and Args.
            (Transport::Stdio { .. }, Shown::Untyped) => !entry.raw.contains_key("type"),
            _ => false,
        };
        if !agrees {
            return Err(disagree(format!(
                "`{step}` does not show what {} holds ({})",
                at.path.display(),
                entry.describe()
            )));
        }
        Ok(Some(entry))
    }
}

/// Where a same-name entry of another scope shadows the user-scope entry `name` of the
/// config file `config`, read-only (no claude binary needed): local scope,
/// `projects.<dir>.mcpServers.<name>`, for any project; project scope, the `.mcp.json` of the
/// directory mcp-deploy runs from and of each directory above it (claude looks for
/// `.mcp.json` from where it runs up to `/`).
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<Shadow>, ClientError> {
    let read = LiveShadows::read_in(config, Scan::WorkingDirectory)?;
    Ok(super::table::LoadedShadows::of(&read, name))
}

/// [`LiveShadows`] as the client table's once-per-run shadow reader.
pub(crate) fn load_live_shadows(
    config: &Path,
) -> Result<Box<dyn super::table::LoadedShadows>, ClientError> {
    Ok(Box::new(LiveShadows::read_in(config, Scan::Projects)?))
}

/// Same-name entries that win over a user-scope entry of the config file, for a check without
/// the claude binary, read once for every name a run asks about: what [`shadows_in`] reads (the
/// local scope of each project, the `.mcp.json` of the working directory and every directory
/// above it), and the `.mcp.json` of every project directory claude knows (`projects` in its
/// config) and of every directory above one (claude looks from where it runs up to `/`):
/// whether the user approved that project server cannot be told from outside, so it counts.
///
/// Each is said with where it wins ([`Reach`]): a local scope of the working directory or of a
/// directory above it (claude may key a project by its repository's root), and a `.mcp.json`
/// claude finds from here, win here; those of other projects, elsewhere.
pub(crate) struct LiveShadows {
    /// Each project's local-scope server names.
    local: Vec<(String, Vec<String>)>,
    /// `<dir>/.mcp.json` of the working directory and every directory above it, then of each
    /// project directory claude knows and every directory above one, each once, as read.
    project_files: Vec<(PathBuf, ProjectFile)>,
    /// The working directory (`None`: it cannot be told, and every shadow wins here).
    cwd: Option<PathBuf>,
}

/// A project `.mcp.json` as read.
enum ProjectFile {
    /// Its `mcpServers` (any JSON value; a name counts when the value has it as a key).
    Servers(Option<Value>),
    /// It exists and cannot be read or parsed: claude may read it, so it counts.
    Unreadable(String),
}

/// Which `.mcp.json` files a shadow reader looks at.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Scan {
    /// Those of the working directory and every directory above it ([`shadows_in`]).
    WorkingDirectory,
    /// Those too, and those of every project directory claude knows and every directory above
    /// one ([`load_live_shadows`]).
    Projects,
}

impl LiveShadows {
    pub(crate) fn read_in(config: &Path, reach: Scan) -> Result<LiveShadows, ClientError> {
        // One reading, as claude reads the file (Node's JSON.parse). The projects were read
        // again with serde_json before, which refuses a lone surrogate anywhere (pasted
        // history): the known projects then dropped out, and their `.mcp.json` went unread.
        let doc = read_config(config)?;
        let projects = match reach {
            Scan::WorkingDirectory => Vec::new(),
            Scan::Projects => doc.projects,
        };
        // Claude looks for `.mcp.json` from the directory it runs in up to `/`: the working
        // directory's ancestors first, then each project's directory and every one above it,
        // each once (walked linearly: a project key may be 100 000 components long).
        let cwd = std::env::current_dir().ok();
        let starts = cwd.iter().chain(projects.iter()).map(PathBuf::as_path);
        let project_files = super::upward::files_above(starts, ".mcp.json")
            .into_iter()
            .filter_map(|path| read_project_file(&path).map(|f| (path, f)))
            .collect();
        Ok(LiveShadows {
            local: doc.local,
            project_files,
            cwd,
        })
    }
}

impl super::table::LoadedShadows for LiveShadows {
    fn of(&self, name: &str) -> Vec<Shadow> {
        let reach = |dir: &Path| match &self.cwd {
            Some(cwd) if !cwd.starts_with(dir) => Reach::Elsewhere,
            _ => Reach::Here,
        };
        let mut found = Vec::new();
        for (dir, servers) in &self.local {
            if servers.iter().any(|s| s == name) {
                found.push(Shadow {
                    place: format!("local scope of project {dir}"),
                    reach: reach(Path::new(dir)),
                });
            }
        }
        found.extend(self.project_files.iter().filter_map(|(path, file)| {
            Some(Shadow {
                place: project_file_shadow(path, file, name)?,
                reach: reach(path.parent().unwrap_or(Path::new("/"))),
            })
        }));
        found
    }
}

/// A project `.mcp.json` (`path`) as claude would find it; `None` when there is none (a
/// dangling link included: claude finds nothing there either). Read bounded, never blocking.
fn read_project_file(path: &Path) -> Option<ProjectFile> {
    std::fs::symlink_metadata(path).ok()?;
    let text = match fsio::read_input_string(path, "project .mcp.json", fsio::limits::DOCUMENT) {
        Ok(t) => t,
        Err(e) if e.source.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(ProjectFile::Unreadable(e.source.to_string())),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    Some(match serde_json::from_str::<Value>(text) {
        Ok(mut v) => ProjectFile::Servers(v.get_mut("mcpServers").map(Value::take)),
        Err(e) => ProjectFile::Unreadable(format!("not JSON: {e}")),
    })
}

/// Whether the project file at `path` defines `name`: where, when it does, or when it cannot
/// be read — claude may still read it (it strips a byte-order mark, Node accepts a lone
/// surrogate escape, a FIFO blocks), so that what cannot be read fails rather than being
/// vouched for.
fn project_file_shadow(path: &Path, file: &ProjectFile, name: &str) -> Option<String> {
    match file {
        ProjectFile::Servers(servers) => servers
            .as_ref()
            .and_then(|m| m.get(name))
            .map(|_| format!("project scope in {}", path.display())),
        ProjectFile::Unreadable(why) => Some(format!(
            "project scope in {} (mcp-deploy cannot read it: {why}; claude may, so it \
             counts)",
            path.display()
        )),
    }
}

/// The entry `add-json` is given: the entry as rendered, plus `"type":"stdio"` for a stdio
/// entry without a type when the release is older than 2.1.285, whose `mcp get` would
/// otherwise not show what it holds (it prints Type, Command and Args only for an entry with
/// a type; 2.1.285 prints them for every stdio entry). Every Claude Code 2.x stores what it is
/// given as it is, and a stored `"type":"stdio"` is a default to every comparison
/// ([`crate::entry::normalized`]), so the flat document and a no-op re-run do not see it.
fn entry_for(entry: &Entry, version: Option<super::version::Version>) -> String {
    match typed_for(entry, version) {
        Some(raw) => Value::Object(raw).to_string(),
        None => entry.to_json(),
    }
}

/// `entry` with `"type":"stdio"` first, for a `version` whose `mcp get` shows Command and
/// Args only for a typed entry ([`entry_for`]); `None` when it is given as it is.
pub(crate) fn typed_for(
    entry: &Entry,
    version: Option<super::version::Version>,
) -> Option<Map<String, Value>> {
    let old = version.is_some_and(|v| v < TYPE_ALWAYS_SHOWN);
    if old && matches!(entry.transport, Transport::Stdio { .. }) && !entry.raw.contains_key("type")
    {
        let mut raw = Map::new();
        raw.insert("type".into(), Value::String("stdio".into()));
        raw.extend(entry.raw.clone());
        return Some(raw);
    }
    None
}

/// The first release whose `mcp get` prints Type, Command and Args for a stdio entry stored
/// without `"type"` (2.1.284 does not; checked with both).
const TYPE_ALWAYS_SHOWN: super::version::Version = super::version::Version::new(2, 1, 285);

/// `text` with each `${VAR}` and `${VAR:-default}` expanded from mcp-deploy's environment,
/// which the client inherits: how releases before 2.1.284 print Command and Args (2.1.100
/// prints `${X:-d}` as `d` when X is unset; `${X}` unset stays as it is).
fn expanded(text: &str) -> String {
    let lookup = |name: &str| std::env::var(name).ok();
    crate::identity::handshake::expand(text, &lookup)
}

fn expanded_args(args: &[String]) -> String {
    args.iter()
        .map(|a| expanded(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Args as `claude mcp get` prints them: joined by spaces, and each `${VAR:-default}` shown
/// as `${VAR}` (claude 2.1.284 to 2.1.332 drop the default when they print a reference).
fn shown_by_get(args: &[String]) -> String {
    let bare = |name: &str| Some(format!("${{{name}}}"));
    args.iter()
        .map(|a| crate::identity::handshake::expand(a, &bare))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What we read of Claude's config file: the user-scope servers, and which names each
/// project's local scope holds. Everything else is skipped unparsed (serde's `IgnoredAny`,
/// which serde_json scans without converting): a number JSON.parse reads as Infinity
/// (`1e400`), or a lone surrogate in pasted project history, is no reason to refuse the file.
#[derive(Debug, Default)]
struct ClaudeDoc {
    mcp_servers: Option<Value>,
    /// `(project directory, its local-scope server names)`.
    local: Vec<(String, Vec<String>)>,
    /// Every project directory claude knows (the keys of `projects`), whatever each holds.
    projects: Vec<PathBuf>,
}

/// A project's local-scope server names.
#[derive(serde::Deserialize)]
struct ProjectDoc {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: Option<Lenient<std::collections::BTreeMap<String, serde::de::IgnoredAny>>>,
}

/// Read Claude's config file; a missing one is empty.
fn read_config(path: &Path) -> Result<ClaudeDoc, ClientError> {
    let bad = |reason: String| ClientError::Config {
        path: path.to_path_buf(),
        reason,
    };
    let Some(text) = super::read_config_text(path)? else {
        return Ok(ClaudeDoc::default());
    };
    let (doc, replaced) =
        parse_lenient::<ClaudeDocRaw>(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if replaced > 0 && doc.mcp_servers.as_ref().is_some_and(holds_replacement) {
        return Err(bad(
            "an entry under \"mcpServers\" holds a lone UTF-16 surrogate escape (\\udXXX), \
             which mcp-deploy cannot carry exactly into its journal"
                .into(),
        ));
    }
    let projects = doc.projects.unwrap_or_default();
    let dirs = projects.keys().map(PathBuf::from).collect();
    // A project that is not an object, or whose servers are not one, shadows nothing.
    let local = projects
        .into_iter()
        .filter_map(|(dir, p)| {
            let servers = p.ok()?.mcp_servers?.ok()?;
            Some((dir, servers.into_keys().collect()))
        })
        .collect();
    Ok(ClaudeDoc {
        mcp_servers: doc.mcp_servers,
        local,
        projects: dirs,
    })
}

/// [`ClaudeDoc`] as parsed: projects kept only where they parse.
#[derive(serde::Deserialize)]
struct ClaudeDocRaw {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<Value>,
    #[serde(default)]
    projects: Option<std::collections::BTreeMap<String, Lenient<ProjectDoc>>>,
}

/// A value that is `T` when it parses as one, else skipped.
struct Lenient<T>(Option<T>);

impl<T> Lenient<T> {
    fn ok(self) -> Option<T> {
        self.0
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Only objects are tried as `T`; anything else is skipped unparsed.
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|t| Lenient(Some(t)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

fn holds_replacement(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\u{FFFD}'),
        Value::Array(a) => a.iter().any(holds_replacement),
        Value::Object(o) => o
            .iter()
            .any(|(k, v)| k.contains('\u{FFFD}') || holds_replacement(v)),
        _ => false,
    }
}

/// Read `mcpServers` of Claude's config file. A missing file has no entries.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    match read_config(path)?.mcp_servers.as_ref() {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(ClientError::Config {
            path: path.to_path_buf(),
            reason: "\"mcpServers\" is not an object".into(),
        }),
    }
}

#[derive(Debug, PartialEq)]
enum Shown {
    Stdio {
        command: String,
        args: String,
    },
    Remote {
        url: String,
    },
    /// No Type line: an entry stored without `"type"`, as releases before 2.1.285 show one.
    Untyped,
}

#[derive(Debug, PartialEq)]
struct GetOutput {
    scope: String,
    transport: Shown,
}

/// Why `claude mcp get NAME` printed something else than an entry; never quoting its output,
/// which holds env values (the type it names is no secret).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum GetError {
    #[error("it does not start with \"{name}:\"")]
    NotNamed { name: String },
    #[error("it has no {key} line")]
    NoLine { key: &'static str },
    #[error("unknown Type {kind:?}")]
    UnknownType { kind: String },
}

/// Parse `claude mcp get NAME` output:
/// ```text
/// NAME:
///   Scope: User config (available in all your projects)
///   Status: ...
///   Type: stdio
///   Command: /x/bin/y
///   Args: a b
/// ```
fn parse_get(name: &str, out: &str) -> Result<GetOutput, GetError> {
    let mut lines = out.lines().skip_while(|l| l.trim().is_empty());
    if lines.next().map(str::trim_end) != Some(&format!("{name}:")) {
        return Err(GetError::NotNamed {
            name: name.to_string(),
        });
    }
    let field = |key: &str| -> Option<String> {
        out.lines().find_map(|l| {
            let rest = l.strip_prefix("  ")?.strip_prefix(key)?.strip_prefix(':')?;
            Some(rest.strip_prefix(' ').unwrap_or(rest).to_string())
        })
    };
    let line = |key: &'static str| field(key).ok_or(GetError::NoLine { key });
    let scope = line("Scope")?;
    let Some(kind) = field("Type") else {
        // Releases before 2.1.285 print nothing more for an entry without "type"; output
        // with a Command or URL but no Type is none that any release prints.
        if field("Command").is_some() || field("URL").is_some() {
            return Err(GetError::NoLine { key: "Type" });
        }
        return Ok(GetOutput {
            scope,
            transport: Shown::Untyped,
        });
    };
    let transport = match kind.as_str() {
        "stdio" => Shown::Stdio {
            command: line("Command")?,
            args: line("Args")?,
        },
        "http" | "sse" => Shown::Remote { url: line("URL")? },
        other => {
            return Err(GetError::UnknownType {
                kind: other.to_string(),
            })
        }
    };
    Ok(GetOutput { scope, transport })
}

/// Claude Code, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct ClaudeKind;

static ABOUT: super::table::About =
    super::table::about!(cli claude "Claude Code" MCP_DEPLOY_CLAUDE,
    npm ["@anthropic-ai/claude-code"] (2, 0, 0) ..= (2, 1, 332))
    .native("claude");

/// The oldest release whose `deniedMcpServers` and `allowedMcpServers` mcp-deploy counts as
/// keeping a server out (`--only-deployed`): 2.0.0 obeys neither key; 2.1.100 drops a managed
/// settings file holding one key of a type it does not take (`"model": 5`, `"hooks": 5`,
/// `"permissions": {"allow": 5}`) or a list entry of no known shape, and then loads the servers
/// that file denies; 2.1.284 and 2.1.332 apply the lists of such a file (each seen with
/// `claude mcp list`, tests/it/only_deployed.rs). The same holds for
/// `strictPluginOnlyCustomization` (2.0.0 does not know it; 2.1.100 reads fewer forms of it).
/// mcp-deploy does not replicate claude's settings schema, so below this release a list keeps
/// nothing out for certain.
pub(crate) const LISTS_HOLD_SINCE: super::version::Version =
    super::version::Version::new(2, 1, 284);

/// Whether claude's deny and allow lists certainly apply on this host: the release of the
/// claude a run would call ([`super::version::on_host`]) is [`LISTS_HOLD_SINCE`] or newer.
/// `Err`: why not.
pub(crate) fn lists_certainly_apply() -> Result<super::version::Version, String> {
    match super::version::on_host(&ABOUT)? {
        v if v >= LISTS_HOLD_SINCE => Ok(v),
        v => Err(format!(
            "claude {v} may not apply them: before {LISTS_HOLD_SINCE} a release obeys no list \
             (2.0.0) or drops a settings file over one key of a type it does not take (2.1.100)"
        )),
    }
}

impl super::table::Kind for ClaudeKind {
    super::table::folder_readings!(about: ABOUT, layers: layers::read);
    fn open(&self, options: &ClientOptions) -> Result<Box<dyn super::Client>, ClientError> {
        Ok(Box::new(Claude::open(&ABOUT, options)?))
    }
    fn load_shadows(
        &self,
        config: &Path,
    ) -> Result<Option<Box<dyn super::table::LoadedShadows>>, ClientError> {
        load_live_shadows(config).map(Some)
    }
    fn load_layers(&self, user_config: &Path) -> Option<Box<dyn super::layers::Loaded>> {
        Some(layers::load(user_config))
    }
    fn managed(&self) -> Option<&'static dyn super::table::Managed> {
        Some(&managed::Scope)
    }
    fn policy(&self) -> Option<&'static dyn super::PolicyWriter> {
        Some(&policy::Policy)
    }
    /// A list (`deniedMcpServers`, `allowedMcpServers`, `strictPluginOnlyCustomization`)
    /// keeps a server out only under a release that certainly applies it
    /// ([`lists_certainly_apply`]).
    fn keeps_out_here(&self, finding: &super::layers::Finding) -> Result<(), String> {
        let is_list = [
            " deniedMcpServers",
            " allowedMcpServers",
            " strictPluginOnlyCustomization",
        ]
        .iter()
        .any(|key| finding.source.ends_with(key));
        match is_list {
            true => lists_certainly_apply().map(|_| ()),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GET: &str = "ct:\n  Scope: User config (available in all your projects)\n  Status: ✘ Failed to connect\n  Type: stdio\n  Command: /opt/ct/bin/codetools\n  Args: mcp serve\n  Environment:\n    TOKEN=secret\n\nTo remove this server, run: claude mcp remove ct -s user\n";

    #[test]
    fn parses_real_get_output() {
        let g = parse_get("ct", GET).unwrap();
        assert!(g.scope.starts_with("User config"));
        assert_eq!(
            g.transport,
            Shown::Stdio {
                command: "/opt/ct/bin/codetools".into(),
                args: "mcp serve".into()
            }
        );
        let empty_args =
            "o:\n  Scope: Local config (private)\n  Type: stdio\n  Command: /x\n  Args:\n";
        let g = parse_get("o", empty_args).unwrap();
        assert_eq!(
            g.transport,
            Shown::Stdio {
                command: "/x".into(),
                args: String::new()
            }
        );
        let http = "h:\n  Scope: User config\n  Type: http\n  URL: http://127.0.0.1:9/mcp\n  Headers:\n    Authorization: Bearer x\n";
        assert_eq!(
            parse_get("h", http).unwrap().transport,
            Shown::Remote {
                url: "http://127.0.0.1:9/mcp".into()
            }
        );
    }

    /// What Claude Code 2.0.0 to 2.1.284 print for an entry stored without "type".
    #[test]
    fn claude_before_2_1_285_get_output_without_type_is_read() {
        let old = "ct:\n  Scope: User config (available in all your projects)\n  Status: ✗ Failed to connect\n\nTo remove this server, run: claude mcp remove \"ct\" -s user\n";
        let g = parse_get("ct", old).unwrap();
        assert_eq!(g.transport, Shown::Untyped);
        assert!(g.scope.starts_with("User config"));
        // A Command line without a Type line is no output any release prints.
        let odd = "ct:\n  Scope: User config\n  Command: /x\n";
        assert_eq!(
            parse_get("ct", odd).unwrap_err(),
            GetError::NoLine { key: "Type" }
        );
    }

    #[test]
    fn claude_before_2_1_285_is_sent_a_typed_stdio_entry() {
        use super::super::version::Version;
        let stdio = Entry::from_value(&serde_json::json!({"command":"/x","args":["a"]})).unwrap();
        let typed: Value =
            serde_json::from_str(&entry_for(&stdio, Some(Version::new(2, 1, 284)))).unwrap();
        assert_eq!(
            typed,
            serde_json::json!({"type":"stdio","command":"/x","args":["a"]})
        );
        let typed_entry = Entry::from_value(&typed).unwrap();
        assert!(
            typed_entry.same_registration(&stdio),
            "a default, not a change"
        );
        assert_eq!(
            typed_entry.flat(),
            stdio.flat(),
            "the document keeps its shape"
        );
        for v in [
            Some(Version::new(2, 1, 285)),
            Some(Version::new(2, 1, 332)),
            None,
        ] {
            assert_eq!(entry_for(&stdio, v), stdio.to_json(), "{v:?}");
        }
        let http =
            Entry::from_value(&serde_json::json!({"type":"http","url":"http://h/m"})).unwrap();
        assert_eq!(
            entry_for(&http, Some(Version::new(2, 0, 0))),
            http.to_json()
        );
    }

    #[test]
    fn get_shows_references_without_their_defaults() {
        let args: Vec<String> = ["${A:-x}", "${B}", "p-${C:-}-q", "$D"]
            .map(String::from)
            .to_vec();
        assert_eq!(shown_by_get(&args), "${A} ${B} p-${C}-q $D");
    }

    #[test]
    fn garbage_get_output_is_refused() {
        for (out, want) in [
            ("", "does not start"),
            ("other:\n  Scope: User config\n", "does not start"),
            ("ct:\n  Type: stdio\n", "no Scope"),
            (
                "ct:\n  Scope: User config\n  Type: carrier-pigeon\n",
                "unknown Type",
            ),
            (
                "ct:\n  Scope: User config\n  Type: stdio\n  Args: a\n",
                "no Command",
            ),
        ] {
            let err = parse_get("ct", out).unwrap_err().to_string();
            assert!(err.contains(want), "{out:?}: {err}");
        }
    }

    #[test]
    fn config_file_reading() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".claude.json");
        assert!(read_user_entries(&p).unwrap().is_empty());
        std::fs::write(&p, r#"{"projects":{}}"#).unwrap();
        assert!(read_user_entries(&p).unwrap().is_empty());
        std::fs::write(&p, r#"{"mcpServers":{"a":{"command":"/x"}}}"#).unwrap();
        assert_eq!(read_user_entries(&p).unwrap().len(), 1);
        std::fs::write(&p, "{not json").unwrap();
        assert!(read_user_entries(&p)
            .unwrap_err()
            .to_string()
            .contains("not valid JSON"));
        std::fs::write(&p, r#"{"mcpServers":[]}"#).unwrap();
        assert!(read_user_entries(&p).is_err());
    }

    #[test]
    fn what_json_parse_accepts_is_read() {
        // Lone surrogates, each kind, beside a valid pair that must stay as it is.
        let text = r#"{"h":"a\ud800b","l":"\udc00","p":"\ud83d\ude00","q":"\\ud800","mcpServers":{"a":{"command":"/x"}}}"#;
        let (v, n) = parse_lenient::<Value>(text).unwrap();
        assert_eq!(n, 2);
        assert_eq!(v["h"], "a\u{FFFD}b");
        assert_eq!(v["l"], "\u{FFFD}");
        assert_eq!(v["p"], "\u{1F600}");
        assert_eq!(v["q"], "\\ud800", "an escaped backslash is not an escape");
        let deep = format!("{{\"x\":{}1{}}}", "[".repeat(900), "]".repeat(900));
        assert!(parse_lenient::<Value>(&deep).is_ok());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".claude.json");
        std::fs::write(&p, text).unwrap();
        assert_eq!(read_user_entries(&p).unwrap().len(), 1);
        // Skipped unparsed: a number JSON.parse reads as Infinity, a project that is no object,
        // a local server entry nested past any limit.
        let odd = format!(
            r#"{{"big":1e400,"projects":{{"/p":{{"mcpServers":{{"s":{}1{}}},"h":"\ud800"}},"/q":7}},"mcpServers":{{}}}}"#,
            "[".repeat(900),
            "]".repeat(900)
        );
        std::fs::write(&p, odd).unwrap();
        assert!(read_user_entries(&p).unwrap().is_empty());
        assert_eq!(
            read_config(&p).unwrap().local,
            [("/p".to_string(), vec!["s".to_string()])]
        );
        std::fs::write(&p, r#"{"mcpServers":{"a":{"command":"/x\udfff"}}}"#).unwrap();
        let err = read_user_entries(&p).unwrap_err().to_string();
        assert!(err.contains("lone UTF-16 surrogate"), "{err}");
    }
}
