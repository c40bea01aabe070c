//! Issue 39: remote (`type: http`, `type: sse`) servers go through the same handshake gate as
//! stdio ones. The real `@modelcontextprotocol/server-everything` serves MCP over Streamable
//! HTTP and over HTTP+SSE on loopback ports; install (the real claude) records its surface,
//! verify-identity --handshake compares it, and the same server reached over the other
//! transport hands over the same surface. A small Python server plays what a real one should
//! not do: point its SSE endpoint at another origin, want authorization, redirect.

use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::harness::*;

/// A server listening on a loopback port, killed when dropped.
struct Served {
    child: Child,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Start `program args` with `PORT` set to a free port and wait until it accepts.
fn serve(program: &Path, args: &[&str]) -> Served {
    let port = free_port();
    let child = Command::new(program)
        .args(args)
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let served = Served { child, port };
    wait_until("the server to listen", secs(30), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    served
}

/// server-everything over `mode` (`streamableHttp` or `sse`).
fn everything(mode: &str) -> Served {
    let entry = fs::canonicalize(real_client("mcp-server-everything")).unwrap();
    serve(&system_tool("node"), &[entry.to_str().unwrap(), mode])
}

/// Declare `webby`, a prefix layout at `opt/webby` whose entry is `entry`; return the
/// declaration's path and the prefix.
fn declare(w: &World, entry: Value) -> (String, PathBuf) {
    let prefix = w.opt().join("webby");
    fs::create_dir_all(&prefix).unwrap();
    fs::write(prefix.join("VERSION"), format!("{CT_SHA}\n")).unwrap();
    let cfg = w.root().join("servers.json");
    let doc = json!({"servers": [{"name": "webby", "prefix": "/opt/webby", "layout": "prefix",
        "entry": entry}]});
    fs::write(&cfg, doc.to_string()).unwrap();
    (cfg.to_str().unwrap().to_string(), prefix)
}

/// The bearer token the entries' header references (`${WEBBY_TOKEN}`), set for every run.
const TOKEN: &str = "s3cr3t-bearer-value";

fn install(w: &World, cfg: &str, prefix: &Path, extra: &[&str]) -> Run {
    w.cmd()
        .env("WEBBY_TOKEN", TOKEN)
        .args(["install", "--config", cfg, "--prefix"])
        .arg(prefix)
        .args(["--json"])
        .args(extra)
        .run()
}

fn verify(w: &World, cfg: &str, prefix: &Path) -> Run {
    w.cmd()
        .args(["verify-identity", "--config", cfg, "--prefix"])
        .arg(prefix)
        .args(["--expect-commit", CT_SHA, "--mcp-json"])
        .arg(w.registered())
        .args(["--json", "--handshake"])
        .run()
}

fn recorded_digest(prefix: &Path) -> String {
    let text = fs::read_to_string(prefix.join(".mcp-deploy/tools.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["releases"][CT_SHA]["digest"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_remote_server_is_handshaken_over_streamable_http_and_sse_with_one_surface() {
    let w = World::with_real_claude();
    let http = everything("streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", http.port);
    let (cfg, prefix) = declare(&w, json!({"type": "http", "url": url}));
    let first = install(&w, &cfg, &prefix, &[]);
    first.code(0);
    assert!(
        first.detail("handshake").starts_with(
            "server \"mcp-servers/everything\" version \"2.0.0\", protocol 2025-06-18, 13 tools"
        ),
        "{}",
        first.shown
    );
    assert!(
        first.detail("tools").contains("recorded as release"),
        "{}",
        first.shown
    );
    let digest = recorded_digest(&prefix);
    let checked = verify(&w, &cfg, &prefix);
    checked.code(0);
    assert!(
        checked
            .detail("tools")
            .contains("the surface recorded for release"),
        "{}",
        checked.shown
    );
    // The same server over HTTP+SSE: another entry (install updates the registration), the
    // same surface, so the same release's record passes.
    let sse = everything("sse");
    let url = format!("http://127.0.0.1:{}/sse", sse.port);
    let (cfg, prefix) = declare(&w, json!({"type": "sse", "url": url}));
    let second = install(&w, &cfg, &prefix, &[]);
    second.code(0);
    assert!(
        second
            .detail("tools")
            .contains("the surface recorded for release"),
        "{}",
        second.shown
    );
    assert_eq!(recorded_digest(&prefix), digest);
    assert_eq!(w.user_servers()["webby"]["type"], "sse", "{}", second.shown);
    verify(&w, &cfg, &prefix).code(0);
}

/// A small HTTP server (Python's http.server) that misbehaves as `mode` says and logs every
/// request line and its Authorization header's presence to `log`.
const FAKE_REMOTE: &str = r#"
import http.server, sys, os, time
mode, log = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def note(self):
        with open(log, "a") as f:
            f.write("%s %s auth=%s\n" % (self.command, self.path, "Authorization" in self.headers))
    def do_GET(self):
        self.note()
        if mode == "foreign-endpoint":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"event: endpoint\ndata: http://127.0.0.2:%d/steal\n\n" % self.server.server_port)
            self.wfile.flush()
            return
        self.send_response(404); self.end_headers()
    def do_POST(self):
        self.note()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if mode == "slow":
            # Each step answered just inside the timeout; tools/list never.
            if b"tools/list" in body:
                time.sleep(300)
            time.sleep(2.5)
            if b"initialize" in body and b"notifications" not in body:
                out = b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18",' \
                      b'"capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
            else:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
            return
        if mode == "unauthorized":
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer resource_metadata="http://x/.well-known"')
            self.end_headers()
        elif mode == "redirect":
            self.send_response(307)
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.end_headers()
        else:
            self.send_response(500); self.end_headers()
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

fn fake_remote(w: &World, mode: &str) -> (Served, PathBuf) {
    let script = w.root().join("fake_remote.py");
    fs::write(&script, FAKE_REMOTE).unwrap();
    let log = w.root().join(format!("{mode}.log"));
    let served = serve(
        &system_tool("python3"),
        &[script.to_str().unwrap(), mode, log.to_str().unwrap()],
    );
    (served, log)
}

#[test]
fn a_remote_server_that_wants_more_than_the_entry_gives_fails_the_gate_and_nothing_is_registered() {
    let w = World::with_real_claude();
    for (mode, kind, path, said) in [
        (
            "unauthorized",
            "http",
            "/mcp",
            "answered HTTP 401: it wants authorization",
        ),
        (
            "redirect",
            "http",
            "/mcp",
            "answered HTTP 307, a redirect to \"http://127.0.0.1:1/elsewhere\": not followed",
        ),
        ("foreign-endpoint", "sse", "/sse", "another origin than"),
    ] {
        let (served, log) = fake_remote(&w, mode);
        let url = format!("http://127.0.0.1:{}{path}", served.port);
        let (cfg, prefix) = declare(
            &w,
            json!({"type": kind, "url": url,
                   "headers": {"Authorization": "Bearer ${WEBBY_TOKEN}"}}),
        );
        let r = install(&w, &cfg, &prefix, &[]);
        r.code(1);
        let detail = r.detail("handshake");
        assert!(detail.contains(said), "{mode}: {}", r.shown);
        assert!(
            !r.shown.contains(TOKEN),
            "{mode}: the header's value shown: {}",
            r.shown
        );
        assert!(
            !w.user_servers().contains_key("webby"),
            "{mode}: registered although the gate failed: {}",
            r.shown
        );
        let seen = fs::read_to_string(&log).unwrap_or_default();
        // The endpoint on another origin is never POSTed to: only the GET reached a server.
        if mode == "foreign-endpoint" {
            assert_eq!(seen.lines().count(), 1, "{seen}");
            assert!(seen.starts_with("GET /sse auth=True"), "{seen}");
        }
        // --no-handshake registers it without the gate, and says so.
        let skipped = install(&w, &cfg, &prefix, &["--no-handshake"]);
        skipped.code(0);
        assert!(
            skipped.detail("handshake").contains("--no-handshake"),
            "{}",
            skipped.shown
        );
        w.cmd()
            .args(["uninstall", "--config", &cfg, "--prefix"])
            .arg(&prefix)
            .run()
            .code(0);
    }
}

/// A remote server that answers each step just inside the handshake's timeout: the timeout
/// bounds the whole handshake, not each call (before, each POST had the whole timeout of its
/// own, and three slow steps took three timeouts).
#[test]
fn a_slow_remote_server_is_bounded_by_one_timeout_for_the_whole_handshake() {
    let w = World::new();
    let (served, _log) = fake_remote(&w, "slow");
    let url = format!("http://127.0.0.1:{}/mcp", served.port);
    let (cfg, prefix) = declare(&w, json!({"type": "http", "url": url}));
    let doc = w.root().join("registered.json");
    fs::write(
        &doc,
        json!({"mcpServers": {"webby": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
    let start = std::time::Instant::now();
    let r = w
        .cmd()
        .args(["verify-identity", "--config", &cfg, "--prefix"])
        .arg(&prefix)
        .args(["--expect-commit", CT_SHA, "--mcp-json"])
        .arg(&doc)
        .args(["--json", "--handshake", "--handshake-timeout", "4s"])
        .run();
    let took = start.elapsed();
    r.code(1);
    assert!(r.detail("handshake").contains("within 4s"), "{}", r.shown);
    // initialize (2.5 s) and notifications/initialized (2.5 s) already pass 4 s: a timeout per
    // call would have let tools/list wait 4 s more (about 9 s in all).
    assert!(
        took < std::time::Duration::from_secs(8),
        "{took:?}: {}",
        r.shown
    );
}
