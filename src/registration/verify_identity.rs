//! `verify-identity`'s use case: every selected server checked for every client of `--client`
//! against the flat document and, where readable, the client's live config, in one report.
//!
//! 1. Read the flat document (a missing or malformed one is an error: there is nothing to
//!    verify against), and each client's user config: once per run, whatever the number of
//!    servers, so that the cost stays linear in it.
//! 2. For each server: render its declared entry, load its trust policies, resolve its
//!    release once (one release throughout every client's report of it).
//! 3. For each client: take the live witness — claude's managed file for a name the document
//!    records there, else the client's user config with the entries that shadow the name —
//!    and run the identity checks ([`checks::verify`]); with `require_live`, a registration
//!    only the document witnessed fails.
//! 4. With `only_deployed`, one report per client: can it load any server other than the
//!    declared ones ([`only_deployed`])?

use std::collections::BTreeMap;
use std::time::Duration;

use crate::clients::{self, only_deployed, ClientError, ClientKind, Scope};
use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::deployment::render::{self, RenderError};
use crate::deployment::selection::Selection;
use crate::identity::checks::{self, Target};
use crate::identity::report::Report;
use crate::registration::flat_document::{FlatDocument, FlatDocumentError};
use crate::registration::gate::trust_policies;
use crate::trust::{TrustFlags, TrustLoadError};

/// What a verify-identity run checks, resolved from its command line.
pub(crate) struct VerifyIdentityOptions<'a> {
    /// The servers, and the flat document to check them against.
    pub(crate) selection: &'a Selection,
    /// The commit each server's release must be, by server name.
    pub(crate) expected: &'a BTreeMap<String, Sha>,
    /// `--trusted-signers`, `--trusted-builder`, `--trusted-root`, for every server (besides
    /// its own `trusted_signers`).
    pub(crate) trust: TrustFlags<'a>,
    /// `--client`, in the order given.
    pub(crate) clients: &'a [ClientKind],
    /// `--content`: a release must hold a manifest its files match.
    pub(crate) require_content: bool,
    /// `--handshake`, with its timeout.
    pub(crate) handshake: Option<Duration>,
    /// `--require-live`: a registration only the document witnessed fails.
    pub(crate) require_live: bool,
    /// `--only-deployed`: fail when a client could load any server but the declared ones.
    pub(crate) only_deployed: bool,
}

/// Why verify-identity could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum VerifyIdentityError {
    #[error(transparent)]
    FlatDocument(#[from] FlatDocumentError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Trust(#[from] TrustLoadError),
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// One client as this run read it, for every server.
struct View {
    kind: ClientKind,
    /// Its user config (`None`: not on this host).
    live: Option<checks::Live>,
    /// The same-name entries that shadow a user-scope one, read from that config.
    shadows: Option<clients::Shadows>,
    /// What the flat document records for it.
    recorded: serde_json::Map<String, serde_json::Value>,
    layers: clients::Layers,
}

/// Verify every server of `opts.selection` for every client (the numbered steps above).
pub(crate) fn run(opts: &VerifyIdentityOptions) -> Result<Report, VerifyIdentityError> {
    let flat = FlatDocument::read(&opts.selection.flat_document)?;
    let mut reports = Vec::new();
    let mut declared = Vec::new();
    let mut views = Vec::new();
    for kind in ClientKind::unique(opts.clients) {
        let live = clients::read_live(kind)?;
        let shadows = match &live {
            Some(live) => Some(clients::Shadows::read(kind, &live.path)?),
            None => None,
        };
        views.push(View {
            kind,
            live,
            shadows,
            recorded: flat.servers(kind.name()),
            layers: clients::Layers::read(kind),
        });
    }
    for s in &opts.selection.servers {
        let server = &s.server;
        let registered_name = &s.registered_name;
        let entry = render::render(server, &s.prefix)?.entry;
        let trust = trust_policies(opts.trust, server)?;
        // Resolved once for every client's report of this server: one release throughout.
        let release = Release::resolve(&s.prefix, server.layout);
        for view in &views {
            let kind = view.kind;
            // An entry install put in claude's managed file: that file is its live witness.
            let managed = flat.scope(kind.name(), registered_name) == Scope::Managed
                && kind.has_managed_scope();
            let live = match managed {
                true => clients::claude_managed::read_live()?,
                false => match (view.live.clone(), &view.shadows) {
                    (Some(mut live), Some(shadows)) => {
                        live.shadows = shadows.of(registered_name)?;
                        Some(live)
                    }
                    _ => None,
                },
            };
            let client = kind.name();
            let target = Target {
                server,
                client,
                prefix: s.prefix.clone(),
                registered_name: registered_name.clone(),
                declared: entry.clone(),
                expected: opts.expected.get(&server.name).cloned(),
                require_content: opts.require_content,
                handshake: opts.handshake,
                live,
                layers: view.layers.of(registered_name, &entry),
                trust: &trust,
                release: release.clone(),
            };
            let mut report = checks::verify(&target, &view.recorded);
            if opts.require_live {
                report.require_live(&match managed {
                    true => clients::claude_managed::path(),
                    false => clients::user_config(kind).0,
                });
            }
            reports.push(report);
        }
        declared.push((registered_name, entry));
    }
    if opts.only_deployed {
        for kind in ClientKind::unique(opts.clients) {
            let ours: Vec<only_deployed::Declared> = declared
                .iter()
                .map(|(name, entry)| only_deployed::Declared { name, entry })
                .collect();
            reports.push(only_deployed::report(kind, &ours));
        }
    }
    Ok(Report::new(reports, None))
}
