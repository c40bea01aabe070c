//! The layers gemini applies to a user-scope entry ([`super`]), read from gemini 0.61.0's
//! bundle (`packages/cli/src/config/settings.ts`, `mcp/mcpServerEnablement.ts`,
//! `packages/core/src/tools/mcp-client.ts`, `services/environmentSanitization.ts`):
//!
//! 1. **Settings files.** System (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else
//!    `/etc/gemini-cli/settings.json`), system defaults (`$GEMINI_CLI_SYSTEM_DEFAULTS_PATH`,
//!    else `system-defaults.json` beside the system file), user, and the workspace's
//!    `.gemini/settings.json` (not when the workspace is the home directory). A file that is
//!    not JSON (with comments) or whose top level is not an object is a fatal error: gemini
//!    refuses to start, so no server runs (`Blocked`). Values are `$VAR`-expanded before use.
//! 2. **`mcp.excluded`** of every file, joined: a name in any blocks the server.
//!    **`mcp.allowed`**: every file that has one is intersected, so a list of any file that
//!    leaves the name out blocks it. Exclusions compare lowercased and trimmed, an allow
//!    list exactly (a session does not start a server it names in another case). The v1
//!    top-level `excludeMCPServers` / `allowMCPServers`, which gemini 0.10.0 migrates into
//!    them, count too.
//! 3. **`~/.gemini/mcp-server-enablement.json`** (`gemini mcp disable NAME`): `{"name":
//!    {"enabled": false}}` disables the server.
//! 4. **The `.env` file**: gemini loads ONE, the first of `.gemini/.env` and `.env` from the
//!    working directory up to `/`, then `~/.gemini/.env`, `~/.env`, into its own process
//!    (a variable already set wins), and every stdio server inherits that environment after
//!    its sanitization: `advanced.excludedEnvVars` (joined over the files, by default DEBUG
//!    and DEBUG_MODE) and names like TOKEN, KEY, SECRET, ... are left out. What is left and
//!    the declaration does not set is `Changed`. Only a trusted folder runs servers at all
//!    (an untrusted one runs none, user-level ones included), so the trusted search is the
//!    one read.
//! 5. **The declaration itself**: gemini drops an entry's own `env` variable named like
//!    `NODE_OPTIONS`, `LD_PRELOAD`, `PYTHONPATH` (`BLOCKED_EXECUTION_ENVS`), so the server
//!    runs without it: `Changed`.
//!
//! Where gemini is more lenient than this reader (a system file it skips because its
//! directory is writable by others, a workspace file of an untrusted folder, a value a
//! sanitization pattern drops), the reader over-reports, which fails rather than passes.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::clients::layers::{env_not_declared, Context, Effect, Finding};
use crate::fsio;

/// `DEFAULT_EXCLUDED_ENV_VARS` (the schema's default of `advanced.excludedEnvVars`).
const DEFAULT_EXCLUDED: &[&str] = &["DEBUG", "DEBUG_MODE"];

/// `ALWAYS_ALLOWED_ENVIRONMENT_VARIABLES`: kept even when a name pattern would drop them.
const ALWAYS_ALLOWED: &[&str] = &[
    "PATH",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "SYSTEMDRIVE",
    "HOME",
    "LANG",
    "SHELL",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "TERM",
    "COLORTERM",
    "ADDITIONAL_CONTEXT",
    "AVAILABLE_LABELS",
    "BRANCH_NAME",
    "DESCRIPTION",
    "EVENT_NAME",
    "GITHUB_ENV",
    "IS_PULL_REQUEST",
    "ISSUES_TO_TRIAGE",
    "ISSUE_BODY",
    "ISSUE_NUMBER",
    "ISSUE_TITLE",
    "PULL_REQUEST_NUMBER",
    "REPOSITORY",
    "TITLE",
    "TRIGGERING_ACTOR",
];

