//! The npm half of the verifier: `package.json`'s `file:` dependencies into the vendor
//! directory, and the lockfile's `resolved` and `integrity` for them.
//!
//! And the rule that makes vendoring mean something: a *vendored package* (the package a
//! vendored tarball holds, by its own `package.json`) comes from that tarball and from
//! nowhere else. Every place that could install it from elsewhere is held to it
//! (`source`): each dependency table of `package.json`, an `npm:` alias of it, `overrides`
//! at any depth; and every lockfile entry that installs it — nested `node_modules/**` keys,
//! aliases (`name`), the legacy `dependencies` tree — must resolve to the tarball
//! (`resolved`) with its sha512 (`integrity`). A registry range, an https tarball, git,
//! `link:`, another `file:` all fail, naming the entry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::artifact::{is_archive, Artifact};
use super::error::VendorError;
use super::lockfile::{self, Lockfile, Project};
use super::report::{pass, Ignored, Pass, VendorCheck};
use super::sri;
use crate::content::sumfile::display_path;

/// Where a `file:` path points, from the vendor directory's point of view.
enum Destination {
    /// Inside the vendor directory: the path relative to it.
    Vendored(PathBuf),
    /// Meant for the vendor directory (starts there, or is an archive) but lands outside it.
    Leaves,
    /// A `file:` dependency on something else (a local directory package): not ours.
    Elsewhere,
}

fn classify(spec: &str, project: &Path, vendor_rel: &Path) -> Destination {
    // A URL, git, an alias, a registry range: not a path at all, so never "meant for" the
    // vendor directory; whoever expects the tarball there reports it as the wrong source.
    let scheme = spec.split_once(':').map(|(s, _)| s);
    if scheme.is_some_and(|s| s != "file" && !s.is_empty() && !s.contains('/')) {
        return Destination::Elsewhere;
    }
    if let Some(t) = lockfile::file_target(spec, project) {
        if let Ok(inside) = t.strip_prefix(vendor_rel) {
            if !inside.as_os_str().is_empty() {
                return Destination::Vendored(inside.to_path_buf());
            }
        }
    }
    let raw = Path::new(spec.strip_prefix("file:").unwrap_or(spec));
    let raw = raw.strip_prefix(project).unwrap_or(raw);
    let raw = raw.strip_prefix(".").unwrap_or(raw);
    if raw.starts_with(vendor_rel) || is_archive(raw) {
        Destination::Leaves
    } else {
        Destination::Elsewhere
    }
}

/// What a lockfile entry is expected to say, from `package.json`.
struct Expected {
    /// Relative to the vendor directory.
    artifact: PathBuf,
}

/// The lockfile entries' expectations, by lockfile key (`node_modules/NAME`, …).
type Expectations = BTreeMap<String, Expected>;

/// Which packages are vendored, and in which tarballs (relative to the vendor directory),
/// by package name.
struct VendoredPackages {
    tarballs: BTreeMap<String, Vec<PathBuf>>,
}

impl VendoredPackages {
    fn get(&self, name: &str) -> Option<&Vec<PathBuf>> {
        self.tarballs.get(name)
    }
}

/// Where a lockfile entry's `resolved` points.
struct Resolved<'a> {
    /// As written; `None` when the entry has no `resolved`.
    value: Option<&'a Value>,
    /// `value` when it is a string.
    text: Option<&'a str>,
    target: Option<Destination>,
}

impl Resolved<'_> {
    /// The tarball it names inside the vendor directory, if any.
    fn vendored(&self) -> Option<&PathBuf> {
        match &self.target {
            Some(Destination::Vendored(rel)) => Some(rel),
            _ => None,
        }
    }
}

