//! `verify-vendor`: check vendored SDK tarballs against their sidecars, the release manifest
//! and the npm lockfile.

use crate::cli::VerifyVendorArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::fsio::IoError;
use crate::vendored_sdk::*;
use std::io::{self, Write};
use std::path::Path;

/// `mcp-deploy verify-vendor`.
pub(crate) fn run(args: &VerifyVendorArgs) -> Result<Exit, Error> {
    let report = verify(&args.dir, args.manifest.as_deref(), args.project.as_deref())?;
    let text = if args.json {
        serde_json::to_string_pretty(&report).expect("a report serializes") + "\n"
    } else {
        report.to_human()
    };
    match io::stdout().lock().write_all(text.as_bytes()) {
        // A reader that went away (`| head`) does not change the verdict.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(IoError::new("cannot write", Path::new("<stdout>"), e).into())
        }
        _ => Ok(Exit::from_checks(report.ok)),
    }
}
