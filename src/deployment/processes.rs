//! Running processes as a witness: which live processes still use a release of a deployment.
//! After a promote, agent sessions keep the servers they started on the previous release;
//! `status` reports them, promote counts those left on the release it switched away from, and
//! prune never removes a release one of them uses.
//!
//! A process uses release `R` (of canonical `releases/`) when, read from `/proc/<pid>`:
//! 1. `exe` — its executable lies inside `releases/R` (a deleted one, which the kernel shows
//!    as `<path> (deleted)`, is still named by its release: the file is gone, the process runs
//!    it all the same);
//! 2. `cwd` — its working directory lies inside `releases/R`;
//! 3. `cmdline` — an argument is a path (absolute, or relative to its `cwd`) that resolves
//!    inside `releases/R`: an interpreted server (`node <script>`, `python <script>`) has the
//!    interpreter as `exe` and only names its program here. A script started through the
//!    stable path (`<prefix>/bin/x -> ../current/bin/x`; a `#!` script's interpreter gets the
//!    path as exec'd) resolves *now* through what `current` names now, not what it named when
//!    the process started; so when that resolution goes through `current` and the process
//!    started before `current` was last switched, it is counted on the release that was live
//!    before the switch ([`Releases::switched`]), saying so.
//!
//! Paths are compared by components after resolving (the kernel's links are resolved
//! already; a `cmdline` path is resolved here one component at a time, a missing tail taken as
//! written), never as strings.
//!
//! Bounded: at most [`MAX_PIDS`] entries of `/proc` are read (the rest are counted as not
//! scanned, never as absent), at most [`MAX_CMDLINE`] bytes of a `cmdline` and its first
//! [`MAX_ARGS`] arguments. A process that exits mid-scan (its entries vanish: `ENOENT`,
//! `ESRCH`) is simply gone; one whose entries exist but cannot be read (`EACCES`, a hardened
//! `/proc`, another user's process without privilege) is counted as not readable, with its pid.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

/// `/proc` entries read at most: Linux's default `pid_max` on 64-bit hosts is 4194304, but a
/// host with a quarter of a million live processes is no host mcp-deploy runs on.
pub(crate) const MAX_PIDS: usize = 262_144;
/// Bytes of a `cmdline` read at most (`ARG_MAX` may allow megabytes): a server's program
/// path comes among its first arguments.
pub(crate) const MAX_CMDLINE: u64 = 64 * 1024;
/// Arguments of a `cmdline` looked at, at most.
pub(crate) const MAX_ARGS: usize = 64;
/// Symlinks followed while resolving one `cmdline` path (Linux's own limit).
const MAX_LINKS: usize = 40;
/// How many pids a report names before it only counts.
pub(crate) const SHOWN: usize = 5;

/// The releases of one deployment, and what `current` says of them.
#[derive(Debug, Clone)]
pub(crate) struct Releases {
    /// `<prefix>/current` as a path (not resolved): a `cmdline` path that goes through it is
    /// told apart from one naming a release directly.
    pub(crate) current_link: PathBuf,
    /// The canonical `<prefix>/releases`.
    pub(crate) dir: PathBuf,
    /// The release `current` names now.
    pub(crate) live: Option<String>,
    /// When `current` was last switched (the link's own mtime: promote makes a new link and
    /// renames it over), and the release live before that switch, when known (the history).
    pub(crate) switched: Option<(SystemTime, Option<String>)>,
}

impl Releases {
    /// The releases of the release layout at `prefix`; `before` is the release live before the
    /// last switch (from the promote history), if known. `None` when there is no `releases/`.
    pub(crate) fn of(prefix: &Path, before: Option<String>) -> Option<Releases> {
        let dir = fs::canonicalize(prefix.join("releases")).ok()?;
        let current_link = prefix.join("current");
        let link = fs::symlink_metadata(&current_link).ok();
        let live = fs::read_link(&current_link).ok().and_then(|t| {
            let real = fs::canonicalize(prefix.join(&t)).ok()?;
            release_in(&real, &dir)
        });
        let switched = link
            .filter(|m| m.file_type().is_symlink())
            .and_then(|m| m.modified().ok())
            .map(|t| (t, before));
        Some(Releases {
            current_link,
            dir,
            live,
            switched,
        })
    }
}

