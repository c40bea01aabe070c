//! `sample`: lay out sample deployments (a release layout and a prefix layout) under a root
//! ([`crate::deployment::sample::lay_out`]), and say where.

use crate::cli::SampleArgs;
use crate::deployment::sample;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Style;

pub(crate) fn run(args: &SampleArgs, style: &Style) -> Result<Exit, Error> {
    let root = selection::absolute_prefix(&args.root)?;
    let laid_out = sample::lay_out(&root)?;
    crate::output::sample(&laid_out, style);
    Ok(Exit::Success)
}
