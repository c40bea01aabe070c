//! Identity checks: is the deployed release the expected commit, and does the registered
//! command stay inside it? Every check is evaluated and reported with its evidence; none
//! stops the others.
//!
//! - `release`: `<prefix>/current` is a symlink to a directory directly inside
//!   `<prefix>/releases/` (release layouts only).
//! - `commit`: the release's VERSION holds a full sha equal to the expected one, and
//!   `<prefix>/VERSION`, when present, agrees. A Python prefix without VERSION gives its
//!   commit through pip's `direct_url.json` ([`layout::commit_evidence`]); with no evidence at
//!   all the check says so, and fails only when a commit is expected.
//! - `content`: the release's files match its `MANIFEST.sha256` (run when the release holds
//!   one; required with `--content`).
//! - `mcp-registration`: the registered entry exists, has the declared transport and args, its
//!   command is absolute, normalized, an executable file, and its realpath lies inside the
//!   realpath of the containment root, compared by path components.
//! - `handshake` (only with `--handshake`): the registered server starts and answers MCP's
//!   `initialize` and `tools/list` ([`crate::handshake`]). It is not started when
//!   `mcp-registration` failed: a command that resolves outside the release, or that is not
//!   what was declared, is the very thing the check exists to catch, and we do not run it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::declaration::{has_dot_components, Layout, Server};
use crate::entry::{Entry, Transport};
use crate::handshake;
use crate::layout::{self, Sha};
use crate::manifest::{self, ManifestError};
use crate::report::{Check, ServerReport};

/// What to verify for one server.
pub struct Target<'a> {
    pub server: &'a Server,
    /// The client whose registration is checked.
    pub client: &'a str,
    pub prefix: PathBuf,
    pub registered_name: String,
    /// The declared entry, rendered for this prefix.
    pub declared: Entry,
    /// The commit the release must be; `None` takes the deployment's own VERSION (install
    /// without `--expect-commit`), which still checks that VERSION is well-formed and agrees.
    pub expected: Option<Sha>,
    /// Fail the `content` check when the release holds no manifest (`--content`).
    pub require_content: bool,
    /// Start the registered server and handshake with it, within this time (`--handshake`).
    pub handshake: Option<Duration>,
}

/// Run every check for `target` against `registrations` (an `mcpServers` object).
pub fn verify(target: &Target, registrations: &Map<String, Value>) -> ServerReport {
    let mut checks = Vec::new();
    if target.server.layout == Layout::Release {
        checks.push(Check::from_result(
            "release",
            layout::check_release(&target.prefix),
        ));
    }
    checks.push(Check::from_result("commit", check_commit(target)));
    if let Some(content) = check_content(target) {
        checks.push(Check::from_result("content", content));
    }
    let registration = check_registration(target, registrations);
    let registered_ok = registration.is_ok();
    checks.push(Check::from_result("mcp-registration", registration));
    // A registration that carries a credential in clear fails, naming where (never the value).
    let secrets = registrations
        .get(&target.registered_name)
        .and_then(|raw| Entry::from_value(raw).ok())
        .map(|e| crate::secrets::literal_secrets(&e))
        .unwrap_or_default();
    if !secrets.is_empty() {
        checks.push(Check {
            check: "secrets",
            ok: false,
            detail: format!(
                "the registration holds a literal secret in {}; register a ${{VAR}} reference instead",
                secrets.join(", ")
            ),
        });
    }
    if let Some(timeout) = target.handshake {
        checks.push(Check::from_result(
            "handshake",
            check_handshake(target, registrations, registered_ok, timeout),
        ));
    }
    ServerReport {
        name: target.server.name.clone(),
        client: target.client.to_string(),
        registered_name: target.registered_name.clone(),
        prefix: target.prefix.display().to_string(),
        registration: None,
        checks,
    }
}

