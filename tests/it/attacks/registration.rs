//! Attacks on the registration: a good install through the real claude CLI, then one
//! mutation of what an agent would run — the user-scope entry in `.claude.json` (through
//! claude itself or by writing the JSON), the flat document, another scope, the release's
//! links — and `verify-identity` must exit 1 with the named check failed, its evidence shown,
//! and no secret value anywhere in its output.
//!
//! Every row passed (exit 0) before issue 10: the old check compared only the document's
//! command containment and args, or an http entry's scheme, host, port and path.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::harness::*;

/// A value that must never be printed: rows that inject a value inject this one.
const SECRET: &str = "--require=/tmp/evil-hunter2.js";

/// The good installed state a row starts from.
#[derive(Clone, Copy)]
enum Base {
    /// The built-in codetools (`bin/codetools mcp serve`), as `codetools-test`.
    Stdio,
    /// codetools declared with `env: {CODETOOLS_TOKEN: ${CODETOOLS_TOKEN}}`.
    StdioEnv,
    /// An http server `webby`, url with a query, an Authorization header reference.
    Http,
    /// The built-in codetools whose release's own `bin/codetools` is a link to
    /// `../lib/main` (next to a `lib/helper`), with a `MANIFEST.sha256`.
    LinkedRelease,
}

/// One installed world and what a mutation needs to know about it.
struct Ctx {
    w: World,
    /// The registered name.
    name: String,
    /// The verified prefix.
    prefix: PathBuf,
    sha: &'static str,
    /// `--config FILE` when the base is not the built-in declaration.
    config: Option<PathBuf>,
}

impl Ctx {
    fn install(base: Base) -> Ctx {
        let w = World::with_real_claude();
        let opt = w.sample();
        let (name, prefix, sha, config) = match base {
            Base::Stdio => ("codetools-test", opt.join("codetools"), CT_SHA, None),
            Base::StdioEnv => {
                let cfg = w.declare_codetools(json!({"args": ["mcp", "serve"],
                    "env": {"CODETOOLS_TOKEN": "${CODETOOLS_TOKEN}"}}));
                ("codetools-test", opt.join("codetools"), CT_SHA, Some(cfg))
            }
            Base::Http => {
                let cfg = w.root().join("servers.json");
                fs::write(
                    &cfg,
                    json!({"servers": [{"name": "webby", "prefix": "/opt/webby",
                        "layout": "prefix", "entry": {"type": "http",
                        "url": "http://127.0.0.1:9/mcp?tenant=a",
                        "headers": {"Authorization": "Bearer ${WEBBY_TOKEN}"}}}]})
                    .to_string(),
                )
                .unwrap();
                let prefix = opt.join("webby");
                fs::create_dir_all(&prefix).unwrap();
                fs::write(prefix.join("VERSION"), format!("{OR_SHA}\n")).unwrap();
                ("webby-test", prefix, OR_SHA, Some(cfg))
            }
            Base::LinkedRelease => {
                let prefix = opt.join("codetools");
                let release = prefix.join("releases").join(CT_SHA);
                fs::create_dir_all(release.join("lib")).unwrap();
                fs::rename(release.join("bin/codetools"), release.join("lib/main")).unwrap();
                symlink("../lib/main", release.join("bin/codetools")).unwrap();
                write_exec(&release.join("lib/helper"), "#!/bin/sh\nexit 0\n");
                w.run(&["manifest", "create", release.to_str().unwrap()])
                    .code(0);
                ("codetools-test", prefix, CT_SHA, None)
            }
        };
        let mut args = vec!["--server"];
        let server = name.trim_end_matches("-test");
        args.push(server);
        if let Some(c) = &config {
            args.extend(["--config", c.to_str().unwrap()]);
        }
        if name == "webby-test" {
            // Nothing answers at port 9: these attacks are on the registration, and the
            // handshake gate has its own (remote_handshake::).
            args.push("--no-handshake");
        }
        w.on_sample("install", &args).code(0);
        Ctx {
            w,
            name: name.to_string(),
            prefix,
            sha,
            config,
        }
    }

    fn verify(&self, extra: &[&str]) -> Run {
        let mut args = vec!["--name", self.name.as_str(), "--json"];
        if let Some(c) = &self.config {
            args.extend(["--config", c.to_str().unwrap()]);
        }
        args.extend_from_slice(extra);
        self.w
            .verify_identity(&self.prefix, self.sha, &self.w.registered(), &args)
    }