/// The npm checks of one project around the vendor directory, in this order (the report's):
/// 1. `dependency`: every `file:` dependency of `package.json` into the vendor directory
///    names a verified artifact; it is what the lockfile entry `node_modules/NAME` must say.
/// 2. Which packages the tarballs hold (their own `package.json`, else the `file:`
///    dependency's name).
/// 3. `source`: every place of `package.json` that installs a vendored package (dependency
///    tables, `npm:` aliases, `overrides` at any depth) names its tarball.
/// 4. `lockfile`: with expectations from step 1 there must be a lockfile.
/// 5. Every lockfile entry that installs a vendored package is expected to resolve to its
///    tarball.
/// 6. The entries to check: those of steps 1 and 5, and every entry resolved to a `file:`
///    path meant for the vendor directory.
/// 7. Per entry: `resolved` names the expected artifact, `integrity` is its sha512.
pub(super) fn check_project(
    project: &Project,
    vendor_rel: &Path,
    artifacts: &BTreeMap<PathBuf, Artifact>,
    checks: &mut Vec<VendorCheck>,
    ignored: &mut Vec<Ignored>,
) {
    let mut run = ProjectChecks {
        project,
        vendor_rel,
        vendor_display: if vendor_rel.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            vendor_rel.to_path_buf()
        },
        artifacts,
        checks,
        ignored,
    };
    let mut expected = run.check_file_dependencies();
    let vendored = run.vendored_packages();
    run.check_dependency_sources(&vendored);
    run.check_override_sources(&vendored);
    let Some(lock) = &project.lockfile else {
        run.require_lockfile(&expected);
        return;
    };
    run.note_shadowed(lock);
    run.expect_vendored_entries(lock, &vendored, &mut expected);
    for key in run.lock_keys_to_check(lock, &expected) {
        run.check_lock_entry(lock, &key, expected.get(&key).map(|e| &e.artifact));
    }
}

/// One run of [`check_project`]: what it reads, and where it reports.
struct ProjectChecks<'a> {
    project: &'a Project,
    /// The vendor directory, relative to the project directory.
    vendor_rel: &'a Path,
    /// `vendor_rel` as messages name it: `.` when it is the project directory.
    vendor_display: PathBuf,
    artifacts: &'a BTreeMap<PathBuf, Artifact>,
    checks: &'a mut Vec<VendorCheck>,
    ignored: &'a mut Vec<Ignored>,
}

