//! Generated Python repository: packages of modules with imports between them, classes
//! with methods and properties, free functions, decorators and docstrings.

use crate::{Rng, WORDS};

fn module(rng: &mut Rng, pkg: usize, m: usize) -> String {
    let mut s = String::new();
    s.push_str(&format!("\"\"\"Module {m} of package pkg{pkg}.\"\"\"\n\nfrom __future__ import annotations\n\nimport functools\nimport math\n"));
    if m > 0 {
        s.push_str(&format!("from pkg{pkg}.mod{} import helper_0, Model0\n", m - 1));
    }
    s.push_str("from typing import Iterable, Optional\n\n\n");
    for c in 0..6 {
        let w = rng.pick(WORDS);
        s.push_str(&format!("class Model{c}:\n    \"\"\"A {w} model.\"\"\"\n\n    limit = {}\n\n", rng.below(100)));
        s.push_str(&format!("    def __init__(self, {w}: int, scale: float = 1.0) -> None:\n        self.{w} = {w}\n        self.scale = scale\n\n"));
        for k in 0usize..4 {
            s.push_str(&format!(
                "    def {w}_{k}(self, values: Iterable[int], *, floor: Optional[int] = None) -> int:\n        total = 0\n        for v in values:\n            if floor is not None and v < floor:\n                continue\n            total += v * self.{w}\n        return helper_{k}(total) + self.limit\n\n"
            ));
        }
        s.push_str(&format!(
            "    @property\n    def size(self) -> float:\n        return math.sqrt(self.{w}) * self.scale\n\n\n"
        ));
    }
    for f in 0usize..6 {
        s.push_str(&format!(
            "@functools.lru_cache(maxsize=None)\ndef helper_{f}(x: int) -> int:\n    \"\"\"Helper {f}.\"\"\"\n    if x < {}:\n        return x\n    y = x // 2\n    return y + helper_{}(y)\n\n\n",
            rng.below(50) + 1,
            f.saturating_sub(1)
        ));
    }
    s.push_str("def run(n: int) -> list[int]:\n    out = []\n    for i in range(n):\n        out.append(Model0(i).order_0([i, i + 1]) if hasattr(Model0(i), 'order_0') else helper_0(i))\n    return out\n");
    s
}

pub fn generate(min_lines: usize) -> Vec<(String, String)> {
    let mut rng = Rng::new(1);
    let mut files = Vec::new();
    let mut lines = 0;
    let mut pkg = 0;
    while lines < min_lines {
        files.push((
            format!("pkg{pkg}/__init__.py"),
            format!("\"\"\"Package {pkg}.\"\"\"\nfrom pkg{pkg}.mod0 import Model0\n"),
        ));
        for m in 0..20 {
            let text = module(&mut rng, pkg, m);
            lines += text.lines().count();
            files.push((format!("pkg{pkg}/mod{m}.py"), text));
        }
        pkg += 1;
    }
    files
}
