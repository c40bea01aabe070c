//! The gate: install's step 1b and promote's preflight. Every selected server's deployment
//! is checked ([`checks::deployment_checks`]) before anything is written or registered, so a
//! dangling `current`, a wrong commit, tampered content, an unsigned release or a command that
//! cannot run never reaches a client. One gate for install and promote alike, so that a check
//! added to it (a trust policy, say) reaches both.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::clients::ClientKind;
use crate::deployment::declaration::Server;
use crate::deployment::layout::Sha;
use crate::deployment::release::Release;
use crate::deployment::render::{self, Rendered};
use crate::deployment::selection::Selected;
use crate::identity::checks::{self, Target};
use crate::identity::handshake;
use crate::identity::report::{Check, ServerReport};
use crate::identity::surface::{self, Seen};
use crate::registration::ledger;
use crate::trust::{Trust, TrustFlags, TrustLoadError};

/// What `server`'s release must be proven by ([`Trust::load`]): the command line's trust flags
/// (for every selected server) and the server's own `trusted_signers`. Both given means both
/// must pass — the stricter reading. A policy or root that cannot be read or parsed is exit 2,
/// before anything is checked or changed.
pub(crate) fn trust_policies(flags: TrustFlags, server: &Server) -> Result<Trust, TrustLoadError> {
    Trust::load(
        flags,
        TrustFlags {
            signers: server.trusted_signers.as_deref(),
            builder: server.trusted_builder.as_deref(),
            root: server.trusted_root.as_deref(),
        },
    )
}

/// One selected server as a run registers it: where it is deployed and under which name, its
/// rendered entry, and the trust policies its release must satisfy ([`trust_policies`]). One
/// record per server, so that no step pairs lists by position.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) selected: Selected,
    pub(crate) rendered: Rendered,
    pub(crate) trust: Trust,
}

/// What the gate checks besides the deployment itself.
pub(crate) struct Gate<'a> {
    /// The clients of `--client`, named in the report.
    pub(crate) clients: &'a [ClientKind],
    /// `--content`: a release must hold a manifest its files match.
    pub(crate) require_content: bool,
    /// promote's preflight: the release to check in place of what `current` resolves to.
    pub(crate) candidate: Option<&'a Path>,
}

/// The gate's report: a [`ServerReport`] of deployment checks per candidate, in their order
/// (the `signature` check runs where a candidate has a trust policy).
pub(crate) fn gate_reports(
    gate: &Gate,
    candidates: &[Candidate],
    expected: &BTreeMap<String, Sha>,
) -> Vec<ServerReport> {
    let clients = gate
        .clients
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(",");
    candidates
        .iter()
        .map(|c| {
            let (s, r, trust) = (&c.selected, &c.rendered, &c.trust);
            let target = Target {
                server: &s.server,
                client: &clients,
                prefix: s.prefix.clone(),
                registered_name: s.registered_name.clone(),
                declared: r.entry.clone(),
                expected: expected.get(&s.server.name).cloned(),
                require_content: gate.require_content,
                handshake: None,
                live: None,
                // The gate checks the deployment, not a registration.
                layers: Vec::new(),
                release: match gate.candidate {
                    Some(dir) => Release::candidate(&s.prefix, s.server.layout, dir),
                    None => Release::resolve(&s.prefix, s.server.layout),
                },
                trust,
            };
            ServerReport {
                name: s.server.name.clone(),
                client: clients.clone(),
                registered_name: s.registered_name.clone(),
                prefix: s.prefix.display().to_string(),
                registration: None,
                witnesses: None,
                deployed: checks::deployed(&target),
                checks: checks::deployment_checks(&target),
            }
        })
        .collect()
}

/// install's and reconcile's `--handshake`: start each server before registering it, and
/// record its tool surface when first seen, or require the recorded one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolsGate {
    pub(crate) timeout: Duration,
    /// `--accept-tools` (install only): record a changed surface of the same release.
    pub(crate) accept: bool,
}

