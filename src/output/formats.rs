//! The machine formats of a check report besides JSON: JUnit XML and GitHub Actions workflow
//! commands. Every report (identity checks, a promotion, vendored artifacts, a release's
//! content) is first said as [`Suites`] — a suite per server and client, a case per check —
//! and both formats are written from that one shape, so a failed check is a `<failure>` and
//! an `::error` alike, whichever command found it.
//!
//! - JUnit (`--format junit`): the de-facto schema the CI systems read (Jenkins, GitLab,
//!   Azure, the test-reporter actions): `<testsuites tests failures errors>`, a
//!   `<testsuite name tests failures errors skipped>` per server, a `<testcase classname name>`
//!   per check, `<failure message type="check">` with the detail for a failed one, the
//!   evidence of a pass as `<system-out>`. A run that could not complete (exit 2) is one
//!   testcase with an `<error>`. XML 1.0 escaping, the characters it cannot carry replaced.
//! - GitHub (`--format github`): `::error title=<server> <check>::<detail>` per failed check
//!   (data escaped `%`, CR, LF; properties also `:` and `,`, as GitHub's toolkit does), a
//!   plain line per passing check (never one that starts a workflow command), and a
//!   `::notice` with the verdict. A verdict that fails without any failed check (a promote
//!   that was put back, say) is an `::error` itself, so that a failing job is never without
//!   an annotation.

/// A report as the machine formats see it.
pub(crate) struct Suites {
    /// The command, for the outer names and titles: `mcp-deploy verify-identity`.
    pub(crate) command: &'static str,
    pub(crate) suites: Vec<Suite>,
    /// Whether the run passed (its exit status is 0).
    pub(crate) ok: bool,
    /// What the run concluded, beyond the count of checks (promote's result, say).
    pub(crate) verdict: Option<String>,
}

/// One server in one client (or one vendor directory, one release).
pub(crate) struct Suite {
    /// What a person reads: `codetools (registered as codetools-test) in codex`.
    pub(crate) name: String,
    /// The class of its cases: the registered name (with ` in <client>` beyond claude).
    pub(crate) classname: String,
    pub(crate) cases: Vec<Case>,
    /// Lines about the suite that are not checks (what happened to the registration).
    pub(crate) out: Vec<String>,
}

/// One check.
pub(crate) struct Case {
    /// The class of the case when it is not the suite's (verify-vendor: the tarball).
    pub(crate) classname: Option<String>,
    pub(crate) name: String,
    pub(crate) ok: bool,
    pub(crate) detail: String,
    /// Not run (JUnit `<skipped>`, a plain line in GitHub's): passes nothing.
    pub(crate) skipped: bool,
}

impl Suites {
    fn failed(&self) -> usize {
        self.cases().filter(|(_, c)| !c.ok).count()
    }

    fn total(&self) -> usize {
        self.cases().count()
    }

    fn cases(&self) -> impl Iterator<Item = (&Suite, &Case)> {
        self.suites
            .iter()
            .flat_map(|s| s.cases.iter().map(move |c| (s, c)))
    }

    /// The verdict in a sentence: the count of checks, then what the run concluded.
    pub(crate) fn verdict_line(&self) -> String {
        let (failed, total) = (self.failed(), self.total());
        let counted = if failed > 0 {
            format!("{failed} of {total} check(s) failed")
        } else if total == 0 {
            // uninstall's report: what happened to each name, and no check.
            "no checks ran".to_string()
        } else if total == 1 {
            "the 1 check passed".to_string()
        } else {
            format!("all {total} checks passed")
        };
        match &self.verdict {
            Some(v) => format!("{counted}; {v}"),
            None => counted,
        }
    }

    /// Whether the run failed without a failed check to show for it.
    fn fails_without_a_failed_check(&self) -> bool {
        !self.ok && self.failed() == 0
    }
}

