//! What a command's `--help` and its man page say beyond the flags, written once as data:
//! examples, exit status, files and environment (issue 23, item 14). [`command`] puts them
//! into clap's `after_help` (a one-line exit status, for `-h`) and `after_long_help` (all of
//! it, for `--help`); `mcp-deploy man` renders the same rows as the EXAMPLES, EXIT STATUS,
//! FILES and ENVIRONMENT sections, so the two cannot drift apart. The examples are parsed by
//! the command line in a unit test, so none names a flag that does not exist.

use clap::CommandFactory;

use super::{Cli, Format};

/// One command's page: `path` is the command under `mcp-deploy` (`[]` for the top level,
/// `["manifest", "verify"]` for a nested one).
pub struct Page {
    pub path: &'static [&'static str],
    /// `(command line, what it does)`.
    pub examples: &'static [(&'static str, &'static str)],
    /// `(code, meaning)`.
    pub exit_status: &'static [(u8, &'static str)],
    /// `(path, what it is)`.
    pub files: &'static [(&'static str, &'static str)],
    /// `(variable, what it does)`.
    pub environment: &'static [(&'static str, &'static str)],
}

/// Where the docs pages are installed (the Debian package's `/usr/share/doc/mcp-deploy/`, the
/// repository's `docs/`): what help text points to, never a repository path.
pub const DOC_DIR: &str = "/usr/share/doc/mcp-deploy";

const CHECKS: &[(u8, &str)] = &[
    (0, "every check passed"),
    (
        1,
        "it ran and a check failed (the report says which, with evidence)",
    ),
    (
        2,
        "it could not run: a usage error, unreadable or malformed input, the client CLI \
         missing, failing or timing out; a help: line says what to do",
    ),
];

const FLAT: (&str, &str) = (
    "~/.claude/mcp-registered.json",
    "the flat registration document, {\"mcpServers\":{...}} as the client reports it \
     ($CLAUDE_CONFIG_DIR/mcp-registered.json when that is set; --registered FILE)",
);
const RENDERED: (&str, &str) = (
    "PREFIX/mcp/NAME.mcp.json",
    "the rendered registration of one server (render-mcp, install)",
);
const CLAUDE_JSON: (&str, &str) = (
    "~/.claude.json",
    "Claude Code's user configuration, changed only through `claude mcp` \
     ($CLAUDE_CONFIG_DIR/.claude.json when that is set)",
);
const STATE: (&str, &str) = (
    "~/.claude/.mcp-deploy/",
    "locks and the journal of an interrupted run, recovered by the next one",
);
const LEDGER: (&str, &str) = (
    "$XDG_STATE_HOME/mcp-deploy/ledger.ndjson",
    "the audit ledger every change is appended to (--ledger FILE)",
);
const LAYOUT: (&str, &str) = (
    "PREFIX/releases/SHA/, PREFIX/current",
    "a release layout: each release in releases/, the live one the target of current",
);
const DOCS: (&str, &str) = (
    "/usr/share/doc/mcp-deploy/",
    "the full documentation (commands.md, formats.md, operations.md, security.md, ...)",
);

const CLAUDE_CONFIG_DIR: (&str, &str) = (
    "CLAUDE_CONFIG_DIR",
    "Claude Code's configuration directory [default: ~/.claude], honoured as claude does",
);
const BINARIES: (&str, &str) = (
    "MCP_DEPLOY_<CLIENT>",
    "a client's binary, as --<client> PATH: MCP_DEPLOY_CLAUDE, MCP_DEPLOY_CODEX, and so for \
     every client with a binary (`mcp-deploy clients` lists each one's variable) [default: \
     the name on PATH]",
);
const MCP_TIMEOUT: (&str, &str) = (
    "MCP_TIMEOUT",
    "as --mcp-timeout: how long `claude mcp get` may health-check a server",
);
const CLIENT_HOMES: (&str, &str) = (
    "CODEX_HOME, GEMINI_CLI_HOME, XDG_CONFIG_HOME",
    "where the other clients keep their configuration, honoured as they do",
);
const NO_COLOR: (&str, &str) = (
    "NO_COLOR, TERM",
    "NO_COLOR set or TERM=dumb turns off the colour of the reports that colour ok and FAIL (their colour choice auto)",
);

