//! The MCP handshake: start a registered stdio server the way a client would and ask it who it
//! is, so that `verify-identity --handshake` proves the registration does not merely point at
//! an executable inside the release but at one that speaks MCP.
//!
//! The protocol steps (MCP over stdio: newline-delimited JSON-RPC 2.0 messages, one a line):
//! 1. Start the entry's `command` with its `args` and its registered `env` (added to ours),
//!    from an empty temporary directory, in a process group of its own.
//! 2. Send `initialize` (protocolVersion [`PROTOCOL_VERSION`], no capabilities, clientInfo
//!    `mcp-deploy`) and wait for the response with its id: the result's `serverInfo` gives the
//!    name and version.
//! 3. Send `notifications/initialized`.
//! 4. When the server declares the `tools` capability, send `tools/list` and follow
//!    `nextCursor` from page to page, counting the tools.
//! 5. End the server whatever happened: close its stdin, SIGTERM the group, SIGKILL the group
//!    after [`GRACE`].
//!
//! One deadline bounds steps 1–4. While waiting for a response, notifications are skipped and
//! a server's own requests are answered (`ping` with `{}`, anything else with "method not
//! found") so that a server that asks something first is not left waiting.
//!
//! Everything that is not the awaited response fails the handshake at once, with the evidence:
//! a line that is not a JSON-RPC 2.0 message (the MCP spec forbids a server to write anything
//! else to stdout, and a client that tolerates a banner today may choke on the next one), an
//! error response, a response with another id, the server exiting, the deadline passing. The
//! server's stderr is kept (its last [`STDERR_KEEP`] bytes) and its tail shown with a failure.
//! Values of the entry's `env` are redacted from anything shown: they may be secrets.
//!
//! The server is started the way Claude Code starts it ([`expand`]): `${VAR}` and
//! `${VAR:-default}` in `command`, each of `args` and each `env` value are expanded by
//! claude's rules (found in its 2.1.332 CLI, pinned by the test
//! `handshake_expands_references_exactly_as_claude_does`), and the expanded `env` is added to
//! the environment the server inherits.

mod http;
mod stdio;

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::entry::secrets::redact;
use crate::entry::{Entry, Transport};
use crate::identity::surface::Surface;
// Where clients/claude.rs reads it too.
pub(crate) use crate::identity::expand::expand;

/// The protocol revision we offer; the server answers with the one it speaks.
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";
/// How long a server gets between SIGTERM and SIGKILL.
pub(crate) const GRACE: Duration = Duration::from_secs(2);
/// How much of the server's stderr is kept.
pub(crate) const STDERR_KEEP: usize = 8 * 1024;
/// A stdout line longer than this is not a message we will buffer.
pub(super) const MAX_LINE: usize = 16 * 1024 * 1024;
/// `tools/list` pages followed before we call it a loop.
const MAX_PAGES: usize = 1000;
/// Tools kept from `tools/list` (each held in memory for the surface).
const MAX_TOOLS: usize = 100_000;

/// Who the server says it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerInfo {
    pub(crate) name: String,
    pub(crate) version: String,
    /// The protocol revision the server chose.
    pub(crate) protocol_version: String,
    /// The number of tools, `None` when the server declares no `tools` capability.
    pub(crate) tools: Option<usize>,
    /// What it hands the agent: its tool surface, the entry's secrets redacted
    /// ([`crate::identity::surface`]).
    pub(crate) surface: Surface,
}

impl fmt::Display for ServerInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "server {:?} version {:?}, protocol {}, ",
            self.name, self.version, self.protocol_version
        )?;
        match self.tools {
            Some(1) => write!(f, "1 tool"),
            Some(n) => write!(f, "{n} tools"),
            None => write!(f, "no tools capability"),
        }
    }
}