/// The report as JUnit XML.
pub(crate) fn junit(r: &Suites) -> String {
    let mut suites = Vec::new();
    for s in &r.suites {
        suites.push(suite_xml(s, &s.cases));
    }
    if r.fails_without_a_failed_check() {
        // A failure with no failed check (a promote put back): a case of its own, so that the
        // CI's count agrees with the exit status.
        let s = Suite {
            name: format!("mcp-deploy {}", r.command),
            classname: "mcp-deploy".into(),
            cases: vec![Case {
                skipped: false,
                classname: None,
                name: r.command.to_string(),
                ok: false,
                detail: r.verdict.clone().unwrap_or_else(|| "failed".into()),
            }],
            out: Vec::new(),
        };
        suites.push(suite_xml(&s, &s.cases));
    }
    let failures = r.failed() + usize::from(r.fails_without_a_failed_check());
    let tests = r.total() + usize::from(r.fails_without_a_failed_check());
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">\n",
        attr(&format!("mcp-deploy {}", r.command))
    ));
    for s in suites {
        out.push_str(&s);
    }
    out.push_str("</testsuites>\n");
    out
}

fn suite_xml(s: &Suite, cases: &[Case]) -> String {
    let failures = cases.iter().filter(|c| !c.ok).count();
    let skipped = cases.iter().filter(|c| c.skipped).count();
    let mut out = format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n",
        attr(&s.name),
        cases.len()
    );
    for c in cases {
        let class = c.classname.as_deref().unwrap_or(&s.classname);
        out.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\">\n",
            attr(class),
            attr(&c.name)
        ));
        if c.skipped {
            out.push_str(&format!(
                "      <skipped message=\"{}\"/>\n",
                attr(&c.detail)
            ));
        } else if c.ok {
            out.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                text(&c.detail)
            ));
        } else {
            out.push_str(&format!(
                "      <failure message=\"{}\" type=\"check\">{}</failure>\n",
                attr(&c.detail),
                text(&c.detail)
            ));
        }
        out.push_str("    </testcase>\n");
    }
    if !s.out.is_empty() {
        out.push_str(&format!(
            "    <system-out>{}</system-out>\n",
            text(&s.out.join("\n"))
        ));
    }
    out.push_str("  </testsuite>\n");
    out
}

/// A run that could not complete (exit 2), as JUnit: one case with an `<error>`.
pub(crate) fn junit_error(command: &str, message: &str, help: Option<&str>) -> String {
    let mut body = message.to_string();
    if let Some(h) = help {
        body.push_str(&format!("\nhelp: {h}"));
    }
    let name = attr(&format!("mcp-deploy {command}"));
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"{name}\" tests=\"1\" failures=\"0\" errors=\"1\">\n  \
         <testsuite name=\"{name}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    \
         <testcase classname=\"mcp-deploy\" name=\"{}\">\n      \
         <error message=\"{}\" type=\"could-not-run\">{}</error>\n    \
         </testcase>\n  </testsuite>\n</testsuites>\n",
        attr(command),
        attr(message),
        text(&body)
    )
}

/// The report as GitHub Actions workflow commands; `quiet` leaves out the passing checks.
pub(crate) fn github(r: &Suites, quiet: bool) -> String {
    let mut out = String::new();
    for (s, c) in r.cases() {
        let class = c.classname.as_deref().unwrap_or(&s.classname);
        if c.ok {
            let mark = if c.skipped { "skip" } else { "ok  " };
            if !quiet {
                out.push_str(&plain(&format!("{mark} {class} {}: {}", c.name, c.detail)));
            }
        } else {
            out.push_str(&format!(
                "::error title={}::{}\n",
                property(&format!("{class} {}", c.name)),
                data(&c.detail)
            ));
        }
    }
    if !quiet {
        for s in &r.suites {
            for line in &s.out {
                out.push_str(&plain(&format!("{}: {line}", s.classname)));
            }
        }
    }
    let kind = if r.fails_without_a_failed_check() {
        "error"
    } else {
        "notice"
    };
    out.push_str(&format!(
        "::{kind} title={}::{}\n",
        property(&format!("mcp-deploy {}", r.command)),
        data(&r.verdict_line())
    ));
    out
}