/// Every page, the top level first.
pub const PAGES: &[Page] = &[
    Page {
        path: &[],
        examples: &[
            ("mcp-deploy sample /tmp/demo", "lay out a sample deployment to try it on"),
            (
                "mcp-deploy install --root /tmp/demo --name-suffix -test",
                "register codetools-test and orchestrata-test, and verify them",
            ),
            ("mcp-deploy man install", "the page of one command"),
        ],
        exit_status: CHECKS,
        files: &[FLAT, CLAUDE_JSON, DOCS],
        environment: &[CLAUDE_CONFIG_DIR, BINARIES, NO_COLOR],
    },
    Page {
        path: &["render-mcp"],
        examples: &[(
            "mcp-deploy render-mcp --prefix /opt/codetools",
            "write /opt/codetools/mcp/codetools.mcp.json",
        )],
        exit_status: &[(0, "written"), (2, "could not run")],
        files: &[RENDERED],
        environment: &[],
    },
    Page {
        path: &["verify-identity"],
        examples: &[
            (
                "mcp-deploy verify-identity --prefix /opt/codetools --expect-commit c0de7001c0de7001c0de7001c0de7001c0de7001",
                "what CI runs on the host",
            ),
            (
                "mcp-deploy verify-identity --prefix /tmp/demo/codetools --name codetools-test --expect-commit c0de7001c0de7001c0de7001c0de7001c0de7001 --json",
                "a test install, as one JSON object",
            ),
        ],
        exit_status: CHECKS,
        files: &[FLAT, CLAUDE_JSON, LAYOUT],
        environment: &[CLAUDE_CONFIG_DIR, CLIENT_HOMES, NO_COLOR],
    },
    Page {
        path: &["install"],
        examples: &[
            (
                "mcp-deploy install --root /tmp/demo --name-suffix -test --dry-run",
                "what would change",
            ),
            (
                "mcp-deploy install --root /tmp/demo --name-suffix -test",
                "register codetools-test and orchestrata-test",
            ),
            ("mcp-deploy install", "every declared server from its prefix under /opt"),
        ],
        exit_status: CHECKS,
        files: &[RENDERED, FLAT, CLAUDE_JSON, STATE, LEDGER],
        environment: &[CLAUDE_CONFIG_DIR, BINARIES, MCP_TIMEOUT, CLIENT_HOMES, NO_COLOR],
    },
    Page {
        path: &["uninstall"],
        examples: &[(
            "mcp-deploy uninstall --root /tmp/demo --name-suffix -test",
            "remove what the matching install registered (test teardown)",
        )],
        exit_status: CHECKS,
        files: &[FLAT, CLAUDE_JSON, STATE, LEDGER],
        environment: &[CLAUDE_CONFIG_DIR, BINARIES, CLIENT_HOMES, NO_COLOR],
    },
    Page {
        path: &["status"],
        examples: &[(
            "mcp-deploy status --prefix /tmp/demo --name-suffix -test",
            "read-only: does everything agree?",
        )],
        exit_status: &[
            (0, "everything agrees"),
            (1, "something drifted (the report says what)"),
            (2, "could not run"),
        ],
        files: &[RENDERED, FLAT, CLAUDE_JSON],
        environment: &[CLAUDE_CONFIG_DIR, BINARIES, CLIENT_HOMES, NO_COLOR],
    },
    Page {
        path: &["reconcile"],
        examples: &[
            (
                "mcp-deploy reconcile --prefix /tmp/demo --name-suffix -test --dry-run",
                "what drifted, and what would be healed",
            ),
            (
                "mcp-deploy reconcile --root /opt",
                "nothing drifted: exit 0, no client started; else heal exactly what drifted",
            ),
        ],
        exit_status: &[
            (0, "everything agrees, or what drifted was healed"),
            (
                1,
                "a check failed (after healing; or, with --dry-run, something drifted)",
            ),
            (2, "could not run"),
        ],
        files: &[RENDERED, FLAT, CLAUDE_JSON, STATE, LEDGER],
        environment: &[CLAUDE_CONFIG_DIR, BINARIES, MCP_TIMEOUT, CLIENT_HOMES, NO_COLOR],
    },
    Page {
        path: &["report"],
        examples: &[
            (
                "mcp-deploy report web-1.json web-2.json web-3.json",
                "the fleet as one table: host by server, release, commit, checks, drift",
            ),
            (
                "mcp-deploy report --json reports/web-1.json reports/web-2.json",
                "the merged view as one JSON object",
            ),
            (
                "mcp-deploy report --max-age 1h --expect-host web-1,web-2 reports/*.json",
                "also fail a host whose report is over an hour old, or that sent none",
            ),
        ],
        exit_status: &[
            (0, "every host's report passed"),
            (
                1,
                "a host failed (a check of any current report failed, or its run could not \
                 complete), or its report is older than --max-age or dated ahead of this \
                 clock, or an --expect-host has none",
            ),
            (2, "a file cannot be read or is not an mcp-deploy JSON report"),
        ],
        files: &[],
        environment: &[],
    },
    Page {
        path: &["exec"],
        examples: &[(
            "mcp-deploy exec --prefix /opt/codetools -- mcp serve",
            "start codetools as checked: the pinned release, the hashed file, the declared \
             environment (what a client runs instead of the server)",
        )],
        exit_status: &[
            (0, "never: on a pass this process becomes the server, whose exit is its own"),
            (
                1,
                "a check refused the launch (release, pin, commit, manifest, content, \
                 interpreter, args): nothing started",
            ),
            (2, "could not run (a usage error, a malformed declaration, an exec that failed)"),
        ],
        files: &[
            (
                "<prefix>/.mcp-deploy/pin.json",
                "the release a checked launch may start, recorded by install and promote",
            ),
            (
                "$XDG_STATE_HOME/mcp-deploy/ledger.ndjson",
                "a refused launch is recorded there",
            ),
        ],
        environment: &[],
    },
    Page {
        path: &["clients"],
        examples: &[
            (
                "mcp-deploy clients",
                "every client: binary, package, supported range, config file, and what is here",
            ),
            (
                "mcp-deploy clients --client claude,codex --format json",
                "two clients as one JSON object, for a script",
            ),
            (
                "mcp-deploy clients --claude /opt/claude/bin/claude",
                "which release that binary is, and whether install would accept it",
            ),
        ],
        exit_status: &[
            (
                0,
                "listed (a client not found, out of range or whose release could not be told \
                 is a state of its row)",
            ),
            (2, "could not run (a usage error)"),
        ],
        files: &[(
            "$XDG_CACHE_HOME/mcp-deploy/client-versions.json",
            "the releases learnt from `<bin> --version`, by binary, so that it is run once",
        )],
        environment: &[BINARIES, CLAUDE_CONFIG_DIR, CLIENT_HOMES],
    },
    Page {
        path: &["sample"],
        examples: &[(
            "mcp-deploy sample /tmp/demo",
            "/tmp/demo/codetools (a release layout) and /tmp/demo/orchestrata (a prefix)",
        )],
        exit_status: &[(0, "laid out"), (2, "could not run")],
        files: &[],
        environment: &[],
    },
    Page {
        path: &["manifest"],
        examples: &[
            ("mcp-deploy manifest create /opt/codetools/releases/c0de7001c0de7001c0de7001c0de7001c0de7001", "write MANIFEST.sha256"),
            ("mcp-deploy manifest verify /opt/codetools/releases/c0de7001c0de7001c0de7001c0de7001c0de7001", "check the files against it"),
        ],
        exit_status: &[
            (0, "written, or the release matches"),
            (1, "it does not match"),
            (2, "could not run"),
        ],
        files: &[("DIR/MANIFEST.sha256", "the release's content manifest")],
        environment: &[],
    },
    Page {
        path: &["manifest", "create"],
        examples: &[(
            "mcp-deploy manifest create /opt/codetools/releases/c0de7001c0de7001c0de7001c0de7001c0de7001",
            "write the release's MANIFEST.sha256",
        )],
        exit_status: &[(0, "written"), (2, "could not run")],
        files: &[("DIR/MANIFEST.sha256", "the manifest written")],
        environment: &[],
    },
    Page {
        path: &["manifest", "verify"],
        examples: &[(
            "mcp-deploy manifest verify /opt/codetools/releases/c0de7001c0de7001c0de7001c0de7001c0de7001",
            "check the release's files against its MANIFEST.sha256",
        )],
        exit_status: &[
            (0, "the release matches"),
            (1, "it does not"),
            (2, "could not check"),
        ],
        files: &[("DIR/MANIFEST.sha256", "the manifest checked against")],
        environment: &[],
    },
    Page {
        path: &["verify-vendor"],
        examples: &[(
            "mcp-deploy verify-vendor vendor --manifest sdk-release.json",
            "every vendored tarball against its sidecar, the manifest and the lockfile",
        )],
        exit_status: &[
            (0, "every artifact verified"),
            (1, "a check failed"),
            (
                2,
                "could not run (DIR missing, a malformed --manifest, package.json or lockfile)",
            ),
        ],
        files: &[
            ("DIR/*.tgz.sha256", "each tarball's sidecar"),
            ("package-lock.json", "the lockfile whose integrity each tarball must match"),
        ],
        environment: &[],
    },
    Page {
        path: &["pin-vendor"],
        examples: &[(
            "mcp-deploy pin-vendor vendor/sdk-1.2.3.tgz --manifest sdk-release.json",
            "write vendor/sdk-1.2.3.tgz.sha256 once the manifest agrees",
        )],
        exit_status: &[
            (0, "written"),
            (1, "refused (the manifest lacks the file or disagrees)"),
            (2, "could not run"),
        ],
        files: &[("TARBALL.sha256", "the sidecar written")],
        environment: &[],
    },
    Page {
        path: &["completions"],
        examples: &[(
            "mcp-deploy completions bash > /etc/bash_completion.d/mcp-deploy",
            "bash completion",
        )],
        exit_status: &[(0, "printed"), (2, "could not run")],
        files: &[],
        environment: &[],
    },
    Page {
        path: &["man"],
        examples: &[
            ("mcp-deploy man install | man -l -", "read install's page"),
            ("mcp-deploy man manifest verify", "a nested command's page"),
        ],
        exit_status: &[(0, "printed"), (2, "no such command")],
        files: &[],
        environment: &[],
    },
    Page {
        path: &["promote"],
        examples: &[
            (
                "mcp-deploy promote --prefix /opt/codetools --release c0de7001c0de7001c0de7001c0de7001c0de7001 --dry-run",
                "check the release and say whether current would switch",
            ),
            (
                "mcp-deploy promote --prefix /opt/codetools --release c0de7001c0de7001c0de7001c0de7001c0de7001",
                "make it live, register and verify, all undone on failure",
            ),
        ],
        exit_status: &[
            (0, "promoted and verified"),
            (
                1,
                "a check failed (before the switch: nothing changed; after it: everything was \
                 put back)",
            ),
            (2, "could not run"),
        ],
        files: &[LAYOUT, RENDERED, FLAT, CLAUDE_JSON, STATE, LEDGER],
        environment: &[CLAUDE_CONFIG_DIR, BINARIES, MCP_TIMEOUT, CLIENT_HOMES, NO_COLOR],
    },
    Page {
        path: &["rollback"],
        examples: &[
            ("mcp-deploy rollback --prefix /opt/codetools", "back to the release live before"),
            (
                "mcp-deploy rollback --prefix /opt/codetools --to c0de7001c0de7001c0de7001c0de7001c0de7001",
                "back to a named release",
            ),
        ],
        exit_status: &[
            (0, "rolled back and verified"),
            (1, "a check failed (everything put back)"),
            (2, "could not run (no previous release in the history, say)"),
        ],
        files: &[LAYOUT, RENDERED, FLAT, CLAUDE_JSON, STATE, LEDGER],
        environment: &[CLAUDE_CONFIG_DIR, BINARIES, MCP_TIMEOUT, CLIENT_HOMES, NO_COLOR],
    },
    Page {
        path: &["prune"],
        examples: &[
            (
                "mcp-deploy prune --prefix /opt/codetools --keep 3 --dry-run",
                "what would be removed, and why the others stay",
            ),
            ("mcp-deploy prune --prefix /opt/codetools --keep 3", "remove them"),
        ],
        exit_status: &[(0, "pruned (or, with --dry-run, listed)"), (2, "could not run")],
        files: &[LAYOUT, FLAT],
        environment: &[CLAUDE_CONFIG_DIR],
    },
    Page {
        path: &["policy"],
        examples: &[
            (
                "mcp-deploy policy --root /opt --format file",
                "the managed-settings.json fragment, for configuration management",
            ),
            (
                "mcp-deploy policy --root /opt --write --dry-run",
                "what --write would change in the policy file",
            ),
            ("mcp-deploy policy --root /opt --write", "write it (as root)"),
        ],
        exit_status: &[
            (0, "derived (and, with --write, written or already in place)"),
            (
                2,
                "could not run: a client not supported yet, a command under releases/, a policy \
                 file claude could not parse, no permission to write it",
            ),
        ],
        files: &[
            (
                "/etc/claude-code/managed-settings.json",
                "Claude Code's managed settings: allowedMcpServers, allowManagedMcpServersOnly \
                 and mcpDeployAllowedMcpServers (the entries mcp-deploy made)",
            ),
            (
                "/etc/claude-code/.mcp-deploy/",
                "the policy's lock and the journal of an interrupted --write, rolled back by the \
                 next one",
            ),
        ],
        environment: &[],
    },
];

