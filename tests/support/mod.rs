//! Shared by the integration-test binaries: one run of the real `mcp-deploy`, printed in
//! full (command, exit code, stdout, stderr) when an assertion about it fails.

#![allow(dead_code)] // each test binary uses its own part of it

use std::path::Path;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-deploy");

/// Run the binary in `cwd` with HOME set to `home`.
pub fn run_in(cwd: &Path, home: &Path, args: &[&str]) -> Run {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = Command::new(BIN)
        .args(&args)
        .current_dir(cwd)
        .env("HOME", home)
        .output()
        .unwrap();
    Run { args, out }
}

/// One run of the binary, printed in full when an assertion about it fails.
pub struct Run {
    pub args: Vec<String>,
    pub out: Output,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.out.status.code().expect("exited")
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    #[track_caller]
    pub fn expect(&self, code: i32) -> &Self {
        assert_eq!(self.code(), code, "{self}");
        self
    }
    #[track_caller]
    pub fn stdout_has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout().contains(needle),
            "stdout lacks {needle:?}\n{self}"
        );
        self
    }
    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr().contains(needle),
            "stderr lacks {needle:?}\n{self}"
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout()).unwrap_or_else(|e| panic!("not JSON: {e}\n{self}"))
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "$ mcp-deploy {}\nexit: {:?}\n--- stdout\n{}--- stderr\n{}",
            self.args.join(" "),
            self.out.status.code(),
            self.stdout(),
            self.stderr()
        )
    }
}
