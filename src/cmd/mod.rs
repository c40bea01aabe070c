//! One file per subcommand. Each turns its arguments into validated work, calls the domain
//! (deployment, registration, clients, identity, content, vendored_sdk) and hands the report
//! to [`crate::output`]. No command imports another: what two share lives in the domain, or
//! here when it only converts arguments.

pub(crate) mod completions;
pub(crate) mod install;
pub(crate) mod man;
pub(crate) mod manifest;
pub(crate) mod pin_vendor;
pub(crate) mod promote;
pub(crate) mod prune;
pub(crate) mod render_mcp;
pub(crate) mod sample;
pub(crate) mod status;
pub(crate) mod uninstall;
pub(crate) mod verify_identity;
pub(crate) mod verify_vendor;

use crate::cli::{Cli, ClientArgs, Command, SelectionArgs};
use crate::clients::{Client, ClientOptions};
use crate::deployment::selection::Selection;
use crate::error::Error;
use crate::exit::Exit;

pub(crate) fn dispatch(cli: &Cli) -> Result<Exit, Error> {
    match &cli.command {
        Command::RenderMcp(args) => render_mcp::run(args),
        Command::VerifyIdentity(args) => verify_identity::run(args),
        Command::Install(args) => install::install(args),
        Command::Uninstall(args) => uninstall::uninstall(args),
        Command::Status(args) => status::status(args),
        Command::Sample(args) => sample::run(args),
        Command::Manifest(args) => manifest::run(args),
        Command::VerifyVendor(args) => verify_vendor::run(args),
        Command::PinVendor(args) => pin_vendor::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Promote(args) => promote::promote(args),
        Command::Rollback(args) => promote::rollback(args),
        Command::Prune(args) => prune::prune(args),
    }
}

/// `mcp_timeout_ms`: install's `--mcp-timeout` (the only command that calls `claude mcp get`).
pub(crate) fn client_options(args: &ClientArgs, mcp_timeout_ms: u64) -> ClientOptions {
    ClientOptions {
        binaries: args.binaries.clone(),
        homes: Default::default(),
        // clap refuses --client-timeout 0.
        timeout: std::time::Duration::from_secs(args.client_timeout),
        mcp_timeout_ms,
        calls_binary: true,
    }
}

/// Open every client of `--client`, each once, in the order given.
pub(crate) fn open_clients(
    args: &ClientArgs,
    mcp_timeout_ms: u64,
) -> Result<Vec<Box<dyn Client>>, Error> {
    Ok(crate::registration::session::open_named(
        &args.clients,
        &client_options(args, mcp_timeout_ms),
    )?)
}

/// The servers of `--prefix`/`--server`/`--name-suffix`/`--config`, and the flat document of
/// `--registered`.
pub(crate) fn selection(args: &SelectionArgs) -> Result<Selection, Error> {
    Ok(Selection::load(
        args.declaration.config.as_deref(),
        args.prefix.as_deref(),
        &args.servers,
        &args.name_suffix,
        args.registered
            .clone()
            .unwrap_or_else(crate::registration::registered::default_path),
        &crate::output::notice,
    )?)
}

/// The trust policies `server`'s release must satisfy, all of them: the command line's
/// `--trusted-signers` (for every selected server) and the server's own `trusted_signers`.
/// Both given means both must pass — the stricter reading. A policy that cannot be read or
/// parsed is exit 2, before anything is checked or changed.
pub(crate) fn trust_policies(
    flag: Option<&std::path::Path>,
    server: &crate::deployment::declaration::Server,
) -> Result<Vec<crate::trust::allowed_signers::Policy>, Error> {
    use crate::trust::allowed_signers::Policy;
    let mut policies = Vec::new();
    for path in [flag, server.trusted_signers.as_deref()]
        .into_iter()
        .flatten()
    {
        if !policies.iter().any(|p: &Policy| p.path == path) {
            policies.push(Policy::load(path)?);
        }
    }
    Ok(policies)
}

/// What the gate checks besides the deployment itself: for install and promote alike, so
/// that a check added to the gate (a trust policy, say) reaches both.
pub(crate) struct Gate<'a> {
    /// The clients of `--client`, named in the report.
    pub(crate) clients: &'a [crate::clients::ClientKind],
    /// `--content`: a release must hold a manifest its files match.
    pub(crate) require_content: bool,
    /// promote's preflight: the release to check in place of what `current` resolves to.
    pub(crate) candidate: Option<&'a std::path::Path>,
    /// The trust policies of each selected server, `trust[i]` for `selected[i]` (see
    /// [`trust_policies`]); the `signature` check runs where there is one.
    pub(crate) trust: &'a [Vec<crate::trust::allowed_signers::Policy>],
}

/// The gate, install's step 1b and promote's preflight: [`checks::deployment_checks`] for
/// every selected server, before anything is written or registered.
///
/// [`checks::deployment_checks`]: crate::identity::checks::deployment_checks
pub(crate) fn gate_reports(
    gate: &Gate,
    selected: &[crate::deployment::selection::Selected],
    rendered: &[crate::deployment::render::Rendered],
    expected: &std::collections::BTreeMap<String, crate::deployment::layout::Sha>,
) -> Vec<crate::identity::report::ServerReport> {
    use crate::identity::checks::{self, Target};
    let clients = gate
        .clients
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(",");
    selected
        .iter()
        .zip(rendered)
        .zip(gate.trust)
        .map(|((s, r), trust)| {
            let target = Target {
                server: &s.server,
                client: &clients,
                prefix: s.prefix.clone(),
                registered_name: s.registered_name.clone(),
                declared: r.entry.clone(),
                expected: expected.get(&s.server.name).cloned(),
                require_content: gate.require_content,
                handshake: None,
                live: None,
                // The gate checks the deployment, not a registration.
                layers: Vec::new(),
                strict: false,
                candidate: gate.candidate.map(std::path::Path::to_path_buf),
                trust,
            };
            crate::identity::report::ServerReport {
                name: s.server.name.clone(),
                client: clients.clone(),
                registered_name: s.registered_name.clone(),
                prefix: s.prefix.display().to_string(),
                registration: None,
                witnesses: None,
                checks: checks::deployment_checks(&target),
            }
        })
        .collect()
}

/// Say, before anything changes, which selected release layouts hold the journal of an
/// interrupted promote (install goes on: it registers the stable path, whichever release
/// `current` names; promote or rollback undoes the switch).
pub(crate) fn warn_interrupted_promotes(selected: &[crate::deployment::selection::Selected]) {
    for s in selected {
        if s.server.layout != crate::deployment::declaration::Layout::Release {
            continue;
        }
        if let Some(journal) = crate::promotion::prefix::interrupted(&s.prefix) {
            crate::output::notice(crate::notice::Notice::InterruptedPromote {
                server: s.server.name.clone(),
                journal,
            });
        }
    }
}
