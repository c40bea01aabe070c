//! The trust policy: an OpenSSH `allowed_signers` file (ssh-keygen(1), ALLOWED SIGNERS), the
//! format git uses for SSH commit signing. One signer a line:
//!
//! ```text
//! principals [options] keytype base64-key [comment]
//! ```
//!
//! - `principals`: a comma-separated pattern list (`"..."` quoted when it holds blanks). It is
//!   kept as written and shown as the signer's name; mcp-deploy asks for no identity (`-I`),
//!   so any line whose key made the signature can vouch for it.
//! - options, comma-separated, names case-insensitive, values in double quotes as OpenSSH
//!   requires: `namespaces="..."` (a pattern list the namespace must match), `valid-after="..."`,
//!   `valid-before="..."` (`YYYYMMDD[HHMM[SS]]` followed by `Z`). OpenSSH reads a time without
//!   `Z` as the host's local time; mcp-deploy refuses it rather than guess a time zone.
//!   `cert-authority` (a CA that certifies signers) is refused as not supported, naming the line.
//! - `#` comment lines and blank lines are skipped.
//!
//! Any other line — an unknown option, a key that does not parse, a `valid-before` not after
//! `valid-after` — refuses the whole file, naming `file:line`, as `ssh-keygen -Y verify` does:
//! a trust policy that cannot be read in full is not a policy to check against.

use std::path::{Path, PathBuf};

use ssh_key::{Algorithm, PublicKey};

use crate::fsio::{self, IoError};

/// Why a trust policy cannot be used (exit 2: the check could not run).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PolicyError {
    #[error("trust policy: {0}")]
    Io(IoError),
    #[error("trust policy {}:{line}: {why}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        why: LineFault,
    },
    #[error("trust policy {}:{line}: cert-authority is not supported (mcp-deploy checks signatures by plain keys, not certificates)", path.display())]
    CertAuthority { path: PathBuf, line: usize },
    #[error("trust policy {} lists no signer", path.display())]
    Empty { path: PathBuf },
    #[error("trust policy {}: {why}: whoever can write it chooses which builders are trusted", path.display())]
    Writable { path: PathBuf, why: String },
}

/// What is wrong with one line of a trust policy; the policy's own text is shown quoted and cut
/// at 64 characters ([`shown`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LineFault {
    #[error(
        "the file starts with a byte-order mark (U+FEFF), which ssh-keygen reads as part of the \
         first principal; save it without one"
    )]
    ByteOrderMark,
    #[error("a quoted field has no closing quote")]
    UnclosedField,
    #[error("text right after a closing quote")]
    TextAfterQuote,
    #[error("a quoted value has no closing quote")]
    UnclosedQuote,
    #[error("empty principals")]
    EmptyPrincipals,
    #[error("only principals ({}); a key must follow", shown(.principals))]
    OnlyPrincipals { principals: String },
    #[error("{} is neither a key type nor options, and no key follows", shown(.token))]
    NeitherKeyNorOptions { token: String },
    #[error("the key {} has no base64 data", shown(.kind))]
    NoKeyData { kind: String },
    #[error(
        "a certificate ({}) as a signer's key is not supported: list the plain public key",
        shown(.kind)
    )]
    Certificate { kind: String },
    #[error("the key ({}) does not parse: {why}", shown(.kind))]
    BadKey { kind: String, why: ssh_key::Error },
    #[error("an empty option")]
    EmptyOption,
    #[error("the value of {} must be in double quotes", shown(.name))]
    UnquotedValue { name: String },
    #[error("the value of {} has no closing quote", shown(.name))]
    UnclosedValue { name: String },
    #[error("{name} needs a value in double quotes: {name}=\"...\"")]
    NeedsValue { name: String },
    #[error("unsupported option {}", shown(.name))]
    UnsupportedOption { name: String },
    #[error("options must be separated by commas near {}", shown(.near))]
    NoComma { near: String },
    #[error(
        "the time {} has no trailing Z: OpenSSH reads it in the host's local time zone, which \
         mcp-deploy does not guess; write it in UTC with a Z, e.g. 20270101Z",
        shown(.text)
    )]
    NoZone { text: String },
    #[error(
        "the time {} is not YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS followed by Z",
        shown(.text)
    )]
    TimeForm { text: String },
    #[error("the time {} is not a valid UTC date and time", shown(.text))]
    InvalidTime { text: String },
    #[error("valid-before is not after valid-after: no time is valid")]
    EmptyWindow,
}

