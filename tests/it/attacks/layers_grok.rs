//! Issue 20, grok: the layers grok 0.0.34 applies to a server it starts, one row each. Grok
//! started in the home directory (where mcp-deploy's registrations live, docs/clients.md)
//! loads `~/.env` into itself (`dotenv.config()`), and a stdio server inherits it. Each row
//! confirms with the real `grok mcp test NAME` (which starts the server) what the server gets,
//! then requires verify-identity and status to fail naming the file and key. Every failing
//! row passed before the grok reader (`src/clients/layers/grok.rs`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::layers_gemini::{client_verify, fails_naming, probe};
use crate::harness::*;

fn installed() -> (World, PathBuf) {
    let w = World::new();
    std::os::unix::fs::symlink(real_client("grok"), w.bin().join("grok")).unwrap();
    let opt = w.sample();
    w.on_sample("install", &["--client", "grok"]).code(0);
    client_verify(&w, &opt, "grok", &[]).code(0);
    (w, opt)
}

/// The real `grok mcp test codetools-test`, from the home directory: it starts the server,
/// stays connected, and is stopped (SIGTERM, which it handles) after a few seconds.
fn mcp_test(w: &World) -> Run {
    w.program(system_tool("timeout"))
        .args(["8"])
        .arg(real_client("grok"))
        .args(["mcp", "test", "codetools-test"])
        .current_dir(w.root().join("home"))
        .env("NO_COLOR", "1")
        .run()
}

fn status(w: &World) -> Run {
    w.on_sample("status", &["--client", "grok", "--json"])
}

/// A probe that also records what `NODE_ENV` the server got.
fn probe_recording(w: &World, var: &str) -> (PathBuf, PathBuf) {
    let seen = w.root().join("probe-env");
    let js = w.write(
        "probe-env.js",
        format!(
            "require('fs').appendFileSync({:?}, String(process.env[{var:?}]) + '\\n');\n",
            seen.to_str().unwrap()
        ),
    );
    (js, seen)
}

fn wait_for(p: &Path) -> bool {
    for _ in 0..100 {
        if p.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn home_env_file_gives_the_server_node_options() {
    let (w, opt) = installed();
    let (js, marker) = probe(&w);
    w.write(
        "home/.env",
        format!("NODE_OPTIONS=--require {}\n", js.display()),
    );
    let r = mcp_test(&w);
    assert!(
        wait_for(&marker) && fs::read_to_string(&marker).unwrap().contains("codetools"),
        "the server grok started did not load the probe\n{}",
        r.shown
    );
    fails_naming(
        &w,
        client_verify(&w, &opt, "grok", &[]),
        status(&w),
        "home/.env",
        "env.NODE_OPTIONS",
    );
}

#[test]
fn the_colon_form_of_dotenv_counts_too() {
    // The next instance: dotenv also reads `KEY: value` (and `export KEY=`), which a reader
    // of `KEY=value` lines alone would miss.
    let (w, opt) = installed();
    let (js, marker) = probe(&w);
    w.write(
        "home/.env",
        format!(
            "# set by someone\nNODE_OPTIONS: --require {}\n",
            js.display()
        ),
    );
    let r = mcp_test(&w);
    assert!(wait_for(&marker), "the probe did not run\n{}", r.shown);
    fails_naming(
        &w,
        client_verify(&w, &opt, "grok", &[]),
        status(&w),
        "home/.env",
        "env.NODE_OPTIONS",
    );
}

#[test]
fn a_variable_grok_sets_over_the_env_file_is_no_finding() {
    // grok sets NODE_ENV=production over every server's environment: a .env NODE_ENV never
    // reaches it, so only NODE_OPTIONS is named.
    let (w, opt) = installed();
    let (js, seen) = probe_recording(&w, "NODE_ENV");
    w.write(
        "home/.env",
        format!(
            "NODE_ENV=development\nNODE_OPTIONS=--require {}\n",
            js.display()
        ),
    );
    let r = mcp_test(&w);
    assert!(wait_for(&seen), "the probe did not run\n{}", r.shown);
    assert!(
        fs::read_to_string(&seen).unwrap().starts_with("production"),
        "{}",
        r.shown
    );
    let v = client_verify(&w, &opt, "grok", &[]);
    v.code(1);
    let detail = v.detail("mcp-registration");
    assert!(
        detail.contains("env.NODE_OPTIONS") && !detail.contains("env.NODE_ENV"),
        "{detail}"
    );
}

#[test]
fn an_env_file_that_is_a_fifo_is_named_not_read() {
    // grok would block reading it; mcp-deploy neither blocks nor takes it as absent.
    let (w, opt) = installed();
    let fifo = w.root().join("home/.env");
    let made = std::process::Command::new(system_tool("mkfifo"))
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // What it holds is not known: a doubt, which fails with or without --strict (issue 35:
    // it was a note, exit 0).
    let r = client_verify(&w, &opt, "grok", &[]);
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("not compared") && detail.contains("home/.env"),
        "{}",
        r.shown
    );
    client_verify(&w, &opt, "grok", &["--strict"]).code(1);
}
