//! `pin-vendor`: write a tarball's `.sha256` sidecar, after the release manifest agrees.

use crate::cli::PinVendorArgs;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::{emit, Format, Style};
use crate::vendored_sdk::{self, Pinned, VendorError};

/// `mcp-deploy pin-vendor`: write TARBALL.sha256, after the manifest (when given) agrees.
/// A manifest that lacks the file or disagrees is a refusal (exit 1) and nothing is written.
pub(crate) fn run(args: &PinVendorArgs, style: &Style) -> Result<Exit, Error> {
    let tarball = &args.tarball;
    match vendored_sdk::pin(tarball, args.manifest.as_deref())? {
        Pinned::Refused { error, manifest } => {
            eprintln!("refused: {error}; no sidecar written");
            // The general advice for a mismatch is to re-pin with this very command, which
            // just refused: say what pin-vendor needs instead.
            let help = match &error {
                VendorError::DigestMismatch { .. } => Some(format!(
                    "the tarball is not the file {} lists: re-download it from the release, \
                     or give the manifest of the release it came from",
                    manifest.display()
                )),
                other => other.help(),
            };
            if let Some(h) = &help {
                eprintln!("help: {h}");
            }
            if style.format == Format::Json {
                let doc = serde_json::json!({"ok": false, "tarball": tarball.display().to_string(),
                    "refused": error.to_string(), "help": help});
                crate::output::emit_json_line(&doc, Exit::CheckFailed);
            }
            Ok(Exit::CheckFailed)
        }
        Pinned::Written {
            sidecar,
            sha256,
            change,
        } => {
            if style.format == Format::Json {
                let doc = serde_json::json!({"ok": true, "sidecar": sidecar.display().to_string(),
                    "sha256": sha256, "change": change});
                crate::output::emit_json_line(&doc, Exit::Success);
            } else {
                emit(&format!(
                    "{}: sha256 {sha256} ({change})\n",
                    sidecar.display()
                ));
            }
            Ok(Exit::Success)
        }
    }
}
