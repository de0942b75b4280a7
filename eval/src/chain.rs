//! Reading a FeatureArc chain bundle (version 1, written by `carve arc build`; see
//! docs/formats.md "Chain bundle"): `chain.json` (`carve_formats::chain`), `carve.toml`,
//! `s0.patch`, and per stage the spec, contract, gold patch and hidden test files.

use std::path::{Path, PathBuf};

use crate::Error;

pub use carve_formats::chain::{ChainFile, ChainSuite, StageEntry as Stage, VERSION as CHAIN_VERSION};

#[derive(Debug, Clone)]
pub struct ChainBundle {
    pub dir: PathBuf,
    pub chain: ChainFile,
}

impl ChainBundle {
    pub fn read(dir: &Path) -> Result<ChainBundle, Error> {
        let path = dir.join("chain.json");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::Usage(format!("{} is not a chain bundle (no readable chain.json: {e})", dir.display()))
        })?;
        let chain: ChainFile = carve_formats::from_str(&text, &path)?;
        if chain.stages.is_empty() {
            return Err(Error::Format { path, detail: "the chain has no stages".into() });
        }
        for (k, s) in chain.stages.iter().enumerate() {
            if s.index != k {
                return Err(Error::Format { path, detail: format!("stage {k} has index {}", s.index) });
            }
        }
        Ok(ChainBundle { dir: dir.to_path_buf(), chain })
    }

    /// A bundle-relative path.
    pub fn file(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn read_text(&self, rel: &str) -> Result<String, Error> {
        let p = self.file(rel);
        std::fs::read_to_string(&p).map_err(|e| Error::io("read", &p, e))
    }
}