/// Why a handshake failed. `step` names the request that was in flight.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HandshakeError {
    #[error(
        "a {kind} entry with {key} cannot be handshaken as its client connects: mcp-deploy \
         neither runs a headersHelper nor holds the client's OAuth token (--no-handshake skips \
         the gate)"
    )]
    NotAsTheClient { kind: String, key: &'static str },
    #[error("{step}: {what}")]
    Http { step: &'static str, what: String },
    #[error(
        "{step}: the server answered HTTP {status}: it wants authorization that the entry's \
         headers do not give{challenge} (--no-handshake skips the gate)"
    )]
    Unauthorized {
        step: &'static str,
        status: u16,
        challenge: String,
    },
    #[error("cannot start {command}: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no answer to {step} within {}", humantime::format_duration(*timeout))]
    TimedOut {
        step: &'static str,
        timeout: Duration,
    },
    #[error("the server closed its stdout ({status}) before answering {step}")]
    Exited { step: &'static str, status: String },
    #[error(
        "the server wrote a line that is not a JSON-RPC message while answering {step}: {line}"
    )]
    NotJsonRpc { step: &'static str, line: String },
    #[error("the server wrote a line longer than {MAX_LINE} bytes while answering {step}")]
    LineTooLong { step: &'static str },
    #[error("{step} answered with id {got}, expected {expected}")]
    WrongId {
        step: &'static str,
        expected: u64,
        got: String,
    },
    #[error("{step} failed: error {code}: {message}")]
    ErrorResponse {
        step: &'static str,
        code: String,
        message: String,
    },
    #[error("{step} result is malformed: {what}")]
    BadResult { step: &'static str, what: String },
}

/// A failed handshake: the error and the tail of the server's stderr. Shown (Display and
/// Debug alike) with the entry's env values redacted.
pub(crate) struct Failure {
    pub(crate) error: HandshakeError,
    pub(crate) stderr_tail: String,
    secrets: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = self.error.to_string();
        if !self.stderr_tail.is_empty() {
            shown.push_str("; stderr: ");
            shown.push_str(&self.stderr_tail);
        }
        f.write_str(&redact(&shown, &self.secrets))
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Failure({self})")
    }
}

/// Start the server `entry` registers (or, for a remote one, connect to it), handshake, list
/// its tools, end it. Never takes much longer than `timeout` plus [`GRACE`].
pub(crate) fn handshake(entry: &Entry, timeout: Duration) -> Result<ServerInfo, Failure> {
    handshake_then(entry, timeout, |_| {})
}

/// [`handshake`], telling `answered` what the server answered as soon as it did, before the
/// server is ended (install's gate lets a registration go ahead that moment).
pub(crate) fn handshake_then(
    entry: &Entry,
    timeout: Duration,
    answered: impl FnOnce(&ServerInfo),
) -> Result<ServerInfo, Failure> {
    // Every variable a reference reads is remembered: `--token ${API_TOKEN}` in args hands
    // the server the token, and a server that echoes its argv must not make us print it.
    let expanded = std::cell::RefCell::new(Vec::new());
    let lookup = |name: &str| {
        let value = std::env::var(name).ok();
        if let Some(v) = &value {
            expanded.borrow_mut().push(v.clone());
        }
        value
    };
    let env: BTreeMap<String, String> = entry_env(entry)
        .into_iter()
        .map(|(k, v)| (k, expand(&v, &lookup)))
        .collect();
    let headers: Vec<(String, String)> = crate::entry::string_map(&entry.raw, "headers")
        .into_iter()
        .map(|(k, v)| (k, expand(&v, &lookup)))
        .collect();
    let target = match &entry.transport {
        Transport::Stdio { command, args } => Target::Stdio(
            expand(command, &lookup),
            args.iter().map(|a| expand(a, &lookup)).collect::<Vec<_>>(),
        ),
        Transport::Remote { kind, url } => Target::Remote(kind, expand(url, &lookup)),
    };
    // What the entry holds, and what it expands to, may both be secrets.
    let mut secrets: Vec<String> = env.values().cloned().collect();
    secrets.extend(headers.iter().map(|(_, v)| v.clone()));
    secrets.extend(expanded.into_inner());
    secrets.extend(crate::entry::secrets::secret_values(&entry.raw));
    let fail = |error, stderr_tail| Failure {
        error,
        stderr_tail,
        secrets: secrets.clone(),
    };
    let deadline = Instant::now() + timeout;
    // Who the server said it is, its secrets redacted: what is handed over.
    let shown = |(info, capabilities, tools): (ServerInfo, Value, Vec<Value>)| {
        let surface = Surface::of(&info.name, &info.version, &capabilities, &tools, &secrets);
        ServerInfo {
            name: redact(&info.name, &secrets),
            version: redact(&info.version, &secrets),
            surface,
            ..info
        }
    };
    match target {
        Target::Stdio(command, args) => {
            let mut server =
                stdio::Server::start(&command, &args, &env).map_err(|e| fail(e, String::new()))?;
            let result = Talk::over(&mut server).talk(deadline, timeout).map(shown);
            // The answer is known: said before the server is ended (which takes a moment).
            if let Ok(info) = &result {
                answered(info);
            }
            server.end();
            result.map_err(|e| fail(e, server.stderr_tail()))
        }
        Target::Remote(kind, url) => {
            // What the client would add that we cannot: a program's headers, an OAuth token.
            for key in ["headersHelper", "oauth"] {
                if entry.raw.get(key).is_some_and(|v| !v.is_null()) {
                    let error = HandshakeError::NotAsTheClient {
                        kind: kind.to_string(),
                        key,
                    };
                    return Err(fail(error, String::new()));
                }
            }
            let mut remote = http::Remote::open(kind, &url, &headers, deadline, timeout)
                .map_err(|e| fail(e, String::new()))?;
            let result = Talk::over(&mut remote).talk(deadline, timeout).map(shown);
            if let Ok(info) = &result {
                answered(info);
            }
            remote.end();
            result.map_err(|e| fail(e, String::new()))
        }
    }
}

/// Where the handshake goes: a command to start, or a remote server's kind and URL.
enum Target<'a> {
    Stdio(String, Vec<String>),
    Remote(&'a str, String),
}

/// One transport of the handshake: stdio ([`stdio::Server`]) or HTTP ([`http`]).
pub(super) trait Rpc {
    /// Hand the server one JSON-RPC message (a request, a notification or our answer);
    /// `step` names the request in flight, for the evidence.
    fn send(&mut self, msg: &Value, step: &'static str) -> Result<(), HandshakeError>;
    /// The next message from the server, waiting until `deadline`; `None` is nothing to read
    /// (a blank line), not an end.
    fn next(
        &mut self,
        step: &'static str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Option<Value>, HandshakeError>;
}

/// Steps 2–4 over a transport: the requests, their ids, and the server's own requests
/// answered while we wait.
struct Talk<'a> {
    rpc: &'a mut dyn Rpc,
    next_id: u64,
}

impl<'a> Talk<'a> {
    fn over(rpc: &'a mut dyn Rpc) -> Talk<'a> {
        Talk { rpc, next_id: 1 }
    }

    /// Steps 2–4: who the server is (its surface still empty), its capabilities and its tools.
    fn talk(
        &mut self,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(ServerInfo, Value, Vec<Value>), HandshakeError> {
        let init = self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp-deploy", "version": env!("CARGO_PKG_VERSION")},
            }),
            deadline,
            timeout,
        )?;
        let bad = |what: &str| HandshakeError::BadResult {
            step: "initialize",
            what: what.to_string(),
        };
        let info = init
            .get("serverInfo")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no serverInfo object"))?;
        let text = |v: Option<&Value>, what: &str| {
            v.and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| bad(what))
        };
        let name = text(info.get("name"), "serverInfo.name is not a string")?;
        let version = text(info.get("version"), "serverInfo.version is not a string")?;
        let protocol_version = text(init.get("protocolVersion"), "no protocolVersion string")?;
        let has_tools = init
            .get("capabilities")
            .and_then(|c| c.get("tools"))
            .is_some_and(|t| !t.is_null());
        let capabilities = init.get("capabilities").cloned().unwrap_or(Value::Null);
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.rpc.send(&initialized, "notifications/initialized")?;
        let listed = if has_tools {
            Some(self.list_tools(deadline, timeout)?)
        } else {
            None
        };
        let info = ServerInfo {
            name,
            version,
            protocol_version,
            tools: listed.as_ref().map(Vec::len),
            surface: Surface::of("", "", &Value::Null, &[], &[]),
        };
        Ok((info, capabilities, listed.unwrap_or_default()))
    }

    fn list_tools(
        &mut self,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Vec<Value>, HandshakeError> {
        let bad = |what: String| HandshakeError::BadResult {
            step: "tools/list",
            what,
        };
        let mut listed = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self.request("tools/list", params, deadline, timeout)?;
            let tools = page
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("no tools array".into()))?;
            if listed.len() + tools.len() > MAX_TOOLS {
                return Err(bad(format!("more than {MAX_TOOLS} tools")));
            }
            listed.extend(tools.iter().cloned());
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok(listed),
                Some(Value::String(next)) if cursor.as_deref() == Some(next.as_str()) => {
                    return Err(bad(format!(
                        "nextCursor {next:?} repeats the cursor asked for"
                    )))
                }
                Some(Value::String(next)) => cursor = Some(next.clone()),
                Some(other) => return Err(bad(format!("nextCursor {other} is not a string"))),
            }
        }
        Err(bad(format!("more than {MAX_PAGES} pages")))
    }

    /// Send a request and wait for its response's `result`.
    fn request(
        &mut self,
        step: &'static str,
        params: Value,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Value, HandshakeError> {
        let id = self.next_id;
        self.next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": step, "params": params});
        self.rpc.send(&req, step)?;
        loop {
            let Some(msg) = self.rpc.next(step, deadline, timeout)? else {
                continue;
            };
            let not_rpc = || HandshakeError::NotJsonRpc {
                step,
                line: shorten(&msg.to_string(), 200),
            };
            if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return Err(not_rpc());
            }
            let method = msg.get("method").and_then(Value::as_str);
            match (method, msg.get("id")) {
                // A notification (logging, list_changed): not what we wait for.
                (Some(_), None) => continue,
                (Some(m), Some(rid)) => {
                    self.answer(m, rid.clone(), step)?;
                    continue;
                }
                (None, Some(rid)) => {
                    if rid.as_u64() != Some(id) {
                        return Err(HandshakeError::WrongId {
                            step,
                            expected: id,
                            got: shorten(&rid.to_string(), 80),
                        });
                    }
                    if let Some(err) = msg.get("error") {
                        return Err(HandshakeError::ErrorResponse {
                            step,
                            code: err
                                .get("code")
                                .map_or_else(|| "without a code".into(), Value::to_string),
                            message: shorten(
                                err.get("message").and_then(Value::as_str).unwrap_or(""),
                                300,
                            ),
                        });
                    }
                    return match msg.get("result") {
                        Some(r @ Value::Object(_)) => Ok(r.clone()),
                        _ => Err(HandshakeError::BadResult {
                            step,
                            what: "the response holds no result object".into(),
                        }),
                    };
                }
                (None, None) => return Err(not_rpc()),
            }
        }
    }

    /// Answer a request the server makes of us: we are a client with no capabilities.
    fn answer(
        &mut self,
        method: &str,
        id: Value,
        step: &'static str,
    ) -> Result<(), HandshakeError> {
        let reply = if method == "ping" {
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            json!({"jsonrpc": "2.0", "id": id,
                   "error": {"code": -32601, "message": format!("mcp-deploy does not support {method}")}})
        };
        self.rpc.send(&reply, step)
    }
}

