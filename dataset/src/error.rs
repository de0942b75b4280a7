//! The dataset runner's error: what failed, naming the manifest entry, file or command and
//! what to do, with the cause.

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{0}")]
    Message(String),
    /// What was being done when `source` happened.
    #[error("{context}")]
    Context {
        context: String,
        #[source]
        source: Box<Error>,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Pipeline(#[from] carve_pipeline::Error),
    #[error(transparent)]
    Format(#[from] carve_formats::FormatError),
    #[error(transparent)]
    Fs(#[from] carve_core::fs::IoError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn msg(message: impl std::fmt::Display) -> Error {
        Error::Message(message.to_string())
    }

    /// The message and every cause, `: `-separated (for records and reasons).
    pub fn chain(&self) -> String {
        let mut s = self.to_string();
        let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(self);
        while let Some(e) = cur {
            let m = e.to_string();
            if !s.contains(&m) {
                s.push_str(": ");
                s.push_str(&m);
            }
            cur = e.source();
        }
        s
    }

    /// The disk (or a quota) is full: the run stops instead of recording the repository.
    pub fn is_disk_full(&self) -> bool {
        is_disk_full_text(&self.chain())
    }
}

/// Whether an error's text says the disk is full (`ENOSPC`, `EDQUOT`).
pub fn is_disk_full_text(text: &str) -> bool {
    text.contains("No space left on device") || text.contains("os error 28") || text.contains("Disk quota exceeded")
}

/// `.context(...)` on results whose error converts into [`Error`].
pub trait Context<T> {
    fn context(self, what: impl Into<String>) -> Result<T>;
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| Error::Context { context: what.into(), source: Box::new(e.into()) })
    }
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| Error::Context { context: what().into(), source: Box::new(e.into()) })
    }
}

macro_rules! bail {
    ($($arg:tt)*) => { return Err($crate::error::Error::msg(format!($($arg)*))) };
}
pub(crate) use bail;