/// A run that could not complete (exit 2), as a GitHub error annotation.
pub(crate) fn github_error(command: &str, message: &str, help: Option<&str>) -> String {
    let mut body = message.to_string();
    if let Some(h) = help {
        body.push_str(&format!("\nhelp: {h}"));
    }
    format!(
        "::error title={}::{}\n",
        property(&format!("mcp-deploy {command}")),
        data(&body)
    )
}

/// A workflow command's data: `%`, CR and LF escaped (GitHub's `escapeData`).
pub(crate) fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: its data escaping, and `:` and `,`
/// (GitHub's `escapeProperty`).
pub(crate) fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A plain log line: one line whatever it holds, so that no part of it can start a workflow
/// command. The runner looks for a command after trimming the line's leading white space, and
/// takes the older `##[command]` form too, so a leading space guards nothing: a line that
/// would start either way gets a visible `> ` first.
fn plain(s: &str) -> String {
    let one = s.replace(['\r', '\n'], " ");
    let start = one.trim_start();
    if start.starts_with("::") || start.starts_with("##[") {
        format!("> {one}\n")
    } else {
        format!("{one}\n")
    }
}

/// Character data: `&`, `<`, `>` escaped, and the characters XML 1.0 cannot carry replaced.
pub(crate) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if !xml_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// An attribute value in double quotes: [`text`]'s escaping, the quotes, and the white space
/// an attribute would otherwise normalise away.
pub(crate) fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push_str(&text(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// XML 1.0's `Char` production.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_failure(detail: &str) -> Suites {
        Suites {
            command: "verify-identity",
            suites: vec![Suite {
                name: "codetools".into(),
                classname: "codetools".into(),
                cases: vec![
                    Case {
                        skipped: false,
                        classname: None,
                        name: "release".into(),
                        ok: true,
                        detail: "current -> releases/x".into(),
                    },
                    Case {
                        skipped: false,
                        classname: None,
                        name: "commit".into(),
                        ok: false,
                        detail: detail.into(),
                    },
                ],
                out: vec![],
            }],
            ok: false,
            verdict: None,
        }
    }

    #[test]
    fn github_escapes_data_and_properties_as_the_toolkit_does() {
        assert_eq!(data("50% a\r\nb"), "50%25 a%0D%0Ab");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        let out = github(&one_failure("line one\n::set-env name=X::y"), false);
        assert!(out.contains("::error title=codetools commit::line one%0A::set-env name=X::y\n"));
        // Every line is a workflow command or a plain line that starts none.
        for line in out.lines() {
            assert!(
                line.starts_with("::error ")
                    || line.starts_with("::notice ")
                    || !line.starts_with("::"),
                "{line}"
            );
        }
    }

    #[test]
    fn a_plain_line_never_starts_a_workflow_command() {
        assert_eq!(plain("::warning::x\ny"), "> ::warning::x y\n");
        // The runner trims leading white space before it looks: a space is no guard.
        assert_eq!(plain("  ::add-mask::x"), ">   ::add-mask::x\n");
        assert_eq!(plain("\t##[error]x"), "> \t##[error]x\n");
        assert_eq!(
            plain("ok   codetools release: ::x"),
            "ok   codetools release: ::x\n"
        );
    }

    #[test]
    fn xml_escaping_keeps_every_character_it_can_and_replaces_the_rest() {
        assert_eq!(text("a<b>&c\u{1}"), "a&lt;b&gt;&amp;c\u{FFFD}");
        assert_eq!(
            attr("\"q\" 'a'\n\t"),
            "&quot;q&quot; &apos;a&apos;&#10;&#9;"
        );
    }

    #[test]
    fn junit_counts_tests_and_failures() {
        let x = junit(&one_failure("expected <a> & \"b\""));
        assert!(x.contains("<testsuites name=\"mcp-deploy verify-identity\" tests=\"2\" failures=\"1\" errors=\"0\">"));
        assert!(x.contains("message=\"expected &lt;a&gt; &amp; &quot;b&quot;\""));
    }
}
