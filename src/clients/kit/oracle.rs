//! The client as the oracle on the host. A doubt that only the client can settle — whether
//! it accepts its whole configuration, where mcp-deploy does not replicate the type of every
//! key the client reads ([`Ask::LoadsConfig`]) — is put to the client's own CLI, at most once
//! per client per run ([`crate::clients::Layers`]), through its kind
//! ([`Kind::loads_config`]): a call that loads the configuration the way the agent's start
//! does and exits 0 only when it accepts it (`codex mcp list --json` through [`ask_cli`];
//! OpenCode's `debug config` on a plugin-free copy of its files). Its exit status is the
//! answer. Its output is never shown: a refusal quotes the value it refused, which may be a
//! secret.
//!
//! The binary asked is the one a client call of this run would run: the one given
//! (`--codex`, `MCP_DEPLOY_CODEX`), else the client's name on `PATH`. No binary, a timeout
//! or a crash leave the doubt as it was, with the reason added: never an answer.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::runner::{self, Runner};
use super::table::About;
#[cfg(doc)]
use super::table::Kind;
use crate::identity::layer::{Ask, Doubt, Effect, Finding};

/// How long the client may take to answer: a listing reads files only (codex 0.171.0: 0.4 s,
/// opencode 1.18.33: 2.5 s).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

/// The client `kind`'s answer ([`Kind::loads_config`]), asked of `binary` at most once a run:
/// a command reads a client's layers more than once (verify-identity's checks, then
/// `--only-deployed`'s), and each reading must not start the client again (OpenCode's answer
/// takes 2.5 s).
pub(crate) fn asked(kind: &dyn super::table::Kind, binary: Option<&Path>) -> Option<Answer> {
    type Key = (&'static str, Option<PathBuf>);
    static ANSWERS: std::sync::Mutex<Vec<(Key, Option<Answer>)>> =
        std::sync::Mutex::new(Vec::new());
    let key: Key = (kind.about().name, binary.map(Path::to_path_buf));
    let mut answers = ANSWERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, answer)) = answers.iter().find(|(k, _)| *k == key) {
        return answer.clone();
    }
    let answer = kind.loads_config(binary);
    answers.push((key, answer.clone()));
    answer
}

/// What the client said to a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// It loaded its whole configuration: the call, as the report says it.
    Accepts(String),
    /// It refused it: the call and its exit, as the report says them.
    Refuses(String),
    /// It could not be asked, or gave no answer: why.
    Unasked(String),
}

impl Answer {
    /// The answer of a call `shown` that ended with `status`; `ran` says what ran it (the
    /// binary, and how).
    pub(crate) fn of_exit(shown: &str, ran: &str, status: std::process::ExitStatus) -> Answer {
        match status.code() {
            Some(0) => Answer::Accepts(format!("`{shown}` ({ran}) exits 0")),
            Some(code) => Answer::Refuses(format!("`{shown}` ({ran}) exits {code}")),
            None => Answer::Unasked(format!("`{shown}` ({ran}) was killed by a signal")),
        }
    }
}

/// The binary a question to the client of `row` goes to: `binary` when given, else the one
/// its variable (`MCP_DEPLOY_CODEX`) names, else its name on `PATH`.
pub(crate) fn binary_to_ask(row: &About, binary: Option<&Path>) -> Result<PathBuf, String> {
    let Some(b) = row.binary.as_ref() else {
        return Err(format!("{} has no CLI to ask", row.name));
    };
    let explicit: Option<PathBuf> = binary
        .map(Path::to_path_buf)
        .or_else(|| crate::dirs::var(b.env).map(PathBuf::from));
    runner::locate(b.name, explicit.as_deref(), row.install_help()).map_err(|e| {
        format!(
            "mcp-deploy could not ask it: {}",
            runner::first_lines(&e.to_string())
        )
    })
}

