//! verify-identity --handshake: the registered server is started and must answer MCP's
//! initialize and tools/list. A real MCP server (the pinned `@modelcontextprotocol/
//! server-everything`) for behaviour; small fake servers for what a real one should not do:
//! hang, crash, print garbage, answer with an error or the wrong id.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::harness::*;

/// The tools server-everything 2026.8.31 lists to a client with no capabilities.
const EVERYTHING_TOOLS: usize = 13;

/// The pinned server-everything entry point (`node_modules/.bin/mcp-server-everything` is a
/// link to it); `npm ci` in the repo brings it.
fn everything_server() -> PathBuf {
    fs::canonicalize(real_client("mcp-server-everything")).unwrap()
}

fn node() -> PathBuf {
    system_tool("node")
}

/// A codetools release whose `bin/codetools` is `script`, and a document registering it.
fn server_release(w: &World, script: &str) -> (PathBuf, PathBuf) {
    let prefix = w.opt().join("codetools");
    release_layout(&prefix, CT_SHA);
    write_exec(
        &prefix.join("releases").join(CT_SHA).join("bin/codetools"),
        script,
    );
    let doc = w.root().join("registered.json");
    let cmd = prefix.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp", "serve"]);
    (prefix, doc)
}

/// A release whose server runs the Python fake below in `mode`.
fn fake_release(w: &World, mode: &str) -> (PathBuf, PathBuf) {
    let fake = w.root().join("fake_server.py");
    fs::write(&fake, FAKE_SERVER).unwrap();
    server_release(
        w,
        &format!(
            "#!/bin/sh\nexec python3 '{}' {mode}\n",
            fake.to_str().unwrap()
        ),
    )
}

fn handshake(w: &World, prefix: &Path, doc: &Path, extra: &[&str]) -> Run {
    handshake_env(w, prefix, doc, extra, &[])
}

fn handshake_env(
    w: &World,
    prefix: &Path,
    doc: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let mut args = vec![
        "verify-identity",
        "--prefix",
        prefix.to_str().unwrap(),
        "--expect-commit",
        CT_SHA,
        "--mcp-json",
        doc.to_str().unwrap(),
        "--json",
        "--handshake",
    ];
    // Generous unless the test sets it: a loaded CI machine may start node slowly, and a
    // passing handshake returns as soon as it is done.
    if !extra.contains(&"--handshake-timeout") {
        args.extend_from_slice(&["--handshake-timeout", "60"]);
    }
    args.extend_from_slice(extra);
    w.run_env(&args, env)
}

/// The run failed exactly the handshake check, whose detail holds each of `want`.
fn handshake_fails(r: &Run, want: &[&str]) {
    r.code(1);
    assert_eq!(
        r.checks(),
        vec![
            ("release".to_string(), true),
            ("commit".to_string(), true),
            ("signature".to_string(), true),
            ("mcp-registration".to_string(), true),
            ("handshake".to_string(), false),
        ],
        "{}",
        r.shown
    );
    let detail = r.detail("handshake");
    for w in want {
        assert!(
            detail.contains(w),
            "handshake detail lacks {w:?}\n{}",
            r.shown
        );
    }
}

#[test]
fn real_server_everything_reports_its_name_version_and_tool_count() {
    let w = World::new();
    let (prefix, doc) = server_release(
        &w,
        &format!(
            "#!/bin/sh\nexec '{}' '{}' stdio\n",
            node().display(),
            everything_server().display()
        ),
    );
    let r = handshake(&w, &prefix, &doc, &[]);
    r.code(0);
    // The handshake, then the tool surface it was handed (nothing recorded for it here).
    let checks = r.checks();
    assert_eq!(
        checks[checks.len() - 2..],
        [("handshake".to_string(), true), ("tools".to_string(), true)]
    );
    assert!(
        r.detail("tools")
            .contains("not compared, no surface recorded"),
        "{}",
        r.shown
    );
    let detail = r.detail("handshake");
    assert!(
        detail.starts_with("server \"mcp-servers/everything\" version \"2.0.0\", protocol "),
        "{}",
        r.shown
    );
    assert!(
        detail.ends_with(&format!(", {EVERYTHING_TOOLS} tools")),
        "{}",
        r.shown
    );
    // The human form names the check too.
    crate::snapshot!(
        "verify_identity_handshake",
        w.verify_identity(&prefix, CT_SHA, &doc, &["--handshake"])
    );
}

