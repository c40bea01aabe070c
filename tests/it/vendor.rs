//! `mcp-deploy verify-vendor` and `pin-vendor`, run as real processes, each test in its own
//! temp dir. The SDK tarball is made by the real `npm pack` and installed into a scratch
//! project by the real `npm install`, so the lockfile is npm's own; then each piece is
//! tampered with in turn. Tests that need npm fail (never skip) when it is missing.
//!
//! Layout of a test's temp dir (a `.git` marks the repository root, so the project search
//! never climbs above it):
//! ```text
//! .git/  sdk/{package.json,index.js}  npm-cache/
//! proj/package.json proj/package-lock.json
//! proj/vendor/consumer-sdk/{acme-consumer-0.4.0.tgz,.sha256,release-manifest.json}
//! ```

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::harness::{regex_escape, system_tool, Run, World as Scratch};

const TGZ: &str = "acme-consumer-0.4.0.tgz";
const SDK: &str = "vendor/consumer-sdk";
const REL_TGZ: &str = "consumer-sdk/acme-consumer-0.4.0.tgz";
const LOCK_KEY: &str = "node_modules/@acme/consumer";
const H0: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A scratch project in a harness world: `proj/` under the world's root.
struct World {
    w: Scratch,
}

impl World {
    /// An empty project directory with an empty vendor dir; no package.json.
    fn new() -> Self {
        let w = Scratch::new();
        fs::create_dir(w.root().join(".git")).unwrap();
        fs::create_dir_all(w.root().join("proj").join(SDK)).unwrap();
        World { w }
    }

    /// The real thing: npm-packed SDK, release manifest, pinned sidecar, npm-installed.
    fn installed() -> Self {
        let w = World::new();
        w.pack_sdk();
        w.write_json_manifest(&w.sha256sum(&w.tgz()));
        w.run(&[
            "pin-vendor",
            &format!("{SDK}/{TGZ}"),
            "--manifest",
            &format!("{SDK}/release-manifest.json"),
        ])
        .code(0);
        w.write(
            "package.json",
            r#"{"name":"svc","version":"1.0.0","private":true}"#,
        );
        w.npm(
            &w.proj(),
            &[
                "install",
                "--no-audit",
                "--no-fund",
                "--offline",
                &format!("./{SDK}/{TGZ}"),
            ],
        )
        .code(0);
        // What npm 11 writes for a file: tarball; the tests below rely on this shape.
        let lock = w.lock();
        assert_eq!(lock["lockfileVersion"], 3, "{lock}");
        assert_eq!(
            lock["packages"][LOCK_KEY]["resolved"],
            format!("file:{SDK}/{TGZ}")
        );
        assert!(lock["packages"][LOCK_KEY]["integrity"]
            .as_str()
            .unwrap()
            .starts_with("sha512-"));
        w
    }

    fn proj(&self) -> PathBuf {
        self.w.root().join("proj")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.proj().join(rel)
    }

    fn tgz(&self) -> PathBuf {
        self.path(&format!("{SDK}/{TGZ}"))
    }

    fn sidecar(&self) -> PathBuf {
        self.path(&format!("{SDK}/{TGZ}.sha256"))
    }

    fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    fn run(&self, args: &[&str]) -> Run {
        self.w.cmd().args(args).current_dir(self.proj()).run()
    }

    /// Real npm in the world's cleared environment, its cache in the world.
    fn npm(&self, cwd: &Path, args: &[&str]) -> Run {
        self.w
            .program(system_tool("npm"))
            .args(args)
            .current_dir(cwd)
            .env("npm_config_cache", self.w.root().join("npm-cache"))
            .env("npm_config_update_notifier", "false")
            .run()
    }

    /// `npm pack` a tiny package into the vendor dir.
    fn pack_sdk(&self) {
        let sdk = self.w.root().join("sdk");
        fs::create_dir(&sdk).unwrap();
        fs::write(
            sdk.join("package.json"),
            r#"{"name":"@acme/consumer","version":"0.4.0","main":"index.js"}"#,
        )
        .unwrap();
        fs::write(sdk.join("index.js"), "module.exports = 42;\n").unwrap();
        let dest = self.path(SDK);
        self.npm(
            &sdk,
            &["pack", "--pack-destination", dest.to_str().unwrap()],
        )
        .code(0);
        assert!(self.tgz().is_file(), "npm pack wrote no {TGZ}");
    }

