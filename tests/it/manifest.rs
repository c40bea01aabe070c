//! `mcp-deploy manifest create|verify`, run as a real process in temp directories, with real
//! GNU `sha256sum` as the second opinion on the format.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::harness::{system_tool, Run, World as Scratch};

/// A scratch release `rel` next to a sibling directory, inside a fresh temp dir.
struct Release {
    w: Scratch,
}

impl Release {
    fn new() -> Self {
        let w = Scratch::new();
        fs::create_dir(w.root().join("rel")).unwrap();
        w.write("sibling/secret", b"outside\n");
        Release { w }
    }

    /// A release with a few ordinary files.
    fn sample() -> Self {
        let r = Release::new();
        r.write("VERSION", "0123456789abcdef0123456789abcdef01234567\n");
        r.write("bin/codetools", "#!/bin/sh\necho hi\n");
        r.write("lib/deep/data.bin", &"x".repeat(300_000));
        r.write("lib/empty", "");
        r
    }

    fn dir(&self) -> PathBuf {
        self.w.root().join("rel")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir().join(rel)
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    fn manifest(&self) -> String {
        fs::read_to_string(self.path("MANIFEST.sha256")).unwrap()
    }

    fn set_manifest(&self, content: &[u8]) {
        fs::write(self.path("MANIFEST.sha256"), content).unwrap();
    }

    fn run(&self, args: &[&str]) -> Run {
        self.w.cmd().args(args).current_dir(self.w.root()).run()
    }

    fn create(&self) -> Run {
        self.run(&["manifest", "create", "rel"])
    }

    fn verify(&self) -> Run {
        self.run(&["manifest", "verify", "rel"])
    }

    fn verify_json(&self) -> Run {
        self.run(&["manifest", "verify", "--json", "rel"])
    }
}

fn gnu_check(dir: &Path) -> Output {
    Command::new(system_tool("sha256sum"))
        .args(["--check", "--strict", "MANIFEST.sha256"])
        .current_dir(dir)
        .output()
        .expect("sha256sum (GNU coreutils) is installed")
}

fn strings(v: &serde_json::Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[test]
fn create_then_verify_passes() {
    let r = Release::sample();
    r.create().code(0).stdout_has("4 files");
    r.verify()
        .code(0)
        .stdout_has("4 files match MANIFEST.sha256");
    // Single-threaded gives the same verdict.
    r.run(&["manifest", "verify", "--jobs", "1", "rel"]).code(0);
}

#[test]
fn manifest_is_sorted_bytewise_excludes_itself_and_matches_gnu_lines() {
    let r = Release::sample();
    r.write("B", "upper sorts before lower\n");
    r.write("a.b", "'.' (0x2e) sorts before '/' (0x2f)\n");
    r.create().code(0);
    r.create().code(0); // a second run must not list the first manifest
    let manifest = r.manifest();
    let names: Vec<&str> = manifest.lines().map(|l| &l[66..]).collect();
    assert_eq!(
        names,
        [
            "B",
            "VERSION",
            "a.b",
            "bin/codetools",
            "lib/deep/data.bin",
            "lib/empty"
        ]
    );
    // Each line is what `sha256sum` itself prints for that file.
    let gnu = Command::new("sha256sum")
        .args([
            "B",
            "VERSION",
            "a.b",
            "bin/codetools",
            "lib/deep/data.bin",
            "lib/empty",
        ])
        .current_dir(r.dir())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(gnu.stdout).unwrap(), r.manifest());
}

#[test]
fn gnu_sha256sum_accepts_our_manifest_with_awkward_names() {
    let r = Release::sample();
    r.write("with spaces/a b  c", "spaces\n");
    r.write("back\\slash", "backslash\n");
    r.write("new\nline", "newline\n");
    r.write("carriage\rreturn", "cr\n");
    r.create().code(0);
    assert!(
        r.manifest().contains("\\"),
        "names were not escaped:\n{}",
        r.manifest()
    );
    let out = gnu_check(&r.dir());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sha256sum -c refused:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches(": OK").count(), 8, "{stdout}");
    r.verify().code(0).stdout_has("8 files match");
}

#[test]
fn empty_release() {
    let r = Release::new();
    r.create().code(0).stdout_has("0 files");
    assert_eq!(r.manifest(), "");
    // An empty manifest proves nothing, so verifying against one cannot pass.
    r.verify().code(2).stderr_has("empty checksum file");
}

