//! The Dockerfile of an environment, written from the language's [`ImageRecipe`]: the official
//! base image, then the dependency layer (the install inputs and carve's pinned files copied
//! in, the install run), then the source, then what needs it. The same recipe gives the same
//! bytes. Its build context is the repository at the commit with carve's files in
//! `.carve-env/` (see [`context`]).

use std::path::Path;

use carve_languages::env::{IMAGE_ENV, IMAGE_REPO, ImageRecipe, Step, StepDir, shell};

use super::record::CONTEXT_DIR;
use crate::Result;

/// `template` in the image: `{env}` is [`IMAGE_ENV`], `{src}` its `src`.
fn in_image(template: &str) -> String {
    template.replace("{src}", &format!("{IMAGE_ENV}/src")).replace("{env}", IMAGE_ENV)
}

fn run_line(step: &Step) -> String {
    let dir = match step.dir {
        StepDir::Env => IMAGE_ENV.to_string(),
        StepDir::Src => format!("{IMAGE_ENV}/src"),
    };
    let mut words: Vec<String> = step.env.iter().map(|(k, v)| format!("{k}={}", shell::quote(&in_image(v)))).collect();
    words.extend(step.argv.iter().map(|w| shell::quote(&in_image(w))));
    format!("# {}\nRUN cd {dir} && {}\n", one_line(&step.why), words.join(" "))
}

fn one_line(s: &str) -> String {
    let s: String = s.chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    if s.chars().count() > 300 { format!("{}…", s.chars().take(300).collect::<String>()) } else { s }
}

/// The Dockerfile for `recipe`, headed by where it comes from.
pub fn render(recipe: &ImageRecipe, repo: &str, commit: &str, image: &str) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "# The test environment of {repo} at {commit}, written by `carve env` from environment.json.\n\
         # Build context: the repository at that commit, with carve's files in {CONTEXT_DIR}/:\n\
         #   docker build -t {image} -f Dockerfile <context>\n"
    ));
    s.push_str(&format!("FROM {}\n", recipe.base));
    s.push_str(&format!("ENV CARVE_ENV={IMAGE_ENV}\n"));
    s.push_str(&format!("RUN mkdir -p {IMAGE_ENV}/src\n"));
    s.push_str("\n# The dependency layer: the install inputs, then the install.\n");
    for rel in &recipe.inputs {
        s.push_str(&format!("COPY {} {IMAGE_ENV}/src/{}\n", docker_path(rel), docker_path(rel)));
    }
    for name in recipe.context_files.keys() {
        s.push_str(&format!("COPY {CONTEXT_DIR}/{name} {IMAGE_ENV}/{name}\n"));
    }
    for step in &recipe.install {
        s.push_str(&run_line(step));
    }
    s.push_str("\n# The source.\n");
    s.push_str(&format!("COPY . {IMAGE_REPO}\n"));
    s.push_str(&format!("RUN rm -rf {IMAGE_REPO}/{CONTEXT_DIR}\n"));
    for rel in &recipe.linked {
        s.push_str(&format!(
            "RUN if [ -e {IMAGE_ENV}/src/{rel} ] && [ ! -e {IMAGE_REPO}/{rel} ]; then ln -s {IMAGE_ENV}/src/{rel} {IMAGE_REPO}/{rel}; fi\n"
        ));
    }
    for step in &recipe.after_source {
        s.push_str(&run_line(step));
    }
    for (k, v) in &recipe.env {
        s.push_str(&format!("ENV {k}={}\n", in_image(v)));
    }
    if !recipe.build.is_empty() {
        let words: Vec<String> = recipe.build.iter().map(|w| shell::quote(&in_image(w))).collect();
        s.push_str(&format!(
            "# The project's build: its tests load what it makes from the sources (test runs build their own tree again).\nRUN cd {IMAGE_REPO} && {}\n",
            words.join(" ")
        ));
    }
    s.push_str(&format!("WORKDIR {IMAGE_REPO}\n"));
    s
}

/// A path as a Dockerfile `COPY` source or destination (spaces quoted as JSON would need;
/// carve's inputs have none in practice, and a name with one is written escaped).
fn docker_path(rel: &str) -> String {
    rel.replace(' ', "\\ ")
}