    /// A stand-in tarball (some bytes) and its correct sidecar, for tests about the sidecar.
    fn fake_tarball(&self, rel: &str) -> String {
        self.write(rel, format!("not really a tarball: {rel}\n"));
        let hex = self.sha256sum(&self.path(rel));
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        self.write(&format!("{rel}.sha256"), format!("{hex}  {name}\n"));
        hex
    }

    /// GNU sha256sum's digest: a second opinion, not our own code.
    fn sha256sum(&self, p: &Path) -> String {
        let out = Command::new(system_tool("sha256sum"))
            .arg(p)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    }

    fn write_json_manifest(&self, sha256: &str) {
        let m = json!({"artifacts": [
            {"name": "@acme/consumer", "version": "0.4.0", "file": TGZ, "sha256": sha256},
            {"name": "@acme/consumer-cli", "version": "0.4.0", "file": "acme-consumer-cli-0.4.0.tgz",
             "sha256": H0},
        ]});
        self.write(&format!("{SDK}/release-manifest.json"), m.to_string());
    }

    fn lock(&self) -> Value {
        serde_json::from_str(&fs::read_to_string(self.path("package-lock.json")).unwrap()).unwrap()
    }

    fn set_lock_entry(&self, field: &str, value: Option<Value>) {
        let mut lock = self.lock();
        let entry = lock["packages"][LOCK_KEY].as_object_mut().unwrap();
        match value {
            Some(v) => entry.insert(field.to_string(), v),
            None => entry.remove(field),
        };
        self.write(
            "package-lock.json",
            serde_json::to_string_pretty(&lock).unwrap(),
        );
    }

    /// Set the entry's integrity and expect the integrity check to fail saying `needle`.
    #[track_caller]
    fn integrity_refused(&self, integrity: Value, needle: &str) {
        self.set_lock_entry("integrity", Some(integrity));
        failed(
            &self.verify(&[]).code(1).json(),
            "integrity",
            LOCK_KEY,
            needle,
        );
    }

    fn integrity(&self) -> String {
        self.lock()["packages"][LOCK_KEY]["integrity"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// `verify-vendor vendor --json [extra…]`.
    fn verify(&self, extra: &[&str]) -> Run {
        let mut args = vec!["verify-vendor", "vendor", "--json"];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    fn verify_with_manifest(&self) -> Run {
        let m = format!("{SDK}/release-manifest.json");
        self.verify(&["--manifest", &m])
    }
}

/// The one check named `check` about `subject`, from a `--json` run.
fn check<'a>(report: &'a Value, check: &str, subject: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == check && c["subject"] == subject)
        .unwrap_or_else(|| panic!("no {check} check for {subject}:\n{report:#}"))
}

/// Assert that the check failed and that its detail says `needle`.
#[track_caller]
fn failed(report: &Value, name: &str, subject: &str, needle: &str) {
    let c = check(report, name, subject);
    assert_eq!(c["ok"], false, "{name} {subject} passed:\n{report:#}");
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.contains(needle), "{detail:?} lacks {needle:?}");
    assert!(c["help"].is_string(), "no help: {c}");
}

#[track_caller]
fn passed(report: &Value, name: &str, subject: &str) {
    let c = check(report, name, subject);
    assert_eq!(c["ok"], true, "{name} {subject} failed:\n{report:#}");
}

/// Names of the failed checks, as `check subject`.
fn failures(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| {
            format!(
                "{} {}",
                c["check"].as_str().unwrap(),
                c["subject"].as_str().unwrap()
            )
        })
        .collect()
}

// ---- the real npm flow -------------------------------------------------------------------

#[test]
fn npm_packed_and_installed_sdk_verifies() {
    let w = World::installed();
    // The CI line from docs/vendor.md, in human form.
    w.run(&[
        "verify-vendor",
        "vendor/",
        "--manifest",
        "vendor/consumer-sdk/release-manifest.json",
    ])
    .code(0)
    .stdout_has("ok: 7 checks passed");
    let r = w.verify_with_manifest().code(0).json();
    assert_eq!(r["ok"], true);
    for (name, subject) in [
        ("artifact", REL_TGZ),
        ("sidecar", REL_TGZ),
        ("manifest", REL_TGZ),
        ("dependency", "@acme/consumer (dependencies)"),
        ("source", "@acme/consumer (dependencies)"),
        ("resolved", LOCK_KEY),
        ("integrity", LOCK_KEY),
    ] {
        passed(&r, name, subject);
    }
    assert_eq!(r["checks"].as_array().unwrap().len(), 7);
    // Our sha512 is npm's: the integrity npm wrote is the one we report as matching.
    assert_eq!(check(&r, "integrity", LOCK_KEY)["actual"], w.integrity());
    assert_eq!(r["manifest"]["format"], "json");
    assert_eq!(r["project"]["lockfile_version"], 3);
    // The manifest's other artifact is not vendored here: said, not failed.
    let ignored = r["ignored"].to_string();
    assert!(ignored.contains("acme-consumer-cli-0.4.0.tgz"), "{ignored}");
    // The sidecar pin-vendor wrote is one GNU sha256sum accepts.
    let gnu = Command::new(system_tool("sha256sum"))
        .args(["--check", "--strict", &format!("{TGZ}.sha256")])
        .current_dir(w.path(SDK))
        .output()
        .unwrap();
    assert!(gnu.status.success(), "{gnu:?}");
}