/// Which path of `/proc/<pid>` put a process in a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Via {
    Exe,
    Cwd,
    Cmdline,
    /// A `cmdline` path through `current`, from a process started before the last switch.
    CmdlineBeforeSwitch,
}

impl Via {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Via::Exe => "exe",
            Via::Cwd => "cwd",
            Via::Cmdline => "cmdline",
            Via::CmdlineBeforeSwitch => "cmdline, started before `current` was switched",
        }
    }
}

/// A live process that uses a release.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Holder {
    pub(crate) pid: u32,
    pub(crate) release: String,
    pub(crate) via: Via,
    /// The path that put it there (the executable, the directory, the argument), as `/proc`
    /// gave it.
    pub(crate) path: String,
}

impl Holder {
    /// `pid 123 (exe /opt/ct/releases/a/bin/ct)`.
    pub(crate) fn describe(&self) -> String {
        format!("pid {} ({} {})", self.pid, self.via.word(), self.path)
    }
}

/// What a scan found.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Scan {
    /// One per process and release, the first path found (exe, cwd, cmdline, in that order).
    pub(crate) holders: Vec<Holder>,
    /// Processes whose entries exist but could not be read: they may use any release.
    pub(crate) unreadable: Vec<u32>,
    /// The names (`/proc/<pid>/comm`, readable by all) of the first [`SHOWN`] unreadable
    /// ones, so that a note names what it could not compare: `pid 1 init` in a container.
    #[serde(skip)]
    pub(crate) names: std::collections::BTreeMap<u32, String>,
    /// Processes not looked at ([`MAX_PIDS`]), or `/proc` itself unreadable (then 1 and the
    /// reason in `error`): as unknown as the unreadable ones.
    pub(crate) not_scanned: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

