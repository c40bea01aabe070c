//! The package an npm tarball holds: `name` and `version` of its `package.json`.
//!
//! npm takes a tarball's `package.json` from its top-level directory, whatever that is called
//! (`package/` when `npm pack` made it), so the first entry `<dir>/package.json` is the one.
//! The `tar` crate parses each 512-byte header (name and ustar `prefix`, size, type) and the
//! records of a PAX header; GNU long names are a NUL-terminated body. The loop over the
//! headers is ours, not the crate's `Archive::entries`, for two reasons:
//!
//! - bounds: `entries` reads a PAX header or a GNU long name whole into memory, however large
//!   its size field says it is (only the 512 MiB scan bound would stop it); here each is read
//!   only when it fits in `MAX_MEMBER`, like `package.json` itself, and the decompressed bytes
//!   looked through stop at `MAX_SCANNED` (a gzip bomb stops there);
//! - behaviour: `entries` refuses a header whose checksum is wrong and a member with two long
//!   names; this reader never did (its tests' archives carry no checksums), and a change of
//!   which tarballs get a package name belongs in a commit of its own.
//!
//! Where the crate reads a header differently from the hand-written reader it replaced (the
//! `prefix` only under magic `ustar\0` and version `00`, a size up to its first NUL or in
//! base-256), it reads it as npm's node-tar does: the name found is the one npm installs.

use std::io::{self, Read};
use std::path::Path;

use crate::fsio;

/// Decompressed bytes looked through for `package.json` before giving up.
const MAX_SCANNED: u64 = 512 << 20;
/// The largest `package.json` (or PAX/long-name record) read.
const MAX_MEMBER: u64 = 1 << 20;

/// `(name, version)` of the package in the tarball at `path`; `Ok(None)` when it is not an
/// npm tarball (not gzip or tar, no `package.json`, no `name`), which leaves the package
/// unnamed rather than failing: a vendored artifact need not be an npm package.
pub(crate) fn package_of(path: &Path) -> io::Result<Option<(String, Option<String>)>> {
    package_in(io::BufReader::new(fsio::open_regular(path)?), MAX_SCANNED)
}

/// [`package_of`] over the bytes of `file`, looking through at most `max_scanned`
/// decompressed bytes (a parameter so that a test can prove the bound without 512 MiB).
fn package_in(
    mut file: impl io::BufRead + 'static,
    max_scanned: u64,
) -> io::Result<Option<(String, Option<String>)>> {
    let gzip = file.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn Read> = if gzip {
        Box::new(flate2::bufread::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let Some(bytes) = find_package_json(reader.take(max_scanned))? else {
        return Ok(None);
    };
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Ok(None);
    };
    let name = doc.get("name").and_then(|n| n.as_str()).map(str::to_string);
    let version = doc
        .get("version")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    Ok(name.map(|n| (n, version)))
}

fn read_member(r: &mut impl Read, size: u64) -> io::Result<Option<Vec<u8>>> {
    if size > MAX_MEMBER {
        skip(r, padded(size))?;
        return Ok(None);
    }
    let mut buf = vec![0u8; padded(size) as usize];
    r.read_exact(&mut buf)?;
    buf.truncate(size as usize);
    Ok(Some(buf))
}

fn padded(size: u64) -> u64 {
    size.div_ceil(512) * 512
}

fn skip(r: &mut impl Read, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), &mut io::sink())?;
    if copied < n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

/// Whether `path` is `<one dir>/package.json`.
fn is_top_package_json(path: &[u8]) -> bool {
    let path = path.strip_prefix(b"./").unwrap_or(path);
    let mut parts = path.split(|&b| b == b'/').filter(|p| !p.is_empty());
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(_), Some(b"package.json"), None)
    )
}

fn find_package_json(mut r: impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut header = tar::Header::new_old();
    let mut long_name: Option<Vec<u8>> = None;
    loop {
        match r.read_exact(header.as_mut_bytes()) {
            Ok(()) => {}
            // Not a tar, or one cut short: no package found.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => return Ok(None),
            Err(e) => return Err(e),
        }
        if header.as_bytes().iter().all(|&b| b == 0) {
            return Ok(None);
        }
        // A size that is not a number: not a tar.
        let Ok(size) = header.entry_size() else {
            return Ok(None);
        };
        let kind = header.entry_type();
        // A PAX extended header: its `path` applies to the next entry.
        if kind.is_pax_local_extensions() {
            if let Some(body) = read_member(&mut r, size)? {
                long_name = pax_path(&body);
            }
            continue;
        }
        if kind.is_gnu_longname() {
            long_name = read_member(&mut r, size)?.map(|b| cstr(&b).to_vec());
            continue;
        }
        let name = long_name
            .take()
            .unwrap_or_else(|| header.path_bytes().into_owned());
        if kind.is_file() && is_top_package_json(&name) {
            return read_member(&mut r, size);
        }
        skip(&mut r, padded(size))?;
    }
}

