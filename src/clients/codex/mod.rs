//! OpenAI Codex, through its CLI (`codex mcp add|get --json|remove`).
//!
//! - The entries live in `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`) as
//!   `[mcp_servers.NAME]` tables; we read that file, never write it. A CODEX_HOME that is set
//!   must exist (codex itself refuses to run otherwise); the default `~/.codex` is created by
//!   codex on its first call, as it always does.
//! - Codex has one scope for these commands (its "global" servers). A trusted project's
//!   `.codex/config.toml` overrides a same-name entry, so calls run from an empty directory and
//!   such files are reported as shadows.
//! - `codex mcp add` overwrites an existing entry without a word, and `codex mcp remove` of a
//!   missing name exits 0: so `add` reads the config first and refuses a registered name,
//!   `remove` refuses a missing one, and each checks the config after the call.
//! - Its CLI cannot set HTTP headers, only a bearer token read from an environment variable:
//!   `Authorization: Bearer ${VAR}` maps to `--bearer-token-env-var VAR`; any other header, a
//!   literal token, or the `sse` transport is refused rather than registered differently.
//! - `codex mcp get --json` prints env values (secrets): it is parsed, compared with the config
//!   file, and never echoed.

pub(crate) mod layers;
pub(crate) mod policy;
mod scopes;

pub(crate) use scopes::scopes;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::cli_driven::{AddArgs, CliDriven, Dialect, Spelling};
use super::runner::{self, Runner};
use super::{only_keys, string_map, ClientError, ClientOptions, Op};
use crate::entry::{Entry, Transport};

/// What codex does its own way ([`super::cli_driven`]).
pub(crate) struct CodexCli;

pub(crate) type Codex = CliDriven<CodexCli>;

pub(crate) fn open(
    row: &super::table::About,
    options: &ClientOptions,
) -> Result<Codex, ClientError> {
    let home = resolve_home(
        options.home("codex"),
        crate::dirs::var_raw("CODEX_HOME"),
        crate::dirs::home(),
    );
    let mut env: Vec<(&'static str, OsString)> = vec![
        // Its errors come with an (empty) stack backtrace otherwise.
        ("RUST_BACKTRACE", "0".into()),
        ("NO_COLOR", "1".into()),
    ];
    if let Home::Explicit(dir) = &home {
        if !dir.is_dir() {
            return Err(ClientError::HomeMissing {
                var: "CODEX_HOME",
                path: dir.clone(),
            });
        }
        env.push(("CODEX_HOME", dir.clone().into_os_string()));
    }
    let runner = Runner::of_client(row, options, env)?.detect_version("codex")?;
    Ok(CliDriven {
        runner,
        config: home.dir().join("config.toml"),
        dialect: CodexCli,
    })
}

impl Dialect for CodexCli {
    const KIND: &'static dyn super::table::Kind = &CodexKind;
    // It exits 0 for a name it does not have.
    const REMOVE_MISSING: Option<&'static str> = Some("No MCP server named");
    const REWRITES_OTHERS: bool = false;

    const SHOW: Spelling = Spelling {
        add: "codex mcp add {} <entry>",
        remove: "codex mcp remove {}",
        observe: "codex mcp get {} --json",
    };
    const REMOVE: &'static [&'static str] = &["mcp", "remove"];
    const ADD_ARGS: AddArgs = add_args;

    /// Codex's stderr without its noise ([`codex_stderr`]).
    fn stderr(stderr: &str) -> String {
        codex_stderr(stderr)
    }

    /// `codex mcp get --json`, compared with the config file.
    fn observe(c: &Codex, name: &str) -> Result<Option<Entry>, ClientError> {
        observe(c, name)
    }
}

/// Where codex's home is, and whether it was named (and so must exist) or is the default.
#[derive(Debug, PartialEq)]
enum Home {
    Explicit(PathBuf),
    Default(PathBuf),
}

impl Home {
    fn dir(&self) -> &Path {
        match self {
            Home::Explicit(d) | Home::Default(d) => d,
        }
    }
}

/// Where codex keeps its config for this environment (`$CODEX_HOME/config.toml`, else
/// `~/.codex/config.toml`), found without the codex binary, for a read-only look.
pub(crate) fn config_path() -> PathBuf {
    resolve_home(
        None,
        crate::dirs::var_raw("CODEX_HOME"),
        crate::dirs::home(),
    )
    .dir()
    .join("config.toml")
}

