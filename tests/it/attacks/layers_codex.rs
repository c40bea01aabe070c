//! Issue 20, codex: every layer codex applies to a user-scope entry, as an attacker with write
//! access to one of its files would use it. Each row sets the state up, confirms it with the
//! real codex CLI (`codex mcp get --json` shows the merged entry, or codex refuses to load at
//! all), then shows that `verify-identity --client codex` and `status` fail naming the file
//! and the key. Files under `/etc` exist only inside a private mount namespace
//! ([`World::in_private_etc`]); mcp-deploy and codex run in the same one. Before the codex
//! layer reader (`src/clients/layers/codex.rs`) every row passed verify-identity.

use std::fs;
use std::path::PathBuf;

use serde_json::Value;

use crate::harness::*;

const NAME: &str = "codetools-test";

/// A world with the sample deployment registered in codex (and only codex).
fn registered() -> World {
    let w = World::with_every_client();
    w.sample();
    w.on_sample("install", &["--server", "codetools", "--client", "codex"])
        .code(0);
    w
}

fn codex_home(w: &World) -> PathBuf {
    w.root().join("home/.codex")
}

fn user_config(w: &World) -> PathBuf {
    codex_home(w).join("config.toml")
}

/// The user config with `before` put before what install wrote and `after` after it; its
/// path.
fn around_user_config(w: &World, before: &str, after: &str) -> PathBuf {
    let file = user_config(w);
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, format!("{before}{text}{after}")).unwrap();
    file
}

/// `codex ARGS` with `etc` files in place: the oracle.
fn codex(w: &World, etc: &[(&str, &str)], args: &[&str]) -> Run {
    w.in_private_etc(etc, real_client("codex"), args).run()
}

/// What codex itself says it runs for NAME (`codex mcp get NAME --json`).
fn codex_entry(w: &World, etc: &[(&str, &str)]) -> Value {
    let r = codex(w, etc, &["mcp", "get", NAME, "--json"]);
    r.code(0);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.shown))
}

/// `verify-identity` of NAME in codex, JSON report.
fn verify_args(w: &World) -> Vec<String> {
    let opt = w.opt().join("codetools");
    let doc = w.registered();
    [
        "verify-identity",
        "--prefix",
        opt.to_str().unwrap(),
        "--expect-commit",
        CT_SHA,
        "--mcp-json",
        doc.to_str().unwrap(),
        "--name",
        NAME,
        "--client",
        "codex",
        "--json",
    ]
    .map(String::from)
    .to_vec()
}

fn verify(w: &World, etc: &[(&str, &str)]) -> Run {
    let args = verify_args(w);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    w.in_private_etc(etc, env!("CARGO_BIN_EXE_mcp-deploy"), &refs)
        .run()
}

fn status(w: &World, etc: &[(&str, &str)]) -> Run {
    let opt = w.opt();
    w.in_private_etc(
        etc,
        env!("CARGO_BIN_EXE_mcp-deploy"),
        &[
            "status",
            "--prefix",
            opt.to_str().unwrap(),
            "--name-suffix",
            "-test",
            "--server",
            "codetools",
            "--client",
            "codex",
        ],
    )
    .run()
}

/// verify-identity fails mcp-registration, its detail holding every fragment; and status
/// fails too, naming the first one.
fn fails_naming(w: &World, etc: &[(&str, &str)], want: &[&str]) {
    let r = verify(w, etc);
    r.code(1);
    let detail = r.detail("mcp-registration");
    for f in want {
        assert!(
            detail.contains(f),
            "{f:?} missing from: {detail}\n{}",
            r.shown
        );
    }
    assert!(!r.said().contains("hunter2"), "{}", r.shown);
    let s = status(w, etc);
    s.code(1);
    let all = format!("{}{}", s.said(), s.stderr);
    assert!(
        all.contains(want[0]),
        "{:?} missing from status:\n{}",
        want[0],
        s.shown
    );
    assert!(!all.contains("hunter2"), "{}", s.shown);
}

