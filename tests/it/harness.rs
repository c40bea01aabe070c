//! The test harness: every test gets its own temp dir with its own HOME, CLAUDE_CONFIG_DIR and
//! working directory, runs the real `mcp-deploy` binary, and on failure sees the command, its
//! exit code, stdout and stderr.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const CT_SHA: &str = "c0de7001c0de7001c0de7001c0de7001c0de7001";
pub const OR_SHA: &str = "0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e";

/// A real pinned client CLI (`codex`, `gemini`): `node_modules/.bin/NAME` in the repo. Tests
/// that need it fail when it is missing (`npm ci` brings it).
pub fn real_client(name: &str) -> PathBuf {
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/.bin")
        .join(name);
    assert!(
        pinned.exists(),
        "the real {name} CLI is missing: run `npm ci` in {}",
        env!("CARGO_MANIFEST_DIR")
    );
    pinned
}

/// The real Claude Code CLI: `MCP_DEPLOY_TEST_CLAUDE`, else the repo's pinned
/// `node_modules/.bin/claude`, else `claude` on PATH. Tests that need it fail when it is
/// missing (never skip): `npm ci` in the repo brings it.
pub fn real_claude() -> PathBuf {
    if let Some(p) = std::env::var_os("MCP_DEPLOY_TEST_CLAUDE") {
        return PathBuf::from(p);
    }
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin/claude");
    if pinned.exists() {
        return pinned;
    }
    which_claude().unwrap_or_else(|| {
        panic!(
            "the real Claude Code CLI is missing: run `npm ci` in {} (it installs the pinned \
             @anthropic-ai/claude-code), or set MCP_DEPLOY_TEST_CLAUDE",
            env!("CARGO_MANIFEST_DIR")
        )
    })
}

fn which_claude() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("claude"))
            .find(|p| p.is_file())
    })
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub shown: String,
}

impl Run {
    pub fn code(&self, want: i32) -> &Self {
        assert_eq!(self.code, want, "unexpected exit code\n{}", self.shown);
        self
    }
    pub fn stdout_has(&self, s: &str) -> &Self {
        assert!(
            self.stdout.contains(s),
            "stdout lacks {s:?}\n{}",
            self.shown
        );
        self
    }
    pub fn stderr_has(&self, s: &str) -> &Self {
        assert!(
            self.stderr.contains(s),
            "stderr lacks {s:?}\n{}",
            self.shown
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.shown))
    }
    /// `(check, ok)` pairs of the first server in a `--json` report.
    pub fn checks(&self) -> Vec<(String, bool)> {
        self.json()["servers"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["check"].as_str().unwrap().to_string(),
                    c["ok"].as_bool().unwrap(),
                )
            })
            .collect()
    }
    pub fn detail(&self, check: &str) -> String {
        self.json()["servers"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == check)
            .map(|c| c["detail"].as_str().unwrap().to_string())
            .unwrap_or_default()
    }
}

/// A scratch world: `root/home`, `root/claude` (CLAUDE_CONFIG_DIR), `root/opt` for prefixes,
/// `root/bin` first on PATH (for the client the test wants there), then /usr/bin and /bin.
pub struct World {
    pub dir: tempfile::TempDir,
    pub path_dirs: Vec<PathBuf>,
}

impl World {
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        for d in ["home", "claude", "opt", "bin", "work", "tmp"] {
            fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let bin = dir.path().join("bin");
        World {
            dir,
            path_dirs: vec![bin, "/usr/bin".into(), "/bin".into()],
        }
    }

    /// A world whose PATH has the real claude.
    pub fn with_real_claude() -> World {
        let w = World::new();
        symlink(real_claude(), w.bin().join("claude")).unwrap();
        w
    }

    /// A world whose PATH has the real claude, codex and gemini, each with its config in the
    /// scratch home.
    pub fn with_every_client() -> World {
        let w = World::with_real_claude();
        for name in ["codex", "gemini"] {
            symlink(real_client(name), w.bin().join(name)).unwrap();
        }
        w
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }
    pub fn opt(&self) -> PathBuf {
        self.root().join("opt")
    }
    pub fn bin(&self) -> PathBuf {
        self.root().join("bin")
    }
    pub fn config_dir(&self) -> PathBuf {
        self.root().join("claude")
    }
    pub fn claude_json(&self) -> PathBuf {
        self.config_dir().join(".claude.json")
    }
    pub fn registered(&self) -> PathBuf {
        self.config_dir().join("mcp-registered.json")
    }
    /// mcp-deploy's state directory for claude (lock and journal).
    pub fn state_dir(&self) -> PathBuf {
        self.config_dir().join(".mcp-deploy")
    }
    /// The journal of an interrupted claude transaction.
    pub fn journal(&self) -> PathBuf {
        self.state_dir().join("claude.journal.json")
    }

