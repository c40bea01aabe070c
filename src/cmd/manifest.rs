//! `manifest create|verify`: write or check a release's `MANIFEST.sha256`.

use crate::cli::{ManifestArgs, ManifestCommand, ManifestCreateArgs, ManifestVerifyArgs};
use crate::content::manifest::*;
use crate::content::sumfile::display_path;
use crate::error::Error;
use crate::exit::Exit;
use crate::fsio::IoError;
use std::io::{self, Write};
use std::path::Path;

/// `mcp-deploy manifest create|verify`.
pub(crate) fn run(args: &ManifestArgs) -> Result<Exit, Error> {
    match &args.command {
        ManifestCommand::Create(a) => run_create(a),
        ManifestCommand::Verify(a) => run_verify(a),
    }
}

fn run_create(args: &ManifestCreateArgs) -> Result<Exit, Error> {
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let n = create_manifest(&args.dir, jobs)?;
    if args.json {
        let doc = serde_json::json!({
            "ok": true,
            "manifest": args.dir.join(MANIFEST_NAME).display().to_string(),
            "files": n,
        });
        crate::output::emit(&format!("{doc}\n"));
        return Ok(Exit::Success);
    }
    let s = if n == 1 { "" } else { "s" };
    crate::output::emit(&format!(
        "wrote {}: {n} file{s}\n",
        args.dir.join(MANIFEST_NAME).display()
    ));
    Ok(Exit::Success)
}

fn run_verify(args: &ManifestVerifyArgs) -> Result<Exit, Error> {
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let report = verify_release_with(&args.dir, jobs)?;
    let mut out = io::stdout().lock();
    let written = if args.json {
        writeln!(out, "{}", report.to_json())
    } else {
        write_human(&mut out, &report)
    };
    match written {
        // A reader that went away (`| head`) does not change the verdict.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(IoError::new("cannot write", Path::new("<stdout>"), e).into())
        }
        _ => Ok(Exit::from_checks(report.ok())),
    }
}

fn write_human(out: &mut impl Write, r: &ContentReport) -> io::Result<()> {
    if r.ok() {
        return writeln!(out, "ok: {}: {}", r.dir.display(), r.summary());
    }
    writeln!(out, "FAILED: {}: {}", r.dir.display(), r.summary())?;
    for p in &r.modified {
        writeln!(out, "  modified: {}", display_path(p))?;
    }
    for p in &r.missing {
        writeln!(out, "  missing: {}", display_path(p))?;
    }
    for p in &r.added {
        writeln!(out, "  added: {}", display_path(p))?;
    }
    for l in &r.escaping_symlinks {
        writeln!(
            out,
            "  escaping symlink: {}",
            list_links(std::slice::from_ref(l))
        )?;
    }
    for p in &r.special_files {
        writeln!(out, "  special file: {}", display_path(p))?;
    }
    Ok(())
}