/// `NEVER_ALLOWED_ENVIRONMENT_VARIABLES`.
const NEVER_ALLOWED: &[&str] = &[
    "CLIENT_ID",
    "DB_URI",
    "CONNECTION_STRING",
    "AWS_DEFAULT_REGION",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "SLACK_WEBHOOK_URL",
    "TWILIO_ACCOUNT_SID",
    "DATABASE_URL",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_ACCOUNT",
    "FIREBASE_PROJECT_ID",
];

/// `NEVER_ALLOWED_NAME_PATTERNS` (case-insensitive substrings).
const NEVER_ALLOWED_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "AUTH",
    "CREDENTIAL",
    "CREDS",
    "PRIVATE",
    "CERT",
];

/// `BLOCKED_EXECUTION_ENVS`: an entry's own `env` variable of these names is dropped.
const BLOCKED_EXECUTION: &[&str] = &[
    "NODE_OPTIONS",
    "NODE_CLI_FLAGS",
    "_FORCE_NODE_OPTIONS",
    "NODE_PATH",
    "ELECTRON_RUN_AS_NODE",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "RUBYOPT",
    "RUBYLIB",
    "PERL5OPT",
    "PERL5LIB",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_DEBUG",
    "LD_PROFILE",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_FORCE_FLAT_NAMESPACE",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
];

pub(crate) fn read(cx: &Context) -> Vec<Finding> {
    load(cx.user_config).findings_of(cx)
}

/// gemini's layer files of this host, read once for a run ([`Files`]).
pub(crate) fn load(user_config: &Path) -> Files {
    let gemini_dir = user_config.parent().unwrap_or(Path::new("/"));
    let home = gemini_dir.parent().unwrap_or(Path::new("/"));
    let cwd = std::env::current_dir().ok();
    Files::load(user_config, home, cwd.as_deref(), &Vars::from_process())
}

/// The variables that move gemini's files, as the verifier sees them.
struct Vars {
    system: Option<PathBuf>,
    defaults: Option<PathBuf>,
    trusted_folders: Option<PathBuf>,
}

impl Vars {
    fn from_process() -> Vars {
        let path = |v| crate::dirs::var(v).map(PathBuf::from);
        Vars {
            system: path("GEMINI_CLI_SYSTEM_SETTINGS_PATH"),
            defaults: path("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"),
            trusted_folders: path("GEMINI_CLI_TRUSTED_FOLDERS_PATH"),
        }
    }
}

