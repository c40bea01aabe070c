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

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
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
const MAX_LINE: usize = 16 * 1024 * 1024;
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
    #[error("a {kind} entry ({url}) cannot be handshaken: only stdio servers are supported")]
    Unsupported { kind: String, url: String },
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

/// Start the server `entry` registers, handshake, list its tools, end it. Never takes much
/// longer than `timeout` plus [`GRACE`].
pub(crate) fn handshake(entry: &Entry, timeout: Duration) -> Result<ServerInfo, Failure> {
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
    let (command, args) = match &entry.transport {
        Transport::Stdio { command, args } => (
            expand(command, &lookup),
            args.iter().map(|a| expand(a, &lookup)).collect::<Vec<_>>(),
        ),
        Transport::Remote { .. } => (String::new(), Vec::new()),
    };
    // What the entry holds, and what it expands to, may both be secrets.
    let mut secrets: Vec<String> = env.values().cloned().collect();
    secrets.extend(expanded.into_inner());
    secrets.extend(crate::entry::secrets::secret_values(&entry.raw));
    let fail = |error, stderr_tail| Failure {
        error,
        stderr_tail,
        secrets: secrets.clone(),
    };
    if let Transport::Remote { kind, url } = &entry.transport {
        let error = HandshakeError::Unsupported {
            kind: kind.clone(),
            url: url.clone(),
        };
        return Err(fail(error, String::new()));
    }
    let mut server = Server::start(&command, &args, &env).map_err(|e| fail(e, String::new()))?;
    let deadline = Instant::now() + timeout;
    let result = server.talk(deadline, timeout);
    server.end();
    match result {
        // A server may echo its environment in serverInfo: what we show goes through redact.
        Ok((info, capabilities, tools)) => {
            let surface = Surface::of(&info.name, &info.version, &capabilities, &tools, &secrets);
            Ok(ServerInfo {
                name: redact(&info.name, &secrets),
                version: redact(&info.version, &secrets),
                surface,
                ..info
            })
        }
        Err(e) => Err(fail(e, server.stderr_tail())),
    }
}

fn entry_env(entry: &Entry) -> BTreeMap<String, String> {
    crate::entry::string_map(&entry.raw, "env")
        .into_iter()
        .collect()
}

/// What the stdout reader hands over.
enum Line {
    Text(String),
    TooLong,
    Eof,
}

struct Server {
    child: Child,
    pgid: rustix::process::Pid,
    /// Messages to write; the writer thread owns stdin so that a server that stops reading
    /// can never block us. Dropping the sender closes stdin.
    to_server: Option<Sender<String>>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Receiver<()>,
    status: Option<ExitStatus>,
    next_id: u64,
    _cwd: tempfile::TempDir,
}