/// Where a same-name entry shadows the user entry `name` of `config`, read-only (no codex
/// binary needed): the rule of `Codex::shadows`.
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = Vec::new();
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(found);
    };
    for dir in cwd.ancestors() {
        let file = dir.join(".codex").join("config.toml");
        if file == *config || !file.is_file() {
            continue;
        }
        // An unreadable project file is codex's problem there, not a reason to stop.
        if read_user_entries(&file).is_ok_and(|m| m.contains_key(name)) {
            found.push(format!(
                "project config {} (used where codex trusts that project)",
                file.display()
            ));
        }
    }
    Ok(found)
}

fn resolve_home(explicit: Option<&Path>, codex_home: Option<OsString>, home: PathBuf) -> Home {
    if let Some(dir) = explicit {
        return Home::Explicit(dir.to_path_buf());
    }
    match codex_home.filter(|d| !d.is_empty()) {
        Some(dir) => Home::Explicit(PathBuf::from(dir)),
        None => Home::Default(home.join(".codex")),
    }
}

/// Codex's stderr without its noise: the warning it prints when its home is under /tmp (it
/// then cannot create helper links) and any backtrace.
fn codex_stderr(stderr: &str) -> String {
    let kept: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("WARNING: proceeding, even though"))
        // A quoted source line of a TOML error (`3 | env = { T = "…" }`), which may hold a
        // secret.
        .filter(|l| {
            !l.trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start()
                .starts_with('|')
        })
        .take_while(|l| !l.starts_with("Stack backtrace:"))
        .collect();
    runner::first_lines(&kept.join("\n"))
}

/// What `codex mcp get NAME --json` reports, cross-checked against the config file.
fn observe(c: &Codex, name: &str) -> Result<Option<Entry>, ClientError> {
    let step = CodexCli::SHOW.show(Op::Observe, name);
    // codex itself would quote the offending line of a malformed file: it is read first.
    let Some(got) = c.exact_get(
        name,
        &["mcp", "get", name, "--json"],
        &step,
        "No MCP server named",
    )?
    else {
        return Ok(None);
    };
    // Never echo `got.stdout`: it holds env values.
    let shown: Value = serde_json::from_str(&got.stdout).map_err(|e| ClientError::Garbage {
        step: step.clone(),
        reason: format!("not JSON ({})", e.classify_str()),
    })?;
    let shown = from_get_json(&shown).map_err(|e| ClientError::Garbage {
        step: step.clone(),
        reason: e.to_string(),
    })?;
    c.agreed(name, &step, &got.config, |entry| {
        core(&shown) == core(&entry.raw)
    })
    .map(Some)
}

/// A serde_json error category, which (unlike its message) quotes nothing of the input.
trait Classify {
    fn classify_str(&self) -> &'static str;
}

impl Classify for serde_json::Error {
    fn classify_str(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O error",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "unexpected data",
            serde_json::error::Category::Eof => "truncated",
        }
    }
}

/// The argv of `codex mcp add` for `entry`, and the values to keep out of error messages; or
/// why codex cannot hold it.
fn add_args(name: &str, entry: &Entry) -> Result<(Vec<String>, Vec<String>), ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client: "codex",
        name: name.to_string(),
        reason,
    };
    let mut args: Vec<String> = vec!["mcp".into(), "add".into(), name.into()];
    let mut secrets = Vec::new();
    match &entry.transport {
        Transport::Stdio { command, args: a } => {
            only_keys(&entry.raw, &["type", "command", "args", "env"])
                .map_err(|e| refuse(e.to_string()))?;
            for (k, v) in string_map(&entry.raw, "env") {
                if k.is_empty() || k.contains('=') {
                    return Err(refuse(format!(
                        "env key {k:?}: `codex mcp add --env KEY=VALUE` cannot carry it"
                    )));
                }
                args.push("--env".into());
                args.push(format!("{k}={v}"));
                secrets.push(v);
            }
            args.push("--".into());
            args.push(command.clone());
            args.extend(a.iter().cloned());
        }
        Transport::Remote { kind, url } => {
            if kind != "http" {
                return Err(refuse(format!(
                    "codex speaks streamable HTTP only, not {kind:?}"
                )));
            }
            only_keys(&entry.raw, &["type", "url", "headers"])
                .map_err(|e| refuse(e.to_string()))?;
            args.push("--url".into());
            args.push(url.clone());
            for (k, v) in string_map(&entry.raw, "headers") {
                if !k.eq_ignore_ascii_case("authorization") {
                    return Err(refuse(format!(
                        "header {k:?}: codex's CLI sets no header but a bearer token taken from \
                         an environment variable"
                    )));
                }
                let var = bearer_env_var(&v).ok_or_else(|| {
                    refuse(format!(
                        "header {k:?} holds a literal value; codex takes a bearer token only \
                         from an environment variable: declare it as \"Bearer ${{VAR}}\""
                    ))
                })?;
                args.push("--bearer-token-env-var".into());
                args.push(var.to_string());
            }
        }
    }
    Ok((args, secrets))
}