#[test]
fn modified_file_is_reported_by_path() {
    let r = Release::sample();
    r.create().code(0);
    r.write("bin/codetools", "#!/bin/sh\necho pwned\n");
    r.verify().code(1).stdout_has("modified: bin/codetools");
    let j = r.verify_json().code(1).json();
    assert_eq!(j["ok"], false);
    assert_eq!(strings(&j["modified"]), ["bin/codetools"]);
    assert!(strings(&j["missing"]).is_empty() && strings(&j["added"]).is_empty());
}

#[test]
fn human_report_of_a_failed_verify() {
    let r = Release::sample();
    r.create().code(0);
    r.write("bin/codetools", "#!/bin/sh\necho pwned\n");
    fs::remove_file(r.path("lib/empty")).unwrap();
    r.write("lib/extra", "added\n");
    crate::snapshot!("manifest_verify_failed", r.verify());
}

#[test]
fn file_replaced_by_a_symlink_inside_the_release_is_modified() {
    let r = Release::sample();
    r.create().code(0);
    fs::remove_file(r.path("lib/empty")).unwrap();
    symlink("../VERSION", r.path("lib/empty")).unwrap();
    assert_eq!(
        strings(&r.verify_json().code(1).json()["modified"]),
        ["lib/empty"]
    );
}

#[test]
fn missing_file_is_reported_by_path() {
    let r = Release::sample();
    r.create().code(0);
    fs::remove_file(r.path("lib/deep/data.bin")).unwrap();
    r.verify().code(1).stdout_has("missing: lib/deep/data.bin");
    assert_eq!(
        strings(&r.verify_json().json()["missing"]),
        ["lib/deep/data.bin"]
    );
}

#[test]
fn added_file_is_reported_by_path() {
    let r = Release::sample();
    r.create().code(0);
    r.write("bin/extra", "new\n");
    r.verify().code(1).stdout_has("added: bin/extra");
    assert_eq!(strings(&r.verify_json().json()["added"]), ["bin/extra"]);
}

#[test]
fn json_report_fields() {
    let r = Release::sample();
    r.create().code(0);
    let j = r.verify_json().code(0).json();
    assert_eq!(j["ok"], true);
    assert_eq!(j["dir"], "rel");
    assert_eq!(j["files"], 4);
    for k in [
        "modified",
        "missing",
        "added",
        "escaping_symlinks",
        "special_files",
    ] {
        assert_eq!(j[k], serde_json::json!([]), "{k}");
    }
    assert_eq!(j["summary"], "4 files match MANIFEST.sha256");

    r.write("VERSION", "changed\n");
    fs::remove_file(r.path("lib/empty")).unwrap();
    r.write("zz", "added\n");
    let j = r.verify_json().code(1).json();
    assert_eq!(j["ok"], false);
    assert_eq!(strings(&j["modified"]), ["VERSION"]);
    assert_eq!(strings(&j["missing"]), ["lib/empty"]);
    assert_eq!(strings(&j["added"]), ["zz"]);
    assert_eq!(
        j["summary"],
        "1 modified (VERSION), 1 missing (lib/empty), 1 added (zz)"
    );
}

#[test]
fn symlink_within_the_release_is_fine_and_a_link_to_a_file_is_listed_by_its_target() {
    let r = Release::sample();
    symlink("codetools", r.path("bin/alias")).unwrap();
    symlink("../lib", r.path("bin/libdir")).unwrap();
    symlink(".", r.path("self")).unwrap();
    r.create().code(0);
    // Listed with the digest of what it leads to, as `sha256sum -c` (which follows) computes.
    let codetools = r
        .manifest()
        .lines()
        .find(|l| l.ends_with("  bin/codetools"))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    assert!(
        r.manifest().contains(&format!("{codetools}  bin/alias\n")),
        "{}",
        r.manifest()
    );
    // A link to a directory cannot be said in the format.
    assert!(!r.manifest().contains("libdir"), "{}", r.manifest());
    r.verify().code(0);
}

