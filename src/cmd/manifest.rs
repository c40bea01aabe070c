//! `manifest create|verify`: write or check a release's `MANIFEST.sha256`.

use crate::cli::{ManifestArgs, ManifestCommand, ManifestCreateArgs, ManifestVerifyArgs};
use crate::content::manifest::*;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;

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

fn run_verify(args: &ManifestVerifyArgs, style: &Style) -> Result<Exit, Error> {
    let jobs = args.release.jobs.unwrap_or_else(default_jobs);
    let report = verify_release_with(&args.release.dir, jobs)?;
    let exit = Exit::from_checks(report.ok());
    crate::output::content::print(&report, style, exit);
    Ok(exit)
}
