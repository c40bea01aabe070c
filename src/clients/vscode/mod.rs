//! VS Code (`vscode`): no VS Code can be installed here, and `code --add-mcp` adds a server but
//! has no way to remove one, so mcp-deploy edits VS Code's user `mcp.json` itself
//! ([`super::file_backed`]), as it does Cursor's. Every rule below was read in VS Code's own
//! source (microsoft/vscode); docs/clients.md cites each file and identifier.
//!
//! - **Where.** The user data directory is `$VSCODE_PORTABLE/user-data` when that is set, else
//!   `$VSCODE_APPDATA/Code`, else `$XDG_CONFIG_HOME/Code` (else `~/.config/Code`)
//!   (`platform/environment/node/userDataPath.ts`, `doGetUserDataPath`); the default profile's
//!   file is `<that>/User/mcp.json` (`appSettingsHome` is `<userDataPath>/User`,
//!   `mcpResource: joinPath(location, 'mcp.json')`). Only the product `Code` (VS Code stable)
//!   is supported: Insiders, Code - OSS and VSCodium keep other directories.
//! - **The file** is JSON with comments: `{"servers": {NAME: entry}, "inputs": [...]}`. An
//!   entry is `{"type": "stdio", "command", "args", "env"}` (also `envFile`, `cwd`, `dev`,
//!   `sandboxEnabled`) or `{"type": "http", "url", "headers"}` (also `oauth`, `dev`); a missing
//!   or unknown `type` is `stdio` with a `command`, else `http`
//!   (`McpResourceScannerService.sanitizeServer`), so `sse` is read as `http` and cannot be
//!   pinned: refused. Written with `type`, read back without `type: "stdio"`.
//! - **Variables.** VS Code resolves `${env:NAME}`, `${input:ID}` (prompting the user, from the
//!   file's `inputs`), `${workspaceFolder}`, `${userHome}`, `${config:...}`, `${command:...}`
//!   and more in every string of the entry. claude's `${NAME}` is written `${env:NAME}` and read
//!   back; `${NAME:-default}` is refused; an entry holding any other `${...}` is read as it is
//!   plus the key `vscode-interpolation`, which no check accepts.
//! - **Shadows**: a same-name server of a workspace folder's `.vscode/mcp.json` or `.mcp.json`,
//!   of a `.code-workspace` file's `settings.mcp`, or of the user `settings.json`'s `mcp`
//!   (VS Code moves that into `mcp.json` when it starts).
//! - **Layers** ([`layers`]): `chat.mcp.access` (and the older `chat.mcp.enabled`), the
//!   allow and deny lists, discovery from other applications, `/etc/vscode/policy.json`, and
//!   profiles with their own `mcp.json`.
//! - No real VS Code runs in the tests.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::file_backed::{self, map_refs};
use super::file_written::Format;
use super::kit::node_json;
use super::layers::{Context, Effect, Finding};
use super::scopes::Found;
use super::ClientError;
use crate::entry::{Entry, Transport};

/// VS Code's format ([`super::file_written`]).
pub(crate) struct Vscode;

impl Format for Vscode {
    const KIND: &'static dyn super::table::Kind = &VscodeKind;
    const KEY: &'static str = "servers";
    // What VS Code's "MCP: Add Server" writes (`JSON.stringify(.., null, '\t')`).
    const NEW_FILE: &'static str = "{\n\t\"servers\": {},\n\t\"inputs\": []\n}\n";
    const TO_CLAUDE: fn(&Value) -> Value = to_claude;
    const TO_CLIENT: fn(&str, &Entry) -> Result<Value, ClientError> = to_vscode;
}

/// The product's data folder name: VS Code stable's `nameShort`.
const PRODUCT: &str = "Code";

/// The key a read entry gains when it holds a `${...}` other than `${env:NAME}`.
const MARK: &str = "vscode-interpolation";

/// `LINUX_SYSTEM_POLICY_FILE_PATH` (`base/common/policy.ts`).
const POLICY_FILE: &str = "/etc/vscode/policy.json";

