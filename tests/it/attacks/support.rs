//! What every attack table shares: one row type, a runner that refuses to hang, and the
//! small fixtures (a FIFO, a sparse huge file) the rows are built from.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{Run, World};

/// One attack.
pub struct Attack {
    pub name: &'static str,
    /// Lays the attack out in a fresh world and returns the mcp-deploy arguments.
    pub setup: fn(&World) -> Vec<String>,
    /// The exit code a correct mcp-deploy gives.
    pub code: i32,
    /// Fragments that must appear in stdout or stderr: the check or error, and its evidence.
    pub evidence: &'static [&'static str],
    /// Fragments that must appear nowhere (a secret value).
    pub absent: &'static [&'static str],
    /// Checked after the run (nothing registered, nothing written...).
    pub after: fn(&World),
}

pub fn nothing(_: &World) {}

/// How long any row may take: a hang is a failure, not a stuck test run.
fn deadline() -> Duration {
    let secs = std::env::var("MCP_DEPLOY_ATTACK_DEADLINE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

/// Run mcp-deploy; `Err` with what it printed when it outlived [`deadline`] (it is killed).
pub fn run_bounded(w: &World, args: &[String]) -> Result<(Run, Duration), String> {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = Instant::now();
    let cmd = w.cmd().args(&refs);
    let mut child = cmd.spawn();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > deadline() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            return Err(format!(
                "hung: killed after {:?}\ncommand: mcp-deploy {}\n--- stderr\n{}",
                deadline(),
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = start.elapsed();
    Ok((cmd.finish(child), elapsed))
}

/// One attack row in a fresh world made by `world`: panics with everything that is wrong with
/// it (exit code, missing evidence, a shown secret, the `after` check) and what the run printed.
pub fn run_row(a: &Attack, world: fn() -> World) {
    let w = world();
    let args = (a.setup)(&w);
    let (r, took) = match run_bounded(&w, &args) {
        Ok(done) => done,
        Err(hung) => panic!("ATTACK {}: {hung}", a.name),
    };
    let all = format!("{}{}", r.said(), r.stderr);
    let mut wrong = Vec::new();
    if r.code != a.code {
        wrong.push(format!("exit {} (want {})", r.code, a.code));
    }
    for e in a.evidence {
        if !all.contains(e) {
            wrong.push(format!("no {e:?}"));
        }
    }
    for e in a.absent {
        if all.contains(e) {
            wrong.push(format!("shows {e:?}"));
        }
    }
    let after = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (a.after)(&w)));
    if let Err(p) = after {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        wrong.push(format!("after: {msg}"));
    }
    assert!(
        wrong.is_empty(),
        "ATTACK {}: {}\n{}",
        a.name,
        wrong.join("; "),
        r.shown
    );
    eprintln!("attack ok ({took:?}): {}", a.name);
}

/// A table of attacks, one `#[test]` per row, so that a failing row fails under its own name:
///
/// ```text
/// attack_rows! {
///     mod install_is_a_gate in world;          // the table's module, and its World maker
///     wrong_expect_commit_install: Attack { name: "wrong --expect-commit (install)", .. },
/// }
/// ```
///
/// makes `mod install_is_a_gate { #[test] fn wrong_expect_commit_install() {..} }`, each row
/// run by [`run_row`] in a fresh world (the module sees its parent's items).
macro_rules! attack_rows {
    (mod $table:ident in $world:expr; $($test:ident: $row:expr,)*) => {
        mod $table {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $test() {
                    $crate::attacks::support::run_row(&$row, $world);
                }
            )*
        }
    };
}
pub(crate) use attack_rows;

pub fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub fn mkfifo(p: &Path) {
    let _ = fs::remove_file(p);
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", p.display());
}

/// Replace `p` with a symlink to `target`.
pub fn link(p: &Path, target: &str) {
    let _ = fs::remove_file(p);
    std::os::unix::fs::symlink(target, p).unwrap();
}

/// Replace `p` with a sparse file of `len` zero bytes (no disk used).
pub fn sparse(p: &Path, len: u64) {
    let _ = fs::remove_file(p);
    fs::File::create(p).unwrap().set_len(len).unwrap();
}

/// The part of a stand-in MCP server that answers: `initialize` and `tools/list` (no tools)
/// on stdin, one JSON-RPC line each, until stdin closes (the Python the scripts share).
macro_rules! mcp_answers {
    () => {
        r#"for line in sys.stdin:
    try:
        m = json.loads(line)
    except Exception:
        continue
    if "id" in m:
        r = {"tools": []}
        if m.get("method") == "initialize":
            r = {"protocolVersion": m["params"].get("protocolVersion", "2024-11-05"),
                 "capabilities": {"tools": {}}, "serverInfo": {"name": "oracle", "version": "1"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
        sys.stdout.flush()
"#
    };
}
pub(crate) use mcp_answers;

/// A server that records the environment and argv it was started with into
/// `$ORACLE_OUT` and answers `initialize`: registered beside ours as `oracle`, it shows what
/// the client gives every user-scope stdio server (the layer rows of claude and gemini).
pub const ORACLE: &str = concat!(
    r#"#!/usr/bin/python3
import os, sys, json
with open(os.environ["ORACLE_OUT"], "w") as f:
    json.dump({"env": dict(os.environ), "argv": sys.argv}, f)
"#,
    mcp_answers!()
);