/// The page of the command at `path`, if one is written.
pub fn page(path: &[&str]) -> Option<&'static Page> {
    PAGES.iter().find(|p| p.path == path)
}

/// `man mcp-deploy-install`: the man page a command's help points to.
pub fn man_name(path: &[&str]) -> String {
    std::iter::once("mcp-deploy")
        .chain(path.iter().copied())
        .collect::<Vec<_>>()
        .join("-")
}

/// The one-line exit status `-h` shows.
fn short_help(page: &Page) -> String {
    let codes: Vec<String> = page
        .exit_status
        .iter()
        .map(|(c, m)| {
            format!(
                "{c} {}",
                m.split([':', ';', '(']).next().unwrap_or(m).trim()
            )
        })
        .collect();
    format!(
        "Exit status: {}. More: `--help`, `man {}`.",
        codes.join(", "),
        man_name(page.path)
    )
}

/// Everything `--help` shows after the flags.
fn long_help(page: &Page) -> String {
    let mut out = String::new();
    if !page.examples.is_empty() {
        out.push_str("Examples:\n");
        for (cmd, what) in page.examples {
            out.push_str(&format!("  {cmd}\n      {what}\n"));
        }
        out.push('\n');
    }
    out.push_str("Exit status:\n");
    for (code, what) in page.exit_status {
        out.push_str(&format!("  {code}  {what}\n"));
    }
    for (title, rows) in [("Files", page.files), ("Environment", page.environment)] {
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{title}:\n"));
        for (name, what) in rows {
            out.push_str(&format!("  {name}\n      {what}\n"));
        }
    }
    out.push_str(&format!(
        "\nSee also: `mcp-deploy man {}| man -l -` (this page as a man page; the Debian package \
         also installs it as man {}); the documentation in {DOC_DIR}/ (commands.md: every \
         command).",
        page.path
            .iter()
            .map(|w| format!("{w} "))
            .collect::<String>(),
        man_name(page.path)
    ));
    out
}