/// VS Code's user data directory on this host (`doGetUserDataPath`).
fn user_data_dir() -> PathBuf {
    let dir = if let Some(p) = crate::dirs::var("VSCODE_PORTABLE") {
        PathBuf::from(p).join("user-data")
    } else if let Some(a) = crate::dirs::var("VSCODE_APPDATA") {
        PathBuf::from(a).join(PRODUCT)
    } else {
        crate::dirs::var("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::dirs::home().join(".config"))
            .join(PRODUCT)
    };
    // A relative one is resolved against the working directory, as VS Code does.
    match std::env::current_dir() {
        Ok(cwd) if dir.is_relative() => cwd.join(dir),
        _ => dir,
    }
}

/// `<user data>/User/mcp.json`: the default profile's servers.
pub(crate) fn config_path() -> PathBuf {
    user_data_dir().join("User").join("mcp.json")
}

/// The user entries of `path` in the claude shape.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    super::file_written::read_user_entries::<Vscode>(path)
}

/// A VS Code entry in the claude shape: `type: "stdio"` is dropped, a remote one without a
/// type gains `type: http`, `${env:NAME}` becomes `${NAME}`. Any other `${...}` keeps the
/// entry as it is, marked.
pub(crate) fn to_claude(v: &Value) -> Value {
    let Some(m) = v.as_object() else {
        return v.clone();
    };
    let stdio = m.contains_key("command");
    let mut other = false;
    let mut out = Map::new();
    if !stdio && m.contains_key("url") && !m.contains_key("type") {
        out.insert("type".into(), "http".into());
    }
    for (k, x) in m {
        if k == "type" && stdio && x == "stdio" {
            continue;
        }
        out.insert(k.clone(), file_backed::unmap_value(x, "env:", &mut other));
    }
    if other {
        let mut kept = m.clone();
        kept.insert(
            MARK.into(),
            "a ${...} that is not ${env:NAME} (an ${input:...} prompts the user)".into(),
        );
        return Value::Object(kept);
    }
    Value::Object(out)
}

/// `entry` (claude shape) as VS Code holds it, or why it cannot hold it exactly.
pub(crate) fn to_vscode(name: &str, entry: &Entry) -> Result<Value, ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client: "vscode",
        name: name.to_string(),
        reason,
    };
    // VS Code's JSON parser builds plain objects, where "__proto__" sets the prototype.
    node_json::refuse_proto("vscode", name, "VS Code", "it would not run it")?;
    let map = |what: String, s: &str| -> Result<String, ClientError> {
        map_refs(s, |n| format!("${{env:{n}}}"))
            .map_err(|r| refuse(format!("{what} holds {r}, which VS Code cannot express")))
    };
    let mut out = Map::new();
    let keys: (&[&str], &[&str]) = match &entry.transport {
        Transport::Stdio { command, args } => {
            out.insert("type".into(), "stdio".into());
            file_backed::map_command(entry, command, args, &mut out, &map)?;
            (&["type", "command", "args", "env"], &["envFile", "cwd"])
        }
        Transport::Remote { kind, url } => {
            if kind != "http" {
                return Err(refuse(format!(
                    "VS Code reads every remote server as type \"http\" and chooses its transport \
                     itself (streamable HTTP, then SSE), so type {kind:?} cannot be pinned"
                )));
            }
            out.insert("type".into(), "http".into());
            out.insert("url".into(), map("the url".into(), url)?.into());
            (&["type", "url", "headers"], &[])
        }
    };
    file_backed::map_env_and_headers(entry, &mut out, &map, &refuse)?;
    file_backed::extra_keys(entry, keys, "VS Code", &refuse, |k, v| {
        let Some(s) = v.as_str() else {
            return Err(refuse(format!("{k} is not a string")));
        };
        out.insert(k.clone(), map(k.clone(), s)?.into());
        Ok(())
    })?;
    Ok(Value::Object(out))
}

// ---- Other files holding servers: shadows and scopes ----