#[test]
fn tools_list_pages_are_followed_and_server_requests_answered() {
    // The fake sends a notification and a ping before answering initialize, and splits its
    // five tools over two pages.
    let w = World::new();
    let (prefix, doc) = fake_release(&w, "paged");
    let r = handshake(&w, &prefix, &doc, &[]);
    r.code(0);
    assert_eq!(
        r.detail("handshake"),
        "server \"fake\" version \"1.2.3\", protocol 2025-06-18, 5 tools",
        "{}",
        r.shown
    );
}

/// Declare codetools with `env: {FAKE_SETTING: ${FAKE_TOKEN}}` and register that in `doc`,
/// as install records it. Returns the declaration for `--config`.
fn declare_env_reference(w: &World, prefix: &Path, doc: &Path) -> PathBuf {
    let cfg = w.declare_codetools(
        serde_json::json!({"args": ["mcp", "serve"], "env": {"FAKE_SETTING": "${FAKE_TOKEN}"}}),
    );
    let cmd = prefix.join("bin/codetools");
    let entry = serde_json::json!({"mcpServers": {"codetools": {
        "command": cmd, "args": ["mcp", "serve"], "env": {"FAKE_SETTING": "${FAKE_TOKEN}"}}}});
    fs::write(doc, entry.to_string()).unwrap();
    cfg
}

#[test]
fn registered_env_reaches_the_server_and_its_value_is_never_shown() {
    // The registered env is a reference; the server gets its value from the environment, the
    // way claude expands it (issue 10: the env is now declared, since an undeclared variable
    // fails mcp-registration).
    let w = World::new();
    let (prefix, doc) = fake_release(&w, "env");
    let cfg = declare_env_reference(&w, &prefix, &doc);
    let config = ["--config", cfg.to_str().unwrap()];
    let r = handshake_env(
        &w,
        &prefix,
        &doc,
        &config,
        &[("FAKE_TOKEN", "tok-0123456789")],
    );
    r.code(0);
    assert!(
        r.detail("handshake").starts_with("server \"env-ok\""),
        "{}",
        r.shown
    );
    assert!(!r.said().contains("tok-0123456789"), "{}", r.shown);
    assert!(!r.stderr.contains("tok-0123456789"), "{}", r.shown);
}

#[test]
fn a_crash_after_initialize_shows_status_and_redacted_stderr_tail() {
    let w = World::new();
    let (prefix, doc) = fake_release(&w, "crash-in-tools");
    let cfg = declare_env_reference(&w, &prefix, &doc);
    let config = ["--config", cfg.to_str().unwrap()];
    let r = handshake_env(
        &w,
        &prefix,
        &doc,
        &config,
        &[("FAKE_TOKEN", "tok-0123456789")],
    );
    handshake_fails(
        &r,
        &[
            "closed its stdout (exit status 4) before answering tools/list",
            "listing tools with token <redacted> | Traceback: tools exploded",
        ],
    );
    assert!(!r.said().contains("tok-0123456789"), "{}", r.shown);
}

