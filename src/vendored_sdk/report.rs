//! The verifier's report: every check by name, with its subject and evidence, and everything
//! found and not checked; printed for people or as one JSON object (docs/vendor.md).

use std::path::Path;

use serde::Serialize;

use super::error::VendorError;

/// One check, by name, about one subject (an artifact path relative to DIR, a package name,
/// a lockfile key), with its evidence.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VendorCheck {
    pub(crate) check: &'static str,
    pub(crate) subject: String,
    pub(crate) ok: bool,
    pub(crate) detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) actual: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) help: Option<String>,
}

impl VendorCheck {
    pub(super) fn new(
        check: &'static str,
        subject: impl Into<String>,
        r: Result<Pass, VendorError>,
    ) -> Self {
        let subject = subject.into();
        match r {
            Ok(p) => VendorCheck {
                check,
                subject,
                ok: true,
                detail: p.detail,
                expected: None,
                actual: p.actual,
                help: None,
            },
            Err(e) => {
                let (expected, actual) = e.evidence();
                VendorCheck {
                    check,
                    subject,
                    ok: false,
                    detail: e.to_string(),
                    expected,
                    actual,
                    help: e.help(),
                }
            }
        }
    }
}

/// A passing check's evidence.
pub(super) struct Pass {
    pub(super) detail: String,
    /// The value that was found to agree (a digest, a path).
    pub(super) actual: Option<String>,
}

pub(super) fn pass(detail: String, actual: impl Into<Option<String>>) -> Result<Pass, VendorError> {
    Ok(Pass {
        detail,
        actual: actual.into(),
    })
}

/// Something found and deliberately not checked, with the reason — never dropped silently.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Ignored {
    pub(crate) path: String,
    pub(crate) reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ManifestInfo {
    pub(crate) path: String,
    pub(crate) format: &'static str,
    pub(crate) entries: usize,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ProjectInfo {
    pub(crate) dir: String,
    pub(crate) package_json: String,
    pub(crate) lockfile: Option<String>,
    pub(crate) lockfile_version: Option<u64>,
}

/// The whole outcome of `verify-vendor`; its JSON form is documented in docs/vendor.md.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VendorReport {
    pub(crate) ok: bool,
    pub(crate) dir: String,
    pub(crate) manifest: Option<ManifestInfo>,
    pub(crate) project: Option<ProjectInfo>,
    pub(crate) checks: Vec<VendorCheck>,
    pub(crate) ignored: Vec<Ignored>,
    pub(crate) summary: String,
}

impl VendorReport {
    pub(super) fn new(
        dir: &Path,
        manifest: Option<ManifestInfo>,
        project: Option<ProjectInfo>,
        checks: Vec<VendorCheck>,
        ignored: Vec<Ignored>,
    ) -> Self {
        let failed = checks.iter().filter(|c| !c.ok).count();
        let summary = if failed == 0 {
            format!("{} checks passed", checks.len())
        } else {
            format!("{failed} of {} checks failed", checks.len())
        };
        VendorReport {
            ok: failed == 0,
            dir: dir.to_string_lossy().into_owned(),
            manifest,
            project,
            checks,
            ignored,
            summary,
        }
    }
}
