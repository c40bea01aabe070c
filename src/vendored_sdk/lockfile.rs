//! Reading an npm project: the `file:` dependencies `package.json` declares, and the entries
//! `package-lock.json` holds for them.
//!
//! What npm 11 writes for `npm install ./vendor/sdk/acme-consumer-0.4.0.tgz` (lockfileVersion 3):
//!
//! ```json
//! "dependencies": { "@acme/consumer": "file:vendor/sdk/acme-consumer-0.4.0.tgz" }   // package.json
//! "packages": {
//!   "node_modules/@acme/consumer": {
//!     "version": "0.4.0",
//!     "resolved": "file:vendor/sdk/acme-consumer-0.4.0.tgz",
//!     "integrity": "sha512-p0DbIXiWcM4IhizlIpxBpiFFcRaDXc5l6YDkmWBHq0EKecUethMDECw7yRa6SUkEPnPBAdJ4WdE9FsWQXhVu0Q=="
//!   }
//! }
//! ```
//!
//! `file:` paths are relative to the project directory (the one holding `package.json`).
//!
//! Which lockfile: npm uses `npm-shrinkwrap.json` when the project has one and then ignores
//! `package-lock.json`, so the shrinkwrap is the one read, and a `package-lock.json` beside it
//! is reported as not used. Every entry that installs a package is kept — `packages`, nested
//! `node_modules/**/node_modules/<name>` keys included, and for lockfileVersion 2 the legacy
//! `dependencies` tree that npm 6 would read — with the name it installs (the entry's `name`
//! for an alias, else the last `node_modules/` segment), so that the verifier can require
//! every one of them that installs a vendored package to resolve to its tarball.
//!
//! Only the documents' *shape* is judged here: a file that is not JSON, not an object, a
//! lockfile older than version 2 (no `packages` map) is refused ([`VendorError`], exit 2).
//! The values of `resolved` and `integrity` are kept raw, because judging them is the
//! verifier's check (exit 1).

#[cfg(test)]
use std::fs;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::error::VendorError;

/// The dependency tables of `package.json` that npm installs from.
const DEPENDENCY_FIELDS: [&str; 4] = [
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
];

/// A dependency of `package.json`, any spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dependency {
    pub(crate) name: String,
    pub(crate) field: &'static str,
    pub(crate) spec: String,
}

/// A dependency whose spec starts with `file:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileDependency {
    pub(crate) name: String,
    /// Which table of `package.json` declares it.
    pub(crate) field: &'static str,
    /// The spec as written, `file:` included.
    pub(crate) spec: String,
}

/// One entry of the lockfile that installs a package.
#[derive(Debug, Clone)]
pub(crate) struct LockEntry {
    /// The key, e.g. `node_modules/@acme/consumer`; for the legacy tree of lockfileVersion 2,
    /// `dependencies["a"].dependencies["@acme/consumer"]`.
    pub(crate) key: String,
    /// The package it installs (see the module header); `None` when neither the entry nor
    /// its key says (a workspace folder without a `name`).
    pub(crate) name: Option<String>,
    /// Where it comes from: `resolved` (for a legacy entry, its `version` when that is a
    /// spec such as `file:…` or `npm:…`, else its `resolved`). A `link` entry's `resolved`
    /// is a folder, which never names a tarball.
    pub(crate) resolved: Option<Value>,
    pub(crate) integrity: Option<Value>,
}

#[derive(Debug, Clone)]
pub(crate) struct Lockfile {
    pub(crate) path: PathBuf,
    /// `package-lock.json` beside a shrinkwrap: npm does not use it, so it is not checked.
    pub(crate) shadowed: Option<PathBuf>,
    pub(crate) version: u64,
    /// Every entry but the root (`""`), in file order.
    pub(crate) entries: Vec<LockEntry>,
}

