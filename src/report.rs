//! The report of a run: every server, every check by name with its evidence, and (for
//! install) what happened to each registration. Printed for people, or as one JSON object.

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
    pub registered_name: String,
    pub prefix: String,
    /// install/uninstall: added, updated, unchanged, removed, absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration: Option<String>,
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

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
    }

    /// The human form: a line per registration and a line per check.
    pub fn to_human(&self) -> String {
        let mut out = String::new();
        for s in &self.servers {
            let name = if s.registered_name == s.name {
                s.name.clone()
            } else {
                format!("{} (registered as {})", s.name, s.registered_name)
            };
            match &s.registration {
                Some(r) => out.push_str(&format!("{name}: {r}\n")),
                None => out.push_str(&format!("{name}\n")),
            }
            for c in &s.checks {
                let mark = if c.ok { "ok  " } else { "FAIL" };
                out.push_str(&format!("  {mark} {:<17} {}\n", c.check, c.detail));
            }
        }
        if let Some(path) = &self.registered {
            out.push_str(&format!("registration document: {path}\n"));
        }
        let failed: usize = self
            .servers
            .iter()
            .map(|s| s.checks.iter().filter(|c| !c.ok).count())
            .sum();
        if failed > 0 {
            out.push_str(&format!("{failed} check(s) failed\n"));
        }
        out
    }

    pub fn print(&self, json: bool) {
        if json {
            emit(&format!("{}\n", self.to_json()));
        } else {
            emit(&self.to_human());
        }
    }
}

/// Write to stdout. A reader that went away (`| head`) does not change the verdict and must
/// not panic the way `println!` does; the exit status still tells the outcome.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
