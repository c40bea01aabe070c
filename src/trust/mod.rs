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
