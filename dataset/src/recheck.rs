//! The re-check of a repository's emitted bundles before they join the dataset: `carve
//! validate` on the checkout, or with `--recheck image` inside the bundle's image
//! (`--runtime oci`), compared state by state with the validation the bundle records (made on
//! this checkout when the task was validated; a second run here repeated it and cost a third
//! of the re-check). Each validation is kept in the work folder's `rechecked/` (`<id>.json`
//! on the checkout, `<id>.image.json` in the image), so a resumed run does none twice; with
//! `--recheck image` that folder goes into the dataset.

use carve_formats::dataset::{ImageRecheck, RejectedRow, TaskRow};
use carve_formats::validation::Validation;
use carve_pipeline::image_runs::Runtime;
use std::path::{Path, PathBuf};

use crate::Result;
use crate::error::bail;
use crate::layout::write_atomic;
use crate::repo::{Recheck, RepoJob};

/// The image a bundle's `instance.json` names, if any.
pub(crate) fn bundle_image(bundle: &Path) -> Option<String> {
    let inst: carve_formats::instance::Instance = carve_formats::read(&bundle.join("instance.json")).ok()?;
    inst.image_name
}

/// Where the two validations differ: `<state> <test>: <here> here, <there> in the image`
/// (a state only one has, or a test only one state has, counts as a difference).
pub(crate) fn differences(here: &Validation, image: &Validation) -> Vec<String> {
    let mut out = Vec::new();
    let names = |v: &Validation| v.states.iter().map(|s| s.state.clone()).collect::<Vec<_>>();
    if names(here) != names(image) {
        out.push(format!("states {:?} here, {:?} in the image", names(here), names(image)));
        return out;
    }
    let show = |s: Option<&carve_formats::TestStatus>| {
        s.map_or("absent".to_string(), |s| {
            serde_json::to_value(s).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
        })
    };
    for (a, b) in here.states.iter().zip(&image.states) {
        let tests: std::collections::BTreeSet<&String> = a.statuses.keys().chain(b.statuses.keys()).collect();
        for t in tests {
            let (x, y) = (a.statuses.get(t), b.statuses.get(t));
            if x != y {
                out.push(format!("{} {t}: {} here, {} in the image", a.state, show(x), show(y)));
            }
        }
    }
    out
}