impl PolicyError {
    pub(crate) fn help(&self) -> Option<String> {
        Some(match self {
            PolicyError::Io(e) => match e.help() {
                Some(h) => h,
                None => format!(
                    "check the path {} given as the trust policy (--trusted-signers or the \
                     server's trusted_signers)",
                    e.path.display()
                ),
            },
            PolicyError::Malformed { .. } => "fix the line: `principals [options] keytype \
                 base64-key [comment]`, options namespaces=\"...\", valid-after=\"YYYYMMDD[HHMM[SS]]Z\", \
                 valid-before=\"...\" (see /usr/share/doc/mcp-deploy/formats.md)"
                .into(),
            PolicyError::CertAuthority { .. } => "list each builder's own public key instead of \
                 the certificate authority's"
                .into(),
            PolicyError::Writable { .. } => "keep the policy in a directory only root (or the \
                 user running mcp-deploy) can write, owned by root, mode 0644 or stricter: \
                 `chown root: FILE && chmod go-w FILE`"
                .into(),
            PolicyError::Empty { .. } => "add a line per builder: `builder@example.org \
                 namespaces=\"mcp-deploy\" ssh-ed25519 AAAA...` (see /usr/share/doc/mcp-deploy/operations.md)"
                .into(),
        })
    }
}

/// One signer: a line of the file.
#[derive(Debug, Clone)]
pub(crate) struct Signer {
    /// 1-based line number, for the evidence.
    pub(crate) line: usize,
    /// The principals field as written.
    pub(crate) principals: String,
    /// `namespaces="..."`: the pattern list; `None` allows every namespace.
    pub(crate) namespaces: Option<String>,
    /// Seconds since the epoch (UTC).
    pub(crate) valid_after: Option<u64>,
    pub(crate) valid_before: Option<u64>,
    pub(crate) key: PublicKey,
}

/// Whether a signer's line allows a signature now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    Allowed,
    /// The namespace does not match the line's `namespaces`.
    NamespaceNotAllowed(String),
    NotYetValid(u64),
    Expired(u64),
}

impl Signer {
    /// Does this line allow a signature for `namespace` at `now` (seconds since the epoch)?
    /// OpenSSH's order and bounds: `now < valid-after` is not yet valid, `now > valid-before`
    /// expired (both ends inclusive).
    pub(crate) fn standing(&self, namespace: &str, now: u64) -> Standing {
        if let Some(list) = &self.namespaces {
            if !pattern_list_matches(namespace, list) {
                return Standing::NamespaceNotAllowed(list.clone());
            }
        }
        if let Some(after) = self.valid_after {
            if now < after {
                return Standing::NotYetValid(after);
            }
        }
        if let Some(before) = self.valid_before {
            if now > before {
                return Standing::Expired(before);
            }
        }
        Standing::Allowed
    }
}

/// A parsed trust policy.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    pub(crate) path: PathBuf,
    pub(crate) signers: Vec<Signer>,
}

impl Policy {
    /// Read and parse the file at `path` (bounded; a FIFO or device is refused).
    pub(crate) fn load(path: &Path) -> Result<Policy, PolicyError> {
        let text = fsio::read_input_string(path, "trust policy", fsio::limits::ALLOWED_SIGNERS)
            .map_err(PolicyError::Io)?;
        only_trusted_can_write(path)?;
        Policy::parse(path, &text)
    }

