//! A checked launch (`mcp-deploy exec`, issue 37): what a client can run instead of the
//! server, so that the release is checked at every start, not only when `verify-identity`
//! ran. At each start it
//!
//! 0. requires the files the server's declaration was read from (the declaration, its
//!    template, its trust policies) to be replaceable only by root or the deploying user;
//! 1. resolves the release once ([`Release::resolve`]) and checks its layout;
//! 2. takes the deployment's pin ([`pin`]: the commit and the digest of `MANIFEST.sha256` the
//!    last install or promote recorded) and requires the release to be that one: its
//!    `VERSION`, and the SHA-256 of its manifest bytes; when the declaration names a trust
//!    policy (`trusted_signers`) or a builder policy (`trusted_builder`), the signature or the
//!    provenance bundle must vouch for those bytes too, and then a missing pin is no refusal
//!    (they say which releases may start; a pin that is there must still match);
//! 3. opens the declared executable (and a script's interpreter) once, hashes it through that
//!    handle against the manifest, and executes that handle ([`image`]);
//! 4. gives it the declared environment and an allowlist of inherited variables ([`env`]),
//!    naming on stderr every other variable it drops;
//! 5. compares the arguments it was given with the declared ones.
//!
//! Any failure starts nothing: one line on stderr naming the check and the release, a ledger
//! record, exit 1 (a check failed) or 2 (it could not run). It adds no process: the server
//! replaces it, same pid. It calls no client and reads nothing but the release, the pin and
//! the declaration.

pub(crate) mod env;
pub(crate) mod image;
pub(crate) mod pin;

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::content::digest::{sha256_hex, Algorithm};
use crate::content::{manifest, sumfile};
use crate::deployment::declaration::Server;
use crate::deployment::release::Release;
use crate::entry::Transport;
use crate::identity::content_signature;
use crate::trust::allowed_signers::Policy;
use crate::trust::provenance::{self, BuilderPolicy, Roots};
use crate::trust::signature;

/// Why a launch was refused: each names the check and its evidence.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LaunchError {
    #[error("release: {0}")]
    Release(String),
    #[error("pin: {0}")]
    Pin(#[from] pin::PinError),
    #[error("commit: the release holds {found}, the pin {pinned} (by {by}): not the release that was verified")]
    Commit {
        found: String,
        pinned: String,
        by: String,
    },
    #[error("manifest: {0}")]
    Manifest(String),
    #[error("signature: {0}")]
    Signature(String),
    #[error("trust policy: {0}")]
    TrustPolicy(String),
    #[error("provenance: {0}")]
    Provenance(String),
    #[error("manifest: the release's MANIFEST.sha256 has SHA-256 {found}, the pin {pinned}: it was rewritten since it was verified")]
    ManifestChanged { found: String, pinned: String },
    #[error("content: {} is not listed in the release's manifest", path.display())]
    NotListed { path: PathBuf },
    #[error("content: {} lies outside the release {}", path.display(), release.display())]
    Outside { path: PathBuf, release: PathBuf },
    #[error("content: {} has SHA-256 {found}, the manifest says {expected}", path.display())]
    Digest {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("content: {} changed while it was being hashed", path.display())]
    Changed { path: PathBuf },
    #[error("interpreter: {} cannot be run as checked: {why}", script.display())]
    Interpreter { script: PathBuf, why: String },
    #[error("args: the client gave {given:?}, the declaration has {declared:?}")]
    Args {
        given: Vec<String>,
        declared: Vec<String>,
    },
    #[error("declaration: {0}")]
    Declaration(String),
    #[error("declaration: it can be rewritten by someone other than root or the deploying user, who would decide what starts: {0}")]
    Unguarded(String),
    #[error("exec: {what}: {why}")]
    Exec { what: String, why: String },
}

impl LaunchError {
    /// Whether a check failed (exit 1), rather than the launch could not run (exit 2).
    pub(crate) fn is_check(&self) -> bool {
        !matches!(
            self,
            LaunchError::Declaration(_)
                | LaunchError::TrustPolicy(_)
                | LaunchError::Exec { .. }
                | LaunchError::Pin(pin::PinError::Unreadable { .. })
        )
    }
}

/// The files the declaration of `server` was read from (the declaration, its template, its
/// trust policy) must be replaceable only by root or the deploying user (the prefix's owner):
/// whoever can rewrite one decides what this launch starts and with which environment.
fn guarded(server: &Server, prefix: &Path) -> Result<(), LaunchError> {
    let owner = std::fs::metadata(prefix)
        .map_err(|e| LaunchError::Release(format!("{}: {e}", prefix.display())))?
        .uid();
    server
        .sources_guarded(&[0, owner])
        .map_err(LaunchError::Unguarded)
}

