//! The built-in sample deployment: `ROOT/codetools` as a release layout and `ROOT/orchestrata`
//! as a prefix layout, each with a small MCP server (Node.js) that stands in for the real one. It lets the
//! README's first command, the tests and the benchmark run the whole job without a real
//! deployment.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::fsio::IoError;
use crate::usage::UsageError;

/// Why the sample could not be laid out: the directory already holds a deployment, or the
/// filesystem refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SampleError {
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Io(#[from] IoError),
}

/// The commit the sample's codetools release claims to be.
pub(crate) const CODETOOLS_SHA: &str = "c0de7001c0de7001c0de7001c0de7001c0de7001";
/// The commit the sample's orchestrata prefix claims to be.
pub(crate) const ORCHESTRATA_SHA: &str = "0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e";

/// The sample servers: a small Node.js program that answers the MCP handshake over stdio
/// (`initialize`, `tools/list` with one tool), so that a client's health check connects and
/// `verify-identity --handshake` has a real server to talk to. Node is there wherever the
/// client CLI came from npm.
const STAND_IN: &str = include_str!("../../templates/sample/stand-in-server.js");

/// Lay the sample out under `root`, refusing to touch an existing deployment. Returns each
/// server's name, prefix and commit.
pub(crate) fn lay_out(
    root: &Path,
) -> Result<Vec<(&'static str, PathBuf, &'static str)>, SampleError> {
    for name in ["codetools", "orchestrata"] {
        if root.join(name).symlink_metadata().is_ok() {
            return Err(UsageError::new(
                format!("{} already exists", root.join(name).display()),
                "lay the sample out in an empty directory",
            )
            .into());
        }
    }
    let io = |action: &'static str, p: &Path| {
        let p = p.to_path_buf();
        move |e| IoError::new(action, &p, e)
    };
    let ct = root.join("codetools");
    let release = ct.join("releases").join(CODETOOLS_SHA);
    fs::create_dir_all(release.join("bin")).map_err(io("cannot create", &release))?;
    write_file(
        &release.join("VERSION"),
        &format!("{CODETOOLS_SHA}\n"),
        0o644,
    )?;
    write_file(&release.join("bin/codetools"), STAND_IN, 0o755)?;
    let link = |target: &str, at: &Path| symlink(target, at).map_err(io("cannot link", at));
    link(&format!("releases/{CODETOOLS_SHA}"), &ct.join("current"))?;
    fs::create_dir_all(ct.join("bin")).map_err(io("cannot create", &ct))?;
    link("../current/bin/codetools", &ct.join("bin/codetools"))?;
    link("current/VERSION", &ct.join("VERSION"))?;

    let orch = root.join("orchestrata");
    fs::create_dir_all(orch.join("bin")).map_err(io("cannot create", &orch))?;
    write_file(
        &orch.join("VERSION"),
        &format!("{ORCHESTRATA_SHA}\n"),
        0o644,
    )?;
    write_file(&orch.join("bin/orchestrata-mcp"), STAND_IN, 0o755)?;
    Ok(vec![
        ("codetools", ct, CODETOOLS_SHA),
        ("orchestrata", orch, ORCHESTRATA_SHA),
    ])
}

fn write_file(path: &Path, text: &str, mode: u32) -> Result<(), IoError> {
    fs::write(path, text).map_err(|e| IoError::new("cannot write", path, e))?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| IoError::new("cannot set the mode of", path, e))
}
