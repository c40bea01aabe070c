//! The package an npm tarball holds: `name` and `version` of its `package.json`.
//!
//! npm takes a tarball's `package.json` from its top-level directory, whatever that is called
//! (`package/` when `npm pack` made it), so the first entry `<dir>/package.json` is the one.
//! The reader knows just enough tar for that: 512-byte ustar headers with their `prefix`
//! field, PAX `path` records and GNU long names. Everything is bounded: the decompressed
//! bytes it will look through (a gzip bomb stops there) and `package.json` itself.

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

fn octal(field: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(field).ok()?;
    let text = text.trim_matches(|c: char| c == '\0' || c == ' ');
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(text, 8).ok()
}

fn cstr(field: &[u8]) -> &[u8] {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    &field[..end]
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
    let mut header = [0u8; 512];
    let mut long_name: Option<Vec<u8>> = None;
    loop {
        match r.read_exact(&mut header) {
            Ok(()) => {}
            // Not a tar, or one cut short: no package found.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => return Ok(None),
            Err(e) => return Err(e),
        }
        if header.iter().all(|&b| b == 0) {
            return Ok(None);
        }
        let Some(size) = octal(&header[124..136]) else {
            return Ok(None);
        };
        let flag = header[156];
        match flag {
            // PAX extended header: `path=` applies to the next entry.
            b'x' => {
                let Some(body) = read_member(&mut r, size)? else {
                    continue;
                };
                long_name = pax_path(&body);
                continue;
            }
            // GNU long name.
            b'L' => {
                long_name = read_member(&mut r, size)?.map(|b| cstr(&b).to_vec());
                continue;
            }
            _ => {}
        }
        let name = long_name.take().unwrap_or_else(|| {
            let mut n = Vec::new();
            let prefix = cstr(&header[345..500]);
            if &header[257..262] == b"ustar" && !prefix.is_empty() {
                n.extend_from_slice(prefix);
                n.push(b'/');
            }
            n.extend_from_slice(cstr(&header[0..100]));
            n
        });
        if (flag == b'0' || flag == 0) && is_top_package_json(&name) {
            return read_member(&mut r, size);
        }
        skip(&mut r, padded(size))?;
    }
}

/// The `path` record of a PAX header: lines `<len> path=<value>\n`.
fn pax_path(body: &[u8]) -> Option<Vec<u8>> {
    let mut rest = body;
    while !rest.is_empty() {
        let space = rest.iter().position(|&b| b == b' ')?;
        let len: usize = std::str::from_utf8(&rest[..space]).ok()?.parse().ok()?;
        if len <= space || len > rest.len() {
            return None;
        }
        let record = &rest[space + 1..len];
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Some(v) = record.strip_prefix(b"path=") {
            return Some(v.to_vec());
        }
        rest = &rest[len..];
    }
    None
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
}