    fn release(&self) -> PathBuf {
        self.prefix.join("releases").join(CT_SHA)
    }

    fn command(&self) -> String {
        self.prefix.join("bin/codetools").display().to_string()
    }

    /// Rewrite the user-scope entry in `.claude.json` (an attacker with write access to it).
    fn edit_live(&self, f: &dyn Fn(&mut Map<String, Value>)) {
        edit_json(&self.w.claude_json(), &["mcpServers", &self.name], f);
    }

    /// Rewrite the flat document's entry.
    fn edit_doc(&self, f: &dyn Fn(&mut Map<String, Value>)) {
        edit_json(&self.w.registered(), &["mcpServers", &self.name], f);
    }

    /// The same change to the live entry and the document, so that they agree: only the
    /// comparison with the declaration can catch it.
    fn edit_both(&self, f: &dyn Fn(&mut Map<String, Value>)) {
        self.edit_live(f);
        self.edit_doc(f);
    }

    /// Re-register the name through the real claude CLI with `entry`, and record the same
    /// entry in the document.
    fn reregister(&self, entry: Value) {
        self.w
            .claude(&["mcp", "remove", &self.name, "-s", "user"])
            .code(0);
        self.w
            .claude(&[
                "mcp",
                "add-json",
                "-s",
                "user",
                &self.name,
                &entry.to_string(),
            ])
            .code(0);
        self.edit_doc(&|e| {
            e.clear();
            e.extend(entry.as_object().unwrap().clone());
        });
    }
}

fn edit_json(path: &Path, at: &[&str], f: &dyn Fn(&mut Map<String, Value>)) {
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let mut v = &mut doc;
    for k in at {
        v = v
            .get_mut(*k)
            .unwrap_or_else(|| panic!("{} has no {k}", path.display()));
    }
    f(v.as_object_mut().unwrap());
    fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}

fn set(e: &mut Map<String, Value>, key: &str, v: Value) {
    e.insert(key.to_string(), v);
}

fn env_add(e: &mut Map<String, Value>, key: &str, value: &str) {
    let env = e.entry("env").or_insert_with(|| json!({}));
    env[key] = json!(value);
}

fn header_set(e: &mut Map<String, Value>, key: &str, value: &str) {
    let headers = e.entry("headers").or_insert_with(|| json!({}));
    headers[key] = json!(value);
}

/// Run one row: install `base`, check the good state passes, mutate, and require exit 1 with
/// `check` failed and its detail holding `evidence`; the secret never shown.
fn attack(base: Base, mutate: &dyn Fn(&Ctx), check: &str, evidence: &str, extra: &[&str]) {
    let c = Ctx::install(base);
    let good = c.verify(extra);
    good.code(0);
    mutate(&c);
    let r = c.verify(extra);
    r.code(1);
    let failed: Vec<String> = r
        .checks()
        .into_iter()
        .filter(|(_, ok)| !ok)
        .map(|(name, _)| name)
        .collect();
    assert!(
        failed.iter().any(|f| f == check),
        "{check} did not fail\n{}",
        r.shown
    );
    let detail = r.detail(check);
    assert!(
        detail.contains(evidence),
        "{check} detail lacks {evidence:?}: {detail}\n{}",
        r.shown
    );
    for out in [&r.stdout, &r.stderr] {
        assert!(!out.contains("hunter2"), "a secret was shown\n{}", r.shown);
    }
    // The human report names the failed check too.
    let mut extra_human: Vec<&str> = extra.to_vec();
    extra_human.retain(|a| *a != "--json");
    let args: Vec<&str> = ["--name", c.name.as_str()]
        .into_iter()
        .chain(
            c.config
                .iter()
                .flat_map(|p| ["--config", p.to_str().unwrap()]),
        )
        .chain(extra_human)
        .collect();
    let human =
        c.w.verify_identity(&c.prefix, c.sha, &c.w.registered(), &args);
    human.code(1).stdout_has(&format!("FAIL {check}"));
    assert!(!human.said().contains("hunter2"), "{}", human.shown);
}

/// `name: base, mutation, check, evidence[, extra verify args]` — one test per row.
macro_rules! attacks {
    ($($name:ident: $base:expr, $mutate:expr, $check:expr, $evidence:expr $(, $extra:expr)?;)*) => {
        $(
            #[test]
            fn $name() {
                let extra: &[&str] = &[$($extra)?];
                attack($base, &$mutate, $check, $evidence, extra);
            }
        )*
    };
}

