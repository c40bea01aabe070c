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

use std::path::PathBuf;

use crate::content::manifest::ManifestError;
use crate::deployment::declaration::{Launch, Layout};
use crate::deployment::layout::{self, LayoutError};
use crate::deployment::release::Release;
use crate::deployment::render::{self, RenderError, Rendered};
use crate::deployment::selection::Selected;
use crate::entry::{Entry, EntryError, Transport};
use crate::fsio::IoError;
use crate::identity::containment::{self, ContainmentError};
use crate::identity::mcp_registration;
use crate::identity::report::{Check, ServerReport};

/// A drift: what disagrees, with the paths and the (redacted) entries involved, and what
/// `install` would do about it. One variant per way a check fails.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Drift {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A checked launch whose launcher someone else could replace.
    #[error("{why}")]
    Launcher { why: String },
    #[error("{} is missing; install would write it", .path.display())]
    RenderedMissing { path: PathBuf },
    #[error("{0}; install would replace it")]
    RenderedUnreadable(IoError),
    #[error("{} is not valid JSON; install would rewrite it", .path.display())]
    RenderedNotJson { path: PathBuf },
    #[error("{} no longer matches the template; install would rewrite it", .path.display())]
    RenderedStale { path: PathBuf },
    #[error("{name} is not registered; install would add it")]
    NotRegistered { name: String },
    /// `opaque`: the entry's digest, never its values.
    #[error(
        "{name}'s entry cannot be parsed ({why}): {opaque}; install refuses to replace it: fix \
         or remove it by hand"
    )]
    Unparseable {
        name: String,
        why: EntryError,
        opaque: String,
    },
    /// Both entries as [`Entry::describe`] shows them (secrets redacted).
    #[error("{name} is registered as {registered} but renders as {rendered} {why}")]
    RegisteredOtherwise {
        name: String,
        registered: String,
        rendered: String,
        /// The likely cause and the step: an edit, or the other `--launch`.
        why: String,
    },
    /// The content check's summary of what differs.
    #[error("{0}")]
    Content(String),
    #[error(transparent)]
    Manifest(ManifestError),
    /// The registered command does not resolve inside the release: the cause and the next
    /// step ([`ContainmentError::next_step`], the wording verify-identity gives too).
    #[error("{why}: {next}")]
    Target { why: ContainmentError, next: String },
    #[error("{} does not exist; install would write it", .path.display())]
    NoDocument { path: PathBuf },
    #[error(
        "{} records {name}, which is not registered as rendered; install would update it",
        .path.display()
    )]
    RecordedNotRegistered { path: PathBuf, name: String },
    #[error("{} does not record {name}; install would record it", .path.display())]
    NotRecorded { path: PathBuf, name: String },
    #[error(
        "{} records {name} differently from the client ({client}); install would rewrite it",
        .path.display()
    )]
    RecordedOtherwise {
        path: PathBuf,
        name: String,
        client: String,
    },
}

/// The checks of one server as one client has it.
pub(crate) fn server_status(
    s: &Selected,
    client: &str,
    entries: &serde_json::Map<String, serde_json::Value>,
    flat: Option<&serde_json::Map<String, serde_json::Value>>,
    flat_document: &std::path::Path,
) -> Result<ServerReport, RenderError> {
    let mut checks = Vec::new();
    let rendered = render::render(&s.server, &s.prefix)?;
    // `current` read once: every check below, and the report, see this one release.
    let release = Release::resolve(&s.prefix, s.server.layout);
    checks.push(Check::from_result(
        "deployed",
        deployed(
            &release,
            &render::render_direct(&s.server, &s.prefix)?.entry,
        ),
    ));
    checks.push(Check::from_result(
        "rendered",
        rendered_file(&rendered, &s.prefix),
    ));
    let name = &s.registered_name;
    let parsed = entries.get(name).map(Entry::from_value);
    let registered = match &parsed {
        None => Err(Drift::NotRegistered { name: name.clone() }),
        Some(Err(e)) => Err(Drift::Unparseable {
            name: name.clone(),
            why: e.clone(),
            opaque: crate::content::digest::opaque(&entries[name.as_str()]).to_string(),
        }),
        Some(Ok(e)) if !e.same_registration(&rendered.entry) => Err(Drift::RegisteredOtherwise {
            name: name.clone(),
            registered: e.describe(),
            rendered: rendered.entry.describe(),
            why: otherwise(e, s.server.launch),
        }),
        Some(Ok(e)) => Ok(e.clone()),
    };
    checks.push(Check::from_result(
        "registered",
        registered
            .as_ref()
            .map(|e| format!("{name}: {}", e.describe())),
    ));
    // What the agent would run now, whether or not it is what we render.
    if let Some(Ok(entry)) = &parsed {
        // A checked launch's registered command is the launcher: what the agent runs is the
        // declared command it starts, once the launcher itself is one no one else can replace.
        let checked =
            s.server.launch == Launch::Checked && entry.same_registration(&rendered.entry);
        let row = match (&entry.transport, checked) {
            (Transport::Stdio { command, .. }, true) => {
                match mcp_registration::checked_launch(&s.server, &s.prefix, command) {
                    Err(why) => Err(Drift::Launcher { why }),
                    Ok(inner) => {
                        let mut direct = entry.clone();
                        direct.transport = Transport::Stdio {
                            command: inner,
                            args: Vec::new(),
                        };
                        target(&direct, &direct, &release)
                            .map(|ok| format!("checked at every launch by {command}: {ok}"))
                    }
                }
            }
            _ => target(entry, &rendered.entry, &release),
        };
        checks.push(Check::from_result("target", row));
    }
    if let Some(content) = content(&release) {
        checks.push(Check::from_result("content", content));
    }
    checks.push(Check::from_result(
        "recorded",
        recorded(flat, name, registered.as_ref().ok(), flat_document),
    ));
    Ok(ServerReport {
        name: s.server.name.clone(),
        client: client.to_string(),
        registered_name: name.clone(),
        prefix: s.prefix.display().to_string(),
        registration: None,
        witnesses: None,
        deployed: crate::identity::report::Deployed::of(&release),
        checks,
    })
}

