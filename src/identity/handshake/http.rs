//! The remote transports of the handshake, as a client connects to a `type: http` or
//! `type: sse` entry:
//! - **Streamable HTTP** (`http`, MCP 2025-03-26 on): each message is POSTed to the URL with
//!   `Accept: application/json, text/event-stream`; a request is answered by a JSON body (one
//!   message or a batch) or by a `text/event-stream` of messages that ends with the response;
//!   a notification or our answer by `202 Accepted`. The `Mcp-Session-Id` the server gives
//!   with `initialize`'s answer, and the protocol revision it chose (`MCP-Protocol-Version`),
//!   go with every later message; the session is ended with a `DELETE` (best effort).
//! - **HTTP+SSE** (`sse`, MCP 2024-11-05): a `GET` of the URL opens an event stream whose
//!   first `endpoint` event names where to POST; every answer comes on the stream as a
//!   `message` event.
//!
//! The entry's `headers` go with every request, their `${VAR}` references expanded as for a
//! stdio server's env. Nothing else is added: no cookie, no OAuth token, no redirect followed
//! (a `3xx` fails, naming where it points), so that what is listed is what the entry alone
//! reaches. Every wait is bounded by the handshake's deadline. TLS is rustls over the
//! system's roots (`rustls-platform-verifier`; `SSL_CERT_FILE` and `SSL_CERT_DIR` honoured),
//! and a proxy is the first of `ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY` that is set, except
//! for what `NO_PROXY` names (ureq's reading of them).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{shorten, HandshakeError, Rpc, MAX_LINE};

/// At most this much of a JSON body is read.
const MAX_BODY: u64 = 64 * 1024 * 1024;
/// How long the session's `DELETE` may take.
const END_TIMEOUT: Duration = Duration::from_secs(2);

/// A connection to a remote server, of either kind.
pub(super) struct Remote {
    agent: ureq::Agent,
    /// Where messages are POSTed: the URL (http), or the `endpoint` event's (sse).
    post_to: String,
    headers: Vec<(String, String)>,
    kind: Kind,
    /// Messages read and not yet handed over.
    queue: VecDeque<Value>,
    /// The handshake's deadline: no call, its answer's body included, outlives it.
    deadline: Instant,
    /// The handshake's timeout, as a failure names it.
    timeout: Duration,
}

enum Kind {
    Streamable {
        session: Option<String>,
        protocol: Option<String>,
        /// The event stream of the last request's answer, still being read.
        stream: Option<Events<Box<dyn Read + Send>>>,
    },
    Sse {
        /// The `GET`'s events, read by a thread of their own.
        events: Receiver<Result<Event, String>>,
    },
}

/// One server-sent event.
#[derive(Debug, PartialEq)]
pub(super) struct Event {
    pub(super) name: String,
    pub(super) data: String,
}

