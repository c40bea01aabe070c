use std::fs;

use crate::harness::*;

#[test]
fn render_writes_the_exact_document_for_each_server() {
    let w = World::new();
    let opt = w.sample();
    let ct = opt.join("codetools");
    w.run(&["render-mcp", "--prefix", ct.to_str().unwrap()])
        .code(0)
        .stdout_has("mcp/codetools.mcp.json");
    let text = fs::read_to_string(ct.join("mcp/codetools.mcp.json")).unwrap();
    assert_eq!(
        text.trim_end(),
        format!(
            r#"{{"mcpServers":{{"codetools":{{"command":"{}/bin/codetools","args":["mcp","serve"]}}}}}}"#,
            ct.display()
        )
    );
    let or = opt.join("orchestrata");
    w.run(&["render-mcp", "--prefix", or.to_str().unwrap()])
        .code(0);
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(or.join("mcp/orchestrata.mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        v,
        serde_json::json!({"mcpServers":{"orchestrata":{
            "command": format!("{}/bin/orchestrata-mcp", or.display()), "args": []}}})
    );
}

#[test]
fn render_with_a_hostile_prefix_still_writes_valid_json() {
    let w = World::new();
    let prefix = w.opt().join("we \"ird\" dir ünï\\x");
    release_layout(&prefix, CT_SHA);
    w.run(&[
        "render-mcp",
        "--prefix",
        prefix.to_str().unwrap(),
        "--server",
        "codetools",
    ])
    .code(0);
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(prefix.join("mcp/codetools.mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        v["mcpServers"]["codetools"]["command"],
        format!("{}/bin/codetools", prefix.display())
    );
}

#[test]
fn render_refuses_a_prefix_without_current() {
    let w = World::new();
    let prefix = w.opt().join("codetools");
    fs::create_dir_all(prefix.join("releases")).unwrap();
    w.run(&["render-mcp", "--prefix", prefix.to_str().unwrap()])
        .code(2)
        .stderr_has("holds no deployed codetools")
        .stderr_has("current does not exist")
        .stderr_has("help:");
    assert!(!prefix.join("mcp").exists());
}

#[test]
fn render_needs_a_declared_server_name() {
    let w = World::new();
    let prefix = w.opt().join("mystery");
    fs::create_dir_all(&prefix).unwrap();
    w.run(&["render-mcp", "--prefix", prefix.to_str().unwrap()])
        .code(2)
        .stderr_has("does not end in a declared server's name")
        .stderr_has("--server");
    w.run(&[
        "render-mcp",
        "--prefix",
        prefix.to_str().unwrap(),
        "--server",
        "nope",
    ])
    .code(2)
    .stderr_has("no server named \"nope\"");
}

#[test]
fn render_with_config_declares_another_server() {
    let w = World::new();
    let cfg = w.root().join("servers.json");
    fs::write(
        &cfg,
        r#"{"servers":[{"name":"third","prefix":"/srv/third","layout":"prefix",
            "entry":{"command":"{{prefix}}/bin/third","args":["--stdio"]}}]}"#,
    )
    .unwrap();
    let prefix = w.opt().join("third");
    fs::create_dir_all(&prefix).unwrap();
    w.run(&[
        "render-mcp",
        "--config",
        cfg.to_str().unwrap(),
        "--prefix",
        prefix.to_str().unwrap(),
    ])
    .code(0);
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(prefix.join("mcp/third.mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        v["mcpServers"]["third"]["args"],
        serde_json::json!(["--stdio"])
    );
}

#[test]
fn rendering_again_with_nothing_changed_leaves_the_file_alone() {
    use std::os::unix::fs::MetadataExt;
    let w = World::new();
    let opt = w.sample();
    let ct = opt.join("codetools");
    let file = ct.join("mcp/codetools.mcp.json");
    w.run(&["render-mcp", "--prefix", ct.to_str().unwrap()])
        .code(0);
    let before = fs::metadata(&file).unwrap().ino();
    w.run(&["render-mcp", "--prefix", ct.to_str().unwrap()])
        .code(0);
    assert_eq!(
        fs::metadata(&file).unwrap().ino(),
        before,
        "rewritten although unchanged"
    );
    // A changed file is replaced (atomically: a new inode).
    fs::write(&file, "{}").unwrap();
    w.run(&["render-mcp", "--prefix", ct.to_str().unwrap()])
        .code(0);
    assert_ne!(fs::metadata(&file).unwrap().ino(), before);
    assert!(fs::read_to_string(&file).unwrap().contains("mcp"));
}