impl ProjectChecks<'_> {
    fn classify(&self, spec: &str) -> Destination {
        classify(spec, &self.project.dir, self.vendor_rel)
    }

    /// The `file:` spec that names the tarball `rel` (relative to the vendor directory).
    fn spec_of(&self, rel: &Path) -> String {
        format!("file:{}", display_path(&self.vendor_rel.join(rel)))
    }

    /// `spec` (of `subject`) leads to `rel`: it must be an artifact that passed its checks.
    fn names_artifact(&self, subject: &str, spec: &str, rel: &Path) -> Result<Pass, VendorError> {
        let path = self.vendor_rel.join(rel);
        match self.artifacts.get(rel) {
            Some(a) if a.verified => pass(
                format!("{spec} names the verified artifact {}", display_path(&path)),
                spec.to_string(),
            ),
            Some(_) => Err(VendorError::Unverified {
                subject: subject.into(),
                spec: spec.into(),
                path,
            }),
            None => Err(VendorError::NotAnArtifact {
                subject: subject.into(),
                spec: spec.into(),
                path,
            }),
        }
    }

    /// Step 1: every `file:` dependency into the vendor dir names a verified artifact; what
    /// the lockfile entries they install must say.
    fn check_file_dependencies(&mut self) -> Expectations {
        let mut expected = Expectations::new();
        for dep in &self.project.file_dependencies {
            let subject = format!("{} ({})", dep.name, dep.field);
            let r = match self.classify(&dep.spec) {
                Destination::Vendored(rel) => {
                    let r = self.names_artifact(&dep.name, &dep.spec, &rel);
                    expected.insert(
                        format!("node_modules/{}", dep.name),
                        Expected { artifact: rel },
                    );
                    r
                }
                Destination::Leaves => Err(VendorError::LeavesVendor {
                    subject: dep.name.clone(),
                    spec: dep.spec.clone(),
                    vendor: self.vendor_display.clone(),
                }),
                Destination::Elsewhere => {
                    self.ignored.push(Ignored {
                        path: format!("{}: {}", self.project.package_json.display(), subject),
                        reason: format!("{} is outside the vendor directory and not an archive: not a vendored artifact", dep.spec),
                    });
                    continue;
                }
            };
            self.checks.push(VendorCheck::new("dependency", subject, r));
        }
        expected
    }

    /// Step 2. A tarball that names no package (not an npm archive) is known by the name
    /// package.json gives its file: dependency.
    fn vendored_packages(&self) -> VendoredPackages {
        let mut tarballs: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for (rel, a) in self.artifacts {
            if let Some(name) = &a.package {
                tarballs.entry(name.clone()).or_default().push(rel.clone());
            }
        }
        for dep in &self.project.file_dependencies {
            if let Destination::Vendored(rel) = self.classify(&dep.spec) {
                if self
                    .artifacts
                    .get(&rel)
                    .is_some_and(|a| a.package.is_none())
                {
                    let v = tarballs.entry(dep.name.clone()).or_default();
                    if !v.contains(&rel) {
                        v.push(rel);
                    }
                }
            }
        }
        VendoredPackages { tarballs }
    }

    /// The `source` check of `spec` installing `name` at `place`; `None` when `name` is not
    /// a vendored package.
    fn source(
        &self,
        vendored: &VendoredPackages,
        place: String,
        name: &str,
        spec: &str,
    ) -> Option<Result<Pass, VendorError>> {
        let tarballs = vendored.get(name)?;
        Some(match self.classify(spec) {
            Destination::Vendored(rel) if !spec.starts_with("npm:") && tarballs.contains(&rel) => {
                pass(
                    format!("{place}: {name} is {spec}, its vendored tarball"),
                    spec.to_string(),
                )
            }
            _ => Err(VendorError::ForeignSource {
                place,
                name: name.to_string(),
                spec: spec.to_string(),
                expected: self.spec_of(&tarballs[0]),
            }),
        })
    }

    /// Step 3, the dependency tables: the package a dependency names and the one its
    /// `npm:` alias installs.
    fn check_dependency_sources(&mut self, vendored: &VendoredPackages) {
        let package_json = display_path(&self.project.package_json);
        for dep in &self.project.dependencies {
            let place = format!("{package_json}: {}", dep.field);
            for name in [Some(dep.name.as_str()), aliased(&dep.spec)]
                .into_iter()
                .flatten()
            {
                if let Some(r) = self.source(vendored, place.clone(), name, &dep.spec) {
                    self.checks.push(VendorCheck::new(
                        "source",
                        format!("{name} ({})", dep.field),
                        r,
                    ));
                }
            }
        }
    }

    /// Step 3, `overrides` at any depth.
    fn check_override_sources(&mut self, vendored: &VendoredPackages) {
        let Some(overrides) = &self.project.overrides else {
            return;
        };
        let package_json = display_path(&self.project.package_json);
        let mut found = Vec::new();
        override_specs(overrides, "overrides", &mut found);
        for OverrideSpec { place, name, spec } in found {
            // `$name` is the root dependency's own spec.
            let spec = match spec.strip_prefix('$') {
                Some(root) => self
                    .project
                    .dependencies
                    .iter()
                    .find(|d| d.name == root)
                    .map_or(spec.clone(), |d| d.spec.clone()),
                None => spec,
            };
            let place = format!("{package_json}: {place}");
            for n in [Some(name.as_str()), aliased(&spec)].into_iter().flatten() {
                if let Some(r) = self.source(vendored, place.clone(), n, &spec) {
                    self.checks
                        .push(VendorCheck::new("source", format!("{n} (overrides)"), r));
                }
            }
        }
    }

    /// Step 4: no lockfile fails when package.json leads into the vendor directory.
    fn require_lockfile(&mut self, expected: &Expectations) {
        if !expected.is_empty() {
            self.checks.push(VendorCheck::new(
                "lockfile",
                display_path(&self.project.dir.join("package-lock.json")),
                Err(VendorError::NoLockfile {
                    project: self.project.dir.clone(),
                }),
            ));
        }
    }

    fn note_shadowed(&mut self, lock: &Lockfile) {
        if let Some(shadowed) = &lock.shadowed {
            self.ignored.push(Ignored {
                path: display_path(shadowed),
                reason: format!(
                    "npm uses {} when both exist, so that one was checked",
                    display_path(&lock.path)
                ),
            });
        }
    }

    /// Step 5: every entry that installs a vendored package must resolve to its tarball.
    fn expect_vendored_entries(
        &self,
        lock: &Lockfile,
        vendored: &VendoredPackages,
        expected: &mut Expectations,
    ) {
        for e in &lock.entries {
            let Some(tarballs) = e.name.as_ref().and_then(|n| vendored.get(n)) else {
                continue;
            };
            let got =
                e.resolved
                    .as_ref()
                    .and_then(Value::as_str)
                    .and_then(|r| match self.classify(r) {
                        Destination::Vendored(rel) if tarballs.contains(&rel) => Some(rel),
                        _ => None,
                    });
            // What package.json leads to stays the expectation (a disagreement between the two
            // fails `resolved`); otherwise the tarball the entry names, if it is this package's.
            expected.entry(e.key.clone()).or_insert(Expected {
                artifact: got.unwrap_or_else(|| tarballs[0].clone()),
            });
        }
    }

    /// Step 6: the lockfile entries to check: those package.json leads to, those that install
    /// a vendored package, and every entry npm resolved to a file: path meant for the vendor
    /// directory (nested ones included).
    fn lock_keys_to_check(&mut self, lock: &Lockfile, expected: &Expectations) -> Vec<String> {
        let mut keys: Vec<String> = expected.keys().cloned().collect();
        for e in &lock.entries {
            let Some(resolved) = e.resolved.as_ref().and_then(Value::as_str) else {
                continue;
            };
            if !resolved.starts_with("file:") || keys.contains(&e.key) {
                continue;
            }
            if let Destination::Elsewhere = self.classify(resolved) {
                self.ignored.push(Ignored {
                    path: format!("{}: {}", lock.path.display(), e.key),
                    reason: format!(
                        "resolved {resolved} is outside the vendor directory and not an archive"
                    ),
                });
            } else {
                keys.push(e.key.clone());
            }
        }
        keys
    }

    /// Step 7, one entry: `resolved` then `integrity`; `want` is the artifact it is expected
    /// to name.
    fn check_lock_entry(&mut self, lock: &Lockfile, key: &str, want: Option<&PathBuf>) {
        let Some(entry) = lock.get(key) else {
            self.checks.push(VendorCheck::new(
                "lockfile",
                key,
                Err(VendorError::LockEntryMissing {
                    lockfile: lock.path.clone(),
                    key: key.to_string(),
                }),
            ));
            return;
        };
        let resolved_text = entry.resolved.as_ref().and_then(Value::as_str);
        let resolved = Resolved {
            value: entry.resolved.as_ref(),
            text: resolved_text,
            target: resolved_text.map(|s| self.classify(s)),
        };
        let r = self.check_resolved(lock, key, want, &resolved);
        self.checks.push(VendorCheck::new("resolved", key, r));

        // The tarball npm will check the integrity against: the one package.json names, or
        // failing that the one resolved names.
        let hashes = want
            .or(resolved.vendored())
            .and_then(|rel| self.artifacts.get(rel))
            .and_then(|a| a.hashes.as_ref());
        let r = match hashes {
            Some(h) => check_integrity(&lock.path, key, entry.integrity.as_ref(), &h.sha512),
            None => Err(VendorError::IntegrityNoArtifact {
                lockfile: lock.path.clone(),
                key: key.to_string(),
            }),
        };
        self.checks.push(VendorCheck::new("integrity", key, r));
    }

    /// The `resolved` check of entry `key`: it names `want` (when package.json or the
    /// package expects one), and a tarball inside the vendor directory.
    fn check_resolved(
        &self,
        lock: &Lockfile,
        key: &str,
        want: Option<&PathBuf>,
        resolved: &Resolved,
    ) -> Result<Pass, VendorError> {
        let text = resolved.text.unwrap_or_default();
        let mismatch = |expected: String| VendorError::ResolvedMismatch {
            lockfile: lock.path.clone(),
            key: key.to_string(),
            expected,
            actual: resolved
                .value
                .map_or_else(|| "missing".to_string(), Value::to_string),
        };
        match (want, resolved.vendored(), &resolved.target) {
            (_, _, Some(Destination::Leaves)) => Err(VendorError::LeavesVendor {
                subject: key.to_string(),
                spec: text.to_string(),
                vendor: self.vendor_display.clone(),
            }),
            (Some(w), Some(g), _) if w != g => Err(mismatch(self.spec_of(w))),
            (Some(w), None, _) => Err(mismatch(self.spec_of(w))),
            // Whether that artifact passed its own checks is the `dependency` check's and
            // the artifact's business; here only the agreement of the paths is judged.
            (_, Some(g), _) if self.artifacts.contains_key(g) => pass(
                format!(
                    "{} names the vendored artifact {}",
                    self.spec_of(g),
                    display_path(&self.vendor_rel.join(g))
                ),
                text.to_string(),
            ),
            (_, Some(g), _) => self.names_artifact(key, text, g),
            (None, None, _) => Err(mismatch("a file: path into the vendor directory".into())),
        }
    }
}