/// The plain state passes, so every row below fails because of its layer alone.
#[test]
fn codex_layers_plain_state_passes_in_the_namespace() {
    let w = registered();
    verify(&w, &[]).code(0);
}

#[test]
fn codex_system_config_merges_env_into_our_server() {
    let w = registered();
    let etc = [(
        "/etc/codex/config.toml",
        "[mcp_servers.codetools-test.env]\nNODE_OPTIONS = \"--require=/tmp/hunter2.js\"\n",
    )];
    let e = codex_entry(&w, &etc);
    assert!(e["transport"]["env"]["NODE_OPTIONS"].is_string(), "{e}");
    fails_naming(
        &w,
        &etc,
        &[
            "/etc/codex/config.toml [mcp_servers.codetools-test]",
            "env.NODE_OPTIONS",
        ],
    );
}

/// Next instance: no `env` at all, but `env_vars` passes a variable of codex's own
/// environment through, and `cwd` moves the server.
#[test]
fn codex_system_config_passes_env_vars_and_sets_cwd() {
    let w = registered();
    let etc = [(
        "/etc/codex/config.toml",
        "[mcp_servers.codetools-test]\nenv_vars = [\"LD_PRELOAD\"]\ncwd = \"/tmp\"\n",
    )];
    let e = codex_entry(&w, &etc);
    assert_eq!(e["transport"]["env_vars"][0], "LD_PRELOAD", "{e}");
    assert_eq!(e["transport"]["cwd"], "/tmp", "{e}");
    fails_naming(
        &w,
        &etc,
        &["/etc/codex/config.toml", "cwd", "env.LD_PRELOAD"],
    );
}

#[test]
fn codex_managed_config_replaces_our_command() {
    let w = registered();
    let etc = [(
        "/etc/codex/managed_config.toml",
        "[mcp_servers.codetools-test]\ncommand = \"/bin/sh\"\n",
    )];
    assert_eq!(codex_entry(&w, &etc)["transport"]["command"], "/bin/sh");
    fails_naming(
        &w,
        &etc,
        &[
            "/etc/codex/managed_config.toml [mcp_servers.codetools-test]",
            "command",
        ],
    );
}

#[test]
fn codex_managed_config_disables_our_server() {
    let w = registered();
    let etc = [(
        "/etc/codex/managed_config.toml",
        "[mcp_servers.codetools-test]\nenabled = false\n",
    )];
    assert_eq!(codex_entry(&w, &etc)["enabled"], false);
    fails_naming(
        &w,
        &etc,
        &[
            "/etc/codex/managed_config.toml [mcp_servers.codetools-test] enabled",
            "does not load",
        ],
    );
}

#[test]
fn codex_requirements_allowlist_without_our_name_drops_it() {
    let w = registered();
    let etc = [(
        "/etc/codex/requirements.toml",
        "[mcp_servers.other.identity]\ncommand = \"/bin/true\"\n",
    )];
    let e = codex_entry(&w, &etc);
    assert_eq!(e["enabled"], false, "{e}");
    assert!(
        e["disabled_reason"]
            .as_str()
            .unwrap()
            .contains("requirements"),
        "{e}"
    );
    fails_naming(
        &w,
        &etc,
        &[
            "/etc/codex/requirements.toml [mcp_servers]",
            "does not name codetools-test",
        ],
    );
}

/// Next instance: the allowlist names us, with another command as the identity.
#[test]
fn codex_requirements_identity_of_another_command_drops_it() {
    let w = registered();
    let etc = [(
        "/etc/codex/requirements.toml",
        "[mcp_servers.codetools-test.identity]\ncommand = \"/bin/true\"\n",
    )];
    assert_eq!(codex_entry(&w, &etc)["enabled"], false);
    fails_naming(
        &w,
        &etc,
        &["/etc/codex/requirements.toml", "identity.command"],
    );
}

