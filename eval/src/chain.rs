//! Reading a FeatureArc chain bundle (version 1, written by `carve arc build`; see
//! docs/formats.md "Chain bundle"): `chain.json`, `carve.toml`, `s0.patch`, and per stage
//! the spec, contract, gold patch and hidden test files.

use serde::Deserialize;
use std::path::{Path, PathBuf};

use crate::Error;

pub const CHAIN_VERSION: u32 = 1;

#[derive(Debug, Clone, Deserialize)]
pub struct Stage {
    pub index: usize,
    #[serde(default)]
    pub title: String,
    pub spec: String,
    pub contract: String,
    pub gold_patch: String,
    pub tests_dir: String,
    pub f2p: Vec<String>,
    pub p2p: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChainSuite {
    pub tests_dir: String,
    pub f2p: Vec<String>,
    pub p2p: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChainFile {
    pub version: u32,
    pub chain_id: String,
    pub repo: String,
    pub language: String,
    pub final_commit: String,
    pub stages: Vec<Stage>,
    pub chain: ChainSuite,
}

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
        let chain: ChainFile =
            serde_json::from_str(&text).map_err(|e| Error::Format { path: path.clone(), detail: e.to_string() })?;
        if chain.version != CHAIN_VERSION {
            return Err(Error::Format {
                path,
                detail: format!("chain bundle version {}; this carve reads version {CHAIN_VERSION}", chain.version),
            });
        }
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
