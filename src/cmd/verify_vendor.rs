//! `verify-vendor`: check vendored SDK tarballs against their sidecars, the release manifest
//! and the npm lockfile.

use crate::cli::VerifyVendorArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::vendored_sdk::verify;

/// `mcp-deploy verify-vendor`.
pub(crate) fn run(args: &VerifyVendorArgs, style: &Style) -> Result<Exit, Error> {
    let report = verify(&args.dir, args.manifest.as_deref(), args.project.as_deref())?;
    let exit = Exit::from_checks(report.ok);
    crate::output::vendor::print(&report, style, exit);
    Ok(exit)
}
