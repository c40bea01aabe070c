//! Registration state under concurrency, kills and signals (issue 11): whatever happens to a
//! run, every client entry and every line of the flat document ends as it was before the run
//! or as the run meant it, and the document agrees with the client.

use std::fs;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::harness::*;

/// Run `command` on the sample with registered names `<server><suffix>`.
fn op(w: &World, command: &str, suffix: &str) -> Run {
    let opt = w.opt();
    w.run(&[
        command,
        "--prefix",
        opt.to_str().unwrap(),
        "--name-suffix",
        suffix,
    ])
}

fn op_args<'a>(command: &'a str, opt: &'a Path, suffix: &'a str) -> Vec<&'a str> {
    vec![
        command,
        "--prefix",
        opt.to_str().unwrap(),
        "--name-suffix",
        suffix,
    ]
}

/// The entry install registers for `server` of the sample under `opt`.
fn expected_entry(opt: &Path, server: &str) -> Value {
    match server {
        "codetools" => {
            json!({"command": opt.join("codetools/bin/codetools"), "args": ["mcp", "serve"]})
        }
        _ => json!({"command": opt.join("orchestrata/bin/orchestrata-mcp"), "args": []}),
    }
}

/// The flat form of each client entry: what the document must hold for it.
fn client_flat(w: &World) -> Map<String, Value> {
    w.user_servers()
        .into_iter()
        .map(|(k, v)| {
            let flat = match v.get("type").and_then(Value::as_str) {
                Some(t) if t != "stdio" => json!({"type": t, "url": v["url"]}),
                _ => json!({"command": v["command"], "args": v.get("args").cloned().unwrap_or(json!([]))}),
            };
            (k, flat)
        })
        .collect()
}

/// The document agrees with the client, name for name.
fn assert_document_agrees(w: &World, what: &str) {
    assert_eq!(
        w.flat_servers(),
        client_flat(w),
        "{what}: the flat document does not hold what the client has"
    );
}

/// A process that exists and is not a zombie.
fn running(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().to_string()))
        .is_some_and(|r| !r.starts_with('Z'))
}

fn signal(child: &Child, sig: &str) {
    let st = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

fn finish(child: Child) -> (i32, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Item 1: eight installs of different names at once all land in the document: it is read,
/// changed and written under its lock, never written back stale.
#[test]
fn concurrent_runs_for_different_names_all_reach_the_document() {
    let w = World::with_real_claude();
    w.sample();
    let opt = w.opt();
    let suffixes: Vec<String> = (0..8).map(|i| format!("-c{i}")).collect();
    let children: Vec<Child> = suffixes
        .iter()
        .map(|s| w.spawn(&op_args("install", &opt, s)))
        .collect();
    for child in children {
        let (code, stderr) = finish(child);
        assert_eq!(code, 0, "{stderr}");
    }
    assert_eq!(w.flat_servers().len(), 16, "{:?}", w.flat_servers().keys());
    assert_document_agrees(&w, "after eight installs");
    // Uninstall half while installing the other half again: still in agreement.
    let children: Vec<Child> = suffixes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let cmd = if i % 2 == 0 { "uninstall" } else { "install" };
            w.spawn(&op_args(cmd, &opt, s))
        })
        .collect();
    for child in children {
        let (code, stderr) = finish(child);
        assert_eq!(code, 0, "{stderr}");
    }
    assert_eq!(w.flat_servers().len(), 8);
    assert_document_agrees(&w, "after mixed runs");
}