attacks! {
    // 1. The command is the declared command.
    another_executable_inside_the_release: Base::Stdio, |c: &Ctx| {
        let helper = c.release().join("bin/helper");
        write_exec(&helper, "#!/bin/sh\nexit 0\n");
        let cmd = c.prefix.join("current/bin/helper").display().to_string();
        c.edit_both(&|e| set(e, "command", json!(cmd)));
    }, "mcp-registration", "is not the declared command";
    the_release_path_instead_of_the_stable_path: Base::Stdio, |c: &Ctx| {
        let cmd = c.release().join("bin/codetools").display().to_string();
        c.edit_both(&|e| set(e, "command", json!(cmd)));
    }, "mcp-registration", "is not the declared command";
    stable_path_repointed_to_another_file_of_the_release: Base::Stdio, |c: &Ctx| {
        write_exec(&c.release().join("bin/helper"), "#!/bin/sh\nexit 0\n");
        let link = c.prefix.join("bin/codetools");
        fs::remove_file(&link).unwrap();
        symlink("../current/bin/helper", &link).unwrap();
    }, "mcp-registration", "not to the release's own";
    // Found by the red team: a link *inside* the release re-pointed at another file of the
    // release. The stable path still leads to the release's own bin/codetools, and the
    // manifest listed no symlinks, so content passed too.
    release_link_repointed_at_another_file_of_the_release: Base::LinkedRelease, |c: &Ctx| {
        let link = c.release().join("bin/codetools");
        fs::remove_file(&link).unwrap();
        symlink("../lib/helper", &link).unwrap();
    }, "content", "modified (bin/codetools)", "--content";

    // 2. The whole launch specification: env.
    node_options_injected_through_claude: Base::Stdio, |c: &Ctx| {
        c.reregister(json!({"command": c.command(), "args": ["mcp", "serve"],
            "env": {"NODE_OPTIONS": SECRET}}));
    }, "mcp-registration", "env NODE_OPTIONS=<redacted> is not declared";
    node_options_injection_is_never_started: Base::Stdio, |c: &Ctx| {
        c.reregister(json!({"command": c.command(), "args": ["mcp", "serve"],
            "env": {"NODE_OPTIONS": SECRET}}));
    }, "handshake", "not started: the mcp-registration check failed", "--handshake";
    ld_preload_added: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| env_add(e, "LD_PRELOAD", "/tmp/hunter2.so"));
    }, "mcp-registration", "env LD_PRELOAD=<redacted> is not declared";
    path_added: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| env_add(e, "PATH", "/tmp/hunter2-bin:/usr/bin"));
    }, "mcp-registration", "env PATH=<redacted> is not declared";
    pythonpath_added: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| env_add(e, "PYTHONPATH", "/tmp/hunter2-py"));
    }, "mcp-registration", "env PYTHONPATH=<redacted> is not declared";
    empty_valued_variable_added: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| env_add(e, "NODE_OPTIONS", ""));
    }, "mcp-registration", "env NODE_OPTIONS= is not declared";
    env_reference_renamed: Base::StdioEnv, |c: &Ctx| {
        c.edit_both(&|e| env_add(e, "CODETOOLS_TOKEN", "${ATTACKER_TOKEN}"));
    }, "mcp-registration", "env CODETOOLS_TOKEN is ${ATTACKER_TOKEN}, but declared as ${CODETOOLS_TOKEN}";
    env_reference_replaced_by_a_literal: Base::StdioEnv, |c: &Ctx| {
        c.edit_both(&|e| env_add(e, "CODETOOLS_TOKEN", "hunter2-literal"));
    }, "mcp-registration", "env CODETOOLS_TOKEN is <redacted>, but declared as ${CODETOOLS_TOKEN}";
    // Found while merging issue 10's two halves: `${VAR:-default}` is a reference, and the
    // default (used as is when VAR is unset) was shown in the evidence.
    env_reference_given_a_literal_default: Base::StdioEnv, |c: &Ctx| {
        c.edit_both(&|e| env_add(e, "CODETOOLS_TOKEN", "${CODETOOLS_TOKEN:-hunter2-default}"));
    }, "mcp-registration", "env CODETOOLS_TOKEN is ${CODETOOLS_TOKEN:-<redacted>}, but declared as ${CODETOOLS_TOKEN}";
    env_key_differing_in_case: Base::StdioEnv, |c: &Ctx| {
        c.edit_both(&|e| {
            e.insert("env".into(), json!({"codetools_token": "${CODETOOLS_TOKEN}"}));
        });
    }, "mcp-registration", "env codetools_token=${CODETOOLS_TOKEN} is not declared";
    declared_env_removed: Base::StdioEnv, |c: &Ctx| {
        c.edit_both(&|e| { e.remove("env"); });
    }, "mcp-registration", "env CODETOOLS_TOKEN is declared but missing";

    // 2. Keys the check does not know, and type tricks.
    unknown_key_cwd: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| set(e, "cwd", json!("/tmp/hunter2")));
    }, "mcp-registration", "unknown key cwd: mcp-deploy cannot vouch for it";
    unknown_key_timeout_stored_by_claude: Base::Stdio, |c: &Ctx| {
        c.reregister(json!({"command": c.command(), "args": ["mcp", "serve"], "timeout": 1}));
    }, "mcp-registration", "unknown key timeout";
    unknown_key_always_load: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| set(e, "alwaysLoad", json!(true)));
    }, "mcp-registration", "unknown key alwaysLoad";
    stdio_type_with_a_url_beside_it: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| {
            set(e, "type", json!("stdio"));
            set(e, "url", json!("http://127.0.0.1:9/evil"));
        });
    }, "mcp-registration", "url http://127.0.0.1:9/evil";
    stdio_entry_with_a_headers_helper: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| {
            set(e, "type", json!("stdio"));
            set(e, "headersHelper", json!("/tmp/evil-helper"));
        });
    }, "mcp-registration", "headersHelper /tmp/evil-helper is not declared";

    // 2. http: type, the whole URL, headers, helper, OAuth.
    sse_where_http_is_declared: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "type", json!("sse")));
    }, "mcp-registration", "registered as a sse server, but declared as a http server";
    url_query_changed: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "url", json!("http://127.0.0.1:9/mcp?tenant=b")));
    }, "mcp-registration", "differs in its query";
    url_query_dropped: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "url", json!("http://127.0.0.1:9/mcp")));
    }, "mcp-registration", "differs in its query";
    url_fragment_added: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "url", json!("http://127.0.0.1:9/mcp?tenant=a#hunter2")));
    }, "mcp-registration", "differs in its fragment";
    header_added: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| header_set(e, "X-Forwarded-Host", "evil.example"));
    }, "mcp-registration", "header X-Forwarded-Host=<redacted> is not declared";
    header_reference_changed: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| header_set(e, "Authorization", "Bearer ${ATTACKER_TOKEN}"));
    }, "mcp-registration", "header Authorization is Bearer ${ATTACKER_TOKEN}, but declared as Bearer ${WEBBY_TOKEN}";
    headers_helper_added: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "headersHelper", json!("/tmp/evil-helper")));
    }, "mcp-registration", "headersHelper /tmp/evil-helper is not declared";
    oauth_settings_added: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "oauth", json!({"clientId": "attacker", "callbackPort": 9})));
    }, "mcp-registration", "oauth settings are not declared";

    // 3. The document is not the only witness.
    live_entry_replaced_through_claude: Base::Stdio, |c: &Ctx| {
        let evil = c.w.root().join("evil/codetools");
        write_exec(&evil, "#!/bin/sh\nexit 0\n");
        c.w.claude(&["mcp", "remove", &c.name, "-s", "user"]).code(0);
        let entry = json!({"command": evil, "args": ["mcp", "serve"]});
        c.w.claude(&["mcp", "add-json", "-s", "user", &c.name, &entry.to_string()]).code(0);
    }, "mcp-registration", "the document and the client's config";
    live_entry_removed: Base::Stdio, |c: &Ctx| {
        c.w.claude(&["mcp", "remove", &c.name, "-s", "user"]).code(0);
    }, "mcp-registration", "has no user-scope entry";
    local_scope_shadow_through_claude: Base::Stdio, |c: &Ctx| {
        let evil = c.w.root().join("evil/codetools");
        write_exec(&evil, "#!/bin/sh\nexit 0\n");
        let entry = json!({"command": evil, "args": []});
        c.w.claude(&["mcp", "add-json", "-s", "local", &c.name, &entry.to_string()]).code(0);
    }, "mcp-registration", "shadowed by a same-name entry in the local scope of project";
    local_scope_shadow_in_another_project: Base::Stdio, |c: &Ctx| {
        let name = c.name.clone();
        edit_json(&c.w.claude_json(), &[], &|doc| {
            let projects = doc.entry("projects").or_insert_with(|| json!({}));
            projects["/srv/other-project"] =
                json!({"mcpServers": {name.clone(): {"command": "/bin/sh", "args": []}}});
        });
    }, "mcp-registration", "local scope of project /srv/other-project";
    project_mcp_json_in_the_working_directory: Base::Stdio, |c: &Ctx| {
        let doc = json!({"mcpServers": {c.name.clone(): {"command": "/bin/sh"}}});
        fs::write(c.w.root().join("work/.mcp.json"), doc.to_string()).unwrap();
    }, "mcp-registration", "project scope in";
    document_alone_tampered_while_the_client_is_intact: Base::Stdio, |c: &Ctx| {
        c.edit_doc(&|e| set(e, "cwd", json!("/tmp/evil")));
    }, "mcp-registration", "the document and the client's config";
    project_mcp_json_of_another_project: Base::Stdio, |c: &Ctx| {
        let project = c.w.root().join("some-project");
        fs::create_dir_all(&project).unwrap();
        let doc = json!({"mcpServers": {c.name.clone(): {"command": "/bin/sh"}}});
        fs::write(project.join(".mcp.json"), doc.to_string()).unwrap();
        let key = project.display().to_string();
        edit_json(&c.w.claude_json(), &[], &|doc| {
            let projects = doc.entry("projects").or_insert_with(|| json!({}));
            projects[key.as_str()] = json!({"enabledMcpjsonServers": [], "mcpServers": {}});
        });
    }, "mcp-registration", "some-project/.mcp.json";
    // Issue 35 (a witness that drops out): the known projects were read again with
    // serde_json, which refuses a lone surrogate anywhere in .claude.json (pasted history,
    // which claude's JSON.parse takes); they dropped out and their .mcp.json went unread.
    // Confirmed with claude 2.1.332: from that project, `claude mcp get` reports
    // "Project config (shared via .mcp.json)" once approved in ~/.claude/settings.json.
    project_mcp_json_of_a_project_known_beside_a_lone_surrogate: Base::Stdio, |c: &Ctx| {
        let project = c.w.root().join("some-project");
        fs::create_dir_all(&project).unwrap();
        let doc = json!({"mcpServers": {c.name.clone(): {"command": "/bin/sh"}}});
        fs::write(project.join(".mcp.json"), doc.to_string()).unwrap();
        let key = project.display().to_string();
        edit_json(&c.w.claude_json(), &[], &|doc| {
            let projects = doc.entry("projects").or_insert_with(|| json!({}));
            projects[key.as_str()] = json!({"history": [{"display": "LONE-SURROGATE"}]});
        });
        let text = fs::read_to_string(c.w.claude_json()).unwrap();
        fs::write(c.w.claude_json(), text.replace("LONE-SURROGATE", r"\ud800")).unwrap();
    }, "mcp-registration", "some-project/.mcp.json, which the client prefers there";
    // Found by the red team: claude looks for `.mcp.json` from where it runs up to `/`, so
    // one in a directory *above* the working directory or a known project shadows the user
    // entry too (once approved); and claude reads a `.mcp.json` serde_json refuses.
    project_mcp_json_above_the_working_directory: Base::Stdio, |c: &Ctx| {
        let doc = json!({"mcpServers": {c.name.clone(): {"command": "/bin/sh"}}});
        fs::write(c.w.root().join(".mcp.json"), doc.to_string()).unwrap();
    }, "mcp-registration", "project scope in";
    project_mcp_json_above_another_project: Base::Stdio, |c: &Ctx| {
        let project = c.w.root().join("srv/deep/some-project");
        fs::create_dir_all(&project).unwrap();
        let doc = json!({"mcpServers": {c.name.clone(): {"command": "/bin/sh"}}});
        fs::write(c.w.root().join("srv/.mcp.json"), doc.to_string()).unwrap();
        let key = project.display().to_string();
        edit_json(&c.w.claude_json(), &[], &|doc| {
            let projects = doc.entry("projects").or_insert_with(|| json!({}));
            projects[key.as_str()] = json!({"mcpServers": {}});
        });
    }, "mcp-registration", "srv/.mcp.json, which the client prefers there";
    project_mcp_json_with_a_byte_order_mark: Base::Stdio, |c: &Ctx| {
        // claude strips the BOM; serde_json refused the file, and the shadow was skipped.
        let doc = json!({"mcpServers": {c.name.clone(): {"command": "/bin/sh"}}});
        fs::write(c.w.root().join("work/.mcp.json"), format!("\u{feff}{doc}")).unwrap();
    }, "mcp-registration", "work/.mcp.json, which the client prefers from this directory";
    project_mcp_json_with_a_lone_surrogate: Base::Stdio, |c: &Ctx| {
        // Node's JSON.parse accepts "\ud800"; serde_json refuses the whole file.
        let doc = format!(r#"{{"mcpServers": {{"{}": {{"command": "/bin/sh", "args": ["\ud800"]}}}}}}"#, c.name);
        fs::write(c.w.root().join("work/.mcp.json"), doc).unwrap();
    }, "mcp-registration", "(mcp-deploy cannot read it: not JSON";
    document_only_tampered: Base::Stdio, |c: &Ctx| {
        // A CI machine: no client config, only the document.
        fs::remove_file(c.w.claude_json()).unwrap();
        c.edit_doc(&|e| env_add(e, "NODE_OPTIONS", SECRET));
    }, "mcp-registration", "document only: the live registration was not compared";

    // 4. Paths that mean different things to different processes.
    command_through_proc_self_root: Base::Stdio, |c: &Ctx| {
        let cmd = format!("/proc/self/root{}", c.command());
        c.edit_both(&|e| set(e, "command", json!(cmd)));
    }, "mcp-registration", "a path under /proc or /dev/fd";
    stable_link_through_proc: Base::Stdio, |c: &Ctx| {
        let link = c.prefix.join("bin/codetools");
        let real = fs::canonicalize(c.release().join("bin/codetools")).unwrap();
        fs::remove_file(&link).unwrap();
        symlink(format!("/proc/self/root{}", real.display()), &link).unwrap();
    }, "mcp-registration", "links (";
    release_bin_climbs_into_proc_by_a_relative_link: Base::Stdio, |c: &Ctx| {
        // bin/ of the release becomes a link that climbs into /proc by a relative path.
        let depth = fs::canonicalize(c.release()).unwrap().components().count() - 1;
        let bin = c.release().join("bin");
        let real_bin = c.release().join("bin.real");
        fs::rename(&bin, &real_bin).unwrap();
        let real = fs::canonicalize(&real_bin).unwrap();
        symlink(format!("{}proc/self/root{}", "../".repeat(depth), real.display()), &bin).unwrap();
    }, "mcp-registration", "resolves through /proc";

    // 9. No secret value in any output.
    // Found by the red team: a token as a URL path segment (a Zapier-style
    // /api/mcp/s/<secret>/mcp) or a bare query item was printed in clear, and neither it nor
    // a password in the URL's userinfo counted as a literal secret.
    token_in_the_url_path_is_not_printed: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "url", json!("http://127.0.0.1:9/mcp/s/ghp_hunter2TokenValue0123456789abcdef?tenant=a")));
    }, "mcp-registration", "url http://127.0.0.1:9/mcp/s/<redacted>?tenant=<redacted> is not the declared";
    token_in_the_url_path_fails_secrets: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "url", json!("http://127.0.0.1:9/mcp/s/ghp_hunter2TokenValue0123456789abcdef?tenant=a")));
    }, "secrets", "url path";
    bare_token_as_the_url_query_is_not_printed: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "url", json!("http://127.0.0.1:9/mcp?ghp_hunter2TokenValue0123456789abcdef")));
    }, "secrets", "url query";
    password_in_the_url_userinfo_fails_secrets: Base::Http, |c: &Ctx| {
        c.edit_both(&|e| set(e, "url", json!("http://bob:hunter2pass@127.0.0.1:9/mcp?tenant=a")));
    }, "secrets", "url credentials";
    literal_token_in_args_is_not_printed: Base::Stdio, |c: &Ctx| {
        c.edit_both(&|e| set(e, "args", json!(["mcp", "serve", "--api-key", "hunter2-sk-live"])));
    }, "mcp-registration", r#"args ["mcp","serve","--api-key","<redacted>"] differ"#;
}