impl Remote {
    /// Open the connection: for `sse`, the event stream and its `endpoint` event; for
    /// `http`, nothing yet (the first POST is the `initialize`).
    pub(super) fn open(
        kind: &str,
        url: &str,
        headers: &[(String, String)],
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Remote, HandshakeError> {
        let step = "initialize";
        let agent = agent(timeout).map_err(|what| HandshakeError::Http { step, what })?;
        let mut remote = Remote {
            agent,
            post_to: url.to_string(),
            headers: headers.to_vec(),
            kind: Kind::Streamable {
                session: None,
                protocol: None,
                stream: None,
            },
            queue: VecDeque::new(),
            deadline,
            timeout,
        };
        if kind == "sse" {
            let (events, endpoint) = remote.open_sse(url, deadline, timeout)?;
            remote.post_to = endpoint;
            remote.kind = Kind::Sse { events };
        }
        Ok(remote)
    }

    /// `GET` the event stream and wait for its `endpoint` event, resolved against `url`.
    fn open_sse(
        &self,
        url: &str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(Receiver<Result<Event, String>>, String), HandshakeError> {
        let step = "initialize";
        let mut req = self.agent.get(url).header("Accept", "text/event-stream");
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = req
            .call()
            .map_err(|e| transport_error(step, url, &e, timeout))?;
        let resp = expect_ok(step, url, resp, false)?;
        if !is_event_stream(&resp) {
            return Err(HandshakeError::Http {
                step,
                what: format!(
                    "GET {url} answered {}, not an event stream",
                    content_type(&resp)
                ),
            });
        }
        let body = resp.into_body().into_reader();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stream = Events::new(body);
            loop {
                let next = stream.next_event();
                let last = !matches!(next, Ok(Some(_)));
                let sent = match next {
                    Ok(Some(e)) => tx.send(Ok(e)),
                    Ok(None) => tx.send(Err("the event stream ended".into())),
                    Err(e) => tx.send(Err(e)),
                };
                if sent.is_err() || last {
                    return;
                }
            }
        });
        loop {
            let event = recv(&events, step, deadline, timeout)?;
            if event.name == "endpoint" {
                let endpoint =
                    resolve(url, event.data.trim()).ok_or_else(|| HandshakeError::Http {
                        step,
                        what: format!("the endpoint event {:?} is not a URL", event.data),
                    })?;
                // The entry's headers go only where the entry points (the MCP SDK's client
                // refuses another origin too).
                if origin(&endpoint) != origin(url) {
                    return Err(HandshakeError::Http {
                        step,
                        what: format!(
                            "the endpoint event points to {endpoint}, another origin than \
                             {url}: its headers are not sent there"
                        ),
                    });
                }
                return Ok((events, endpoint));
            }
        }
    }

    /// End the session: a streamable one's `DELETE` (its answer does not matter); an SSE
    /// stream closes when its reader is dropped.
    pub(super) fn end(&mut self) {
        if let Kind::Streamable {
            session: Some(id),
            stream,
            ..
        } = &mut self.kind
        {
            *stream = None;
            let mut req = self
                .agent
                .delete(&self.post_to)
                .config()
                .timeout_global(Some(END_TIMEOUT))
                .build()
                .header("Mcp-Session-Id", id.as_str());
            for (k, v) in &self.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            let _ = req.call();
        }
    }
}

impl Rpc for Remote {
    fn send(&mut self, msg: &Value, step: &'static str) -> Result<(), HandshakeError> {
        let is_request = msg.get("method").is_some() && msg.get("id").is_some();
        let left = self.deadline.saturating_duration_since(Instant::now());
        let mut req = self
            .agent
            .post(&self.post_to)
            .config()
            .timeout_global(Some(left.max(Duration::from_millis(1))))
            .build()
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Kind::Streamable {
            session, protocol, ..
        } = &self.kind
        {
            if let Some(id) = session {
                req = req.header("Mcp-Session-Id", id.as_str());
            }
            if let Some(p) = protocol {
                req = req.header("MCP-Protocol-Version", p.as_str());
            }
        }
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let url = self.post_to.clone();
        let resp = req
            .send(msg.to_string())
            .map_err(|e| transport_error(step, &url, &e, self.timeout))?;
        let resp = expect_ok(step, &url, resp, true)?;
        let Kind::Streamable {
            session, stream, ..
        } = &mut self.kind
        else {
            // sse: the answer comes on the event stream; the POST's own body says nothing.
            return Ok(());
        };
        if resp.status().as_u16() == 202 {
            if is_request {
                return Err(HandshakeError::Http {
                    step,
                    what: format!("POST {url} answered a request with 202 Accepted"),
                });
            }
            return Ok(());
        }
        if session.is_none() {
            *session = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
        }
        if is_event_stream(&resp) {
            *stream = Some(Events::new(Box::new(resp.into_body().into_reader())));
            return Ok(());
        }
        let json = content_type(&resp).starts_with("application/json");
        let mut body = String::new();
        resp.into_body()
            .into_reader()
            .take(MAX_BODY)
            .read_to_string(&mut body)
            .map_err(|e| HandshakeError::Http {
                step,
                what: format!("reading the answer of POST {url}: {e}"),
            })?;
        if body.trim().is_empty() {
            return Ok(());
        }
        if !json {
            return Err(HandshakeError::NotJsonRpc {
                step,
                line: shorten(&body, 200),
            });
        }
        match serde_json::from_str::<Value>(&body) {
            Ok(Value::Array(batch)) => self.queue.extend(batch),
            Ok(one) => self.queue.push_back(one),
            Err(_) => {
                return Err(HandshakeError::NotJsonRpc {
                    step,
                    line: shorten(&body, 200),
                })
            }
        }
        Ok(())
    }