/// The handshake starts the server with what claude itself would give it: the same server,
/// registered through the real claude, is started once by `claude mcp get` (its health check)
/// and once by `verify-identity --handshake`, and both runs see the same argv and env. The
/// expected values pin claude's rules (see `handshake::expand`).
#[test]
fn handshake_expands_references_exactly_as_claude_does() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let prefix = opt.join("codetools");
    let dump = w.root().join("dump.txt");
    write_exec(
        &prefix.join("releases").join(CT_SHA).join("bin/codetools"),
        &format!(
            "#!/bin/sh\n{{ for a in \"$@\"; do printf 'arg=%s\\n' \"$a\"; done; \
             printf 'E1=%s\\nE2=%s\\nE3=%s\\nE4=%s\\n' \"${{E1-unset}}\" \"${{E2-unset}}\" \
             \"${{E3-unset}}\" \"${{E4-unset}}\"; }} > '{}'\nexit 0\n",
            dump.display()
        ),
    );
    let args = [
        "${SET}",
        "${SET:-d}",
        "${EMPTY:-d}",
        "${UNSET:-d}",
        "${UNSET}",
        "pre-${SET}-post",
        "$SET",
        "${SET:-a}b}",
        "${1X}",
        "${UNSET:-}",
    ];
    let cfg = w.declare_codetools(serde_json::json!({"args": args, "env": {
        "E1": "${SET}", "E2": "${UNSET:-dflt}", "E3": "${UNSET}", "E4": "${EMPTY:-x}"}}));
    let c = cfg.to_str().unwrap();
    let env = [("SET", "val"), ("EMPTY", "")];
    w.run_env(
        &[
            "install",
            "--prefix",
            opt.to_str().unwrap(),
            "--name-suffix",
            "-test",
            "--server",
            "codetools",
            "--config",
            c,
            // The server dumps what it was handed and exits: no MCP server for the gate.
            "--no-handshake",
        ],
        &env,
    )
    .code(0);
    let _ = fs::remove_file(&dump);
    w.run_program(
        &real_claude(),
        &["mcp", "get", "codetools-test"],
        &[("SET", "val"), ("EMPTY", ""), ("MCP_TIMEOUT", "3000")],
    );
    let by_claude = fs::read_to_string(&dump).expect("claude started the server");
    fs::remove_file(&dump).unwrap();
    let r = handshake_env(
        &w,
        &prefix,
        &w.registered(),
        &["--config", c, "--name", "codetools-test"],
        &env,
    );
    assert!(
        r.checks().contains(&("mcp-registration".to_string(), true)),
        "{}",
        r.shown
    );
    let by_us = fs::read_to_string(&dump).expect("the handshake started the server");
    assert_eq!(by_us, by_claude, "{}", r.shown);
    assert_eq!(
        by_claude,
        "arg=val\narg=val\narg=\narg=d\narg=${UNSET}\narg=pre-val-post\narg=$SET\narg=valb}\n\
         arg=${1X}\narg=\nE1=val\nE2=dflt\nE3=${UNSET}\nE4=\n"
    );
}

#[test]
fn a_server_that_crashes_at_start_fails_with_its_stderr() {
    let w = World::new();
    let (prefix, doc) = server_release(
        &w,
        "#!/bin/sh\necho 'fatal: cannot open /etc/codetools.toml' >&2\nexit 3\n",
    );
    let r = handshake(&w, &prefix, &doc, &[]);
    handshake_fails(
        &r,
        &[
            "closed its stdout (exit status 3) before answering initialize",
            "stderr: fatal: cannot open /etc/codetools.toml",
        ],
    );
}

#[test]
fn a_hanging_server_times_out_and_is_killed() {
    let w = World::new();
    let (prefix, doc) = server_release(&w, "#!/bin/sh\nexec sleep 100\n");
    let start = Instant::now();
    let r = handshake(&w, &prefix, &doc, &["--handshake-timeout", "1"]);
    handshake_fails(&r, &["no answer to initialize within 1s"]);
    // Not a speed assertion: the server would run for 100 s; ending well before that is the
    // behaviour (killed), whatever the load on the machine.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_hang_that_ignores_sigterm_with_a_child_holding_stdout_is_killed() {
    // SIGTERM is ignored by the server and by the child it leaves holding our pipes; only the
    // SIGKILL to the whole group after the grace ends them, and we must not wait for the pipe.
    // The server writes its own pid and its child's, so the test can see both are gone.
    let w = World::new();
    let pids = w.root().join("server.pids");
    let (prefix, doc) = server_release(
        &w,
        &format!(
            "#!/bin/sh\ntrap '' TERM\necho $$ > '{p}'\nsleep 100 &\necho $! >> '{p}'\n\
             while :; do sleep 1; done\n",
            p = pids.display()
        ),
    );
    let start = Instant::now();
    let r = handshake(&w, &prefix, &doc, &["--handshake-timeout", "1"]);
    handshake_fails(&r, &["no answer to initialize within 1s"]);
    // Not a speed assertion: the server would run for 100 s; ending well before that is the
    // behaviour (killed), whatever the load on the machine.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    let pids: Vec<u32> = fs::read_to_string(&pids)
        .unwrap_or_else(|e| panic!("the server wrote no pids: {e}\n{r}"))
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "server and child pids: {pids:?}\n{r}");
    for pid in pids {
        assert_gone(pid);
    }
}