impl RepoJob<'_> {
    /// Check every emitted bundle again; a bundle that fails a re-check leaves the dataset
    /// with the reason.
    pub(crate) fn recheck(
        &self,
        checkout: &Path,
        bundles: &Path,
        dir: &Path,
        emitted: Vec<TaskRow>,
    ) -> Result<(Vec<TaskRow>, Vec<RejectedRow>)> {
        let mut tasks = Vec::new();
        let mut rejected = Vec::new();
        // An image that failed to build fails every bundle of the repository the same way:
        // built once, its error reused.
        let mut image_error: Option<String> = None;
        for mut row in emitted {
            let bundle = bundles.join(&row.instance_id);
            if !bundle.join("instance.json").is_file() {
                bail!(
                    "the bundle {} is missing from {} (its work folder was changed)",
                    row.instance_id,
                    bundles.display()
                );
            }
            row.recheck = self.opts.recheck.name().to_string();
            if self.opts.recheck == Recheck::Off {
                tasks.push(row);
                continue;
            }
            let here = if self.opts.recheck == Recheck::Image && bundle_image(&bundle).is_some() {
                recorded(&bundle)?
            } else {
                self.validation(&bundle, checkout, dir, &row.instance_id, Runtime::Local)?
            };
            let mut why = (!here.valid).then(|| here.reason().unwrap_or_else(|| "invalid".into()));
            if self.opts.recheck == Recheck::Image {
                match self.in_image(&bundle, checkout, dir, &row.instance_id, &here, &mut image_error) {
                    Ok(Some(r)) => {
                        row.image = Some(r.0);
                        if why.is_none() && !r.1.valid {
                            why = Some(format!("in the image: {}", r.1.reason().unwrap_or_else(|| "invalid".into())));
                        }
                    }
                    // No image named (an environment given by the manifest): on the checkout only.
                    Ok(None) => row.recheck = Recheck::Local.name().to_string(),
                    Err(e) => why = why.or(Some(format!("in the image: {e}"))),
                }
            }
            match why {
                None => tasks.push(row),
                Some(why) => {
                    let feature = row.instance_id.clone();
                    rejected.push(RejectedRow::new(feature, Some(row.level), format!("re-check failed: {why}")));
                }
            }
        }
        tasks.sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
        Ok((tasks, rejected))
    }

    /// The bundle validated in its image and compared with `here`; `None` when it names no
    /// image. An error (the image does not build) is the bundle's, and every later bundle's.
    fn in_image(
        &self,
        bundle: &Path,
        checkout: &Path,
        dir: &Path,
        id: &str,
        here: &Validation,
        image_error: &mut Option<String>,
    ) -> std::result::Result<Option<(ImageRecheck, Validation)>, String> {
        let Some(image) = bundle_image(bundle) else { return Ok(None) };
        if let Some(e) = image_error {
            return Err(e.clone());
        }
        match self.validation(bundle, checkout, dir, id, Runtime::Oci) {
            Ok(v) => Ok(Some((ImageRecheck::new(image, v.valid, differences(here, &v)), v))),
            Err(e) => {
                let e = e.chain();
                *image_error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// The bundle's validation on `runtime`, kept in `dir` (read back when a run resumes).
    fn validation(&self, bundle: &Path, checkout: &Path, dir: &Path, id: &str, runtime: Runtime) -> Result<Validation> {
        let record = record_path(dir, id, runtime);
        if let Ok(v) = carve_formats::read::<Validation>(&record) {
            return Ok(v);
        }
        let place = if runtime == Runtime::Oci { "in its image" } else { "on the checkout" };
        self.reporter.note(&self.at, &format!("re-checking {id} {place}"));
        let python = self.entry.env.as_ref().and_then(|e| e.python.as_ref()).map(PathBuf::from);
        let scratch = dir.join(".scratch");
        std::fs::create_dir_all(&scratch)?;
        if let Some(c) = self.entry.env.as_ref().and_then(|e| e.config.as_ref()) {
            std::fs::copy(self.opts.base_dir.join(c), scratch.join("carve.toml"))?;
        }
        let v = carve_pipeline::validate::validate_bundle(bundle, checkout, python.as_deref(), Some(&scratch), runtime);
        let _ = std::fs::remove_dir_all(&scratch);
        let v = v?;
        write_atomic(&record, &carve_formats::to_pretty(&v))?;
        Ok(v)
    }
}

/// The validation `bundle` records: its states on the checkout when carve validated the task.
fn recorded(bundle: &Path) -> Result<Validation> {
    let path = bundle.join("validation.json");
    carve_formats::read::<Validation>(&path).map_err(|e| {
        crate::error::Error::msg(format!("{} could not be read ({e}): its work folder was changed", path.display()))
    })
}

/// `rechecked/<id>.json` (on the checkout) or `rechecked/<id>.image.json` (in the image).
fn record_path(dir: &Path, id: &str, runtime: Runtime) -> PathBuf {
    match runtime {
        Runtime::Oci => dir.join(format!("{id}.image.json")),
        _ => dir.join(format!("{id}.json")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_formats::TestStatus;
    use carve_formats::validation::StateResult;

    fn validation(states: &[(&str, &[(&str, TestStatus)])]) -> Validation {
        let mut v = Validation::new(0.0);
        for (name, tests) in states {
            let statuses = tests.iter().map(|(t, s)| (t.to_string(), *s)).collect();
            v.push(StateResult::new(name.to_string(), String::new(), true, Vec::new(), statuses));
        }
        v
    }

    #[test]
    fn statuses_are_compared_state_by_state_and_test_by_test() {
        use TestStatus::{Failed, Passed};
        let here = validation(&[("baseline", &[("a", Passed), ("b", Passed)]), ("masked", &[("a", Failed)])]);
        assert!(differences(&here, &here.clone()).is_empty());
        let there = validation(&[("baseline", &[("a", Passed)]), ("masked", &[("a", Passed)])]);
        assert_eq!(
            differences(&here, &there),
            ["baseline b: passed here, absent in the image", "masked a: failed here, passed in the image"]
        );
        let fewer = validation(&[("baseline", &[("a", Passed), ("b", Passed)])]);
        assert_eq!(differences(&here, &fewer), [r#"states ["baseline", "masked"] here, ["baseline"] in the image"#]);
        let r = ImageRecheck::new("i".into(), true, differences(&here, &there));
        assert!(!r.agrees);
        assert!(ImageRecheck::new("i".into(), true, Vec::new()).agrees);
    }
}
