//! Claude Code, through its CLI (`claude mcp add-json|get|remove -s user`).
//!
//! - The user-scope entries live in `$CLAUDE_CONFIG_DIR/.claude.json` (or `~/.claude.json`)
//!   under `mcpServers`; we read that file, never write it.
//! - Every call runs from an empty temporary directory, so that no project (`.mcp.json`) or
//!   local-scope entry of the caller's working directory shadows the user scope.
//! - `claude mcp get` starts the server to health-check it; MCP_TIMEOUT bounds that. It prints
//!   args joined by spaces (lossy) and env and header values (secrets), so its output is
//!   parsed for scope, command, args and url only, compared with the config file, and never
//!   echoed.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::runner::Runner;
use super::{Client, ClientError, ClientOptions, Op};
use crate::entry::{Entry, Transport};
use crate::fsio;

/// The npm package and version the project is tested with.
pub const NPM_PACKAGE: &str = "@anthropic-ai/claude-code@2.1.332";

pub struct Claude {
    runner: Runner,
    config: PathBuf,
}

impl Claude {
    pub fn open(options: &ClientOptions) -> Result<Claude, ClientError> {
        let runner = Runner::open(
            "claude",
            options.claude.as_deref(),
            options.calls_binary,
            options.timeout,
            vec![
                ("MCP_TIMEOUT", options.mcp_timeout_ms.to_string().into()),
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ],
            format!(
                "install Claude Code (npm install -g {NPM_PACKAGE}), or pass --claude PATH \
                 (or set MCP_DEPLOY_CLAUDE)"
            ),
        )?;
        Ok(Claude {
            runner,
            config: config_path(),
        })
    }
}