    pub(crate) fn parse(path: &Path, text: &str) -> Result<Policy, PolicyError> {
        // ssh-keygen reads a byte-order mark as part of the first principal (so `-Y verify -I
        // <principal>` refuses that line, while mcp-deploy, which asks for no principal, would
        // take it): refused, saying so, rather than a verdict that differs from ssh-keygen's.
        if text.starts_with('\u{feff}') {
            return Err(PolicyError::Malformed {
                path: path.to_path_buf(),
                line: 1,
                why: LineFault::ByteOrderMark,
            });
        }
        // Lines may end in CRLF: Rust's `lines` drops the `\r`, as ssh-keygen accepts it
        // (checked with ssh-keygen in tests/it/signatures.rs).
        let mut signers = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let malformed = |why: LineFault| PolicyError::Malformed {
                path: path.to_path_buf(),
                line,
                why,
            };
            let rest = raw.trim_start_matches([' ', '\t']);
            if rest.is_empty() || rest.starts_with('#') || rest.trim().is_empty() {
                continue;
            }
            let (principals, rest) = token(rest).map_err(&malformed)?;
            if principals.is_empty() {
                return Err(malformed(LineFault::EmptyPrincipals));
            }
            if rest.is_empty() {
                return Err(malformed(LineFault::OnlyPrincipals { principals }));
            }
            // OpenSSH tries a key first and reads options only when that fails; a token that
            // names a key algorithm is the key.
            let (first, after) = token(rest).map_err(&malformed)?;
            let (options, key_text) = if is_key_type(&first) {
                (String::new(), rest)
            } else {
                if after.is_empty() {
                    return Err(malformed(LineFault::NeitherKeyNorOptions { token: first }));
                }
                (first, after)
            };
            let mut signer = Signer {
                line,
                principals,
                namespaces: None,
                valid_after: None,
                valid_before: None,
                key: parse_key(key_text).map_err(&malformed)?,
            };
            if !options.is_empty() {
                match parse_options(&options, &mut signer) {
                    Ok(()) => {}
                    Err(OptionError::CertAuthority) => {
                        return Err(PolicyError::CertAuthority {
                            path: path.to_path_buf(),
                            line,
                        })
                    }
                    Err(OptionError::Bad(why)) => return Err(malformed(why)),
                }
            }
            if let (Some(a), Some(b)) = (signer.valid_after, signer.valid_before) {
                if b <= a {
                    return Err(malformed(LineFault::EmptyWindow));
                }
            }
            signers.push(signer);
        }
        if signers.is_empty() {
            return Err(PolicyError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Policy {
            path: path.to_path_buf(),
            signers,
        })
    }
}

