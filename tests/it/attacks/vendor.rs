//! Attacks on verify-vendor (issue 10, items 7, 8, 12): the vendored SDK installed from
//! anywhere but its vendored tarball, a shrinkwrap that says otherwise, lockfiles npm no
//! longer writes, and project files that would hang or eat memory.
//!
//! The fixture is the real thing, made once: `npm pack` of a tiny `@acme/consumer`, pinned
//! with `pin-vendor` against a JSON release manifest, and `npm install`ed (offline) into a
//! scratch project; each row gets its own copy and tampers with it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::support::*;
use crate::harness::*;

const TGZ: &str = "acme-consumer-0.4.0.tgz";
const SDK: &str = "vendor/consumer-sdk";
const KEY: &str = "node_modules/@acme/consumer";
const REGISTRY: &str = "https://registry.npmjs.org/@acme/consumer/-/consumer-0.4.0.tgz";

/// Real npm, in `w`'s cleared environment with `home` as its HOME and cache.
fn npm(w: &World, cwd: &Path, home: &Path, args: &[&str]) {
    w.program(system_tool("npm"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("npm_config_cache", home.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .run()
        .code(0);
}

/// The npm-installed project, made once: `<base>/repo/{.git,proj/...}`.
fn base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        // Under cargo's scratch dir for tests (removed by `cargo clean`), not /tmp: a static
        // is never dropped, so a temp dir made here would outlive every run.
        // A world only for its cleared environment: everything made here is under `tmp`.
        let w = World::new();
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("attacks-vendor-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).unwrap();
        let sdk = tmp.join("sdk");
        fs::create_dir_all(&sdk).unwrap();
        fs::write(
            sdk.join("package.json"),
            r#"{"name":"@acme/consumer","version":"0.4.0","main":"index.js"}"#,
        )
        .unwrap();
        fs::write(sdk.join("index.js"), "module.exports = 42;\n").unwrap();
        let proj = tmp.join("repo/proj");
        fs::create_dir_all(tmp.join("repo/.git")).unwrap();
        fs::create_dir_all(proj.join(SDK)).unwrap();
        let dest = proj.join(SDK);
        npm(
            &w,
            &sdk,
            &tmp,
            &["pack", "--pack-destination", dest.to_str().unwrap()],
        );
        let sha = Command::new("sha256sum")
            .arg(dest.join(TGZ))
            .output()
            .unwrap();
        let sha = String::from_utf8(sha.stdout).unwrap()[..64].to_string();
        let manifest = json!({"artifacts": [
            {"name": "@acme/consumer", "version": "0.4.0", "file": TGZ, "sha256": sha}]});
        fs::write(dest.join("release-manifest.json"), manifest.to_string()).unwrap();
        w.cmd()
            .args(["pin-vendor", &format!("{SDK}/{TGZ}"), "--manifest"])
            .arg(format!("{SDK}/release-manifest.json"))
            .current_dir(&proj)
            .run()
            .code(0);
        fs::write(
            proj.join("package.json"),
            r#"{"name":"svc","version":"1.0.0","private":true}"#,
        )
        .unwrap();
        npm(
            &w,
            &proj,
            &tmp,
            &[
                "install",
                "--no-audit",
                "--no-fund",
                "--offline",
                &format!("./{SDK}/{TGZ}"),
            ],
        );
        tmp
    })
}

/// This row's copy of the project.
fn proj(w: &World) -> PathBuf {
    let repo = w.root().join("repo");
    if !repo.exists() {
        let ok = Command::new("cp")
            .arg("-a")
            .arg(base().join("repo"))
            .arg(&repo)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    repo.join("proj")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

fn write_json(p: &Path, v: &Value) {
    fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn edit(w: &World, file: &str, f: impl FnOnce(&mut Value)) {
    let p = proj(w).join(file);
    let mut v = read_json(&p);
    f(&mut v);
    write_json(&p, &v);
}

/// The integrity npm wrote for the vendored tarball (a registry tarball would carry its own;
/// keeping this one shows the check is about where it comes from, not the hash).
fn integrity(w: &World) -> Value {
    read_json(&proj(w).join("package-lock.json"))["packages"][KEY]["integrity"].clone()
}

/// `verify-vendor <proj>/vendor --manifest <release manifest>` (the human report).
fn verify(w: &World) -> Vec<String> {
    let p = proj(w);
    vec![
        "verify-vendor".into(),
        p.join("vendor").display().to_string(),
        "--manifest".into(),
        p.join(SDK)
            .join("release-manifest.json")
            .display()
            .to_string(),
    ]
}

/// package.json and the lockfile both re-pointed at `spec` / `resolved`.
fn repoint(w: &World, spec: &str, resolved: &str) {
    edit(w, "package.json", |v| {
        v["dependencies"]["@acme/consumer"] = json!(spec)
    });
    edit(w, "package-lock.json", |v| {
        v["packages"][""]["dependencies"]["@acme/consumer"] = json!(spec);
        v["packages"][KEY]["resolved"] = json!(resolved);
    });
}

attack_rows! {
    mod the_vendored_sdk_from_anywhere_else in World::new;
    package_json_and_lockfile_re_pointed_at_a_registry_version: Attack {
        name: "package.json and lockfile re-pointed at a registry version",
        setup: |w| {
            repoint(w, "^0.4.0", REGISTRY);
            verify(w)
        },
        code: 1,
        evidence: &[
            "@acme/consumer is ^0.4.0, not its vendored tarball file:vendor/consumer-sdk/acme-consumer-0.4.0.tgz",
            "node_modules/@acme/consumer: resolved is \"https://registry.npmjs.org/",
        ],
        absent: &[],
        after: nothing,
    },
    package_json_and_lockfile_re_pointed_at_an_https_tarball: Attack {
        name: "package.json and lockfile re-pointed at an https tarball",
        setup: |w| {
            repoint(w, "https://evil.example/consumer.tgz", "https://evil.example/consumer.tgz");
            verify(w)
        },
        code: 1,
        evidence: &["is https://evil.example/consumer.tgz, not its vendored tarball"],
        absent: &[],
        after: nothing,
    },
    package_json_and_lockfile_re_pointed_at_git: Attack {
        name: "package.json and lockfile re-pointed at git",
        setup: |w| {
            let git = "git+https://github.com/evil/consumer.git#0123456";
            repoint(w, git, git);
            verify(w)
        },
        code: 1,
        evidence: &["is git+https://github.com/evil/consumer.git", "resolved is \"git+https"],
        absent: &[],
        after: nothing,
    },
    package_json_and_lockfile_re_pointed_at_a_linked_folder: Attack {
        name: "package.json and lockfile re-pointed at a linked folder",
        setup: |w| {
            repoint(w, "file:../sdk", "../sdk");
            edit(w, "package-lock.json", |v| {
                v["packages"][KEY] = json!({"resolved": "../sdk", "link": true});
            });
            verify(w)
        },
        code: 1,
        evidence: &["is file:../sdk, not its vendored tarball", "resolved is \"../sdk\""],
        absent: &[],
        after: nothing,
    },
    lockfile_installs_it_nested_under_another_package_from_the_registry: Attack {
        name: "lockfile installs it nested under another package, from the registry",
        setup: |w| {
            let i = integrity(w);
            edit(w, "package-lock.json", |v| {
                v["packages"]["node_modules/other"] =
                    json!({"version": "1.0.0", "resolved": "https://registry.npmjs.org/other/-/other-1.0.0.tgz"});
                v["packages"]["node_modules/other/node_modules/@acme/consumer"] =
                    json!({"version": "0.4.0", "resolved": REGISTRY, "integrity": i});
            });
            verify(w)
        },
        code: 1,
        evidence: &["node_modules/other/node_modules/@acme/consumer: resolved is \"https://registry"],
        absent: &[],
        after: nothing,
    },
    package_json_adds_an_npm_alias_of_it_from_the_registry: Attack {
        name: "package.json adds an npm: alias of it from the registry",
        setup: |w| {
            edit(w, "package.json", |v| {
                v["dependencies"]["consumer"] = json!("npm:@acme/consumer@0.4.0");
            });
            verify(w)
        },
        code: 1,
        evidence: &["@acme/consumer is npm:@acme/consumer@0.4.0, not its vendored tarball"],
        absent: &[],
        after: nothing,
    },
    lockfile_installs_it_under_an_alias_from_the_registry: Attack {
        name: "lockfile installs it under an alias from the registry",
        setup: |w| {
            let i = integrity(w);
            edit(w, "package-lock.json", |v| {
                v["packages"]["node_modules/consumer"] = json!({"name": "@acme/consumer",
                    "version": "0.4.0", "resolved": REGISTRY, "integrity": i});
            });
            verify(w)
        },
        code: 1,
        evidence: &["node_modules/consumer: resolved is \"https://registry"],
        absent: &[],
        after: nothing,
    },
    overrides_re_point_it_at_a_registry_version: Attack {
        name: "overrides re-point it at a registry version",
        setup: |w| {
            edit(w, "package.json", |v| v["overrides"] = json!({"@acme/consumer": "0.4.0"}));
            verify(w)
        },
        code: 1,
        evidence: &["overrides.@acme/consumer: @acme/consumer is 0.4.0, not its vendored tarball"],
        absent: &[],
        after: nothing,
    },
    nested_overrides_re_point_it_under_another_package: Attack {
        name: "nested overrides re-point it under another package",
        setup: |w| {
            edit(w, "package.json", |v| {
                v["overrides"] =
                    json!({"other@1": {"@acme/consumer@^0.4": {".": "https://evil.example/c.tgz"}}});
            });
            verify(w)
        },
        code: 1,
        evidence: &["overrides.other@1.@acme/consumer@^0.4", "is https://evil.example/c.tgz"],
        absent: &[],
        after: nothing,
    },
    overrides_point_it_at_another_dependency_registry_spec_ref: Attack {
        name: "overrides point it at another dependency's registry spec ($ref)",
        setup: |w| {
            edit(w, "package.json", |v| {
                v["dependencies"]["evil"] = json!("^1.0.0");
                v["overrides"] = json!({"@acme/consumer": "$evil"});
            });
            verify(w)
        },
        code: 1,
        evidence: &["@acme/consumer is ^1.0.0, not its vendored tarball"],
        absent: &[],
        after: nothing,
    },
    peerdependencies_ask_for_it_from_the_registry: Attack {
        name: "peerDependencies ask for it from the registry",
        setup: |w| {
            edit(w, "package.json", |v| {
                v["peerDependencies"] = json!({"@acme/consumer": "^0.4.0"});
            });
            verify(w)
        },
        code: 1,
        evidence: &["@acme/consumer (peerDependencies)", "is ^0.4.0, not its vendored tarball"],
        absent: &[],
        after: nothing,
    },
    optionaldependencies_take_it_from_a_url: Attack {
        name: "optionalDependencies take it from a URL",
        setup: |w| {
            edit(w, "package.json", |v| {
                v["optionalDependencies"] = json!({"@acme/consumer": "https://evil.example/c.tgz"});
            });
            verify(w)
        },
        code: 1,
        evidence: &["@acme/consumer (optionalDependencies)"],
        absent: &[],
        after: nothing,
    },
    npm_shrinkwrap_json_what_npm_uses_re_points_it_package_lock_json_is_clean: Attack {
        name: "npm-shrinkwrap.json (what npm uses) re-points it; package-lock.json is clean",
        setup: |w| {
            let p = proj(w);
            let mut lock = read_json(&p.join("package-lock.json"));
            lock["packages"][KEY]["resolved"] = json!(REGISTRY);
            write_json(&p.join("npm-shrinkwrap.json"), &lock);
            verify(w)
        },
        code: 1,
        evidence: &["npm-shrinkwrap.json: node_modules/@acme/consumer: resolved is \"https://registry"],
        absent: &[],
        after: nothing,
    },
    npm_shrinkwrap_json_carries_another_tarball_integrity: Attack {
        name: "npm-shrinkwrap.json carries another tarball's integrity",
        setup: |w| {
            let p = proj(w);
            let mut lock = read_json(&p.join("package-lock.json"));
            lock["packages"][KEY]["integrity"] = json!(format!("sha512-{}", "A".repeat(86) + "=="));
            write_json(&p.join("npm-shrinkwrap.json"), &lock);
            verify(w)
        },
        code: 1,
        evidence: &["npm-shrinkwrap.json: node_modules/@acme/consumer: integrity"],
        absent: &[],
        after: nothing,
    },
    lockfileversion_2_legacy_dependencies_tree_takes_it_from_the_registry: Attack {
        name: "lockfileVersion 2's legacy dependencies tree takes it from the registry",
        setup: |w| {
            let i = integrity(w);
            edit(w, "package-lock.json", |v| {
                v["lockfileVersion"] = json!(2);
                v["dependencies"] = json!({"@acme/consumer": {"version": "0.4.0",
                    "resolved": REGISTRY, "integrity": i}});
            });
            verify(w)
        },
        code: 1,
        evidence: &["dependencies[\"@acme/consumer\"]: resolved is \"https://registry"],
        absent: &[],
        after: nothing,
    },
    lockfileversion_1_npm_6: Attack {
        name: "lockfileVersion 1 (npm 6)",
        setup: |w| {
            edit(w, "package-lock.json", |v| {
                *v = json!({"lockfileVersion": 1, "dependencies": {"@acme/consumer": {
                    "version": "0.4.0", "resolved": REGISTRY}}});
            });
            verify(w)
        },
        code: 2,
        evidence: &["lockfileVersion 1 is unsupported: regenerate with npm 7 or later"],
        absent: &[],
        after: nothing,
    },
    package_lock_json_is_a_fifo: Attack {
        name: "package-lock.json is a FIFO",
        setup: |w| {
            mkfifo(&proj(w).join("package-lock.json"));
            verify(w)
        },
        code: 2,
        evidence: &["the lockfile must be a regular file, but this is a FIFO", "help:"],
        absent: &[],
        after: nothing,
    },
    npm_shrinkwrap_json_to_dev_urandom: Attack {
        name: "npm-shrinkwrap.json -> /dev/urandom",
        setup: |w| {
            link(&proj(w).join("npm-shrinkwrap.json"), "/dev/urandom");
            verify(w)
        },
        code: 2,
        evidence: &["npm-shrinkwrap.json", "a character device"],
        absent: &[],
        after: nothing,
    },
    package_json_to_dev_zero: Attack {
        name: "package.json -> /dev/zero",
        setup: |w| {
            link(&proj(w).join("package.json"), "/dev/zero");
            verify(w)
        },
        code: 2,
        evidence: &["the package.json must be a regular file, but this is a character device"],
        absent: &[],
        after: nothing,
    },
    package_lock_json_of_1_gib: Attack {
        name: "package-lock.json of 1 GiB",
        setup: |w| {
            sparse(&proj(w).join("package-lock.json"), 1 << 30);
            verify(w)
        },
        code: 2,
        evidence: &["larger than 256 MiB, the most a lockfile may be"],
        absent: &[],
        after: nothing,
    },
    the_release_manifest_manifest_is_a_fifo: Attack {
        name: "the release manifest (--manifest) is a FIFO",
        setup: |w| {
            mkfifo(&proj(w).join(SDK).join("release-manifest.json"));
            verify(w)
        },
        code: 2,
        evidence: &["release-manifest.json", "a FIFO"],
        absent: &[],
        after: nothing,
    },
    a_sidecar_of_1_gib: Attack {
        name: "a sidecar of 1 GiB",
        setup: |w| {
            sparse(&proj(w).join(SDK).join(format!("{TGZ}.sha256")), 1 << 30);
            verify(w)
        },
        code: 1,
        evidence: &["larger than 64 KiB, the most a sidecar (one line) may be"],
        absent: &[],
        after: nothing,
    },
}

/// The untouched fixture passes: every row of the table is a failure of something that works.
#[test]
fn the_untouched_vendored_fixture_passes() {
    let w = World::new();
    let (r, _) = run_bounded(&w, &verify(&w)).unwrap();
    assert_eq!(r.code, 0, "{}", r.shown);
}