/// One key of the wrong type outside the servers table: codex loads nothing.
#[test]
fn codex_user_config_refused_as_a_whole_by_one_wrong_type() {
    let w = registered();
    let file = around_user_config(&w, "model = 3\n", "");
    codex(&w, &[], &["mcp", "list", "--json"])
        .code(1)
        .stderr_has("failed to load");
    fails_naming(
        &w,
        &[],
        &[
            &format!("{} key model", file.display()),
            "refuses the whole configuration",
        ],
    );
}

/// Issue 35, item 1 (doubt never passed): a key whose nested type mcp-deploy does not
/// replicate (`[tui] notifications = 5`) made the reader say "not compared" — a note, and
/// verify-identity passed, exit 0 — while codex refuses the whole configuration and the agent
/// loads no server. The doubt is now put to codex itself (`codex mcp list --json`), whose
/// refusal fails the check, naming the call.
#[test]
fn codex_a_nested_key_of_the_wrong_type_fails_on_codex_own_answer() {
    let w = registered();
    around_user_config(&w, "", "\n[tui]\nnotifications = 5\n");
    codex(&w, &[], &["mcp", "list", "--json"])
        .code(1)
        .stderr_has("failed to load");
    fails_naming(
        &w,
        &[],
        &[
            "refuses its whole configuration",
            "`codex mcp list --json`",
            "exits 1",
            "tui",
        ],
    );
}

/// The same key of the right type: codex accepts the file, and its answer is the pass's
/// evidence (before, the same note passed both states alike).
#[test]
fn codex_a_nested_key_codex_accepts_passes_on_its_answer() {
    let w = registered();
    around_user_config(&w, "", "\n[tui]\nnotifications = true\n");
    codex(&w, &[], &["mcp", "list", "--json"]).code(0);
    let r = verify(&w, &[]);
    r.code(0);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("accepts its whole configuration") && detail.contains("exits 0"),
        "{}",
        r.shown
    );
    status(&w, &[]).code(0);
}

/// The doubt is put to codex once a run, however often the run reads codex's layers
/// (verify-identity's checks, then `--only-deployed`'s): codex on PATH is a wrapper that logs
/// each call and runs the real one.
#[test]
fn codex_is_asked_once_a_run() {
    let w = registered();
    around_user_config(&w, "", "\n[tui]\nnotifications = true\n");
    let log = w.root().join("codex-calls.log");
    fs::remove_file(w.bin().join("codex")).unwrap();
    write_exec(
        &w.bin().join("codex"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> {}\nexec {} \"$@\"\n",
            log.display(),
            real_client("codex").display()
        ),
    );
    let mut args = verify_args(&w);
    args.push("--only-deployed".into());
    let r = w.cmd().args(&args).run();
    assert!(
        r.detail("mcp-registration")
            .contains("accepts its whole configuration"),
        "{r}"
    );
    let calls = fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        calls.lines().filter(|l| l.contains("mcp list")).count(),
        1,
        "{calls}"
    );
}

/// Next instance: the same doubt with no codex to ask (the variable names a binary that is
/// not there): it stays a doubt, and fails, saying why it could not be settled.
#[test]
fn codex_a_doubt_with_no_codex_to_ask_fails() {
    let w = registered();
    around_user_config(&w, "", "\n[tui]\nnotifications = true\n");
    let gone = w.root().join("no-codex");
    let r = w
        .cmd()
        .env("MCP_DEPLOY_CODEX", &gone)
        .args(verify_args(&w))
        .run();
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("not compared") && detail.contains("could not ask it"),
        "{}",
        r.shown
    );
}

/// Next instance: a wrong nested type in a profile file. `codex --profile p` refuses to start;
/// the call that answers loads no profile, so the doubt is not put to it, and fails as one.
#[test]
fn codex_a_profile_doubt_is_not_settled_by_the_plain_listing() {
    let w = registered();
    fs::write(
        codex_home(&w).join("p.config.toml"),
        "[tui]\nnotifications = 5\n",
    )
    .unwrap();
    codex(&w, &[], &["--profile", "p", "mcp", "list", "--json"])
        .code(1)
        .stderr_has("failed to load");
    codex(&w, &[], &["mcp", "list", "--json"]).code(0);
    fails_naming(&w, &[], &["not compared", "p.config.toml", "tui"]);
}

