//! `verify-identity --only-deployed`: the agent on this host can load the declared entries
//! and nothing else. One `only-deployed` check per client:
//!
//! 1. Every registration the client reads on this host, in every scope
//!    ([`crate::clients::scopes`]), except the declared ones themselves (the registered name at
//!    user scope of the client's user config: the other checks judge those, and their
//!    same-name shadows). A same-name entry elsewhere that is, key by key, the declared entry
//!    is the declared server again, and named as such.
//! 2. Each other one is run through the client's layers as if it were the entry judged
//!    ([`crate::clients::Layers`], read once for them all; for codex beyond the user scope, its
//!    requirements allowlist). A `Blocked` finding whose source applies wherever the
//!    registration does ([`applies_everywhere`]: a managed or system file, or the user's own
//!    settings, never a project's file or a profile's) keeps it out, and is the evidence.
//!    Any other registration is a failure naming its file and scope.
//! 3. A file the client reads that cannot be read fails it (it cannot be proven empty), and
//!    so does a source of servers mcp-deploy does not read, when it exists ([`unseen`]:
//!    claude's plugins, the connectors of a claude.ai login, an agent's frontmatter
//!    `mcpServers`; a gemini extension without its manifest).
//! 4. With no other server, it passes naming the policy that would keep out a server added
//!    later (found by judging a probe entry the same way), or saying there is none.
//!
//! Read-only and without the client's binary, like the other checks. It lives with the
//! clients because it is their knowledge (scopes, layers, what each loads) that it applies;
//! the identity checks' vocabulary (findings, the report) is below it.

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Map, Value};

use super::scopes::{self, Found, Registration};
use super::ClientKind;
use crate::clients;
use crate::entry::Entry;
use crate::identity::compare::compare;
use crate::identity::layer::{Effect, Finding};
use crate::identity::report::{Check, ServerReport};

/// What the report calls the row of a client's other servers.
pub(crate) const OTHERS: &str = "other servers";

/// One declared registration of the client: its registered name and declared entry.
pub(crate) struct Declared<'a> {
    pub(crate) name: &'a str,
    pub(crate) entry: &'a Entry,
}

/// The `only-deployed` row of client `kind`, given its declared registrations.
pub(crate) fn report(kind: ClientKind, declared: &[Declared]) -> ServerReport {
    let found = scopes::every_registration(&[kind]);
    ServerReport {
        name: OTHERS.into(),
        client: kind.name().into(),
        registered_name: OTHERS.into(),
        prefix: String::new(),
        registration: None,
        witnesses: None,
        deployed: Default::default(),
        checks: vec![check(kind, declared, &found)],
    }
}

fn check(kind: ClientKind, declared: &[Declared], found: &Found) -> Check {
    let user_config = clients::user_config(kind).0;
    let mut failures: Vec<String> = Vec::new();
    let mut kept_out: Vec<String> = Vec::new();
    let mut again: Vec<String> = Vec::new();
    // The layers read once for every registration: read per registration, a file of n
    // servers was read n times (10 000 servers in .claude.json: minutes).
    let layers = clients::Layers::read(kind);
    for reg in &found.registrations {
        let ours = declared.iter().find(|d| d.name == reg.name);
        if ours.is_some() && is_user_scope(reg) && same_file(&reg.file, &user_config) {
            continue;
        }
        let entry = match Entry::from_value(&reg.entry) {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!(
                    "{}: its entry cannot be read ({e}), so whether the client loads it \
                     cannot be told",
                    reg.describe()
                ));
                continue;
            }
        };
        if ours.is_some_and(|d| compare(&d.entry.raw, &entry.raw).is_empty()) {
            again.push(format!("{} is the declared entry", reg.describe()));
            continue;
        }
        match keeper(kind, &layers, reg, &entry) {
            Ok(f) => kept_out.push(format!(
                "{} is kept out by {} ({})",
                reg.describe(),
                f.source,
                why(&f)
            )),
            Err(None) => failures.push(format!("{} can be loaded", reg.describe())),
            Err(Some(not)) => failures.push(format!("{} can be loaded ({not})", reg.describe())),
        }
    }
    for u in &found.unreadable {
        failures.push(format!(
            "{} cannot be read, so the servers it holds cannot be told",
            u.describe()
        ));
    }
    failures.extend(unseen(kind));
    let mut detail = Vec::new();
    let ok = failures.is_empty();
    if !ok {
        detail.push(format!("only-deployed: {}", failures.join("; ")));
    }
    detail.extend(kept_out);
    detail.extend(again);
    if ok {
        detail.push(if detail.is_empty() {
            format!("no other server; {}", later(kind, &user_config))
        } else {
            later(kind, &user_config)
        });
    }
    Check {
        skipped: false,
        check: "only-deployed",
        ok,
        detail: detail.join("; "),
    }
}