/// The command line with every page's text in its help: what parsing, `--help` and
/// `mcp-deploy man` all use.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    for page in PAGES {
        cmd = with_page(cmd, page.path, page);
    }
    words_are_not_files(without_prometheus(cmd))
}

/// The values that name no file (a server, a suffix, a sha, a duration, a count, a host, a
/// client list) complete to nothing rather than to the file names of the working directory
/// (clap_complete's default for a value without a hint).
fn words_are_not_files(cmd: clap::Command) -> clap::Command {
    const WORDS: [&str; 9] = [
        "NAME",
        "REGISTERED_NAME",
        "SUFFIX",
        "SHA",
        "[NAME=]SHA",
        "DURATION",
        "N",
        "HOST",
        "LIST",
    ];
    let ids: Vec<String> = cmd
        .get_arguments()
        .filter(|a| {
            a.get_value_hint() == clap::ValueHint::Unknown
                && a.get_value_names()
                    .is_some_and(|n| n.iter().all(|n| WORDS.contains(&n.as_str())))
        })
        .map(|a| a.get_id().to_string())
        .collect();
    let mut cmd = cmd;
    for id in ids {
        cmd = cmd.mut_arg(id, |a| a.value_hint(clap::ValueHint::Other));
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, words_are_not_files);
    }
    cmd
}