/// The package an `npm:` alias installs: `npm:@acme/consumer@0.4.0` -> `@acme/consumer`.
fn aliased(spec: &str) -> Option<&str> {
    let spec = spec.strip_prefix("npm:")?;
    match spec.get(1..)?.find('@') {
        Some(i) => Some(&spec[..i + 1]),
        None => Some(spec),
    }
}

/// One spec an `overrides` object sets.
struct OverrideSpec {
    /// Where, e.g. `overrides.other@1.@acme/consumer@^0.4`.
    place: String,
    /// The package it overrides.
    name: String,
    spec: String,
}

/// Every spec an `overrides` object sets, at any depth: a key is a package (`name` or
/// `name@range`), its value a spec or an object whose `"."` is the spec for that package and
/// whose other keys override below it.
fn override_specs(v: &Value, at: &str, out: &mut Vec<OverrideSpec>) {
    let Some(map) = v.as_object() else { return };
    for (key, value) in map {
        if key == "." {
            continue;
        }
        let name = match key.get(1..).and_then(|rest| rest.find('@')) {
            Some(i) => &key[..i + 1],
            None => key.as_str(),
        };
        let place = format!("{at}.{key}");
        match value {
            Value::String(spec) => out.push(OverrideSpec {
                place,
                name: name.to_string(),
                spec: spec.clone(),
            }),
            Value::Object(inner) => {
                if let Some(spec) = inner.get(".").and_then(Value::as_str) {
                    out.push(OverrideSpec {
                        place: place.clone(),
                        name: name.to_string(),
                        spec: spec.to_string(),
                    });
                }
                override_specs(value, &place, out);
            }
            _ => {}
        }
    }
}

