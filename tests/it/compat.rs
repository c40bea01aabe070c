//! Older client releases (from the compatibility cache, `harness::compat_client`), and what a
//! run may write: only inside the homes it was given. The account's real home is shielded in
//! a private mount namespace (a scratch directory bind-mounted over it), so that a stray write
//! lands in the scratch, where the test sees it, and the host's home is never written.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::{account_home, compat_client, every_client, write_exec, World, CT_SHA};

/// The package directory of a cached client version (`<cache>/<client>-<version>`), from
/// its binary `<dir>/node_modules/.bin/<client>`.
fn package_dir(binary: &Path) -> PathBuf {
    binary.ancestors().nth(3).unwrap().to_path_buf()
}

/// The binds that lay each `(scratch, over)` of `shields` over the host's directory `over`,
/// with every path of `keep` that lies inside `over` (by components) bound back into the
/// scratch first, at the same place: the world, the repository (its built binary and
/// `node_modules`), wherever the test's own tools are, stay visible to the run however the
/// checkout is placed (CI clones it under /tmp or a home). Returns the binds and, per shield,
/// the kept paths relative to it (for a snapshot to leave out).
fn shield_binds(
    shields: &[(PathBuf, PathBuf)],
    keep: &[&Path],
) -> (Vec<(PathBuf, PathBuf)>, Vec<Vec<PathBuf>>) {
    let mut binds = Vec::new();
    let mut kept = Vec::new();
    for (scratch, over) in shields {
        let mut rels = Vec::new();
        for path in keep {
            let path = fs::canonicalize(path).unwrap();
            if let Ok(rel) = path.strip_prefix(over) {
                let at = scratch.join(rel);
                fs::create_dir_all(&at).unwrap();
                binds.push((path.clone(), at));
                rels.push(rel.to_path_buf());
            }
        }
        binds.push((scratch.clone(), over.clone()));
        kept.push(rels);
    }
    (binds, kept)
}

/// A world for `gemini <version>` whose run sees a scratch directory in place of the
/// account's real home: the cached package is bind-mounted into the world first (the cache may
/// lie under that home), then `shield` over the home. Returns the world, the gemini path as
/// the run sees it, the binds, and the scratch.
fn shielded_gemini(version: &str) -> (World, PathBuf, Vec<(PathBuf, PathBuf)>, PathBuf) {
    let w = World::new();
    w.sample();
    let pkg = w.root().join("gemini-pkg");
    let shield = w.root().join("account-home");
    fs::create_dir_all(&pkg).unwrap();
    fs::create_dir_all(&shield).unwrap();
    let mut binds = vec![(package_dir(&compat_client("gemini", version)), pkg.clone())];
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    binds.extend(shield_binds(&[(shield.clone(), account_home())], &[w.root(), repo]).0);
    (w, pkg.join("node_modules/.bin/gemini"), binds, shield)
}

/// Every file under `dir`, with its text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let text = String::from_utf8_lossy(&fs::read(e.path()).unwrap()).into_owned();
            (e.path().to_path_buf(), text)
        })
        .collect();
    out.sort();
    out
}

/// Issue 21: gemini 0.27 to 0.35 validate an auth method before any `mcp` subcommand and
/// exited 41 ("Please set an Auth method"); mcp-deploy gives them `security.auth.useExternal`
/// through its own system defaults, never an API key.
#[test]
fn gemini_0_27_to_0_35_mcp_add_needs_no_auth_method() {
    for version in ["0.27.0", "0.35.3"] {
        let w = World::new();
        w.sample();
        let gemini = compat_client("gemini", version);
        let g = gemini.to_str().unwrap();
        let r = w.on_sample("install", &["--client", "gemini", "--gemini", g]);
        r.code(0);
        assert!(!r.stderr.contains("Auth method"), "{version}: {r}");
        let settings = fs::read_to_string(w.root().join("home/.gemini/settings.json")).unwrap();
        assert!(settings.contains("codetools-test"), "{version}: {settings}");
        // What it saved holds no auth setting of ours: that lives in our system defaults.
        assert!(!settings.contains("useExternal"), "{version}: {settings}");
        w.on_sample("uninstall", &["--client", "gemini", "--gemini", g])
            .code(0);
        let settings = fs::read_to_string(w.root().join("home/.gemini/settings.json")).unwrap();
        assert!(!settings.contains("-test"), "{version}: {settings}");
    }
}

/// Issue 21: gemini 0.24 and older ignore GEMINI_CLI_HOME; run without HOME they wrote the
/// entry into the account's real `~/.gemini/settings.json`, and uninstall then reported
/// "absent" while the stray entry stayed. Now gemini gets HOME too: the entry is in the given
/// home, install, verify and uninstall pass, and nothing lands in the account's home.
#[test]
fn gemini_0_24_writes_the_given_home_never_the_accounts() {
    let (w, gemini, binds, shield) = shielded_gemini("0.24.5");
    let g = gemini.to_str().unwrap();
    let settings = w.root().join("home/.gemini/settings.json");
    let r = w
        .sample_cmd("install")
        .args(["--client", "gemini", "--gemini", g])
        .in_namespace(&binds)
        .run();
    assert!(
        files_under(&shield).is_empty(),
        "gemini wrote into the account's home: {:?}\n{r}",
        files_under(&shield)
    );
    r.code(0);
    assert!(fs::read_to_string(&settings)
        .unwrap()
        .contains("codetools-test"));
    w.verify_identity(
        &w.opt().join("codetools"),
        CT_SHA,
        &w.registered(),
        &["--name", "codetools-test", "--client", "gemini"],
    )
    .code(0);
    let r = w
        .sample_cmd("uninstall")
        .args(["--client", "gemini", "--gemini", g])
        .in_namespace(&binds)
        .run();
    r.code(0).stdout_has("removed");
    assert!(!fs::read_to_string(&settings).unwrap().contains("-test"));
    assert!(files_under(&shield).is_empty(), "{r}");
}

