//! Issue 37: a checked launch (`mcp-deploy exec`). The sample installed with the real claude
//! (which records the pin), a manifest made for its codetools release; then each attack on
//! what the agent would start, between the install's verification and a start.

use std::fs;
use std::path::PathBuf;

use crate::harness::*;

const INITIALIZE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n";

/// The sample laid out in `w`, codetools' release given a manifest: that release's directory.
fn sample_with_a_manifest(w: &World) -> PathBuf {
    w.sample();
    let release = fs::read_dir(w.opt().join("codetools/releases"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    w.run(&["manifest", "create", release.to_str().unwrap()])
        .code(0);
    release
}

/// A declaration of codetools alone, `"launch": "checked"`, in `w`: its path.
fn checked_declaration(w: &World) -> PathBuf {
    w.declare_codetools(serde_json::json!({"args": ["mcp", "serve"]}));
    let cfg = w.root().join("servers.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&cfg).unwrap()).unwrap();
    doc["servers"][0]["launch"] = "checked".into();
    fs::write(&cfg, doc.to_string()).unwrap();
    cfg
}

/// The sample with a manifest in codetools' release, installed (so pinned); the release dir.
fn pinned() -> (World, PathBuf) {
    let w = World::with_real_claude();
    let release = sample_with_a_manifest(&w);
    w.on_sample("install", &[]).code(0);
    assert!(w.opt().join("codetools/.mcp-deploy/pin.json").is_file());
    (w, release)
}

fn exec(w: &World) -> Cmd<'_> {
    w.cmd()
        .args(["exec", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--", "mcp", "serve"])
}

fn refused(r: &Run, check: &str) {
    r.code(1);
    assert!(r.stdout.is_empty(), "something ran: {}", r.shown);
    r.stderr_has("mcp-deploy exec: refused to start codetools")
        .stderr_has(&format!("): {check}: "));
}

/// The pinned release starts: the server answers the handshake; what the client passes
/// beyond the declaration and the allowlist is dropped, and named: a `NODE_OPTIONS`
/// preload (the marker it would write is never written) and an `LD_PRELOAD`.
#[test]
fn a_checked_launch_runs_the_pinned_server_without_what_it_was_not_declared() {
    let (w, _) = pinned();
    let marker = w.root().join("preloaded");
    let preload = w.write(
        "evil.js",
        format!("require('fs').writeFileSync({:?}, 'ran')", marker),
    );
    let r = exec(&w)
        .env("NODE_OPTIONS", format!("--require={}", preload.display()))
        .env("PYTHONPATH", "/tmp/evil")
        .run_with_stdin(INITIALIZE);
    r.code(0)
        .stdout_has("\"serverInfo\"")
        .stderr_has("not passed to the server (neither declared nor inherited)")
        .stderr_has("NODE_OPTIONS")
        .stderr_has("PYTHONPATH");
    assert!(!marker.exists(), "the preload ran");
}

/// A byte changed in the release's executable after install verified it: refused at
/// launch, naming the file and both digests, nothing started, a ledger line.
#[test]
fn a_byte_changed_in_the_executable_is_refused_at_launch() {
    let (w, release) = pinned();
    let exe = release.join("bin/codetools");
    let mut text = fs::read(&exe).unwrap();
    text.extend_from_slice(b"\n// changed\n");
    fs::write(&exe, text).unwrap();
    let r = exec(&w).run_with_stdin(INITIALIZE);
    refused(&r, "content");
    r.stderr_has(&format!("{} has SHA-256", exe.display()));
    let ledger = fs::read_to_string(w.root().join("home/.local/state/mcp-deploy/ledger.ndjson"))
        .unwrap_or_default();
    assert!(ledger.contains("\"launch refused\""), "{ledger}");
}

/// The manifest rewritten to match the changed executable (whoever can change a release
/// can): the pin's digest of the manifest refuses it.
#[test]
fn a_manifest_rewritten_over_a_changed_executable_is_refused() {
    let (w, release) = pinned();
    fs::write(release.join("bin/codetools"), "#!/bin/sh\necho evil\n").unwrap();
    w.run(&["manifest", "create", release.to_str().unwrap()])
        .code(0);
    refused(&exec(&w).run_with_stdin(INITIALIZE), "manifest");
}

/// `current` switched to another release, whole and with its own manifest, that no install
/// or promote verified: refused on its commit.
#[test]
fn current_switched_to_an_unpinned_release_is_refused() {
    let (w, release) = pinned();
    let other = release.with_file_name("b".repeat(40));
    fs::create_dir_all(other.join("bin")).unwrap();
    fs::copy(release.join("bin/codetools"), other.join("bin/codetools")).unwrap();
    fs::write(other.join("VERSION"), format!("{}\n", "b".repeat(40))).unwrap();
    w.run(&["manifest", "create", other.to_str().unwrap()])
        .code(0);
    let current = w.opt().join("codetools/current");
    let next = w.opt().join("codetools/current.next");
    std::os::unix::fs::symlink(format!("releases/{}", "b".repeat(40)), &next).unwrap();
    fs::rename(&next, &current).unwrap();
    fs::write(
        w.opt().join("codetools/VERSION"),
        format!("{}\n", "b".repeat(40)),
    )
    .ok();
    refused(&exec(&w).run_with_stdin(INITIALIZE), "commit");
}

/// No pin (never installed by the deploying user), or one that another user could have
/// written: refused, saying what to do.
#[test]
fn a_missing_or_writable_pin_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (w, _) = pinned();
    let pin = w.opt().join("codetools/.mcp-deploy/pin.json");
    fs::set_permissions(&pin, fs::Permissions::from_mode(0o666)).unwrap();
    refused(&exec(&w).run_with_stdin(INITIALIZE), "pin");
    fs::remove_file(&pin).unwrap();
    let r = exec(&w).run_with_stdin(INITIALIZE);
    refused(&r, "pin");
    r.stderr_has("help: run `mcp-deploy install`");
}

/// Arguments other than the declared ones (a client layer appending one): refused.
#[test]
fn arguments_other_than_the_declared_ones_are_refused() {
    let (w, _) = pinned();
    let r = w
        .cmd()
        .args(["exec", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--", "mcp", "serve", "--evil"])
        .run_with_stdin(INITIALIZE);
    refused(&r, "args");
}

/// The executable swapped for another file between the hash and the exec (a pause at the
/// checkpoint after the checks, a rename over the path): the swapped-in file never runs. The
/// interpreter is handed the hashed script as `/dev/fd/N`; node resolves that to the real
/// path, finds it replaced ("... (deleted)") and exits: the launch fails closed (an ELF server
/// would run from its own handle, the original).
#[test]
fn the_executable_swapped_after_the_hash_does_not_run() {
    needs_crash_checkpoints("exec-checked");
    let (w, release) = pinned();
    let marker = w.root().join("swapped-in-ran");
    let exe = release.join("bin/codetools");
    let evil = w.write(
        "evil-codetools",
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    fs::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let resume = w.resume_file("exec-checked");
    let mut child = exec(&w)
        .env("MCP_DEPLOY_PAUSE_AT", "exec-checked")
        .env("MCP_DEPLOY_RESUME", &resume)
        .command_for_test();
    child.stdin(std::process::Stdio::piped());
    child.stdout(std::process::Stdio::piped());
    child.stderr(std::process::Stdio::piped());
    let mut child = child.spawn().unwrap();
    let err = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(err));
    let paused = lines
        .by_ref()
        .take(20)
        .any(|l| l.is_ok_and(|l| l.contains("pausing at checkpoint exec-checked")));
    assert!(paused);
    fs::rename(&evil, &exe).unwrap();
    fs::write(&resume, "").unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(INITIALIZE);
    }
    let out = child.wait_with_output().unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(!marker.exists(), "the swapped-in file ran");
    assert!(
        !out.status.success() && rest.join("\n").contains("(deleted)"),
        "{:?}\n{}",
        out.status,
        rest.join("\n")
    );
}

/// The declaration's `"launch": "checked"`: install registers `mcp-deploy exec …` as the
/// server's command (issue 37, part 2), and the real claude starts the server through it —
/// `claude mcp list` connects (its health check runs the handshake through the launcher).
/// verify-identity passes it, saying it is checked at every launch. Then a byte changed in the
/// release: claude can no longer start it (the launcher refuses), and the refusal is in the
/// ledger; verify-identity, which checks the registration, still passes, while status's and
/// verify's `content` check (with a manifest) names the changed file.
#[test]
fn a_checked_launch_is_registered_and_claude_starts_the_server_through_it() {
    let w = World::with_real_claude();
    let release = sample_with_a_manifest(&w);
    let cfg = checked_declaration(&w);
    let config = cfg.to_str().unwrap();
    w.on_sample("install", &["--config", config]).code(0);
    let launcher = fs::canonicalize(env!("CARGO_BIN_EXE_mcp-deploy")).unwrap();
    let got = w.claude(&["mcp", "get", "codetools-test"]);
    got.code(0)
        .stdout_has(&format!("Command: {}", launcher.display()))
        .stdout_has(&format!(
            "Args: exec --prefix {} --server codetools --config {} -- mcp serve",
            w.opt().join("codetools").display(),
            fs::canonicalize(&cfg).unwrap().display()
        ));
    let listed = w.claude(&["mcp", "list"]);
    assert!(
        listed
            .stdout
            .lines()
            .any(|l| l.starts_with("codetools-test: ") && l.contains("Connected")),
        "{}",
        listed.shown
    );
    let verified = w
        .cmd()
        .args(["verify-identity", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--name-suffix", "-test", "--config", config])
        .args([
            "--expect-commit",
            "c0de7001c0de7001c0de7001c0de7001c0de7001",
        ])
        .run();
    verified.code(0);
    assert!(
        unwrapped(&verified.stdout).contains(&format!(
            "checked at every launch by {}",
            launcher.display()
        )),
        "{}",
        verified.shown
    );

    // One state, one verdict: status, a no-op install and reconcile agree with verify-identity.
    let codetools = w.opt().join("codetools");
    let at = ["--name-suffix", "-test", "--config", config];
    w.cmd()
        .args(["status", "--prefix"])
        .arg(&codetools)
        .args(at)
        .run()
        .code(0);
    let again = w.on_sample("install", &["--config", config]);
    again.code(0);
    assert!(
        !unwrapped(&again.stdout).contains("updated"),
        "{}",
        again.shown
    );
    w.on_sample("reconcile", &["--config", config]).code(0);
    // The policy admits exactly the launcher's command line.
    let policy = w
        .cmd()
        .args(["policy", "--root"])
        .arg(w.opt())
        .args(["--config", config])
        .run();
    policy.code(0).stdout_has(&format!(
        "{{\"serverCommand\":[\"{}\",\"exec\",\"--prefix\",\"{}\"",
        launcher.display(),
        codetools.display()
    ));

    let exe = release.join("bin/codetools");
    let mut text = fs::read(&exe).unwrap();
    text.extend_from_slice(b"\n// changed\n");
    fs::write(&exe, text).unwrap();
    let listed = w.claude(&["mcp", "list"]);
    assert!(
        listed
            .stdout
            .lines()
            .any(|l| l.starts_with("codetools-test: ") && l.contains("Failed")),
        "{}",
        listed.shown
    );
    let ledger =
        fs::read_to_string(w.root().join("home/.local/state/mcp-deploy/ledger.ndjson")).unwrap();
    assert!(ledger.contains("\"launch refused\""), "{ledger}");
}

/// A launcher another user could replace (a copy of mcp-deploy in a directory anyone may
/// write into): the registration it makes fails `mcp-registration`, naming the directory —
/// whoever can swap the launcher decides what every start runs.
#[test]
fn a_launcher_another_user_could_replace_fails_verification() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::with_real_claude();
    w.sample();
    let lax = w.root().join("lax");
    fs::create_dir(&lax).unwrap();
    fs::set_permissions(&lax, fs::Permissions::from_mode(0o777)).unwrap();
    let copy = lax.join("mcp-deploy");
    fs::copy(env!("CARGO_BIN_EXE_mcp-deploy"), &copy).unwrap();
    let cfg = checked_declaration(&w);
    let r = w
        .program(&copy)
        .args(["install", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--name-suffix", "-test", "--config", cfg.to_str().unwrap()])
        .run();
    r.code(1);
    let said = unwrapped(&r.stdout);
    assert!(
        said.contains(&format!(
            "the launcher {} can be replaced by someone other than root or the deploying user: {} \
             is writable by group or others (mode 777)",
            copy.display(),
            lax.display()
        )),
        "{}",
        r.shown
    );
}

/// Declared args with a `${VAR}` reference: a client expands it from its environment before it
/// starts the launcher (claude does), or passes it as written; both are the declared args. A
/// value the variable does not hold is refused.
#[test]
fn declared_args_are_compared_as_the_client_expands_them() {
    let w = World::with_real_claude();
    sample_with_a_manifest(&w);
    let cfg = w.declare_codetools(serde_json::json!({"args": ["mcp", "serve", "${WHERE}"]}));
    let config = cfg.to_str().unwrap();
    w.cmd()
        .args(["install", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--name-suffix", "-test", "--config", config])
        .run()
        .code(0);
    let exec_with = |arg: &str| {
        w.cmd()
            .args(["exec", "--prefix"])
            .arg(w.opt().join("codetools"))
            .args(["--config", config, "--", "mcp", "serve", arg])
            .env("WHERE", "/srv/x")
            .run_with_stdin(INITIALIZE)
    };
    exec_with("/srv/x").code(0).stdout_has("\"serverInfo\"");
    exec_with("${WHERE}").code(0).stdout_has("\"serverInfo\"");
    refused(&exec_with("/elsewhere"), "args");
}

/// The pin of a prefix layout lives inside its release (orchestrata's prefix is its release
/// directory): it is what mcp-deploy writes, not content. Before, the install after the one
/// that pinned it failed `content` with "1 added (.mcp-deploy/pin.json)"; another file there,
/// or an executable pin, is still content.
#[test]
fn the_pin_inside_a_prefix_layout_release_is_not_content() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::with_real_claude();
    w.sample();
    let orchestrata = w.opt().join("orchestrata");
    w.run(&["manifest", "create", orchestrata.to_str().unwrap()])
        .code(0);
    w.on_sample("install", &[]).code(0);
    let pin = orchestrata.join(".mcp-deploy/pin.json");
    assert!(pin.is_file());
    w.on_sample("install", &[]).code(0);
    w.write("opt/orchestrata/.mcp-deploy/other", "x");
    let r = w.on_sample("install", &[]);
    r.code(1);
    assert!(
        unwrapped(&r.stdout).contains("1 added (.mcp-deploy/other)"),
        "{}",
        r.shown
    );
    fs::remove_file(orchestrata.join(".mcp-deploy/other")).unwrap();
    fs::set_permissions(&pin, fs::Permissions::from_mode(0o755)).unwrap();
    let r = w.on_sample("install", &[]);
    r.code(1);
    assert!(
        unwrapped(&r.stdout).contains(".mcp-deploy/pin.json"),
        "{}",
        r.shown
    );
}

/// `--launch checked` on the command line, with the built-in declaration: install registers
/// the launcher; verify-identity and status given the same pass it, and without it fail
/// saying which `--launch` the entry was registered with; a promote with it pins the new
/// release, which claude then starts through the launcher; `--launch direct` puts the
/// declared command back.
#[test]
fn the_launch_flag_registers_checks_and_promotes_a_checked_launch() {
    let w = World::with_real_claude();
    sample_with_a_manifest(&w);
    let codetools = w.opt().join("codetools");
    w.on_sample("install", &["--launch", "checked"]).code(0);
    w.claude(&["mcp", "get", "codetools-test"])
        .code(0)
        .stdout_has(&format!(
            "Args: exec --prefix {} --server codetools -- ",
            codetools.display()
        ));
    let verify = |commit: &str, extra: &[&str]| {
        w.cmd()
            .args(["verify-identity", "--prefix"])
            .arg(&codetools)
            .args(["--name-suffix", "-test", "--expect-commit", commit])
            .args(extra)
            .run()
    };
    let status = |extra: &[&str]| {
        w.cmd()
            .args(["status", "--prefix"])
            .arg(&codetools)
            .args(["--name-suffix", "-test"])
            .args(extra)
            .run()
    };
    let hint = "registered to start through `mcp-deploy exec` (a checked launch): check it with \
                --launch checked";
    let v = verify(CT_SHA, &[]);
    v.code(1);
    assert!(unwrapped(&v.stdout).contains(hint), "{}", v.shown);
    let s = status(&[]);
    s.code(1);
    assert!(unwrapped(&s.stdout).contains(hint), "{}", s.shown);
    let v = verify(CT_SHA, &["--launch", "checked"]);
    v.code(0);
    assert!(
        unwrapped(&v.stdout).contains("checked at every launch by"),
        "{}",
        v.shown
    );
    status(&["--launch", "checked"]).code(0);
    // A reconcile without the flag (a timer's) does not undo the checked launch: it fails,
    // saying which flag, and the entry stays the launcher.
    let r = w.on_sample("reconcile", &[]);
    r.code(1);
    assert!(unwrapped(&r.stdout).contains(hint), "{}", r.shown);
    w.claude(&["mcp", "get", "codetools-test"])
        .code(0)
        .stdout_has("Args: exec --prefix");
    w.on_sample("reconcile", &["--launch", "checked"]).code(0);

    // A promote given the same flag keeps the checked launch and pins the new release.
    let new = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let release = crate::promote::add_sample_release(&w, new);
    w.run(&["manifest", "create", release.to_str().unwrap()])
        .code(0);
    // Without the flag, the promote is refused before anything switches: it would register a
    // direct launch over the checked one.
    let promote = |extra: &[&str]| {
        w.cmd()
            .args(["promote", "--prefix"])
            .arg(&codetools)
            .args(["--release", new, "--name-suffix", "-test"])
            .args(extra)
            .run()
    };
    let refused = promote(&[]);
    refused.code(1);
    assert!(
        unwrapped(&refused.stdout).contains(
            "claude starts codetools-test through `mcp-deploy exec` (a checked launch), which \
             this promote would change: give --launch checked"
        ),
        "{}",
        refused.shown
    );
    assert!(
        fs::read_link(codetools.join("current"))
            .unwrap()
            .ends_with(CT_SHA),
        "current switched"
    );
    promote(&["--launch", "checked"]).code(0);
    let pin = fs::read_to_string(codetools.join(".mcp-deploy/pin.json")).unwrap();
    assert!(pin.contains(new), "{pin}");
    let listed = w.claude(&["mcp", "list"]);
    assert!(
        listed
            .stdout
            .lines()
            .any(|l| l.starts_with("codetools-test: ") && l.contains("Connected")),
        "{}",
        listed.shown
    );
    // Checked where a direct launch is registered: the other step is named.
    w.cmd()
        .args(["install", "--prefix"])
        .arg(&codetools)
        .args(["--name-suffix", "-test", "--launch", "direct"])
        .run()
        .code(0);
    verify(new, &[]).code(0);
    let v = verify(new, &["--launch", "checked"]);
    v.code(1);
    assert!(
        unwrapped(&v.stdout)
            .contains("registered to start directly, not through `mcp-deploy exec`"),
        "{}",
        v.shown
    );
}

/// The agents themselves start the server through the launcher and hand its tools to the
/// model: a real `claude -p` session and a real `codex exec` session, each against a model API
/// stand-in on a loopback port that records what it was sent. Installed with `--launch
/// checked`, each request lists the sample's `hello` tool; after a byte of the release's
/// executable changes, the launcher refuses, the tool is gone from both sessions, and the
/// ledger has the refusals.
#[test]
fn claude_and_codex_sessions_list_the_tools_of_a_server_they_start_through_the_launcher() {
    let w = World::with_real_claude();
    std::os::unix::fs::symlink(real_client("codex"), w.bin().join("codex")).unwrap();
    let release = sample_with_a_manifest(&w);
    w.on_sample(
        "install",
        &["--launch", "checked", "--client", "claude,codex"],
    )
    .code(0);
    let api = ModelApi::start();
    let work = w.root().join("work");
    fs::create_dir_all(&work).unwrap();
    // What each session handed the model: (claude's tools, codex's tools).
    let sessions = || {
        api.clear();
        w.program(real_client("claude"))
            .args(["-p", "list your tools"])
            .env("ANTHROPIC_BASE_URL", api.url())
            .env("ANTHROPIC_API_KEY", "mcp-deploy-test-not-a-key")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("MCP_TIMEOUT", "10000")
            .current_dir(&work)
            .run();
        let claude = api.tools();
        api.clear();
        let provider = format!(
            "model_providers.mock={{name=\"mock\",base_url=\"{}/v1\",wire_api=\"responses\",\
             env_key=\"MOCK_API_KEY\",request_max_retries=0,stream_max_retries=0,\
             supports_websockets=false}}",
            api.url()
        );
        w.program(real_client("codex"))
            .args(["exec", "--skip-git-repo-check", "-c", "model=mock"])
            .args([
                "-c",
                "model_provider=mock",
                "-c",
                &provider,
                "list your tools",
            ])
            .env("MOCK_API_KEY", "mcp-deploy-test-not-a-key")
            .current_dir(&work)
            .run();
        (claude, api.tools())
    };
    // claude names the tool mcp__<server>__<tool>; codex puts it in the namespace
    // mcp__<server>, its '-' made '_'.
    let (claude, codex) = sessions();
    assert!(
        claude.iter().any(|t| t == "mcp__codetools-test__hello"),
        "claude was not handed the tool: {claude:?}"
    );
    assert!(
        codex.iter().any(|t| t == "mcp__codetools_test__hello"),
        "codex was not handed the tool: {codex:?}"
    );

    let exe = release.join("bin/codetools");
    let mut text = fs::read(&exe).unwrap();
    text.extend_from_slice(b"\n// changed\n");
    fs::write(&exe, text).unwrap();
    let (claude, codex) = sessions();
    for (client, handed) in [("claude", &claude), ("codex", &codex)] {
        assert!(
            !handed.is_empty() && !handed.iter().any(|t| t.ends_with("__hello")),
            "{client} was handed the changed server's tool, or sent nothing: {handed:?}"
        );
    }
    let ledger =
        fs::read_to_string(w.root().join("home/.local/state/mcp-deploy/ledger.ndjson")).unwrap();
    assert!(
        ledger.matches("\"launch refused\"").count() >= 2,
        "{ledger}"
    );
}

/// A declaration that names a trust policy (`trusted_signers`): the signature must vouch for
/// the release at every start, and then it stands in for a pin no install recorded. An
/// unsigned manifest, one re-signed by a key the policy does not list, and a policy another
/// user could rewrite are each refused at launch.
#[test]
fn a_signed_release_is_vouched_for_at_launch_by_the_declared_trust_policy() {
    use crate::signatures::{ed25519, public, sign, NS, PRINCIPAL};
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let release = sample_with_a_manifest(&w);
    let keys = w.root().join("keys");
    fs::create_dir_all(&keys).unwrap();
    let builder = ed25519(&keys, "builder");
    let stranger = ed25519(&keys, "stranger");
    let policy = w.write(
        "allowed_signers",
        format!("{PRINCIPAL} {}\n", public(&builder)),
    );
    let cfg = checked_declaration(&w);
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&cfg).unwrap()).unwrap();
    doc["servers"][0]["trusted_signers"] = policy.to_str().unwrap().into();
    fs::write(&cfg, doc.to_string()).unwrap();
    let exec = || {
        w.cmd()
            .args(["exec", "--prefix"])
            .arg(w.opt().join("codetools"))
            .args(["--config", cfg.to_str().unwrap(), "--", "mcp", "serve"])
            .run_with_stdin(INITIALIZE)
    };
    let manifest = release.join("MANIFEST.sha256");
    // Unsigned: the declared policy does not vouch, and there is no pin either.
    refused(&exec(), "signature");
    sign(&builder, NS, &manifest);
    assert!(!w.opt().join("codetools/.mcp-deploy/pin.json").exists());
    exec().code(0).stdout_has("\"serverInfo\"");
    // Re-signed by a key the policy does not list.
    sign(&stranger, NS, &manifest);
    let r = exec();
    refused(&r, "signature");
    r.stderr_has(policy.to_str().unwrap());
    // The policy anyone may rewrite vouches for nothing.
    sign(&builder, NS, &manifest);
    // (one of the files the declaration was read from: refused as the declaration is)
    fs::set_permissions(&policy, fs::Permissions::from_mode(0o666)).unwrap();
    let r = exec();
    refused(&r, "declaration");
    r.stderr_has(&format!(
        "{} is writable by group or others",
        policy.display()
    ));
    fs::set_permissions(&policy, fs::Permissions::from_mode(0o644)).unwrap();
    exec().code(0);
}

/// The launcher reads the declaration the registration names at every start: a declaration
/// or template file another user could rewrite (to declare `NODE_OPTIONS`, say) would decide
/// what starts. Either is refused at launch and fails verify-identity, naming the file.
#[test]
fn a_declaration_or_template_others_could_rewrite_is_refused_at_launch_and_fails_verify() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::with_real_claude();
    sample_with_a_manifest(&w);
    let template = w.write(
        "codetools.json",
        r#"{"mcpServers": {"{{name}}": {"command": "{{prefix}}/bin/codetools", "args": ["mcp", "serve"]}}}"#,
    );
    let cfg = w.write(
        "servers.json",
        serde_json::json!({"servers": [{"name": "codetools", "prefix": "/opt/codetools",
            "layout": "release", "template": "codetools.json", "launch": "checked"}]})
        .to_string(),
    );
    let config = cfg.to_str().unwrap();
    w.on_sample("install", &["--config", config]).code(0);
    let exec = || {
        w.cmd()
            .args(["exec", "--prefix"])
            .arg(w.opt().join("codetools"))
            .args(["--config", config, "--", "mcp", "serve"])
            .run_with_stdin(INITIALIZE)
    };
    let verify = || {
        w.cmd()
            .args(["verify-identity", "--prefix"])
            .arg(w.opt().join("codetools"))
            .args(["--name-suffix", "-test", "--config", config])
            .args(["--expect-commit", CT_SHA])
            .run()
    };
    exec().code(0).stdout_has("\"serverInfo\"");
    verify().code(0);
    for file in [&cfg, &template] {
        fs::set_permissions(file, fs::Permissions::from_mode(0o666)).unwrap();
        let r = exec();
        refused(&r, "declaration");
        r.stderr_has(&file.display().to_string());
        let v = verify();
        v.code(1);
        assert!(
            unwrapped(&v.stdout).contains("can be rewritten by someone other than root"),
            "{}",
            v.shown
        );
        fs::set_permissions(file, fs::Permissions::from_mode(0o644)).unwrap();
    }
    exec().code(0);
}