/// `VAR` of a header value `Bearer ${VAR}`.
fn bearer_env_var(value: &str) -> Option<&str> {
    let var = value.strip_prefix("Bearer ${")?.strip_suffix('}')?;
    let mut chars = var.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    (first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(var)
}

/// Read the `mcp_servers` of a codex config, each entry in the claude shape. A missing file
/// has no entries.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    let bad = |reason: String| ClientError::Config {
        path: path.to_path_buf(),
        reason,
    };
    let Some(text) = super::read_config_text(path)? else {
        return Ok(Map::new());
    };
    let doc: toml::Table = toml::from_str(&text).map_err(|e| {
        // The message quotes the offending line, which may hold a secret: give its place only.
        let at = e
            .span()
            .map(|s| format!(" at line {}", text[..s.start].lines().count().max(1)))
            .unwrap_or_default();
        bad(format!("not valid TOML{at}"))
    })?;
    let servers = match doc.get("mcp_servers") {
        None => return Ok(Map::new()),
        Some(toml::Value::Table(t)) => t,
        Some(_) => return Err(bad("\"mcp_servers\" is not a table".into())),
    };
    let mut out = Map::new();
    for (name, server) in servers {
        let json = serde_json::to_value(server).map_err(|e| bad(e.to_string()))?;
        let shaped = match json {
            Value::Object(m) => Value::Object(to_claude_shape(m)),
            other => other,
        };
        out.insert(name.clone(), shaped);
    }
    Ok(out)
}

/// A codex server entry (its TOML keys) in the claude shape: `command`/`args`/`env`, or
/// `type: http`, `url`, `headers`. True defaults are dropped; every other codex key is kept
/// as it is, so that it shows up as a difference from what we would register.
fn to_claude_shape(mut rest: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let drop_if = |rest: &mut Map<String, Value>, key: &str, default: fn(&Value) -> bool| {
        if rest.get(key).is_some_and(default) {
            rest.remove(key);
        }
    };
    drop_if(&mut rest, "enabled", |v| v == &Value::Bool(true));
    for key in ["env_vars", "enabled_tools", "disabled_tools"] {
        drop_if(&mut rest, key, |v| v.is_null());
    }
    drop_if(&mut rest, "env_vars", |v| {
        v.as_array().is_some_and(|a| a.is_empty())
    });
    for key in [
        "cwd",
        "disabled_reason",
        "startup_timeout_sec",
        "tool_timeout_sec",
        "http_headers_helper",
    ] {
        drop_if(&mut rest, key, Value::is_null);
    }
    if matches!(rest.get("url"), Some(Value::String(_))) {
        out.insert("type".into(), "http".into());
        out.insert("url".into(), rest.remove("url").expect("checked"));
        let mut headers = Map::new();
        drop_if(&mut rest, "http_headers", Value::is_null);
        drop_if(&mut rest, "env_http_headers", Value::is_null);
        if let Some(Value::Object(h)) = rest.get("http_headers") {
            if h.values().all(Value::is_string) {
                headers.extend(h.clone());
                rest.remove("http_headers");
            }
        }
        if let Some(Value::Object(h)) = rest.get("env_http_headers") {
            if h.values().all(Value::is_string) {
                for (k, v) in h {
                    headers.insert(k.clone(), format!("${{{}}}", v.as_str().unwrap()).into());
                }
                rest.remove("env_http_headers");
            }
        }
        if let Some(Value::String(var)) = rest.get("bearer_token_env_var") {
            headers.insert("Authorization".into(), format!("Bearer ${{{var}}}").into());
            rest.remove("bearer_token_env_var");
        }
        if !headers.is_empty() {
            out.insert("headers".into(), Value::Object(headers));
        }
    } else {
        drop_if(&mut rest, "env", Value::is_null);
        for key in ["command", "args", "env"] {
            if let Some(v) = rest.remove(key) {
                out.insert(key.into(), v);
            }
        }
    }
    out.extend(rest);
    out
}

