//! Who may build a release, and the proof that one of them did: the trust policy (an OpenSSH
//! `allowed_signers` file, [`allowed_signers`]) and the check that a release's
//! `MANIFEST.sha256.sig` is an SSH signature (SSHSIG, what `ssh-keygen -Y sign` writes) over
//! its `MANIFEST.sha256` by a key the policy allows for the `mcp-deploy` namespace
//! ([`signature`]).
//!
//! The manifest lists every file of the release, `VERSION` included, so a valid signature
//! over it covers the commit and every file; the `content` check ties the files to it.

pub(crate) mod allowed_signers;
pub(crate) mod provenance;
pub(crate) mod signature;

/// The SSHSIG namespace a release signature must be made for (`ssh-keygen -Y sign -n`). Fixed:
/// a signature made for another purpose (`git`, `file`) never passes as a release signature.
pub(crate) const NAMESPACE: &str = "mcp-deploy";

pub(crate) use crate::content::manifest::SIGNATURE_NAME;

use std::path::Path;
use std::sync::Arc;

use allowed_signers::{Policy, PolicyError};
use provenance::{BuilderPolicy, BuilderPolicyError, Roots};

/// The command line's trust flags: `--trusted-signers`, `--trusted-builder`, `--trusted-root`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TrustFlags<'a> {
    pub(crate) signers: Option<&'a Path>,
    pub(crate) builder: Option<&'a Path>,
    pub(crate) root: Option<&'a Path>,
}

/// What a release must be proven by: every SSH trust policy in `signers` (the flag's and the
/// server's own, each must pass), and every builder policy in `builders` with the trusted
/// roots it is judged against (the flag's with `--trusted-root`, the server's own with its
/// `trusted_root`; else the shipped roots): a Sigstore bundle that verifies and names a build
/// each allows. All given must pass.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trust {
    pub(crate) signers: Vec<Policy>,
    pub(crate) builders: Vec<(BuilderPolicy, Arc<Roots>)>,
}

impl Trust {
    /// Whether anything is required of the release (a signature or a provenance).
    pub(crate) fn is_empty(&self) -> bool {
        self.signers.is_empty() && self.builders.is_empty()
    }

    /// The trust of a server whose declaration names `own` (`trusted_signers`,
    /// `trusted_builder`, `trusted_root`), under the command line's `flags`.
    pub(crate) fn load(flags: TrustFlags, own: TrustFlags) -> Result<Trust, TrustLoadError> {
        let mut signers = Vec::new();
        for path in [flags.signers, own.signers].into_iter().flatten() {
            if !signers.iter().any(|p: &Policy| p.path == path) {
                signers.push(Policy::load(path)?);
            }
        }
        let mut builders: Vec<(BuilderPolicy, Arc<Roots>)> = Vec::new();
        for set in [flags, own] {
            match set.builder {
                None if set.root.is_some() => return Err(TrustLoadError::RootWithoutBuilder),
                None => {}
                Some(file) => {
                    let roots = Arc::new(Roots::load(set.root)?);
                    builders.push((BuilderPolicy::load(file)?, roots));
                }
            }
        }
        Ok(Trust { signers, builders })
    }
}

/// Why the trust flags cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TrustLoadError {
    #[error(transparent)]
    Signers(#[from] PolicyError),
    #[error(transparent)]
    Builders(#[from] BuilderPolicyError),
    #[error("--trusted-root is given without --trusted-builder: a trusted root verifies provenance, which only a builder policy asks for")]
    RootWithoutBuilder,
}

impl TrustLoadError {
    pub(crate) fn help(&self) -> Option<String> {
        match self {
            TrustLoadError::Signers(e) => e.help(),
            TrustLoadError::Builders(e) => Some(e.help()),
            TrustLoadError::RootWithoutBuilder => Some(
                "add --trusted-builder FILE (see /usr/share/doc/mcp-deploy/formats.md, Builder trust policy), or leave \
                 --trusted-root out"
                    .into(),
            ),
        }
    }
}
