//! `--format prometheus` (status, verify-identity, reconcile): the report as samples in the
//! Prometheus text exposition format, for node_exporter's textfile collector
//! (<https://prometheus.io/docs/instrumenting/exposition_formats/>):
//!
//! - `mcp_deploy_check_ok{server,client,check}` 1 or 0, a sample per check (a check that
//!   appears twice for one server and client is one sample, 1 only when every one passed: a
//!   series must be unique);
//! - `mcp_deploy_release_info{server,release,commit}` 1, the deployed release of each server
//!   (only when it could be read);
//! - `mcp_deploy_ok{command}` 1 or 0, and `mcp_deploy_report_timestamp_seconds{command}`, when
//!   the report was made, so that an alert can tell a stale file from a good one;
//! - reconcile's own: `mcp_deploy_reconcile_success_timestamp_seconds`, when it succeeded
//!   (exit 0). No state file records it, so it is only in reconcile's output: written to the
//!   collector's directory by the reconcile timer, it is the time of the last success.
//!
//! Label values are escaped as the format says: backslash, double quote and line feed.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::identity::report::Report;

/// A label value, escaped: `\` → `\\`, `"` → `\"`, line feed → `\n`.
pub(crate) fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// `{a="x",b="y"}`, each value escaped.
fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A metric's `# HELP` and `# TYPE gauge` lines, then its samples.
fn family(out: &mut String, name: &str, help: &str, samples: &[(String, String)]) {
    if samples.is_empty() {
        return;
    }
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
    for (labels, value) in samples {
        let _ = writeln!(out, "{name}{labels} {value}");
    }
}

/// The samples of `report`, made by `command` (`status`) at `at`; `reconciled`: reconcile
/// succeeded, at `at`.
pub(crate) fn exposition(
    report: &Report,
    command: &str,
    at: SystemTime,
    reconciled: bool,
) -> String {
    let seconds = at
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
        .to_string();
    // (server, client, check) → ok, in the report's order.
    let mut checks: Vec<((&str, &str, &str), bool)> = Vec::new();
    let mut releases: Vec<(&str, &str, &str)> = Vec::new();
    for s in &report.servers {
        for c in &s.checks {
            let key = (s.registered_name.as_str(), s.client.as_str(), c.check);
            match checks.iter_mut().find(|(k, _)| *k == key) {
                Some((_, ok)) => *ok &= c.ok,
                None => checks.push((key, c.ok)),
            }
        }
        if let (Some(release), Some(commit)) = (&s.deployed.release, &s.deployed.commit) {
            let key = (
                s.registered_name.as_str(),
                release.as_str(),
                commit.as_str(),
            );
            if !releases.contains(&key) {
                releases.push(key);
            }
        }
    }
    let bit = |ok: bool| if ok { "1" } else { "0" }.to_string();
    let mut out = String::new();
    family(
        &mut out,
        "mcp_deploy_check_ok",
        "Whether a check of mcp-deploy passed (1) or failed (0).",
        &checks
            .iter()
            .map(|((server, client, check), ok)| {
                let l = labels(&[("server", server), ("client", client), ("check", check)]);
                (l, bit(*ok))
            })
            .collect::<Vec<_>>(),
    );
    family(
        &mut out,
        "mcp_deploy_release_info",
        "The deployed release of a server and its commit.",
        &releases
            .iter()
            .map(|(server, release, commit)| {
                let l = labels(&[("server", server), ("release", release), ("commit", commit)]);
                (l, "1".to_string())
            })
            .collect::<Vec<_>>(),
    );
    let command_label = labels(&[("command", command)]);
    family(
        &mut out,
        "mcp_deploy_ok",
        "Whether every check of the report passed (1) or not (0).",
        &[(command_label.clone(), bit(report.ok))],
    );
    family(
        &mut out,
        "mcp_deploy_report_timestamp_seconds",
        "When the report was made, in seconds since the Unix epoch.",
        &[(command_label, seconds.clone())],
    );
    if reconciled {
        family(
            &mut out,
            "mcp_deploy_reconcile_success_timestamp_seconds",
            "When reconcile last succeeded (this run), in seconds since the Unix epoch.",
            &[(String::new(), seconds)],
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_backslash_quote_and_newline() {
        assert_eq!(escape(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape("a\nb"), r"a\nb");
        assert_eq!(escape("plain /opt/x"), "plain /opt/x");
    }

    #[test]
    fn a_check_repeated_for_one_server_is_one_sample_failing_if_any_failed() {
        use crate::identity::report::{Check, ServerReport};
        let s = ServerReport {
            name: "x".into(),
            client: "claude".into(),
            registered_name: "x".into(),
            prefix: "/opt/x".into(),
            registration: None,
            witnesses: None,
            deployed: Default::default(),
            checks: vec![
                Check::from_result("layers", Ok::<_, String>("a".into())),
                Check {
                    skipped: false,
                    check: "layers",
                    ok: false,
                    detail: "b".into(),
                },
            ],
        };
        let text = exposition(&Report::new(vec![s], None), "status", UNIX_EPOCH, false);
        let samples: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("mcp_deploy_check_ok"))
            .collect();
        assert_eq!(
            samples,
            [r#"mcp_deploy_check_ok{server="x",client="claude",check="layers"} 0"#]
        );
        assert!(!text.contains("reconcile"), "{text}");
    }
}