impl Scan {
    /// The holders of `release`.
    pub(crate) fn of<'a>(&'a self, release: &'a str) -> impl Iterator<Item = &'a Holder> + 'a {
        self.holders.iter().filter(move |h| h.release == release)
    }

    /// Whether every process could be read: else a release may be used by one we could not.
    #[cfg(test)]
    pub(crate) fn complete(&self) -> bool {
        self.unreadable.is_empty() && self.not_scanned == 0 && self.error.is_none()
    }

    /// "2 processes not readable by this user (pids 1 init, 7)", "/proc cannot be listed: …",
    /// or `None`.
    pub(crate) fn unknown(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(format!("the processes cannot be listed ({e})"));
        }
        let mut parts = Vec::new();
        if !self.unreadable.is_empty() {
            let named: Vec<String> = self
                .unreadable
                .iter()
                .take(SHOWN)
                .map(|pid| match self.names.get(pid) {
                    Some(name) => format!("{pid} {}", crate::text::printable(name)),
                    None => pid.to_string(),
                })
                .collect();
            let more = self.unreadable.len().saturating_sub(SHOWN);
            let word = if self.unreadable.len() == 1 {
                "pid"
            } else {
                "pids"
            };
            let mut listed = format!("{word} {}", named.join(", "));
            if more > 0 {
                listed.push_str(&format!(" and {more} more"));
            }
            parts.push(format!(
                "{} not readable by this user ({listed})",
                count(self.unreadable.len(), "process", "processes"),
            ));
        }
        if self.not_scanned > 0 {
            parts.push(format!(
                "{} not scanned (more than {MAX_PIDS})",
                count(self.not_scanned, "process", "processes")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// `1 process`, `2 processes`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `pids 1, 2, 3 and 4 more`.
pub(crate) fn pids(pids: &[u32]) -> String {
    let shown: Vec<String> = pids.iter().take(SHOWN).map(u32::to_string).collect();
    let more = pids.len().saturating_sub(SHOWN);
    let word = if pids.len() == 1 { "pid" } else { "pids" };
    if more > 0 {
        format!("{word} {} and {more} more", shown.join(", "))
    } else {
        format!("{word} {}", shown.join(", "))
    }
}

/// Scan `/proc` for processes using a release of `releases` (this process excluded).
pub(crate) fn scan(releases: &Releases) -> Scan {
    scan_in(Path::new("/proc"), releases, std::process::id())
}

/// [`scan`] of the `/proc` at `proc` (tests give a tree of their own).
pub(crate) fn scan_in(proc: &Path, releases: &Releases, own_pid: u32) -> Scan {
    let mut out = Scan::default();
    let entries = match fs::read_dir(proc) {
        Ok(e) => e,
        Err(e) => {
            out.not_scanned = 1;
            out.error = Some(format!("{}: {e}", proc.display()));
            return out;
        }
    };
    let boot = boot_time(proc);
    let mut seen = 0usize;
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == own_pid {
            continue;
        }
        seen += 1;
        if seen > MAX_PIDS {
            out.not_scanned += 1;
            continue;
        }
        match read_process(&entry.path(), pid, releases, boot) {
            Read_::Gone => {}
            Read_::Unreadable(holders) => {
                out.unreadable.push(pid);
                out.holders.extend(holders);
            }
            Read_::Found(holders) => out.holders.extend(holders),
        }
    }
    out.holders.sort_by_key(|h| h.pid);
    out.unreadable.sort_unstable();
    for &pid in out.unreadable.iter().take(SHOWN) {
        let comm = read_bounded(&proc.join(pid.to_string()).join("comm"), 64);
        if let Ok(comm) = comm {
            let name = String::from_utf8_lossy(&comm).trim_end().to_string();
            if !name.is_empty() {
                out.names.insert(pid, name);
            }
        }
    }
    out
}

enum Read_ {
    Gone,
    /// What its readable parts (cmdline) showed.
    Unreadable(Vec<Holder>),
    Found(Vec<Holder>),
}

/// What a read of one `/proc/<pid>` entry gave: the value, nothing there (a kernel thread has
/// no `exe`; a process that exited has nothing), or a refusal.
enum Got<T> {
    Value(T),
    Absent,
    Refused,
}

fn got<T>(r: std::io::Result<T>) -> Got<T> {
    match r {
        Ok(v) => Got::Value(v),
        // ESRCH: the process went between the directory listing and the read.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(3) => {
            Got::Absent
        }
        Err(_) => Got::Refused,
    }
}

fn read_process(dir: &Path, pid: u32, releases: &Releases, boot: Option<SystemTime>) -> Read_ {
    let exe = got(fs::read_link(dir.join("exe")));
    let cwd = got(fs::read_link(dir.join("cwd")));
    let cmdline = got(read_bounded(&dir.join("cmdline"), MAX_CMDLINE));
    // A process whose exe or cwd we may not read (another user's, one with capabilities we
    // lack) may run any release: counted, never read as absent; its cmdline (readable by all)
    // is still looked at.
    let refused = matches!(exe, Got::Refused) || matches!(cwd, Got::Refused);
    if refused && !fs::exists(dir).unwrap_or(true) {
        return Read_::Gone;
    }
    let mut found: Vec<Holder> = Vec::new();
    let mut add = |release: String, via: Via, path: String| {
        if !found.iter().any(|h| h.release == release) {
            found.push(Holder {
                pid,
                release,
                via,
                path,
            });
        }
    };
    if let Got::Value(exe) = &exe {
        let (path, _) = strip_deleted(exe);
        if let Some(r) = release_in(&path, &releases.dir) {
            add(r, Via::Exe, exe.display().to_string());
        }
    }
    let cwd = match cwd {
        Got::Value(c) => {
            let (path, _) = strip_deleted(&c);
            if let Some(r) = release_in(&path, &releases.dir) {
                add(r, Via::Cwd, c.display().to_string());
            }
            Some(path)
        }
        _ => None,
    };
    if let Got::Value(bytes) = cmdline {
        let started = || start_time(dir, boot);
        for arg in bytes.split(|b| *b == 0).take(MAX_ARGS) {
            if !arg.contains(&b'/') || arg.len() > 4096 {
                continue;
            }
            let arg = Path::new(OsStr::from_bytes(arg));
            let path = match (arg.is_absolute(), &cwd) {
                (true, _) => arg.to_path_buf(),
                (false, Some(c)) => c.join(arg),
                (false, None) => continue,
            };
            let (real, through_current) = resolve(&path, &releases.current_link);
            let Some(r) = release_in(&real, &releases.dir) else {
                continue;
            };
            let shown = arg.display().to_string();
            match (&releases.switched, through_current) {
                (Some((at, before)), true) if releases.live.as_deref() == Some(r.as_str()) => {
                    match started() {
                        // Started before the switch: it resolved `current` to what was live
                        // then.
                        Some(t) if t < *at => {
                            if let Some(b) = before {
                                add(b.clone(), Via::CmdlineBeforeSwitch, shown);
                            }
                        }
                        _ => add(r, Via::Cmdline, shown),
                    }
                }
                _ => add(r, Via::Cmdline, shown),
            }
        }
    }
    if refused {
        Read_::Unreadable(found)
    } else {
        Read_::Found(found)
    }
}

/// Read at most `max` bytes of `path` (a `/proc` file: size 0 in `stat`, so read, not sized).
fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    fs::File::open(path)?.take(max).read_to_end(&mut buf)?;
    Ok(buf)
}