/// The servers of a Claude-style `.mcp.json` (`WorkspaceDotMcpDiscovery`): its `mcpServers`,
/// or the top level itself when that key is absent.
fn dot_mcp_servers(file: &Path) -> Result<Map<String, Value>, ClientError> {
    let doc = file_backed::read_document(file)?.unwrap_or_default();
    Ok(match doc.get("mcpServers") {
        Some(Value::Object(m)) => m.clone(),
        Some(_) => Map::new(),
        None => doc
            .as_object()
            .map(|o| {
                o.iter()
                    .filter(|(_, v)| v.is_object())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// The `servers` of the `mcp` key of a settings document at `path` (`path` names the keys in
/// turn: `["mcp"]` for settings.json, `["settings", "mcp"]` for a `.code-workspace`).
fn nested_servers(file: &Path, path: &[&str]) -> Result<Map<String, Value>, ClientError> {
    let doc = file_backed::read_document(file)?.unwrap_or_default();
    let mut at = &doc;
    for key in path {
        match at.get(*key) {
            Some(v) => at = v,
            None => return Ok(Map::new()),
        }
    }
    Ok(at
        .get("servers")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default())
}

/// Every other file VS Code reads servers from, as (file, what it is, its servers): the user
/// `settings.json`'s `mcp`, and for the working directory and each directory above it (each
/// may be a workspace folder) `.vscode/mcp.json`, `.mcp.json` and the `.code-workspace` files.
type Read = Result<Map<String, Value>, ClientError>;
fn other_files(user_config: &Path, cwd: Option<&Path>) -> Vec<(PathBuf, &'static str, Read)> {
    let mut out = Vec::new();
    if let Some(user) = user_config.parent() {
        let f = user.join("settings.json");
        let read = nested_servers(&f, &["mcp"]);
        out.push((
            f,
            "user settings (VS Code moves their \"mcp\" servers into mcp.json when it starts)",
            read,
        ));
    }
    for dir in cwd.iter().flat_map(|c| c.ancestors()) {
        let f = dir.join(".vscode").join("mcp.json");
        if f != user_config {
            let read = file_backed::read_servers(&f, "servers");
            out.push((f, "workspace folder config", read));
        }
        let f = dir.join(".mcp.json");
        let read = dot_mcp_servers(&f);
        out.push((f, "workspace folder .mcp.json", read));
    }
    if let Some(Ok(entries)) = cwd.map(std::fs::read_dir) {
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "code-workspace"))
            .collect();
        files.sort();
        for f in files {
            let read = nested_servers(&f, &["settings", "mcp"]);
            out.push((f, "workspace file", read));
        }
    }
    out
}

/// Same-name servers of the other files VS Code reads ([`other_files`]): VS Code runs each
/// beside the user one (a server of another collection), or moves it over it (settings).
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let cwd = std::env::current_dir().ok();
    let mut found = Vec::new();
    for (file, what, read) in other_files(config, cwd.as_deref()) {
        super::kit::shadows::note(&mut found, what, &file, read, name, "VS Code");
    }
    Ok(found)
}

/// Every registration VS Code reads, for prune: the user file, the other files of
/// [`other_files`], and each profile's own `mcp.json`.
pub(crate) fn scopes(found: &mut Found, cwd: Option<&Path>) {
    let user = config_path();
    found.add("vscode", &user, "user", read_user_entries(&user));
    for (file, what, read) in other_files(&user, cwd) {
        found.add("vscode", &file, what, read);
    }
    for p in profiles(&user).unwrap_or_default() {
        if let Some(file) = p.mcp {
            let read = read_user_entries(&file);
            found.add("vscode", &file, &format!("profile {:?}", p.name), read);
        }
    }
}

// ---- Profiles ----

/// A profile of `User/globalStorage/storage.json` (`userDataProfiles`): its name and, unless
/// it uses the default profile's MCP servers (`useDefaultFlags.mcp`), its own `mcp.json`.
#[derive(Debug)]
struct Profile {
    name: String,
    mcp: Option<PathBuf>,
}

/// Why VS Code's profile storage (`User/globalStorage/storage.json`) cannot be read. The
/// finding that reports it names the file, so the text does not.
#[derive(Debug, thiserror::Error)]
enum ProfilesError {
    #[error("{source}")]
    Unreadable {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("not valid JSON: line {line}")]
    NotJson { file: PathBuf, line: usize },
}

/// The profiles VS Code knows (`UserDataProfilesService`, `PROFILES_KEY`), `Ok(empty)` without
/// the storage file; `Err` names why it cannot be read.
fn profiles(user_config: &Path) -> Result<Vec<Profile>, ProfilesError> {
    let Some(user) = user_config.parent() else {
        return Ok(Vec::new());
    };
    let file = user.join("globalStorage").join("storage.json");
    let text = match crate::fsio::read_input_if_exists(
        &file,
        "VS Code storage",
        crate::fsio::limits::DOCUMENT,
    ) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => {
            return Err(ProfilesError::Unreadable {
                file,
                source: e.source,
            })
        }
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| ProfilesError::NotJson {
        file: file.clone(),
        line: e.line(),
    })?;
    let Some(list) = doc.get("userDataProfiles").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let home = user.join("profiles");
    Ok(list
        .iter()
        .filter_map(|p| {
            let name = p.get("name")?.as_str()?.to_string();
            let shared = p
                .pointer("/useDefaultFlags/mcp")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let location = match p.get("location")? {
                Value::String(s) => s.clone(),
                Value::Object(o) => o.get("path")?.as_str()?.to_string(),
                _ => return None,
            };
            // Stored as the profile's folder under `profiles/`, or as a URI.
            let dir = match location.strip_prefix("file://") {
                Some(path) => PathBuf::from(path),
                None if location.starts_with('/') => PathBuf::from(&location),
                None => home.join(&location),
            };
            Some(Profile {
                name,
                mcp: (!shared).then(|| dir.join("mcp.json")),
            })
        })
        .collect())
}

// ---- Layers ----

/// The layers VS Code applies to the user entry `cx.name` ([`super::layers`]).
pub(crate) fn layers(cx: &Context) -> Vec<Finding> {
    let mut found = Vec::new();
    let user = cx.user_config.parent().unwrap_or(Path::new("/"));
    let settings_file = user.join("settings.json");
    let settings = read_doc(
        &settings_file,
        "VS Code reads its MCP settings from it",
        Syntax::Jsonc,
        &mut found,
    );
    // `FilePolicyService.read`: `JSON.parse`, so no comments; a file it cannot parse gives
    // no policy at all.
    let policy = read_doc(
        Path::new(POLICY_FILE),
        "VS Code applies its policies over every setting",
        Syntax::Json,
        &mut found,
    );
    let setting = |key: &str| settings.as_ref().and_then(|d| setting_of(d, key));
    let policy_of = |key: &str| policy.as_ref().and_then(|d| d.get(key)).cloned();

    // chat.mcp.access (policy ChatMCP wins), and the older boolean chat.mcp.enabled.
    let (access, from) = match policy_of("ChatMCP") {
        Some(v) => (Some(v), format!("{POLICY_FILE} ChatMCP")),
        None => match setting("chat.mcp.access") {
            Some(v) => (
                Some(v),
                format!("{} chat.mcp.access", settings_file.display()),
            ),
            None => (
                setting("chat.mcp.enabled"),
                format!("{} chat.mcp.enabled", settings_file.display()),
            ),
        },
    };
    match access.as_ref() {
        Some(Value::Bool(false)) => found.push(Finding::new(
            &from,
            Effect::Blocked("MCP servers are switched off".into()),
        )),
        Some(Value::String(s)) if s == "none" => found.push(Finding::new(
            &from,
            Effect::Blocked("\"none\": VS Code starts no MCP server".into()),
        )),
        Some(Value::String(s)) if s == "registry" => found.push(Finding::new(
            &from,
            Effect::Blocked(
                "\"registry\": only servers installed from the MCP registry run, and one \
                 written into mcp.json is not"
                    .into(),
            ),
        )),
        _ => {}
    }

    // The allow and deny lists (`AllowedMcpServersService.checkServerAllowed`): a policy
    // value wins over the setting; with ChatAllowManagedMcpServersOnly only the policy's
    // allow list counts.
    let identity = Identity::of(cx.name, cx.declared);
    let managed_only = policy_of("ChatAllowManagedMcpServersOnly") == Some(Value::Bool(true));
    let list = |policy_key: &str, setting_key: &str| -> Option<(Vec<Value>, String)> {
        if let Some(v) = policy_of(policy_key).and_then(matchers) {
            return Some((v, format!("{POLICY_FILE} {policy_key}")));
        }
        if managed_only && policy_key == "ChatAllowedMcpServers" {
            return Some((
                Vec::new(),
                format!("{POLICY_FILE} ChatAllowManagedMcpServersOnly"),
            ));
        }
        setting(setting_key)
            .and_then(matchers)
            .map(|v| (v, format!("{} {setting_key}", settings_file.display())))
    };
    if let Some((deny, from)) = list("ChatDeniedMcpServers", "chat.mcp.deniedServers") {
        if deny.iter().any(|m| identity.matches(m)) {
            found.push(Finding::new(
                from,
                Effect::Blocked("a deny entry matches it".into()),
            ));
        }
    }
    if let Some((allow, from)) = list("ChatAllowedMcpServers", "chat.mcp.allowedServers") {
        if !allow.iter().any(|m| identity.matches(m)) {
            found.push(Finding::new(
                from,
                Effect::Blocked("an allow list is set and no entry of it matches it".into()),
            ));
        }
    }

    // chat.mcp.discovery.enabled: servers of other applications' files run beside ours.
    let discovery = setting("chat.mcp.discovery.enabled");
    let on = |source: &str| match &discovery {
        Some(Value::Bool(b)) => *b,
        Some(Value::Object(o)) => o.get(source).and_then(Value::as_bool).unwrap_or(false),
        _ => false,
    };
    let home = crate::dirs::home();
    let config_home = crate::dirs::var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let mut sources = vec![
        (
            "claude-desktop",
            config_home.join("Claude/claude_desktop_config.json"),
        ),
        ("windsurf", home.join(".codeium/windsurf/mcp_config.json")),
        ("cursor-global", home.join(".cursor/mcp.json")),
    ];
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            sources.push(("cursor-workspace", dir.join(".cursor/mcp.json")));
        }
    }
    for (source, file) in sources {
        if !on(source) {
            continue;
        }
        match file_backed::read_servers(&file, "mcpServers") {
            Ok(m) if m.contains_key(cx.name) => found.push(Finding::new(
                format!("{} (chat.mcp.discovery.enabled: {source})", file.display()),
                Effect::Replaced("VS Code also runs this file's server of that name".into()),
            )),
            Ok(_) => {}
            Err(_) if std::fs::symlink_metadata(&file).is_err() => {}
            Err(e) => found.push(Finding::new(
                file.display(),
                Effect::not_compared(format!("VS Code discovers its servers ({source}): {e}")),
            )),
        }
    }

    // Profiles with their own mcp.json: a window using one does not load the user file.
    match profiles(cx.user_config) {
        Err(why) => found.push(Finding::new(
            user.join("globalStorage/storage.json").display(),
            Effect::not_compared(format!(
                "VS Code keeps its profiles there, and mcp-deploy cannot read it: {why}"
            )),
        )),
        Ok(list) => {
            for p in list {
                let Some(file) = p.mcp else { continue };
                let names = match read_user_entries(&file) {
                    Ok(m) if m.contains_key(cx.name) => "names it too",
                    Ok(_) => "does not name it",
                    Err(_) => "cannot be read",
                };
                found.push(Finding::new(
                    file.display(),
                    Effect::not_compared(format!(
                        "a VS Code window using profile {:?} loads this file instead of the \
                         user mcp.json, and it {names}",
                        p.name
                    )),
                ));
            }
        }
    }
    found
}