/// gemini's files read once for a run: each name's findings come from them
/// ([`Files::findings_of`]) without reading or parsing again — before, each name re-read and
/// re-parsed every settings file, quadratic in the servers (2 000 servers in settings.json:
/// 3.5 s for `--only-deployed`, measured).
pub(crate) struct Files {
    /// What the settings files do whatever the name: one gemini refuses, one that cannot be
    /// read.
    whole: Vec<Finding>,
    /// The trusted folders file's finding, when gemini refuses it.
    trust: Vec<Finding>,
    /// The settings files read, lowest first.
    settings: Vec<(&'static str, PathBuf, Map<String, Value>)>,
    /// `mcp-server-enablement.json`: its path, and its document (`None`: missing or one
    /// gemini takes as empty), or the finding of one that cannot be read.
    enablement: Result<(PathBuf, Option<Value>), Finding>,
    /// The `.env` gemini loads: its path and the variables that reach a server, or the
    /// finding of one that cannot be read.
    env: Option<Result<(PathBuf, Vec<String>), Finding>>,
}

impl Drop for Files {
    fn drop(&mut self) {
        for (_, _, doc) in self.settings.drain(..) {
            drop_flat(Value::Object(doc));
        }
        if let Ok((_, Some(doc))) = &mut self.enablement {
            drop_flat(std::mem::take(doc));
        }
    }
}

impl Files {
    fn load(user_config: &Path, home: &Path, cwd: Option<&Path>, vars: &Vars) -> Files {
        let mut whole = Vec::new();
        let system = vars
            .system
            .clone()
            .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
        let defaults = vars.defaults.clone().unwrap_or_else(|| {
            system
                .parent()
                .unwrap_or(Path::new("/"))
                .join("system-defaults.json")
        });
        let mut files = vec![
            ("system settings", system),
            ("system defaults", defaults),
            ("user settings", user_config.to_path_buf()),
        ];
        if let Some(cwd) = cwd.filter(|c| !same_dir(c, home)) {
            files.push((
                "workspace settings",
                cwd.join(".gemini").join("settings.json"),
            ));
        }
        let mut settings = Vec::new();
        for (what, file) in files {
            // gemini skips a system file that is not root's alone
            // (`isFileAndDirectorySecureSync`, with a warning): it counts for nothing.
            if what.starts_with("system") && !secure(&file) {
                continue;
            }
            match settings_file(&file) {
                Ok(None) => {}
                Ok(Some(doc)) => settings.push((what, file, doc)),
                Err(effect) => {
                    whole.push(Finding::new(format!("{what} {}", file.display()), effect))
                }
            }
        }
        // Folder trust is decided from system defaults, user and system settings (not the
        // workspace's), merged in that order: `security.folderTrust.enabled`, on by default.
        let trust_in = |label: &str| {
            settings
                .iter()
                .find(|(what, _, _)| *what == label)
                .and_then(|(_, _, d)| d.get("security")?.get("folderTrust")?.get("enabled"))
                .and_then(Value::as_bool)
        };
        let trust_enabled = trust_in("system settings")
            .or_else(|| trust_in("user settings"))
            .or_else(|| trust_in("system defaults"))
            .unwrap_or(true);
        let mut trust = Vec::new();
        if trust_enabled {
            let file = vars
                .trusted_folders
                .clone()
                .unwrap_or_else(|| home.join(".gemini").join("trustedFolders.json"));
            trust.extend(trusted_folders(&file));
        }
        let mut excluded: Vec<String> = DEFAULT_EXCLUDED.iter().map(|s| s.to_string()).collect();
        let mut ignore_local = false;
        for (_, _, doc) in &settings {
            let advanced = doc.get("advanced");
            if let Some(Value::Array(a)) = advanced.and_then(|a| a.get("excludedEnvVars")) {
                excluded.extend(a.iter().filter_map(Value::as_str).map(str::to_string));
            }
            // Later files win (the deep merge); any `true` is the fail-safe reading anyway.
            if let Some(Value::Bool(b)) = advanced.and_then(|a| a.get("ignoreLocalEnv")) {
                ignore_local = *b;
            }
        }
        Files {
            whole,
            trust,
            settings,
            enablement: enablement_file(&home.join(".gemini")),
            env: env_file(home, cwd, &excluded, ignore_local),
        }
    }

    /// Every layer's finding for the user entry `cx.name`, declared as `cx.declared`.
    pub(crate) fn findings_of(&self, cx: &Context) -> Vec<Finding> {
        let mut out = self.whole.clone();
        for (_, file, doc) in &self.settings {
            out.extend(lists(cx.name, file, doc));
        }
        out.extend(self.trust.iter().cloned());
        match &self.enablement {
            Err(unread) => out.push(unread.clone()),
            Ok((file, Some(doc))) => out.extend(enablement(cx.name, file, doc)),
            Ok((_, None)) => {}
        }
        match &self.env {
            None => {}
            Some(Err(unread)) => out.push(unread.clone()),
            Some(Ok((file, reaching))) => {
                let keys = env_not_declared(cx.declared, reaching.iter().map(String::as_str));
                if !keys.is_empty() {
                    out.push(Finding::new(file.display(), Effect::Changed(keys)));
                }
            }
        }
        let dropped: Vec<String> = cx
            .declared
            .raw
            .get("env")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys())
            .filter(|k| BLOCKED_EXECUTION.contains(&k.to_ascii_uppercase().as_str()))
            .map(|k| format!("env.{k}"))
            .collect();
        if !dropped.is_empty() {
            out.push(Finding::new(
                "gemini's BLOCKED_EXECUTION_ENVS (it drops these variables of an entry's own env)",
                Effect::Changed(dropped),
            ));
        }
        out
    }
}