/// `--format` of a check report offers prometheus only where it prints it (status,
/// verify-identity, reconcile): elsewhere neither its help, its completions nor its parser
/// offer a value the command would refuse.
fn without_prometheus(cmd: clap::Command) -> clap::Command {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    use clap::ValueEnum;
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut cmd = cmd;
    for name in names {
        let takes_it = super::PROMETHEUS_COMMANDS.contains(&name.as_str());
        cmd = cmd.mut_subcommand(&name, |sub| {
            let sub = without_prometheus(sub);
            let has_format = sub.get_arguments().any(|a| {
                a.get_id() == "format"
                    && a.get_possible_values()
                        .iter()
                        .any(|v| v.get_name() == "prometheus")
            });
            if takes_it || !has_format {
                return sub;
            }
            sub.mut_arg("format", |a| {
                a.help(
                    "How to print the report: human; json (one object); junit (JUnit XML, a test \
                     suite per server and client, a test case per check); github (GitHub Actions \
                     workflow commands, an ::error annotation per failed check) [default: human]",
                )
                .value_parser(
                    PossibleValuesParser::new(["human", "json", "junit", "github"])
                        .map(|v| Format::from_str(&v, true).expect("one of Format's values")),
                )
            })
        });
    }
    cmd
}

fn with_page(cmd: clap::Command, path: &[&str], page: &'static Page) -> clap::Command {
    match path.split_first() {
        None => cmd
            .after_help(short_help(page))
            .after_long_help(long_help(page)),
        Some((first, rest)) => cmd.mut_subcommand(*first, |sub| with_page(sub, rest, page)),
    }
}