/// Files the install wrote into the environment's copy of the source that the repository
/// lacks (`generated`, relative paths under `<env>/src`: a setuptools-scm `_version.py`): the
/// image gets the same bytes (a build-context file each, `generated-<n>-<name>`, copied to
/// `{env}/src/<rel>` in the dependency layer) linked into its source as every local run
/// links them, so the state trees of `--runtime oci` runs get them too.
pub fn carry_generated(recipe: &mut ImageRecipe, env: &Path, generated: &[String]) -> Result<()> {
    for (n, rel) in generated.iter().enumerate() {
        let from = env.join("src").join(rel);
        let text = std::fs::read_to_string(&from).map_err(|e| {
            crate::Error::msg(format!("failed to read {} (a file the install wrote): {e}", from.display()))
        })?;
        let base = rel.rsplit('/').next().unwrap_or(rel);
        let name = format!("generated-{}-{base}", n + 1);
        let dir = rel.rsplit_once('/').map_or(String::new(), |(d, _)| format!("/{d}"));
        let script = format!("mkdir -p {{src}}{dir} && cp {{env}}/{name} {{src}}/{rel}");
        recipe.install.push(Step::new(
            &["sh", "-c", &script],
            StepDir::Env,
            &format!("{rel}, which the install wrote"),
        ));
        recipe.context_files.insert(name, text);
        if !recipe.linked.contains(rel) {
            recipe.linked.push(rel.clone());
        }
    }
    Ok(())
}

/// Write carve's files of the build context (`.carve-env/<name>`) under `dir`.
pub fn write_context(recipe: &ImageRecipe, dir: &Path) -> Result<()> {
    let ctx = dir.join(CONTEXT_DIR);
    std::fs::create_dir_all(&ctx)?;
    for (name, text) in &recipe.context_files {
        carve_core::fs::write_atomic(&ctx.join(name), text.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn layers_in_order_and_templates_resolved() {
        let mut context_files = BTreeMap::new();
        context_files.insert("requirements.lock".to_string(), "a==1\n".to_string());
        let recipe = ImageRecipe {
            base: "python:3.11-slim-bookworm".into(),
            inputs: vec!["requirements/test.txt".into()],
            context_files,
            install: vec![Step::new(
                &["{env}/venv/bin/python", "-m", "pip", "install", "-r", "{env}/requirements.lock"],
                StepDir::Env,
                "the set",
            )],
            after_source: vec![Step::new(&["sh", "-c", "echo done"], StepDir::Env, "after")],
            env: vec![("PATH".into(), "{env}/venv/bin:$PATH".into())],
            linked: vec![],
            build: vec![],
        };
        let text = render(&recipe, "o/n", "abc", "carve-env/o__n:abc");
        let from = text.find("FROM python:3.11-slim-bookworm").unwrap();
        let copy_in = text.find("COPY requirements/test.txt /opt/carve-env/src/requirements/test.txt").unwrap();
        let lock = text.find("COPY .carve-env/requirements.lock /opt/carve-env/requirements.lock").unwrap();
        let install = text.find("RUN cd /opt/carve-env && /opt/carve-env/venv/bin/python -m pip install -r /opt/carve-env/requirements.lock").unwrap();
        let source = text.find("COPY . /work/repo").unwrap();
        let after = text.find("RUN cd /opt/carve-env && sh -c 'echo done'").unwrap();
        assert!(from < copy_in && copy_in < lock && lock < install && install < source && source < after, "{text}");
        assert!(text.ends_with("ENV PATH=/opt/carve-env/venv/bin:$PATH\nWORKDIR /work/repo\n"), "{text}");
        assert_eq!(text, render(&recipe, "o/n", "abc", "carve-env/o__n:abc"));
    }

    #[test]
    fn generated_files_are_copied_into_the_image_and_linked_into_its_source() {
        let env = tempfile::tempdir().unwrap();
        let rel = "src/pkg/_version.py";
        std::fs::create_dir_all(env.path().join("src/src/pkg")).unwrap();
        std::fs::write(env.path().join("src").join(rel), "__version__ = '1.2'\n").unwrap();
        let mut recipe = ImageRecipe {
            base: "python:3.11-slim-bookworm".into(),
            inputs: vec![],
            context_files: BTreeMap::new(),
            install: vec![],
            after_source: vec![Step::new(&["sh", "-c", "build in place"], StepDir::Env, "the project")],
            env: vec![],
            linked: vec![],
            build: vec![],
        };
        carry_generated(&mut recipe, env.path(), &[rel.to_string()]).unwrap();
        assert_eq!(recipe.context_files["generated-1-_version.py"], "__version__ = '1.2'\n");
        let text = render(&recipe, "o/n", "abc", "carve-env/o__n:abc");
        let copy = text.find("COPY .carve-env/generated-1-_version.py /opt/carve-env/generated-1-_version.py").unwrap();
        let placed = text
            .find("sh -c 'mkdir -p /opt/carve-env/src/src/pkg && cp /opt/carve-env/generated-1-_version.py /opt/carve-env/src/src/pkg/_version.py'")
            .unwrap();
        let source = text.find("COPY . /work/repo").unwrap();
        let link = text.find("ln -s /opt/carve-env/src/src/pkg/_version.py /work/repo/src/pkg/_version.py").unwrap();
        let build = text.find("build in place").unwrap();
        assert!(copy < placed && placed < source && source < link && link < build, "{text}");
        let missing = carry_generated(&mut recipe, env.path(), &["src/pkg/gone.py".to_string()]).unwrap_err();
        assert!(missing.to_string().contains("gone.py"), "{missing}");
    }
}