/// A legitimate install passes with both witnesses, and says so in JSON.
#[test]
fn a_good_install_passes_with_both_witnesses() {
    let c = Ctx::install(Base::StdioEnv);
    let r = c.verify(&[]);
    r.code(0);
    let witnesses = &r.json()["servers"][0]["witnesses"];
    assert_eq!(witnesses[0], "document", "{}", r.shown);
    assert!(
        witnesses[1].as_str().unwrap().starts_with("live "),
        "{}",
        r.shown
    );
    assert!(
        r.detail("mcp-registration")
            .contains("in the document and in"),
        "{}",
        r.shown
    );
    // Without the client's config, the same state passes on the document alone, saying so.
    fs::remove_file(c.w.claude_json()).unwrap();
    let r = c.verify(&[]);
    r.code(0);
    assert_eq!(r.json()["servers"][0]["witnesses"], json!(["document"]));
    assert!(r
        .detail("mcp-registration")
        .ends_with("document only: the live registration was not compared"));
}

/// Found by the red team: Claude Code reads a non-empty legacy `<config dir>/.config.json`
/// instead of `.claude.json`. Registering another command there (with `.claude.json` intact,
/// or gone so that only the document was compared) passed; the live witness is now the file
/// the client really reads (issue 11's rule), so both fail, naming it.
#[test]
fn the_legacy_config_json_claude_really_reads_is_the_live_witness() {
    let c = Ctx::install(Base::Stdio);
    c.verify(&[]).code(0);
    let legacy = c.w.config_dir().join(".config.json");
    let evil = json!({"mcpServers": {c.name.as_str(): {
        "command": "/bin/sh", "args": ["-c", "exit 0"]}}});
    fs::write(&legacy, evil.to_string()).unwrap();
    // claude itself now reports the other command for the name.
    let got = c.w.claude(&["mcp", "get", c.name.as_str()]);
    assert!(got.said().contains("/bin/sh"), "{}", got.shown);
    for remove_main in [false, true] {
        if remove_main {
            fs::remove_file(c.w.claude_json()).unwrap();
        }
        let r = c.verify(&[]);
        r.code(1);
        let detail = r.detail("mcp-registration");
        assert!(detail.contains(".config.json"), "{}", r.shown);
        assert!(!detail.contains("document only"), "{}", r.shown);
        assert!(detail.contains("/bin/sh"), "{}", r.shown);
    }
}

