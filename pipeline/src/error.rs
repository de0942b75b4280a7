//! The pipeline's error: a message (what failed, naming the file, test or command and what
//! to do), or a failure of a library carve calls, each with the context it happened in.

use std::fmt::Display;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// What was being done when `source` happened ("failed to index /repo").
    #[error("{context}")]
    Context {
        context: String,
        #[source]
        source: Box<Error>,
    },
    #[error("{0}")]
    Message(String),
    /// A test run that could not run (the runner's error, with the set-up hint).
    #[error(transparent)]
    RunFailed(crate::runs::RunFailed),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A file operation of `carve-core` (it names the path).
    #[error(transparent)]
    Fs(#[from] carve_core::fs::IoError),
    /// A patch that could not be made or applied (it names the file or the tree).
    #[error(transparent)]
    Patch(#[from] carve_core::patch::PatchError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    #[error(transparent)]
    TraceShim(#[from] carve_languages::trace::TraceShimError),
    #[error(transparent)]
    Index(#[from] carve_languages::index::IndexError),
    #[error(transparent)]
    Run(#[from] carve_languages::runner::RunnerError),
    #[error(transparent)]
    Classify(#[from] carve_tracer::ClassifyError),
    #[error(transparent)]
    Trace(#[from] carve_tracer::trace::TraceError),
    #[error(transparent)]
    Extract(#[from] carve_extractor::ExtractError),
    /// A file of one of carve's formats that could not be read (it names the file).
    #[error(transparent)]
    Format(#[from] carve_formats::FormatError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with this message.
    pub fn msg(message: impl Display) -> Error {
        Error::Message(message.to_string())
    }

    /// The failed test run this error is, or was caused by.
    pub fn run_failed(&self) -> Option<&crate::runs::RunFailed> {
        match self {
            Error::RunFailed(r) => Some(r),
            Error::Context { source, .. } => source.run_failed(),
            _ => None,
        }
    }

    /// The message and every cause after it, joined by `": "` (as `anyhow` prints `{:#}`):
    /// the one-line form for rejection reasons and warnings.
    pub fn chain(&self) -> String {
        let mut out = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            out.push_str(": ");
            out.push_str(&c.to_string());
            cause = c.source();
        }
        out
    }
}

/// `.context(..)` and `.with_context(|| ..)` on results and options, as `anyhow` has them.
pub trait Context<T> {
    fn context(self, context: impl Display) -> Result<T>;
    fn with_context<C: Display>(self, context: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Display) -> Result<T> {
        self.map_err(|e| Error::Context { context: context.to_string(), source: Box::new(e.into()) })
    }

    fn with_context<C: Display>(self, context: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| Error::Context { context: context().to_string(), source: Box::new(e.into()) })
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, context: impl Display) -> Result<T> {
        self.ok_or_else(|| Error::msg(context))
    }

    fn with_context<C: Display>(self, context: impl FnOnce() -> C) -> Result<T> {
        self.ok_or_else(|| Error::msg(context()))
    }
}

/// Return early with an [`Error::Message`] formatted as `format!` does.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::Message(format!($($arg)*)))
    };
}
pub(crate) use bail;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_reads_like_anyhow_alternate_form() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = Err::<(), _>(io).context("failed to read a.toml").context("failed to load the config").unwrap_err();
        assert_eq!(e.to_string(), "failed to load the config");
        assert_eq!(e.chain(), "failed to load the config: failed to read a.toml: no such file");
        let none: Option<u8> = None;
        assert_eq!(none.context("nothing there").unwrap_err().chain(), "nothing there");
    }
}