/// The checks of the deployment alone, made before any registration changes (install's gate):
/// `release` (release layouts), `commit`, `content` (when the release holds a manifest or one
/// is required), and `mcp-registration` on the *declared* command — it exists, is an
/// executable file, and resolves inside the release. Same names and evidence as [`verify`].
pub fn deployment_checks(target: &Target) -> Vec<Check> {
    let mut checks = Vec::new();
    if target.server.layout == Layout::Release {
        checks.push(Check::from_result(
            "release",
            layout::check_release(&target.prefix),
        ));
    }
    checks.push(Check::from_result("commit", check_commit(target)));
    if let Some(content) = check_content(target) {
        checks.push(Check::from_result("content", content));
    }
    if let Transport::Stdio { command, .. } = &target.declared.transport {
        let r = layout::containment_root(&target.prefix, target.server.layout)
            .and_then(|root| check_command_inside(Path::new(command), &root))
            .map(|ok| format!("the declared command {ok}"))
            .map_err(|e| format!("the declared command cannot run: {e}"));
        checks.push(Check::from_result("mcp-registration", r));
    }
    checks
}

fn check_commit(target: &Target) -> Result<String, String> {
    let command = match &target.declared.transport {
        Transport::Stdio { command, .. } => Some(Path::new(command.as_str())),
        Transport::Remote { .. } => None,
    };
    let evidence = layout::commit_evidence(&target.prefix, target.server.layout, command)?;
    let (sha, evidence) = match evidence {
        layout::Evidence::Commit(sha, evidence) => (sha, evidence),
        // No evidence at all fails only when a commit is expected.
        layout::Evidence::Nothing(why) => {
            return match &target.expected {
                Some(expected) => Err(format!("no commit evidence: {why}; expected {expected}")),
                None => Ok(format!(
                    "no commit evidence: {why} (no expected commit given)"
                )),
            }
        }
    };
    match &target.expected {
        // Say the deployed commit first: "…VERSION agrees, expected Y" reads like success.
        Some(expected) if *expected != sha => Err(format!(
            "the deployed commit is {sha}, expected {expected} ({evidence})"
        )),
        Some(_) => Ok(format!("{evidence}, as expected")),
        None => Ok(format!("{evidence} (no expected commit given)")),
    }
}

/// `None` when the release holds no manifest and none is required: there is nothing to check.
fn check_content(target: &Target) -> Option<Result<String, String>> {
    let dir = match layout::release_dir(&target.prefix, target.server.layout) {
        Ok(d) => d,
        Err(e) if target.require_content => return Some(Err(e)),
        Err(_) => return None,
    };
    match manifest::verify_release(&dir) {
        Ok(report) if report.ok() => Some(Ok(report.summary())),
        Ok(report) => Some(Err(report.summary())),
        Err(ManifestError::NoManifest { .. }) if !target.require_content => None,
        Err(e) => Some(Err(match e.help() {
            Some(help) => format!("{e} ({help})"),
            None => e.to_string(),
        })),
    }
}

fn check_handshake(
    target: &Target,
    registrations: &Map<String, Value>,
    registered_ok: bool,
    timeout: Duration,
) -> Result<String, String> {
    if !registered_ok {
        return Err("not started: the mcp-registration check failed".into());
    }
    let raw = registrations
        .get(&target.registered_name)
        .ok_or("not started: no registered entry")?;
    let entry = Entry::from_value(raw).map_err(|e| format!("not started: {e}"))?;
    handshake::handshake(&entry, timeout)
        .map(|info| info.to_string())
        .map_err(|f| f.to_string())
}