/// `(path, deleted)`: the kernel appends ` (deleted)` to a link whose file is gone.
fn strip_deleted(p: &Path) -> (PathBuf, bool) {
    let bytes = p.as_os_str().as_bytes();
    match bytes.strip_suffix(b" (deleted)") {
        Some(b) => (PathBuf::from(OsStr::from_bytes(b)), true),
        None => (p.to_path_buf(), false),
    }
}

/// The release (first component below `dir`, canonical) that the absolute, resolved `path`
/// lies in, compared by components.
pub(crate) fn release_in(path: &Path, dir: &Path) -> Option<String> {
    let rest = path.strip_prefix(dir).ok()?;
    match rest.components().next()? {
        Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
        _ => None,
    }
}

/// Resolve `path` one component at a time, following every symlink (a missing component and
/// what follows it are taken as written, `..` then removing the last), and say whether the
/// way went through `current_link`. Never fails: a path that cannot be resolved further is
/// what it is.
pub(crate) fn resolve(path: &Path, current_link: &Path) -> (PathBuf, bool) {
    let mut resolved = PathBuf::from("/");
    let mut queue: VecDeque<PathBuf> = parts(path);
    let (mut links, mut through, mut missing) = (0usize, false, false);
    let current_real = current_link
        .parent()
        .and_then(|p| fs::canonicalize(p).ok())
        .map(|p| p.join("current"));
    while let Some(part) = queue.pop_front() {
        if part.as_os_str() == ".." {
            resolved.pop();
            continue;
        }
        let next = resolved.join(&part);
        if missing {
            resolved = next;
            continue;
        }
        match fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() && links < MAX_LINKS => {
                links += 1;
                if Some(&next) == current_real.as_ref() || next == current_link {
                    through = true;
                }
                let Ok(target) = fs::read_link(&next) else {
                    resolved = next;
                    missing = true;
                    continue;
                };
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                for p in parts(&target).into_iter().rev() {
                    queue.push_front(p);
                }
            }
            Ok(_) => resolved = next,
            Err(_) => {
                resolved = next;
                missing = true;
            }
        }
    }
    (resolved, through)
}

fn parts(path: &Path) -> VecDeque<PathBuf> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(PathBuf::from(n)),
            Component::ParentDir => Some(PathBuf::from("..")),
            _ => None,
        })
        .collect()
}

