//! Printing reports: text for people, `--format json` for scripts (stable, sorted keys).

use crate::cli::Format;
use anyhow::Result;
use serde::Serialize;

pub fn emit<T: Serialize>(format: Format, value: &T, text: impl FnOnce() -> String) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, value)?;
            writeln!(out)?;
        }
        Format::Text => {
            write!(out, "{}", text())?;
        }
        Format::Html => anyhow::bail!("--format html is for `carve audit`, `carve report` and `carve arc report`"),
    }
    Ok(())
}
