//! Every reader bounded (issue 35, item 3): each file mcp-deploy reads — every client's user
//! config, project files, settings layers, managed and policy files, and mcp-deploy's own
//! inputs — fed pathological inputs, with the real `mcp-deploy` run as a child under
//! `prlimit --as=AS_LIMIT --cpu=CPU_LIMIT` and its peak RSS taken from `wait4` (a python3
//! parent: std's `Child` gives no rusage, and the crate denies the unsafe a `wait4` of ours
//! would need).
//!
//! The inputs: a key of 100 000 path components (a `projects` key, a trusted folder, a TOML
//! dotted key), 100 000-deep nesting (in an unrelated key and inside a server entry), a FIFO,
//! 10 000 servers, a million escapes, to every reader; a 100 MB file (written once, linked
//! into each world) to one reader of each parser. Each run must end — exit 0, 1 or 2,
//! never a signal (an abort on a stack overflow, a kill at the memory or CPU limit) nor a
//! panic — and the worst inputs, run at `n` and `10n`, must grow memory no more than linearly.
//! No assertion is about time (a shared machine); the CPU limit and a wall-clock kill-switch
//! only stop a hang, which then fails the test by name. None of it starts a client: the
//! commands that read the files (`verify-identity --only-deployed`, `prune --dry-run`) need
//! none; but the module takes about 3 minutes on two cores, so it is not in the fast tier.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::*;

const MIB: u64 = 1 << 20;
/// The address space every run gets: far above what a linear reader of these inputs needs
/// (the 100 MB file is the largest), far below what a quadratic one takes.
const AS_LIMIT: u64 = 3 * 1024 * MIB;
/// CPU seconds: a kill-switch against a spinning reader, not a measure.
const CPU_LIMIT: u64 = 300;
/// Wall seconds: a kill-switch against a blocked one (a FIFO uses no CPU).
const WALL_LIMIT: u64 = 900;

/// What a file is written in.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Toml,
    Env,
}

/// A pathological input, of size `n` where it has one.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// A key of `n` path components (`/a/a/...`), where a path is a key; in TOML also a
    /// dotted key of `n` parts.
    PathKey(usize),
    /// Nesting `n` deep, in an unrelated key and inside a server entry.
    Deep(usize),
    /// `n` servers.
    Many(usize),
    /// `n` escapes in one string (lone surrogates among them, in JSON).
    Escapes(usize),
    /// A file of 100 MB (one long string).
    Big,
    /// A FIFO with no writer.
    Fifo,
}

