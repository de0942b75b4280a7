//! The Dockerfile of an environment, written from the language's [`ImageRecipe`]: the official
//! base image, then the dependency layer (the install inputs and carve's pinned files copied
//! in, the install run), then the source, then what needs it. The same recipe gives the same
//! bytes. Its build context is the repository at the commit with carve's files in
//! `.carve-env/` (see [`context`]).

use std::path::Path;

use carve_languages::env::{GeneratedFile, IMAGE_ENV, IMAGE_REPO, ImageRecipe, Step, StepDir, shell};

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

/// Files the install made that the repository lacks (`generated`, relative paths under
/// `<env>/src`), linked into the image's source as every local run links them, so the state
/// trees of `--runtime oci` runs get them too. A file the install wrote (a setuptools-scm
/// `_version.py`) goes in as the same bytes (a build-context file each,
/// `generated-<n>-<name>`, copied to `{env}/src/<rel>` in the dependency layer); a build
/// product (a compiled extension module) is copied from the image's own build of the project,
/// after it, and the image gets a C compiler for that build.
pub fn carry_generated(recipe: &mut ImageRecipe, env: &Path, generated: &[GeneratedFile]) -> Result<()> {
    if let Some(built) = generated.iter().find_map(|g| g.built_at.as_deref()) {
        // The slim bases have no C compiler: without one the image's build of the project
        // silently falls back to pure Python (markupsafe) and the module is never made.
        let script = "apt-get update && apt-get install -y --no-install-recommends build-essential \
                      && rm -rf /var/lib/apt/lists/*";
        recipe.install.insert(
            0,
            Step::new(&["sh", "-c", script], StepDir::Env, &format!("a C compiler: the build compiles {built}")),
        );
    }
    for (n, g) in generated.iter().enumerate() {
        let rel = &g.path;
        let dir = rel.rsplit_once('/').map_or(String::new(), |(d, _)| format!("/{d}"));
        if let Some(built_at) = &g.built_at {
            // A build product (a compiled extension module): the image's own build of the
            // project makes it again, under the same name (same interpreter, same platform).
            let script = format!(
                "mkdir -p {{src}}{dir} && cp {IMAGE_REPO}/{built_at} {{src}}/{rel} && ln -sfn {{src}}/{rel} {IMAGE_REPO}/{rel}"
            );
            recipe.after_source.push(Step::new(
                &["sh", "-c", &script],
                StepDir::Env,
                &format!("{rel}, which the build compiled into {built_at}"),
            ));
        } else {
            let from = env.join("src").join(rel);
            let text = std::fs::read_to_string(&from).map_err(|e| {
                crate::Error::msg(format!("failed to read {} (a file the install wrote): {e}", from.display()))
            })?;
            let base = rel.rsplit('/').next().unwrap_or(rel);
            let name = format!("generated-{}-{base}", n + 1);
            let script = format!("mkdir -p {{src}}{dir} && cp {{env}}/{name} {{src}}/{rel}");
            recipe.install.push(Step::new(
                &["sh", "-c", &script],
                StepDir::Env,
                &format!("{rel}, which the install wrote"),
            ));
            recipe.context_files.insert(name, text);
        }
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

    /// A Python recipe whose only step after the source is `script` (the project's build).
    fn python_recipe_building_with(script: &str) -> ImageRecipe {
        ImageRecipe {
            base: "python:3.11-slim-bookworm".into(),
            inputs: vec![],
            context_files: BTreeMap::new(),
            install: vec![],
            after_source: vec![Step::new(&["sh", "-c", script], StepDir::Env, "the project")],
            env: vec![],
            linked: vec![],
            build: vec![],
        }
    }

    #[test]
    fn generated_files_are_copied_into_the_image_and_linked_into_its_source() {
        let env = tempfile::tempdir().unwrap();
        let rel = "src/pkg/_version.py";
        std::fs::create_dir_all(env.path().join("src/src/pkg")).unwrap();
        std::fs::write(env.path().join("src").join(rel), "__version__ = '1.2'\n").unwrap();
        let mut recipe = python_recipe_building_with("build in place");
        carry_generated(&mut recipe, env.path(), &[GeneratedFile { path: rel.to_string(), built_at: None }]).unwrap();
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
        let gone = GeneratedFile { path: "src/pkg/gone.py".into(), built_at: None };
        let missing = carry_generated(&mut recipe, env.path(), &[gone]).unwrap_err();
        assert!(missing.to_string().contains("gone.py"), "{missing}");
    }

    #[test]
    fn a_compiled_extension_module_is_copied_from_the_images_own_build() {
        let mut recipe = python_recipe_building_with("pip install /work/repo");
        let so = GeneratedFile {
            path: "src/p/_speedups.so".into(),
            built_at: Some("build/lib.linux-x86_64-cpython-311/p/_speedups.so".into()),
        };
        carry_generated(&mut recipe, Path::new("/nonexistent"), &[so]).unwrap();
        assert!(recipe.context_files.is_empty(), "{:?}", recipe.context_files);
        assert_eq!(recipe.linked, vec!["src/p/_speedups.so".to_string()]);
        let text = render(&recipe, "o/n", "abc", "carve-env/o__n:abc");
        let build = text.find("pip install /work/repo").unwrap();
        let placed = text
            .find("sh -c 'mkdir -p /opt/carve-env/src/src/p && cp /work/repo/build/lib.linux-x86_64-cpython-311/p/_speedups.so /opt/carve-env/src/src/p/_speedups.so && ln -sfn /opt/carve-env/src/src/p/_speedups.so /work/repo/src/p/_speedups.so'")
            .unwrap_or_else(|| panic!("{text}"));
        let compiler = text.find("apt-get install -y --no-install-recommends build-essential").unwrap();
        assert!(compiler < text.find("COPY . /work/repo").unwrap() && build < placed, "{text}");
    }
}
