//! Generated Go repository: packages with imports, structs with methods (pointer and value
//! receivers), interfaces, free functions and doc comments.

use crate::{Rng, WORDS};

fn file(rng: &mut Rng, pkg: usize, m: usize) -> String {
    let mut s =
        format!("// Package pkg{pkg} is generated.\npackage pkg{pkg}\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n");
    for c in 0..6 {
        let w = rng.pick(WORDS);
        s.push_str(&format!("// Model{m}x{c} holds a {w}.\ntype Model{m}x{c} struct {{\n\tName  string\n\tLimit int\n\tScale float64\n}}\n\n"));
        s.push_str(&format!(
            "// Shape{m}x{c} is implemented by Model{m}x{c}.\ntype Shape{m}x{c} interface {{\n\tArea() float64\n}}\n\n"
        ));
        s.push_str(&format!("// NewModel{m}x{c} builds a model.\nfunc NewModel{m}x{c}(name string) *Model{m}x{c} {{\n\treturn &Model{m}x{c}{{Name: strings.TrimSpace(name), Limit: {}}}\n}}\n\n", rng.below(100)));
        for k in 0usize..4 {
            s.push_str(&format!(
                "// {w}{k} sums values.\nfunc (m *Model{m}x{c}) {}{k}(values []int, floor int) int {{\n\ttotal := 0\n\tfor _, v := range values {{\n\t\tif v < floor {{\n\t\t\tcontinue\n\t\t}}\n\t\ttotal += v * m.Limit\n\t}}\n\treturn helper{m}x{k}(total) + m.Limit\n}}\n\n",
                w[..1].to_uppercase() + &w[1..]
            ));
        }
        s.push_str(&format!("func (m Model{m}x{c}) Area() float64 {{\n\treturn m.Scale * m.Scale\n}}\n\n"));
    }
    for f in 0usize..6 {
        s.push_str(&format!(
            "func helper{m}x{f}(x int) int {{\n\tif x < {} {{\n\t\treturn x\n\t}}\n\ty := x / 2\n\treturn y + helper{m}x{}(y)\n}}\n\n",
            rng.below(50) + 1,
            f.saturating_sub(1)
        ));
    }
    s.push_str(&format!("// Run{m} prints the helpers.\nfunc Run{m}(n int) {{\n\tfor i := 0; i < n; i++ {{\n\t\tfmt.Println(helper{m}x0(i))\n\t}}\n}}\n"));
    s
}

pub fn generate(min_lines: usize) -> Vec<(String, String)> {
    let mut rng = Rng::new(3);
    let mut files = vec![("go.mod".to_string(), "module example.com/gen\n\ngo 1.21\n".to_string())];
    let mut lines = 0;
    let mut pkg = 0;
    while lines < min_lines {
        for m in 0..20 {
            let text = file(&mut rng, pkg, m);
            lines += text.lines().count();
            files.push((format!("pkg{pkg}/file{m}.go"), text));
        }
        pkg += 1;
    }
    files
}