/// Item 1, the case: an uninstall, then an install of another server while the
/// uninstall still runs. The install must not write back the document it read before.
#[test]
fn an_install_racing_an_uninstall_does_not_resurrect_its_names_in_the_document() {
    let w = World::with_real_claude();
    w.sample();
    let opt = w.opt();
    op(&w, "install", "-test").code(0);
    let mut uninstall = w.start_env(
        &[
            "uninstall",
            "--prefix",
            opt.to_str().unwrap(),
            "--server",
            "orchestrata",
            "--name-suffix",
            "-test",
        ],
        &[("MCP_DEPLOY_PAUSE_AT", "after-remove:orchestrata-test")],
    );
    // The install starts while the uninstall holds the lock, mid-change: wait until it has
    // made its remove and paused (a fixed sleep was not enough on a loaded machine: a SIGTERM
    // that lands during the remove rightly rolls back and exits 2).
    uninstall.paused_at("after-remove:orchestrata-test");
    let mut install = w.start_env(
        &[
            "install",
            "--prefix",
            opt.to_str().unwrap(),
            "--server",
            "codetools",
            "--name-suffix",
            "-test",
        ],
        &[],
    );
    install.wait_for_stderr("the install to wait for the lock", "waiting for", secs(60));
    uninstall.signal("-TERM"); // ends the pause; the uninstall goes on (nothing left to call)
    let r = uninstall.finish();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = install.finish();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!w.user_servers().contains_key("orchestrata-test"));
    assert!(
        !w.flat_servers().contains_key("orchestrata-test"),
        "the document still holds the uninstalled name"
    );
    assert_document_agrees(&w, "after the race");
}

/// Item 2: a run killed while its client call runs takes the call with it, and the next run
/// is not overtaken by an orphan's late `remove`.
#[test]
fn a_killed_run_leaves_no_client_call_behind() {
    let w = World::with_real_claude();
    w.sample();
    let opt = w.opt();
    let old = json!({"command": opt.join("codetools/bin/codetools"), "args": ["old"]});
    w.claude(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "codetools-test",
        &old.to_string(),
    ])
    .code(0);
    // A slow claude: `remove` waits 3 s before doing its work.
    let pidfile = w.root().join("remove.pid");
    w.write_claude(&format!(
        "#!/bin/sh\ncase \"$2\" in remove) echo $$ > '{pid}'; sleep 3 ;; esac\nexec '{real}' \"$@\"\n",
        pid = pidfile.display(),
        real = real_claude().display()
    ));
    let mut child = w.spawn(&op_args("install", &opt, "-test"));
    // The shell creates the file before `echo` writes into it: wait for the whole pid, not
    // for the file (reading it empty made this test fail now and then).
    let read_pid = || {
        fs::read_to_string(&pidfile)
            .ok()
            .filter(|t| t.ends_with('\n'))
            .and_then(|t| t.trim().parse::<u32>().ok())
    };
    wait_until("the remove call to write its pid", secs(30), || {
        read_pid().is_some()
    });
    let call = read_pid().expect("the pid was written");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    wait_until("the client call to die with its run", secs(5), || {
        !running(call)
    });

    // Real claude from here on; the next run recovers and installs.
    fs::remove_file(w.bin().join("claude")).unwrap();
    std::os::unix::fs::symlink(real_claude(), w.bin().join("claude")).unwrap();
    // The shell's `sleep`, started by the killed run's call, still holds the run's lock: the
    // next run waits for it rather than racing anything the call started.
    op(&w, "install", "-test")
        .code(0)
        .stderr_has("which holds it through a descriptor handed down by the process that took it")
        .stderr_has("recovered the interrupted run");
    // Past the moment the orphan's `remove` would have landed: no process of the killed
    // run's call (the shell, its `sleep`, a claude it would exec) is left to make it.
    wait_until(
        "every process of the killed run's call to end",
        secs(30),
        || w.processes().is_empty(),
    );
    assert_eq!(
        w.user_servers()["codetools-test"],
        expected_entry(&opt, "codetools")
    );
    assert_document_agrees(&w, "after the killed run");
    assert!(w.client_tmp_dirs().is_empty(), "{:?}", w.client_tmp_dirs());
}

