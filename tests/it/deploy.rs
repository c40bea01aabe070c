//! deploy/install-claude-config.sh, the promote pipeline's entry point, calls the binary.

use std::path::Path;

use crate::harness::*;

fn script() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/install-claude-config.sh"
    ))
}

#[test]
fn promote_entry_point_installs_the_server_at_its_prefix() {
    let w = World::with_real_claude();
    let opt = w.sample();
    let prefix = opt.join("codetools");
    let bin = env!("CARGO_BIN_EXE_mcp-deploy");
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[
            script().to_str().unwrap(),
            "--prefix",
            prefix.to_str().unwrap(),
            "--name-suffix",
            "-test",
            "--expect-commit",
            &format!("codetools={CT_SHA}"),
        ],
        &[("MCP_DEPLOY_BIN", bin)],
    );
    r.code(0)
        .stdout_has("codetools (registered as codetools-test): added");
    let servers = w.user_servers();
    assert_eq!(servers.keys().collect::<Vec<_>>(), vec!["codetools-test"]);
}

#[test]
fn promote_entry_point_refuses_a_missing_prefix() {
    let w = World::new();
    let r = w.run_program(
        Path::new("/bin/bash"),
        &[
            script().to_str().unwrap(),
            "--prefix",
            "/nonexistent/codetools",
        ],
        &[("MCP_DEPLOY_BIN", env!("CARGO_BIN_EXE_mcp-deploy"))],
    );
    r.code(2)
        .stderr_has("is not a directory")
        .stderr_has("help:");
    let r = w.run_program(Path::new("/bin/bash"), &[script().to_str().unwrap()], &[]);
    r.code(2).stderr_has("usage:");
}
