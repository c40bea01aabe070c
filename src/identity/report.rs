//! The report of a run: every server, every check by name with its evidence, and (for
//! install) what happened to each registration. [`crate::output`] prints it for people, or as
//! one JSON object.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    pub(crate) check: &'static str,
    pub(crate) ok: bool,
    pub(crate) detail: String,
    /// Not run (a signature with no trust policy to check it against): it fails nothing, and
    /// proves nothing either. Shown as `skip`, counted apart from the passes, and a JUnit
    /// `<skipped>`; in JSON `"skipped": true` beside `"ok": true`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) skipped: bool,
}

impl Check {
    /// A row for a check that was not run, and why.
    pub(crate) fn skipped(check: &'static str, detail: String) -> Check {
        Check {
            check,
            ok: true,
            detail,
            skipped: true,
        }
    }

    /// A check's row from its verdict: the evidence of a pass, or the failure's own message
    /// (a typed error whose variant carries the evidence).
    pub(crate) fn from_result<E: std::fmt::Display>(
        check: &'static str,
        r: Result<String, E>,
    ) -> Check {
        let (ok, detail) = match r {
            Ok(d) => (true, d),
            Err(e) => (false, e.to_string()),
        };
        Check {
            check,
            ok,
            detail,
            skipped: false,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ServerReport {
    pub(crate) name: String,
    /// The client whose registration this is.
    pub(crate) client: String,
    pub(crate) registered_name: String,
    pub(crate) prefix: String,
    /// install/uninstall: added, updated, unchanged, removed, absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) registration: Option<String>,
    /// verify-identity: what the registration was compared against, `document` and, when the
    /// client's config was readable, `live <path>`. Only `["document"]` means the live
    /// registration was not compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) witnesses: Option<Vec<String>>,
    /// status and verify-identity: the deployed release directory and its commit, as far as
    /// they can be read (the checks say why when they cannot). What a fleet report and the
    /// prometheus samples show per host, without parsing a check's detail.
    #[serde(flatten)]
    pub(crate) deployed: Deployed,
    pub(crate) checks: Vec<Check>,
}

/// The deployed release of a server: `"release"` (the release directory, or the prefix of a
/// prefix layout) and `"commit"`, each absent when it cannot be read.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Deployed {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) release: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
}

impl Deployed {
    /// What `release` names as deployed: the release directory and its commit, each left out
    /// when it cannot be read (its check fails, with the evidence).
    pub(crate) fn of(release: &crate::deployment::release::Release) -> Deployed {
        Deployed {
            release: release.dir().ok().map(|d| d.display().to_string()),
            commit: release
                .deployed_commit()
                .ok()
                .map(|(sha, _)| sha.to_string()),
        }
    }
}

impl ServerReport {
    pub(crate) fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// `--require-live`: when the document was the only witness (the client's config
    /// `config` is not on this host), `mcp-registration` fails, saying so: a CI job on the
    /// host must not settle for the document.
    pub(crate) fn require_live(&mut self, config: &std::path::Path) {
        if self.witnesses.as_deref() != Some(&["document".to_string()][..]) {
            return;
        }
        if let Some(c) = self
            .checks
            .iter_mut()
            .find(|c| c.check == "mcp-registration")
        {
            c.ok = false;
            c.detail.push_str(&format!(
                "; --require-live: the live registration is required, and the client's config \
                 {} is not here",
                config.display()
            ));
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    pub(crate) ok: bool,
    pub(crate) servers: Vec<ServerReport>,
    /// The flat registration document written or read, when there is one.
    #[serde(rename = "registered", skip_serializing_if = "Option::is_none")]
    pub(crate) flat_document: Option<String>,
    /// `status`: each client's release, as far as it is known without starting it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) clients: Vec<ClientRelease>,
}

/// A client and its release (`None`: unknown, or a client without a binary).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ClientRelease {
    pub(crate) client: String,
    pub(crate) version: Option<String>,
}

impl Report {
    pub(crate) fn new(servers: Vec<ServerReport>, flat_document: Option<String>) -> Report {
        Report {
            clients: Vec::new(),
            ok: servers.iter().all(ServerReport::ok),
            servers,
            flat_document,
        }
    }
}