/// Every hash in `integrity` must be sha512 and equal `sha512`. npm's ssri accepts a tarball
/// when any one hash of the strongest algorithm matches; requiring all of them means an
/// extra hash cannot smuggle a second tarball in, and an extra weak one cannot stand in.
fn check_integrity(
    lockfile: &Path,
    key: &str,
    integrity: Option<&Value>,
    sha512: &[u8],
) -> Result<Pass, VendorError> {
    let malformed = |reason: String| VendorError::IntegrityMalformed {
        lockfile: lockfile.to_path_buf(),
        key: key.to_string(),
        reason,
    };
    let text = match integrity {
        None | Some(Value::Null) => {
            return Err(VendorError::IntegrityMissing {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
            })
        }
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(malformed(format!("not a string: {other}"))),
    };
    let hashes = sri::parse(text).map_err(|e| malformed(e.to_string()))?;
    let want = format!("sha512-{}", sri::encode_base64(sha512));
    for h in &hashes {
        if h.algorithm != "sha512" {
            return Err(VendorError::IntegrityNotSha512 {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
                algorithm: h.algorithm.clone(),
            });
        }
        if h.digest.len() != sha512.len() {
            return Err(VendorError::IntegrityLength {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
                expected: sha512.len(),
                actual: h.digest.len(),
            });
        }
        if h.digest != sha512 {
            return Err(VendorError::IntegrityMismatch {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
                expected: want,
                actual: text.to_string(),
            });
        }
    }
    let n = hashes.len();
    let note = if n > 1 {
        format!(" (all {n} hashes)")
    } else {
        String::new()
    };
    pass(format!("{want} matches the tarball{note}"), want.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_overrides_name_the_package_they_set() {
        assert_eq!(aliased("npm:@acme/consumer@0.4.0"), Some("@acme/consumer"));
        assert_eq!(aliased("npm:left-pad"), Some("left-pad"));
        assert_eq!(aliased("npm:"), None);
        assert_eq!(aliased("^1.0.0"), None);
        let o = serde_json::json!({
            "@acme/consumer": "0.4.0",
            "other@1": {".": "2.0.0", "@acme/consumer@^0.4": {".": "https://x/c.tgz"}},
            "plain": {"deep": "$evil"}
        });
        let mut found = Vec::new();
        override_specs(&o, "overrides", &mut found);
        let names: Vec<(&str, &str)> = found
            .iter()
            .map(|o| (o.name.as_str(), o.spec.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("@acme/consumer", "0.4.0"),
                ("other", "2.0.0"),
                ("@acme/consumer", "https://x/c.tgz"),
                ("deep", "$evil")
            ]
        );
        assert_eq!(found[2].place, "overrides.other@1.@acme/consumer@^0.4");
    }

    #[test]
    fn a_url_or_scheme_is_never_a_path_into_the_vendor_directory() {
        let p = Path::new("/proj");
        let v = Path::new("vendor");
        for spec in [
            "https://registry.npmjs.org/x/-/x-1.tgz",
            "git+https://h/x.git",
            "github:a/b",
            "npm:@acme/consumer@1",
            "link:../sdk",
        ] {
            assert!(
                matches!(classify(spec, p, v), Destination::Elsewhere),
                "{spec}"
            );
        }
        assert!(matches!(
            classify("file:vendor/a.tgz", p, v),
            Destination::Vendored(_)
        ));
    }

    #[test]
    fn integrity_rules() {
        let sha = vec![7u8; 64];
        let good = format!("sha512-{}", sri::encode_base64(&sha));
        let other = format!("sha512-{}", sri::encode_base64(&[8u8; 64]));
        let check = |s: &str| check_integrity(Path::new("L"), "k", Some(&Value::from(s)), &sha);
        assert!(check(&good).is_ok());
        assert!(check(&format!("{good} {good}")).is_ok());
        assert!(matches!(
            check(&format!("{good} {other}")),
            Err(VendorError::IntegrityMismatch { .. })
        ));
        assert!(matches!(
            check(&format!("{good} sha1-{}", sri::encode_base64(&[1u8; 20]))),
            Err(VendorError::IntegrityNotSha512 { .. })
        ));
        assert!(matches!(
            check(&format!("sha512-{}", sri::encode_base64(&[7u8; 32]))),
            Err(VendorError::IntegrityLength { actual: 32, .. })
        ));
        assert!(matches!(
            check_integrity(Path::new("L"), "k", Some(&Value::from(5)), &sha),
            Err(VendorError::IntegrityMalformed { .. })
        ));
    }
}