    /// Run mcp-deploy with the world's environment.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_program(Path::new(env!("CARGO_BIN_EXE_mcp-deploy")), args, env)
    }

    /// Start mcp-deploy without waiting for it.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.spawn_env(args, &[])
    }

    /// Start mcp-deploy with the world's environment plus `env`, without waiting for it.
    pub fn spawn_env(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-deploy"));
        self.prepare(&mut cmd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Run any program in the world's environment, plus `env`.
    pub fn run_program(&self, program: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(program);
        self.prepare(&mut cmd);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.status.code().unwrap_or(-1);
        let shown = format!(
            "command: {} {}\ncwd: {}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            program.display(),
            args.join(" "),
            self.root().join("work").display()
        );
        Run {
            code,
            stdout,
            stderr,
            shown,
        }
    }

    /// Run the real claude in this world (for assertions about what the client sees).
    pub fn claude(&self, args: &[&str]) -> Run {
        self.run_program(&real_claude(), args, &[("MCP_TIMEOUT", "3000")])
    }

    fn prepare(&self, cmd: &mut Command) {
        let path = std::env::join_paths(&self.path_dirs).unwrap();
        cmd.env_clear()
            .env("HOME", self.root().join("home"))
            .env("CLAUDE_CONFIG_DIR", self.config_dir())
            .env("PATH", path)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            // The world's own temp dir, so a test can see what a run leaves there.
            .env("TMPDIR", self.root().join("tmp"))
            .current_dir(self.root().join("work"));
    }

    /// Run `COMMAND --prefix opt --name-suffix -test EXTRA...`: a command on the sample
    /// deployment under the test names.
    pub fn on_sample(&self, command: &str, extra: &[&str]) -> Run {
        let opt = self.opt();
        let mut args = vec![
            command,
            "--prefix",
            opt.to_str().unwrap(),
            "--name-suffix",
            "-test",
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// Write `servers.json` declaring only codetools, its entry being
    /// `{"command": "{{prefix}}/bin/codetools"}` with `fields` (args, env, ...) added, and
    /// return its path (for `--config`).
    pub fn declare_codetools(&self, fields: serde_json::Value) -> PathBuf {
        let mut entry = serde_json::json!({"command": "{{prefix}}/bin/codetools"});
        for (k, v) in fields.as_object().expect("fields is an object") {
            entry[k] = v.clone();
        }
        let cfg = self.root().join("servers.json");
        let doc = serde_json::json!({"servers": [{"name": "codetools", "prefix": "/opt/codetools",
            "layout": "release", "entry": entry}]});
        fs::write(&cfg, doc.to_string()).unwrap();
        cfg
    }

    /// `verify-identity --prefix PREFIX --expect-commit SHA --mcp-json DOC EXTRA...`.
    pub fn verify_identity(&self, prefix: &Path, sha: &str, doc: &Path, extra: &[&str]) -> Run {
        let mut args = vec![
            "verify-identity",
            "--prefix",
            prefix.to_str().unwrap(),
            "--expect-commit",
            sha,
            "--mcp-json",
            doc.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// Lay out the built-in sample under `opt/`.
    pub fn sample(&self) -> PathBuf {
        self.run(&["sample", self.opt().to_str().unwrap()]).code(0);
        self.opt()
    }

    /// The user-scope `mcpServers` of the client config.
    pub fn user_servers(&self) -> serde_json::Map<String, serde_json::Value> {
        let text = fs::read_to_string(self.claude_json()).unwrap_or_else(|_| "{}".into());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v.get("mcpServers")
            .and_then(|m| m.as_object().cloned())
            .unwrap_or_default()
    }

    /// Put an executable script at `bin/claude` (a fake client, or a wrapper).
    pub fn write_claude(&self, script: &str) {
        write_exec(&self.bin().join("claude"), script);
    }
}

pub fn write_exec(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap();
    }
    let _ = fs::remove_file(path);
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A release layout at `prefix` with one release `sha`, the shape promote leaves behind.
pub fn release_layout(prefix: &Path, sha: &str) {
    add_release(prefix, sha);
    promote(prefix, sha);
    fs::create_dir_all(prefix.join("bin")).unwrap();
    symlink("../current/bin/codetools", prefix.join("bin/codetools")).unwrap();
}

/// Add `releases/<sha>/` with VERSION and an executable `bin/codetools`.
pub fn add_release(prefix: &Path, sha: &str) -> PathBuf {
    let rel = prefix.join("releases").join(sha);
    fs::create_dir_all(rel.join("bin")).unwrap();
    fs::write(rel.join("VERSION"), format!("{sha}\n")).unwrap();
    write_exec(&rel.join("bin/codetools"), "#!/bin/sh\nexit 0\n");
    rel
}

/// Switch `current` to `releases/<sha>` the way promote does: new symlink, then rename.
pub fn promote(prefix: &Path, sha: &str) {
    let tmp = prefix.join(".current.new");
    let _ = fs::remove_file(&tmp);
    symlink(format!("releases/{sha}"), &tmp).unwrap();
    fs::rename(&tmp, prefix.join("current")).unwrap();
}

/// Write a flat document holding one entry.
pub fn flat_doc(path: &Path, name: &str, command: &str, args: &[&str]) {
    let doc = serde_json::json!({"mcpServers": {name: {"command": command, "args": args}}});
    fs::write(path, serde_json::to_string(&doc).unwrap()).unwrap();
}

/// Files whose names show an interrupted atomic write.
pub fn partial_files(dir: &Path) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".partial"))
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// How an injected fault behaves.
#[derive(Clone, Copy)]
pub enum Fault {
    /// Exit 3 with a message on stderr.
    Fail,
    /// Sleep far past any timeout the test sets.
    Hang,
    /// Exit 0 printing what claude never prints.
    Garbage,
}

impl World {
    /// Put a `claude` on PATH that logs its argv to `claude.log` and runs the real one, except
    /// for the calls named in `faults`: `(subcommand, n, fault)` injects `fault` into the n-th
    /// call of that subcommand (`add-json`, `remove`, `get`), or into every one when n is 0.
    pub fn wrap_claude(&self, faults: &[(&str, u32, Fault)]) {
        let real = real_claude();
        let log = self.log_path();
        let counters = self.root().join("claude.count");
        let mut cases = String::new();
        for (step, n, kind) in faults {
            let act = match kind {
                Fault::Fail => "echo \"injected failure: boom\" >&2; exit 3",
                // `exec`: the hanging call is one process, as a hung claude is (a shell's own
                // child would outlive a killed run and hold its lock; see docs/registration.md).
                Fault::Hang => "exec sleep 120",
                Fault::Garbage => "echo '%%% this is not what claude prints'; exit 0",
            };
            let pattern = if *n == 0 {
                format!("{step}:*")
            } else {
                format!("{step}:{n}")
            };
            cases.push_str(&format!("  {pattern}) {act} ;;\n"));
        }
        self.write_claude(&format!(
            "#!/bin/sh\n\
             echo \"$*\" >> '{log}'\n\
             sub=$2\n\
             n=$(cat '{cnt}.'\"$sub\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > '{cnt}.'\"$sub\"\n\
             case \"$sub:$n\" in\n{cases}esac\n\
             exec '{real}' \"$@\"\n",
            log = log.display(),
            cnt = counters.display(),
            real = real.display()
        ));
    }

    pub fn log_path(&self) -> PathBuf {
        self.root().join("claude.log")
    }

    /// The client calls logged by `wrap_claude`, one argv (space-joined) a line.
    pub fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Every `mcp-deploy-client.*` working directory left in the world's temp dir.
    pub fn client_tmp_dirs(&self) -> Vec<PathBuf> {
        fs::read_dir(self.root().join("tmp"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("mcp-deploy-client."))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The claude entries of the flat document (empty when there is none).
    pub fn flat_servers(&self) -> serde_json::Map<String, serde_json::Value> {
        fs::read_to_string(self.registered())
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("mcpServers").and_then(|m| m.as_object().cloned()))
            .unwrap_or_default()
    }

    pub fn clear_calls(&self) {
        let _ = fs::remove_file(self.log_path());
    }
}