#[test]
fn tampered_tarball_byte_fails_sidecar_manifest_dependency_and_integrity() {
    let w = World::installed();
    let mut bytes = fs::read(w.tgz()).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(w.tgz(), bytes).unwrap();
    let r = w.verify_with_manifest().code(1).json();
    assert_eq!(
        failures(&r),
        [
            format!("sidecar {REL_TGZ}"),
            format!("manifest {REL_TGZ}"),
            "dependency @acme/consumer (dependencies)".to_string(),
            format!("integrity {LOCK_KEY}"),
        ]
    );
    let sidecar = check(&r, "sidecar", REL_TGZ);
    assert_eq!(sidecar["actual"], w.sha256sum(&w.tgz()));
    assert_ne!(sidecar["expected"], sidecar["actual"]);
    assert_eq!(check(&r, "integrity", LOCK_KEY)["actual"], w.integrity());
}

#[test]
fn tampered_sidecar_fails_sidecar_and_manifest() {
    let w = World::installed();
    fs::write(w.sidecar(), format!("{H0}  {TGZ}\n")).unwrap();
    let r = w.verify_with_manifest().code(1).json();
    assert_eq!(
        failures(&r),
        [
            format!("sidecar {REL_TGZ}"),
            format!("manifest {REL_TGZ}"),
            "dependency @acme/consumer (dependencies)".to_string(),
        ]
    );
    assert_eq!(check(&r, "sidecar", REL_TGZ)["expected"], H0);
    failed(&r, "manifest", REL_TGZ, "the sidecar's");
}

#[test]
fn human_report_of_a_tampered_sidecar() {
    let w = World::installed();
    // npm's tarball bytes (so its digests and size) may differ with the npm version: named, not shown.
    let sha256 = regex_escape(&w.sha256sum(&w.tgz()));
    let sha512 = regex_escape(w.integrity().trim_start_matches("sha512-"));
    fs::write(w.sidecar(), format!("{H0}  {TGZ}\n")).unwrap();
    let m = format!("{SDK}/release-manifest.json");
    let r = w.run(&["verify-vendor", "vendor", "--manifest", &m]);
    crate::snapshot!(
        "verify_vendor_tampered_sidecar",
        r,
        [
            (&sha256, "[TARBALL-SHA256]"),
            (&sha512, "[TARBALL-SHA512]"),
            (r"regular file, \d+ bytes", "regular file, [SIZE] bytes"),
        ]
    );
}

#[test]
fn tampered_manifest_digest_fails_the_manifest_check() {
    let w = World::installed();
    w.write_json_manifest(H0);
    let r = w.verify_with_manifest().code(1).json();
    failed(&r, "manifest", REL_TGZ, "differs from the sidecar's");
    assert_eq!(check(&r, "manifest", REL_TGZ)["expected"], H0);
    passed(&r, "sidecar", REL_TGZ);
    passed(&r, "integrity", LOCK_KEY);
}

#[test]
fn tampered_lockfile_integrity_fails_the_integrity_check() {
    let w = World::installed();
    let good = w.integrity();
    // A well-formed sha512 of other bytes: the last base64 digit before `==` changed.
    let mut bad: Vec<char> = good.chars().collect();
    let i = bad.len() - 4;
    bad[i] = if bad[i] == 'A' { 'B' } else { 'A' };
    let bad: String = bad.into_iter().collect();
    w.set_lock_entry("integrity", Some(json!(bad)));
    let r = w.verify_with_manifest().code(1).json();
    assert_eq!(failures(&r), [format!("integrity {LOCK_KEY}")]);
    let c = check(&r, "integrity", LOCK_KEY);
    assert_eq!(c["expected"], good);
    assert_eq!(c["actual"], bad);
}

