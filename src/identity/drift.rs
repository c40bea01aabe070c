//! Drift, what `status` checks: for each server, does everything agree — the deployed
//! release, the rendered document, the client's registered entry and the flat document?
//! Read-only: it makes no client call and writes nothing. Each disagreement (drift) is a failed check that says what
//! `install` would change; any drift exits 1.
//!
//! - `deployed`: the release resolves and its VERSION is a full sha (release id and commit).
//! - `rendered`: `<prefix>/mcp/<name>.mcp.json` equals what the template renders now.
//! - `registered`: the client's user-scope entry equals the rendered entry (else it was edited
//!   by hand, or the template changed since the last install).
//! - `target`: the registered command still resolves to an executable inside the deployed
//!   release (not into a release that is gone or was replaced).
//! - `content`: the release's files match its `MANIFEST.sha256` (only when it holds one).
//! - `recorded`: the flat document's entry equals the registered one.
//! - `shadowing`: a same-name entry in another scope; a warning, or with `--strict` a failed
//!   check.

use crate::deployment::declaration::Layout;
use crate::deployment::layout;
use crate::deployment::render::{self, RenderError, Rendered};
use crate::deployment::selection::Selected;
use crate::entry::{Entry, Transport};
use crate::identity::containment;
use crate::identity::report::{Check, ServerReport};

/// The checks of one server as one client has it.
pub(crate) fn server_status(
    s: &Selected,
    client: &str,
    entries: &serde_json::Map<String, serde_json::Value>,
    flat: Option<&serde_json::Map<String, serde_json::Value>>,
    registered_path: &std::path::Path,
) -> Result<ServerReport, RenderError> {
    let mut checks = Vec::new();
    let rendered = render::render(&s.server, &s.prefix)?;
    checks.push(Check::from_result(
        "deployed",
        deployed(s.server.layout, &s.prefix, &rendered.entry),
    ));
    checks.push(Check::from_result(
        "rendered",
        rendered_file(&rendered, &s.prefix),
    ));
    let name = &s.registered_name;
    let parsed = entries.get(name).map(Entry::from_value);
    let registered = match &parsed {
        None => Err(format!("{name} is not registered; install would add it")),
        Some(Err(e)) => Err(format!(
            "{name}'s entry cannot be parsed ({e}): {}; install refuses to replace it: fix or \
             remove it by hand",
            crate::content::digest::opaque(&entries[name.as_str()])
        )),
        Some(Ok(e)) if !e.same_registration(&rendered.entry) => Err(format!(
            "{name} is registered as {} but renders as {} (edited by hand, or the template \
                 changed); install would update it",
            e.describe(),
            rendered.entry.describe()
        )),
        Some(Ok(e)) => Ok(e.clone()),
    };
    checks.push(Check::from_result(
        "registered",
        registered
            .as_ref()
            .map(|e| format!("{name}: {}", e.describe()))
            .map_err(String::clone),
    ));
    // What the agent would run now, whether or not it is what we render.
    if let Some(Ok(entry)) = &parsed {
        checks.push(Check::from_result(
            "target",
            target(entry, &rendered.entry, s.server.layout, &s.prefix),
        ));
    }
    if let Some(content) = content(s) {
        checks.push(Check::from_result("content", content));
    }
    checks.push(Check::from_result(
        "recorded",
        recorded(flat, name, registered.as_ref().ok(), registered_path),
    ));
    Ok(ServerReport {
        name: s.server.name.clone(),
        client: client.to_string(),
        registered_name: name.clone(),
        prefix: s.prefix.display().to_string(),
        registration: None,
        witnesses: None,
        checks,
    })
}

fn deployed(layout: Layout, prefix: &std::path::Path, declared: &Entry) -> Result<String, String> {
    let dir = layout::release_dir(prefix, layout)?;
    let command = match &declared.transport {
        Transport::Stdio { command, .. } => Some(std::path::Path::new(command.as_str())),
        Transport::Remote { .. } => None,
    };
    let commit = match layout::commit_evidence(prefix, layout, command)? {
        layout::Evidence::Commit(sha, _) => format!("commit {sha}"),
        layout::Evidence::Nothing(why) => format!("no commit evidence ({why})"),
    };
    let id = match layout {
        Layout::Release => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Layout::Prefix => dir.display().to_string(),
    };
    Ok(format!("release {id}, {commit}"))
}