impl crate::clients::layers::Loaded for Files {
    fn findings(&self, cx: &Context) -> Vec<Finding> {
        self.findings_of(cx)
    }
}

/// `isFileAndDirectorySecureSync` (POSIX): the file and every directory above it, as named
/// and as resolved, are owned by root and not writable by group or others, and every symlink
/// on the way is root's. A path that does not exist is secure, as in gemini.
fn secure(file: &Path) -> bool {
    secure_as(file, false)
}

/// Whether gemini will read `file` as system settings once it exists (`policy --write`
/// writes it): [`secure`], and for a file not there yet, every directory above it.
pub(crate) fn secure_once_written(file: &Path) -> bool {
    secure_as(file, !file.exists())
}

fn secure_as(file: &Path, only_dirs: bool) -> bool {
    use std::os::unix::fs::MetadataExt;
    let one = |p: &Path, dir: bool| -> bool {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => return e.kind() == std::io::ErrorKind::NotFound,
        };
        if dir != meta.is_dir() || (!dir && !meta.is_file()) {
            return false;
        }
        let link_ok = std::fs::symlink_metadata(p)
            .map(|l| !l.file_type().is_symlink() || l.uid() == 0)
            .unwrap_or(true);
        link_ok && meta.uid() == 0 && meta.mode() & 0o022 == 0
    };
    let chain = |f: &Path| f.ancestors().skip(1).all(|d| one(d, true)) && one(f, false);
    if only_dirs {
        return file.ancestors().skip(1).all(|d| one(d, true));
    }
    if !file.exists() {
        return true;
    }
    chain(file) && std::fs::canonicalize(file).is_ok_and(|real| real == file || chain(&real))
}

/// Whether `a` and `b` are the same directory (gemini compares resolved paths).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// A settings file as gemini loads it: `Ok(None)` when missing, the parsed object, or what
/// it does to the run (`Blocked`: gemini exits with "Please fix the configuration file(s)")
/// or why it cannot be compared.
fn settings_file(file: &Path) -> Result<Option<Map<String, Value>>, Effect> {
    // A few KiB in practice; the bound keeps the parsed tree (about ten times the text) small.
    let text = match fsio::read_input_if_exists(file, "settings file", fsio::limits::CLIENT_JSONC) {
        Ok(None) => return Ok(None),
        Ok(Some(t)) => t,
        Err(e) => return Err(Effect::not_compared(e.source.to_string())),
    };
    let refused = |why: &str| {
        Effect::Blocked(format!(
            "gemini refuses to start with this file ({why}): it loads no server at all"
        ))
    };
    let Some(plain) = strip_comments(&text) else {
        return Err(refused("not JSON: a string or comment is not closed"));
    };
    match parse_node(&plain) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(other) => {
            drop_flat(other);
            Err(refused("its top level is not an object"))
        }
        Err(e) => Err(refused(&format!("not valid JSON at line {}", e.line()))),
    }
}

/// JSON as Node's JSON.parse reads it: any depth, a lone surrogate escape kept (as U+FFFD),
/// the last of duplicate keys winning. The syntax is checked first without building
/// anything, so that no partly built deep value is ever dropped by recursion.
fn parse_node(text: &str) -> Result<Value, serde_json::Error> {
    crate::clients::kit::node_json::parse_lenient::<serde::de::IgnoredAny>(text)?;
    crate::clients::kit::node_json::parse_lenient::<Value>(text).map(|(v, _)| v)
}