/// The handshake gate, run when the deployment gate passed (a release whose content or
/// signature failed is never executed), in halves so that the servers start while the clients
/// are opened and read, and each server's verdict is waited for only before its own first
/// change: [`start_tools`] starts every candidate's handshake at once, each on a thread of
/// its own; [`PendingTools::admits`] waits for one and says whether it passes (judged as a
/// dry run, writing nothing); [`PendingTools::finish`] waits for them all and adds, for each
/// candidate in `reports`' order, a `handshake` row (its server started as the agent will
/// start it, the declared command directly) and a `tools` row — the surface recorded now when
/// its release has none ("first seen"), the recorded one required otherwise, a changed one
/// recorded only with `accept`, which the ledger then says, with who and what changed. A dry
/// run records nothing. A `PendingTools` is the handshakes under way, one per candidate, in
/// their order; clones share them.
#[derive(Clone)]
pub(crate) struct PendingTools {
    shared: Arc<Shared>,
}

struct Shared {
    servers: Vec<(Candidate, Slot)>,
    accept: bool,
    /// Handshakes that may still start now ([`at_once`]): a host with a hundred servers does
    /// not start a hundred at a time.
    free: Mutex<usize>,
    freed: Condvar,
}

/// How many servers are started at a time: the processors, at least 2 and at most 8.
fn at_once() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8))
}

impl Shared {
    /// Run `f` once fewer than [`at_once`] others run. The place is given back when `f`
    /// returns or panics, so that no other handshake waits for it forever.
    fn limited<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Place<'s>(&'s Shared);
        impl Drop for Place<'_> {
            fn drop(&mut self) {
                if let Ok(mut free) = self.0.free.lock() {
                    *free += 1;
                }
                self.0.freed.notify_one();
            }
        }
        if let Ok(mut free) = self.free.lock() {
            while *free == 0 {
                free = match self.freed.wait(free) {
                    Ok(f) => f,
                    Err(_) => return f(),
                };
            }
            *free -= 1;
        }
        let _place = Place(self);
        f()
    }
}

/// One candidate's handshake: its answer, filled once (by its thread, as soon as the server
/// answered, or at once when known without it), and whether the thread is done (the server
/// ended).
#[derive(Default)]
struct Slot {
    state: Mutex<(Option<Shaken>, bool)>,
    ready: Condvar,
    /// [`PendingTools::admits`]'s verdict, judged once: every client's transaction asks it,
    /// and each gets the same answer without reading the record again.
    admitted: std::sync::OnceLock<bool>,
}

#[derive(Clone)]
enum Shaken {
    /// A row known without starting anything (its entry cannot be rendered).
    Known(Check),
    /// What the server answered (a remote server's too: the same handshake over HTTP).
    Answered(Result<handshake::ServerInfo, String>),
}

impl Slot {
    /// The answer, unless one was given already; `done`: nothing more will come.
    fn fill(&self, shaken: Option<Shaken>, done: bool) {
        if let Ok(mut state) = self.state.lock() {
            if state.0.is_none() {
                state.0 = shaken;
            }
            state.1 |= done;
        }
        self.ready.notify_all();
    }

    /// The answer, as soon as there is one (`until_done`: once the server has ended too).
    fn wait(&self, until_done: bool) -> Shaken {
        let gone = || Shaken::Answered(Err("the handshake's thread failed".into()));
        let Ok(mut state) = self.state.lock() else {
            return gone();
        };
        loop {
            if let (Some(shaken), done) = &*state {
                if *done || !until_done {
                    return shaken.clone();
                }
            }
            if state.1 {
                return gone();
            }
            state = match self.ready.wait(state) {
                Ok(s) => s,
                Err(_) => return gone(),
            };
        }
    }
}

