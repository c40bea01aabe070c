//! `sample`: lay out sample deployments (a release layout and a prefix layout) under a root.

use crate::cli::SampleArgs;
use crate::deployment::sample;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::{emit, Format, Style};

pub(crate) fn run(args: &SampleArgs, style: &Style) -> Result<Exit, Error> {
    let root = selection::absolute_prefix(&args.root)?;
    let laid_out = sample::lay_out(&root)?;
    if style.format == Format::Json {
        let servers: Vec<_> = laid_out
            .iter()
            .map(|(name, prefix, commit)| {
                serde_json::json!({"name": name, "prefix": prefix.display().to_string(), "commit": commit})
            })
            .collect();
        crate::output::emit_json_line(
            style,
            &serde_json::json!({"ok": true, "servers": servers}),
            Exit::Success,
        );
    } else {
        for (name, prefix, commit) in &laid_out {
            emit(
                style,
                &format!("{name}: {} (commit {commit})\n", prefix.display()),
            );
        }
    }
    Ok(Exit::Success)
}