/// A policy that someone else can write is theirs, not ours: as sshd's StrictModes does for
/// `authorized_keys`, the file (through any link) and every directory above it must be owned
/// by root or by us and not writable by group or others — a directory with the sticky bit
/// (`/tmp`) may be, since no one but its owner and ours can replace our file in it.
fn only_trusted_can_write(path: &Path) -> Result<(), PolicyError> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String| PolicyError::Writable {
        path: path.to_path_buf(),
        why,
    };
    let real = std::fs::canonicalize(path)
        .map_err(|e| PolicyError::Io(IoError::new("cannot resolve", path, e)))?;
    let me = rustix::process::geteuid().as_raw();
    let trusted_owner = |uid: u32| uid == 0 || uid == me;
    let meta = std::fs::metadata(&real)
        .map_err(|e| PolicyError::Io(IoError::new("cannot inspect", &real, e)))?;
    if !trusted_owner(meta.uid()) {
        return Err(refuse(format!(
            "{} belongs to uid {}, neither root nor us",
            real.display(),
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(refuse(format!(
            "{} can be written by group or others (mode {:o})",
            real.display(),
            meta.mode() & 0o7777
        )));
    }
    for dir in real.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        let sticky = meta.mode() & 0o1000 != 0;
        if !trusted_owner(meta.uid()) {
            return Err(refuse(format!(
                "its directory {} belongs to uid {}, neither root nor us",
                dir.display(),
                meta.uid()
            )));
        }
        if meta.mode() & 0o022 != 0 && !sticky {
            return Err(refuse(format!(
                "its directory {} can be written by group or others (mode {:o}), so the \
                 policy can be replaced",
                dir.display(),
                meta.mode() & 0o7777
            )));
        }
    }
    Ok(())
}

/// A value from the file, quoted and cut short for a message.
fn shown(s: &str) -> String {
    let cut: String = s.chars().take(64).collect();
    if cut.len() < s.len() {
        format!("{cut:?}…")
    } else {
        format!("{cut:?}")
    }
}

/// The next blank-separated token, a `"..."` quoted one taken whole (quotes dropped), and the
/// rest with its leading blanks skipped. Quotes inside a token (options' values) are kept,
/// and blanks inside them do not end it.
fn token(s: &str) -> Result<(String, &str), LineFault> {
    let is_blank = |c: char| c == ' ' || c == '\t';
    if let Some(quoted) = s.strip_prefix('"') {
        let end = quoted.find('"').ok_or(LineFault::UnclosedField)?;
        let rest = &quoted[end + 1..];
        if !rest.is_empty() && !rest.starts_with(is_blank) {
            return Err(LineFault::TextAfterQuote);
        }
        return Ok((quoted[..end].to_string(), rest.trim_start_matches(is_blank)));
    }
    let mut in_quotes = false;
    let mut end = s.len();
    for (i, c) in s.char_indices() {
        if c == '"' {
            in_quotes = !in_quotes;
        } else if is_blank(c) && !in_quotes {
            end = i;
            break;
        }
    }
    if in_quotes {
        return Err(LineFault::UnclosedQuote);
    }
    Ok((s[..end].to_string(), s[end..].trim_start_matches(is_blank)))
}

fn is_key_type(token: &str) -> bool {
    Algorithm::new(token).is_ok() || token.contains("-cert-v01@openssh.com")
}

/// `keytype base64 [comment]`.
fn parse_key(text: &str) -> Result<PublicKey, LineFault> {
    let (kind, rest) = token(text)?;
    let (data, _comment) = token(rest)?;
    if data.is_empty() {
        return Err(LineFault::NoKeyData { kind });
    }
    if kind.contains("-cert-v01@openssh.com") {
        return Err(LineFault::Certificate { kind });
    }
    let key = PublicKey::from_openssh(&format!("{kind} {data}"))
        .map_err(|why| LineFault::BadKey { kind, why })?;
    Ok(key)
}

enum OptionError {
    CertAuthority,
    Bad(LineFault),
}

fn parse_options(options: &str, signer: &mut Signer) -> Result<(), OptionError> {
    let mut rest = options;
    loop {
        let (name, value, after) = next_option(rest).map_err(OptionError::Bad)?;
        let lower = name.to_ascii_lowercase();
        match (lower.as_str(), value) {
            ("cert-authority", None) => return Err(OptionError::CertAuthority),
            ("namespaces", Some(v)) => signer.namespaces = Some(v),
            ("valid-after", Some(v)) => {
                signer.valid_after = Some(parse_time(&v).map_err(OptionError::Bad)?)
            }
            ("valid-before", Some(v)) => {
                signer.valid_before = Some(parse_time(&v).map_err(OptionError::Bad)?)
            }
            ("namespaces" | "valid-after" | "valid-before", None) => {
                return Err(OptionError::Bad(LineFault::NeedsValue { name }))
            }
            _ => return Err(OptionError::Bad(LineFault::UnsupportedOption { name })),
        }
        match after.strip_prefix(',') {
            Some(more) => rest = more,
            None if after.is_empty() => return Ok(()),
            None => {
                return Err(OptionError::Bad(LineFault::NoComma {
                    near: after.to_string(),
                }))
            }
        }
    }
}

/// `name` or `name="value"`, and what follows it.
fn next_option(s: &str) -> Result<(String, Option<String>, &str), LineFault> {
    let name_end = s.find(['=', ',']).unwrap_or(s.len());
    let name = &s[..name_end];
    if name.is_empty() {
        return Err(LineFault::EmptyOption);
    }
    let Some(after_eq) = s[name_end..].strip_prefix('=') else {
        return Ok((name.to_string(), None, &s[name_end..]));
    };
    let Some(quoted) = after_eq.strip_prefix('"') else {
        return Err(LineFault::UnquotedValue {
            name: name.to_string(),
        });
    };
    let end = quoted.find('"').ok_or_else(|| LineFault::UnclosedValue {
        name: name.to_string(),
    })?;
    Ok((
        name.to_string(),
        Some(quoted[..end].to_string()),
        &quoted[end + 1..],
    ))
}

/// `YYYYMMDD[HHMM[SS]]Z` as seconds since the epoch. OpenSSH's `parse_absolute_time` takes 8,
/// 12 or 14 digits, a trailing `Z` for UTC, else the local time zone — which mcp-deploy does
/// not guess: it refuses a time without `Z`.
pub(crate) fn parse_time(text: &str) -> Result<u64, LineFault> {
    let text_of = || text.to_string();
    let Some(digits) = text.strip_suffix(['Z', 'z']) else {
        return Err(LineFault::NoZone { text: text_of() });
    };
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(LineFault::TimeForm { text: text_of() });
    }
    let num =
        |r: std::ops::Range<usize>| digits.get(r).map_or(0, |d| d.parse::<u64>().unwrap_or(0));
    let (year, month, day) = (num(0..4), num(4..6), num(6..8));
    let (hour, minute, second) = (num(8..10), num(10..12), num(12..14));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let valid = year >= 1970
        && (1..=12).contains(&month)
        && day >= 1
        && day <= month_days[(month.max(1) - 1) as usize]
        && hour < 24
        && minute < 60
        && second < 60;
    if !valid {
        return Err(LineFault::InvalidTime { text: text_of() });
    }
    let days_before_year: u64 = (1970..year)
        .map(|y| {
            if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) {
                366
            } else {
                365
            }
        })
        .sum();
    let days_before_month: u64 = month_days[..(month - 1) as usize].iter().sum();
    let days = days_before_year + days_before_month + day - 1;
    Ok(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// OpenSSH's `match_pattern_list`: comma-separated patterns with `*` and `?`, a `!` pattern
/// that matches vetoes the whole list, else any positive match passes.
///
/// OpenSSH copies each pattern into a 1024-byte buffer and answers "no match" for the whole
/// list when one is 1023 bytes or longer (`namespaces="<1100 x>,mcp-deploy"` does not allow
/// mcp-deploy for `ssh-keygen -Y verify`): so here, lest a line allow what ssh-keygen refuses.
pub(crate) fn pattern_list_matches(s: &str, list: &str) -> bool {
    const OPENSSH_PATTERN_MAX: usize = 1023;
    let mut positive = false;
    for pattern in list.split(',') {
        if pattern.strip_prefix('!').unwrap_or(pattern).len() >= OPENSSH_PATTERN_MAX {
            return false;
        }
        let (negated, pattern) = match pattern.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, pattern),
        };
        if glob(s.as_bytes(), pattern.as_bytes()) {
            if negated {
                return false;
            }
            positive = true;
        }
    }
    positive
}