impl Server {
    fn start(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
    ) -> Result<Server, HandshakeError> {
        let spawn_err = |source| HandshakeError::Spawn {
            command: command.to_string(),
            source,
        };
        // An empty directory, as for client calls: the server's idea of "here" is no project.
        let cwd = tempfile::tempdir().map_err(spawn_err)?;
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let (mut child, pgid) =
            crate::process::spawn_group(Path::new(command), &args, false, |cmd| {
                cmd.envs(env)
                    .current_dir(cwd.path())
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
            })
            .map_err(spawn_err)?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr_pipe = child.stderr.take().expect("stderr is piped");
        let (to_server, outgoing) = mpsc::channel();
        std::thread::spawn(move || write_messages(stdin, outgoing));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, tx));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (done_tx, stderr_done) = mpsc::channel();
        let keep = Arc::clone(&stderr);
        std::thread::spawn(move || {
            keep_tail(stderr_pipe, &keep);
            let _ = done_tx.send(());
        });
        Ok(Server {
            child,
            pgid,
            to_server: Some(to_server),
            lines,
            stderr,
            stderr_done,
            status: None,
            next_id: 1,
            _cwd: cwd,
        })
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
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
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

    fn send(&self, msg: Value) {
        if let Some(tx) = &self.to_server {
            // A server that has gone is found out by the reader; nothing to do here.
            let _ = tx.send(msg.to_string());
        }
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
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": step, "params": params}));
        loop {
            let now = Instant::now();
            let line = if now >= deadline {
                Err(RecvTimeoutError::Timeout)
            } else {
                self.lines.recv_timeout(deadline - now)
            };
            let text = match line {
                Ok(Line::Text(t)) => t,
                Ok(Line::TooLong) => return Err(HandshakeError::LineTooLong { step }),
                Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(HandshakeError::Exited {
                        step,
                        status: self.exit_status(),
                    })
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(HandshakeError::TimedOut { step, timeout })
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            let not_rpc = || HandshakeError::NotJsonRpc {
                step,
                line: shorten(&text, 200),
            };
            let msg: Value = serde_json::from_str(&text).map_err(|_| not_rpc())?;
            if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return Err(not_rpc());
            }
            let method = msg.get("method").and_then(Value::as_str);
            match (method, msg.get("id")) {
                // A notification (logging, list_changed): not what we wait for.
                (Some(_), None) => continue,
                (Some(m), Some(rid)) => {
                    self.answer(m, rid.clone());
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
    fn answer(&self, method: &str, id: Value) {
        let reply = if method == "ping" {
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            json!({"jsonrpc": "2.0", "id": id,
                   "error": {"code": -32601, "message": format!("mcp-deploy does not support {method}")}})
        };
        self.send(reply);
    }

    /// How the server ended, waiting a moment: its stdout closes just before it exits.
    fn exit_status(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(500);
        while self.status.is_none() && Instant::now() < until {
            match self.child.try_wait() {
                Ok(Some(s)) => self.status = Some(s),
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        match self.status {
            Some(s) => describe_status(s),
            None => "still running".into(),
        }
    }

    /// Step 5: close stdin, SIGTERM the group, SIGKILL it after the grace, reap the child.
    fn end(&mut self) {
        self.to_server = None;
        crate::process::signal_group(self.pgid, rustix::process::Signal::TERM);
        let until = Instant::now() + GRACE;
        while self.status.is_none() && Instant::now() < until {
            match self.child.try_wait() {
                Ok(Some(s)) => self.status = Some(s),
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        // Always: a grandchild that ignored SIGTERM goes too.
        crate::process::signal_group(self.pgid, rustix::process::Signal::KILL);
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
    }

    /// The last lines of stderr, on one line. Waits briefly for the pipe to close so that a
    /// crashing server's last words are in it.
    fn stderr_tail(&self) -> String {
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        let bytes = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        tail(&String::from_utf8_lossy(&bytes), 5, 400)
    }
}

fn write_messages(mut stdin: ChildStdin, outgoing: Receiver<String>) {
    for msg in outgoing {
        if stdin
            .write_all(msg.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return;
        }
    }
}

fn read_lines(stdout: impl Read, tx: Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        // A read error ends the stream like EOF does: either way no more messages come.
        let n: usize = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .unwrap_or_default();
        let msg = if n == 0 {
            Line::Eof
        } else if buf.len() > MAX_LINE {
            Line::TooLong
        } else {
            Line::Text(String::from_utf8_lossy(&buf).into_owned())
        };
        let last = !matches!(msg, Line::Text(_));
        if tx.send(msg).is_err() || last {
            return;
        }
    }
}

/// Keep the last [`STDERR_KEEP`] bytes of `pipe` in `keep`.
fn keep_tail(mut pipe: impl Read, keep: &Mutex<Vec<u8>>) {
    let mut chunk = [0u8; 4096];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let Ok(mut buf) = keep.lock() else { return };
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > STDERR_KEEP {
                    let cut = buf.len() - STDERR_KEEP;
                    buf.drain(..cut);
                }
            }
        }
    }
}

fn describe_status(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => s.to_string(),
    }
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
    fn http_entries_are_unsupported() {
        let e = Entry::from_value(&json!({"type": "http", "url": "http://h/mcp"})).unwrap();
        let f = handshake(&e, Duration::from_secs(1)).unwrap_err();
        assert!(matches!(f.error, HandshakeError::Unsupported { .. }), "{f}");
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
