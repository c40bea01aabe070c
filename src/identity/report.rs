//! The report of a run: every server, every check by name with its evidence, and (for
//! install) what happened to each registration. [`crate::output`] prints it for people, or as
//! one JSON object.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub check: &'static str,
    pub ok: bool,
    pub detail: String,
}

impl Check {
    pub fn from_result(check: &'static str, r: Result<String, String>) -> Check {
        let (ok, detail) = match r {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        Check { check, ok, detail }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    pub name: String,
    /// The client whose registration this is.
    pub client: String,
    pub registered_name: String,
    pub prefix: String,
    /// install/uninstall: added, updated, unchanged, removed, absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration: Option<String>,
    /// verify-identity: what the registration was compared against, `document` and, when the
    /// client's config was readable, `live <path>`. Only `["document"]` means the live
    /// registration was not compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witnesses: Option<Vec<String>>,
    pub checks: Vec<Check>,
}

impl ServerReport {
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub ok: bool,
    pub servers: Vec<ServerReport>,
    /// The flat registration document written or read, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered: Option<String>,
}

impl Report {
    pub fn new(servers: Vec<ServerReport>, registered: Option<String>) -> Report {
        Report {
            ok: servers.iter().all(ServerReport::ok),
            servers,
            registered,
        }
    }
}
