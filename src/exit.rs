//! Exit codes, as the design gives them: 0 every check passed, 1 a check ran and failed,
//! 2 the command could not run (usage, unreadable or malformed input, a client that is
//! missing, failing or hanging).

/// The process exit status of one `mcp-deploy` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    CheckFailed,
    CouldNotRun,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::CheckFailed => 1,
            Exit::CouldNotRun => 2,
        }
    }

    /// `Success` when `ok`, else `CheckFailed`: the verdict of a run that completed.
    pub fn from_checks(ok: bool) -> Exit {
        if ok {
            Exit::Success
        } else {
            Exit::CheckFailed
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_designs() {
        assert_eq!(Exit::Success.code(), 0);
        assert_eq!(Exit::CheckFailed.code(), 1);
        assert_eq!(Exit::CouldNotRun.code(), 2);
        assert_eq!(Exit::from_checks(true), Exit::Success);
        assert_eq!(Exit::from_checks(false), Exit::CheckFailed);
    }
}