/// Codex and gemini have a live witness too: their config files, read without their binaries.
/// An env variable injected there fails that client's mcp-registration, naming the file.
#[test]
fn codex_and_gemini_live_entries_injected_with_node_options() {
    let w = World::with_every_client();
    let opt = w.sample();
    w.on_sample(
        "install",
        &["--server", "codetools", "--client", "claude,codex,gemini"],
    )
    .code(0);
    let verify = |client: &str| {
        w.verify_identity(
            &opt.join("codetools"),
            CT_SHA,
            &w.registered(),
            &["--name", "codetools-test", "--client", client, "--json"],
        )
    };
    for client in ["codex", "gemini"] {
        let r = verify(client);
        r.code(0);
        assert!(
            r.json()["servers"][0]["witnesses"][1]
                .as_str()
                .is_some_and(|s| s.starts_with("live ")),
            "{}",
            r.shown
        );
    }
    let codex = w.root().join("home/.codex/config.toml");
    let mut toml = fs::read_to_string(&codex).unwrap();
    toml.push_str(&format!(
        "\n[mcp_servers.codetools-test.env]\nNODE_OPTIONS = \"{SECRET}\"\n"
    ));
    fs::write(&codex, toml).unwrap();
    let gemini = w.root().join("home/.gemini/settings.json");
    edit_json(&gemini, &["mcpServers", "codetools-test"], &|e| {
        env_add(e, "NODE_OPTIONS", SECRET)
    });
    for (client, file) in [("codex", &codex), ("gemini", &gemini)] {
        let r = verify(client);
        r.code(1);
        let detail = r.detail("mcp-registration");
        assert!(
            detail.contains(&format!(
                "in {}: env NODE_OPTIONS=<redacted> is not declared",
                file.display()
            )),
            "{detail}\n{}",
            r.shown
        );
        assert!(!r.said().contains("hunter2"), "{}", r.shown);
    }
    verify("claude").code(0);
}