fn is_user_scope(reg: &Registration) -> bool {
    matches!(reg.scope.as_str(), "user" | "user scope")
}

/// The same file: equal paths, or the same file once symlinks are resolved.
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The first `Blocked` finding that keeps `reg` out wherever it would load; else, when
/// evidence that would have kept it out does not count for certain, why.
fn keeper(
    kind: ClientKind,
    layers: &clients::Layers,
    reg: &Registration,
    entry: &Entry,
) -> Result<Finding, Option<String>> {
    let mut findings = Vec::new();
    let codex = kind.name() == "codex";
    // codex merges every layer's table of one name into one server, whichever file holds it:
    // the managed file's `enabled = false` (the top layer, the only one that counts below)
    // disables a server of any scope.
    if !codex || is_user_scope(reg) || reg.scope.starts_with("managed") {
        findings.extend(layers.of(&reg.name, entry));
    }
    if codex {
        // Its requirements allowlist applies to a server of any scope.
        findings.extend(clients::codex::layers::requirements_for(
            &reg.name, &entry.raw,
        ));
    }
    // claude admits the servers the organization delivers (managed-mcp.json,
    // `managedMcpServers`) without an allowedMcpServers entry, and managed-mcp.json does
    // not lock out its own servers: only deniedMcpServers keeps one out (its settings
    // schema, 2.1.332; `claude mcp list` agrees).
    let claude = kind.name() == "claude";
    let delivered = claude && reg.scope.starts_with("managed");
    // claude merges allowedMcpServers from every settings file, a project's too: in a
    // directory whose `.claude/settings.json` lists the server, it is admitted, and such a
    // directory can be anywhere. Only `allowManagedMcpServersOnly` in the managed settings
    // stops that (then the managed lists alone count), so only then does a list keep a
    // server out everywhere.
    let managed_only =
        || claude_settings_set(claude_managed_settings(), "allowManagedMcpServersOnly");
    let candidates: Vec<Finding> = findings
        .into_iter()
        .filter(|f| {
            let allowlist = claude && f.source.ends_with(" allowedMcpServers");
            matches!(f.effect, Effect::Blocked(_))
                && applies_everywhere(kind, &f.source)
                && (!delivered || f.source.ends_with(" deniedMcpServers"))
                && (!allowlist || managed_only())
        })
        .collect();
    // Evidence keeps a server out only where the release on the host certainly applies it
    // (issue 35, items 1 and 9): claude's lists, codex's `enabled = false` and requirements.
    let mut not_certain = None;
    for f in candidates {
        if let Err(why) = kind.kind().keeps_out_here(&f) {
            not_certain = Some(format!("{} does not count for certain: {why}", f.source));
            continue;
        }
        return Ok(f);
    }
    Err(not_certain)
}

fn why(f: &Finding) -> &str {
    match &f.effect {
        Effect::Blocked(w) | Effect::Replaced(w) | Effect::Answered(w) => w,
        Effect::NotCompared(doubt) => &doubt.why,
        Effect::Changed(_) => "",
    }
}

/// Whether the file a finding comes from applies wherever the client runs, whatever the
/// directory, profile or project layer:
/// - claude: its managed files (under `/etc`) and the user's `settings.json`, whose
///   `deniedMcpServers` merges with every other list and wins (an allowlist counts only with
///   `allowManagedMcpServersOnly`, see [`keeper`]); never a project's file or a project's
///   `disabledMcpServers`.
/// - codex: only `/etc/codex/managed_config.toml`, the top layer, and
///   `/etc/codex/requirements.toml`. A value of any lower layer (the system or user config)
///   can be laid over by a project's `.codex/config.toml` or a profile, so a refusal or an
///   `enabled = false` there holds only where nothing above changes it.
/// - the others: only files under `/etc` (gemini lays a workspace's settings over the user's).
///
/// A source naming several files (claude's merged `allowedMcpServers`) counts only when
/// every one of them does.
fn applies_everywhere(kind: ClientKind, source: &str) -> bool {
    source.split(", ").all(|part| {
        let file = Path::new(part.split(' ').next().unwrap_or_default());
        // By components, and only a path without `.` or `..`: a project directory named in
        // `.claude.json` as `/etc/../home/u/p` is the user's, not a file under /etc.
        let plain = file
            .components()
            .all(|c| !matches!(c, Component::ParentDir | Component::CurDir));
        let under_etc = file.is_absolute() && plain && file.starts_with("/etc");
        match kind.name() {
            "claude" => {
                let user = crate::clients::claude::config_home().join("settings.json");
                under_etc || same_file(&user, file)
            }
            "codex" => [
                "/etc/codex/managed_config.toml",
                "/etc/codex/requirements.toml",
            ]
            .iter()
            .any(|g| same_file(Path::new(g), file)),
            _ => under_etc,
        }
    })
}

