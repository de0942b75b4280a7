//! Generated TypeScript repository: modules with imports/exports, interfaces, classes with
//! methods and getters, generic functions, arrow functions and enums.

use crate::{Rng, WORDS};

fn module(rng: &mut Rng, m: usize) -> String {
    let mut s = String::new();
    if m > 0 {
        s.push_str(&format!("import {{ helper0, Model0 }} from \"./mod{}\";\n", m - 1));
    }
    s.push_str("import type { Options } from \"./types\";\n\n");
    for c in 0..6 {
        let w = rng.pick(WORDS);
        s.push_str(&format!("/** A {w} record. */\nexport interface Shape{c} {{\n  id: number;\n  {w}: string;\n  tags?: string[];\n}}\n\n"));
        s.push_str(&format!("export enum Kind{c} {{\n  A = \"a\",\n  B = \"b\",\n}}\n\n"));
        s.push_str(&format!("/** Model {c}. */\nexport class Model{c}<T extends Shape{c}> {{\n  private items: T[] = [];\n  constructor(private readonly limit: number, public scale = 1) {{}}\n\n"));
        for k in 0usize..4 {
            s.push_str(&format!(
                "  {w}{k}(values: number[], floor?: number): number {{\n    let total = 0;\n    for (const v of values) {{\n      if (floor !== undefined && v < floor) {{\n        continue;\n      }}\n      total += v * this.scale;\n    }}\n    return helper{k}(total) + this.limit;\n  }}\n\n"
            ));
        }
        s.push_str("  get size(): number {\n    return this.items.length;\n  }\n}\n\n");
    }
    for f in 0usize..6 {
        s.push_str(&format!(
            "export function helper{f}(x: number, opts?: Options): number {{\n  if (x < {}) {{\n    return x;\n  }}\n  const y = Math.floor(x / 2);\n  return y + helper{}(y, opts);\n}}\n\n",
            rng.below(50) + 1,
            f.saturating_sub(1)
        ));
    }
    s.push_str("export const run = (n: number): number[] => {\n  const out: number[] = [];\n  for (let i = 0; i < n; i++) {\n    out.push(helper0(i));\n  }\n  return out;\n};\n");
    s
}

pub fn generate(min_lines: usize) -> Vec<(String, String)> {
    let mut rng = Rng::new(2);
    let mut files = Vec::new();
    let mut lines = 0;
    let mut pkg = 0;
    while lines < min_lines {
        files.push((
            format!("src/pkg{pkg}/types.ts"),
            "export interface Options {\n  verbose?: boolean;\n}\n".to_string(),
        ));
        for m in 0..20 {
            let text = module(&mut rng, m);
            lines += text.lines().count();
            files.push((format!("src/pkg{pkg}/mod{m}.ts"), text));
        }
        pkg += 1;
    }
    files
}