/// Item 2: SIGINT and SIGTERM stop the client call, roll back and exit 2.
#[test]
fn sigint_and_sigterm_stop_the_call_roll_back_and_exit_2() {
    for sig in ["-INT", "-TERM"] {
        let w = World::new();
        w.wrap_claude(&[]);
        w.sample();
        let opt = w.opt();
        let old = json!({"command": opt.join("codetools/bin/codetools"), "args": ["old"]});
        w.claude(&[
            "mcp",
            "add-json",
            "-s",
            "user",
            "codetools-test",
            &old.to_string(),
        ])
        .code(0);
        w.wrap_claude(&[("add-json", 2, Fault::Hang)]);
        let child = w.spawn(&op_args("install", &opt, "-test"));
        wait_until("the second add-json", secs(30), || {
            w.calls()
                .iter()
                .filter(|c| c.starts_with("mcp add-json"))
                .count()
                >= 2
        });
        // The second add-json hangs in the call (the wrapper has exec'd its `sleep 120`).
        wait_until("the hanging add-json call to run", secs(30), || {
            w.processes().iter().any(|(_, argv)| argv == "sleep 120")
        });
        let start = Instant::now();
        signal(&child, sig);
        let (code, stderr) = finish(child);
        assert!(start.elapsed() < Duration::from_secs(20), "{sig}: slow");
        assert_eq!(code, 2, "{sig}\n{stderr}");
        assert!(stderr.contains("interrupted"), "{sig}\n{stderr}");
        assert!(
            stderr.contains("every change was rolled back"),
            "{sig}\n{stderr}"
        );
        assert_eq!(w.user_servers()["codetools-test"], old, "{sig}");
        assert!(!w.user_servers().contains_key("orchestrata-test"), "{sig}");
        assert!(!w.journal().exists(), "{sig}");
    }
}

/// Item 2: the working directories of killed runs are removed at the next start; a live
/// run's is not.
#[test]
fn working_directories_of_dead_runs_are_swept() {
    let w = World::with_real_claude();
    w.sample();
    let tmp = w.root().join("tmp");
    let dead = tmp.join("mcp-deploy-client.2147483000.abc");
    let live = tmp.join(format!("mcp-deploy-client.{}.xyz", std::process::id()));
    let foreign = tmp.join("mcp-deploy-client.notapid");
    for d in [&dead, &live, &foreign] {
        fs::create_dir_all(d).unwrap();
    }
    op(&w, "install", "-test").code(0);
    assert!(!dead.exists());
    assert!(live.exists());
    assert!(foreign.exists());
}

/// Item 6: two clients whose homes are one directory: one lock each, taken once, no wait on
/// ourselves.
#[test]
fn clients_sharing_a_home_do_not_wait_on_their_own_lock() {
    let w = World::with_every_client();
    w.sample();
    let opt = w.opt();
    let home = w.config_dir();
    let start = Instant::now();
    let r = w.run_env(
        &[
            "install",
            "--prefix",
            opt.to_str().unwrap(),
            "--name-suffix",
            "-test",
            "--client",
            "claude,codex",
            "--lock-timeout",
            "5",
        ],
        &[("CODEX_HOME", home.to_str().unwrap())],
    );
    r.code(0);
    assert!(!r.stderr.contains("waiting for"), "{}", r.shown);
    assert!(start.elapsed() < Duration::from_secs(60));
    assert!(
        home.join("config.toml").exists(),
        "codex wrote its config there"
    );
}