/// The `signature` check of a server whose declaration names a trust policy
/// (`trusted_signers`): the policy must be a file only root or the deploying user (the
/// prefix's owner) can replace, along its whole path, lie outside the prefix, and vouch for
/// `manifest` (the bytes read once for the pin and the content). `Ok(false)`: no policy is
/// declared, nothing vouches.
fn signed(
    server: &Server,
    prefix: &Path,
    dir: &Path,
    manifest: &[u8],
) -> Result<bool, LaunchError> {
    let Some(file) = &server.trusted_signers else {
        return Ok(false);
    };
    // Only root or the deploying user can replace it: [`guarded`] checked it with the
    // declaration.
    let refused = |why: String| LaunchError::Signature(format!("{}: {why}", file.display()));
    let policy = Policy::load(file)
        .map_err(|e| LaunchError::TrustPolicy(format!("{}: {e}", file.display())))?;
    content_signature::policy_outside(&policy, prefix).map_err(|e| refused(e.to_string()))?;
    signature::check(&policy, dir, manifest, std::time::SystemTime::now())
        .map_err(|e| refused(e.to_string()))?;
    Ok(true)
}

/// The `provenance` check of a server whose declaration names a builder trust policy
/// (`trusted_builder`, with its `trusted_root` or the shipped roots): the release's Sigstore
/// bundle must verify over `manifest` and name a build the policy allows. `Ok(false)`: no
/// builder policy is declared, nothing vouches. The policy and root files are guarded with the
/// declaration ([`guarded`]).
fn proven(
    server: &Server,
    prefix: &Path,
    dir: &Path,
    manifest: &[u8],
) -> Result<bool, LaunchError> {
    let Some(file) = &server.trusted_builder else {
        return Ok(false);
    };
    // Whoever can write the release can write a policy or root kept inside its prefix.
    for f in [Some(file), server.trusted_root.as_ref()]
        .into_iter()
        .flatten()
    {
        content_signature::outside(f, prefix)
            .map_err(|e| LaunchError::Provenance(e.to_string()))?;
    }
    let unusable = |e: provenance::BuilderPolicyError| LaunchError::TrustPolicy(e.to_string());
    let policy = BuilderPolicy::load(file).map_err(unusable)?;
    let roots = Roots::load(server.trusted_root.as_deref()).map_err(unusable)?;
    provenance::check(&policy, &roots, dir, manifest)
        .map_err(|e| LaunchError::Provenance(e.to_string()))?;
    Ok(true)
}

/// Everything checked, ready to run.
pub(crate) struct Checked {
    pub(crate) image: image::Image,
    pub(crate) env: Vec<(OsString, OsString)>,
    /// The names of the variables the client passed that the server does not get.
    pub(crate) dropped: Vec<String>,
}

/// What is known of the release when a check fails, for the message and the ledger.
#[derive(Debug, Default, Clone)]
pub(crate) struct Seen {
    pub(crate) release: Option<PathBuf>,
    pub(crate) commit: Option<String>,
}