/// Where Claude Code keeps its user configuration.
pub fn config_path() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join(".claude.json"),
        None => home().join(".claude.json"),
    }
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
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

    fn config_path(&self) -> &Path {
        &self.config
    }

    /// Local scope: `projects.<dir>.mcpServers.<name>` in the config file, for any project.
    /// Project scope: `.mcp.json` in the directory mcp-deploy runs from.
    fn shadows(&self, name: &str) -> Result<Vec<String>, ClientError> {
        shadows_in(&self.config, name)
    }

    fn user_entries(&self) -> Result<Map<String, Value>, ClientError> {
        read_user_entries(&self.config)
    }

    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        let json = entry.to_json();
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
        let step = format!("claude mcp get {name}");
        let out = match self.runner.call(&["mcp", "get", name], step.clone()) {
            Ok(out) => out,
            // `get` of an unknown name exits 1 with "No MCP server named ..." on stderr.
            Err(ClientError::Failed { stderr, .. }) if stderr.contains("No MCP server named") => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        let shown = parse_get(name, &out).map_err(|reason| ClientError::Garbage {
            step: step.clone(),
            reason,
        })?;
        if !shown.scope.starts_with("User config") {
            return Err(ClientError::Disagrees {
                name: name.to_string(),
                reason: format!(
                    "claude reports it in scope {:?}, not user scope: a local or project entry \
                     of the same name shadows it",
                    shown.scope
                ),
            });
        }
        let config = read_user_entries(&self.config)?;
        let disagree = |reason: String| ClientError::Disagrees {
            name: name.to_string(),
            reason,
        };
        let raw = config.get(name).ok_or_else(|| {
            disagree(format!(
                "claude reports it, but {} has no user-scope entry for it",
                self.config.display()
            ))
        })?;
        let entry = Entry::from_value(raw).map_err(|e| {
            disagree(format!(
                "its entry in {} is malformed: {e}",
                self.config.display()
            ))
        })?;
        let agrees = match (&entry.transport, &shown.transport) {
            (
                Transport::Stdio { command, args },
                Shown::Stdio {
                    command: c,
                    args: a,
                },
            ) => command == c && shown_by_get(args) == *a,
            (Transport::Remote { url, .. }, Shown::Remote { url: u }) => url == u,
            _ => false,
        };
        if !agrees {
            return Err(disagree(format!(
                "`{step}` does not show what {} holds ({})",
                self.config.display(),
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
pub fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = Vec::new();
    let doc = read_config(config)?;
    if let Some(projects) = doc.get("projects").and_then(Value::as_object) {
        for (dir, project) in projects {
            if project.pointer(&format!("/mcpServers/{name}")).is_some() {
                found.push(format!("local scope of project {dir}"));
            }
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        found.extend(cwd.ancestors().filter_map(|dir| project_shadow(dir, name)));
    }
    Ok(found)
}

/// Whether `dir/.mcp.json` defines `name` in claude's project scope: where, when it does, or
/// when it exists and mcp-deploy cannot read or parse it — claude may still read it (it
/// strips a byte-order mark, Node accepts a lone surrogate escape, a FIFO blocks), so that
/// what cannot be read fails rather than being vouched for. Read bounded, never blocking.
pub fn project_shadow(dir: &Path, name: &str) -> Option<String> {
    let path = dir.join(".mcp.json");
    std::fs::symlink_metadata(&path).ok()?;
    let unreadable = |why: String| {
        Some(format!(
            "project scope in {} (mcp-deploy cannot read it: {why}; claude may, so it \
             counts)",
            path.display()
        ))
    };
    let text = match fsio::read_input_string(&path, "project .mcp.json", fsio::limits::DOCUMENT) {
        Ok(t) => t,
        // A dangling link: claude finds nothing there either.
        Err(e) if e.source.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return unreadable(e.source.to_string()),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match serde_json::from_str::<Value>(text) {
        Ok(v) => v
            .get("mcpServers")
            .and_then(|m| m.get(name))
            .map(|_| format!("project scope in {}", path.display())),
        Err(e) => unreadable(format!("not JSON: {e}")),
    }
}

/// Args as `claude mcp get` prints them: joined by spaces, and each `${VAR:-default}` shown
/// as `${VAR}` (claude 2.1.332 drops the default when it prints a reference).
fn shown_by_get(args: &[String]) -> String {
    let bare = |name: &str| Some(format!("${{{name}}}"));
    args.iter()
        .map(|a| crate::handshake::expand(a, &bare))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Read Claude's config file; a missing one is empty.
fn read_config(path: &Path) -> Result<Value, ClientError> {
    let bad = |reason: String| ClientError::Config {
        path: path.to_path_buf(),
        reason,
    };
    let text = match fsio::read_input_if_exists(path, "client config", fsio::limits::CLIENT_CONFIG)
    {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Value::Null),
        Err(e) => return Err(bad(e.source.to_string())),
    };
    serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))
}

/// Read `mcpServers` of Claude's config file. A missing file has no entries.
pub fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    match read_config(path)?.get("mcpServers") {
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
    Stdio { command: String, args: String },
    Remote { url: String },
}

#[derive(Debug, PartialEq)]
struct GetOutput {
    scope: String,
    transport: Shown,
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
fn parse_get(name: &str, out: &str) -> Result<GetOutput, String> {
    let mut lines = out.lines().skip_while(|l| l.trim().is_empty());
    if lines.next().map(str::trim_end) != Some(&format!("{name}:")) {
        return Err(format!("it does not start with \"{name}:\""));
    }
    let field = |key: &str| -> Option<String> {
        out.lines().find_map(|l| {
            let rest = l.strip_prefix("  ")?.strip_prefix(key)?.strip_prefix(':')?;
            Some(rest.strip_prefix(' ').unwrap_or(rest).to_string())
        })
    };
    let scope = field("Scope").ok_or("it has no Scope line")?;
    let kind = field("Type").ok_or("it has no Type line")?;
    let transport = match kind.as_str() {
        "stdio" => Shown::Stdio {
            command: field("Command").ok_or("it has no Command line")?,
            args: field("Args").ok_or("it has no Args line")?,
        },
        "http" | "sse" => Shown::Remote {
            url: field("URL").ok_or("it has no URL line")?,
        },
        other => return Err(format!("unknown Type {other:?}")),
    };
    Ok(GetOutput { scope, transport })
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
            let err = parse_get("ct", out).unwrap_err();
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
}