fn entry_env(entry: &Entry) -> BTreeMap<String, String> {
    crate::entry::string_map(&entry.raw, "env")
        .into_iter()
        .collect()
}

/// The last `lines` non-empty lines of `text`, joined with ` | `, at most `max` chars, with
/// control characters escaped so that the detail stays one line.
fn tail(text: &str, lines: usize, max: usize) -> String {
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = kept[kept.len().saturating_sub(lines)..].join(" | ");
    let chars: Vec<char> = joined.chars().collect();
    let start = chars.len().saturating_sub(max);
    let cut: String = chars[start..].iter().collect();
    let shown = crate::text::printable(&cut);
    if start > 0 {
        format!("...{shown}")
    } else {
        shown
    }
}

/// At most `max` chars of `text`, control characters escaped.
fn shorten(text: &str, max: usize) -> String {
    let text = text.trim_end_matches(['\n', '\r']);
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push_str("...");
    }
    crate::text::printable(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(script: &str, env: Value) -> Entry {
        Entry::from_value(&json!({"command": "/bin/sh", "args": ["-c", script], "env": env}))
            .unwrap()
    }

    #[test]
    fn tail_keeps_the_last_lines_on_one_line() {
        assert_eq!(tail("a\n\nb\nc\n", 2, 100), "b | c");
        assert_eq!(tail("x\u{1b}[31m", 5, 100), "x\\u{1b}[31m");
        assert_eq!(tail("abcdef", 5, 3), "...def");
    }

    #[test]
    fn a_remote_entry_the_client_adds_to_is_not_handshaken_without_it() {
        for (key, value) in [("headersHelper", json!("/bin/h")), ("oauth", json!({}))] {
            let e = Entry::from_value(&json!({"type": "http", "url": "http://h/mcp", key: value}))
                .unwrap();
            let f = handshake(&e, Duration::from_secs(1)).unwrap_err();
            assert!(
                matches!(f.error, HandshakeError::NotAsTheClient { .. }),
                "{f}"
            );
            assert!(f.to_string().contains(key), "{f}");
        }
    }

    #[test]
    fn an_unreachable_remote_server_fails_naming_it_and_no_header_value() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        for kind in ["http", "sse"] {
            let e = Entry::from_value(&json!({"type": kind, "url": url,
                "headers": {"Authorization": "Bearer s3cr3t-token"}}))
            .unwrap();
            let f = handshake(&e, Duration::from_secs(2)).unwrap_err();
            let shown = f.to_string();
            assert!(shown.contains(&url), "{shown}");
            assert!(!shown.contains("s3cr3t"), "{shown}");
        }
    }

    #[test]
    fn a_header_that_would_split_the_request_fails_without_being_sent_or_shown() {
        // A value from the environment holding CR LF: never a second header line, never a
        // panic, never printed.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let e = Entry::from_value(&json!({"type": "http", "url": url,
            "headers": {"X-Tenant": "a\r\nX-Injected: s3cr3t-inj"}}))
        .unwrap();
        let f = handshake(&e, Duration::from_secs(2)).unwrap_err();
        assert!(!f.to_string().contains("s3cr3t-inj"), "{f}");
        listener.set_nonblocking(true).unwrap();
        if let Ok((mut conn, _)) = listener.accept() {
            use std::io::Read;
            conn.set_nonblocking(true).unwrap();
            let mut got = String::new();
            let _ = conn.read_to_string(&mut got);
            assert!(!got.contains("X-Injected"), "{got}");
        }
    }

    #[test]
    fn a_crash_reports_status_and_redacted_stderr() {
        let e = stdio(
            "echo \"bad token $TOKEN\" >&2; exit 7",
            json!({"TOKEN": "s3cr3t-value"}),
        );
        let f = handshake(&e, Duration::from_secs(5)).unwrap_err();
        let shown = f.to_string();
        assert!(shown.contains("exit status 7"), "{shown}");
        assert!(shown.contains("bad token <redacted>"), "{shown}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }

    #[test]
    fn env_values_echoed_in_server_info_are_redacted() {
        let e = stdio(
            r#"read -r _; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"'"$K"'","version":"1"}}}'; cat >/dev/null"#,
            json!({"K": "hunter22"}),
        );
        let info = handshake(&e, Duration::from_secs(5)).unwrap();
        assert_eq!(info.name, "<redacted>");
    }

    #[test]
    fn a_minimal_server_without_tools() {
        let e = stdio(
            r#"read -r _; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"mini","version":"0.1"}}}'; cat >/dev/null"#,
            json!({}),
        );
        let info = handshake(&e, Duration::from_secs(5)).unwrap();
        assert_eq!(info.name, "mini");
        assert_eq!(info.tools, None);
        assert_eq!(
            info.to_string(),
            "server \"mini\" version \"0.1\", protocol 2025-06-18, no tools capability"
        );
    }
}