/// Sources of servers the client may load that mcp-deploy does not read, present here.
fn unseen(kind: ClientKind) -> Vec<String> {
    let mut out = Vec::new();
    match kind.name() {
        "claude" => {
            let plugins = crate::clients::claude::config_home().join("plugins");
            if std::fs::symlink_metadata(&plugins).is_ok() {
                out.push(format!(
                    "{} (claude, plugins): a plugin can bring its own MCP servers, which \
                     mcp-deploy does not read",
                    plugins.display()
                ));
            }
            out.extend(claude_ai_connectors());
            out.extend(claude_agents());
        }
        "gemini" => {
            let dir = crate::clients::gemini::config_path().with_file_name("extensions");
            for (name, path) in scopes::entries_of(&dir) {
                if std::fs::symlink_metadata(path.join("gemini-extension.json")).is_err() {
                    out.push(format!(
                        "{} (gemini, extension {name}): no gemini-extension.json there (a \
                         linked extension?), so its servers cannot be read",
                        path.display()
                    ));
                }
            }
        }
        _ => {}
    }
    out
}

/// claude.ai's connectors: claude fetches the MCP connectors of a claude.ai account it is
/// logged in with and connects them, unless `disableClaudeAiConnectors` is true in a
/// settings source (any source that says true wins; 2.1.332's settings schema). mcp-deploy
/// cannot see which connectors an account has, so a login (`.credentials.json` in claude's
/// config dir, or `oauthAccount` in its config) fails the check unless a file that applies
/// everywhere (the managed settings, the user's settings) turns them off.
fn claude_ai_connectors() -> Option<String> {
    let home = crate::clients::claude::config_home();
    let credentials = home.join(".credentials.json");
    let config = crate::clients::claude::config_path();
    let login = if std::fs::symlink_metadata(&credentials).is_ok() {
        credentials
    } else if read_json_object(&config).is_some_and(|d| d.contains_key("oauthAccount")) {
        config
    } else {
        return None;
    };
    let settings = std::iter::once(home.join("settings.json")).chain(claude_managed_settings());
    if claude_settings_set(settings, "disableClaudeAiConnectors") {
        return None;
    }
    Some(format!(
        "{} (claude, claude.ai connectors): claude connects the MCP connectors of the claude.ai \
         account it is logged in with, which mcp-deploy cannot see; set \
         disableClaudeAiConnectors: true in the managed settings to turn them off",
        login.display()
    ))
}

/// claude's managed settings files: `managed-settings.json`, then the drop-ins of
/// `managed-settings.d` in claude's order.
fn claude_managed_settings() -> Vec<PathBuf> {
    let managed = Path::new("/etc/claude-code");
    let mut listing = Vec::new();
    std::iter::once(managed.join("managed-settings.json"))
        .chain(crate::clients::claude::layers::drop_ins(
            &managed.join("managed-settings.d"),
            &mut listing,
        ))
        .collect()
}

/// Whether one of `files` sets `key` to `true` (a file that cannot be read sets nothing).
fn claude_settings_set(files: impl IntoIterator<Item = PathBuf>, key: &str) -> bool {
    files
        .into_iter()
        .any(|f| read_json_object(&f).is_some_and(|d| d.get(key) == Some(&Value::Bool(true))))
}