/// Check the launch of `server` deployed at `prefix` with `args` (what the client gave after
/// `--`) and the environment `given`.
pub(crate) fn check(
    server: &Server,
    prefix: &Path,
    args: &[String],
    given: Vec<(OsString, OsString)>,
    seen: &mut Seen,
) -> Result<Checked, LaunchError> {
    guarded(server, prefix)?;
    let rendered = crate::deployment::render::render_direct(server, prefix)
        .map_err(|e| LaunchError::Declaration(e.to_string()))?;
    let Transport::Stdio {
        command,
        args: declared_args,
    } = &rendered.entry.transport
    else {
        return Err(LaunchError::Declaration(format!(
            "{} is a remote server: there is nothing to launch",
            server.name
        )));
    };
    // A client expands `${VAR}` in the args it passes (from its environment, which is the one
    // this launcher was given), or passes them as written: either form of the declared args.
    let lookup = |name: &str| {
        given
            .iter()
            .find(|(k, _)| k.as_encoded_bytes() == name.as_bytes())
            .and_then(|(_, v)| v.to_str().map(str::to_string))
    };
    let expanded: Vec<String> = declared_args
        .iter()
        .map(|a| crate::identity::expand::expand(a, &lookup))
        .collect();
    if args != expanded.as_slice() && args != declared_args.as_slice() {
        return Err(LaunchError::Args {
            given: args.to_vec(),
            declared: declared_args.clone(),
        });
    }
    let release = Release::resolve(prefix, server.layout);
    release
        .check()
        .map_err(|e| LaunchError::Release(e.to_string()))?;
    let dir = release
        .dir()
        .map_err(|e| LaunchError::Release(e.to_string()))?;
    seen.release = Some(dir.clone());
    let (sha, _) = release
        .deployed_commit()
        .map_err(|e| LaunchError::Release(e.to_string()))?;
    seen.commit = Some(sha.to_string());
    let bytes = manifest::read_manifest(&dir).map_err(|e| LaunchError::Manifest(e.to_string()))?;
    // The declaration's trust policy, when it names one, must vouch for the manifest read
    // here; then a missing pin is no refusal: the signature says which releases may start.
    let signed = signed(server, prefix, &dir, &bytes)?;
    let proven = proven(server, prefix, &dir, &bytes)?;
    let vouched = signed || proven;
    match pin::read(prefix) {
        Err(pin::PinError::Missing { .. }) if vouched => {}
        Err(e) => return Err(e.into()),
        Ok(pin) => {
            if pin.commit != sha.as_str() || pin.server != server.name {
                return Err(LaunchError::Commit {
                    found: format!("{} of {}", sha, server.name),
                    pinned: format!("{} of {}", pin.commit, pin.server),
                    by: pin.by,
                });
            }
            let found = sha256_hex(&bytes);
            if found != pin.manifest_sha256 {
                return Err(LaunchError::ManifestChanged {
                    found,
                    pinned: pin.manifest_sha256,
                });
            }
        }
    }
    let listed: HashMap<PathBuf, String> = sumfile::parse(
        Algorithm::Sha256,
        &dir.join(manifest::MANIFEST_NAME),
        &bytes,
    )
    .map_err(|e| LaunchError::Manifest(e.to_string()))?
    .into_iter()
    .map(|e| (e.path, e.digest))
    .collect();
    let declared_env = rendered
        .entry
        .raw
        .get("env")
        .and_then(serde_json::Value::as_object)
        .cloned()
        .unwrap_or_default();
    let (env, dropped) = env::build(given, &declared_env, &server.inherit_env);
    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let exe = std::fs::canonicalize(release.declared_path(Path::new(command))).map_err(|e| {
        LaunchError::Release(format!(
            "the declared command {command} cannot be resolved: {e}"
        ))
    })?;
    let image = image::open(&exe, &dir, &listed, command, args, path_var.as_deref())?;
    Ok(Checked {
        image,
        env,
        dropped,
    })
}

/// Replace this process with the checked server; returns only when the exec failed.
pub(crate) fn exec(checked: Checked) -> LaunchError {
    // A window for the tests: between the checks and the exec, where a swap must not matter.
    crate::process::checkpoint("exec-checked");
    let envp = match image::c_strings(&checked.env) {
        Ok(e) => e,
        Err(e) => return e,
    };
    let err = nix::unistd::execveat(
        &checked.image.program,
        c"",
        &checked.image.argv,
        &envp,
        nix::fcntl::AtFlags::AT_EMPTY_PATH,
    )
    .unwrap_err();
    LaunchError::Exec {
        what: checked.image.shown,
        why: err.desc().to_string(),
    }
}

/// Record the pin of `server` at `prefix` from the release as it is now (just verified by
/// the command that calls this): its commit and its manifest's digest. `Ok(None)`: nothing to
/// pin (no manifest: a checked launch of it is refused, saying so).
pub(crate) fn record_pin(
    server: &Server,
    prefix: &Path,
    by: &str,
) -> Result<Option<PathBuf>, String> {
    let release = Release::resolve(prefix, server.layout);
    let dir = release.dir().map_err(|e| e.to_string())?;
    let (sha, _) = release.deployed_commit().map_err(|e| e.to_string())?;
    let bytes = match manifest::read_manifest(&dir) {
        Ok(b) => b,
        Err(manifest::ManifestError::NoManifest { .. }) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let pin = pin::Pin {
        server: server.name.clone(),
        commit: sha.to_string(),
        manifest_sha256: sha256_hex(&bytes),
        by: by.into(),
        at: crate::registration::ledger::rfc3339(std::time::SystemTime::now()),
    };
    // A run that changes nothing rewrites nothing: the same release pinned stays as it is.
    if let Ok(old) = pin::read(prefix) {
        if (&old.server, &old.commit, &old.manifest_sha256)
            == (&pin.server, &pin.commit, &pin.manifest_sha256)
        {
            return Ok(Some(pin::path(prefix)));
        }
    }
    pin::write(prefix, &pin)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// [`record_pin`] after a command verified `servers`, each failure said as a notice.
pub(crate) fn record_pins<'a>(
    servers: impl IntoIterator<Item = (&'a Server, &'a Path)>,
    by: &str,
    notify: crate::notice::Notify,
) {
    for (server, prefix) in servers {
        if let Err(why) = record_pin(server, prefix, by) {
            notify(crate::notice::Notice::PinNotRecorded {
                server: server.name.clone(),
                why,
            });
        }
    }
}