#[test]
fn tampered_resolved_fails_the_resolved_check() {
    let w = World::installed();
    w.fake_tarball(&format!("{SDK}/acme-consumer-0.3.9.tgz"));
    w.set_lock_entry(
        "resolved",
        Some(json!(format!("file:{SDK}/acme-consumer-0.3.9.tgz"))),
    );
    let r = w.verify(&[]).code(1).json();
    failed(&r, "resolved", LOCK_KEY, "resolved is");
    let c = check(&r, "resolved", LOCK_KEY);
    assert_eq!(c["expected"], format!("file:{SDK}/{TGZ}"));
    assert_eq!(
        c["actual"],
        format!("\"file:{SDK}/acme-consumer-0.3.9.tgz\"")
    );
    // The integrity is still compared with the tarball package.json names.
    passed(&r, "integrity", LOCK_KEY);
}

#[test]
fn lockfile_resolved_missing_fails() {
    let w = World::installed();
    w.set_lock_entry("resolved", None);
    let r = w.verify(&[]).code(1).json();
    let c = check(&r, "resolved", LOCK_KEY);
    assert_eq!(c["actual"], "missing");
    assert_eq!(failures(&r), [format!("resolved {LOCK_KEY}")]);
}

#[test]
fn lockfile_resolved_leaving_the_vendor_dir_fails() {
    let w = World::installed();
    w.set_lock_entry(
        "resolved",
        Some(json!(format!("file:{SDK}/../../../outside/{TGZ}"))),
    );
    let r = w.verify(&[]).code(1).json();
    failed(&r, "resolved", LOCK_KEY, "leaves the vendor directory");
}

#[test]
fn file_dependency_leaving_the_vendor_dir_fails() {
    let w = World::installed();
    w.write(&format!("outside/{TGZ}"), fs::read(w.tgz()).unwrap());
    let spec = format!("file:vendor/../outside/{TGZ}");
    w.write(
        "package.json",
        json!({"name":"svc","version":"1.0.0","dependencies":{"@acme/consumer": spec}}).to_string(),
    );
    let r = w.verify(&[]).code(1).json();
    failed(
        &r,
        "dependency",
        "@acme/consumer (dependencies)",
        "leaves the vendor directory",
    );
}

#[test]
fn file_dependency_naming_no_artifact_fails() {
    let w = World::installed();
    w.write(
        "package.json",
        json!({"dependencies":{"@acme/consumer": format!("file:{SDK}/acme-consumer-9.9.9.tgz")}})
            .to_string(),
    );
    let r = w.verify(&[]).code(1).json();
    failed(
        &r,
        "dependency",
        "@acme/consumer (dependencies)",
        "not an artifact in the vendor directory",
    );
    // The lockfile still says 0.4.0: its resolved disagrees with package.json.
    failed(
        &r,
        "resolved",
        LOCK_KEY,
        "expected file:vendor/consumer-sdk/acme-consumer-9.9.9.tgz",
    );
}

#[test]
fn integrity_missing_fails() {
    let w = World::installed();
    w.set_lock_entry("integrity", None);
    failed(
        &w.verify(&[]).code(1).json(),
        "integrity",
        LOCK_KEY,
        "integrity is missing",
    );
}

#[test]
fn integrity_empty_fails() {
    let w = World::installed();
    w.integrity_refused(json!(""), "integrity is empty");
}

#[test]
fn integrity_not_sha512_fails() {
    let w = World::installed();
    // What npm 6 lockfiles held for some packages: a sha1.
    w.integrity_refused(
        json!("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="),
        "holds a sha1 hash",
    );
}

#[test]
fn integrity_bad_base64_fails() {
    let w = World::installed();
    let good = w.integrity();
    let digits = good.strip_prefix("sha512-").unwrap();
    assert_eq!((digits.len(), &digits[86..]), (88, "=="), "{good}");
    // Each is the real digest made non-canonical in one way, and differs from it whatever
    // its bytes (a blanket `+`/`/` -> `-`/`_` swap changes nothing for a digest without
    // either, and used to skip that case).
    for bad in [
        good.trim_end_matches('=').to_string(), // padding dropped
        format!("sha512--_{}", &digits[2..]),   // URL-safe alphabet
        format!("sha512-{}!==", &digits[..85]), // a digit outside any alphabet
    ] {
        assert_ne!(bad, good);
        w.integrity_refused(json!(bad), "not canonical base64");
    }
}

#[test]
fn integrity_of_the_wrong_decoded_length_fails() {
    let w = World::installed();
    // A sha256-sized digest labelled sha512.
    let short = format!("sha512-{}", "A".repeat(43) + "=");
    w.set_lock_entry("integrity", Some(json!(short)));
    let r = w.verify(&[]).code(1).json();
    failed(&r, "integrity", LOCK_KEY, "decodes to 32 bytes");
    let c = check(&r, "integrity", LOCK_KEY);
    assert_eq!(
        (c["expected"].as_str(), c["actual"].as_str()),
        (Some("64"), Some("32"))
    );
}

