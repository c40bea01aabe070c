//! A request the command line cannot carry out as given (exit 2), with the line telling the
//! user what to give instead. A leaf: the domain returns it for what the user asked wrongly,
//! and the run's error (`error.rs`, above the domain) wraps it.

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct UsageError {
    pub(crate) message: String,
    pub(crate) help: String,
}

impl UsageError {
    pub(crate) fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        UsageError {
            message: message.into(),
            help: help.into(),
        }
    }

    pub(crate) fn help(&self) -> Option<String> {
        Some(self.help.clone())
    }
}

/// The user's own command line, to rewrite into the one that would work for a `help:` line
/// (`--prefix /tmp/demo` → `--prefix /tmp/demo/codetools`): the user can copy it as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandLine {
    /// The arguments after the program's name.
    args: Vec<String>,
}

impl CommandLine {
    /// This process's command line.
    pub(crate) fn current() -> CommandLine {
        CommandLine::from_args(
            std::env::args_os()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned()),
        )
    }

    pub(crate) fn from_args(args: impl IntoIterator<Item = impl Into<String>>) -> CommandLine {
        CommandLine {
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// Every `FLAG VALUE` or `FLAG=VALUE` of any of `spellings` (a long flag and its short
    /// form: `-p VALUE`, `-pVALUE`) becomes `NEW_FLAG VALUE`, the value given in place of the
    /// first and the others dropped (a flag given once is the usual case).
    pub(crate) fn replace(
        mut self,
        spellings: &[&str],
        new_flag: &str,
        value: &str,
    ) -> CommandLine {
        let mut out = Vec::with_capacity(self.args.len());
        let mut done = false;
        let mut it = std::mem::take(&mut self.args).into_iter();
        while let Some(a) = it.next() {
            let matched = if spellings.contains(&a.as_str()) {
                it.next();
                true
            } else {
                spellings.iter().any(|flag| match a.strip_prefix(flag) {
                    Some(rest) if flag.starts_with("--") => rest.starts_with('='),
                    Some(rest) => !rest.is_empty(),
                    None => false,
                })
            };
            if !matched {
                out.push(a);
            } else if !done {
                out.push(new_flag.to_string());
                out.push(value.to_string());
                done = true;
            }
        }
        if !done {
            out.push(new_flag.to_string());
            out.push(value.to_string());
        }
        self.args = out;
        self
    }

    /// `FLAG VALUE` added unless the same flag and value are already there.
    pub(crate) fn ensure(mut self, flag: &str, value: &str) -> CommandLine {
        let present = self.args.windows(2).any(|w| w[0] == flag && w[1] == value)
            || self.args.iter().any(|a| *a == format!("{flag}={value}"));
        if !present {
            self.args.push(flag.to_string());
            self.args.push(value.to_string());
        }
        self
    }
}

impl std::fmt::Display for CommandLine {
    /// As a POSIX shell would take it: `mcp-deploy` and each argument, quoted where needed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mcp-deploy")?;
        for a in &self.args {
            write!(f, " {}", shell_quoted(a))?;
        }
        Ok(())
    }
}

/// `s` as one shell word: as it is when it holds only characters no shell treats specially,
/// else in single quotes.
fn shell_quoted(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./,:=@%+".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::CommandLine;

    fn line(args: &[&str]) -> CommandLine {
        CommandLine::from_args(args.iter().copied())
    }

    #[test]
    fn replace_rewrites_the_flag_and_keeps_every_other_argument_in_place() {
        let l = line(&[
            "verify-identity",
            "--prefix",
            "/tmp/demo",
            "--name",
            "x-test",
        ]);
        assert_eq!(
            l.replace(&["--prefix", "-p"], "--prefix", "/tmp/demo/codetools")
                .to_string(),
            "mcp-deploy verify-identity --prefix /tmp/demo/codetools --name x-test"
        );
    }

    #[test]
    fn replace_takes_the_equals_form_and_renames_the_flag() {
        let l = line(&["status", "--root=/opt/codetools", "--json"]);
        assert_eq!(
            l.replace(&["--root", "-r"], "--root", "/opt")
                .ensure("--server", "codetools")
                .to_string(),
            "mcp-deploy status --root /opt --json --server codetools"
        );
    }

    /// The help line of `verify-identity -p /tmp/demo` kept `-p /tmp/demo` beside the
    /// `--prefix /tmp/demo/codetools` it added: a command clap refuses.
    #[test]
    fn replace_takes_the_short_form_given_apart_or_attached() {
        for given in [&["-p", "/tmp/demo"][..], &["-p/tmp/demo"][..]] {
            let mut args = vec!["verify-identity"];
            args.extend_from_slice(given);
            args.extend(["-e", "abc"]);
            assert_eq!(
                line(&args)
                    .replace(&["--prefix", "-p"], "--prefix", "/tmp/demo/codetools")
                    .to_string(),
                "mcp-deploy verify-identity --prefix /tmp/demo/codetools -e abc",
                "{given:?}"
            );
        }
    }

    #[test]
    fn ensure_does_not_repeat_a_flag_already_given() {
        let l = line(&["status", "--server", "codetools"]);
        assert_eq!(
            l.ensure("--server", "codetools").to_string(),
            "mcp-deploy status --server codetools"
        );
    }

    #[test]
    fn arguments_a_shell_would_split_are_quoted() {
        let l = line(&["x", "/tmp/a b", "it's", ""]);
        assert_eq!(l.to_string(), r"mcp-deploy x '/tmp/a b' 'it'\''s' ''");
    }
}
