//! Releases signed by their builder (issue 15, items 6–9): the `signature` check against the
//! real `ssh-keygen` (openssh-client). Keys and signatures are made by ssh-keygen; every verdict
//! of mcp-deploy is set beside `ssh-keygen -Y verify`'s on the same files, and both are
//! asserted. Where they differ on purpose (a manifest that does not list VERSION, a symlinked
//! signature) the row says why. Then install and verify-identity end to end with the real
//! claude.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::*;

pub(crate) const NS: &str = "mcp-deploy";
pub(crate) const PRINCIPAL: &str = "builder@example.org";

fn ssh_keygen() -> PathBuf {
    // Fails, never skips, when openssh-client is missing (.ci/run installs it).
    system_tool("ssh-keygen")
}

/// `ssh-keygen -t KIND` into `dir/NAME`; returns the private key's path (`.pub` beside it).
pub(crate) fn keygen(dir: &Path, name: &str, kind: &[&str]) -> PathBuf {
    let key = dir.join(name);
    let out = Command::new(ssh_keygen())
        .args(["-q", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .args(kind)
        .output()
        .unwrap();
    assert!(out.status.success(), "ssh-keygen -t: {out:?}");
    key
}

pub(crate) fn ed25519(dir: &Path, name: &str) -> PathBuf {
    keygen(dir, name, &["-t", "ed25519"])
}

pub(crate) fn public(key: &Path) -> String {
    fs::read_to_string(key.with_extension("pub"))
        .unwrap()
        .trim()
        .to_string()
}

/// `ssh-keygen -Y sign -f KEY -n NS FILE`, which writes `FILE.sig`; returns that path.
pub(crate) fn sign(key: &Path, ns: &str, file: &Path) -> PathBuf {
    let sig = PathBuf::from(format!("{}.sig", file.display()));
    let _ = fs::remove_file(&sig);
    let out = Command::new(ssh_keygen())
        .args(["-Y", "sign", "-n", ns, "-f"])
        .arg(key)
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "ssh-keygen -Y sign: {out:?}");
    sig
}

/// `ssh-keygen -Y verify -f POLICY -I PRINCIPAL -n mcp-deploy -s SIG < MANIFEST`: its verdict.
fn keygen_verifies(policy: &Path, principal: &str, sig: &Path, manifest: &Path) -> bool {
    Command::new(ssh_keygen())
        .args(["-Y", "verify", "-n", NS, "-I", principal, "-f"])
        .arg(policy)
        .arg("-s")
        .arg(sig)
        .stdin(fs::File::open(manifest).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// `ssh-keygen -Y find-principals -f POLICY -s SIG`: the principals it names, or none.
fn keygen_principals(policy: &Path, sig: &Path) -> Option<String> {
    let out = Command::new(ssh_keygen())
        .args(["-Y", "find-principals", "-f"])
        .arg(policy)
        .arg("-s")
        .arg(sig)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A world with the codetools release at `opt/codetools` (release layout, one release), its
/// manifest made by `manifest create`, and a flat document registering it as declared.
struct Signed {
    w: World,
    keys: PathBuf,
}

impl Signed {
    fn new() -> Signed {
        let w = World::new();
        release_layout(&w.opt().join("codetools"), CT_SHA);
        let keys = w.root().join("keys");
        fs::create_dir_all(&keys).unwrap();
        let s = Signed { w, keys };
        s.manifest_create();
        flat_doc(
            &s.doc(),
            "codetools",
            s.prefix().join("bin/codetools").to_str().unwrap(),
            &["mcp", "serve"],
        );
        s
    }
    fn prefix(&self) -> PathBuf {
        self.w.opt().join("codetools")
    }
    fn release(&self) -> PathBuf {
        self.prefix().join("releases").join(CT_SHA)
    }
    fn manifest(&self) -> PathBuf {
        self.release().join("MANIFEST.sha256")
    }
    fn sig(&self) -> PathBuf {
        self.release().join("MANIFEST.sha256.sig")
    }
    fn doc(&self) -> PathBuf {
        self.w.root().join("doc.json")
    }
    fn manifest_create(&self) {
        self.w
            .cmd()
            .args(["manifest", "create"])
            .arg(self.release())
            .run()
            .code(0);
    }
    /// Write the trust policy `lines` and return its path.
    fn policy(&self, lines: &str) -> PathBuf {
        let p = self.w.root().join("allowed_signers");
        fs::write(&p, lines).unwrap();
        p
    }
    fn verify(&self, extra: &[&str]) -> Run {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        self.w
            .verify_identity(&self.prefix(), CT_SHA, &self.doc(), &args)
    }
    /// mcp-deploy's verdict with `policy`: the `signature` check's ok and detail, and the exit
    /// code that goes with it (1 on a failed check, 0 on a pass; never 2).
    fn ours(&self, policy: &Path) -> (bool, String) {
        let r = self.verify(&["--trusted-signers", policy.to_str().unwrap()]);
        let checks = r.checks();
        let ok = checks
            .iter()
            .find(|(c, _)| c == "signature")
            .unwrap_or_else(|| panic!("no signature check: {r}"))
            .1;
        r.code(if checks.iter().all(|c| c.1) { 0 } else { 1 });
        (ok, r.detail("signature"))
    }
}

/// One row: how to damage (or not) a signed release, what ssh-keygen says (`None`: not asked,
/// since the input would hang or fool it), what mcp-deploy says and why.
struct Row {
    name: &'static str,
    /// The policy's options for the builder's key.
    options: &'static str,
    /// Sets up the release after the manifest is made; gets the builder's key and another.
    setup: fn(&Signed, &Path, &Path),
    keygen: Option<bool>,
    ours: bool,
    evidence: &'static str,
}

fn sign_manifest(s: &Signed, key: &Path) {
    sign(key, NS, &s.manifest());
}

#[test]
fn verdicts_agree_with_ssh_keygen_on_every_case() {
    let rows = [
        Row {
            name: "signed by the builder",
            options: "",
            setup: |s, k, _| sign_manifest(s, k),
            keygen: Some(true),
            ours: true,
            evidence: "builder@example.org (",
        },
        Row {
            name: "namespaces pattern allows mcp-deploy",
            options: "namespaces=\"git,mcp-*\" ",
            setup: |s, k, _| sign_manifest(s, k),
            keygen: Some(true),
            ours: true,
            evidence: "signed by builder@example.org",
        },
        Row {
            name: "inside its validity",
            options: "valid-after=\"20000101Z\",valid-before=\"29990101Z\" ",
            setup: |s, k, _| sign_manifest(s, k),
            keygen: Some(true),
            ours: true,
            evidence: "signed by",
        },
        Row {
            name: "no signature",
            options: "",
            setup: |_, _, _| {},
            keygen: Some(false),
            ours: false,
            evidence: "unsigned: no MANIFEST.sha256.sig",
        },
        Row {
            name: "a key not in the file",
            options: "",
            setup: |s, _, other| sign_manifest(s, other),
            keygen: Some(false),
            ours: false,
            evidence: "does not list",
        },
        Row {
            name: "the line's namespaces do not allow mcp-deploy",
            options: "namespaces=\"git\" ",
            setup: |s, k, _| sign_manifest(s, k),
            keygen: Some(false),
            ours: false,
            evidence: "does not allow the namespace mcp-deploy (namespaces=\"git\")",
        },
        Row {
            name: "a negated namespace",
            options: "namespaces=\"*,!mcp-deploy\" ",
            setup: |s, k, _| sign_manifest(s, k),
            keygen: Some(false),
            ours: false,
            evidence: "does not allow the namespace",
        },
        Row {
            name: "valid-before in the past",
            options: "valid-before=\"20000101Z\" ",
            setup: |s, k, _| sign_manifest(s, k),
            keygen: Some(false),
            ours: false,
            evidence: "has expired (valid-before 2000-01-01T00:00:00Z)",
        },
        Row {
            name: "valid-after in the future",
            options: "valid-after=\"29990101120000Z\" ",
            setup: |s, k, _| sign_manifest(s, k),
            keygen: Some(false),
            ours: false,
            evidence: "is not valid yet (valid-after 2999-01-01T12:00:00Z)",
        },
        Row {
            name: "the manifest changed after signing",
            options: "",
            setup: |s, k, _| {
                sign_manifest(s, k);
                let mut text = fs::read_to_string(s.manifest()).unwrap();
                text.push_str(&format!("{}  lib/evil.so\n", "0".repeat(64)));
                fs::write(s.manifest(), text).unwrap();
            },
            keygen: Some(false),
            ours: false,
            evidence: "does not verify over MANIFEST.sha256",
        },
        Row {
            name: "a signature over another file (VERSION)",
            options: "",
            setup: |s, k, _| {
                let other = sign(k, NS, &s.release().join("VERSION"));
                fs::rename(other, s.sig()).unwrap();
            },
            keygen: Some(false),
            ours: false,
            evidence: "does not verify",
        },
        Row {
            name: "a signature made for another namespace",
            options: "",
            setup: |s, k, _| {
                sign(k, "git", &s.manifest());
            },
            keygen: Some(false),
            ours: false,
            evidence: "for the namespace \"git\", not \"mcp-deploy\"",
        },
        Row {
            name: "a malformed signature",
            options: "",
            setup: |s, _, _| {
                fs::write(
                    s.sig(),
                    "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==\n-----END SSH SIGNATURE-----\n",
                )
                .unwrap();
            },
            keygen: Some(false),
            ours: false,
            evidence: "is not an SSH signature",
        },
        Row {
            name: "an older manifest's signature after VERSION changed",
            options: "",
            setup: |s, k, _| {
                sign_manifest(s, k);
                let sig = fs::read(s.sig()).unwrap();
                fs::write(s.release().join("VERSION"), format!("{}\n", "f".repeat(40))).unwrap();
                s.manifest_create();
                fs::write(s.sig(), sig).unwrap();
            },
            keygen: Some(false),
            ours: false,
            evidence: "does not verify over MANIFEST.sha256",
        },
        // ssh-keygen verifies bytes; it does not know that the manifest must name VERSION for
        // the signature to cover the commit.
        Row {
            name: "a manifest that does not list VERSION",
            options: "",
            setup: |s, k, _| {
                let text = fs::read_to_string(s.manifest()).unwrap();
                let kept: String = text
                    .lines()
                    .filter(|l| !l.ends_with("  VERSION"))
                    .map(|l| format!("{l}\n"))
                    .collect();
                fs::write(s.manifest(), kept).unwrap();
                sign_manifest(s, k);
            },
            keygen: Some(true),
            ours: false,
            evidence: "does not list VERSION, so the signature does not cover the commit",
        },
        // ssh-keygen -s follows the link; a release's signature is never read through one.
        Row {
            name: "a symlinked MANIFEST.sha256.sig pointing outside the release",
            options: "",
            setup: |s, k, _| {
                let sig = sign(k, NS, &s.manifest());
                let outside = s.w.root().join("elsewhere.sig");
                fs::rename(sig, &outside).unwrap();
                symlink(&outside, s.sig()).unwrap();
            },
            keygen: Some(true),
            ours: false,
            evidence: "is a symlink",
        },
        // Read bounded and never blocking: ssh-keygen is not asked (it would wait on the FIFO).
        Row {
            name: "a FIFO as the signature",
            options: "",
            setup: |s, _, _| {
                let out = Command::new("mkfifo").arg(s.sig()).output().unwrap();
                assert!(out.status.success());
            },
            keygen: None,
            ours: false,
            evidence: "a FIFO",
        },
        Row {
            name: "a 1 GiB signature",
            options: "",
            setup: |s, _, _| {
                let f = fs::File::create(s.sig()).unwrap();
                f.set_len(1 << 30).unwrap();
            },
            keygen: None,
            ours: false,
            evidence: "larger than 64 KiB",
        },
    ];
    let mut failures = Vec::new();
    for row in rows {
        let s = Signed::new();
        let builder = ed25519(&s.keys, "builder");
        let other = ed25519(&s.keys, "other");
        let policy = s.policy(&format!(
            "{PRINCIPAL} {}{}\n",
            row.options,
            public(&builder)
        ));
        (row.setup)(&s, &builder, &other);
        let keygen = row
            .keygen
            .map(|_| keygen_verifies(&policy, PRINCIPAL, &s.sig(), &s.manifest()));
        let (ours, detail) = s.ours(&policy);
        if keygen != row.keygen || ours != row.ours || !detail.contains(row.evidence) {
            failures.push(format!(
                "{}: ssh-keygen {keygen:?} (want {:?}), mcp-deploy {ours} (want {}): {detail}",
                row.name, row.keygen, row.ours
            ));
        }
        assert!(!detail.contains("AAAA"), "key material printed: {detail}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ed25519_ecdsa_and_rsa_signatures_by_ssh_keygen_verify_and_name_the_principal() {
    let s = Signed::new();
    let kinds: [(&str, &[&str]); 5] = [
        ("ed25519", &["-t", "ed25519"]),
        ("ecdsa-p256", &["-t", "ecdsa", "-b", "256"]),
        ("ecdsa-p384", &["-t", "ecdsa", "-b", "384"]),
        ("ecdsa-p521", &["-t", "ecdsa", "-b", "521"]),
        ("rsa-3072", &["-t", "rsa", "-b", "3072"]),
    ];
    for (name, kind) in kinds {
        let key = keygen(&s.keys, name, kind);
        let policy = s.policy(&format!("{name}@ci,{PRINCIPAL} {}\n", public(&key)));
        sign_manifest(&s, &key);
        assert!(keygen_verifies(&policy, PRINCIPAL, &s.sig(), &s.manifest()));
        let (ok, detail) = s.ours(&policy);
        assert!(ok, "{name}: {detail}");
        // The principal we name is the one ssh-keygen finds for the signature.
        // find-principals prints them one a line.
        let found = keygen_principals(&policy, &s.sig())
            .unwrap()
            .lines()
            .collect::<Vec<_>>()
            .join(",");
        assert!(
            detail.contains(&format!("{found} (")),
            "{name}: {detail} vs {found}"
        );
        let fp = Command::new(ssh_keygen())
            .args(["-l", "-E", "sha256", "-f"])
            .arg(key.with_extension("pub"))
            .output()
            .unwrap();
        let fp = String::from_utf8_lossy(&fp.stdout);
        let fp = fp.split_whitespace().nth(1).unwrap();
        assert!(detail.contains(fp), "{name}: {detail} lacks {fp}");
    }
}

/// The other direction, for the key types the crate can sign with: mcp-deploy itself only
/// verifies, but a signature the crate makes must be one OpenSSH accepts. (ssh-key 0.6.7 fails
/// to sign with an OpenSSH RSA key, "cryptographic error"; RSA verification is covered above.)
#[test]
fn signatures_made_by_the_ssh_key_crate_verify_with_ssh_keygen() {
    let s = Signed::new();
    for (name, kind) in [
        ("ed25519", &["-t", "ed25519"][..]),
        ("ecdsa", &["-t", "ecdsa", "-b", "256"][..]),
    ] {
        let key = keygen(&s.keys, name, kind);
        let private = ssh_key::PrivateKey::read_openssh_file(&key).unwrap();
        let manifest = fs::read(s.manifest()).unwrap();
        let sig = private
            .sign(NS, ssh_key::HashAlg::Sha512, &manifest)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        fs::write(s.sig(), sig.to_pem(ssh_key::LineEnding::LF).unwrap()).unwrap();
        let policy = s.policy(&format!("{PRINCIPAL} {}\n", public(&key)));
        assert!(
            keygen_verifies(&policy, PRINCIPAL, &s.sig(), &s.manifest()),
            "{name}: ssh-keygen refuses a signature made by the ssh-key crate"
        );
        assert!(s.ours(&policy).0, "{name}");
    }
}

#[test]
fn a_policy_that_cannot_be_read_is_exit_2_naming_the_file() {
    let s = Signed::new();
    let key = ed25519(&s.keys, "builder");
    sign_manifest(&s, &key);
    let cases = [
        (
            format!(
                "# ok\n{PRINCIPAL} {}\nbroken ssh-ed25519 !!!\n",
                public(&key)
            ),
            "allowed_signers:3: ",
        ),
        (
            format!("{PRINCIPAL} cert-authority {}\n", public(&key)),
            "allowed_signers:1: cert-authority is not supported",
        ),
        (
            format!("{PRINCIPAL} valid-before=\"20990101\" {}\n", public(&key)),
            "no trailing Z",
        ),
        (
            format!("{PRINCIPAL} verify-required {}\n", public(&key)),
            "unsupported option \"verify-required\"",
        ),
        ("# nobody\n".to_string(), "lists no signer"),
    ];
    for (text, want) in cases {
        let policy = s.policy(&text);
        s.verify(&["--trusted-signers", policy.to_str().unwrap()])
            .code(2)
            .stderr_has(want)
            .stderr_has("help: ");
    }
    let missing = s.w.root().join("nope");
    s.verify(&["--trusted-signers", missing.to_str().unwrap()])
        .code(2)
        .stderr_has("trust policy: cannot read")
        .stderr_has("nope");
    let fifo = s.w.root().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    s.verify(&["--trusted-signers", fifo.to_str().unwrap()])
        .code(2)
        .stderr_has("FIFO");
}

#[test]
fn without_a_policy_nothing_fails_and_the_report_says_unsigned_or_unchecked() {
    let s = Signed::new();
    let r = s.verify(&[]);
    r.code(0);
    assert_eq!(
        r.detail("signature"),
        "unsigned: no MANIFEST.sha256.sig (not checked: no trust policy)"
    );
    let key = ed25519(&s.keys, "builder");
    sign_manifest(&s, &key);
    let r = s.verify(&[]);
    r.code(0);
    assert!(r
        .detail("signature")
        .starts_with("signed, not checked: no trust policy"));
    // The signature is not content: the content check still passes.
    let r =
        s.w.verify_identity(&s.prefix(), CT_SHA, &s.doc(), &["--content"]);
    r.code(0)
        .stdout_has("signature         signed, not checked: no trust policy");
}

#[test]
fn the_declarations_trusted_signers_applies_and_the_flag_must_pass_too() {
    let s = Signed::new();
    let builder = ed25519(&s.keys, "builder");
    let other = ed25519(&s.keys, "other");
    sign_manifest(&s, &builder);
    // Relative to the declaration file.
    fs::create_dir_all(s.w.root().join("etc")).unwrap();
    fs::write(
        s.w.root().join("etc/builders"),
        format!("{PRINCIPAL} {}\n", public(&builder)),
    )
    .unwrap();
    let decl = s.w.root().join("etc/servers.json");
    let doc = serde_json::json!({"servers": [{"name": "codetools", "prefix": "/opt/codetools",
        "layout": "release", "entry": {"command": "{{prefix}}/bin/codetools", "args": ["mcp", "serve"]},
        "trusted_signers": "builders"}]});
    fs::write(&decl, doc.to_string()).unwrap();
    let r = s.verify(&["--config", decl.to_str().unwrap()]);
    r.code(0);
    assert!(r.detail("signature").contains("etc/builders:1"), "{r}");

    // The flag names another builder: both must pass, so the release fails.
    let flag = s.policy(&format!("other@example.org {}\n", public(&other)));
    let r = s.verify(&[
        "--config",
        decl.to_str().unwrap(),
        "--trusted-signers",
        flag.to_str().unwrap(),
    ]);
    r.code(1);
    assert!(r.detail("signature").contains("does not list"), "{r}");

    // Unsigned, the server's own policy fails it.
    fs::remove_file(s.sig()).unwrap();
    let r = s.verify(&["--config", decl.to_str().unwrap()]);
    r.code(1);
    assert!(r.detail("signature").starts_with("unsigned"), "{r}");
}

/// The sample, with codetools' release manifest made and (optionally) signed by `key`.
fn signed_sample(w: &World, key: Option<&Path>) -> PathBuf {
    let opt = w.sample();
    let rel = opt.join("codetools/releases").join(CT_SHA);
    w.cmd().args(["manifest", "create"]).arg(&rel).run().code(0);
    if let Some(key) = key {
        sign(key, NS, &rel.join("MANIFEST.sha256"));
    }
    opt
}

#[test]
fn install_with_a_policy_refuses_an_unsigned_or_unlisted_release_and_changes_nothing() {
    for signer in ["none", "unlisted"] {
        let w = World::with_real_claude();
        let keys = w.root().join("keys");
        fs::create_dir_all(&keys).unwrap();
        let builder = ed25519(&keys, "builder");
        let other = ed25519(&keys, "other");
        let key = (signer == "unlisted").then_some(other.as_path());
        let opt = signed_sample(&w, key);
        let policy = w.write(
            "allowed_signers",
            format!("{PRINCIPAL} {}\n", public(&builder)),
        );
        let claude_before = fs::read(w.claude_json()).ok();
        let r = w
            .sample_cmd("install")
            .args(["--server", "codetools", "--trusted-signers"])
            .arg(&policy)
            .run();
        r.code(1)
            .stdout_has("FAIL signature")
            .stdout_has("no registration was changed");
        assert!(
            w.user_servers().is_empty(),
            "{signer}: {:?}",
            w.user_servers()
        );
        assert_eq!(fs::read(w.claude_json()).ok(), claude_before, "{signer}");
        assert!(
            !w.registered().exists(),
            "{signer}: the document was written"
        );
        assert!(
            !opt.join("codetools/mcp/codetools.mcp.json").exists(),
            "{signer}: the rendered document was written"
        );
        // The dry run shows the same gate.
        w.sample_cmd("install")
            .args(["--server", "codetools", "--dry-run", "--trusted-signers"])
            .arg(&policy)
            .run()
            .code(1)
            .stdout_has("gate FAIL signature");
    }
}

#[test]
fn install_with_a_policy_registers_a_properly_signed_release_and_verify_reports_it() {
    let w = World::with_real_claude();
    let keys = w.root().join("keys");
    fs::create_dir_all(&keys).unwrap();
    let builder = ed25519(&keys, "builder");
    let opt = signed_sample(&w, Some(&builder));
    let policy = w.write(
        "allowed_signers",
        format!(
            "{PRINCIPAL} namespaces=\"mcp-deploy\" {}\n",
            public(&builder)
        ),
    );
    let r = w
        .sample_cmd("install")
        .args(["--server", "codetools", "--json", "--trusted-signers"])
        .arg(&policy)
        .run();
    r.code(0);
    assert_eq!(r.json()["servers"][0]["registration"], "added", "{r}");
    assert!(
        r.detail("signature")
            .contains("signed by builder@example.org"),
        "{r}"
    );
    assert!(w.user_servers().contains_key("codetools-test"));

    let r = w
        .cmd()
        .args(["verify-identity", "--prefix"])
        .arg(opt.join("codetools"))
        .args([
            "--expect-commit",
            CT_SHA,
            "--name",
            "codetools-test",
            "--trusted-signers",
        ])
        .arg(&policy)
        .run();
    r.code(0).stdout_has(
        "ok   signature         MANIFEST.sha256 (listing VERSION) is signed by builder@example.org",
    );

    // A file changed after the release was signed: the content check catches it, the
    // signature still holds for the manifest.
    fs::write(
        opt.join("codetools/current/bin/codetools"),
        "#!/bin/sh\necho evil\n",
    )
    .unwrap();
    let r = w
        .cmd()
        .args(["verify-identity", "--prefix"])
        .arg(opt.join("codetools"))
        .args([
            "--expect-commit",
            CT_SHA,
            "--name",
            "codetools-test",
            "--trusted-signers",
        ])
        .arg(&policy)
        .run();
    r.code(1)
        .stdout_has("FAIL content")
        .stdout_has("ok   signature");
}

#[test]
fn a_policy_requires_the_manifest_and_never_reads_it_through_a_link() {
    let s = Signed::new();
    let key = ed25519(&s.keys, "builder");
    let policy = s.policy(&format!("{PRINCIPAL} {}\n", public(&key)));
    sign_manifest(&s, &key);
    // The signed manifest moved out and linked back: the bytes are the signed ones, but a
    // link may lead anywhere, so neither check reads through it.
    let outside = s.w.root().join("MANIFEST.sha256");
    fs::rename(s.manifest(), &outside).unwrap();
    symlink(&outside, s.manifest()).unwrap();
    let r = s.verify(&["--trusted-signers", policy.to_str().unwrap()]);
    r.code(1);
    assert!(r.detail("content").contains("it is a symlink"), "{r}");
    assert!(r.detail("signature").contains("it is a symlink"), "{r}");

    // No manifest at all: content is required by the policy, and the signature covers nothing.
    fs::remove_file(s.manifest()).unwrap();
    let r = s.verify(&["--trusted-signers", policy.to_str().unwrap()]);
    r.code(1);
    assert!(r.detail("content").contains("does not exist"), "{r}");
    assert!(r.detail("signature").contains("must be there"), "{r}");
}

/// RSA moduli the verifier cannot check (the RSA crate takes 2048 to 4096 bits) fail with
/// their size said, not as a "cryptographic error" that reads like a tampered manifest.
/// ssh-keygen accepts both. The 8192-bit key and its signature are fixtures: making one takes
/// half a minute.
#[test]
fn rsa_keys_outside_2048_to_4096_bits_and_dsa_fail_saying_why() {
    let s = Signed::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/signatures");
    fs::copy(fixtures.join("rsa8192.MANIFEST.sha256"), s.manifest()).unwrap();
    fs::copy(fixtures.join("rsa8192.MANIFEST.sha256.sig"), s.sig()).unwrap();
    let big = fs::read_to_string(fixtures.join("rsa8192.pub")).unwrap();
    let policy = s.policy(&format!("{PRINCIPAL} {}\n", big.trim()));
    assert!(keygen_verifies(&policy, PRINCIPAL, &s.sig(), &s.manifest()));
    let (ok, detail) = s.ours(&policy);
    assert!(
        !ok && detail.contains("an RSA key of 8192 bits"),
        "{detail}"
    );

    // DSA, which OpenSSH 9.2 still makes and verifies: refused by name.
    let dsa = keygen(&s.keys, "dsa", &["-t", "dsa"]);
    let policy = s.policy(&format!("{PRINCIPAL} {}\n", public(&dsa)));
    sign_manifest(&s, &dsa);
    let (ok, detail) = s.ours(&policy);
    assert!(!ok && detail.contains("not ssh-dss"), "{detail}");

    let small = keygen(&s.keys, "rsa1024", &["-t", "rsa", "-b", "1024"]);
    let policy = s.policy(&format!("{PRINCIPAL} {}\n", public(&small)));
    sign_manifest(&s, &small);
    assert!(keygen_verifies(&policy, PRINCIPAL, &s.sig(), &s.manifest()));
    let (ok, detail) = s.ours(&policy);
    assert!(
        !ok && detail.contains("an RSA key of 1024 bits"),
        "{detail}"
    );
}

#[test]
fn a_policy_inside_the_prefix_it_vouches_for_fails() {
    let s = Signed::new();
    let key = ed25519(&s.keys, "builder");
    sign_manifest(&s, &key);
    // Whoever can write the release can write a policy kept beside it.
    let inside = s.prefix().join("allowed_signers");
    fs::write(&inside, format!("{PRINCIPAL} {}\n", public(&key))).unwrap();
    assert!(keygen_verifies(&inside, PRINCIPAL, &s.sig(), &s.manifest()));
    let (ok, detail) = s.ours(&inside);
    assert!(!ok && detail.contains("lies inside the prefix"), "{detail}");
    // Through a link from outside, the same.
    let link = s.w.root().join("policy-link");
    symlink(&inside, &link).unwrap();
    let (ok, detail) = s.ours(&link);
    assert!(!ok && detail.contains("lies inside the prefix"), "{detail}");
}

#[test]
fn a_principal_with_a_terminal_escape_is_shown_escaped() {
    let s = Signed::new();
    let key = ed25519(&s.keys, "builder");
    sign_manifest(&s, &key);
    let policy = s.policy(&format!("evil\x1b[2Jname {}\n", public(&key)));
    let r = s.w.verify_identity(
        &s.prefix(),
        CT_SHA,
        &s.doc(),
        &["--trusted-signers", policy.to_str().unwrap()],
    );
    r.code(0).stdout_has("evil\\u{1b}[2Jname");
    assert!(!r.human().contains('\x1b'), "{r}");
}

/// Issue 15: promote with a trust policy checks the new release's signature in its preflight,
/// before anything switches: an unsigned release, or one signed by a key the policy does not
/// list, leaves `current`, the claude config and the document as they were; a release signed
/// by the listed builder goes live.
#[test]
fn promote_with_a_policy_refuses_an_unsigned_or_unlisted_release_before_the_switch() {
    const NEW: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let w = World::with_real_claude();
    let keys = w.root().join("keys");
    fs::create_dir_all(&keys).unwrap();
    let builder = ed25519(&keys, "builder");
    let other = ed25519(&keys, "other");
    let policy = w.write(
        "allowed_signers",
        format!("{PRINCIPAL} {}\n", public(&builder)),
    );
    let ct = w.sample().join("codetools");
    let old = ct.join("releases").join(CT_SHA);
    let new = ct.join("releases").join(NEW);
    fs::create_dir_all(new.join("bin")).unwrap();
    fs::copy(old.join("bin/codetools"), new.join("bin/codetools")).unwrap();
    fs::write(new.join("VERSION"), format!("{NEW}\n")).unwrap();
    w.cmd().args(["manifest", "create"]).arg(&new).run().code(0);
    let manifest = new.join("MANIFEST.sha256");
    let promote = || {
        w.cmd()
            .args(["promote", "--prefix"])
            .arg(&ct)
            .args([
                "--release",
                NEW,
                "--name-suffix",
                "-test",
                "--trusted-signers",
            ])
            .arg(&policy)
            .run()
    };
    let current = || fs::read_link(ct.join("current")).unwrap();
    let live_before = current();
    for signer in ["none", "unlisted"] {
        if signer == "unlisted" {
            sign(&other, NS, &manifest);
        }
        let claude_before = fs::read(w.claude_json()).ok();
        let doc_before = fs::read(w.registered()).ok();
        promote()
            .code(1)
            .stdout_has("FAIL signature")
            .stdout_has("nothing was switched or registered");
        assert_eq!(current(), live_before, "{signer}: current moved");
        assert_eq!(fs::read(w.claude_json()).ok(), claude_before, "{signer}");
        assert_eq!(fs::read(w.registered()).ok(), doc_before, "{signer}");
    }
    sign(&builder, NS, &manifest);
    promote().code(0).stdout_has(PRINCIPAL);
    assert_eq!(current(), Path::new("releases").join(NEW));

    // Attack: rollback to a release the policy does not vouch for — the unsigned one live
    // before, or one a forged history record names as "live before". The rollback target
    // passes the same preflight, signature included: refused, nothing switched.
    let rollback = |to: Option<&str>| {
        let mut c = w
            .cmd()
            .args(["rollback", "--prefix"])
            .arg(&ct)
            .args(["--name-suffix", "-test", "--trusted-signers"])
            .arg(&policy);
        if let Some(to) = to {
            c = c.args(["--to", to]);
        }
        c.run()
    };
    rollback(None)
        .code(1)
        .stdout_has("FAIL signature")
        .stdout_has("nothing was switched or registered");
    assert_eq!(current(), Path::new("releases").join(NEW));
    const FORGED: &str = "cccccccccccccccccccccccccccccccccccccccc";
    let forged = ct.join("releases").join(FORGED);
    fs::create_dir_all(forged.join("bin")).unwrap();
    fs::copy(old.join("bin/codetools"), forged.join("bin/codetools")).unwrap();
    fs::write(forged.join("VERSION"), format!("{FORGED}\n")).unwrap();
    w.cmd()
        .args(["manifest", "create"])
        .arg(&forged)
        .run()
        .code(0);
    sign(&other, NS, &forged.join("MANIFEST.sha256"));
    let history = ct.join(".mcp-deploy/history.ndjson");
    let mut text = fs::read_to_string(&history).unwrap();
    let mut record: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    record["id"] = "forged".into();
    record["from"] = FORGED.into();
    text.push_str(&format!("{record}\n"));
    fs::write(&history, text).unwrap();
    rollback(None)
        .code(1)
        .stdout_has(&format!("releases/{}", &FORGED[..12]))
        .stdout_has("FAIL signature");
    assert_eq!(current(), Path::new("releases").join(NEW));
}

/// Attack: policy lines at the edges of the format, each set beside `ssh-keygen -Y verify`.
/// A namespaces pattern of 1023 bytes or more makes OpenSSH's whole list fail (its buffer is
/// 1024 bytes), so `namespaces="<1023 x>,mcp-deploy"` allowed the signature here while
/// ssh-keygen refused it; now both refuse. Blanks inside `namespaces` are part of a pattern
/// (both refuse `"git, mcp-deploy"`); CRLF line ends are read by both; a second line for the
/// same key may allow what the first does not (both: any matching line); a principal pattern
/// is fine (no identity is asked for). A file starting with a byte-order mark — ssh-keygen
/// takes it as part of the first principal — is refused with exit 2, saying so.
#[test]
fn policy_edge_formats_agree_with_ssh_keygen_or_are_refused_saying_so() {
    let s = Signed::new();
    let builder = ed25519(&s.keys, "builder");
    sign_manifest(&s, &builder);
    let key = public(&builder);
    let long = |n: usize| format!("namespaces=\"{},mcp-deploy\" ", "x".repeat(n));
    let rows: Vec<(&str, String, bool)> = vec![
        (
            "a blank inside namespaces",
            format!("{PRINCIPAL} namespaces=\"git, mcp-deploy\" {key}\n"),
            false,
        ),
        (
            "a namespaces pattern of 1023 bytes",
            format!("{PRINCIPAL} {}{key}\n", long(1023)),
            false,
        ),
        (
            "a namespaces pattern of 1022 bytes",
            format!("{PRINCIPAL} {}{key}\n", long(1022)),
            true,
        ),
        (
            "CRLF line ends",
            format!("# ci\r\n{PRINCIPAL} namespaces=\"mcp-deploy\" {key}\r\n"),
            true,
        ),
        (
            "the key twice, the first line for git only",
            format!("{PRINCIPAL} namespaces=\"git\" {key}\n{PRINCIPAL} {key}\n"),
            true,
        ),
        (
            "the key twice, the second expired",
            format!("{PRINCIPAL} {key}\n{PRINCIPAL} valid-before=\"20000101Z\" {key}\n"),
            true,
        ),
        (
            "a principal pattern",
            format!("*@example.org {key}\n"),
            true,
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, want) in rows {
        let policy = s.policy(&text);
        let keygen = keygen_verifies(&policy, PRINCIPAL, &s.sig(), &s.manifest());
        let (ours, detail) = s.ours(&policy);
        if keygen != want || ours != want {
            failures.push(format!(
                "{name}: ssh-keygen {keygen}, mcp-deploy {ours} (want {want}): {detail}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    let policy = s.policy(&format!("\u{feff}{PRINCIPAL} {key}\n"));
    assert!(!keygen_verifies(
        &policy,
        PRINCIPAL,
        &s.sig(),
        &s.manifest()
    ));
    s.verify(&["--trusted-signers", policy.to_str().unwrap()])
        .code(2)
        .stdout_has("byte-order mark");
}

/// Attack: a trust policy someone else can write — the file group- or world-writable, owned
/// by another user, or in a directory another user can write (where the file can be
/// replaced). Before, it was read and trusted; whoever could write it chose the builders. Now
/// exit 2 naming the file or directory, as sshd's StrictModes refuses such an
/// `authorized_keys`. A policy in a sticky directory such as `/tmp`, owned by us, is fine.
#[test]
fn a_policy_others_can_write_is_exit_2() {
    use std::os::unix::fs::PermissionsExt;
    let s = Signed::new();
    let builder = ed25519(&s.keys, "builder");
    sign_manifest(&s, &builder);
    let line = format!("{PRINCIPAL} {}\n", public(&builder));
    let dir = s.w.root().join("policies");
    fs::create_dir(&dir).unwrap();
    let policy = dir.join("allowed_signers");
    fs::write(&policy, &line).unwrap();
    let verify = || s.verify(&["--trusted-signers", policy.to_str().unwrap()]);
    assert!(s.ours(&policy).0, "a policy only we can write passes");
    let mode = |p: &Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    for m in [0o664, 0o646] {
        mode(&policy, m);
        verify()
            .code(2)
            .stdout_has("can be written by group or others")
            .stdout_has("whoever can write it chooses");
    }
    mode(&policy, 0o644);
    mode(&dir, 0o777);
    verify()
        .code(2)
        .stdout_has("its directory")
        .stdout_has("can be replaced");
    mode(&dir, 0o1777);
    assert!(s.ours(&policy).0, "a sticky directory is fine");
    mode(&dir, 0o755);
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&policy, Some(65534), None).unwrap();
        verify().code(2).stdout_has("belongs to uid 65534");
        std::os::unix::fs::chown(&policy, Some(0), None).unwrap();
    }
    // Through a link: the file it leads to is what is checked.
    let link = s.w.root().join("policy-link");
    symlink(&policy, &link).unwrap();
    mode(&policy, 0o666);
    s.verify(&["--trusted-signers", link.to_str().unwrap()])
        .code(2)
        .stdout_has("can be written by group or others");
}

/// Attack: a signed release changed around its manifest — VERSION rewritten (the manifest
/// lists it, the signature still holds for the manifest), or an executable added that the
/// manifest does not list, at the top or named like the signature deeper down: the `content`
/// check, which a policy makes required, fails naming the file; the signature alone never
/// passes the release.
#[test]
fn a_signed_release_with_version_rewritten_or_an_unlisted_file_added_fails_content() {
    use std::os::unix::fs::PermissionsExt;
    let s = Signed::new();
    let key = ed25519(&s.keys, "builder");
    let policy = s.policy(&format!("{PRINCIPAL} {}\n", public(&key)));
    sign_manifest(&s, &key);
    let flag = ["--trusted-signers", policy.to_str().unwrap()];
    s.verify(&flag).code(0);
    let version = s.release().join("VERSION");
    let good = fs::read(&version).unwrap();
    fs::write(&version, format!("{}\n", "f".repeat(40))).unwrap();
    let r = s.verify(&flag);
    r.code(1);
    assert!(r.detail("content").contains("modified (VERSION)"), "{r}");
    fs::write(&version, good).unwrap();
    for added in [
        "helper",
        "bin/MANIFEST.sha256.sig",
        "MANIFEST.sha256.sig.d/x",
    ] {
        let p = s.release().join(added);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "#!/bin/sh\necho evil\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        let r = s.verify(&flag);
        r.code(1);
        assert!(
            r.detail("content").contains(&format!("1 added ({added})")),
            "{added}: {r}"
        );
        fs::remove_file(&p).unwrap();
    }
    s.verify(&flag).code(0);
}