/// How VS Code parses a layer file.
#[derive(Clone, Copy, PartialEq)]
enum Syntax {
    /// Its settings: JSON with comments and trailing commas.
    Jsonc,
    /// Its policy file: `JSON.parse`.
    Json,
}

/// A layer file, `None` when it does not exist; one that exists and cannot be read or parsed
/// is a `NotCompared` finding.
fn read_doc(file: &Path, what: &str, syntax: Syntax, found: &mut Vec<Finding>) -> Option<Value> {
    let text = match super::layers::read_layer(file, what, crate::fsio::limits::DOCUMENT) {
        Ok(t) => t?,
        Err(unread) => {
            found.push(unread);
            return None;
        }
    };
    let parsed = match syntax {
        Syntax::Jsonc => file_backed::parse_value(&text),
        Syntax::Json => match super::kit::node_json::parse_lenient::<Value>(&text) {
            Ok((v, _)) => Some(v),
            // A syntax error Node's JSON.parse makes too (the reader's depth bound is another
            // kind of error, and stays a doubt): VS Code applies none of the file, certainly.
            Err(e) if e.is_syntax() || e.is_eof() => {
                found.push(Finding::new(
                    file.display(),
                    Effect::Answered(format!(
                        "{what}, and VS Code applies none of it: it is not JSON as JSON.parse \
                         reads it"
                    )),
                ));
                return None;
            }
            Err(_) => None,
        },
    };
    match parsed {
        Some(v @ Value::Object(_)) => Some(v),
        None if syntax == Syntax::Jsonc && text.trim().is_empty() => None,
        _ => {
            let form = match syntax {
                Syntax::Jsonc => "an object of JSON with comments",
                Syntax::Json => "a JSON object (VS Code then applies none of it)",
            };
            found.push(Finding::new(
                file.display(),
                Effect::not_compared(format!("{what}, and it is not {form}")),
            ));
            None
        }
    }
}

