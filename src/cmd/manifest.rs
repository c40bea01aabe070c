//! `manifest create|verify`: write or check a release's `MANIFEST.sha256`.

use crate::cli::{ManifestArgs, ManifestCommand, ManifestCreateArgs, ManifestVerifyArgs};
use crate::content::manifest::*;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::content_signature;
use crate::output::Style;
use crate::trust::{Trust, TrustFlags};

/// `mcp-deploy manifest create|verify`.
pub(crate) fn run(args: &ManifestArgs, style: &Style) -> Result<Exit, Error> {
    match &args.command {
        ManifestCommand::Create(a) => run_create(a, style),
        ManifestCommand::Verify(a) => run_verify(a, style),
    }
}

fn run_create(args: &ManifestCreateArgs, style: &Style) -> Result<Exit, Error> {
    let jobs = args.release.jobs.unwrap_or_else(default_jobs);
    let n = create_manifest(&args.release.dir, jobs)?;
    crate::output::content::created(&args.release.dir.join(MANIFEST_NAME), n, style);
    Ok(Exit::Success)
}

/// The release's files against its manifest; with trust flags, the manifest's signature and
/// provenance over the same bytes (read once), a trust file inside the release vouching for
/// nothing.
fn run_verify(args: &ManifestVerifyArgs, style: &Style) -> Result<Exit, Error> {
    let jobs = args.release.jobs.unwrap_or_else(default_jobs);
    let trust = Trust::load(super::trust_flags(&args.trust), TrustFlags::default())?;
    let dir = &args.release.dir;
    let bytes = read_manifest(dir)?;
    let report = verify_release_against(dir, &bytes, jobs)?;
    let proofs = match trust.is_empty() {
        true => Vec::new(),
        false => content_signature::proofs(&trust, dir, dir, &Ok(bytes), false),
    };
    let exit = Exit::from_checks(report.ok() && proofs.iter().all(|c| c.ok));
    crate::output::content::print(&report, &proofs, style, exit);
    Ok(exit)
}