/// Start every candidate's handshake, each on a thread of its own, at most [`at_once`]
/// servers running at a time.
pub(crate) fn start_tools(candidates: &[Candidate], tools: ToolsGate) -> PendingTools {
    let shared = Arc::new(Shared {
        servers: candidates
            .iter()
            .map(|c| (c.clone(), Slot::default()))
            .collect(),
        accept: tools.accept,
        free: Mutex::new(at_once()),
        freed: Condvar::new(),
    });
    for i in 0..shared.servers.len() {
        let s = &shared.servers[i].0.selected;
        let direct = match render::render_direct(&s.server, &s.prefix) {
            Ok(r) => r.entry,
            Err(e) => {
                let row = Check::from_result("handshake", Err(e));
                shared.servers[i].1.fill(Some(Shaken::Known(row)), true);
                continue;
            }
        };
        let (timeout, shared) = (tools.timeout, Arc::clone(&shared));
        std::thread::spawn(move || {
            let slot = &shared.servers[i].1;
            // The answer is given as soon as the server gave it; the slot is filled and done
            // whatever happens, so that a waiter never waits forever.
            let answered = std::panic::catch_unwind(|| {
                shared.limited(|| {
                    handshake::handshake_then(&direct, timeout, |info| {
                        slot.fill(Some(Shaken::Answered(Ok(info.clone()))), false);
                    })
                })
            })
            .map_err(|_| "the handshake failed unexpectedly".to_string())
            .and_then(|r| r.map_err(|f| f.to_string()));
            slot.fill(Some(Shaken::Answered(answered)), true);
        });
    }
    PendingTools { shared }
}

impl PendingTools {
    /// Whether the server registered as `name` passes the gate, waiting for its handshake
    /// (judged as a dry run: nothing recorded). A name the gate does not know does not pass.
    pub(crate) fn admits(&self, name: &str) -> bool {
        let accept = self.shared.accept;
        let Some((c, slot)) = self
            .shared
            .servers
            .iter()
            .find(|(c, _)| c.selected.registered_name == name)
        else {
            return false;
        };
        *slot.admitted.get_or_init(|| match slot.wait(false) {
            Shaken::Known(row) => row.ok,
            Shaken::Answered(Err(_)) => false,
            Shaken::Answered(Ok(info)) => tools_check(c, "", &info, accept, true, Path::new("")).ok,
        })
    }

    /// Wait for every handshake and add its rows to `reports`, which are the candidates', in
    /// their order.
    pub(crate) fn finish(self, reports: &mut [ServerReport], dry_run: bool, ledger_path: &Path) {
        let accept = self.shared.accept;
        for ((c, slot), report) in self.shared.servers.iter().zip(reports.iter_mut()) {
            let info = match slot.wait(true) {
                Shaken::Known(row) => {
                    report.checks.push(row);
                    continue;
                }
                Shaken::Answered(Err(failure)) => {
                    report
                        .checks
                        .push(Check::from_result("handshake", Err(failure)));
                    continue;
                }
                Shaken::Answered(Ok(info)) => info,
            };
            report.checks.push(Check::from_result::<String>(
                "handshake",
                Ok(info.to_string()),
            ));
            let row = tools_check(c, &report.client, &info, accept, dry_run, ledger_path);
            report.checks.push(row);
        }
    }
}