/// A setting of a settings document: the dotted key itself, else the nested objects.
fn setting_of(doc: &Value, key: &str) -> Option<Value> {
    if let Some(v) = doc.get(key) {
        return Some(v.clone());
    }
    let mut at = doc;
    for part in key.split('.') {
        at = at.get(part)?;
    }
    Some(at.clone())
}

/// A list of matchers (`getMcpServerMatchers`): an array, or a policy's JSON text of one;
/// `None` when it is neither (VS Code reads that as not configured).
fn matchers(v: Value) -> Option<Vec<Value>> {
    match v {
        Value::Array(a) => Some(a),
        Value::String(s) => serde_json::from_str::<Value>(&s)
            .ok()
            .and_then(|v| match v {
                Value::Array(a) => Some(a),
                _ => None,
            }),
        _ => None,
    }
}

/// What a matcher is compared with (`IMcpServerIdentity`), as the entry is written.
struct Identity {
    name: String,
    url: Option<String>,
    command: Option<Vec<String>>,
}

impl Identity {
    fn of(name: &str, declared: &Entry) -> Identity {
        let written = to_vscode(name, declared).ok();
        let s = |k: &str| {
            written
                .as_ref()
                .and_then(|w| w.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let command = s("command").map(|c| {
            let args: Vec<String> = written
                .as_ref()
                .and_then(|w| w.get("args"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            std::iter::once(c).chain(args).collect()
        });
        Identity {
            name: name.to_string(),
            url: s("url"),
            command,
        }
    }

    /// `matchesMatcher`, for a matcher with exactly one of its three fields (`isValidMatcher`:
    /// any other is dropped, and matches nothing).
    fn matches(&self, m: &Value) -> bool {
        let name = m.get("serverName").and_then(Value::as_str);
        let url = m.get("serverUrl").and_then(Value::as_str);
        let command = m.get("serverCommand").and_then(Value::as_array);
        let fields = [
            name.is_some_and(|s| !s.is_empty()),
            url.is_some_and(|s| !s.is_empty()),
            command.is_some_and(|c| !c.is_empty() && c.iter().all(Value::is_string)),
        ];
        if fields.iter().filter(|f| **f).count() != 1 {
            return false;
        }
        if let Some(n) = name.filter(|s| !s.is_empty()) {
            return n == self.name;
        }
        if let Some(p) = url.filter(|s| !s.is_empty()) {
            return self.url.as_deref().is_some_and(|u| wildcard(p, u));
        }
        let want: Vec<&str> = command
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        self.command
            .as_ref()
            .is_some_and(|c| c.iter().map(String::as_str).eq(want))
    }
}

/// `*` matches any run of characters, case-insensitively (`matchesUrlPattern`; VS Code keeps
/// a `*` inside the authority from crossing `/`, `@`, `?`, `#`, which this looser match
/// over-reports: a deny matches more, an allow no less).
fn wildcard(pattern: &str, text: &str) -> bool {
    super::layers::glob(&pattern.to_lowercase(), &text.to_lowercase())
}

/// VS Code, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct VscodeKind;

static ABOUT: super::table::About =
    // No VS Code here, and `code --add-mcp` cannot remove: mcp-deploy writes its file.
    super::table::about!(file vscode);

super::table::folder_kind!(VscodeKind, about: ABOUT, layers: layers, writes: Vscode);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::{assert_refused, entry};
    use serde_json::json;

    /// The examples of VS Code's MCP configuration reference ("MCP configuration reference"
    /// on code.visualstudio.com) and of its source
    /// (`mcpSchemaExampleServers`, `httpSchemaExamples` in `mcpConfiguration.ts`), in one user
    /// file with an `inputs` array and comments, as a user would keep them.
    const DOCUMENTED: &str = r#"{
	// 💡 Inputs are prompted on first server start, then stored securely by VS Code.
	"inputs": [
		{
			"type": "promptString",
			"id": "perplexity-key",
			"description": "Perplexity API Key",
			"password": true
		}
	],
	"servers": {
		"memory": {
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-memory"]
		},
		"mcp-server-time": {
			"command": "python",
			"args": ["-m", "mcp_server_time", "--local-timezone=America/Los_Angeles"],
			"env": {}
		},
		"my-mcp-server": {
			"url": "http://localhost:3001/mcp",
			"headers": {}
		},
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp"
		},
		"perplexity": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "server-perplexity-ask"],
			"env": {
				"PERPLEXITY_API_KEY": "${input:perplexity-key}"
			}
		}
	}
}
"#;

    #[test]
    fn the_documented_examples_read_in_the_claude_shape_and_write_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mcp.json");
        std::fs::write(&p, DOCUMENTED).unwrap();
        let m = read_user_entries(&p).unwrap();
        assert_eq!(
            m["memory"],
            json!({"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]})
        );
        assert_eq!(
            m["my-mcp-server"],
            json!({"type":"http","url":"http://localhost:3001/mcp","headers":{}})
        );
        assert_eq!(
            m["github"],
            json!({"type":"http","url":"https://api.githubcopilot.com/mcp"})
        );
        // An ${input:...} prompts the user: the entry is marked, never a declared one.
        assert!(m["perplexity"].get(MARK).is_some(), "{}", m["perplexity"]);
        // What mcp-deploy writes for the others is VS Code's form of the same entries
        // (`type` spelled out, as "MCP: Add Server" and `code --add-mcp` write it).
        let doc = file_backed::parse_value(DOCUMENTED).unwrap();
        for k in ["memory", "mcp-server-time", "my-mcp-server", "github"] {
            let mut want = doc["servers"][k].clone();
            if want.get("type").is_none() {
                let t = if want.get("command").is_some() {
                    "stdio"
                } else {
                    "http"
                };
                want["type"] = json!(t);
            }
            assert_eq!(to_vscode(k, &entry(m[k].clone())).unwrap(), want, "{k}");
        }
    }

    #[test]
    fn add_and_remove_keep_the_inputs_the_comments_and_every_other_byte() {
        let dir = tempfile::tempdir().unwrap();
        let file = file_backed::JsoncFile {
            path: dir.path().join("mcp.json"),
            key: "servers",
            new_file: Vscode::NEW_FILE,
            new_mode: 0o600,
        };
        std::fs::write(&file.path, DOCUMENTED).unwrap();
        let ct = to_vscode(
            "ct",
            &entry(json!({"command":"/opt/ct/bin/ct","args":["mcp","serve"],
                          "env":{"TOKEN":"${TOKEN}"}})),
        )
        .unwrap();
        assert_eq!(
            ct,
            json!({"type":"stdio","command":"/opt/ct/bin/ct","args":["mcp","serve"],
                   "env":{"TOKEN":"${env:TOKEN}"}})
        );
        file.add("vscode", "ct", &ct).unwrap();
        let text = std::fs::read_to_string(&file.path).unwrap();
        assert!(text.contains("// 💡 Inputs are prompted"), "{text}");
        assert!(text.contains("\"id\": \"perplexity-key\""), "{text}");
        assert_eq!(
            read_user_entries(&file.path).unwrap()["ct"],
            json!({"command":"/opt/ct/bin/ct","args":["mcp","serve"],"env":{"TOKEN":"${TOKEN}"}})
        );
        file.remove("ct").unwrap();
        assert_eq!(std::fs::read_to_string(&file.path).unwrap(), DOCUMENTED);
    }

    #[test]
    fn what_vscode_cannot_hold_is_refused_and_other_variables_are_marked() {
        assert_refused(
            |e| to_vscode("n", e),
            [
                (
                    json!({"command":"/x","env":{"T":"${T:-hunter2}"}}),
                    "NAME:-default",
                ),
                (json!({"type":"sse","url":"https://h"}), "cannot be pinned"),
                (json!({"command":"/x","timeout":5}), "no key \"timeout\""),
                (
                    json!({"command":"/x","args":["${input:k}"]}),
                    "cannot express",
                ),
            ],
        );
        let err = to_vscode("__proto__", &entry(json!({"command":"/x"}))).unwrap_err();
        assert!(err.to_string().contains("would not run it"), "{err}");
        for v in [
            json!({"command":"${userHome}/bin/x"}),
            json!({"command":"/x","env":{"K":"${input:key}"}}),
            json!({"command":"/x","cwd":"${workspaceFolder}"}),
            json!({"url":"https://h/${config:x}"}),
        ] {
            assert!(to_claude(&v).get(MARK).is_some(), "{v}");
        }
        // A missing or unknown type with a command is stdio; `sse` stays what it is, so
        // that it never equals a declared http server.
        assert_eq!(to_claude(&json!({"command":"/x"})), json!({"command":"/x"}));
        assert_eq!(
            to_claude(&json!({"type":"sse","url":"https://h"})),
            json!({"type":"sse","url":"https://h"})
        );
        assert_eq!(
            to_vscode(
                "n",
                &entry(json!({"command":"/x","cwd":"/srv","envFile":"/e"}))
            )
            .unwrap(),
            json!({"type":"stdio","command":"/x","cwd":"/srv","envFile":"/e"})
        );
    }

    #[test]
    fn allow_and_deny_matchers_match_as_vscode_matches() {
        let d = entry(json!({"command":"/opt/ct/bin/ct","args":["mcp","serve"]}));
        let id = Identity::of("ct", &d);
        for (m, want) in [
            (json!({"serverName":"ct"}), true),
            (json!({"serverName":"other"}), false),
            (
                json!({"serverCommand":["/opt/ct/bin/ct","mcp","serve"]}),
                true,
            ),
            (json!({"serverCommand":["/opt/ct/bin/ct"]}), false),
            // Two strategies in one entry: dropped, matches nothing.
            (json!({"serverName":"ct","serverUrl":"https://*"}), false),
            (json!({"serverUrl":"https://*"}), false),
        ] {
            assert_eq!(id.matches(&m), want, "{m}");
        }
        let r = Identity::of(
            "r",
            &entry(json!({"type":"http","url":"https://mcp.example.com/v1"})),
        );
        assert!(r.matches(&json!({"serverUrl":"https://*.example.com/*"})));
        assert!(!r.matches(&json!({"serverUrl":"https://other.com/*"})));
        assert_eq!(
            matchers(json!("[{\"serverName\":\"a\"}]")),
            Some(vec![json!({"serverName":"a"})])
        );
        assert_eq!(matchers(json!(null)), None);
    }

    #[test]
    fn a_setting_is_read_dotted_or_nested_as_vscode_reads_settings_json() {
        let nested = json!({"chat": {"mcp": {"access": "none"}}});
        assert_eq!(setting_of(&nested, "chat.mcp.access"), Some(json!("none")));
        let dotted = json!({"chat.mcp.access": "all"});
        assert_eq!(setting_of(&dotted, "chat.mcp.access"), Some(json!("all")));
        assert_eq!(setting_of(&dotted, "chat.mcp.enabled"), None);
    }
    #[test]
    fn profiles_are_read_from_storage_in_each_form_vscode_stores_a_location() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("User");
        std::fs::create_dir_all(user.join("globalStorage")).unwrap();
        std::fs::write(
            user.join("globalStorage/storage.json"),
            json!({"userDataProfiles": [
                {"location": "-5a", "name": "Id"},
                {"location": "file:///srv/p", "name": "Uri"},
                {"location": {"$mid": 1, "path": "/srv/q", "scheme": "file"}, "name": "Object"},
                {"location": "-6b", "name": "Shared", "useDefaultFlags": {"mcp": true}},
                {"name": "No location"}
            ]})
            .to_string(),
        )
        .unwrap();
        let got: Vec<(String, Option<PathBuf>)> = profiles(&user.join("mcp.json"))
            .unwrap()
            .into_iter()
            .map(|p| (p.name, p.mcp))
            .collect();
        assert_eq!(
            got,
            [
                ("Id".into(), Some(user.join("profiles/-5a/mcp.json"))),
                ("Uri".into(), Some(PathBuf::from("/srv/p/mcp.json"))),
                ("Object".into(), Some(PathBuf::from("/srv/q/mcp.json"))),
                ("Shared".into(), None),
            ]
        );
        std::fs::write(user.join("globalStorage/storage.json"), "{").unwrap();
        let e = profiles(&user.join("mcp.json")).unwrap_err();
        assert!(
            matches!(&e, ProfilesError::NotJson { file, line: 1 }
                if *file == user.join("globalStorage/storage.json")),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "not valid JSON: line 1");
    }

    #[test]
    fn a_url_wildcard_matches_any_run_of_characters_case_insensitively() {
        for (p, t, want) in [
            (
                "https://*.example.com/*",
                "https://MCP.example.com/v1",
                true,
            ),
            ("https://h/mcp", "https://h/mcp", true),
            ("https://h/mcp", "https://h/mcp2", false),
            ("*", "anything", true),
            ("https://h/*/x", "https://h/a/b/x", true),
            ("https://h/*/x", "https://h/a/b/y", false),
        ] {
            assert_eq!(wildcard(p, t), want, "{p} {t}");
        }
    }
}
