//! Generated Rust repository: a crate of modules with `use` items, structs and enums with
//! inherent impls, a trait implemented per module, generics with bounds and lifetimes,
//! `macro_rules!`, doc comments and `#[cfg(test)]` modules.

use crate::{Rng, WORDS};

fn module(rng: &mut Rng, m: usize) -> String {
    let mut s = format!("//! Module {m}.\n\nuse std::collections::BTreeMap;\nuse std::fmt;\n\nuse crate::Measure;\n");
    if m > 0 {
        s.push_str(&format!("use crate::mod{}::{{helper_0, Model0}};\n", m - 1));
    }
    s.push_str(&format!("\nmacro_rules! twice{m} {{\n    ($e:expr) => {{\n        $e * 2\n    }};\n}}\n\n"));
    for c in 0..6 {
        let w = rng.pick(WORDS);
        s.push_str(&format!("/// A {w} model.\n#[derive(Debug, Clone, PartialEq)]\npub struct Model{c} {{\n    pub {w}: i64,\n    pub scale: f64,\n    names: BTreeMap<String, usize>,\n}}\n\n"));
        s.push_str(&format!("/// Kinds of {w}.\n#[derive(Debug, Clone, Copy)]\npub enum Kind{c} {{\n    Small,\n    Large(u32),\n    Named {{ id: u64 }},\n}}\n\n"));
        s.push_str(&format!("impl Model{c} {{\n    /// Builds a model.\n    pub fn new({w}: i64) -> Self {{\n        Model{c} {{ {w}, scale: 1.0, names: BTreeMap::new() }}\n    }}\n\n"));
        for k in 0usize..4 {
            s.push_str(&format!(
                "    pub fn {w}_{k}<'a, I>(&self, values: I, floor: Option<i64>) -> i64\n    where\n        I: IntoIterator<Item = &'a i64>,\n    {{\n        let mut total = 0;\n        for v in values {{\n            if floor.is_some_and(|f| *v < f) {{\n                continue;\n            }}\n            total += v * self.{w};\n        }}\n        helper_{k}(total) + twice{m}!(1)\n    }}\n\n"
            ));
        }
        s.push_str("}\n\n");
        s.push_str(&format!(
            "impl Measure for Model{c} {{\n    fn measure(&self) -> f64 {{\n        self.scale * {}.0\n    }}\n}}\n\n",
            rng.below(9) + 1
        ));
        s.push_str(&format!("impl fmt::Display for Model{c} {{\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{\n        write!(f, \"{{}}\", self.measure())\n    }}\n}}\n\n"));
    }
    for f in 0usize..6 {
        s.push_str(&format!(
            "/// Helper {f}.\npub fn helper_{f}(x: i64) -> i64 {{\n    if x < {} {{\n        return x;\n    }}\n    let y = x / 2;\n    y + helper_{}(y)\n}}\n\n",
            rng.below(50) + 1,
            f.saturating_sub(1)
        ));
    }
    s.push_str("#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn helper_is_stable() {\n        assert_eq!(helper_0(1), 1);\n    }\n}\n");
    s
}

pub fn generate(min_lines: usize) -> Vec<(String, String)> {
    let mut rng = Rng::new(4);
    let mut lib = String::from(
        "//! Generated crate.\n\n/// Something with a size.\npub trait Measure {\n    fn measure(&self) -> f64;\n}\n\n",
    );
    let mut files = vec![(
        "Cargo.toml".to_string(),
        "[package]\nname = \"gen\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n".to_string(),
    )];
    let mut lines = 0;
    let mut m = 0;
    while lines < min_lines {
        let text = module(&mut rng, m);
        lines += text.lines().count();
        files.push((format!("src/mod{m}.rs"), text));
        lib.push_str(&format!("pub mod mod{m};\n"));
        m += 1;
    }
    files.push(("src/lib.rs".to_string(), lib));
    files
}