/// Why `codex mcp get NAME --json` printed something else than an entry (never quoting it:
/// it holds env values; the transport type it names is no secret).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum GetJsonError {
    #[error("it is not a JSON object")]
    NotObject,
    #[error("it has no \"transport\" object")]
    NoTransport,
    #[error("unknown transport type {kind:?}")]
    UnknownTransport { kind: String },
    #[error("its transport has no \"type\"")]
    NoType,
}

/// What `codex mcp get NAME --json` prints, in the claude shape.
fn from_get_json(v: &Value) -> Result<Map<String, Value>, GetJsonError> {
    let top = v.as_object().ok_or(GetJsonError::NotObject)?;
    let transport = top
        .get("transport")
        .and_then(Value::as_object)
        .ok_or(GetJsonError::NoTransport)?;
    let mut flat = Map::new();
    match transport.get("type").and_then(Value::as_str) {
        Some("stdio") | Some("streamable_http") => {}
        Some(other) => {
            return Err(GetJsonError::UnknownTransport {
                kind: other.to_string(),
            })
        }
        None => return Err(GetJsonError::NoType),
    }
    for (k, v) in transport {
        if k != "type" {
            flat.insert(k.clone(), v.clone());
        }
    }
    if let Some(enabled) = top.get("enabled") {
        flat.insert("enabled".into(), enabled.clone());
    }
    Ok(to_claude_shape(flat))
}

