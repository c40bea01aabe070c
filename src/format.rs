//! How a result is printed: the values of `--format` (the flag's, [`crate::cli`]) and the
//! format the output layer prints in ([`crate::output`]) are one type, so that a new format
//! is one variant, not a variant in each and a conversion between them.

/// The values of `--format`. A check report takes all four; a command whose result is not a
/// check report (render-mcp, sample, prune, pin-vendor, manifest create) the first two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines for people.
    Human,
    /// One JSON object (what --json prints).
    Json,
    /// JUnit XML: a <testsuite> per server and client, a <testcase> per check.
    Junit,
    /// GitHub Actions workflow commands: an ::error annotation per failed check.
    Github,
    /// Prometheus text exposition (status, verify-identity, reconcile): samples for
    /// node_exporter's textfile collector.
    Prometheus,
}