#[test]
fn integrity_with_several_hashes_requires_every_one_to_match() {
    let w = World::installed();
    let good = w.integrity();
    // The same hash twice: every hash matches.
    w.set_lock_entry("integrity", Some(json!(format!("{good} {good}"))));
    let r = w.verify(&[]).code(0).json();
    assert!(check(&r, "integrity", LOCK_KEY)["detail"]
        .as_str()
        .unwrap()
        .contains("all 2 hashes"));
    // A second, different sha512 — one ssri alone would accept — fails.
    let other = format!("sha512-{}==", "A".repeat(86));
    for integrity in [format!("{good} {other}"), format!("{other} {good}")] {
        w.integrity_refused(json!(integrity), "is not the tarball's");
    }
    // A weaker hash beside the right one fails too.
    w.integrity_refused(
        json!(format!("{good} sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=")),
        "holds a sha1 hash",
    );
}

#[test]
fn lockfile_entry_missing_fails() {
    let w = World::installed();
    let mut lock = w.lock();
    lock["packages"].as_object_mut().unwrap().remove(LOCK_KEY);
    w.write("package-lock.json", lock.to_string());
    let r = w.verify(&[]).code(1).json();
    failed(&r, "lockfile", LOCK_KEY, "has no entry");
}

#[test]
fn vendored_dependency_without_a_lockfile_fails() {
    let w = World::installed();
    fs::remove_file(w.path("package-lock.json")).unwrap();
    let r = w.verify(&[]).code(1).json();
    failed(
        &r,
        "lockfile",
        &w.path("package-lock.json").display().to_string(),
        "no package-lock.json",
    );
    assert_eq!(r["project"]["lockfile"], Value::Null);
}

#[test]
fn malformed_lockfile_or_package_json_is_exit_2() {
    let w = World::installed();
    let lock = fs::read_to_string(w.path("package-lock.json")).unwrap();
    w.write("package-lock.json", &lock[..lock.len() / 2]);
    w.verify(&[])
        .code(2)
        .stderr_has("package-lock.json: not JSON");
    w.write(
        "package-lock.json",
        r#"{"lockfileVersion":1,"dependencies":{}}"#,
    );
    w.verify(&[])
        .code(2)
        .stderr_has("lockfileVersion 1 is unsupported: regenerate with npm 7 or later")
        .stderr_has("help: ");
    w.write("package-lock.json", lock);
    w.verify(&[]).code(0);
    w.write("package.json", "[]");
    w.verify(&[])
        .code(2)
        .stderr_has("package.json: not a JSON object");
}

// ---- the sidecar -------------------------------------------------------------------------

/// A project without package.json: only the vendor dir is checked.
fn with_fake_tarball() -> (World, String) {
    let w = World::new();
    let hex = w.fake_tarball(&format!("{SDK}/{TGZ}"));
    (w, hex)
}

/// Write `content(hex of the tarball)` as the sidecar and expect the sidecar check to fail
/// saying `needle`.
#[track_caller]
fn sidecar_refused(content: impl Fn(&str) -> String, needle: &str) {
    let (w, hex) = with_fake_tarball();
    fs::write(w.sidecar(), content(&hex)).unwrap();
    failed(&w.verify(&[]).code(1).json(), "sidecar", REL_TGZ, needle);
}

#[test]
fn fake_tarball_with_its_sidecar_verifies_and_no_project_is_said() {
    let (w, hex) = with_fake_tarball();
    w.write(&format!("{SDK}/README.md"), "how we vendor\n");
    let r = w.verify(&[]).code(0).json();
    assert_eq!(check(&r, "sidecar", REL_TGZ)["actual"], hex);
    assert_eq!(r["project"], Value::Null);
    let ignored = r["ignored"].to_string();
    assert!(ignored.contains("README.md"), "{ignored}");
    assert!(ignored.contains("no package.json"), "{ignored}");
    w.run(&["verify-vendor"])
        .code(0)
        .stdout_has("skip vendor/consumer-sdk/README.md");
}

#[test]
fn tarball_without_sidecar_fails() {
    let (w, _) = with_fake_tarball();
    fs::remove_file(w.sidecar()).unwrap();
    failed(
        &w.verify(&[]).code(1).json(),
        "sidecar",
        REL_TGZ,
        "has no sidecar",
    );
}

