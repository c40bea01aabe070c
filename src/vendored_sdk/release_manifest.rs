//! The vendored SDK's release manifest: the digests its publisher released, which the
//! `.sha256` sidecars must repeat.
//!
//! Two formats, told apart by content (the first non-blank byte `{` means JSON):
//! - JSON: `{"artifacts":[{"name":"@acme/consumer","version":"0.4.0",
//!   "file":"acme-consumer-0.4.0.tgz","sha256":"<64 hex>"}]}`; `file` is a bare file name;
//!   other keys are allowed and ignored;
//! - `sha256sum` format (`SHA256SUMS`), read by [`crate::content::sumfile`] with all its refusals;
//!   a name may have directories, and is matched by its last component.
//!
//! Artifacts are matched by file name. The manifest is the reference every other check leans
//! on, so it is read all or nothing: one malformed entry, or two entries for one file name,
//! refuses the whole document (exit 2) rather than trusting the rest.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::VendorError;
use crate::content::digest::Algorithm;
use crate::content::sumfile;
use crate::fsio;

/// How an SDK release manifest is written: a JSON document, or `sha256sum` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ManifestFormat {
    Json,
    Sha256Sum,
}

impl ManifestFormat {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ManifestFormat::Json => "json",
            ManifestFormat::Sha256Sum => "sha256sum",
        }
    }
}

/// One released file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Released {
    /// Lowercase hex SHA-256.
    pub(crate) sha256: String,
    /// `name@version` for JSON manifests; `None` for `sha256sum` ones, which carry no names.
    pub(crate) package: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct ReleaseManifest {
    pub(crate) path: PathBuf,
    pub(crate) format: ManifestFormat,
    /// By file name.
    pub(crate) files: BTreeMap<OsString, Released>,
}

impl ReleaseManifest {
    pub(crate) fn get(&self, file_name: &std::ffi::OsStr) -> Option<&Released> {
        self.files.get(file_name)
    }
}

/// Read and check the whole manifest at `path`.
pub(crate) fn load(path: &Path) -> Result<ReleaseManifest, VendorError> {
    let bytes = fsio::read_input(path, "release manifest", fsio::limits::RELEASE_MANIFEST)?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let (format, list) = if first == Some(&b'{') {
        (ManifestFormat::Json, parse_json(path, &bytes)?)
    } else {
        let entries = sumfile::parse(Algorithm::Sha256, path, &bytes).map_err(|source| {
            VendorError::ManifestSumFile {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let list = entries
            .into_iter()
            .map(|e| {
                let name = e.path.file_name().expect("sumfile names a file").to_owned();
                let released = Released {
                    sha256: e.digest,
                    package: None,
                };
                (name, released)
            })
            .collect();
        (ManifestFormat::Sha256Sum, list)
    };
    let mut files = BTreeMap::new();
    for (name, released) in list {
        if files.insert(name.clone(), released).is_some() {
            return Err(VendorError::ManifestDuplicate {
                path: path.to_path_buf(),
                file: name.to_string_lossy().into_owned(),
            });
        }
    }
    Ok(ReleaseManifest {
        path: path.to_path_buf(),
        format,
        files,
    })
}

fn parse_json(path: &Path, bytes: &[u8]) -> Result<Vec<(OsString, Released)>, VendorError> {
    let malformed = |reason: String| VendorError::ManifestMalformed {
        path: path.to_path_buf(),
        reason,
    };
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| malformed(format!("not JSON: {e}")))?;
    let artifacts = doc
        .get("artifacts")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("`artifacts` is missing or not an array".into()))?;
    if artifacts.is_empty() {
        return Err(malformed(
            "`artifacts` is empty: it would vouch for nothing".into(),
        ));
    }
    let mut out = Vec::with_capacity(artifacts.len());
    for (i, a) in artifacts.iter().enumerate() {
        let field = |key: &str| -> Result<&str, VendorError> {
            a.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    malformed(format!(
                        "artifacts[{i}].{key} is missing, empty or not a string"
                    ))
                })
        };
        let (name, version, file, sha256) = (
            field("name")?,
            field("version")?,
            field("file")?,
            field("sha256")?,
        );
        if file.contains('/') || file.contains('\0') || file == "." || file == ".." {
            return Err(malformed(format!(
                "artifacts[{i}].file {file:?} must be a bare file name"
            )));
        }
        if sha256.len() != Algorithm::Sha256.hex_len()
            || !sha256.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(malformed(format!(
                "artifacts[{i}].sha256 must be 64 hex digits, found {sha256:?}"
            )));
        }
        out.push((
            OsString::from(file),
            Released {
                sha256: sha256.to_ascii_lowercase(),
                package: Some(format!("{name}@{version}")),
            },
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4";

    fn load_str(text: &str) -> Result<ReleaseManifest, VendorError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m");
        std::fs::write(&p, text).unwrap();
        load(&p)
    }

    #[test]
    fn both_formats_by_content() {
        let j = load_str(&format!(
            r#" {{"artifacts":[{{"name":"@a/b","version":"1","file":"b-1.tgz","sha256":"{}"}}]}}"#,
            H.to_uppercase()
        ))
        .unwrap();
        assert_eq!(j.format, ManifestFormat::Json);
        let r = j.get("b-1.tgz".as_ref()).unwrap();
        assert_eq!(
            (r.sha256.as_str(), r.package.as_deref()),
            (H, Some("@a/b@1"))
        );
        let s = load_str(&format!("{H}  dist/b-1.tgz\n")).unwrap();
        assert_eq!(s.format, ManifestFormat::Sha256Sum);
        assert_eq!(s.get("b-1.tgz".as_ref()).unwrap().sha256, H);
    }

    #[test]
    fn refuses_the_whole_document_for_one_bad_entry() {
        let good = format!(r#"{{"name":"a","version":"1","file":"a.tgz","sha256":"{H}"}}"#);
        for bad in [
            r#"{"name":"b","version":"1","file":"b.tgz","sha256":"abc"}"#.to_string(),
            format!(r#"{{"name":"b","version":"1","file":"x/b.tgz","sha256":"{H}"}}"#),
            format!(r#"{{"name":"b","file":"b.tgz","sha256":"{H}"}}"#),
            good.clone(),
        ] {
            let e = load_str(&format!(r#"{{"artifacts":[{good},{bad}]}}"#)).unwrap_err();
            assert!(
                matches!(
                    e,
                    VendorError::ManifestMalformed { .. } | VendorError::ManifestDuplicate { .. }
                ),
                "{bad}: {e}"
            );
        }
        assert!(load_str("{\"artifacts\":[]}").is_err());
        assert!(load_str("{\"artifacts\":").is_err());
        let e = load_str(&format!("{H}  a/x.tgz\n{H}  b/x.tgz\n")).unwrap_err();
        assert!(matches!(e, VendorError::ManifestDuplicate { .. }), "{e}");
    }
}
