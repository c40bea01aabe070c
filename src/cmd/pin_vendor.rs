//! `pin-vendor`: write a tarball's `.sha256` sidecar, after the release manifest agrees
//! ([`crate::vendored_sdk::pin`]); its outcome to `output`.

use crate::cli::PinVendorArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;
use crate::vendored_sdk;

/// `mcp-deploy pin-vendor`: write TARBALL.sha256, after the manifest (when given) agrees.
/// A manifest that lacks the file or disagrees is a refusal (exit 1) and nothing is written.
pub(crate) fn run(args: &PinVendorArgs, style: &Style) -> Result<Exit, Error> {
    let pinned = vendored_sdk::pin(&args.tarball, args.manifest.as_deref())?;
    Ok(crate::output::vendor::pinned(&args.tarball, &pinned, style))
}