    fn next(
        &mut self,
        step: &'static str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Option<Value>, HandshakeError> {
        if let Some(msg) = self.queue.pop_front() {
            self.note_protocol(&msg);
            return Ok(Some(msg));
        }
        let data = match &mut self.kind {
            Kind::Sse { events } => loop {
                let event = recv(events, step, deadline, timeout)?;
                if event.name == "message" {
                    break event.data;
                }
            },
            Kind::Streamable { stream, .. } => {
                let Some(events) = stream.as_mut() else {
                    return Err(HandshakeError::Http {
                        step,
                        what: "the server answered without the response".into(),
                    });
                };
                if Instant::now() >= deadline {
                    return Err(HandshakeError::TimedOut { step, timeout });
                }
                match events.next_event() {
                    Ok(Some(e)) if e.name == "message" => e.data,
                    Ok(Some(_)) => return Ok(None),
                    Ok(None) => {
                        *stream = None;
                        return Err(HandshakeError::Http {
                            step,
                            what: "the event stream ended before the response".into(),
                        });
                    }
                    Err(what) if what.contains("timed out") || what.contains("Timeout") => {
                        return Err(HandshakeError::TimedOut { step, timeout })
                    }
                    Err(what) => return Err(HandshakeError::Http { step, what }),
                }
            }
        };
        if data.trim().is_empty() {
            return Ok(None);
        }
        let msg: Value = serde_json::from_str(&data).map_err(|_| HandshakeError::NotJsonRpc {
            step,
            line: shorten(&data, 200),
        })?;
        if let Value::Array(batch) = msg {
            self.queue.extend(batch);
            return Ok(None);
        }
        self.note_protocol(&msg);
        Ok(Some(msg))
    }
}

impl Remote {
    /// The revision `initialize`'s answer chose: every later message carries it.
    fn note_protocol(&mut self, msg: &Value) {
        if let Kind::Streamable { protocol, .. } = &mut self.kind {
            if protocol.is_none() {
                *protocol = msg
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
        }
    }
}

/// The HTTP agent: the handshake's timeout over each call, body included; no redirect
/// followed; statuses read, not thrown; rustls with aws-lc-rs over the platform's roots.
fn agent(timeout: Duration) -> Result<ureq::Agent, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .unversioned_rustls_crypto_provider(provider)
        .build();
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .save_redirect_history(false)
        .user_agent(concat!("mcp-deploy/", env!("CARGO_PKG_VERSION")))
        .tls_config(tls)
        .build();
    Ok(config.into())
}