/// Drop `v` without recursion: a settings file may nest as deep as it likes (Node does not
/// mind), and serde_json's own drop would overflow the stack on it.
fn drop_flat(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

fn strip_comments(text: &str) -> Option<String> {
    use std::io::Read;
    let mut plain = String::with_capacity(text.len());
    json_comments::CommentSettings::c_style()
        .strip_comments(text.as_bytes())
        .read_to_string(&mut plain)
        .ok()?;
    Some(plain)
}

/// `normalizeServerId`.
fn normalized(s: &str) -> String {
    s.to_lowercase().trim().to_string()
}

/// The lists of one settings file: `mcp.excluded` and `mcp.allowed`, and their v1 names
/// `excludeMCPServers` and `allowMCPServers` at the top level, which gemini 0.10.0 (the
/// oldest supported) still migrates into `mcp.excluded` / `mcp.allowed` as it loads the file
/// (`migrateSettingsToV2`; 0.24.5 on ignore them: read anyway, failing rather than passing).
///
/// The name matches two ways: an exclusion lowercased and trimmed (0.61.0; 0.10.0 compares
/// exactly), an allow list exactly (the sessions of 0.10.0, 0.24.5 and 0.61.0 do not start
/// a server an allow list names in another case). So an exclusion counts when the
/// normalized names match (the wider match), an allow list admits only the exact name.
fn lists(name: &str, file: &Path, doc: &Map<String, Value>) -> Vec<Finding> {
    let mut found = Vec::new();
    let mcp = doc.get("mcp");
    let want = normalized(name);
    let lists = [
        (
            "excluded",
            "mcp.excluded",
            mcp.and_then(|m| m.get("excluded")),
        ),
        ("allowed", "mcp.allowed", mcp.and_then(|m| m.get("allowed"))),
        (
            "excluded",
            "excludeMCPServers",
            doc.get("excludeMCPServers"),
        ),
        ("allowed", "allowMCPServers", doc.get("allowMCPServers")),
    ];
    for (key, spelled, list) in lists {
        let Some(list) = list else {
            continue;
        };
        let source = format!("{} {spelled}", file.display());
        // gemini only takes an array; anything else is ignored (a schema warning).
        let Value::Array(items) = list else { continue };
        let mut strings = Vec::new();
        for item in items {
            match item.as_str() {
                Some(s) if s.contains('$') => {
                    found.push(Finding::new(
                        &source,
                        Effect::not_compared(
                            "an item holds a $VAR reference, which gemini expands from the \
                             agent's environment",
                        ),
                    ));
                }
                Some(s) => strings.push(s),
                None => found.push(Finding::new(
                    &source,
                    Effect::not_compared("an item is not a string"),
                )),
            }
        }
        let excludes = strings.iter().any(|s| normalized(s) == want);
        let admits = strings.contains(&name);
        match (key, excludes, admits) {
            ("excluded", true, _) => found.push(Finding::new(
                source,
                Effect::Blocked(format!("{spelled} names {name}")),
            )),
            ("allowed", _, false) => found.push(Finding::new(
                source,
                Effect::Blocked(if excludes {
                    format!(
                        "{spelled} names {name} only in another case or with spaces, which \
                         gemini's allow list does not match"
                    )
                } else {
                    format!("{spelled} does not name {name}")
                }),
            )),
            _ => {}
        }
    }
    found
}

/// `~/.gemini/trustedFolders.json`: gemini stops ("Please fix the configuration file") when
/// it is not a JSON object of `TRUST_FOLDER`, `TRUST_PARENT` or `DO_NOT_TRUST` values, even
/// before it looks at a server. (`GEMINI_CLI_TRUST_WORKSPACE` in the agent's environment
/// skips the file; that is the agent's, not the host's.)
fn trusted_folders(file: &Path) -> Option<Finding> {
    let effect = match settings_file(file) {
        Ok(None) => return None,
        Ok(Some(doc)) => {
            let bad = doc.values().any(|v| {
                !matches!(
                    v.as_str(),
                    Some("TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST")
                )
            });
            drop_flat(Value::Object(doc));
            if !bad {
                return None;
            }
            Effect::Blocked(
                "gemini refuses to start with this file (a trust level that is not \
                 TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST): it loads no server at all"
                    .into(),
            )
        }
        Err(e) => e,
    };
    Some(Finding::new(file.display(), effect))
}

/// `~/.gemini/mcp-server-enablement.json`, which `gemini mcp disable` writes, read: its
/// document (`None` when missing or when gemini takes it as empty, as it does one JSON.parse
/// refuses), or the finding of one that cannot be read.
fn enablement_file(gemini_dir: &Path) -> Result<(PathBuf, Option<Value>), Finding> {
    let file = gemini_dir.join("mcp-server-enablement.json");
    let text = crate::clients::layers::read_layer(
        &file,
        "gemini disables servers it names",
        fsio::limits::DOCUMENT,
    )?;
    let doc = text.and_then(|t| parse_node(&t).ok());
    Ok((file, doc))
}

/// Whether the enablement document `doc` (of `file`) disables `name`.
fn enablement(name: &str, file: &Path, doc: &Value) -> Option<Finding> {
    let disabled = doc
        .get(normalized(name))
        .and_then(|s| s.get("enabled"))
        .is_some_and(|e| e == &Value::Bool(false));
    disabled.then(|| {
        Finding::new(
            format!("{} {}", file.display(), normalized(name)),
            Effect::Blocked("disabled (/mcp disable in a session): \"enabled\": false".into()),
        )
    })
}

/// `findEnvFile` for a trusted folder: the first `.gemini/.env` or `.env` from `cwd` up,
/// then `~/.gemini/.env`, `~/.env`.
fn find_env_file(cwd: Option<&Path>, home: &Path, ignore_local: bool) -> Option<PathBuf> {
    let exists = |p: &Path| p.exists() || std::fs::symlink_metadata(p).is_ok();
    if let Some(cwd) = cwd {
        let mut dir = Some(cwd);
        while let Some(d) = dir {
            let g = d.join(".gemini").join(".env");
            if exists(&g) {
                return Some(g);
            }
            let e = d.join(".env");
            if exists(&e) && (!ignore_local || d == home) {
                return Some(e);
            }
            dir = d.parent();
        }
    }
    [home.join(".gemini").join(".env"), home.join(".env")]
        .into_iter()
        .find(|p| exists(p))
}

/// The `.env` gemini loads and its variables that reach a stdio server (`None`: none is
/// found), or the finding of one that cannot be read.
fn env_file(
    home: &Path,
    cwd: Option<&Path>,
    excluded: &[String],
    ignore_local: bool,
) -> Option<Result<(PathBuf, Vec<String>), Finding>> {
    let file = find_env_file(cwd, home, ignore_local)?;
    let text = match crate::clients::layers::read_layer(
        &file,
        "gemini loads it into every server it starts",
        fsio::limits::DOCUMENT,
    ) {
        Ok(t) => t?,
        Err(unread) => return Some(Err(unread)),
    };
    let excluded: Vec<String> = excluded.iter().map(|s| s.to_uppercase()).collect();
    let reaching = crate::clients::kit::dotenv::names(&text)
        .into_iter()
        .filter(|k| reaches_server(k, &excluded))
        .collect();
    Some(Ok((file, reaching)))
}

/// `shouldRedactEnvironmentVariable`, negated, by name only (a value pattern may drop a
/// variable too; reading it as kept fails rather than passes).
fn reaches_server(key: &str, excluded: &[String]) -> bool {
    let k = key.to_uppercase();
    if k.starts_with("GEMINI_CLI_") || k.starts_with("GIT_CONFIG_") {
        return true;
    }
    if excluded.contains(&k) {
        return false;
    }
    if ALWAYS_ALLOWED.contains(&k.as_str()) {
        return true;
    }
    if NEVER_ALLOWED.contains(&k.as_str()) {
        return false;
    }
    !NEVER_ALLOWED_PARTS.iter().any(|p| k.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Entry;
    use serde_json::json;

    struct Home {
        dir: tempfile::TempDir,
    }

    impl Home {
        fn new() -> Home {
            let h = Home {
                dir: tempfile::tempdir().unwrap(),
            };
            std::fs::create_dir_all(h.home().join(".gemini")).unwrap();
            std::fs::create_dir_all(h.dir.path().join("work")).unwrap();
            h
        }
        fn home(&self) -> PathBuf {
            self.dir.path().join("home")
        }
        fn write(&self, rel: &str, text: &str) {
            let p = self.dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        fn read(&self, declared: Value) -> Vec<Finding> {
            let declared = Entry::from_value(&declared).unwrap();
            let config = self.home().join(".gemini/settings.json");
            let cx = Context {
                name: "CodeTools",
                declared: &declared,
                user_config: &config,
            };
            let vars = Vars {
                system: Some(self.dir.path().join("etc/settings.json")),
                defaults: None,
                trusted_folders: None,
            };
            Files::load(
                &config,
                &self.home(),
                Some(&self.dir.path().join("work")),
                &vars,
            )
            .findings_of(&cx)
        }
    }

    #[test]
    fn lists_block_by_normalized_name_in_every_file() {
        let h = Home::new();
        assert!(h.read(json!({"command": "/x"})).is_empty());
        h.write(
            "home/.gemini/settings.json",
            r#"{"mcp": {"excluded": [" codetools "]}}"#,
        );
        h.write(
            "work/.gemini/settings.json",
            r#"{"mcp": {"allowed": ["other"]}} // comment"#,
        );
        let f = h.read(json!({"command": "/x"}));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].source
                .ends_with("home/.gemini/settings.json mcp.excluded"),
            "{f:?}"
        );
        assert!(matches!(&f[1].effect, Effect::Blocked(w) if w.contains("mcp.allowed")));
    }

    /// gemini 0.10.0 migrates the v1 keys into `mcp.*` and compares names exactly: a v1
    /// exclusion blocks, and an allow list naming us only in another case does too.
    #[test]
    fn v1_lists_and_an_allow_list_in_another_case_block() {
        let h = Home::new();
        h.write(
            "home/.gemini/settings.json",
            r#"{"excludeMCPServers": ["codetools"], "allowMCPServers": ["CodeTools"]}"#,
        );
        let f = h.read(json!({"command": "/x"}));
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].source
                .ends_with("home/.gemini/settings.json excludeMCPServers"),
            "{f:?}"
        );
        h.write(
            "home/.gemini/settings.json",
            r#"{"mcp": {"allowed": [" codetools"]}}"#,
        );
        let f = h.read(json!({"command": "/x"}));
        assert!(
            matches!(&f[..], [x] if matches!(&x.effect, Effect::Blocked(w) if w.contains("another case"))),
            "{f:?}"
        );
    }

    #[test]
    fn a_file_gemini_refuses_blocks_everything() {
        let h = Home::new();
        h.write("work/.gemini/settings.json", "[1]");
        h.write("home/.gemini/settings.json", "{\"mcpServers\": {");
        let f = h.read(json!({"command": "/x"}));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f
            .iter()
            .all(|f| matches!(&f.effect, Effect::Blocked(w) if w.contains("refuses"))));
        // Node's JSON.parse takes a lone surrogate escape, and so does the reader; deep nesting
        // up to kit/node_json.rs MAX_DEPTH levels, and a deeper file is refused whole.
        let deep = |n: usize| {
            format!(
                "{{\"a\": {}{}, \"b\": \"\\ud800\"}}",
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        h.write("work/.gemini/settings.json", &deep(900));
        h.write("home/.gemini/settings.json", "{}");
        let f = h.read(json!({"command": "/x"}));
        assert!(f.is_empty(), "{f:?}");
        h.write(
            "work/.gemini/settings.json",
            &deep(crate::clients::kit::node_json::MAX_DEPTH + 1),
        );
        let f = h.read(json!({"command": "/x"}));
        assert!(
            matches!(&f[..], [Finding { effect: Effect::Blocked(w), .. }] if w.contains("refuses")),
            "{f:?}"
        );
        // A deep value and then a syntax error: refused, with no stack overflow on the way.
        let broken = format!("{{\"a\": {}{} x", "[".repeat(100_000), "]".repeat(100_000));
        h.write("work/.gemini/settings.json", &broken);
        h.write("home/.gemini/mcp-server-enablement.json", &broken);
        let f = h.read(json!({"command": "/x"}));
        assert!(
            matches!(
                &f[..],
                [Finding {
                    effect: Effect::Blocked(_),
                    ..
                }]
            ),
            "{f:?}"
        );
    }

    #[test]
    fn a_system_file_that_is_not_roots_alone_is_skipped_as_gemini_skips_it() {
        // The temporary directory lies in /tmp, which everyone may write to.
        let h = Home::new();
        h.write("etc/settings.json", "[1]");
        h.write(
            "etc/system-defaults.json",
            r#"{"mcp": {"excluded": ["codetools"]}}"#,
        );
        assert!(!secure(&h.dir.path().join("etc/settings.json")));
        assert!(h.read(json!({"command": "/x"})).is_empty());
        assert!(secure(Path::new("/etc/passwd")) && secure(Path::new("/no/such/file")));
    }

    #[test]
    fn the_first_env_file_counts_after_sanitization() {
        let h = Home::new();
        h.write("home/.env", "NODE_OPTIONS=--require /x\n");
        h.write(
            "work/.env",
            "PATH=/evil\nAPI_TOKEN=t\nDEBUG=1\nLD_PRELOAD=/e.so\nOWN=1\n",
        );
        let f = h.read(json!({"command": "/x", "env": {"OWN": "v"}}));
        // The working directory's .env is the one loaded; home's is not.
        assert_eq!(
            f,
            [Finding::new(
                h.dir.path().join("work/.env").display(),
                Effect::Changed(vec!["env.LD_PRELOAD".into(), "env.PATH".into()])
            )]
        );
        h.write(
            "work/.gemini/settings.json",
            r#"{"advanced": {"excludedEnvVars": ["PATH"]}}"#,
        );
        let f = h.read(json!({"command": "/x"}));
        assert!(
            matches!(&f[..], [Finding { effect: Effect::Changed(k), .. }] if k == &["env.LD_PRELOAD", "env.OWN"]),
            "{f:?}"
        );
    }

    #[test]
    fn a_trusted_folders_file_gemini_refuses_blocks_unless_trust_is_off() {
        let h = Home::new();
        h.write(
            "home/.gemini/trustedFolders.json",
            r#"{"/w": "TRUST_FOLDER"}"#,
        );
        assert!(h.read(json!({"command": "/x"})).is_empty());
        h.write("home/.gemini/trustedFolders.json", r#"{"/w": "YES"}"#);
        let f = h.read(json!({"command": "/x"}));
        assert!(
            matches!(&f[..], [Finding { effect: Effect::Blocked(_), source }] if source.ends_with("trustedFolders.json")),
            "{f:?}"
        );
        h.write(
            "home/.gemini/settings.json",
            r#"{"security": {"folderTrust": {"enabled": false}}}"#,
        );
        assert!(h.read(json!({"command": "/x"})).is_empty());
    }

    #[test]
    fn enablement_and_blocked_declared_variables() {
        let h = Home::new();
        h.write(
            "home/.gemini/mcp-server-enablement.json",
            r#"{"codetools": {"enabled": false}}"#,
        );
        let f = h.read(json!({"command": "/x", "env": {"NODE_OPTIONS": "--x", "T": "1"}}));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(matches!(&f[0].effect, Effect::Blocked(_)));
        assert_eq!(
            f[1].effect,
            Effect::Changed(vec!["env.NODE_OPTIONS".into()])
        );
    }
}
