//! Issue 38: releases proven by the build that made them. A Sigstore instance made here,
//! offline (tests/sigstore/instance.js: @sigstore/mock's CA with GitHub Actions' Fulcio
//! claims and an SCT from its CT log, a transparency log with inclusion proofs, signed
//! checkpoints and signed entry timestamps, a timestamp authority, and the trusted_root.json
//! naming them), signs the sample release's MANIFEST.sha256 in every way a row needs;
//! verify-identity with
//! `--trusted-builder` and `--trusted-root` judges each, and every cryptographic verdict is
//! set beside @sigstore/verify's on the same files (the second oracle). The sigstore-conformance
//! cases run in the unit tests (src/trust/provenance.rs).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::harness::*;

const ISSUER: &str = "https://token.actions.githubusercontent.com";

/// The policy most rows are judged by.
const POLICY: &str = r#"[[builder]]
issuer = "https://token.actions.githubusercontent.com"
repository = "acme/codetools"
workflow = ".github/workflows/release.yml"
ref = "refs/heads/main"
hosted_runners_only = true
"#;

fn instance_js() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sigstore/instance.js");
    let modules = script.with_file_name("node_modules/@sigstore/mock");
    assert!(
        modules.is_dir(),
        "the Sigstore test instance's packages are missing ({}): run `npm ci --prefix \
         tests/sigstore` (scripts/test.sh does)",
        modules.display()
    );
    script
}

/// The claims of a build by `repo`'s `workflow` at `git_ref` on a `runner` runner.
fn claims(repo: &str, workflow: &str, git_ref: &str, runner: &str) -> Value {
    json!({
        "8": ISSUER,
        "9": format!("https://github.com/{repo}/{workflow}@{git_ref}"),
        "11": runner,
        "12": format!("https://github.com/{repo}"),
        "14": git_ref,
    })
}

fn main_build() -> Value {
    claims(
        "acme/codetools",
        ".github/workflows/release.yml",
        "refs/heads/main",
        "github-hosted",
    )
}

/// The instance's bundles over `manifest` of a fork's build (`fork`) and of the allowed one
/// (`main`): the output directory.
fn fork_and_main(w: &World, manifest: &Path) -> PathBuf {
    let fork = claims(
        "mallory/codetools",
        ".github/workflows/release.yml",
        "refs/heads/main",
        "github-hosted",
    );
    make(
        w,
        "instance",
        manifest,
        vec![
            json!({"name": "fork", "claims": fork}),
            json!({"name": "main", "claims": main_build()}),
        ],
    )
}

/// Run the instance on `bundles` (each a plan entry without `artifact`, which is `manifest`);
/// the output directory: `trusted_root.json` and `NAME.sigstore.json` each.
fn make(w: &World, out: &str, manifest: &Path, bundles: Vec<Value>) -> PathBuf {
    let dir = w.root().join(out);
    let bundles: Vec<Value> = bundles
        .into_iter()
        .map(|mut b| {
            b["artifact"] = json!(manifest);
            if b.get("san").is_none() {
                b["san"] = b["claims"]["9"].clone();
            }
            b
        })
        .collect();
    let plan = w.write(
        &format!("{out}.plan.json"),
        json!({ "bundles": bundles }).to_string(),
    );
    let made = Command::new(system_tool("node"))
        .arg(instance_js())
        .args(["make"])
        .arg(&plan)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(made.status.success(), "instance.js make: {made:?}");
    dir
}

/// @sigstore/verify's verdict on `bundle` over `manifest` against `root`.
fn oracle(root: &Path, bundle: &Path, manifest: &Path) -> (bool, String) {
    let out = Command::new(system_tool("node"))
        .arg(instance_js())
        .arg("verify")
        .args([root, bundle, manifest])
        .output()
        .unwrap();
    let said: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("instance.js verify: {e}: {out:?}"));
    (said["ok"] == true, said.to_string())
}

/// The sample laid out, codetools' release given a manifest: the release.
fn sample_release(w: &World) -> PathBuf {
    w.sample();
    let release = w.opt().join("codetools/releases").join(CT_SHA);
    w.run(&["manifest", "create", release.to_str().unwrap()])
        .code(0);
    release
}