/// Why a registered entry differs from the rendered one: started the other way than this
/// run's launch (the step to take), else an edit or a changed template.
fn otherwise(registered: &Entry, expected: Launch) -> String {
    match &registered.transport {
        Transport::Stdio { args, .. } if render::launched_as(args) != expected => {
            format!(
                "({})",
                mcp_registration::other_launch_step(render::launched_as(args))
            )
        }
        _ => "(edited by hand, or the template changed); install would update it".to_string(),
    }
}

fn deployed(release: &Release, declared: &Entry) -> Result<String, Drift> {
    let dir = release.dir()?;
    let command = match &declared.transport {
        Transport::Stdio { command, .. } => Some(std::path::Path::new(command.as_str())),
        Transport::Remote { .. } => None,
    };
    let commit = match release.commit_evidence(command)? {
        layout::Evidence::Commit(sha, _) => format!("commit {sha}"),
        layout::Evidence::Nothing(why) => format!("no commit evidence ({why})"),
    };
    let id = match release.layout() {
        Layout::Release => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Layout::Prefix => dir.display().to_string(),
    };
    Ok(format!("release {id}, {commit}"))
}

fn rendered_file(rendered: &Rendered, prefix: &std::path::Path) -> Result<String, Drift> {
    let path = render::rendered_path(prefix, &rendered.server);
    let text = match crate::fsio::read_input_if_exists(
        &path,
        "rendered document",
        crate::fsio::limits::DOCUMENT,
    ) {
        Ok(Some(t)) => t,
        Ok(None) => return Err(Drift::RenderedMissing { path }),
        Err(e) => return Err(Drift::RenderedUnreadable(e)),
    };
    let on_disk: serde_json::Value =
        serde_json::from_str(&text).map_err(|_| Drift::RenderedNotJson { path: path.clone() })?;
    if on_disk != rendered.document {
        return Err(Drift::RenderedStale { path });
    }
    Ok(format!("{} matches the template", path.display()))
}

/// The release's files against its `MANIFEST.sha256`; `None` when it holds none.
fn content(release: &Release) -> Option<Result<String, Drift>> {
    let dir = release.dir().ok()?;
    match crate::content::manifest::verify_release(&dir) {
        Ok(report) if report.ok() => Some(Ok(report.summary())),
        Ok(report) => Some(Err(Drift::Content(report.summary()))),
        Err(ManifestError::NoManifest { .. }) => None,
        Err(e) => Some(Err(Drift::Manifest(e))),
    }
}

fn target(entry: &Entry, declared: &Entry, release: &Release) -> Result<String, Drift> {
    match &entry.transport {
        Transport::Stdio { command, .. } => {
            let root = release.containment_root()?;
            let (layout, prefix, via) = (release.layout(), release.prefix(), release.via());
            let declared = match &declared.transport {
                Transport::Stdio { command, .. } => Some(std::path::Path::new(command)),
                Transport::Remote { .. } => None,
            };
            let path = std::path::Path::new(command);
            containment::check_command_inside_via(path, &root, via.as_ref())
                .and_then(|ok| {
                    containment::check_stable_path_via(layout, prefix, path, &root, via.as_ref())?;
                    Ok(ok)
                })
                .map_err(|why| Drift::Target {
                    next: why.next_step(&containment::Against {
                        root: &root,
                        prefix,
                        declared,
                    }),
                    why,
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
) -> Result<String, Drift> {
    let Some(flat) = flat else {
        return Err(Drift::NoDocument {
            path: path.to_path_buf(),
        });
    };
    let recorded = flat.get(name);
    match (recorded, registered) {
        (None, None) => Ok(format!(
            "neither registered nor recorded in {}",
            path.display()
        )),
        (Some(_), None) => Err(Drift::RecordedNotRegistered {
            path: path.to_path_buf(),
            name: name.to_string(),
        }),
        (None, Some(_)) => Err(Drift::NotRecorded {
            path: path.to_path_buf(),
            name: name.to_string(),
        }),
        (Some(r), Some(e)) if *r != e.flat() => Err(Drift::RecordedOtherwise {
            path: path.to_path_buf(),
            name: name.to_string(),
            client: e.describe(),
        }),
        (Some(_), Some(_)) => Ok(format!("{} agrees", path.display())),
    }
}