/// `*` any run of bytes, `?` one byte; iterative with one backtrack point, so no pattern can
/// make it exponential.
fn glob(s: &[u8], p: &[u8]) -> bool {
    let (mut si, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            si += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

impl From<IoError> for PolicyError {
    fn from(e: IoError) -> Self {
        PolicyError::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMvGBRfGyzgfUC4i6dzvsKQ3EBtTt5NDpd0WK1y7Q8yd";

    fn parse(text: &str) -> Result<Policy, PolicyError> {
        Policy::parse(Path::new("allowed_signers"), text)
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_plain_line_with_comments_and_blanks() {
        let p = parse(&format!(
            "# builders\n\n   \nci@example.org {ED} builder key\n"
        ))
        .unwrap();
        assert_eq!(p.signers.len(), 1);
        let s = &p.signers[0];
        assert_eq!((s.line, s.principals.as_str()), (4, "ci@example.org"));
        assert_eq!(s.standing("mcp-deploy", 0), Standing::Allowed);
    }

    #[test]
    fn options_are_read_case_insensitively() {
        let p = parse(&format!(
            "a,b NameSpaces=\"mcp-deploy,git\",valid-after=\"20200101Z\",VALID-BEFORE=\"20990101120000Z\" {ED}"
        ))
        .unwrap();
        let s = &p.signers[0];
        assert_eq!(s.namespaces.as_deref(), Some("mcp-deploy,git"));
        assert_eq!(s.valid_after, Some(1_577_836_800));
        assert_eq!(
            s.valid_before,
            Some(parse_time("20990101Z").unwrap() + 12 * 3600)
        );
    }

    #[test]
    fn quoted_principals_may_hold_blanks() {
        let p = parse(&format!("\"the builder\" {ED}")).unwrap();
        assert_eq!(p.signers[0].principals, "the builder");
    }

    #[test]
    fn a_malformed_line_names_file_and_line() {
        let e = err(&format!("ok {ED}\nbad ssh-ed25519 AAAAnotbase64!!\n"));
        assert!(e.starts_with("trust policy allowed_signers:2: "), "{e}");
        let e = err(&format!("x foo=\"bar\" {ED}"));
        assert!(e.contains(":1: unsupported option \"foo\""), "{e}");
        let e = err(&format!("x namespaces=mcp-deploy {ED}"));
        assert!(e.contains("double quotes"), "{e}");
        let e = err("onlyprincipals\n");
        assert!(e.contains(":1: only principals"), "{e}");
        let e = err(&format!(
            "x valid-after=\"20300101Z\",valid-before=\"20200101Z\" {ED}"
        ));
        assert!(e.contains("not after valid-after"), "{e}");
    }

    #[test]
    fn cert_authority_is_refused_as_not_supported_naming_the_line() {
        let e = err(&format!("# ca\n*@example.org cert-authority {ED}\n"));
        assert!(
            e.contains("allowed_signers:2: cert-authority is not supported"),
            "{e}"
        );
    }

    #[test]
    fn crlf_line_ends_are_read_and_a_byte_order_mark_is_refused() {
        let p = parse(&format!(
            "# ci\r\nci@example.org namespaces=\"mcp-deploy\" {ED}\r\n"
        ))
        .unwrap();
        assert_eq!(p.signers[0].principals, "ci@example.org");
        assert_eq!(p.signers[0].namespaces.as_deref(), Some("mcp-deploy"));
        let e = err(&format!("\u{feff}ci@example.org {ED}\n"));
        assert!(
            e.contains(":1: the file starts with a byte-order mark"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_policy_is_refused() {
        assert!(err("# nobody\n").contains("lists no signer"));
    }

    #[test]
    fn times_follow_openssh_and_need_a_z() {
        assert_eq!(parse_time("19700101Z").ok(), Some(0));
        assert_eq!(parse_time("197001020001Z").ok(), Some(86_400 + 60));
        assert_eq!(parse_time("20240229235959Z").ok(), Some(1_709_251_199));
        assert!(parse_time("20240229")
            .unwrap_err()
            .to_string()
            .contains("no trailing Z"));
        for bad in [
            "2024022Z",
            "202402291Z",
            "20230229Z",
            "20241301Z",
            "19691231Z",
            "2024022aZ",
            "20240101246000Z",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn standing_bounds_are_inclusive() {
        let p = parse(&format!(
            "x valid-after=\"19700101000010Z\",valid-before=\"19700101000020Z\" {ED}"
        ))
        .unwrap();
        let s = &p.signers[0];
        assert_eq!(s.standing("mcp-deploy", 9), Standing::NotYetValid(10));
        assert_eq!(s.standing("mcp-deploy", 10), Standing::Allowed);
        assert_eq!(s.standing("mcp-deploy", 20), Standing::Allowed);
        assert_eq!(s.standing("mcp-deploy", 21), Standing::Expired(20));
    }

    #[test]
    fn namespace_patterns_match_like_openssh() {
        assert!(pattern_list_matches("mcp-deploy", "mcp-deploy"));
        assert!(pattern_list_matches("mcp-deploy", "git,mcp-*"));
        assert!(pattern_list_matches("mcp-deploy", "*"));
        assert!(pattern_list_matches("mcp-deploy", "mcp?deploy"));
        assert!(!pattern_list_matches("mcp-deploy", "git"));
        assert!(!pattern_list_matches("mcp-deploy", "*,!mcp-deploy"));
        assert!(!pattern_list_matches("mcp-deploy", "!mcp-deploy"));
        assert!(!pattern_list_matches("mcp-deploy", "mcp-deploy2"));
        assert!(!pattern_list_matches("mcp-deploy", ""));
        // Blanks are part of a pattern, as in OpenSSH (checked with ssh-keygen in
        // tests/it/signatures.rs), and a pattern of 1023 bytes or more fails the whole list.
        assert!(!pattern_list_matches("mcp-deploy", "git, mcp-deploy"));
        assert!(!pattern_list_matches("mcp-deploy", "MCP-deploy"));
        let long = |n: usize| format!("{},mcp-deploy", "x".repeat(n));
        assert!(pattern_list_matches("mcp-deploy", &long(1022)));
        assert!(!pattern_list_matches("mcp-deploy", &long(1023)));
        assert!(!pattern_list_matches(
            "mcp-deploy",
            &format!("mcp-deploy,!{}", "x".repeat(1100))
        ));
        // No pattern makes the matcher blow up.
        assert!(!pattern_list_matches(
            &"a".repeat(4096),
            &"*a".repeat(2000).to_string().replace("*a*a", "*a*b")
        ));
    }

    #[test]
    fn random_lines_never_panic() {
        // Pieces of real lines shuffled: quotes, options, key types, times, multibyte text.
        let pieces = [
            "a",
            " ",
            "\t",
            "\"",
            ",",
            "=",
            "namespaces",
            "valid-after",
            "valid-before",
            "cert-authority",
            "\"20260101Z\"",
            "ssh-ed25519",
            "ssh-rsa",
            "AAAA",
            ED,
            "é",
            "#",
            "\n",
            "Z",
            "99999999",
            "*",
            "!",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            let mut line = String::new();
            for _ in 0..(seed % 12) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                line.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let _ = parse(&line);
        }
    }

    #[test]
    fn no_input_panics() {
        for text in [
            "\"",
            "x \"",
            "x a=\"",
            "x ,",
            "x =",
            "x a,,b ssh-ed25519 AAAA",
            "\u{0}",
            "x ssh-ed25519",
            "x ssh-rsa AAAAB3NzaC1yc2E= c",
        ] {
            let _ = parse(text);
        }
    }
}
