//! One artifact of the vendored-SDK directory: which file names are package archives, the two
//! digests taken through one open handle, and what the walk and checks established about it.
//! Shared by the walk (`mod.rs`) and the npm project checks (`npm.rs`), so that neither
//! imports the other.

use std::io::{self, Seek};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::content::digest::{self, Algorithm};
use crate::fsio::{self, IoError};

/// File names that are package archives, and so must have a sidecar.
const ARCHIVE_SUFFIXES: [&str; 7] = [
    ".tgz", ".tar.gz", ".tar", ".tar.xz", ".tar.bz2", ".tar.zst", ".zip",
];

/// The two digests of one artifact, from one open handle.
#[derive(Debug, Clone)]
pub(super) struct Hashes {
    pub(super) sha256: String,
    pub(super) sha512: Vec<u8>,
    pub(super) len: u64,
}

pub(super) fn hash_artifact(path: &Path, buf: &mut [u8]) -> Result<Hashes, IoError> {
    let read = |buf: &mut [u8]| -> io::Result<Hashes> {
        let mut f = fsio::open_regular(path)?;
        let sha256 = digest::digest_reader(Algorithm::Sha256, &mut f, buf)?;
        let len = f.stream_position()?;
        f.rewind()?;
        let sha512 = digest::digest_reader(Algorithm::Sha512, &mut f, buf)?;
        Ok(Hashes {
            sha256: digest::to_hex(&sha256),
            sha512,
            len,
        })
    };
    read(buf).map_err(|e| IoError::new("cannot read", path, e))
}

pub(super) fn is_archive(name: &Path) -> bool {
    let bytes = name.as_os_str().as_bytes();
    ARCHIVE_SUFFIXES
        .iter()
        .any(|s| bytes.len() > s.len() && bytes.ends_with(s.as_bytes()))
}

/// What one walk of DIR and its artifacts' checks established.
pub(super) struct Artifact {
    pub(super) hashes: Option<Hashes>,
    pub(super) verified: bool,
    /// The npm package it holds: its own `package.json`'s `name`, else the release
    /// manifest's. `None` for an archive that is no npm package.
    pub(super) package: Option<String>,
}
