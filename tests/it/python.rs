//! Issue 12.3: commit evidence for a Python (venv) prefix, from a real venv into which pip
//! installed a package from a local git repository. Hermetic: the package is built by a tiny
//! in-tree PEP 517 backend (fixtures/pep517_backend.py), so pip needs no index.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::*;

const BACKEND: &str = include_str!("fixtures/pep517_backend.py");

fn sh(w: &World, program: &str, args: &[&str], cwd: &Path) -> String {
    let mut a = vec![
        "-c",
        r#"cd "$0" && exec "$@""#,
        cwd.to_str().unwrap(),
        program,
    ];
    a.extend_from_slice(args);
    let r = w.run_program(
        Path::new("/bin/sh"),
        &a,
        &[
            ("GIT_AUTHOR_NAME", "t"),
            ("GIT_AUTHOR_EMAIL", "t@example.invalid"),
            ("GIT_COMMITTER_NAME", "t"),
            ("GIT_COMMITTER_EMAIL", "t@example.invalid"),
            ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
            ("PIP_NO_INDEX", "1"),
        ],
    );
    r.code(0);
    r.stdout.trim().to_string()
}

/// A git repository holding package `tinymcp` with console script `tiny-mcp`; a venv at
/// `opt/orchestrata` with it pip-installed from `git+file://`. Returns (prefix, commit).
fn venv_from_git(w: &World) -> (PathBuf, String) {
    let repo = w.root().join("repo");
    fs::create_dir_all(repo.join("tinymcp")).unwrap();
    fs::write(
        repo.join("tinymcp/__init__.py"),
        "def main():\n    print('hi')\n",
    )
    .unwrap();
    fs::write(repo.join("backend.py"), BACKEND).unwrap();
    fs::write(
        repo.join("pyproject.toml"),
        "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n",
    )
    .unwrap();
    sh(w, "git", &["init", "-q"], &repo);
    sh(w, "git", &["add", "-A"], &repo);
    sh(w, "git", &["commit", "-qm", "tinymcp"], &repo);
    let commit = sh(w, "git", &["rev-parse", "HEAD"], &repo);
    let prefix = w.opt().join("orchestrata");
    sh(
        w,
        "python3",
        &["-m", "venv", prefix.to_str().unwrap()],
        w.root(),
    );
    sh(
        w,
        prefix.join("bin/pip").to_str().unwrap(),
        &[
            "install",
            "-q",
            "--no-build-isolation",
            &format!("git+file://{}", repo.display()),
        ],
        w.root(),
    );
    assert!(prefix.join("bin/tiny-mcp").is_file());
    (prefix, commit)
}

fn declare(w: &World) -> PathBuf {
    let cfg = w.root().join("servers.json");
    let doc = serde_json::json!({"servers": [{"name": "orchestrata", "prefix": "/opt/orchestrata",
        "layout": "prefix", "entry": {"command": "{{prefix}}/bin/tiny-mcp", "args": []}}]});
    fs::write(&cfg, doc.to_string()).unwrap();
    cfg
}

#[test]
fn a_venv_prefix_proves_its_commit_through_pips_direct_url() {
    let w = World::with_real_claude();
    let (prefix, commit) = venv_from_git(&w);
    let cfg = declare(&w);
    let doc = w.root().join("doc.json");
    let command = prefix.join("bin/tiny-mcp");
    flat_doc(&doc, "orchestrata", command.to_str().unwrap(), &[]);
    let cfg_arg = ["--config", cfg.to_str().unwrap(), "--json"];

    // No VERSION: the commit comes from direct_url.json of the distribution owning bin/tiny-mcp.
    assert!(!prefix.join("VERSION").exists());
    let r = w.verify_identity(&prefix, &commit, &doc, &cfg_arg);
    r.code(0);
    let detail = r.detail("commit");
    assert!(detail.contains("direct_url.json"), "{detail}");
    assert!(detail.contains("tinymcp-0.1.0.dist-info"), "{detail}");
    assert!(detail.contains(&commit), "{detail}");

    // Another commit expected: exactly the commit check fails, saying what is deployed.
    let other = "a".repeat(40);
    let r = w.verify_identity(&prefix, &other, &doc, &cfg_arg);
    r.code(1);
    assert_eq!(
        r.checks(),
        vec![
            ("commit".to_string(), false),
            ("signature".to_string(), true),
            ("mcp-registration".to_string(), true)
        ]
    );
    assert!(
        r.detail("commit").starts_with(&format!(
            "the deployed commit is {commit}, expected {other}"
        )),
        "{}",
        r.shown
    );

    // status (no commit expected) names the commit too.
    let r = w.run(&[
        "status",
        "--prefix",
        prefix.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
        "--json",
    ]);
    assert!(r.detail("deployed").contains(&commit), "{}", r.shown);

    // install needs no VERSION there: the commit check passes on the pip evidence, and the
    // ledger records that commit.
    let ledger = w.root().join("ledger.ndjson");
    let r = w.run(&[
        "install",
        "--prefix",
        prefix.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
        "--expect-commit",
        &format!("orchestrata={commit}"),
        "--ledger",
        ledger.to_str().unwrap(),
        "--json",
        // tiny-mcp is a console script, no MCP server: the gate is not this test's subject.
        "--no-handshake",
    ]);
    r.code(0);
    assert!(
        r.detail("commit").contains("direct_url.json"),
        "{}",
        r.shown
    );
    let line: serde_json::Value =
        serde_json::from_str(fs::read_to_string(&ledger).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(line["commit"], commit.as_str());

    // VERSION, when present, is the evidence.
    fs::write(prefix.join("VERSION"), format!("{other}\n")).unwrap();
    w.verify_identity(&prefix, &other, &doc, &cfg_arg).code(0);
    fs::remove_file(prefix.join("VERSION")).unwrap();

    // No evidence at all: the commit check says so, and fails only when a commit is expected.
    let direct_url = find(&prefix, "direct_url.json").expect("pip wrote direct_url.json");
    fs::remove_file(&direct_url).unwrap();
    let r = w.verify_identity(&prefix, &commit, &doc, &cfg_arg);
    r.code(1);
    assert!(
        r.detail("commit").starts_with("no commit evidence:"),
        "{}",
        r.shown
    );
    let r = w.run(&[
        "status",
        "--prefix",
        prefix.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
        "--json",
    ]);
    let deployed = r.json()["servers"][0]["checks"][0].clone();
    assert_eq!(deployed["check"], "deployed");
    assert_eq!(deployed["ok"], true, "{}", r.shown);
    assert!(deployed["detail"]
        .as_str()
        .unwrap()
        .contains("no commit evidence"));
}

fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if e.file_type().ok()?.is_dir() {
            if let Some(found) = find(&p, name) {
                return Some(found);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}