/// A response whose status is not success, as the failure it is.
fn expect_ok(
    step: &'static str,
    url: &str,
    resp: ureq::http::Response<ureq::Body>,
    post: bool,
) -> Result<ureq::http::Response<ureq::Body>, HandshakeError> {
    let status = resp.status().as_u16();
    let method = if post { "POST" } else { "GET" };
    match status {
        200..=299 => Ok(resp),
        300..=399 => Err(HandshakeError::Http {
            step,
            what: format!(
                "{method} {url} answered HTTP {status}, a redirect to {:?}: not followed (a \
                 client may not follow it either; register the URL it points to)",
                header(&resp, "location")
            ),
        }),
        401 | 403 => Err(HandshakeError::Unauthorized {
            step,
            status,
            challenge: match header(&resp, "www-authenticate") {
                c if c.is_empty() => String::new(),
                c => format!(" (WWW-Authenticate: {})", shorten(&c, 200)),
            },
        }),
        _ => {
            let mut body = String::new();
            let _ = resp
                .into_body()
                .into_reader()
                .take(4096)
                .read_to_string(&mut body);
            Err(HandshakeError::Http {
                step,
                what: format!(
                    "{method} {url} answered HTTP {status}{}",
                    match body.trim() {
                        "" => String::new(),
                        b => format!(": {}", shorten(b, 300)),
                    }
                ),
            })
        }
    }
}

/// A call that got no response: cannot connect, TLS, the deadline.
fn transport_error(
    step: &'static str,
    url: &str,
    e: &ureq::Error,
    timeout: Duration,
) -> HandshakeError {
    match e {
        ureq::Error::Timeout(_) => HandshakeError::TimedOut { step, timeout },
        _ => HandshakeError::Http {
            step,
            what: format!("cannot reach {url}: {e}"),
        },
    }
}

