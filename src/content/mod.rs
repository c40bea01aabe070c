//! What a release contains: digests (sha256/sha512 of a file through one handle), the
//! `sha256sum` format, and the content manifest of a release tree.

pub(crate) mod digest;
pub(crate) mod manifest;
pub(crate) mod sumfile;