/// The sample installed with the real claude, codetools' release given a manifest: the release.
fn installed(w: &World) -> PathBuf {
    let release = sample_release(w);
    w.on_sample("install", &[]).code(0);
    release
}

fn verify(w: &World, policy: &Path, root: &Path) -> Run {
    w.cmd()
        .args(["verify-identity", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--name-suffix", "-test", "--expect-commit", CT_SHA])
        .arg("--trusted-builder")
        .arg(policy)
        .arg("--trusted-root")
        .arg(root)
        .run()
}

struct Row {
    name: &'static str,
    bundle: Value,
    /// The cryptography holds (the second oracle must agree).
    verifies: bool,
    /// mcp-deploy passes the release.
    passes: bool,
    /// What the report must say.
    evidence: &'static str,
}

/// Every row of issue 38's list, and the passing ones: mcp-deploy's verdict and evidence, and
/// @sigstore/verify's verdict on the same bundle (it knows no builder policy: where the rows
/// differ only in the identity, it must say the bundle verifies).
#[test]
fn each_provenance_row_is_judged_with_its_reason_and_agrees_with_sigstore_js() {
    let w = World::with_real_claude();
    let release = installed(&w);
    let manifest = release.join("MANIFEST.sha256");
    let day_ago = "2026-01-01T00:00:00Z";
    let rows = vec![
        Row {
            name: "main",
            bundle: json!({"claims": main_build()}),
            verifies: true,
            passes: true,
            evidence: "built by https://github.com/acme/codetools/.github/workflows/release.yml@refs/heads/main (repository https://github.com/acme/codetools, ref refs/heads/main, runner github-hosted",
        },
        Row {
            name: "main-timestamped",
            bundle: json!({"claims": main_build(), "tsa": true}),
            verifies: true,
            passes: true,
            evidence: "built by https://github.com/acme/codetools/.github/workflows/release.yml@refs/heads/main",
        },
        Row {
            name: "other-repository",
            bundle: json!({"claims": claims("acme/other", ".github/workflows/release.yml", "refs/heads/main", "github-hosted")}),
            verifies: true,
            passes: false,
            evidence: "repository: the policy says https://github.com/acme/codetools, the certificate https://github.com/acme/other",
        },
        Row {
            name: "fork",
            bundle: json!({"claims": claims("mallory/codetools", ".github/workflows/release.yml", "refs/heads/main", "github-hosted")}),
            verifies: true,
            passes: false,
            evidence: "repository: the policy says https://github.com/acme/codetools, the certificate https://github.com/mallory/codetools",
        },
        Row {
            name: "other-workflow",
            bundle: json!({"claims": claims("acme/codetools", ".github/workflows/pr.yml", "refs/heads/main", "github-hosted")}),
            verifies: true,
            passes: false,
            evidence: "workflow: the policy says https://github.com/acme/codetools/.github/workflows/release.yml@…",
        },
        Row {
            name: "other-ref",
            bundle: json!({"claims": claims("acme/codetools", ".github/workflows/release.yml", "refs/heads/dev", "github-hosted")}),
            verifies: true,
            passes: false,
            evidence: "ref: the policy says refs/heads/main, the certificate refs/heads/dev",
        },
        Row {
            name: "self-hosted",
            bundle: json!({"claims": claims("acme/codetools", ".github/workflows/release.yml", "refs/heads/main", "self-hosted")}),
            verifies: true,
            passes: false,
            evidence: "hosted_runners_only: the policy says github-hosted, the certificate self-hosted",
        },
        Row {
            name: "other-digest",
            bundle: json!({"claims": main_build(), "tamper": "digest"}),
            verifies: false,
            passes: false,
            evidence: "does not verify against",
        },
        Row {
            name: "bad-signature",
            bundle: json!({"claims": main_build(), "tamper": "signature"}),
            verifies: false,
            passes: false,
            evidence: "does not verify against",
        },
        Row {
            name: "log-mismatch",
            bundle: json!({"claims": main_build(), "tamper": "log-body"}),
            verifies: false,
            passes: false,
            evidence: "does not verify against",
        },
        Row {
            name: "outside-validity",
            bundle: json!({"claims": main_build(), "at": day_ago}),
            verifies: false,
            passes: false,
            evidence: "does not verify against",
        },
        Row {
            name: "not-logged",
            bundle: json!({"claims": main_build(), "tlog": false}),
            verifies: false,
            passes: false,
            evidence: "does not verify against",
        },
    ];
    // "outside-validity": issued a day ago (valid for minutes), logged now.
    let bundles = rows
        .iter()
        .map(|r| {
            let mut b = r.bundle.clone();
            b["name"] = json!(r.name);
            if r.name == "outside-validity" {
                b["logged_at"] =
                    json!(humantime::format_rfc3339(std::time::SystemTime::now()).to_string());
            }
            b
        })
        .collect();
    let out = make(&w, "instance", &manifest, bundles);
    let root = out.join("trusted_root.json");
    let policy = w.write("builders.toml", POLICY);
    let mut wrong = Vec::new();
    for row in &rows {
        let bundle = out.join(format!("{}.sigstore.json", row.name));
        fs::copy(&bundle, release.join("MANIFEST.sha256.sigstore.json")).unwrap();
        let r = verify(&w, &policy, &root);
        let said = unwrapped(&r.stdout);
        let (theirs, why) = oracle(&root, &bundle, &manifest);
        let passed = r.code == 0;
        if passed != row.passes || !said.contains(row.evidence) || theirs != row.verifies {
            wrong.push(format!(
                "{}: ours {passed} (want {}), sigstore-js {theirs} (want {}) {why}\n{}",
                row.name, row.passes, row.verifies, r.shown
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));

    // A trusted root that the bundle does not chain to (another instance's).
    let other = make(
        &w,
        "other",
        &manifest,
        vec![json!({"name": "x", "claims": main_build()})],
    );
    fs::copy(
        out.join("main.sigstore.json"),
        release.join("MANIFEST.sha256.sigstore.json"),
    )
    .unwrap();
    let r = verify(&w, &policy, &other.join("trusted_root.json"));
    r.code(1);
    assert!(
        unwrapped(&r.stdout).contains("does not verify against"),
        "{}",
        r.shown
    );
    let (theirs, _) = oracle(
        &other.join("trusted_root.json"),
        &out.join("main.sigstore.json"),
        &manifest,
    );
    assert!(
        !theirs,
        "sigstore-js verified a bundle against a root it does not chain to"
    );
}

/// No bundle beside the manifest: unproven, naming the policy. A ref_regex matches the whole
/// ref; unknown keys and a missing workflow are refused with exit 2, naming them.
#[test]
fn a_missing_bundle_a_ref_regex_and_a_malformed_policy() {
    let w = World::with_real_claude();
    let release = installed(&w);
    let manifest = release.join("MANIFEST.sha256");
    let out = make(
        &w,
        "instance",
        &manifest,
        vec![json!({"name": "main", "claims": main_build()})],
    );
    let root = out.join("trusted_root.json");
    let policy = w.write("builders.toml", POLICY);
    let r = verify(&w, &policy, &root);
    r.code(1);
    assert!(
        unwrapped(&r.stdout).contains("unproven: no MANIFEST.sha256.sigstore.json"),
        "{}",
        r.shown
    );
    // A FIFO or a symlink in the bundle's place is refused, never read through or waited on.
    let bundle = release.join("MANIFEST.sha256.sigstore.json");
    let fifo = Command::new("mkfifo").arg(&bundle).status().unwrap();
    assert!(fifo.success());
    let r = verify(&w, &policy, &root);
    r.code(1);
    assert!(
        unwrapped(&r.stdout).contains("this is a FIFO"),
        "{}",
        r.shown
    );
    fs::remove_file(&bundle).unwrap();
    std::os::unix::fs::symlink(out.join("main.sigstore.json"), &bundle).unwrap();
    let r = verify(&w, &policy, &root);
    r.code(1);
    assert!(
        unwrapped(&r.stdout).contains("this is a symlink"),
        "{}",
        r.shown
    );
    fs::remove_file(&bundle).unwrap();
    fs::copy(out.join("main.sigstore.json"), &bundle).unwrap();
    // The bundle is not content: the content check still passes.
    let regex = w.write(
        "regex.toml",
        POLICY.replace(
            "ref = \"refs/heads/main\"",
            "ref_regex = \"refs/(heads/main|tags/v.*)\"",
        ),
    );
    let r = verify(&w, &regex, &root);
    r.code(0);
    assert!(
        unwrapped(&r.stdout).contains("files match MANIFEST.sha256"),
        "{}",
        r.shown
    );
    let partial = w.write(
        "partial.toml",
        POLICY.replace(
            "ref = \"refs/heads/main\"",
            "ref_regex = \"refs/heads/mai\"",
        ),
    );
    verify(&w, &partial, &root).code(1);
    let unknown = w.write("unknown.toml", format!("{POLICY}environment = \"prod\"\n"));
    verify(&w, &unknown, &root)
        .code(2)
        .stderr_has("unknown field `environment`");
    let no_workflow = w.write(
        "noworkflow.toml",
        POLICY.replace("workflow = \".github/workflows/release.yml\"\n", ""),
    );
    verify(&w, &no_workflow, &root)
        .code(2)
        .stderr_has("missing field `workflow`");
}

/// Promote's gate: a candidate whose bundle names another build is refused before anything
/// switches (`current` and the registration stay); one built by the allowed workflow is
/// promoted, and the report names the build in every format (JSON, JUnit, GitHub).
#[test]
fn promote_refuses_a_candidate_built_elsewhere_and_every_format_names_the_build() {
    let w = World::with_real_claude();
    installed(&w);
    let new = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let candidate = crate::promote::add_sample_release(&w, new);
    w.run(&["manifest", "create", candidate.to_str().unwrap()])
        .code(0);
    let manifest = candidate.join("MANIFEST.sha256");
    let out = fork_and_main(&w, &manifest);
    let root = out.join("trusted_root.json");
    let policy = w.write("builders.toml", POLICY);
    let codetools = w.opt().join("codetools");
    let promote = || {
        w.cmd()
            .args(["promote", "--prefix"])
            .arg(&codetools)
            .args(["--release", new, "--name-suffix", "-test"])
            .arg("--trusted-builder")
            .arg(&policy)
            .arg("--trusted-root")
            .arg(&root)
            .run()
    };
    let bundle = candidate.join("MANIFEST.sha256.sigstore.json");
    fs::copy(out.join("fork.sigstore.json"), &bundle).unwrap();
    let refused = promote();
    refused.code(1);
    assert!(
        unwrapped(&refused.stdout).contains("the certificate https://github.com/mallory/codetools"),
        "{}",
        refused.shown
    );
    assert!(
        fs::read_link(codetools.join("current"))
            .unwrap()
            .ends_with(CT_SHA),
        "current switched"
    );
    fs::copy(out.join("main.sigstore.json"), &bundle).unwrap();
    promote().code(0);
    let built_by =
        "built by https://github.com/acme/codetools/.github/workflows/release.yml@refs/heads/main";
    for format in ["json", "junit", "github"] {
        let r = w
            .cmd()
            .args(["verify-identity", "--prefix"])
            .arg(&codetools)
            .args([
                "--name-suffix",
                "-test",
                "--expect-commit",
                new,
                "--format",
                format,
            ])
            .arg("--trusted-builder")
            .arg(&policy)
            .arg("--trusted-root")
            .arg(&root)
            .run();
        r.code(0);
        assert!(r.stdout.contains(built_by), "{format}: {}", r.shown);
    }
}

/// A server's own `trusted_builder` and `trusted_root` in the declaration: install's gate
/// requires the provenance (a fork's build is refused, nothing registered), and a checked
/// launch checks it at every start, where it stands in for a pin no install recorded.
#[test]
fn a_declared_builder_policy_gates_install_and_vouches_at_every_launch() {
    const INITIALIZE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n";
    let w = World::with_real_claude();
    let release = sample_release(&w);
    let manifest = release.join("MANIFEST.sha256");
    let out = fork_and_main(&w, &manifest);
    w.write("builders.toml", POLICY);
    fs::copy(
        out.join("trusted_root.json"),
        w.root().join("trusted_root.json"),
    )
    .unwrap();
    let cfg = w.write(
        "servers.json",
        json!({"servers": [{"name": "codetools", "prefix": "/opt/codetools", "layout": "release",
            "entry": {"command": "{{prefix}}/bin/codetools", "args": ["mcp", "serve"]},
            "launch": "checked", "trusted_builder": "builders.toml",
            "trusted_root": "trusted_root.json"}]})
        .to_string(),
    );
    let config = cfg.to_str().unwrap();
    let exec = || {
        w.cmd()
            .args(["exec", "--prefix"])
            .arg(w.opt().join("codetools"))
            .args(["--config", config, "--", "mcp", "serve"])
            .run_with_stdin(INITIALIZE)
    };
    let bundle = release.join("MANIFEST.sha256.sigstore.json");
    fs::copy(out.join("fork.sigstore.json"), &bundle).unwrap();
    let r = exec();
    r.code(1).stderr_has("): provenance: built by");
    assert!(r.stdout.is_empty(), "something ran: {}", r.shown);
    let refused = w.on_sample("install", &["--config", config]);
    refused.code(1);
    assert!(
        unwrapped(&refused.stdout).contains("the certificate https://github.com/mallory/codetools"),
        "{}",
        refused.shown
    );
    w.claude(&["mcp", "get", "codetools-test"]).code(1);

    fs::copy(out.join("main.sigstore.json"), &bundle).unwrap();
    assert!(!w.opt().join("codetools/.mcp-deploy/pin.json").exists());
    exec().code(0).stdout_has("\"serverInfo\"");
    let installed = w.on_sample("install", &["--config", config]);
    installed.code(0);
    assert!(
        unwrapped(&installed.stdout).contains("built by https://github.com/acme/codetools/"),
        "{}",
        installed.shown
    );
}

/// `manifest verify DIR --trusted-builder P --trusted-root R` (a builder's own check before a
/// release is shipped, or a host's on a directory): the content and the provenance over the
/// same manifest bytes, in every format; a fork's build fails it (exit 1).
#[test]
fn manifest_verify_checks_the_provenance_beside_the_content() {
    let w = World::new();
    let release = sample_release(&w);
    let manifest = release.join("MANIFEST.sha256");
    let out = fork_and_main(&w, &manifest);
    let policy = w.write("builders.toml", POLICY);
    let root = out.join("trusted_root.json");
    let verify = |format: &str| {
        w.cmd()
            .args(["manifest", "verify"])
            .arg(&release)
            .arg("--trusted-builder")
            .arg(&policy)
            .arg("--trusted-root")
            .arg(&root)
            .args(["--format", format])
            .run()
    };
    let bundle = release.join("MANIFEST.sha256.sigstore.json");
    fs::copy(out.join("main.sigstore.json"), &bundle).unwrap();
    verify("human")
        .code(0)
        .stdout_has("files match MANIFEST.sha256")
        .stdout_has("ok: provenance: built by https://github.com/acme/codetools/");
    let json = verify("json");
    json.code(0);
    let doc: Value = serde_json::from_str(json.stdout.trim()).unwrap();
    assert_eq!(doc["ok"], true, "{}", json.shown);
    assert_eq!(doc["proofs"][0]["check"], "provenance", "{}", json.shown);
    verify("junit").code(0).stdout_has("name=\"provenance\"");
    fs::copy(out.join("fork.sigstore.json"), &bundle).unwrap();
    verify("human")
        .code(1)
        .stdout_has("FAILED: provenance: built by https://github.com/mallory/codetools/");
    let json = verify("json");
    json.code(1);
    let doc: Value = serde_json::from_str(json.stdout.trim()).unwrap();
    assert_eq!(doc["ok"], false, "{}", json.shown);
}
