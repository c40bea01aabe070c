//! A URL split into the parts the evidence names (scheme, authority, path, query,
//! fragment), exactly as written.

/// A URL's parts, as written: compared exactly, so that `example.com.` is not `example.com`,
/// a default port written out is not the same registration, and query and fragment count.
///
/// Hand-written on purpose: the `url` crate parses to the WHATWG normal form (scheme and host
/// lowercased, a default port dropped, the path percent-encoded and `..` resolved), so two
/// URLs the exact comparison tells apart could come out with no part differing, and a
/// registered value that is no URL at all could not be split. These parts only name what
/// differs in the evidence; the verdict is the comparison of the two strings.
#[derive(Debug, PartialEq)]
pub(crate) struct UrlParts {
    pub(crate) scheme: String,
    pub(crate) authority: String,
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    pub(crate) fragment: Option<String>,
}

impl UrlParts {
    pub(crate) fn split(url: &str) -> UrlParts {
        let (rest, fragment) = match url.split_once('#') {
            Some((r, f)) => (r, Some(f.to_string())),
            None => (url, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q.to_string())),
            None => (rest, None),
        };
        let (scheme, after) = rest.split_once("://").unwrap_or(("", rest));
        let end = after.find('/').unwrap_or(after.len());
        UrlParts {
            scheme: scheme.to_string(),
            authority: after[..end].to_string(),
            path: after[end..].to_string(),
            query,
            fragment,
        }
    }
}