/// `pid` no longer runs: no `/proc/<pid>`, or a zombie (killed, not yet reaped by whoever
/// inherited it: init, or a subreaper that is slow about it). SIGKILL is delivered when
/// mcp-deploy returns, but dying takes the kernel a moment: a live process gets a few
/// seconds, which only bounds how long a failure takes to show.
#[track_caller]
fn assert_gone(pid: u32) {
    let stat = format!("/proc/{pid}/stat");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = match fs::read_to_string(&stat) {
            Err(_) => return,
            // `pid (comm) S ...`: the state follows the last `)` (comm may hold one).
            Ok(text) => text[text.rfind(')').unwrap() + 2..].chars().next().unwrap(),
        };
        if state == 'Z' || state == 'X' {
            return;
        }
        if Instant::now() > deadline {
            let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            panic!(
                "pid {pid} still runs (state {state}): {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn garbage_on_stdout_fails_at_once() {
    // A banner on stdout breaks the protocol; we fail on the first such line, not at the
    // deadline.
    let w = World::new();
    let (prefix, doc) = server_release(
        &w,
        "#!/bin/sh\necho 'Starting codetools 1.2 on stdio...'\nexec sleep 100\n",
    );
    let start = Instant::now();
    let r = handshake(&w, &prefix, &doc, &["--handshake-timeout", "60"]);
    handshake_fails(
        &r,
        &["not a JSON-RPC message while answering initialize: Starting codetools 1.2 on stdio..."],
    );
    // Not a speed assertion: the deadline is 60 s and the server sleeps 100 s; failing well
    // before either is the behaviour (it failed at the garbage line, not at the deadline).
    assert!(
        start.elapsed() < Duration::from_secs(45),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn json_that_is_not_json_rpc_fails() {
    let w = World::new();
    let (prefix, doc) = server_release(
        &w,
        "#!/bin/sh\necho '{\"status\":\"ready\"}'\nexec sleep 100\n",
    );
    let r = handshake(&w, &prefix, &doc, &[]);
    handshake_fails(&r, &["not a JSON-RPC message", "{\"status\":\"ready\"}"]);
}

#[test]
fn an_error_response_fails_with_its_code_and_message() {
    let w = World::new();
    let (prefix, doc) = fake_release(&w, "error");
    let r = handshake(&w, &prefix, &doc, &[]);
    handshake_fails(
        &r,
        &["initialize failed: error -32602: unsupported protocol version"],
    );
}

#[test]
fn an_answer_with_the_wrong_id_fails() {
    let w = World::new();
    let (prefix, doc) = fake_release(&w, "wrong-id");
    let r = handshake(&w, &prefix, &doc, &[]);
    handshake_fails(&r, &["initialize answered with id 99, expected 1"]);
}

#[test]
fn a_result_without_server_info_fails() {
    let w = World::new();
    let (prefix, doc) = fake_release(&w, "no-server-info");
    let r = handshake(&w, &prefix, &doc, &[]);
    handshake_fails(
        &r,
        &["initialize result is malformed: no serverInfo object"],
    );
}

#[test]
fn a_command_outside_the_release_is_never_started() {
    let w = World::new();
    let (prefix, doc) = server_release(&w, "#!/bin/sh\nexit 0\n");
    let marker = w.root().join("started");
    let outside = w.root().join("elsewhere/codetools");
    write_exec(
        &outside,
        &format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
    );
    flat_doc(
        &doc,
        "codetools",
        outside.to_str().unwrap(),
        &["mcp", "serve"],
    );
    let r = handshake(&w, &prefix, &doc, &[]);
    r.code(1);
    assert_eq!(
        r.checks(),
        vec![
            ("release".to_string(), true),
            ("commit".to_string(), true),
            ("signature".to_string(), true),
            ("mcp-registration".to_string(), false),
            ("handshake".to_string(), false),
        ]
    );
    assert_eq!(
        r.detail("handshake"),
        "not started: the mcp-registration check failed"
    );
    assert!(!marker.exists(), "the outside command ran\n{}", r.shown);
}

#[test]
fn without_the_flag_no_server_is_started() {
    let w = World::new();
    let marker = w.root().join("started");
    let (prefix, doc) = server_release(&w, &format!("#!/bin/sh\ntouch '{}'\n", marker.display()));
    let r = w.verify_identity(&prefix, CT_SHA, &doc, &["--json"]);
    r.code(0);
    assert!(
        r.checks().iter().all(|(c, _)| c != "handshake"),
        "{}",
        r.shown
    );
    assert!(!marker.exists(), "the server ran without --handshake");
    // --handshake-timeout alone is a usage error, not a silently ignored option.
    w.verify_identity(&prefix, CT_SHA, &doc, &["--handshake-timeout", "3"])
        .code(2)
        .stderr_has("--handshake");
}

#[test]
fn an_http_entry_nothing_answers_fails_naming_its_url() {
    let w = World::new();
    let prefix = w.opt().join("webby");
    fs::create_dir_all(&prefix).unwrap();
    fs::write(prefix.join("VERSION"), format!("{CT_SHA}\n")).unwrap();
    let cfg = w.root().join("servers.json");
    fs::write(
        &cfg,
        r#"{"servers":[{"name":"webby","prefix":"/opt/webby","layout":"prefix",
            "entry":{"type":"http","url":"http://127.0.0.1:9/mcp"}}]}"#,
    )
    .unwrap();
    let doc = w.root().join("registered.json");
    fs::write(
        &doc,
        r#"{"mcpServers":{"webby":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}"#,
    )
    .unwrap();
    let r = w.run(&[
        "verify-identity",
        "--config",
        cfg.to_str().unwrap(),
        "--prefix",
        prefix.to_str().unwrap(),
        "--expect-commit",
        CT_SHA,
        "--mcp-json",
        doc.to_str().unwrap(),
        "--json",
        "--handshake",
    ]);
    r.code(1);
    assert_eq!(
        r.checks(),
        vec![
            ("commit".to_string(), true),
            ("signature".to_string(), true),
            ("mcp-registration".to_string(), true),
            ("handshake".to_string(), false),
        ],
        "{}",
        r.shown
    );
    assert!(
        r.detail("handshake")
            .contains("cannot reach http://127.0.0.1:9/mcp"),
        "{}",
        r.shown
    );
}

/// A fake MCP server over stdio; its first argument picks the misbehaviour.
const FAKE_SERVER: &str = r#"
import json, os, sys

mode = sys.argv[1]

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

def recv():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)