/// Parse the process's arguments with [`command`].
pub fn try_parse() -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let matches = command().try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(cmd: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(prefix.clone());
        for sub in cmd.get_subcommands() {
            let mut p = prefix.clone();
            p.push(sub.get_name().to_string());
            paths(sub, p, out);
        }
    }

    #[test]
    fn every_command_has_a_page_and_every_page_a_command() {
        let mut all = Vec::new();
        paths(&command(), Vec::new(), &mut all);
        for p in &all {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            assert!(
                page(&p).is_some(),
                "no page for `mcp-deploy {}`",
                p.join(" ")
            );
        }
        for page in PAGES {
            let p: Vec<String> = page.path.iter().map(|s| s.to_string()).collect();
            assert!(all.contains(&p), "a page for no command: {:?}", page.path);
        }
    }

    #[test]
    fn every_example_parses() {
        for page in PAGES {
            for (example, _) in page.examples {
                // The shell's part (a pipe, a redirection) is not the command's.
                let line = example.split(['|', '>']).next().unwrap();
                let argv: Vec<&str> = line.split_whitespace().collect();
                assert_eq!(argv[0], "mcp-deploy", "{example}");
                assert!(
                    argv[1..].len() >= page.path.len() && argv[1..=page.path.len()] == *page.path,
                    "an example on {:?}'s page runs another command: {example}",
                    page.path
                );
                if let Err(e) = command().try_get_matches_from(&argv) {
                    panic!("the example `{example}` does not parse:\n{e}");
                }
            }
        }
    }

    #[test]
    fn every_page_has_an_exit_status_for_success_and_could_not_run() {
        for page in PAGES {
            let codes: Vec<u8> = page.exit_status.iter().map(|(c, _)| *c).collect();
            assert!(codes.contains(&0) && codes.contains(&2), "{:?}", page.path);
        }
    }
}
