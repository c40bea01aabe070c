//! The one value parser of every timeout flag (`--client-timeout`, `--lock-timeout`,
//! `--handshake-timeout`, `--mcp-timeout`): a duration with its unit (`5s`, `500ms`, `2m`,
//! `1m 30s`, as humantime reads them), or a bare number in the unit the flag had before
//! units were taken — seconds, or milliseconds for `--mcp-timeout` (whose variable
//! `MCP_TIMEOUT` is Claude Code's own, in milliseconds) — so that existing scripts keep
//! working. Every timeout is at least 1ms: 0 would kill every call at once.

use std::time::Duration;

/// The unit a bare number is read in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Bare {
    Seconds,
    Millis,
}

impl Bare {
    fn unit(self) -> &'static str {
        match self {
            Bare::Seconds => "seconds",
            Bare::Millis => "milliseconds",
        }
    }
}

/// The shortest timeout any flag takes.
pub(crate) const MIN: Duration = Duration::from_millis(1);

/// The longest: a week. Every timeout becomes a deadline, `Instant::now() + timeout`, which
/// panics past what the clock can hold (`--lock-timeout 18446744073709551615` did, in prune's
/// lock); no call or lock wait is meant to outlast a week.
pub(crate) const MAX: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// Why a timeout flag's value is refused. clap prints it after "invalid value 'TEXT' for
/// '--FLAG <DURATION>': ", so it does not repeat the value unless it says more about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum DurationError {
    /// A bare number past `u64`.
    #[error("{digits} is too large for a duration")]
    TooLarge { digits: String },
    /// Neither a bare number nor a duration humantime reads.
    #[error("{why}: give a number with its unit, e.g. 5s, 500ms or 2m (a bare number is {})", .bare.unit())]
    Unreadable {
        why: humantime::DurationError,
        bare: Bare,
    },
    #[error("must be at least 1ms")]
    BelowMin { given: Duration },
    #[error("must be at most 7days (a week)")]
    AboveMax { given: Duration },
}

/// Read `text` as a duration; a bare number is in `bare`.
pub(crate) fn parse(text: &str, bare: Bare) -> Result<Duration, DurationError> {
    let t = text.trim();
    let d = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let n: u64 = t.parse().map_err(|_| DurationError::TooLarge {
            digits: t.to_string(),
        })?;
        match bare {
            Bare::Seconds => Duration::from_secs(n),
            Bare::Millis => Duration::from_millis(n),
        }
    } else {
        humantime::parse_duration(t).map_err(|why| DurationError::Unreadable { why, bare })?
    };
    if d < MIN {
        return Err(DurationError::BelowMin { given: d });
    }
    if d > MAX {
        return Err(DurationError::AboveMax { given: d });
    }
    Ok(d)
}

/// The clap value parser of a flag whose bare numbers are seconds.
pub(crate) fn seconds(text: &str) -> Result<Duration, DurationError> {
    parse(text, Bare::Seconds)
}

/// The clap value parser of a flag whose bare numbers are milliseconds (`--mcp-timeout`).
pub(crate) fn millis(text: &str) -> Result<Duration, DurationError> {
    parse(text, Bare::Millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_read_and_a_bare_number_keeps_the_flags_unit() {
        assert_eq!(seconds("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(seconds("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(seconds("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(seconds("60"), Ok(Duration::from_secs(60)));
        assert_eq!(millis("5000"), Ok(Duration::from_secs(5)));
        assert_eq!(millis("5s"), Ok(Duration::from_secs(5)));
    }

    #[test]
    fn more_than_a_week_is_refused_not_a_deadline_that_overflows_the_clock() {
        assert_eq!(seconds("7days"), Ok(MAX));
        for huge in ["18446744073709551615", "604801", "8days", "1000000000y"] {
            let e = seconds(huge).unwrap_err();
            assert!(matches!(e, DurationError::AboveMax { .. }), "{huge}");
            assert_eq!(e.to_string(), "must be at most 7days (a week)", "{huge}");
        }
        assert_eq!(
            millis("604800001"),
            Err(DurationError::AboveMax {
                given: Duration::from_millis(604800001)
            })
        );
        assert_eq!(
            millis("604800001").unwrap_err().to_string(),
            "must be at most 7days (a week)"
        );
    }

    #[test]
    fn zero_and_less_than_a_millisecond_must_be_at_least_1ms() {
        for z in ["0", "0s", "0ms", "500us"] {
            let e = seconds(z).unwrap_err();
            assert!(matches!(e, DurationError::BelowMin { .. }), "{z}");
            assert_eq!(e.to_string(), "must be at least 1ms", "{z}");
        }
        assert_eq!(
            millis("0"),
            Err(DurationError::BelowMin {
                given: Duration::ZERO
            })
        );
        assert!(seconds("five")
            .unwrap_err()
            .to_string()
            .contains("e.g. 5s, 500ms or 2m"));
        assert_eq!(
            seconds("99999999999999999999").unwrap_err().to_string(),
            "99999999999999999999 is too large for a duration"
        );
    }
}