fn header(resp: &ureq::http::Response<ureq::Body>, name: &str) -> String {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

fn content_type(resp: &ureq::http::Response<ureq::Body>) -> String {
    header(resp, "content-type").to_ascii_lowercase()
}

fn is_event_stream(resp: &ureq::http::Response<ureq::Body>) -> bool {
    content_type(resp).starts_with("text/event-stream")
}

/// The next event of `events` before `deadline`.
fn recv(
    events: &Receiver<Result<Event, String>>,
    step: &'static str,
    deadline: Instant,
    timeout: Duration,
) -> Result<Event, HandshakeError> {
    let now = Instant::now();
    let got = if now >= deadline {
        Err(RecvTimeoutError::Timeout)
    } else {
        events.recv_timeout(deadline - now)
    };
    match got {
        Ok(Ok(e)) => Ok(e),
        Ok(Err(what)) => Err(HandshakeError::Http { step, what }),
        Err(RecvTimeoutError::Timeout) => Err(HandshakeError::TimedOut { step, timeout }),
        Err(RecvTimeoutError::Disconnected) => Err(HandshakeError::Http {
            step,
            what: "the event stream ended".into(),
        }),
    }
}

/// A URL's scheme, host and port, lower-cased (what [`resolve`] keeps of a base).
fn origin(url: &str) -> Option<String> {
    let scheme_end = url.find("://")? + 3;
    let end = url[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| scheme_end + i);
    Some(url[..end].to_ascii_lowercase())
}

/// `reference` (the endpoint event's data) resolved against `base`: an absolute URL, an
/// absolute path on the same origin, or a path relative to the base's directory.
fn resolve(base: &str, reference: &str) -> Option<String> {
    if reference.starts_with("http://") || reference.starts_with("https://") {
        return Some(reference.to_string());
    }
    let origin = origin(base)?;
    let origin_end = origin.len();
    if reference.starts_with('/') {
        return Some(format!("{origin}{reference}"));
    }
    let path = &base[origin_end..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Some(format!("{origin}{dir}{reference}"))
}

/// A `text/event-stream` reader (the WHATWG rules: `event:` and `data:` fields, data lines
/// joined with `\n`, a blank line dispatching, `:` comments and other fields ignored, one
/// space after the colon dropped, any of `\r\n`, `\n`, `\r` ending a line).
pub(super) struct Events<R> {
    reader: BufReader<R>,
    /// A `\r` ended the last line: a `\n` right after it is part of that ending.
    after_cr: bool,
}

impl<R: Read> Events<R> {
    pub(super) fn new(reader: R) -> Events<R> {
        Events {
            reader: BufReader::new(reader),
            after_cr: false,
        }
    }

    /// The next event, `None` at the end of the stream (a partial event there is dropped,
    /// as the standard says).
    pub(super) fn next_event(&mut self) -> Result<Option<Event>, String> {
        let (mut name, mut data, mut has_data) = (String::new(), String::new(), false);
        loop {
            let Some(line) = self.line()? else {
                return Ok(None);
            };
            if line.is_empty() {
                if has_data {
                    let name = if name.is_empty() {
                        "message".into()
                    } else {
                        name
                    };
                    return Ok(Some(Event { name, data }));
                }
                name.clear();
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.find(':') {
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(' ').unwrap_or(v))
                }
                None => (line.as_str(), ""),
            };
            match field {
                "event" => name = value.to_string(),
                "data" => {
                    if has_data {
                        data.push('\n');
                    }
                    data.push_str(value);
                    has_data = true;
                    if data.len() > MAX_LINE {
                        return Err(format!("an event longer than {MAX_LINE} bytes"));
                    }
                }
                _ => {}
            }
        }
    }

    /// One line without its ending; `None` at the end of the stream.
    fn line(&mut self) -> Result<Option<String>, String> {
        let mut buf = Vec::new();
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("reading the event stream: {e}")),
            };
            if available.is_empty() {
                return Ok((!buf.is_empty()).then(|| String::from_utf8_lossy(&buf).into()));
            }
            let mut used = 0;
            let mut ended = false;
            for &b in available {
                used += 1;
                if std::mem::take(&mut self.after_cr) && b == b'\n' && buf.is_empty() {
                    continue;
                }
                match b {
                    b'\n' => {
                        ended = true;
                        break;
                    }
                    b'\r' => {
                        self.after_cr = true;
                        ended = true;
                        break;
                    }
                    _ => buf.push(b),
                }
            }
            self.reader.consume(used);
            if ended {
                return Ok(Some(String::from_utf8_lossy(&buf).into()));
            }
            if buf.len() > MAX_LINE {
                return Err(format!("a line longer than {MAX_LINE} bytes"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<Event> {
        let mut e = Events::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(ev) = e.next_event().unwrap() {
            out.push(ev);
        }
        out
    }

    fn ev(name: &str, data: &str) -> Event {
        Event {
            name: name.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_are_read_by_the_standard_rules() {
        assert_eq!(
            events("event: endpoint\ndata: /message?s=1\n\n: a comment\ndata:{\"a\":1}\n\n"),
            vec![ev("endpoint", "/message?s=1"), ev("message", "{\"a\":1}")]
        );
        // Data lines joined with \n; CRLF and CR endings; a field without a colon.
        assert_eq!(
            events("data: a\r\ndata: b\r\n\r\nevent\rdata:c\r\r"),
            vec![ev("message", "a\nb"), ev("message", "c")]
        );
        // An event without data is not dispatched; a partial one at the end is dropped.
        assert_eq!(events("event: x\n\ndata: tail"), vec![]);
        // Only one space after the colon is dropped; an id field is ignored.
        assert_eq!(events("id: 7\ndata:  two\n\n"), vec![ev("message", " two")]);
    }

    #[test]
    fn an_endpoint_is_resolved_against_the_stream_url() {
        let base = "http://127.0.0.1:3001/sse?x=1";
        assert_eq!(
            resolve(base, "/message?sessionId=a").as_deref(),
            Some("http://127.0.0.1:3001/message?sessionId=a")
        );
        assert_eq!(
            resolve("https://h/mcp/sse", "messages").as_deref(),
            Some("https://h/mcp/messages")
        );
        assert_eq!(resolve("https://h", "m").as_deref(), Some("https://h/m"));
        assert_eq!(
            resolve(base, "https://other/m").as_deref(),
            Some("https://other/m")
        );
    }
}
