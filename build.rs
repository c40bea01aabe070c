//! Records the commit the binary is built from, for `mcp-deploy --version` (src/version.rs).

#[path = "src/version.rs"]
#[allow(dead_code)]
mod version;

use std::path::Path;
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&dir);
    println!(
        "cargo:rustc-env=MCP_DEPLOY_GIT={}",
        version::describe_or_unknown(dir)
    );
    // Rebuild when HEAD moves (a checkout, a commit on the branch) or the index changes (an
    // add, which is when dirtiness is most often decided). In a worktree .git is a file, so
    // ask git where these live. Without git, nothing to watch but this script.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/version.rs");
    for p in ["HEAD", "index", "packed-refs"] {
        if let Some(path) = git_path(dir, &["rev-parse", "--git-path", p]) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    if let Some(reference) = git_out(dir, &["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git_path(dir, &["rev-parse", "--git-path", &reference]) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

fn git_out(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

fn git_path(dir: &Path, args: &[&str]) -> Option<std::path::PathBuf> {
    let p = Path::new(&git_out(dir, args)?).to_path_buf();
    let p = if p.is_absolute() { p } else { dir.join(p) };
    p.exists().then_some(p)
}