/// Next instance: a bad enum value in the system file refuses every config on the host.
#[test]
fn codex_system_config_bad_enum_refuses_everything() {
    let w = registered();
    let etc = [("/etc/codex/config.toml", "sandbox_mode = \"bogus\"\n")];
    codex(&w, &etc, &["mcp", "list", "--json"])
        .code(1)
        .stderr_has("unknown variant `bogus`");
    fails_naming(&w, &etc, &["/etc/codex/config.toml key sandbox_mode"]);
}

/// Next instance: TOML codex cannot parse in the managed file.
#[test]
fn codex_managed_config_bad_toml_refuses_everything() {
    let w = registered();
    let etc = [("/etc/codex/managed_config.toml", "[mcp_servers.x\n")];
    codex(&w, &etc, &["mcp", "list", "--json"]).code(1);
    fails_naming(
        &w,
        &etc,
        &["/etc/codex/managed_config.toml", "not valid TOML at line 1"],
    );
}

/// Next instance: a legacy `profile = "x"` selector, which codex 0.171.0 refuses outright.
#[test]
fn codex_legacy_profile_selector_refuses_the_user_config() {
    let w = registered();
    let file = around_user_config(&w, "profile = \"x\"\n", "");
    codex(&w, &[], &["mcp", "list", "--json"])
        .code(1)
        .stderr_has("legacy `profile");
    fails_naming(&w, &[], &[&format!("{} key profile", file.display())]);
}

/// A profile file `$CODEX_HOME/p.config.toml` is layered on the user config by
/// `codex --profile p`.
#[test]
fn codex_profile_file_changes_our_args() {
    let w = registered();
    fs::write(
        codex_home(&w).join("p.config.toml"),
        "[mcp_servers.codetools-test]\nargs = [\"evil\"]\n",
    )
    .unwrap();
    let r = codex(&w, &[], &["--profile", "p", "mcp", "get", NAME, "--json"]);
    r.code(0);
    let e: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(e["transport"]["args"][0], "evil", "{e}");
    fails_naming(
        &w,
        &[],
        &["(codex --profile p) [mcp_servers.codetools-test]", "args"],
    );
}

/// Bounded readers: a 50 MiB system layer and a pathologically deep one, under a 1 GiB
/// address-space limit, end in a report, not a crash.
#[test]
fn codex_huge_and_deep_layers_stay_bounded() {
    let w = registered();
    let mut big = String::with_capacity(50 << 20);
    let mut i = 0u64;
    while big.len() < 50 << 20 {
        big.push_str(&format!("k{i} = \"{}\"\n", "x".repeat(100)));
        i += 1;
    }
    let deep = format!("[{}]\nx = 1\n", vec!["a"; 100_000].join("."));
    for text in [big.as_str(), deep.as_str()] {
        let prlimit = system_tool("prlimit");
        let mut args = vec![
            "--as=1073741824".to_string(),
            env!("CARGO_BIN_EXE_mcp-deploy").to_string(),
        ];
        args.extend(verify_args(&w));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = w
            .in_private_etc(&[("/etc/codex/config.toml", text)], &prlimit, &refs)
            .run();
        // The big one: unknown keys (a doubt, put to codex); the deep one: TOML codex's
        // reader refuses too. Either way a report, never a crash.
        assert!(matches!(r.code, 0 | 1), "{}", r.shown);
        assert!(r.said().contains("mcp-registration"), "{}", r.shown);
    }
}

/// The main rules again with each supported release of compat/versions.txt as the oracle
/// (issue 20 across issue 21's range), one test per release and rule so that a failure names
/// the release. The reader follows the newest codex; where an older one does not obey a
/// layer, the row pins what that release does and that the verdict still fails (errs toward
/// failing), never that it passes a state the release runs differently.
mod across {
    use super::*;

    fn codex_of(release: &str) -> PathBuf {
        match release {
            "pinned" => real_client("codex"),
            v => compat_client("codex", v),
        }
    }