def result(req, res):
    send({"jsonrpc": "2.0", "id": req["id"], "result": res})

def init_result(name, tools=True):
    caps = {"tools": {}} if tools else {}
    return {"protocolVersion": "2025-06-18", "capabilities": caps,
            "serverInfo": {"name": name, "version": "1.2.3"}}

init = recv()
assert init["method"] == "initialize", init
if mode == "error":
    send({"jsonrpc": "2.0", "id": init["id"],
          "error": {"code": -32602, "message": "unsupported protocol version"}})
elif mode == "wrong-id":
    send({"jsonrpc": "2.0", "id": 99, "result": init_result("fake")})
elif mode == "no-server-info":
    result(init, {"protocolVersion": "2025-06-18", "capabilities": {}})
elif mode == "paged":
    send({"jsonrpc": "2.0", "method": "notifications/message",
          "params": {"level": "info", "data": "warming up"}})
    send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
    pong = recv()
    if pong.get("id") != "srv-1" or pong.get("result") != {}:
        sys.exit(5)
    result(init, init_result("fake"))
    assert recv()["method"] == "notifications/initialized"
    first = recv()
    assert first["method"] == "tools/list" and "cursor" not in first.get("params", {}), first
    result(first, {"tools": [{"name": n} for n in "abc"], "nextCursor": "page-2"})
    second = recv()
    assert second["params"]["cursor"] == "page-2", second
    result(second, {"tools": [{"name": n} for n in "de"]})
elif mode in ("env", "crash-in-tools"):
    token = os.environ.get("FAKE_SETTING", "")
    print("starting with token " + token, file=sys.stderr, flush=True)
    result(init, init_result("env-ok" if token == "tok-0123456789" else "env-missing"))
    recv()
    tools = recv()
    if mode == "crash-in-tools":
        print("listing tools with token " + token, file=sys.stderr)
        print("Traceback: tools exploded", file=sys.stderr, flush=True)
        sys.exit(4)
    result(tools, {"tools": []})
sys.stdin.read()
"#;

#[test]
fn the_sample_servers_answer_the_handshake() {
    let w = World::new();
    let opt = w.sample();
    for (server, sha, tools_line) in [
        ("codetools", CT_SHA, "server \"codetools-sample\""),
        ("orchestrata", OR_SHA, "server \"orchestrata-mcp-sample\""),
    ] {
        let prefix = opt.join(server);
        let rendered = prefix.join(format!("mcp/{server}.mcp.json"));
        w.run(&["render-mcp", "--prefix", prefix.to_str().unwrap()])
            .code(0);
        let r = w.verify_identity(&prefix, sha, &rendered, &["--handshake", "--json"]);
        r.code(0);
        let detail = r.detail("handshake");
        assert!(
            detail.starts_with(tools_line) && detail.ends_with("1 tool"),
            "{detail}"
        );
    }
}