fn text(format: Format, input: Input) -> String {
    let path = |n: usize| "/a".repeat(n);
    match (format, input) {
        (Format::Json, Input::PathKey(n)) => {
            let k = path(n);
            format!(
                r#"{{"mcpServers":{{}},"projects":{{"{k}":{{"mcpServers":{{}}}}}},"{k}":"TRUST_FOLDER"}}"#
            )
        }
        (Format::Json, Input::Deep(n)) => {
            let d = format!("{}{}", "[".repeat(n), "]".repeat(n));
            format!(r#"{{"mcpServers":{{"d":{{"command":"/bin/true","args":{d}}}}},"x":{d}}}"#)
        }
        (Format::Json, Input::Many(n)) => {
            let s: Vec<String> = (0..n)
                .map(|i| format!(r#""s{i}":{{"command":"/bin/true","args":["{i}"]}}"#))
                .collect();
            format!(r#"{{"mcpServers":{{{}}}}}"#, s.join(","))
        }
        (Format::Json, Input::Escapes(n)) => {
            let e: String = (0..n)
                .map(|i| if i % 2 == 0 { r"\u00e9" } else { r"\ud800" })
                .collect();
            format!(r#"{{"mcpServers":{{}},"x":"{e}"}}"#)
        }
        (Format::Toml, Input::PathKey(n)) => {
            let dotted = vec!["a"; n].join(".");
            format!(
                "{dotted} = 1\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                path(n)
            )
        }
        (Format::Toml, Input::Deep(n)) => format!(
            "x = {}{}\n[mcp_servers.d]\ncommand = \"/bin/true\"\nargs = {}{}\n",
            "[".repeat(n),
            "]".repeat(n),
            "[".repeat(n),
            "]".repeat(n)
        ),
        (Format::Toml, Input::Many(n)) => (0..n)
            .map(|i| format!("[mcp_servers.s{i}]\ncommand = \"/bin/true\"\n"))
            .collect(),
        (Format::Toml, Input::Escapes(n)) => format!("x = \"{}\"\n", r"\u00e9".repeat(n)),
        (Format::Env, Input::PathKey(n)) => format!("A={}\n", path(n)),
        (Format::Env, Input::Deep(n)) => {
            format!("A={}x{}\n", "${B:-".repeat(n), "}".repeat(n))
        }
        (Format::Env, Input::Many(n)) => (0..n).map(|i| format!("K{i}=${{K{i}}}x\n")).collect(),
        (Format::Env, Input::Escapes(n)) => format!("A=\"{}\"\n", r"\n".repeat(n)),
        (_, Input::Big | Input::Fifo) => unreachable!("written by place()"),
    }
}

/// The 100 MB file of `format`, written once per test binary under target/tmp and linked
/// into each world.
fn big_file(format: Format) -> PathBuf {
    let name = match format {
        Format::Json => "big.json",
        Format::Toml => "big.toml",
        Format::Env => "big.env",
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bounded");
    let path = dir.join(name);
    const SIZE: usize = 100 * 1000 * 1000;
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if fs::metadata(&path).is_ok_and(|m| m.len() as usize >= SIZE) {
        return path;
    }
    fs::create_dir_all(&dir).unwrap();
    let (head, tail) = match format {
        Format::Json => (r#"{"mcpServers":{},"x":""#, "\"}"),
        Format::Toml => ("x = \"", "\"\n"),
        Format::Env => ("A=", "\n"),
    };
    let mut body = String::with_capacity(SIZE + 64);
    body.push_str(head);
    body.push_str(&"a".repeat(SIZE));
    body.push_str(tail);
    let tmp = dir.join(format!("{name}.{}", std::process::id()));
    fs::write(&tmp, body).unwrap();
    fs::rename(&tmp, &path).unwrap();
    path
}

/// One file mcp-deploy reads, and the command that reads it.
struct Reader {
    /// Where: `home/…`, `claude/…` (the config dir), `work/…` (the working directory),
    /// `/etc/…` (a private /etc), or the world's `doc.json`, `decl.json`, `tpl.json`, `opt/…`.
    path: &'static str,
    format: Format,
    /// The client whose reading this is (`--client`), for `verify-identity`.
    client: &'static str,
    /// The command: verify-identity, or prune for the promote state.
    command: Command,
    /// Fed the 100 MB file too: the one reader of its parser that is.
    big: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Command {
    Verify,
    /// verify-identity with `--content` (reads the release's MANIFEST.sha256).
    VerifyContent,
    /// verify-identity with `--config decl.json`.
    VerifyConfig,
    /// prune --dry-run: the promote journal and history.
    Prune,
}

/// One run's outcome.
struct Outcome {
    bytes: u64,
    /// Peak RSS in KiB.
    rss_kib: u64,
    run: Run,
}

impl Outcome {
    fn mib(&self) -> f64 {
        self.rss_kib as f64 / 1024.0
    }
}

const MEASURE: &str = r#"
import os, sys, time, signal
out, wall = sys.argv[1], float(sys.argv[2])
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[3], sys.argv[3:])
deadline, hung = time.monotonic() + wall, 0
while True:
    p, status, ru = os.wait4(pid, os.WNOHANG)
    if p:
        break
    if time.monotonic() > deadline:
        os.kill(pid, signal.SIGKILL)
        p, status, ru = os.wait4(pid, 0)
        hung = 1
        break
    time.sleep(0.01)
sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
with open(out, "w") as f:
    f.write(f"{ru.ru_maxrss} {code} {sig} {hung}")
sys.exit(code if code >= 0 else 125)
"#;

/// A world with the sample deployed and a flat document registering codetools.
fn world() -> World {
    let w = World::new();
    w.sample();
    let cmd = w.opt().join("codetools/bin/codetools");
    flat_doc(
        &w.root().join("doc.json"),
        "codetools",
        cmd.to_str().unwrap(),
        &["mcp", "serve"],
    );
    w
}

/// Write `input` at the reader's place in `w`; its size in bytes.
fn place(w: &World, r: &Reader, input: Input) -> (PathBuf, u64) {
    let rel = r
        .path
        .replace("SHA", CT_SHA)
        .trim_start_matches('/')
        .to_string();
    let file = if r.path.starts_with("/etc/") {
        w.etc_file(r.path)
    } else {
        w.root().join(&rel)
    };
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&file);
    match input {
        Input::Fifo => {
            let st = std::process::Command::new(system_tool("mkfifo"))
                .arg(&file)
                .status()
                .unwrap();
            assert!(st.success());
        }
        Input::Big => {
            let big = big_file(r.format);
            if fs::hard_link(&big, &file).is_err() {
                std::os::unix::fs::symlink(&big, &file).unwrap();
            }
        }
        _ => fs::write(&file, text(r.format, input)).unwrap(),
    }
    let bytes = fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    (file, bytes)
}

/// Run the reader's command in `w` under the limits, measured.
fn run(w: &World, r: &Reader, bytes: u64) -> Outcome {
    let prefix = w.opt().join("codetools");
    let mut cmd = match r.command {
        Command::Prune => w
            .cmd()
            .args(["prune", "--keep", "1", "--dry-run", "--prefix"])
            .arg(&prefix),
        _ => {
            let mut c = w
                .cmd()
                .args(["verify-identity", "--only-deployed", "--prefix"])
                .arg(&prefix)
                .args([
                    "--expect-commit",
                    CT_SHA,
                    "--client",
                    r.client,
                    "--mcp-json",
                ])
                .arg(w.root().join("doc.json"));
            if r.command == Command::VerifyContent {
                c = c.arg("--content");
            }
            if r.command == Command::VerifyConfig {
                c = c.arg("--config").arg(w.root().join("decl.json"));
            }
            c
        }
    };
    if r.path.starts_with("/etc/") {
        cmd = cmd.in_private_etc();
    }
    let measured = w.root().join("measured");
    let _ = fs::remove_file(&measured);
    let wrapper: Vec<OsString> = vec![
        "-c".into(),
        MEASURE.into(),
        measured.clone().into(),
        WALL_LIMIT.to_string().into(),
        system_tool("prlimit").into(),
        format!("--as={AS_LIMIT}").into(),
        format!("--cpu={CPU_LIMIT}").into(),
        "--".into(),
    ];
    let run = cmd.under(&system_tool("python3"), &wrapper).run();
    let m = fs::read_to_string(&measured)
        .unwrap_or_else(|e| panic!("no measurement of {} ({e}):\n{run}", r.path));
    let f: Vec<u64> = m
        .split(' ')
        .map(|x| x.parse::<i64>().unwrap() as u64)
        .collect();
    let (rss_kib, sig, hung) = (f[0], f[2], f[3]);
    assert_eq!(
        hung, 0,
        "{}: still running after {WALL_LIMIT} s:\n{run}",
        r.path
    );
    assert_eq!(
        sig, 0,
        "{}: killed by signal {sig} (an abort, or the memory or CPU limit) at {bytes} bytes:\n{run}",
        r.path
    );
    assert!(
        [0, 1, 2].contains(&run.code),
        "{}: exit {} (wanted a verdict or a clear error):\n{run}",
        r.path,
        run.code
    );
    for bad in ["panicked", "overflow", "RUST_BACKTRACE"] {
        assert!(!run.stderr.contains(bad), "{}: {bad}:\n{run}", r.path);
    }
    Outcome {
        bytes,
        rss_kib,
        run,
    }
}

/// Every input into `r`, each in a fresh world; the worst at `n` and `10n`, their memory
/// growth at most linear: the extra RSS over a small valid file's at `10n` is within 20 times
/// that at `n` (linear growth gives 10, quadratic 100), give or take 16 MiB of noise. The
/// 100 MB file only where `r.big` (one reader per parser: the file is read whole before any
/// parser sees it, so one reader of a parser says what every other would).
fn check(r: &Reader) {
    let one = |input: Input| {
        let w = world();
        if r.command == Command::VerifyConfig && !r.path.ends_with("decl.json") {
            let decl = serde_json::json!({"servers": [{"name": "codetools",
                "prefix": w.opt().join("codetools"), "layout": "release", "template": "tpl.json"}]});
            fs::write(w.root().join("decl.json"), decl.to_string()).unwrap();
        }
        let (_, bytes) = place(&w, r, input);
        let o = run(&w, r, bytes);
        eprintln!(
            "{} {:?}: {} bytes, exit {}, peak RSS {:.1} MiB",
            r.path,
            input,
            o.bytes,
            o.run.code,
            o.mib()
        );
        o
    };
    let base = one(Input::Many(1));
    one(Input::Fifo);
    if r.big {
        one(Input::Big);
    }
    one(Input::Deep(100_000));
    let mut pairs = vec![
        (Input::PathKey(10_000), Input::PathKey(100_000)),
        // Shallow nesting, for linearity (Deep(100_000) above is the deep one, within
        // src/clients/kit/node_json.rs MAX_DEPTH).
        (Input::Deep(90), Input::Deep(900)),
        (Input::Escapes(100_000), Input::Escapes(1_000_000)),
    ];
    // Every reader, codex's, gemini's and qwen's included since their layers are read once a
    // run (they were left out here while each server re-read them: 1 000 servers 10–23 s).
    pairs.push((Input::Many(1_000), Input::Many(10_000)));
    for (small, large) in pairs {
        let (s, l) = (one(small), one(large));
        let extra = |o: &Outcome| o.rss_kib.saturating_sub(base.rss_kib);
        let allowed = 20 * extra(&s) + 16 * 1024;
        assert!(
            extra(&l) <= allowed,
            "{}: memory grows faster than the input: {:?} {} bytes, peak {:.1} MiB; {:?} {} \
             bytes, peak {:.1} MiB (a small file: {:.1} MiB)",
            r.path,
            small,
            s.bytes,
            s.mib(),
            large,
            l.bytes,
            l.mib(),
            base.mib()
        );
    }
}

macro_rules! readers {
    ($($test:ident: $path:literal, $format:ident, $client:literal, $command:ident
        $(, $flag:ident)*;)*) => {$(
        #[test]
        fn $test() {
            let flags: &[&str] = &[$(stringify!($flag)),*];
            check(&Reader {
                path: $path,
                format: Format::$format,
                client: $client,
                command: Command::$command,
                big: flags.contains(&"big"),
            });
        }
    )*};
}

readers! {
    claude_user_config: "claude/.claude.json", Json, "claude", Verify;
    claude_user_settings: "claude/settings.json", Json, "claude", Verify;
    claude_project_settings: "work/.claude/settings.json", Json, "claude", Verify;
    claude_project_local_settings: "work/.claude/settings.local.json", Json, "claude", Verify;
    claude_project_mcp_json: "work/.mcp.json", Json, "claude", Verify;
    claude_managed_mcp: "/etc/claude-code/managed-mcp.json", Json, "claude", Verify, big;
    claude_managed_settings: "/etc/claude-code/managed-settings.json", Json, "claude", Verify;
    claude_managed_drop_in: "/etc/claude-code/managed-settings.d/10-x.json", Json, "claude", Verify;
    codex_user_config: "home/.codex/config.toml", Toml, "codex", Verify, big;
    codex_project_config: "work/.codex/config.toml", Toml, "codex", Verify;
    codex_profile: "home/.codex/p.config.toml", Toml, "codex", Verify;
    codex_system_config: "/etc/codex/config.toml", Toml, "codex", Verify;
    codex_managed_config: "/etc/codex/managed_config.toml", Toml, "codex", Verify;
    codex_requirements: "/etc/codex/requirements.toml", Toml, "codex", Verify;
    gemini_user_settings: "home/.gemini/settings.json", Json, "gemini", Verify;
    gemini_workspace_settings: "work/.gemini/settings.json", Json, "gemini", Verify;
    gemini_system_settings: "/etc/gemini-cli/settings.json", Json, "gemini", Verify;
    gemini_enablement: "home/.gemini/mcp-server-enablement.json", Json, "gemini", Verify;
    gemini_trusted_folders: "home/.gemini/trustedFolders.json", Json, "gemini", Verify;
    gemini_env: "home/.gemini/.env", Env, "gemini", Verify, big;
    gemini_home_env: "home/.env", Env, "gemini", Verify;
    gemini_workspace_env: "work/.gemini/.env", Env, "gemini", Verify;
    gemini_extension: "home/.gemini/extensions/x/gemini-extension.json", Json, "gemini", Verify;
    opencode_user_config: "home/.config/opencode/opencode.jsonc", Json, "opencode", Verify, big;
    opencode_user_json: "home/.config/opencode/opencode.json", Json, "opencode", Verify;
    opencode_legacy_config: "home/.config/opencode/config.json", Json, "opencode", Verify;
    opencode_project_config: "work/opencode.json", Json, "opencode", Verify;
    opencode_project_dir_config: "work/.opencode/opencode.json", Json, "opencode", Verify;
    opencode_system_config: "/etc/opencode/opencode.json", Json, "opencode", Verify;
    grok_user_settings: "home/.grok/settings.json", Json, "grok", Verify;
    grok_project_settings: "work/.grok/settings.json", Json, "grok", Verify;
    grok_env: "home/.env", Env, "grok", Verify;
    cursor_user_config: "home/.cursor/mcp.json", Json, "cursor", Verify, big;
    cursor_project_config: "work/.cursor/mcp.json", Json, "cursor", Verify;
    copilot_user_config: "home/.copilot/mcp-config.json", Json, "copilot", Verify;
    copilot_settings: "home/.copilot/settings.json", Json, "copilot", Verify;
    copilot_project_config: "work/.github/mcp.json", Json, "copilot", Verify;
    copilot_managed_settings: "/etc/github-copilot/managed-settings.json", Json, "copilot", Verify;
    copilot_policy_drop_in: "/etc/github-copilot/policy.d/x.json", Json, "copilot", Verify;
    vscode_user_config: "home/.config/Code/User/mcp.json", Json, "vscode", Verify;
    vscode_user_settings: "home/.config/Code/User/settings.json", Json, "vscode", Verify;
    vscode_storage: "home/.config/Code/User/globalStorage/storage.json", Json, "vscode", Verify;
    vscode_workspace_config: "work/.vscode/mcp.json", Json, "vscode", Verify;
    vscode_policy: "/etc/vscode/policy.json", Json, "vscode", Verify;
    qwen_user_settings: "home/.qwen/settings.json", Json, "qwen", Verify;
    qwen_workspace_settings: "work/.qwen/settings.json", Json, "qwen", Verify;
    qwen_env: "home/.qwen/.env", Env, "qwen", Verify;
    qwen_system_settings: "/etc/qwen-code/settings.json", Json, "qwen", Verify;
    qwen_extension: "home/.qwen/extensions/x/qwen-extension.json", Json, "qwen", Verify;
    flat_document: "doc.json", Json, "claude", Verify, big;
    declaration: "decl.json", Json, "claude", VerifyConfig;
    template: "tpl.json", Json, "claude", VerifyConfig;
    release_version: "opt/codetools/releases/SHA/VERSION", Json, "claude", Verify;
    content_manifest: "opt/codetools/releases/SHA/MANIFEST.sha256", Json, "claude", VerifyContent;
    promote_journal: "opt/codetools/.mcp-deploy/promote.journal.json", Json, "claude", Prune;
    promote_history: "opt/codetools/.mcp-deploy/history.ndjson", Json, "claude", Prune, big;
}

/// The bug: a `.claude.json` of about 100 KB whose one `projects` key has 50 000 path
/// components made `verify-identity` build every ancestor of it whole and hash each (over
/// 300 s here, and gigabytes; 20 KB: 12.6 s and 210 MB); claude reads it in a fraction of a
/// second. Now the directories are walked down once each, and the walk stops below the first
/// that does not exist.
#[test]
fn a_claude_project_key_of_50_000_components_is_read_in_linear_time_and_memory() {
    let w = world();
    let key = "/a".repeat(50_000);
    let cmd = w.opt().join("codetools/bin/codetools");
    let doc = serde_json::json!({
        "mcpServers": {"codetools": {"type": "stdio", "command": cmd, "args": ["mcp", "serve"]}},
        "projects": {key: {"mcpServers": {}}}
    });
    fs::write(w.claude_json(), doc.to_string()).unwrap();
    let r = Reader {
        path: "claude/.claude.json",
        format: Format::Json,
        client: "claude",
        command: Command::Verify,
        big: false,
    };
    let o = run(&w, &r, 100_000);
    assert!(o.rss_kib < 128 * 1024, "peak RSS {:.1} MiB", o.mib());
}

/// The bug: `verify-identity --only-deployed` read claude's layers (.claude.json whole, every
/// settings file) once per server it judged, so a `.claude.json` of n servers was read n times
/// (1 000 servers: 7.7 s; 10 000: still running after minutes). Now once per run: 10 000
/// servers in 0.9 s and 41 MiB; before, the CPU limit killed it.
#[test]
fn ten_thousand_claude_servers_are_judged_with_one_reading_of_the_layers() {
    let w = world();
    let r = Reader {
        path: "claude/.claude.json",
        format: Format::Json,
        client: "claude",
        command: Command::Verify,
        big: false,
    };
    let (_, bytes) = place(&w, &r, Input::Many(10_000));
    let o = run(&w, &r, bytes);
    assert_eq!(o.run.code, 1, "{}", o.run);
    assert!(o.run.said().contains("s9999"), "{}", o.run);
}