/// When the system booted (`btime` of `/proc/stat`).
fn boot_time(proc: &Path) -> Option<SystemTime> {
    let text = read_bounded(&proc.join("stat"), 1024 * 1024).ok()?;
    let text = String::from_utf8_lossy(&text);
    let secs: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// When the process of `/proc/<pid>` started: field 22 of its `stat` (clock ticks since
/// boot), counted after the last `)` since the command name in field 2 may hold any byte.
fn start_time(dir: &Path, boot: Option<SystemTime>) -> Option<SystemTime> {
    let stat = read_bounded(&dir.join("stat"), 4096).ok()?;
    let after = stat.iter().rposition(|b| *b == b')')?;
    let fields = String::from_utf8_lossy(&stat[after + 1..]).into_owned();
    // Field 3 is the first after ')': field 22 is the 20th.
    let ticks: u64 = fields.split_whitespace().nth(19)?.parse().ok()?;
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Some(boot? + Duration::from_millis(ticks.saturating_mul(1000) / hz))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Fake {
        _t: tempfile::TempDir,
        proc: PathBuf,
        releases: Releases,
        root: PathBuf,
    }

    /// A prefix with releases a and b (current -> b), and an empty fake /proc.
    fn fake() -> Fake {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap();
        let prefix = root.join("ct");
        for r in ["a", "b"] {
            fs::create_dir_all(prefix.join("releases").join(r).join("bin")).unwrap();
            fs::write(prefix.join("releases").join(r).join("bin/ct"), "").unwrap();
        }
        symlink("releases/b", prefix.join("current")).unwrap();
        fs::create_dir_all(prefix.join("bin")).unwrap();
        symlink("../current/bin/ct", prefix.join("bin/ct")).unwrap();
        let proc = root.join("proc");
        fs::create_dir_all(&proc).unwrap();
        fs::write(proc.join("stat"), "cpu 1 2 3\nbtime 1000\n").unwrap();
        let releases = Releases::of(&prefix, Some("a".into())).unwrap();
        Fake {
            _t: t,
            proc,
            releases,
            root,
        }
    }

    impl Fake {
        fn process(&self, pid: u32, exe: Option<&Path>, cwd: Option<&Path>, cmdline: &[u8]) {
            let d = self.proc.join(pid.to_string());
            fs::create_dir_all(&d).unwrap();
            if let Some(e) = exe {
                symlink(e, d.join("exe")).unwrap();
            }
            if let Some(c) = cwd {
                symlink(c, d.join("cwd")).unwrap();
            }
            fs::write(d.join("cmdline"), cmdline).unwrap();
            // Started 5 s after boot at 100 Hz: long before the fake's `current`.
            fs::write(
                d.join("stat"),
                format!("{pid} (a) b) S {} 500 0\n", "0 ".repeat(18)),
            )
            .unwrap();
        }
        fn prefix(&self) -> PathBuf {
            self.root.join("ct")
        }
    }

    #[test]
    fn exe_cwd_and_cmdline_each_name_their_release() {
        let f = fake();
        let rel = f.releases.dir.clone();
        f.process(
            10,
            Some(&rel.join("a/bin/ct")),
            Some(Path::new("/")),
            b"ct\0",
        );
        f.process(
            11,
            Some(Path::new("/usr/bin/node")),
            Some(&rel.join("a")),
            b"",
        );
        f.process(
            12,
            Some(Path::new("/usr/bin/node")),
            Some(Path::new("/")),
            format!("node\0{}\0--x\0", rel.join("a/bin/ct").display()).as_bytes(),
        );
        // Relative to its cwd.
        f.process(
            13,
            Some(Path::new("/usr/bin/node")),
            Some(&f.prefix()),
            b"node\0releases/a/bin/ct\0",
        );
        f.process(
            14,
            Some(&PathBuf::from(format!(
                "{} (deleted)",
                rel.join("a/bin/ct").display()
            ))),
            None,
            b"",
        );
        let s = scan_in(&f.proc, &f.releases, 1);
        let got: Vec<(u32, &str, Via)> = s
            .holders
            .iter()
            .map(|h| (h.pid, h.release.as_str(), h.via))
            .collect();
        assert_eq!(
            got,
            vec![
                (10, "a", Via::Exe),
                (11, "a", Via::Cwd),
                (12, "a", Via::Cmdline),
                (13, "a", Via::Cmdline),
                (14, "a", Via::Exe),
            ]
        );
        assert!(s.holders[4].path.ends_with(" (deleted)"));
        assert!(s.complete());
    }

    #[test]
    fn a_path_climbing_out_and_back_or_through_a_link_names_the_release_it_reaches() {
        let f = fake();
        let rel = f.releases.dir.clone();
        symlink(rel.join("a"), f.root.join("elsewhere")).unwrap();
        f.process(
            20,
            Some(Path::new("/usr/bin/node")),
            Some(Path::new("/")),
            format!("node\0{}/b/../a/bin/ct\0", rel.display()).as_bytes(),
        );
        f.process(
            21,
            Some(Path::new("/usr/bin/node")),
            Some(Path::new("/")),
            format!("node\0{}/bin/ct\0", f.root.join("elsewhere").display()).as_bytes(),
        );
        // `releases-evil/a` is not inside `releases/`: components, not string prefixes.
        fs::create_dir_all(f.prefix().join("releases-evil/a")).unwrap();
        f.process(
            22,
            Some(&f.prefix().join("releases-evil/a/x")),
            Some(Path::new("/")),
            b"",
        );
        let s = scan_in(&f.proc, &f.releases, 1);
        let got: Vec<(u32, &str)> = s
            .holders
            .iter()
            .map(|h| (h.pid, h.release.as_str()))
            .collect();
        assert_eq!(got, vec![(20, "a"), (21, "a")]);
    }

    #[test]
    fn a_script_through_current_started_before_the_switch_counts_on_the_release_before() {
        let f = fake();
        // Through the stable path: resolves to b (current) now, but the process started at
        // boot+5 s, before `current` was made.
        f.process(
            30,
            Some(Path::new("/usr/bin/node")),
            Some(Path::new("/")),
            format!("node\0{}\0", f.prefix().join("bin/ct").display()).as_bytes(),
        );
        let s = scan_in(&f.proc, &f.releases, 1);
        assert_eq!(s.holders.len(), 1, "{s:?}");
        assert_eq!(s.holders[0].release, "a");
        assert_eq!(s.holders[0].via, Via::CmdlineBeforeSwitch);
        // One started after the switch runs b.
        let mut later = f.releases.clone();
        later.switched = Some((SystemTime::UNIX_EPOCH, Some("a".into())));
        let s = scan_in(&f.proc, &later, 1);
        assert_eq!(s.holders[0].release, "b");
        assert_eq!(s.holders[0].via, Via::Cmdline);
    }

    #[test]
    fn vanished_unreadable_and_hostile_entries() {
        let f = fake();
        // Exited mid-scan: the directory is listed, its entries are gone.
        fs::create_dir_all(f.proc.join("40")).unwrap();
        // Refused (EINVAL here, EACCES on a real /proc): exe is not a link.
        fs::create_dir_all(f.proc.join("41")).unwrap();
        fs::write(f.proc.join("41/exe"), "").unwrap();
        // A cmdline of NULs, non-UTF-8 and one huge argument, then a real path past the
        // bound: read no further than MAX_CMDLINE.
        let mut huge = vec![0u8; 1000];
        huge.extend_from_slice(b"\xff\xfe/\0");
        huge.extend(std::iter::repeat_n(b'/', 100_000));
        huge.push(0);
        huge.extend_from_slice(f.releases.dir.join("a/bin/ct").as_os_str().as_bytes());
        f.process(42, None, None, &huge);
        // Not a pid, and our own pid.
        fs::create_dir_all(f.proc.join("self")).unwrap();
        f.process(7, Some(&f.releases.dir.join("a/bin/ct")), None, b"");
        let s = scan_in(&f.proc, &f.releases, 7);
        assert!(s.holders.is_empty(), "{s:?}");
        assert_eq!(s.unreadable, vec![41]);
        assert!(!s.complete());
        assert_eq!(
            s.unknown().unwrap(),
            "1 process not readable by this user (pid 41)"
        );
        // Its name, when /proc says it (a container's init): the note names what it is.
        fs::write(f.proc.join("41/comm"), "init\n").unwrap();
        let s = scan_in(&f.proc, &f.releases, 7);
        assert_eq!(
            s.unknown().unwrap(),
            "1 process not readable by this user (pid 41 init)"
        );
    }

    #[test]
    fn an_unlistable_proc_is_unknown_not_empty() {
        let f = fake();
        let s = scan_in(&f.root.join("no-proc"), &f.releases, 1);
        assert!(!s.complete());
        assert!(s.unknown().unwrap().contains("cannot be listed"));
    }

    #[test]
    fn the_real_proc_finds_a_process_running_from_a_release() {
        let f = fake();
        let exe = f.releases.dir.join("a/bin/sleep");
        fs::copy("/bin/sleep", &exe).unwrap();
        let mut child = std::process::Command::new(&exe).arg("30").spawn().unwrap();
        let s = scan(&f.releases);
        let _ = child.kill();
        let _ = child.wait();
        let h: Vec<&Holder> = s.of("a").collect();
        assert!(
            h.iter().any(|h| h.pid == child.id() && h.via == Via::Exe),
            "{s:?}"
        );
    }
}