/// claude's agent definitions (`agents/*.md` in its config dir, `.claude/agents/` of the working
/// directory and every directory above it): an agent's frontmatter `mcpServers` gives it
/// servers of its own (2.1.332, scope "agent frontmatter"), which mcp-deploy does not read.
/// A definition that names `mcpServers` anywhere, or that cannot be read, fails the check.
fn claude_agents() -> Vec<String> {
    let cwd = std::env::current_dir().ok();
    let dirs = std::iter::once(crate::clients::claude::config_home().join("agents")).chain(
        cwd.iter()
            .flat_map(|c| c.ancestors())
            .map(|d| d.join(".claude/agents")),
    );
    let mut out = Vec::new();
    for dir in dirs {
        if std::fs::symlink_metadata(&dir).is_err() {
            continue;
        }
        let mut files = Vec::new();
        for e in walkdir::WalkDir::new(&dir).follow_links(true).max_depth(4) {
            match e {
                Ok(e) if e.file_type().is_file() && e.path().extension() == Some("md".as_ref()) => {
                    files.push(e)
                }
                Ok(_) => {}
                Err(e) => out.push(format!(
                    "{} (claude, agent frontmatter): cannot be listed ({e}), and an agent's \
                     frontmatter can give it MCP servers",
                    dir.display()
                )),
            }
        }
        for f in files {
            let read = crate::fsio::read_input_if_exists(
                f.path(),
                "agent definition",
                crate::fsio::limits::DOCUMENT,
            );
            let why = match read {
                Ok(Some(text)) if !text.contains("mcpServers") => continue,
                Ok(None) => continue,
                Ok(Some(_)) => {
                    "its frontmatter can give the agent MCP servers of its own (mcpServers)"
                }
                Err(_) => "it cannot be read, and an agent's frontmatter can give it MCP servers",
            };
            out.push(format!(
                "{} (claude, agent frontmatter): {why}, which mcp-deploy does not read",
                f.path().display()
            ));
        }
    }
    out
}

/// A JSON file's top-level object, read as claude reads it (bounded, a leading BOM dropped);
/// `None` when it is absent, unreadable or not an object. Only for keys whose absence makes
/// the check fail, never pass.
fn read_json_object(path: &Path) -> Option<Map<String, Value>> {
    let text = crate::clients::read_config_text(path).ok()??;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match crate::clients::kit::node_json::parse_lenient::<Value>(text) {
        Ok((Value::Object(m), _)) => Some(m),
        _ => None,
    }
}

/// What would keep out a server added later: the policy that blocks a probe stdio entry and a
/// probe http entry, or that there is none.
fn later(kind: ClientKind, user_config: &Path) -> String {
    let probes = [
        (
            "a stdio",
            json!({"command": "/nonexistent/mcp-deploy-probe"}),
        ),
        (
            "an http",
            json!({"type": "http", "url": "https://mcp-deploy-probe.invalid/mcp"}),
        ),
    ];
    let mut said = Vec::new();
    let layers = clients::Layers::read(kind);
    for (what, probe) in probes {
        let Ok(entry) = Entry::from_value(&probe) else {
            continue;
        };
        let reg = Registration {
            client: kind.name(),
            file: user_config.to_path_buf(),
            scope: "user".into(),
            name: "mcp-deploy-probe".into(),
            entry: Value::Object(Map::new()),
        };
        said.push(match keeper(kind, &layers, &reg, &entry) {
            Ok(f) => format!("{what} server added later is kept out by {}", f.source),
            Err(None) => format!("no policy: {what} server added later would run"),
            Err(Some(not)) => format!("{what} server added later would run ({not})"),
        });
    }
    said.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> ClientKind {
        ClientKind::named(name).unwrap()
    }

    #[test]
    fn only_files_that_apply_everywhere_keep_a_server_out() {
        let codex = kind("codex");
        assert!(applies_everywhere(
            codex,
            "/etc/codex/requirements.toml [mcp_servers]"
        ));
        assert!(applies_everywhere(
            codex,
            "/etc/codex/managed_config.toml [mcp_servers.x] enabled"
        ));
        // A project's config or a profile can lay another value over the system's or the
        // user's; a profile applies only with --profile.
        assert!(!applies_everywhere(
            codex,
            "/etc/codex/config.toml key model"
        ));
        assert!(!applies_everywhere(
            codex,
            "/h/.codex/config.toml key model"
        ));
        assert!(!applies_everywhere(
            codex,
            "/h/.codex/p.config.toml (codex --profile p) [mcp_servers.x] enabled"
        ));
        let claude = kind("claude");
        assert!(applies_everywhere(
            claude,
            "/etc/claude-code/managed-settings.json allowedMcpServers"
        ));
        assert!(!applies_everywhere(
            claude,
            "/h/.claude.json projects./p.disabledMcpServers"
        ));
        // A merged allowlist counts only when every file it merges does.
        assert!(!applies_everywhere(
            claude,
            "/p/.claude/settings.json allowedMcpServers, /etc/claude-code/managed-settings.json \
             allowedMcpServers"
        ));
        // A project's file named through `..` is not under /etc, whatever its prefix.
        assert!(!applies_everywhere(
            claude,
            "/etc/../home/u/p/.claude/settings.json deniedMcpServers"
        ));
        // /etcetera is not under /etc: by components.
        assert!(!applies_everywhere(
            kind("gemini"),
            "/etcetera/settings.json"
        ));
        assert!(applies_everywhere(
            kind("gemini"),
            "/etc/gemini-cli/settings.json mcp.allowed"
        ));
    }
}