#[test]
fn empty_sidecar_fails() {
    sidecar_refused(|_| String::new(), "empty checksum file");
}

#[test]
fn sidecar_digest_of_the_wrong_length_fails() {
    sidecar_refused(
        |hex| format!("{}  {TGZ}\n", &hex[..63]),
        "must be 64 hex digits, found 63",
    );
}

#[test]
fn sidecar_digest_not_hex_fails() {
    sidecar_refused(|hex| format!("{}z  {TGZ}\n", &hex[..63]), "not hexadecimal");
}

#[test]
fn sidecar_naming_another_file_fails() {
    let (w, hex) = with_fake_tarball();
    fs::write(w.sidecar(), format!("{hex}  acme-consumer-0.3.9.tgz\n")).unwrap();
    let r = w.verify(&[]).code(1).json();
    failed(&r, "sidecar", REL_TGZ, "names acme-consumer-0.3.9.tgz, not");
    assert_eq!(check(&r, "sidecar", REL_TGZ)["expected"], TGZ);
}

#[test]
fn sidecar_name_with_parent_component_fails() {
    sidecar_refused(
        |hex| format!("{hex}  ../consumer-sdk/{TGZ}\n"),
        "`..` component",
    );
}

#[test]
fn sidecar_with_absolute_name_fails() {
    sidecar_refused(
        |hex| format!("{hex}  /srv/vendor/consumer-sdk/{TGZ}\n"),
        "absolute name",
    );
}

#[test]
fn sidecar_with_several_lines_fails() {
    let (w, hex) = with_fake_tarball();
    // Two digests for the artifact: conflicting.
    fs::write(w.sidecar(), format!("{hex}  {TGZ}\n{H0}  {TGZ}\n")).unwrap();
    failed(
        &w.verify(&[]).code(1).json(),
        "sidecar",
        REL_TGZ,
        "listed twice",
    );
    // The right line plus one for another file: a sidecar is for one artifact.
    fs::write(w.sidecar(), format!("{hex}  {TGZ}\n{H0}  other.tgz\n")).unwrap();
    failed(
        &w.verify(&[]).code(1).json(),
        "sidecar",
        REL_TGZ,
        "has 2 lines",
    );
}

#[test]
fn sidecar_in_bsd_tag_form_is_accepted() {
    let (w, hex) = with_fake_tarball();
    fs::write(w.sidecar(), format!("SHA256 ({TGZ}) = {hex}\n")).unwrap();
    w.verify(&[]).code(0);
}

#[test]
fn artifact_that_is_a_symlink_fails() {
    let (w, _) = with_fake_tarball();
    let real = w.path("elsewhere.tgz");
    fs::rename(w.tgz(), &real).unwrap();
    symlink(&real, w.tgz()).unwrap();
    let r = w.verify(&[]).code(1).json();
    failed(&r, "artifact", REL_TGZ, "is a symlink, not a regular file");
    // A symlinked archive without a sidecar is still an artifact, and fails.
    symlink(&real, w.path(&format!("{SDK}/linked.tgz"))).unwrap();
    let r = w.verify(&[]).code(1).json();
    failed(&r, "artifact", "consumer-sdk/linked.tgz", "is a symlink");
    failed(&r, "sidecar", "consumer-sdk/linked.tgz", "has no sidecar");
}

#[test]
fn artifact_that_is_not_a_regular_file_fails() {
    let (w, _) = with_fake_tarball();
    fs::remove_file(w.tgz()).unwrap();
    fs::create_dir(w.tgz()).unwrap();
    failed(
        &w.verify(&[]).code(1).json(),
        "artifact",
        REL_TGZ,
        "is a directory",
    );
    fs::remove_dir(w.tgz()).unwrap();
    let st = Command::new("mkfifo").arg(w.tgz()).status().unwrap();
    assert!(st.success());
    // A fifo is never opened, so this cannot hang.
    failed(
        &w.verify(&[]).code(1).json(),
        "artifact",
        REL_TGZ,
        "special file",
    );
}

#[test]
fn sidecar_that_is_a_symlink_fails() {
    let (w, _) = with_fake_tarball();
    let real = w.path("elsewhere.sha256");
    fs::rename(w.sidecar(), &real).unwrap();
    symlink(&real, w.sidecar()).unwrap();
    failed(
        &w.verify(&[]).code(1).json(),
        "sidecar",
        REL_TGZ,
        "is a symlink",
    );
}