#[test]
fn symlink_re_pointed_at_another_file_of_the_release_is_modified() {
    // Attack: `bin/codetools -> ../lib/main` re-pointed at `../lib/helper`, both inside the
    // release: no regular file changed, yet another program runs.
    let r = Release::new();
    r.write("lib/main", "#!/bin/sh\necho main\n");
    r.write("lib/helper", "#!/bin/sh\necho evil\n");
    fs::create_dir_all(r.path("bin")).unwrap();
    symlink("../lib/main", r.path("bin/codetools")).unwrap();
    r.create().code(0);
    r.verify().code(0);
    fs::remove_file(r.path("bin/codetools")).unwrap();
    symlink("../lib/helper", r.path("bin/codetools")).unwrap();
    r.verify().code(1).stdout_has("modified: bin/codetools");
    // An added link to a file is added.
    symlink("helper", r.path("lib/extra")).unwrap();
    assert_eq!(
        strings(&r.verify_json().code(1).json()["added"]),
        ["lib/extra"]
    );
}

#[test]
fn absolute_escaping_symlink_is_refused_by_create_and_reported_by_verify() {
    let r = Release::sample();
    symlink("/etc/passwd", r.path("bin/passwd")).unwrap();
    r.create().code(2).stderr_has("bin/passwd -> /etc/passwd");
    assert!(!r.path("MANIFEST.sha256").exists());
    fs::remove_file(r.path("bin/passwd")).unwrap();
    r.create().code(0);
    symlink("/etc/passwd", r.path("bin/passwd")).unwrap();
    r.verify()
        .code(1)
        .stdout_has("escaping symlink: bin/passwd -> /etc/passwd");
    let j = r.verify_json().code(1).json();
    assert_eq!(j["escaping_symlinks"][0]["path"], "bin/passwd");
    assert_eq!(j["escaping_symlinks"][0]["target"], "/etc/passwd");
    assert_eq!(j["escaping_symlinks"][0]["dangling"], false);
}

#[test]
fn relative_symlink_to_a_sibling_escapes_even_with_a_shared_prefix() {
    // `../sibling` and `../rel2` resolve beside the release; `rel2` starts with the string
    // `rel`, which a string-prefix test would wrongly accept.
    let r = Release::sample();
    fs::create_dir(r.w.root().join("rel2")).unwrap();
    symlink("../sibling/secret", r.path("secret")).unwrap();
    symlink("../rel2", r.path("lookalike")).unwrap();
    r.create()
        .code(2)
        .stderr_has("secret -> ../sibling/secret")
        .stderr_has("lookalike -> ../rel2");
    fs::remove_file(r.path("secret")).unwrap();
    fs::remove_file(r.path("lookalike")).unwrap();
    r.create().code(0);
    symlink("../sibling", r.path("sib")).unwrap();
    r.verify()
        .code(1)
        .stdout_has("escaping symlink: sib -> ../sibling");
}

#[test]
fn dangling_symlink_is_refused_and_reported() {
    let r = Release::sample();
    symlink("nowhere", r.path("bin/ghost")).unwrap();
    r.create()
        .code(2)
        .stderr_has("bin/ghost -> nowhere (dangling)");
    fs::remove_file(r.path("bin/ghost")).unwrap();
    r.create().code(0);
    symlink("nowhere", r.path("bin/ghost")).unwrap();
    let j = r.verify_json().code(1).json();
    assert_eq!(j["escaping_symlinks"][0]["dangling"], true);
}

#[test]
fn release_reached_through_a_symlink_is_checked_where_it_resolves() {
    // verify-identity hands us `<prefix>/current`, a symlink to releases/<sha>.
    let r = Release::sample();
    symlink("rel", r.w.root().join("current")).unwrap();
    r.run(&["manifest", "create", "current"]).code(0);
    r.run(&["manifest", "verify", "current"]).code(0);
}

#[test]
fn could_not_run_cases_exit_2() {
    let r = Release::sample();
    r.verify()
        .code(2)
        .stderr_has("MANIFEST.sha256 does not exist")
        .stderr_has("help: ");
    r.run(&["manifest", "verify", "no-such-dir"])
        .code(2)
        .stderr_has("no-such-dir");
    r.run(&["manifest", "create", "no-such-dir"])
        .code(2)
        .stderr_has("no-such-dir");
    r.run(&["manifest", "verify", "rel/VERSION"])
        .code(2)
        .stderr_has("not a directory");
    r.run(&["manifest", "verify", "--jobs", "0", "rel"]).code(2);
}