/// Items 1 and 2 together, bounded: eight processes installing and uninstalling different
/// names in random order, then thirty runs killed with SIGKILL at random moments, each
/// followed by a normal run (for the same names or others). At the end every name is where the last completed run for it
/// left it, in the client and in the document; no journal, no working directory is left.
#[test]
fn stress_concurrent_runs_and_random_kills_lose_and_resurrect_nothing() {
    const PROCS: usize = 8;
    const OPS: usize = 4;
    const KILLS: usize = 30;
    let seed = std::env::var("MCP_DEPLOY_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("stress seed {seed} (MCP_DEPLOY_STRESS_SEED={seed} repeats it)");
    let mut rng = Rng(seed);
    let w = World::with_real_claude();
    w.sample();
    let opt = w.opt();
    let started = Instant::now();

    // Phase 1: eight streams of runs at once, each on its own names.
    let plans: Vec<Vec<&str>> = (0..PROCS)
        .map(|_| {
            (0..OPS)
                .map(|_| {
                    if rng.below(3) < 2 {
                        "install"
                    } else {
                        "uninstall"
                    }
                })
                .collect()
        })
        .collect();
    let mut meant: Vec<Option<&str>> = vec![None; PROCS];
    // A killed run's meaning, where its names may have ended either way.
    let mut ambiguous: Vec<Option<&str>> = vec![None; PROCS];
    std::thread::scope(|scope| {
        let handles: Vec<_> = plans
            .iter()
            .enumerate()
            .map(|(p, plan)| {
                let w = &w;
                scope.spawn(move || {
                    for cmd in plan {
                        op(w, cmd, &format!("-s{p}")).code(0);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    for (p, plan) in plans.iter().enumerate() {
        meant[p] = plan.last().copied();
    }
    let phase1 = started.elapsed();
    assert_document_agrees(&w, "after the concurrent phase");

    // Phase 2: kills at random moments, each followed by a normal run on the same names.
    let mut kills_landed = 0;
    for k in 0..KILLS {
        let p = rng.below(PROCS as u64) as usize;
        let suffix = format!("-s{p}");
        let cmd = if rng.below(2) == 0 {
            "install"
        } else {
            "uninstall"
        };
        // A run takes 0.4-1 s here: most kills land inside it, some after it.
        let delay = Duration::from_millis(rng.below(600));
        let mut child = w.spawn(&op_args(cmd, &opt, &suffix));
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills_landed += 1;
        }
        let status = child.wait().unwrap();
        if status.code() == Some(0) {
            meant[p] = Some(cmd); // it finished before the kill: it counts
        } else if meant[p] != Some(cmd) {
            // Killed: its names end as before it or, if it got past its commit, as it meant.
            ambiguous[p] = Some(cmd);
        }
        let next = if rng.below(2) == 0 {
            "install"
        } else {
            "uninstall"
        };
        // The next run is for any names: the killed run's are recovered either way.
        let q = rng.below(PROCS as u64) as usize;
        let r = op(&w, next, &format!("-s{q}"));
        assert_eq!(
            r.code, 0,
            "run {k}: {next} -s{q} after a killed {cmd} {suffix} (seed {seed})\n{}",
            r.shown
        );
        meant[q] = Some(next);
        ambiguous[q] = None;
    }

    // The verdict.
    let servers = w.user_servers();
    let flat = w.flat_servers();
    let (mut lost, mut resurrected) = (Vec::new(), Vec::new());
    let mut either_way = 0;
    for (p, m) in meant.iter().enumerate() {
        let present = |server: &str| {
            let name = format!("{server}-s{p}");
            let want = expected_entry(&opt, server);
            servers.get(&name) == Some(&want) && flat.get(&name) == Some(&want)
        };
        let absent = |server: &str| {
            let name = format!("{server}-s{p}");
            !servers.contains_key(&name) && !flat.contains_key(&name)
        };
        // A run is all or nothing: both names of a suffix end the same way.
        let installed = present("codetools") && present("orchestrata");
        let uninstalled = absent("codetools") && absent("orchestrata");
        let allowed: Vec<&str> = m.iter().chain(ambiguous[p].iter()).copied().collect();
        either_way += (allowed.len() > 1) as usize;
        let ok = (installed && allowed.contains(&"install"))
            || (uninstalled && (allowed.contains(&"uninstall") || allowed.is_empty()));
        if !ok {
            let names = format!("codetools-s{p}, orchestrata-s{p} (allowed {allowed:?})");
            if allowed.contains(&"install") {
                lost.push(names);
            } else {
                resurrected.push(names);
            }
        }
    }
    eprintln!(
        "stress: {either_way} suffixes last touched by a killed run (either outcome allowed)"
    );
    let wall = started.elapsed();
    eprintln!(
        "stress: {} concurrent runs in {:.1} s, {KILLS} killed runs ({kills_landed} killed \
         mid-run) each followed by a normal run; total {:.1} s; lost {}, resurrected {}",
        PROCS * OPS,
        phase1.as_secs_f64(),
        wall.as_secs_f64(),
        lost.len(),
        resurrected.len()
    );
    assert!(lost.is_empty(), "lost registrations {lost:?} (seed {seed})");
    assert!(
        resurrected.is_empty(),
        "resurrected entries {resurrected:?} (seed {seed})"
    );
    assert_document_agrees(&w, "at the end");
    assert!(!w.journal().exists(), "a journal is left (seed {seed})");
    assert!(
        w.client_tmp_dirs().is_empty(),
        "working directories left: {:?}",
        w.client_tmp_dirs()
    );
    let partial = partial_files(w.root());
    assert!(
        partial.is_empty(),
        "partial files left: {partial:?} (seed {seed})"
    );
    assert!(
        wall < Duration::from_secs(300),
        "the stress test must stay bounded"
    );
}

/// A small deterministic PRNG (xorshift64*), so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Issue 34: `verify-identity` of one server names `<prefix>/current` in at most two system
/// calls (its `lstat` and `readlink`), counted with strace (scripts/test.sh installs it): a
/// promote between two reads cannot split a report across two releases.
#[test]
fn one_verify_of_one_server_reads_current_at_most_twice() {
    let strace = strace();
    let w = World::new();
    let prefix = w.opt().join("codetools");
    release_layout(&prefix, CT_SHA);
    let doc = w.root().join("registered.json");
    let cmd = prefix.join("bin/codetools");
    flat_doc(&doc, "codetools", cmd.to_str().unwrap(), &["mcp", "serve"]);
    let trace = w.root().join("trace");
    let bin = env!("CARGO_BIN_EXE_mcp-deploy");
    let r = w.run_program(
        strace,
        &[
            "-f",
            "-o",
            trace.to_str().unwrap(),
            bin,
            "verify-identity",
            "--prefix",
            prefix.to_str().unwrap(),
            "--expect-commit",
            CT_SHA,
            "--mcp-json",
            doc.to_str().unwrap(),
        ],
        &[],
    );
    r.code(0);
    let needle = format!("\"{}\"", prefix.join("current").display());
    let calls: Vec<String> = fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&needle))
        .map(str::to_string)
        .collect();
    assert!(
        calls.len() <= 2,
        "{} calls name current:\n{}",
        calls.len(),
        calls.join("\n")
    );
    assert!(
        !calls.is_empty(),
        "strace saw no call naming {needle}: is the trace empty?"
    );
}

/// strace, which scripts/test.sh installs (Debian's strace): missing, the test fails.
fn strace() -> &'static Path {
    ["/usr/bin/strace", "/bin/strace"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .expect("strace is needed (Debian's strace; scripts/test.sh installs it)")
}

/// Issue 34: each server's checks read claude's whole config again (its user entries, its
/// shadows twice, its layers once), so `verify-identity --root` cost grew with the square of the
/// number of servers (5.3 s at 1,000). Each client's files are now read once per run: two
/// servers open `.claude.json` as often as one does.
#[test]
fn verify_identity_reads_claudes_config_once_per_run_not_once_per_server() {
    let w = World::new();
    let opt = w.sample();
    let entry = |server: &str| match server {
        "codetools" => {
            serde_json::json!({"type": "stdio", "command": opt.join("codetools/bin/codetools"),
            "args": ["mcp", "serve"], "env": {}})
        }
        _ => {
            serde_json::json!({"type": "stdio", "command": opt.join("orchestrata/bin/orchestrata-mcp"),
            "args": [], "env": {}})
        }
    };
    let servers =
        serde_json::json!({"codetools": entry("codetools"), "orchestrata": entry("orchestrata")});
    fs::create_dir_all(w.config_dir()).unwrap();
    fs::write(
        w.claude_json(),
        serde_json::json!({"mcpServers": servers}).to_string(),
    )
    .unwrap();
    let flat: serde_json::Map<String, serde_json::Value> = servers
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_json::json!({"command": v["command"], "args": v["args"]}),
            )
        })
        .collect();
    fs::write(
        w.registered(),
        serde_json::json!({"mcpServers": flat}).to_string(),
    )
    .unwrap();
    let opens = |servers: &[&str]| {
        let trace = w.root().join(format!("trace-{}", servers.len()));
        let mut args = vec![
            "-f".to_string(),
            "-e".into(),
            "trace=open,openat,openat2".into(),
            "-o".into(),
            trace.display().to_string(),
            env!("CARGO_BIN_EXE_mcp-deploy").into(),
            "verify-identity".into(),
            "--root".into(),
            opt.display().to_string(),
            "--require-live".into(),
        ];
        for s in servers {
            let sha = if *s == "codetools" { CT_SHA } else { OR_SHA };
            args.extend([
                "--server".into(),
                s.to_string(),
                "--expect-commit".into(),
                format!("{s}={sha}"),
            ]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        w.run_program(strace(), &args, &[]).code(0);
        let needle = format!("\"{}\"", w.claude_json().display());
        fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .filter(|l| l.contains(&needle))
            .count()
    };
    let one = opens(&["codetools"]);
    let two = opens(&["codetools", "orchestrata"]);
    assert!(one > 0, "strace saw no open of .claude.json");
    assert_eq!(
        one, two,
        "one server opened .claude.json {one} times, two servers {two} times"
    );
}