#[test]
fn orphan_sidecar_fails() {
    let (w, _) = with_fake_tarball();
    fs::remove_file(w.tgz()).unwrap();
    let r = w.verify(&[]).code(1).json();
    failed(
        &r,
        "sidecar",
        &format!("{REL_TGZ}.sha256"),
        "orphan sidecar",
    );
}

#[test]
fn one_bad_artifact_does_not_hide_the_others() {
    let (w, _) = with_fake_tarball();
    w.fake_tarball("vendor/other-sdk/other-1.0.0.tgz");
    fs::write(w.sidecar(), "").unwrap();
    let r = w.verify(&[]).code(1).json();
    passed(&r, "sidecar", "other-sdk/other-1.0.0.tgz");
    assert_eq!(failures(&r), [format!("sidecar {REL_TGZ}")]);
}

#[test]
fn vendor_dir_missing_or_not_a_dir_is_exit_2_and_empty_is_exit_1() {
    let w = World::new();
    w.run(&["verify-vendor", "nope"])
        .code(2)
        .stderr_has("vendor directory nope cannot be used")
        .stderr_has("help: ");
    w.write("file", "x");
    w.run(&["verify-vendor", "file"])
        .code(2)
        .stderr_has("not a directory");
    let r = w.verify(&[]).code(1).json();
    failed(&r, "artifacts", "vendor", "holds no artifacts");
}

// ---- the release manifest ----------------------------------------------------------------

#[test]
fn manifest_missing_the_artifact_fails() {
    let (w, _) = with_fake_tarball();
    w.write_json_manifest(H0);
    let mut m: Value = serde_json::from_str(
        &fs::read_to_string(w.path(&format!("{SDK}/release-manifest.json"))).unwrap(),
    )
    .unwrap();
    m["artifacts"].as_array_mut().unwrap().remove(0);
    w.write(&format!("{SDK}/release-manifest.json"), m.to_string());
    let r = w.verify_with_manifest().code(1).json();
    failed(
        &r,
        "manifest",
        REL_TGZ,
        "does not list acme-consumer-0.4.0.tgz",
    );
}

#[test]
fn sha256sum_format_manifest_is_detected_and_checked() {
    let (w, hex) = with_fake_tarball();
    w.write(
        "SHA256SUMS",
        format!("{hex}  dist/{TGZ}\n{H0}  dist/other.tgz\n"),
    );
    let r = w.verify(&["--manifest", "SHA256SUMS"]).code(0).json();
    assert_eq!(r["manifest"]["format"], "sha256sum");
    passed(&r, "manifest", REL_TGZ);
    w.write("SHA256SUMS", format!("{H0}  {TGZ}\n"));
    let r = w.verify(&["--manifest", "SHA256SUMS"]).code(1).json();
    failed(&r, "manifest", REL_TGZ, "differs from the sidecar's");
}

#[test]
fn malformed_manifest_is_exit_2() {
    let (w, hex) = with_fake_tarball();
    let cases: [(&str, String, &str); 6] = [
        (
            "truncated JSON",
            r#"{"artifacts":[{"name":"#.into(),
            "not JSON",
        ),
        (
            "no artifacts",
            r#"{"files":[]}"#.into(),
            "`artifacts` is missing",
        ),
        (
            "entry without sha256",
            json!({"artifacts":[{"name":"a","version":"1","file":TGZ}]}).to_string(),
            "artifacts[0].sha256 is missing",
        ),
        (
            "short sha256",
            json!({"artifacts":[{"name":"a","version":"1","file":TGZ,"sha256":&hex[..10]}]})
                .to_string(),
            "must be 64 hex digits",
        ),
        (
            "sha256sum garbage",
            "garbage\n".into(),
            "neither JSON nor sha256sum",
        ),
        (
            "sha256sum with a blank line",
            format!("{hex}  {TGZ}\n\n"),
            "blank line",
        ),
    ];
    for (what, text, needle) in cases {
        w.write("m", text);
        let run = w.verify(&["--manifest", "m"]);
        assert_eq!(run.code, 2, "{what}\n{run}");
        assert!(
            run.stderr.contains(needle),
            "{what}: stderr lacks {needle:?}\n{run}"
        );
        // With --json the only thing on stdout is the error object, never a report.
        let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(out["ok"], false, "{what}\n{run}");
        assert_eq!(out["exit"], 2, "{what}\n{run}");
        assert!(
            out.get("artifacts").is_none(),
            "{what}: a report was printed\n{run}"
        );
    }
    w.verify(&["--manifest", "absent.json"])
        .code(2)
        .stderr_has("cannot read absent.json");
}

// ---- pin-vendor --------------------------------------------------------------------------