/// The part of an entry both `codex mcp get --json` and the config file show alike: the
/// transport and whether it is enabled (timeouts, for one, are spelled differently).
fn core(raw: &Map<String, Value>) -> Map<String, Value> {
    let mut m: Map<String, Value> = raw
        .iter()
        .filter(|(k, _)| {
            [
                "type", "command", "args", "env", "url", "headers", "enabled",
            ]
            .contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // Empty args/env are defaults either way.
    m.retain(|k, v| {
        !(matches!(k.as_str(), "args") && v.as_array().is_some_and(|a| a.is_empty())
            || matches!(k.as_str(), "env" | "headers")
                && v.as_object().is_some_and(|o| o.is_empty()))
    });
    m
}

/// Codex, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct CodexKind;

static ABOUT: super::table::About = super::table::about!(cli codex "Codex" MCP_DEPLOY_CODEX,
    npm ["@openai/codex"] (0, 45, 0) ..= (0, 171, 0));

// `codex mcp list --json` loads and deserializes the merged config (system, user, managed,
// requirements) as every codex start does, and exits 1 with "failed to load bootstrap
// configuration" when it refuses it (codex 0.171.0).
super::table::folder_kind!(CodexKind, about: ABOUT, layers: layers::read, opens: open,
    policy: policy::Policy, loads_config: loads_config, load_layers: layers::load_files,
    keeps_out: layers::keeps_out_here);

fn loads_config(binary: Option<&Path>) -> super::oracle::Answer {
    super::oracle::ask_cli(&ABOUT, &["mcp", "list", "--json"], &[], binary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::{assert_refused, entry};
    use serde_json::json;

    #[test]
    fn home_is_explicit_then_codex_home_then_home_dot_codex() {
        assert_eq!(
            resolve_home(Some(Path::new("/e")), Some("/c".into()), "/h".into()),
            Home::Explicit("/e".into())
        );
        assert_eq!(
            resolve_home(None, Some("/c".into()), "/h".into()),
            Home::Explicit("/c".into())
        );
        assert_eq!(
            resolve_home(None, Some("".into()), "/h".into()),
            Home::Default("/h/.codex".into())
        );
    }

    #[test]
    fn config_entries_take_the_claude_shape() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        assert!(read_user_entries(&p).unwrap().is_empty());
        std::fs::write(
            &p,
            r#"model = "o3"
[mcp_servers.s]
command = "/x"
args = ["a b", "c"]
enabled = true
env_vars = []

[mcp_servers.s.env]
TOKEN = "${TOKEN}"

[mcp_servers.h]
url = "http://h/mcp"
bearer_token_env_var = "TOK"
env_http_headers = { "X-Key" = "KEY_VAR" }

[mcp_servers.off]
command = "/y"
enabled = false
startup_timeout_sec = 20
"#,
        )
        .unwrap();
        let m = read_user_entries(&p).unwrap();
        assert_eq!(
            m["s"],
            json!({"command":"/x","args":["a b","c"],"env":{"TOKEN":"${TOKEN}"}})
        );
        assert_eq!(
            m["h"],
            json!({"type":"http","url":"http://h/mcp",
                   "headers":{"X-Key":"${KEY_VAR}","Authorization":"Bearer ${TOK}"}})
        );
        // Non-default codex keys stay, so that the entry is not taken for a declared one.
        assert_eq!(
            m["off"],
            json!({"command":"/y","enabled":false,"startup_timeout_sec":20})
        );
        assert!(!entry(m["off"].clone()).same_registration(&entry(json!({"command":"/y"}))));
    }

    #[test]
    fn malformed_config_is_refused_without_quoting_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(
            &p,
            "[mcp_servers.s]\ncommand = \"/x\"\nenv = { T = \"hunter2 }\n",
        )
        .unwrap();
        let err = read_user_entries(&p).unwrap_err().to_string();
        assert!(err.contains("not valid TOML at line 3"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        std::fs::write(&p, "mcp_servers = 3\n").unwrap();
        assert!(read_user_entries(&p).is_err());
    }

    #[test]
    fn get_json_takes_the_claude_shape() {
        let stdio = json!({"name":"ct","enabled":true,"disabled_reason":null,
            "transport":{"type":"stdio","command":"/x","args":["a b"],"env":{"T":"v"},
                         "env_vars":[],"cwd":null},
            "enabled_tools":null,"disabled_tools":null,"startup_timeout_sec":null,
            "tool_timeout_sec":null});
        assert_eq!(
            Value::Object(from_get_json(&stdio).unwrap()),
            json!({"command":"/x","args":["a b"],"env":{"T":"v"}})
        );
        let http = json!({"name":"h","enabled":true,"transport":{"type":"streamable_http",
            "url":"http://h/mcp","bearer_token_env_var":"TOK","http_headers":null,
            "env_http_headers":null,"http_headers_helper":null}});
        assert_eq!(
            Value::Object(from_get_json(&http).unwrap()),
            json!({"type":"http","url":"http://h/mcp","headers":{"Authorization":"Bearer ${TOK}"}})
        );
        assert_eq!(
            from_get_json(&json!({"transport":{"type":"ws"}})),
            Err(GetJsonError::UnknownTransport { kind: "ws".into() })
        );
        assert_eq!(from_get_json(&json!([])), Err(GetJsonError::NotObject));
    }

    #[test]
    fn add_arguments_and_refusals() {
        let (args, secrets) = add_args(
            "ct",
            &entry(json!({"command":"/x","args":["a b","--flag"],"env":{"T":"a=b"}})),
        )
        .unwrap();
        assert_eq!(
            args,
            ["mcp", "add", "ct", "--env", "T=a=b", "--", "/x", "a b", "--flag"]
        );
        assert_eq!(secrets, ["a=b"]);
        let (args, _) = add_args(
            "h",
            &entry(json!({"type":"http","url":"http://h/mcp",
                          "headers":{"Authorization":"Bearer ${TOK_1}"}})),
        )
        .unwrap();
        assert_eq!(
            args,
            [
                "mcp",
                "add",
                "h",
                "--url",
                "http://h/mcp",
                "--bearer-token-env-var",
                "TOK_1"
            ]
        );
        assert_refused(
            |e| add_args("n", e),
            [
                (
                    json!({"type":"http","url":"u","headers":{"Authorization":"Bearer hunter2"}}),
                    "literal value",
                ),
                (
                    json!({"type":"http","url":"u","headers":{"X-Key":"${K}"}}),
                    "header \"X-Key\"",
                ),
                (json!({"type":"sse","url":"u"}), "not \"sse\""),
                (json!({"command":"/x","cwd":"/"}), "key \"cwd\""),
            ],
        );
    }

    #[test]
    fn noise_is_cut_from_codex_errors() {
        let stderr = "WARNING: proceeding, even though we could not create PATH aliases: x\n\
                      Error: No MCP server named 'n' found.\n\nStack backtrace:\n   0: <unknown>\n";
        assert_eq!(
            codex_stderr(stderr),
            "Error: No MCP server named 'n' found."
        );
    }
}