impl Lockfile {
    pub(crate) fn get(&self, key: &str) -> Option<&LockEntry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

/// An npm project: its directory, its `file:` dependencies and its lockfile, if it has one.
#[derive(Debug, Clone)]
pub(crate) struct Project {
    pub(crate) dir: PathBuf,
    pub(crate) package_json: PathBuf,
    pub(crate) file_dependencies: Vec<FileDependency>,
    /// Every dependency of every table, in file order.
    pub(crate) dependencies: Vec<Dependency>,
    /// `overrides`, as written.
    pub(crate) overrides: Option<Value>,
    pub(crate) lockfile: Option<Lockfile>,
}

/// The project that owns the (canonical) vendor directory `vendor`: the nearest ancestor of it
/// holding a `package.json`. The search stops at the first directory holding `.git`, the
/// repository root, so a stray `package.json` above the repository (in `$HOME`, in `/tmp`)
/// is never taken for the project.
pub(crate) fn find_project_dir(vendor: &Path) -> Option<PathBuf> {
    for dir in vendor.ancestors().skip(1) {
        if dir.join("package.json").exists() {
            return Some(dir.to_path_buf());
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Read `dir/package.json` and, when it exists, `dir/package-lock.json`.
pub(crate) fn read_project(dir: &Path) -> Result<Project, VendorError> {
    let package_json = dir.join("package.json");
    let doc = read_json(
        &package_json,
        "package.json",
        crate::fsio::limits::PACKAGE_JSON,
    )?
    .ok_or_else(|| VendorError::NoPackageJson {
        dir: dir.to_path_buf(),
    })?;
    let malformed = |reason: String| VendorError::ProjectMalformed {
        path: package_json.clone(),
        reason,
    };
    let root = doc
        .as_object()
        .ok_or_else(|| malformed("not a JSON object".into()))?;
    let mut file_dependencies = Vec::new();
    let mut dependencies = Vec::new();
    for field in DEPENDENCY_FIELDS {
        let Some(table) = root.get(field) else {
            continue;
        };
        let table = table
            .as_object()
            .ok_or_else(|| malformed(format!("`{field}` is not an object")))?;
        for (name, spec) in table {
            let spec = spec
                .as_str()
                .ok_or_else(|| malformed(format!("`{field}.{name}` is not a string")))?;
            dependencies.push(Dependency {
                name: name.clone(),
                field,
                spec: spec.to_string(),
            });
            if spec.starts_with("file:") {
                file_dependencies.push(FileDependency {
                    name: name.clone(),
                    field,
                    spec: spec.to_string(),
                });
            }
        }
    }
    let overrides = root.get("overrides").cloned();
    // npm's order: a shrinkwrap wins over package-lock.json.
    let shrinkwrap = dir.join("npm-shrinkwrap.json");
    let package_lock = dir.join("package-lock.json");
    let lockfile = match read_lockfile(&shrinkwrap)? {
        Some(mut l) => {
            l.shadowed = package_lock.exists().then_some(package_lock);
            Some(l)
        }
        None => read_lockfile(&package_lock)?,
    };
    Ok(Project {
        dir: dir.to_path_buf(),
        package_json,
        file_dependencies,
        dependencies,
        overrides,
        lockfile,
    })
}

fn read_lockfile(path: &Path) -> Result<Option<Lockfile>, VendorError> {
    let Some(doc) = read_json(path, "lockfile", crate::fsio::limits::LOCKFILE)? else {
        return Ok(None);
    };
    let malformed = |reason: &str| VendorError::ProjectMalformed {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    let root = doc
        .as_object()
        .ok_or_else(|| malformed("not a JSON object"))?;
    let version = root.get("lockfileVersion").and_then(Value::as_u64);
    let version = match version {
        Some(v @ 2..=3) => v,
        _ => {
            return Err(VendorError::LockfileVersion {
                path: path.to_path_buf(),
                found: root
                    .get("lockfileVersion")
                    .map_or_else(|| "none".to_string(), Value::to_string),
            })
        }
    };
    let packages = root
        .get("packages")
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("`packages` is missing or not an object"))?;
    let mut entries = Vec::new();
    for (key, entry) in packages {
        if key.is_empty() {
            continue;
        }
        let entry = entry
            .as_object()
            .ok_or_else(|| VendorError::ProjectMalformed {
                path: path.to_path_buf(),
                reason: format!("`packages[\"{key}\"]` is not an object"),
            })?;
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                key.rsplit_once("node_modules/")
                    .map(|(_, n)| n.to_string())
                    .filter(|n| !n.is_empty())
            });
        entries.push(LockEntry {
            key: key.clone(),
            name,
            resolved: entry.get("resolved").cloned(),
            integrity: entry.get("integrity").cloned(),
        });
    }
    if let Some(tree) = root.get("dependencies") {
        legacy_entries(path, tree, "", &mut entries)?;
    }
    Ok(Some(Lockfile {
        path: path.to_path_buf(),
        shadowed: None,
        version,
        entries,
    }))
}

/// The legacy `dependencies` tree (lockfileVersion 2 keeps it for npm 6), flattened.
fn legacy_entries(
    path: &Path,
    tree: &Value,
    at: &str,
    out: &mut Vec<LockEntry>,
) -> Result<(), VendorError> {
    let malformed = |reason: String| VendorError::ProjectMalformed {
        path: path.to_path_buf(),
        reason,
    };
    let tree = tree
        .as_object()
        .ok_or_else(|| malformed(format!("`{at}dependencies` is not an object")))?;
    for (name, entry) in tree {
        let key = format!("{at}dependencies[\"{name}\"]");
        let entry = entry
            .as_object()
            .ok_or_else(|| malformed(format!("`{key}` is not an object")))?;
        let version = entry.get("version").and_then(Value::as_str);
        // `npm:@acme/consumer@0.4.0`: an alias installing another package under this name.
        let aliased = version.and_then(|v| v.strip_prefix("npm:")).map(|spec| {
            match spec.get(1..).and_then(|rest| rest.find('@')) {
                Some(i) => spec[..i + 1].to_string(),
                None => spec.to_string(),
            }
        });
        let resolved = match version {
            Some(v) if v.contains(':') => Some(Value::from(v)),
            _ => entry.get("resolved").cloned(),
        };
        out.push(LockEntry {
            key: key.clone(),
            name: Some(aliased.unwrap_or_else(|| name.clone())),
            resolved,
            integrity: entry.get("integrity").cloned(),
        });
        if let Some(sub) = entry.get("dependencies") {
            legacy_entries(path, sub, &format!("{key}."), out)?;
        }
    }
    Ok(())
}

/// `Ok(None)` when the file does not exist; a file that exists must be JSON.
fn read_json(path: &Path, kind: &str, max: u64) -> Result<Option<Value>, VendorError> {
    let text = match crate::fsio::read_input_if_exists(path, kind, max)? {
        Some(t) => t,
        None => return Ok(None),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| VendorError::ProjectMalformed {
            path: path.to_path_buf(),
            reason: format!("not JSON: {e}"),
        })
}

/// The path a `file:` spec or `resolved` value names, relative to the project directory
/// `project` and normalized lexically (`.` dropped, `..` applied). `None` when it leaves the
/// project. Lexical on purpose: symlinks are not followed, and a vendored artifact that is a
/// symlink fails its own check.
pub(crate) fn file_target(spec: &str, project: &Path) -> Option<PathBuf> {
    let raw = Path::new(spec.strip_prefix("file:").unwrap_or(spec));
    let rel = if raw.is_absolute() {
        raw.strip_prefix(project).ok()?
    } else {
        raw
    };
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_targets_are_normalized_and_contained() {
        let p = Path::new("/proj");
        let t = |s| file_target(s, p);
        assert_eq!(t("file:vendor/a.tgz"), Some("vendor/a.tgz".into()));
        assert_eq!(t("file:./vendor//x/../a.tgz"), Some("vendor/a.tgz".into()));
        assert_eq!(t("file:/proj/vendor/a.tgz"), Some("vendor/a.tgz".into()));
        assert_eq!(t("file:vendor/../../etc/a.tgz"), None);
        assert_eq!(t("file:/etc/a.tgz"), None);
        assert_eq!(t("file:../a.tgz"), None);
    }

    #[test]
    fn every_entry_that_installs_a_package_is_read_with_its_name() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join("package.json"),
            r#"{"overrides":{"a":"1"}}"#,
        )
        .unwrap();
        let lock = serde_json::json!({"lockfileVersion": 2, "packages": {
            "": {},
            "node_modules/a/node_modules/@acme/consumer": {"resolved": "https://r/c.tgz"},
            "node_modules/alias": {"name": "@acme/consumer"},
            "packages/ws": {"name": "ws"}
        }, "dependencies": {"a": {"version": "1.0.0", "resolved": "https://r/a.tgz",
            "dependencies": {"c": {"version": "npm:@acme/consumer@0.4.0"}}}}});
        fs::write(tmp.path().join("package-lock.json"), lock.to_string()).unwrap();
        let shrink = serde_json::json!({"lockfileVersion": 3, "packages": {}});
        let p = read_project(tmp.path()).unwrap();
        let names: Vec<(String, Option<String>)> = p
            .lockfile
            .as_ref()
            .unwrap()
            .entries
            .iter()
            .map(|e| (e.key.clone(), e.name.clone()))
            .collect();
        let n = |k: &str, v: &str| (k.to_string(), Some(v.to_string()));
        assert_eq!(
            names,
            [
                n(
                    "node_modules/a/node_modules/@acme/consumer",
                    "@acme/consumer"
                ),
                n("node_modules/alias", "@acme/consumer"),
                n("packages/ws", "ws"),
                n("dependencies[\"a\"]", "a"),
                n("dependencies[\"a\"].dependencies[\"c\"]", "@acme/consumer"),
            ]
        );
        assert_eq!(p.overrides, Some(serde_json::json!({"a":"1"})));
        // A shrinkwrap is what npm uses: it is read, package-lock.json is shadowed.
        fs::write(tmp.path().join("npm-shrinkwrap.json"), shrink.to_string()).unwrap();
        let p = read_project(tmp.path()).unwrap();
        let l = p.lockfile.unwrap();
        assert!(l.path.ends_with("npm-shrinkwrap.json"));
        assert!(l.shadowed.unwrap().ends_with("package-lock.json"));
    }

    #[test]
    fn project_search_stops_at_the_repository_root() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("svc/vendor/sdk")).unwrap();
        fs::write(tmp.path().join("package.json"), "{}").unwrap();
        assert_eq!(find_project_dir(&repo.join("svc/vendor/sdk")), None);
        fs::write(repo.join("svc/package.json"), "{}").unwrap();
        assert_eq!(
            find_project_dir(&repo.join("svc/vendor/sdk")),
            Some(repo.join("svc"))
        );
    }
}