/// The `tools` row of a candidate whose server answered with `info` (for `client`, named in
/// the ledger).
fn tools_check(
    c: &Candidate,
    client: &str,
    info: &handshake::ServerInfo,
    accept: bool,
    dry_run: bool,
    ledger_path: &Path,
) -> Check {
    let s = &c.selected;
    let now = &info.surface;
    let commit = match Release::resolve(&s.prefix, s.server.layout).deployed_commit() {
        Ok((sha, _)) => sha.to_string(),
        Err(e) => {
            let why = format!("{}; its release's commit is unknown: {e}", now.describe());
            return Check::from_result("tools", Err(why));
        }
    };
    let short = &commit[..commit.len().min(12)];
    let by = ledger::Actor::me().user;
    let row = match surface::seen(&s.prefix, &commit, now) {
        Err(e) => Err(e.to_string()),
        Ok(Seen::New) => match dry_run {
            true => Ok(format!(
                "{}: would be recorded as release {short}'s",
                now.describe()
            )),
            false => surface::record(&s.prefix, &commit, now, "first seen", &by)
                .map(|path| {
                    format!(
                        "{}: recorded as release {short}'s in {}",
                        now.describe(),
                        path.display()
                    )
                })
                .map_err(|e| e.to_string()),
        },
        Ok(seen @ Seen::Recorded(_)) => surface::verdict(&seen, now, &commit),
        Ok(Seen::Changed(was, changes)) if accept => {
            let said = format!(
                "{}: accepted over the surface recorded {} by {} ({}): {}",
                now.describe(),
                was.at,
                was.by,
                was.surface.describe(),
                changes.join("; ")
            );
            match dry_run {
                true => Ok(format!("{said} (a dry run: not recorded)")),
                // The ledger first: an acceptance nobody can read of is not made.
                false => {
                    let mut r = ledger::Record::now(
                        client,
                        &s.server.name,
                        &s.registered_name,
                        "tools accepted",
                    );
                    r.old = Some(serde_json::json!({"tools": was.surface.digest}));
                    r.new = Some(serde_json::json!({"tools": now.digest, "changes": changes}));
                    r.commit = Some(commit.clone());
                    ledger::append(ledger_path, &[r])
                        .map_err(|e| format!("not accepted: the ledger cannot be written: {e}"))
                        .and_then(|()| {
                            surface::record(&s.prefix, &commit, now, "accepted", &by)
                                .map_err(|e| e.to_string())
                        })
                        .map(|_| said)
                }
            }
        }
        Ok(seen) => surface::verdict(&seen, now, &commit),
    };
    Check::from_result("tools", row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(places: usize) -> Shared {
        Shared {
            servers: Vec::new(),
            accept: false,
            free: Mutex::new(places),
            freed: Condvar::new(),
        }
    }

    #[test]
    fn a_handshake_that_panics_gives_its_place_back() {
        let s = shared(1);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.limited(|| panic!("a handshake's bug"))
        }));
        assert!(panicked.is_err());
        // The one place is free again: this would wait forever otherwise.
        assert_eq!(s.limited(|| 7), 7);
        assert_eq!(*s.free.lock().unwrap(), 1);
    }

    #[test]
    fn no_more_than_the_places_run_at_once() {
        let s = Arc::new(shared(2));
        let running = Arc::new(Mutex::new((0usize, 0usize))); // (now, most)
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (s, running) = (Arc::clone(&s), Arc::clone(&running));
                std::thread::spawn(move || {
                    s.limited(|| {
                        {
                            let mut r = running.lock().unwrap();
                            r.0 += 1;
                            r.1 = r.1.max(r.0);
                        }
                        std::thread::sleep(Duration::from_millis(20));
                        running.lock().unwrap().0 -= 1;
                    })
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let most = running.lock().unwrap().1;
        assert!((1..=2).contains(&most), "{most} ran at once");
    }

    #[test]
    fn a_waiter_gets_the_answer_before_the_server_has_ended() {
        let slot = Arc::new(Slot::default());
        let answer = || Shaken::Answered(Err("an answer".into()));
        slot.fill(Some(answer()), false);
        // admits waits for the answer only; the rows wait for the end too.
        assert!(matches!(slot.wait(false), Shaken::Answered(Err(e)) if e == "an answer"));
        let ended = Arc::clone(&slot);
        let t = std::thread::spawn(move || ended.wait(true));
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            !t.is_finished(),
            "the rows did not wait for the server's end"
        );
        // The first answer stays: what the end brings does not replace it.
        slot.fill(Some(Shaken::Answered(Err("later".into()))), true);
        assert!(matches!(t.join().unwrap(), Shaken::Answered(Err(e)) if e == "an answer"));
    }
}