/// Ask the client of `row` by running its CLI with `args` (and the variables `env`) from
/// mcp-deploy's empty working directory: exit 0 accepts.
pub(crate) fn ask_cli(
    row: &About,
    args: &[&str],
    env: &[(&'static str, &'static str)],
    binary: Option<&Path>,
) -> Answer {
    let binary = match binary_to_ask(row, binary) {
        Ok(b) => b,
        Err(why) => return Answer::Unasked(why),
    };
    let shown = format!(
        "{} {}",
        row.binary.as_ref().map_or(row.name, |b| b.name),
        args.join(" ")
    );
    let runner = match Runner::open(
        row.name,
        Some(&binary),
        true,
        TIMEOUT,
        [("NO_COLOR", "1"), ("RUST_BACKTRACE", "0")]
            .iter()
            .chain(env)
            .map(|(k, v)| (*k, (*v).into()))
            .collect(),
        row.install_help(),
    ) {
        Ok(r) => r,
        Err(e) => {
            return Answer::Unasked(format!(
                "mcp-deploy could not ask it with `{shown}`: {}",
                runner::first_lines(&e.to_string())
            ))
        }
    };
    match runner.call_raw(args, &shown) {
        Ok(out) => Answer::of_exit(&shown, &binary.display().to_string(), out.status),
        Err(e) => Answer::Unasked(format!(
            "`{shown}` gave no answer: {}",
            runner::first_lines(&e.to_string())
        )),
    }
}

/// `finding` with its doubt settled by `answer` (asked only when the finding holds a doubt the
/// client can answer): accepted is [`Effect::Answered`], refused is [`Effect::Blocked`], no
/// answer keeps the doubt with why.
pub(crate) fn settle(finding: Finding, answer: impl FnOnce() -> Option<Answer>) -> Finding {
    let Effect::NotCompared(Doubt {
        why,
        ask: Some(Ask::LoadsConfig),
    }) = &finding.effect
    else {
        return finding;
    };
    let effect = match answer() {
        None => return finding,
        Some(Answer::Accepts(how)) => Effect::Answered(format!(
            "the client accepts its whole configuration, as it says on this host: {how} (in \
             doubt: {why})"
        )),
        Some(Answer::Refuses(how)) => Effect::Blocked(format!(
            "the client refuses its whole configuration and loads no server: {how} (run it to \
             see why; in doubt: {why})"
        )),
        Some(Answer::Unasked(no)) => Effect::NotCompared(format!("{why}; {no}").into()),
    };
    Finding::new(finding.source, effect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doubt() -> Finding {
        Finding::new(
            "/h/config.toml",
            Effect::NotCompared(Doubt::loads_config("keys not checked: tui")),
        )
    }

    #[test]
    fn only_the_clients_yes_passes_a_doubt() {
        let yes = settle(doubt(), || Some(Answer::Accepts("`x` exits 0".into())));
        assert!(!yes.fails(), "{yes:?}");
        assert!(yes.describe("ct").contains("`x` exits 0"), "{yes:?}");
        let no = settle(doubt(), || Some(Answer::Refuses("`x` exits 1".into())));
        assert!(
            matches!(no.effect, Effect::Blocked(_)) && no.fails(),
            "{no:?}"
        );
        let unasked = settle(doubt(), || Some(Answer::Unasked("no codex on PATH".into())));
        assert!(unasked.fails(), "{unasked:?}");
        assert!(
            unasked.describe("ct").contains("tui; no codex on PATH"),
            "{unasked:?}"
        );
        // A client without such a call leaves the doubt as it is.
        assert_eq!(settle(doubt(), || None), doubt());
    }

    #[test]
    fn a_doubt_the_client_cannot_answer_is_never_asked() {
        let plain = Finding::new("/etc/x", Effect::not_compared("unreadable"));
        let asked = std::cell::Cell::new(false);
        let out = settle(plain.clone(), || {
            asked.set(true);
            Some(Answer::Accepts("yes".into()))
        });
        assert!(!asked.get() && out == plain && out.fails());
    }
}
