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

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
    }

    /// The human form: a line per registration and a line per check; `colour` marks ok and
    /// FAIL in green and red.
    pub fn to_human(&self, colour: bool) -> String {
        let mut out = String::new();
        for s in &self.servers {
            let mut name = if s.registered_name == s.name {
                s.name.clone()
            } else {
                format!("{} (registered as {})", s.name, s.registered_name)
            };
            if s.client != "claude" {
                name.push_str(&format!(" in {}", s.client));
            }
            match &s.registration {
                Some(r) => out.push_str(&format!("{name}: {r}\n")),
                None => out.push_str(&format!("{name}\n")),
            }
            for c in &s.checks {
                let mark = match (c.ok, colour) {
                    (true, false) => "ok  ",
                    (false, false) => "FAIL",
                    (true, true) => "\x1b[32mok\x1b[0m  ",
                    (false, true) => "\x1b[1;31mFAIL\x1b[0m",
                };
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
            emit(&self.to_human(colour(&std::io::stdout())));
        }
    }
}

/// Colour only on a terminal, and never when `NO_COLOR` is set (https://no-color.org) or the
/// terminal is `dumb`.
pub fn colour(stream: &impl std::io::IsTerminal) -> bool {
    stream.is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// A progress line for a step that waits on a client, on stderr, only when a person watches it.
pub fn progress(message: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprintln!("{message}");
    }
}

/// Write to stdout. A reader that went away (`| head`) does not change the verdict and must
/// not panic the way `println!` does; the exit status still tells the outcome.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