    /// A world with `release` on PATH and the sample registered through it.
    fn registered_with(release: &str) -> World {
        let w = World::with_real_claude();
        std::os::unix::fs::symlink(codex_of(release), w.bin().join("codex")).unwrap();
        w.sample();
        w.on_sample("install", &["--server", "codetools", "--client", "codex"])
            .code(0);
        verify(&w, &[]).code(0);
        w
    }

    fn entry(w: &World, release: &str, etc: &[(&str, &str)]) -> Value {
        let r = w
            .in_private_etc(etc, codex_of(release), &["mcp", "get", NAME, "--json"])
            .run();
        r.code(0);
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.shown))
    }

    /// 0.45.0 reads neither `/etc/codex/config.toml` nor `/etc/codex/requirements.toml` (its
    /// binary names only `/etc/codex/managed_config.toml`); 0.100.0 on reads both.
    fn has_system_layers(release: &str) -> bool {
        release != "0.45.0"
    }

    pub(super) fn system_config_env(release: &str) {
        let w = registered_with(release);
        let etc = [(
            "/etc/codex/config.toml",
            "[mcp_servers.codetools-test.env]\nNODE_OPTIONS = \"--require=/tmp/hunter2.js\"\n",
        )];
        let e = entry(&w, release, &etc);
        assert_eq!(
            e["transport"]["env"]["NODE_OPTIONS"].is_string(),
            has_system_layers(release),
            "codex {release}: {e}"
        );
        fails_naming(
            &w,
            &etc,
            &[
                "/etc/codex/config.toml [mcp_servers.codetools-test]",
                "env.NODE_OPTIONS",
            ],
        );
    }

    pub(super) fn requirements_allowlist(release: &str) {
        let w = registered_with(release);
        let etc = [(
            "/etc/codex/requirements.toml",
            "[mcp_servers.other.identity]\ncommand = \"/bin/true\"\n",
        )];
        let e = entry(&w, release, &etc);
        // 0.45.0 prints no `enabled` at all: it has no way to turn a server off.
        assert_eq!(
            e["enabled"] == false,
            has_system_layers(release),
            "codex {release}: {e}"
        );
        fails_naming(
            &w,
            &etc,
            &[
                "/etc/codex/requirements.toml [mcp_servers]",
                "does not name codetools-test",
            ],
        );
    }

    pub(super) fn managed_config_command(release: &str) {
        let w = registered_with(release);
        let etc = [(
            "/etc/codex/managed_config.toml",
            "[mcp_servers.codetools-test]\ncommand = \"/bin/sh\"\n",
        )];
        let e = entry(&w, release, &etc);
        assert_eq!(e["transport"]["command"], "/bin/sh", "codex {release}: {e}");
        fails_naming(
            &w,
            &etc,
            &[
                "/etc/codex/managed_config.toml [mcp_servers.codetools-test]",
                "command",
            ],
        );
    }

    pub(super) fn wrong_type_refuses_the_file(release: &str) {
        let w = registered_with(release);
        let file = around_user_config(&w, "model = 3\n", "");
        w.program(codex_of(release))
            .args(["mcp", "list", "--json"])
            .run()
            .code(1)
            .stderr_has("failed to load");
        fails_naming(
            &w,
            &[],
            &[
                &format!("{} key model", file.display()),
                "refuses the whole configuration",
            ],
        );
    }

    macro_rules! releases {
        ($($m:ident: $v:expr),* $(,)?) => {$(
            mod $m {
                #[test]
                fn system_config_env_merges_into_the_entry() {
                    super::system_config_env($v)
                }
                #[test]
                fn requirements_allowlist_without_the_name_drops_it() {
                    super::requirements_allowlist($v)
                }
                #[test]
                fn managed_config_replaces_the_command() {
                    super::managed_config_command($v)
                }
                #[test]
                fn one_wrong_type_refuses_the_whole_file() {
                    super::wrong_type_refuses_the_file($v)
                }
            }
        )*};
    }

    releases!(v0_45_0: "0.45.0", v0_100_0: "0.100.0", pinned: "pinned");
}