/// Codex's project config and gemini's workspace settings in the working directory shadow
/// the user entry there: verify-identity fails, naming the file.
#[test]
fn codex_and_gemini_project_scope_shadows() {
    let w = World::with_every_client();
    let opt = w.sample();
    w.on_sample(
        "install",
        &["--server", "codetools", "--client", "claude,codex,gemini"],
    )
    .code(0);
    let work = w.root().join("work");
    fs::create_dir_all(work.join(".codex")).unwrap();
    fs::write(
        work.join(".codex/config.toml"),
        "[mcp_servers.codetools-test]\ncommand = \"/bin/sh\"\n",
    )
    .unwrap();
    fs::create_dir_all(work.join(".gemini")).unwrap();
    fs::write(
        work.join(".gemini/settings.json"),
        json!({"mcpServers": {"codetools-test": {"command": "/bin/sh"}}}).to_string(),
    )
    .unwrap();
    for (client, want) in [
        ("codex", "project config"),
        ("gemini", "workspace settings"),
    ] {
        let r = w.verify_identity(
            &opt.join("codetools"),
            CT_SHA,
            &w.registered(),
            &["--name", "codetools-test", "--client", client, "--json"],
        );
        r.code(1);
        let detail = r.detail("mcp-registration");
        assert!(
            detail.contains("is shadowed by a same-name entry in the") && detail.contains(want),
            "{detail}\n{}",
            r.shown
        );
    }
}

