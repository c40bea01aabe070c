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
    let mut file = io::BufReader::new(fsio::open_regular(path)?);
    let gzip = io::BufRead::fill_buf(&mut file)?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn Read> = if gzip {
        Box::new(flate2::bufread::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let Some(bytes) = find_package_json(reader.take(MAX_SCANNED))? else {
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
}