fn rendered_file(rendered: &Rendered, prefix: &std::path::Path) -> Result<String, String> {
    let path = render::rendered_path(prefix, &rendered.server);
    let text = match crate::fsio::read_input_if_exists(
        &path,
        "rendered document",
        crate::fsio::limits::DOCUMENT,
    ) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Err(format!(
                "{} is missing; install would write it",
                path.display()
            ))
        }
        Err(e) => return Err(format!("{e}; install would replace it")),
    };
    let on_disk: serde_json::Value = serde_json::from_str(&text).map_err(|_| {
        format!(
            "{} is not valid JSON; install would rewrite it",
            path.display()
        )
    })?;
    if on_disk != rendered.document {
        return Err(format!(
            "{} no longer matches the template; install would rewrite it",
            path.display()
        ));
    }
    Ok(format!("{} matches the template", path.display()))
}

/// The release's files against its `MANIFEST.sha256`; `None` when it holds none.
fn content(s: &Selected) -> Option<Result<String, String>> {
    let dir = layout::release_dir(&s.prefix, s.server.layout).ok()?;
    match crate::content::manifest::verify_release(&dir) {
        Ok(report) if report.ok() => Some(Ok(report.summary())),
        Ok(report) => Some(Err(report.summary())),
        Err(crate::content::manifest::ManifestError::NoManifest { .. }) => None,
        Err(e) => Some(Err(e.to_string())),
    }
}

fn target(
    entry: &Entry,
    declared: &Entry,
    layout: Layout,
    prefix: &std::path::Path,
) -> Result<String, String> {
    match &entry.transport {
        Transport::Stdio { command, .. } => {
            let root = layout::containment_root(prefix, layout)?;
            let same_command = matches!(&declared.transport,
                Transport::Stdio { command: declared, .. } if declared == command);
            let path = std::path::Path::new(command);
            containment::check_command_inside(path, &root)
                .and_then(|ok| {
                    containment::check_stable_path(layout, prefix, path, &root)?;
                    Ok(ok)
                })
                .map_err(|e| {
                    if same_command {
                        // The registered path is the declared one: re-registering it changes
                        // nothing; the deployment's own link is what points elsewhere.
                        format!(
                        "{e}: the deployment's {command} does not lead into the current release; \
                         fix that link (e.g. ln -sfn ../current/bin/<exe>), install cannot"
                    )
                    } else {
                        format!(
                            "{e}: it points into a release that is gone or was replaced; install \
                         would re-register it"
                        )
                    }
                })
        }
        Transport::Remote { url, .. } => {
            Ok(format!("remote {}", crate::entry::secrets::shown_url(url)))
        }
    }
}

fn recorded(
    flat: Option<&serde_json::Map<String, serde_json::Value>>,
    name: &str,
    registered: Option<&Entry>,
    path: &std::path::Path,
) -> Result<String, String> {
    let Some(flat) = flat else {
        return Err(format!(
            "{} does not exist; install would write it",
            path.display()
        ));
    };
    let recorded = flat.get(name);
    match (recorded, registered) {
        (None, None) => Ok(format!(
            "neither registered nor recorded in {}",
            path.display()
        )),
        (Some(_), None) => Err(format!(
            "{} records {name}, which is not registered as rendered; install would update it",
            path.display()
        )),
        (None, Some(_)) => Err(format!(
            "{} does not record {name}; install would record it",
            path.display()
        )),
        (Some(r), Some(e)) if *r != e.flat() => Err(format!(
            "{} records {name} differently from the client ({}); install would rewrite it",
            path.display(),
            e.describe()
        )),
        (Some(_), Some(_)) => Ok(format!("{} agrees", path.display())),
    }
}