/// Found by the red team: `--handshake` expands `${CT_TOKEN}` in args (as claude does) and
/// hands the server its value; a server that echoes its argv to stderr and fails made the
/// handshake detail print the token, since only env values were redacted. Every value a
/// reference expands to is redacted now.
#[test]
fn handshake_never_prints_what_a_reference_in_args_expands_to() {
    let w = World::new();
    let opt = w.sample();
    let prefix = opt.join("codetools");
    write_exec(
        &prefix.join("releases").join(CT_SHA).join("bin/codetools"),
        "#!/bin/sh\necho \"bad flag: $*\" >&2\nexit 3\n",
    );
    let args = ["mcp", "serve", "--token", "${CT_TOKEN}"];
    let cfg = w.declare_codetools(json!({ "args": args }));
    let doc = w.root().join("doc.json");
    flat_doc(
        &doc,
        "codetools",
        prefix.join("bin/codetools").to_str().unwrap(),
        &args,
    );
    let r = w.run_env(
        &[
            "verify-identity",
            "--config",
            cfg.to_str().unwrap(),
            "--prefix",
            prefix.to_str().unwrap(),
            "--expect-commit",
            CT_SHA,
            "--mcp-json",
            doc.to_str().unwrap(),
            "--handshake",
            "--handshake-timeout",
            "30",
        ],
        &[("CT_TOKEN", "hunter2-0123456789abcdef")],
    );
    r.code(1).stdout_has("FAIL handshake");
    r.stdout_has("bad flag: mcp serve --token <redacted>");
    assert!(
        !r.said().contains("hunter2") && !r.stderr.contains("hunter2"),
        "{}",
        r.shown
    );
}

/// Found by the red team: gemini (Node) reads workspace settings holding a lone surrogate
/// escape, which serde_json refuses; the unreadable file was skipped and the shadow missed.
#[test]
fn gemini_workspace_settings_with_a_lone_surrogate() {
    let w = World::with_every_client();
    let opt = w.sample();
    w.on_sample(
        "install",
        &["--server", "codetools", "--client", "claude,gemini"],
    )
    .code(0);
    let work = w.root().join("work");
    fs::create_dir_all(work.join(".gemini")).unwrap();
    fs::write(
        work.join(".gemini/settings.json"),
        r#"{"mcpServers": {"codetools-test": {"command": "/bin/sh", "args": ["\ud800"]}}}"#,
    )
    .unwrap();
    let r = w.verify_identity(
        &opt.join("codetools"),
        CT_SHA,
        &w.registered(),
        &["--name", "codetools-test", "--client", "gemini", "--json"],
    );
    r.code(1);
    let detail = r.detail("mcp-registration");
    assert!(
        detail.contains("workspace settings") && detail.contains("mcp-deploy cannot read it"),
        "{detail}\n{}",
        r.shown
    );
}