/// A gemini that writes some other settings file than the one it was given (what 0.24 did
/// before it got HOME; a fake, since the real one no longer can): the call fails naming that
/// file, and the rollback reports no "absent, as before" read from the file it did not write.
#[test]
fn a_gemini_that_writes_elsewhere_fails_and_reports_no_false_rollback() {
    let (w, _, binds, shield) = shielded_gemini("0.24.5");
    let home = account_home();
    let fake = w.bin().join("gemini");
    write_exec(
        &fake,
        &format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 0.24.5; exit 0; }}\nmkdir -p '{h}/.gemini'\necho \"{{\\\"mcpServers\\\":{{\\\"$5\\\":{{}}}}}}\" > \
             '{h}/.gemini/settings.json'\n",
            h = home.display()
        ),
    );
    let r = w
        .sample_cmd("install")
        .args(["--client", "gemini", "--gemini"])
        .arg(&fake)
        .in_namespace(&binds)
        .run();
    r.code(2).stderr_has("instead of");
    assert!(!r.stderr.contains("absent, as before"), "{r}");
    assert!(
        !files_under(&shield).is_empty(),
        "the fake wrote the shield"
    );
}

/// Every entry under `dir` (not following symlinks, leaving out `skip`), with its size and
/// modification time, and the bytes of each file: what a run must leave as it was.
fn snapshot(dir: &Path, skip: &[&str]) -> Vec<(PathBuf, u64, std::time::SystemTime, Vec<u8>)> {
    let mut out: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| {
            !skip
                .iter()
                .any(|s| e.path().strip_prefix(dir).is_ok_and(|r| r == Path::new(s)))
        })
        .flatten()
        .map(|e| {
            let meta = e.path().symlink_metadata().unwrap();
            let bytes = if meta.is_file() {
                fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (
                e.path().to_path_buf(),
                meta.len(),
                meta.modified().unwrap(),
                bytes,
            )
        })
        .collect();
    out.sort();
    out
}

/// Issue 21: the core flow (install, no-op re-install, verify-identity, status, uninstall)
/// with every client kind writes nothing outside the homes the run was given: not the
/// account's real home (the passwd home, shielded by a scratch directory), not /tmp outside
/// the world (a scratch /tmp, the world bound back into it), not the repository.
#[test]
fn every_client_writes_nothing_outside_the_homes_it_was_given() {
    let every = every_client();
    let w = World::with_every_client();
    w.sample();
    let shield = w.root().join("account-home");
    let tmp = w.root().join("scratch-tmp");
    fs::create_dir_all(&shield).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (binds, kept) = shield_binds(
        &[
            (tmp.clone(), PathBuf::from("/tmp")),
            (shield.clone(), account_home()),
        ],
        &[w.root(), repo],
    );
    assert!(!kept[0].is_empty(), "the world lies in /tmp");
    let tmp_skip: Vec<&str> = kept[0].iter().map(|r| r.to_str().unwrap()).collect();
    let repo_skip = ["target", ".git", "node_modules"];
    let repo_before = snapshot(repo, &repo_skip);
    let tmp_before = snapshot(&tmp, &tmp_skip);
    let run = |cmd: &str, extra: &[&str]| {
        w.sample_cmd(cmd)
            .args(["--client", every.as_str()])
            .args(extra)
            .in_namespace(&binds)
            .run()
    };
    run("install", &[]).code(0);
    let r = run("install", &["--json"]);
    r.code(0);
    for s in r.json()["servers"].as_array().unwrap() {
        assert_eq!(s["registration"], "unchanged", "{r}");
    }
    w.cmd()
        .args(["verify-identity", "--prefix"])
        .arg(w.opt().join("codetools"))
        .args(["--expect-commit", CT_SHA, "--mcp-json"])
        .arg(w.registered())
        .args(["--name", "codetools-test", "--client", every.as_str()])
        .in_namespace(&binds)
        .run()
        .code(0);
    w.sample_cmd("status")
        .args(["--client", every.as_str()])
        .in_namespace(&binds)
        .run()
        .code(0);
    run("uninstall", &[]).code(0);

    // The mount points of what was kept visible (the repository, when it lies in this home)
    // are the test's own empty directories.
    let stray: Vec<_> = walkdir::WalkDir::new(&shield)
        .min_depth(1)
        .into_iter()
        .flatten()
        .map(|e| e.path().to_path_buf())
        .filter(|p| {
            let rel = p.strip_prefix(&shield).unwrap();
            !(p.is_dir() && kept[1].iter().any(|k| k.starts_with(rel)))
        })
        .collect();
    assert!(
        stray.is_empty(),
        "written into the account's home: {stray:?}"
    );
    let tmp_after = snapshot(&tmp, &tmp_skip);
    let new: Vec<_> = tmp_after
        .iter()
        .filter(|a| !tmp_before.contains(a))
        .map(|a| &a.0)
        .collect();
    assert!(
        new.is_empty(),
        "written into /tmp outside the world: {new:?}"
    );
    let repo_after = snapshot(repo, &repo_skip);
    let changed: Vec<_> = repo_after
        .iter()
        .filter(|a| !repo_before.contains(a))
        .map(|a| &a.0)
        .collect();
    assert!(
        changed.is_empty() && repo_before.len() == repo_after.len(),
        "written into the repository: {changed:?}"
    );
}