/// A GNU long name: the body up to its NUL.
fn cstr(body: &[u8]) -> &[u8] {
    body.split(|&b| b == 0).next().unwrap_or(body)
}

/// The first `path` record of a PAX header; none when a record before it is malformed.
fn pax_path(body: &[u8]) -> Option<Vec<u8>> {
    tar::PaxExtensions::new(body)
        .map_while(Result::ok)
        .find(|record| record.key_bytes() == b"path")
        .map(|record| record.value_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, size: usize, flag: u8) -> Vec<u8> {
        let mut h = vec![0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        let s = format!("{size:011o}\0");
        h[124..136].copy_from_slice(s.as_bytes());
        h[156] = flag;
        h[257..263].copy_from_slice(b"ustar\0");
        h
    }

    fn member(name: &str, body: &[u8], flag: u8) -> Vec<u8> {
        let mut v = header(name, body.len(), flag);
        v.extend_from_slice(body);
        v.resize(512 + padded(body.len() as u64) as usize, 0);
        v
    }

    #[test]
    fn finds_the_top_level_package_json_through_pax_names() {
        let mut tar = member("package/README.md", b"hi", b'0');
        tar.extend(member(
            "package/sub/package.json",
            br#"{"name":"other"}"#,
            b'0',
        ));
        let pax = b"25 path=pkg/package.json\n";
        tar.extend(member("PaxHeader", &pax[..], b'x'));
        tar.extend(member(
            "ignored-name",
            br#"{"name":"@acme/consumer","version":"0.4.0"}"#,
            b'0',
        ));
        tar.extend(vec![0u8; 1024]);
        let got = find_package_json(&tar[..]).unwrap().unwrap();
        assert_eq!(got, br#"{"name":"@acme/consumer","version":"0.4.0"}"#);
        assert_eq!(find_package_json(&b"not a tarball"[..]).unwrap(), None);
        assert!(is_top_package_json(b"./package/package.json"));
        assert!(!is_top_package_json(b"package.json"));
    }

    /// `header` as a POSIX ustar writer (npm's node-tar, Python's tarfile) makes it: magic
    /// `ustar\0`, version `00`, and the file name split into `prefix` and `name`.
    fn ustar_member(prefix: &str, name: &str, body: &[u8]) -> Vec<u8> {
        let mut v = member(name, body, b'0');
        v[263..265].copy_from_slice(b"00");
        v[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
        v
    }

    fn package(json: &str) -> Option<(String, Option<String>)> {
        let doc: serde_json::Value = serde_json::from_str(json).unwrap();
        Some((
            doc["name"].as_str().unwrap().to_string(),
            doc["version"].as_str().map(str::to_string),
        ))
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn end(mut tar: Vec<u8>) -> Vec<u8> {
        tar.extend(vec![0u8; 1024]);
        tar
    }

    const ACME: &str = r#"{"name":"@acme/consumer","version":"0.4.0"}"#;

    #[test]
    fn a_pax_path_record_names_package_json() {
        // Other records before `path`, as GNU tar and node-tar write them; the header's own
        // name is a truncated one that would not match.
        let records = b"30 mtime=1700000000.123456789\n29 path=package/package.json\n";
        let mut tar = member("PaxHeaders/package.json", records, b'x');
        tar.extend(member("package/x/package.json", ACME.as_bytes(), b'0'));
        let tar = end(tar);
        assert_eq!(
            package_in(io::Cursor::new(tar.clone()), MAX_SCANNED).unwrap(),
            package(ACME)
        );
        // The record renames the next entry, and that entry only.
        let mut two = member("PaxHeader", b"26 path=package/README.md\n", b'x');
        two.extend(member("package/package.json", ACME.as_bytes(), b'0'));
        two.extend(member("package/x/package.json", ACME.as_bytes(), b'0'));
        assert_eq!(find_package_json(&end(two)[..]).unwrap(), None);
        // Gzipped, as npm packs it.
        assert_eq!(
            package_in(io::Cursor::new(gzip(&tar)), MAX_SCANNED).unwrap(),
            package(ACME)
        );
    }

    #[test]
    fn a_gnu_long_name_names_package_json() {
        let long = format!("{}/package.json", "d".repeat(150));
        let mut name = long.clone().into_bytes();
        name.push(0);
        let mut tar = member("././@LongLink", &name, b'L');
        tar.extend(member(&long[..100], ACME.as_bytes(), b'0'));
        for h in [0, tar.len() - 1024] {
            // GNU tar's magic.
            tar[h + 257..h + 265].copy_from_slice(b"ustar  \0");
        }
        let tar = end(tar);
        assert_eq!(
            find_package_json(&tar[..]).unwrap().unwrap(),
            ACME.as_bytes()
        );
        // A long name with two directories is not the top-level package.json.
        let deep = format!("{}/lib/package.json\0", "d".repeat(150));
        let mut tar = member("././@LongLink", deep.as_bytes(), b'L');
        tar.extend(member("package/package.jso", ACME.as_bytes(), b'0'));
        assert_eq!(find_package_json(&end(tar)[..]).unwrap(), None);
    }

    #[test]
    fn a_ustar_prefix_is_the_leading_directory() {
        let tar = end(ustar_member("package", "package.json", ACME.as_bytes()));
        assert_eq!(
            package_in(io::Cursor::new(tar), MAX_SCANNED).unwrap(),
            package(ACME)
        );
        // The prefix counts as a directory: `a/b` + `package.json` is two deep.
        let tar = end(ustar_member("a/b", "package.json", ACME.as_bytes()));
        assert_eq!(find_package_json(&tar[..]).unwrap(), None);
    }

    #[test]
    fn the_first_top_level_package_json_is_the_one() {
        let mut tar = member("package/package.json", ACME.as_bytes(), b'0');
        tar.extend(member("other/package.json", br#"{"name":"other"}"#, b'0'));
        assert_eq!(
            package_in(io::Cursor::new(end(tar)), MAX_SCANNED).unwrap(),
            package(ACME)
        );
        // Not JSON: no package, and no looking further.
        let mut tar = member("package/package.json", b"{not json", b'0');
        tar.extend(member("other/package.json", ACME.as_bytes(), b'0'));
        assert_eq!(
            package_in(io::Cursor::new(end(tar)), MAX_SCANNED).unwrap(),
            None
        );
        // A directory entry of that name is not the file.
        let mut tar = member("package/package.json/", b"", b'5');
        tar.extend(member("package/package.json", ACME.as_bytes(), b'0'));
        assert_eq!(
            find_package_json(&end(tar)[..]).unwrap().unwrap(),
            ACME.as_bytes()
        );
    }

    /// Counts the decompressed bytes the reader was handed.
    struct Counted<R>(R, std::rc::Rc<std::cell::Cell<u64>>);
    impl<R: Read> Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1.set(self.1.get() + n as u64);
            Ok(n)
        }
    }

    #[test]
    fn a_gzip_bomb_is_read_up_to_the_bound_only() {
        const BOUND: u64 = 64 << 10;
        // Members without end, each skipped. When the bound falls between two of them the
        // scan ends as at the end of an archive, no package; inside one it ends as a cut
        // archive does, with an error ("cannot read"): either way no more than the bound.
        for (body, ends) in [(512, None), (1000, Some(io::ErrorKind::UnexpectedEof))] {
            let mut many = Vec::new();
            while many.len() < 1 << 20 {
                many.extend(member("package/README.md", &vec![b'x'; body], b'0'));
            }
            let many = gzip(&many);
            let got = package_in(io::Cursor::new(many.clone()), BOUND);
            assert_eq!(got.map_err(|e| e.kind()), ends.map_or(Ok(None), Err));
            let seen = std::rc::Rc::new(std::cell::Cell::new(0));
            let decoded = Counted(
                flate2::bufread::MultiGzDecoder::new(&many[..]),
                seen.clone(),
            );
            let got = find_package_json(decoded.take(BOUND));
            assert_eq!(got.map_err(|e| e.kind()), ends.map_or(Ok(None), Err));
            assert_eq!(seen.get(), BOUND);
        }
        // One member that says it is 1 GiB: skipping it runs into the bound, which reads
        // as a cut-short archive (an error, "cannot read"), not as 1 GiB decompressed.
        let mut huge = header("package/big.bin", 1 << 30, b'0');
        huge.resize(1 << 20, 0);
        let err = package_in(io::Cursor::new(gzip(&huge)), BOUND).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn a_truncated_archive_is_no_package_between_entries_and_an_error_inside_one() {
        let mut tar = member("package/README.md", &[b'x'; 600], b'0');
        let readme_end = tar.len();
        tar.extend(member("package/package.json", ACME.as_bytes(), b'0'));
        let tar = end(tar);
        // Cut in a header, or at one: not a (whole) tar, no package.
        for cut in [0, 100, readme_end, readme_end + 300] {
            assert_eq!(
                find_package_json(&tar[..cut]).unwrap(),
                None,
                "cut at {cut}"
            );
        }
        // Cut inside the member skipped or inside package.json itself: a read error.
        for cut in [600, readme_end + 512 + 10] {
            let err = find_package_json(&tar[..cut]).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}");
        }
        // A cut gzip stream: also no package, never a panic.
        let gz = gzip(&tar);
        for cut in [5, 20, gz.len() / 2, gz.len() - 4] {
            let _ = package_in(io::Cursor::new(gz[..cut].to_vec()), MAX_SCANNED);
        }
    }

    #[test]
    fn a_package_json_bigger_than_max_member_is_no_package() {
        let mut big = br#"{"name":"@acme/consumer","pad":""#.to_vec();
        big.resize(MAX_MEMBER as usize - 2, b' ');
        big.extend(b"\"}");
        let fits = end(member("package/package.json", &big, b'0'));
        assert_eq!(
            package_in(io::Cursor::new(fits), MAX_SCANNED).unwrap(),
            Some(("@acme/consumer".to_string(), None))
        );
        big.insert(big.len() - 2, b' ');
        let over = end(member("package/package.json", &big, b'0'));
        assert_eq!(find_package_json(&over[..]).unwrap(), None);
        assert_eq!(
            package_in(io::Cursor::new(over), MAX_SCANNED).unwrap(),
            None
        );
        // The same bound on a PAX record: one too big is passed over, not read.
        let mut records = b"29 path=package/package.json\n".to_vec();
        records.resize(MAX_MEMBER as usize + 1, b'\n');
        let mut tar = member("PaxHeader", &records, b'x');
        tar.extend(member("package/package.json", ACME.as_bytes(), b'0'));
        assert_eq!(
            find_package_json(&end(tar)[..]).unwrap().unwrap(),
            ACME.as_bytes()
        );
    }

    /// Where the hand-written reader and npm's node-tar parsed a header differently, the tar
    /// crate parses it as node-tar does (its `header.js`), so the name read is the one npm
    /// installs under. Found by running both readers over 200,000 mutated archives.
    #[test]
    fn headers_are_parsed_as_npm_parses_them() {
        // The prefix is a POSIX ustar field (magic `ustar\0`, version `00`): in a GNU header
        // those bytes are times, in one without the version they are not read.
        for magic in [&b"ustar  \0"[..], b"ustar\0\0\0"] {
            let mut tar = ustar_member("package", "package.json", ACME.as_bytes());
            tar[257..265].copy_from_slice(magic);
            assert_eq!(find_package_json(&end(tar)[..]).unwrap(), None);
        }
        // A size ends at its first NUL (was: not a number, so not a tar).
        let mut tar = member("package/package.json", ACME.as_bytes(), b'0');
        let mut size = format!("{:o}\0 junk", ACME.len()).into_bytes();
        size.resize(12, 0);
        tar[124..136].copy_from_slice(&size);
        assert_eq!(
            find_package_json(&end(tar)[..]).unwrap().unwrap(),
            ACME.as_bytes()
        );
        // GNU's base-256 size, for members of 8 GiB and more (was: not a number).
        let mut tar = member("package/README.md", b"hi", b'0');
        tar[124..136].copy_from_slice(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        tar.extend(member("package/package.json", ACME.as_bytes(), b'0'));
        assert_eq!(
            find_package_json(&end(tar)[..]).unwrap().unwrap(),
            ACME.as_bytes()
        );
    }
}