#[test]
fn pin_vendor_writes_a_sidecar_that_verifies() {
    let (w, hex) = with_fake_tarball();
    fs::remove_file(w.sidecar()).unwrap();
    let tgz = format!("{SDK}/{TGZ}");
    w.run(&["pin-vendor", &tgz]).code(0).stdout_has("(written)");
    assert_eq!(
        fs::read_to_string(w.sidecar()).unwrap(),
        format!("{hex}  {TGZ}\n")
    );
    w.run(&["pin-vendor", &tgz])
        .code(0)
        .stdout_has("(unchanged)");
    fs::write(w.sidecar(), format!("{H0}  {TGZ}\n")).unwrap();
    w.run(&["pin-vendor", &tgz])
        .code(0)
        .stdout_has("replaced: was");
    w.verify(&[]).code(0);
}

#[test]
fn pin_vendor_refuses_when_the_manifest_disagrees_or_lacks_the_file() {
    let (w, hex) = with_fake_tarball();
    fs::remove_file(w.sidecar()).unwrap();
    let tgz = format!("{SDK}/{TGZ}");
    let m = format!("{SDK}/release-manifest.json");
    w.write_json_manifest(H0);
    let r = w.run(&["pin-vendor", &tgz, "--manifest", &m]);
    r.code(1)
        .stderr_has("refused: ")
        .stderr_has(H0)
        .stderr_has(&hex)
        .stderr_has("help: the tarball is not the file");
    // Issue 12.8: the help line does not suggest the very command that just refused.
    assert!(!r.stderr.contains("mcp-deploy pin-vendor"), "{}", r.stderr);
    assert!(!w.sidecar().exists(), "a sidecar was written");
    w.write(
        &m,
        json!({"artifacts":[{"name":"x","version":"1","file":"x.tgz","sha256":hex}]}).to_string(),
    );
    w.run(&["pin-vendor", &tgz, "--manifest", &m])
        .code(1)
        .stderr_has("does not list acme-consumer-0.4.0.tgz");
    assert!(!w.sidecar().exists(), "a sidecar was written");
    w.write(&m, "{");
    w.run(&["pin-vendor", &tgz, "--manifest", &m]).code(2);
    w.write_json_manifest(&hex);
    w.run(&["pin-vendor", &tgz, "--manifest", &m]).code(0);
    assert!(w.sidecar().exists());
}

#[test]
fn pin_vendor_refuses_a_missing_or_symlinked_tarball() {
    let (w, _) = with_fake_tarball();
    w.run(&["pin-vendor", "vendor/none.tgz"])
        .code(2)
        .stderr_has("none.tgz");
    symlink(w.tgz(), w.path("link.tgz")).unwrap();
    w.run(&["pin-vendor", "link.tgz"])
        .code(2)
        .stderr_has("is a symlink");
    assert!(!w.path("link.tgz.sha256").exists());
}

#[test]
fn explicit_project_is_used_and_must_hold_package_json_around_dir() {
    let w = World::installed();
    // Moved away from its project, the vendor dir is found by --project, not by the search.
    fs::rename(w.path("vendor"), w.w.root().join("vendor")).unwrap();
    let moved = w.w.root().join("vendor");
    let moved = moved.to_str().unwrap();
    let r = w.run(&["verify-vendor", moved, "--json"]).code(0).json();
    assert_eq!(r["project"], Value::Null);
    w.run(&["verify-vendor", moved, "--project", "."])
        .code(2)
        .stderr_has("is not inside the project");
    fs::rename(moved, w.path("vendor")).unwrap();
    let r = w.verify(&["--project", "."]).code(0).json();
    assert_eq!(r["project"]["lockfile_version"], 3);
    w.run(&["verify-vendor", "vendor", "--project", "vendor"])
        .code(2)
        .stderr_has("no package.json in ");
}

#[test]
fn manifest_inside_dir_named_like_a_sidecar_is_not_an_orphan() {
    let (w, hex) = with_fake_tarball();
    let m = format!("{SDK}/release.sha256");
    w.write(&m, format!("{hex}  {TGZ}\n"));
    let r = w.verify(&["--manifest", &m]).code(0).json();
    passed(&r, "manifest", REL_TGZ);
    assert!(
        r["ignored"].to_string().contains("the release manifest"),
        "{r:#}"
    );
    // Without --manifest the same file is an orphan sidecar: nothing is special about it.
    let r = w.verify(&[]).code(1).json();
    failed(
        &r,
        "sidecar",
        "consumer-sdk/release.sha256",
        "orphan sidecar",
    );
}