fn check_registration(
    target: &Target,
    registrations: &Map<String, Value>,
) -> Result<String, String> {
    let name = &target.registered_name;
    let raw = registrations
        .get(name)
        .ok_or_else(|| format!("no entry named {name:?} is registered"))?;
    let entry = Entry::from_value(raw).map_err(|e| format!("entry {name:?} is malformed: {e}"))?;
    match (&target.declared.transport, &entry.transport) {
        (Transport::Stdio { args: want, .. }, Transport::Stdio { command, args }) => {
            if args != want {
                return Err(format!(
                    "args {} differ from the declared {}",
                    serde_json::to_string(args).unwrap(),
                    serde_json::to_string(want).unwrap()
                ));
            }
            let root = layout::containment_root(&target.prefix, target.server.layout)?;
            check_command_inside(Path::new(command), &root)
        }
        (Transport::Remote { url: want, .. }, Transport::Remote { url, .. }) => {
            let declared = Endpoint::parse(want).map_err(|e| format!("declared url: {e}"))?;
            let registered = Endpoint::parse(url).map_err(|e| format!("registered url: {e}"))?;
            if registered != declared {
                return Err(format!(
                    "url {url} is {registered}, but the declared {want} is {declared}"
                ));
            }
            Ok(format!("url {url} is the declared endpoint {declared}"))
        }
        (declared, _) => Err(format!(
            "registered as {}, but declared as {}",
            entry.describe(),
            match declared {
                Transport::Stdio { .. } => "a stdio server",
                Transport::Remote { .. } => "a remote server",
            }
        )),
    }
}

/// What an http(s) URL names, for comparison: scheme, host, port (the default one made
/// explicit) and path. Credentials in the URL are refused: they would be a secret in clear.
#[derive(Debug, PartialEq)]
pub struct Endpoint {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("{url} has no scheme"))?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            other => return Err(format!("{url}: scheme {other} is not http or https")),
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(format!(
                "{scheme}://…@…: credentials in a URL are a secret in clear; use a header reference"
            ));
        }
        // The port follows the last ':' unless that ':' is inside an IPv6 literal `[...]`.
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| format!("{url}: port {p:?} is not a number"))?;
                (h, port)
            }
            _ => (authority, default_port),
        };
        if host.is_empty() {
            return Err(format!("{url} has no host"));
        }
        let path = path.split(['?', '#']).next().unwrap_or("/");
        Ok(Endpoint {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
        })
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}://{}:{}{}",
            self.scheme, self.host, self.port, self.path
        )
    }
}

/// The registered command must be absolute, free of `.`/`..`, an executable regular file, and
/// resolve (every symlink followed) to a path inside `root` (already canonical).
pub fn check_command_inside(command: &Path, root: &Path) -> Result<String, String> {
    let shown = command.display();
    if !command.is_absolute() {
        return Err(format!(
            "command {shown} is relative; a registration needs an absolute path"
        ));
    }
    if has_dot_components(command) {
        return Err(format!(
            "command {shown} holds . or .. components; register the normalized path"
        ));
    }
    let real = fs::canonicalize(command)
        .map_err(|e| format!("command {shown} cannot be resolved: {e}"))?;
    let meta = fs::metadata(&real).map_err(|e| format!("command {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "command {shown} resolves to {}, not a file",
            real.display()
        ));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(format!(
            "command {shown} ({}) is not executable",
            real.display()
        ));
    }
    // Path::starts_with compares whole components: /opt/ct-evil does not start with /opt/ct.
    if !real.starts_with(root) {
        return Err(format!(
            "command {shown} resolves to {}, outside {}",
            real.display(),
            root.display()
        ));
    }
    Ok(format!(
        "{shown} -> {} inside {}",
        real.display(),
        root.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::Endpoint;

    #[test]
    fn endpoints_compare_by_scheme_host_port_and_path() {
        let e = |u: &str| Endpoint::parse(u).unwrap();
        assert_eq!(e("http://GW.example:80/mcp"), e("http://gw.example/mcp"));
        assert_eq!(e("https://gw/mcp?x=1"), e("https://gw:443/mcp"));
        assert_ne!(e("http://gw/mcp"), e("https://gw/mcp"));
        assert_ne!(e("http://gw:8080/mcp"), e("http://gw:8081/mcp"));
        assert_ne!(e("http://gw/mcp"), e("http://gw/mcp/"));
        assert_ne!(e("http://gw/mcp"), e("http://gw-evil/mcp"));
        assert_eq!(e("http://[::1]:9/mcp").to_string(), "http://[::1]:9/mcp");
        assert_eq!(e("http://[::1]/mcp").to_string(), "http://[::1]:80/mcp");
        for bad in [
            "gw/mcp",
            "ftp://gw/",
            "http://u:p@gw/",
            "http://gw:x/",
            "http:///mcp",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