/// Every refused form, put in a manifest that otherwise matches, must stop verification
/// with exit 2 and an error naming the manifest and the line.
#[test]
fn malformed_manifest_lines_exit_2_naming_the_line() {
    let r = Release::sample();
    r.create().code(0);
    let good = r.manifest();
    let h = &good[..64];
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "short digest",
            format!("{}  VERSION\n", &h[..63]).into_bytes(),
        ),
        ("long digest", format!("{h}00  VERSION\n").into_bytes()),
        ("non-hex", format!("{}z  VERSION\n", &h[..63]).into_bytes()),
        ("NUL", format!("{h}  VERS\0ION\n").into_bytes()),
        ("absolute", format!("{h}  /etc/passwd\n").into_bytes()),
        ("dotdot", format!("{h}  ../sibling/secret\n").into_bytes()),
        ("duplicate", format!("{h}  VERSION\n").into_bytes()),
        ("blank", b"\n".to_vec()),
        ("comment", b"# hello\n".to_vec()),
        ("single space", format!("{h} VERSION\n").into_bytes()),
        ("bad escape", format!("\\{h}  VER\\tSION\n").into_bytes()),
        (
            "other algorithm",
            format!("MD5 (VERSION) = {}\n", &h[..32]).into_bytes(),
        ),
    ];
    let line = good.lines().count() + 1;
    for (what, bad) in cases {
        let mut m = good.clone().into_bytes();
        m.extend_from_slice(&bad);
        r.set_manifest(&m);
        let run = r.verify();
        assert_eq!(run.code, 2, "{what}: {run}");
        assert!(
            run.stderr.contains(&format!("MANIFEST.sha256:{line}: ")),
            "{what}: {run}"
        );
        assert!(run.stderr.contains("help: "), "{what}: {run}");
        assert!(
            run.stdout.is_empty(),
            "{what}: no verdict may be printed: {run}"
        );
    }
    r.set_manifest(b"");
    r.verify().code(2).stderr_has("empty checksum file");
}

#[test]
fn accepted_variants_verify() {
    let r = Release::sample();
    r.create().code(0);
    let good = r.manifest();
    // Upper-case digests, binary markers, CRLF line ends and the BSD tag form all check.
    let mut variant = String::new();
    for (i, l) in good.lines().enumerate() {
        let (h, name) = (&l[..64], &l[66..]);
        match i % 3 {
            0 => variant.push_str(&format!("{}  {name}\r\n", h.to_uppercase())),
            1 => variant.push_str(&format!("{h} *{name}\r\n")),
            _ => variant.push_str(&format!("SHA256 ({name}) = {h}\r\n")),
        }
    }
    r.set_manifest(variant.as_bytes());
    r.verify().code(0).stdout_has("4 files match");
}

#[test]
fn many_files_on_many_jobs_report_exactly_the_changed_ones() {
    let r = Release::new();
    for i in 0..300 {
        r.write(&format!("d{}/f{i}", i % 7), &format!("{i}\n").repeat(i));
    }
    r.create().code(0);
    for i in [3, 150, 299] {
        r.write(&format!("d{}/f{i}", i % 7), "changed\n");
    }
    for jobs in ["1", "2", "8"] {
        let j = r
            .run(&["manifest", "verify", "--json", "--jobs", jobs, "rel"])
            .code(1)
            .json();
        assert_eq!(
            strings(&j["modified"]),
            ["d3/f150", "d3/f3", "d5/f299"],
            "jobs {jobs}"
        );
        assert_eq!(j["files"], 300);
    }
}

#[test]
fn fifo_is_refused_by_create_and_reported_by_verify_without_blocking() {
    // Opening a fifo to hash it would block forever; it must be classified, never read.
    let r = Release::sample();
    r.create().code(0);
    let mkfifo = |rel: &str| {
        let st = Command::new("mkfifo").arg(r.path(rel)).status().unwrap();
        assert!(st.success());
    };
    mkfifo("bin/pipe");
    r.create().code(2).stderr_has("bin/pipe");
    r.verify().code(1).stdout_has("special file: bin/pipe");
    // A listed file replaced by a fifo is modified (and not opened).
    fs::remove_file(r.path("VERSION")).unwrap();
    mkfifo("VERSION");
    let j = r.verify_json().code(1).json();
    assert_eq!(strings(&j["modified"]), ["VERSION"]);
    assert_eq!(strings(&j["special_files"]), ["VERSION", "bin/pipe"]);
}
