#!/usr/bin/env python3
"""Generate a call-heavy vitest suite (TypeScript) for tracing-overhead benchmarks.

The TypeScript twin of `gen_callheavy.py`: MODULES modules `src/mNN.ts` of small functions
that call each other (a chain of steps, a call into a lower-numbered module, a class with a
method, a static method, a static factory and a getter, and a closure returned by an arrow
function), and 4 tests per module in `tests/mNN.test.ts` (one `test`, two `test.each` rows,
one inside a `describe`). Nearly all of its run time is function calls, the worst case for
the TypeScript shim's probes and its shadow stack.

The constants are the Python suite's (same seed, same draws), and so are the expected
values: they are computed by running the Python suite's generated code, which does the same
integer arithmetic (Python's floored `%` is the TypeScript `mod` helper). Output is
deterministic: the same arguments always write the same bytes.

    python3 bench/gen_callheavy_ts.py OUT_DIR [--modules 50] [--iterations 20000] [--force]
    cd OUT_DIR && npx vitest run

`node_modules` is a hard-linked copy of the ledger fixture's (vitest 2, installed by
scripts/setup; `--node-modules PATH` for another), so the suite needs no download.
With the defaults: 50 modules, 200 tests.
"""

import argparse
import importlib
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_callheavy  # noqa: E402  (the Python suite: its seed, its draws, its code)

LEDGER_MODULES = HERE.parent / "fixtures" / "typescript" / "ledger" / "node_modules"


def module_source(i, partner, c):
    imports = f'import {{ leaf_{partner} }} from "./m{partner:02d}";\n' if partner is not None else ""
    call_partner = f"leaf_{partner}(x ^ {c[2]})" if partner is not None else f"mod(x ^ {c[2]}, 89)"
    return f"""// Generated module {i} (bench/gen_callheavy_ts.py): small functions that call each other.
{imports}
/** Floored remainder, as Python's `%` (the expected values come from the Python suite). */
const mod = (a: number, m: number): number => ((a % m) + m) % m;

export function leaf_{i}(x: number): number {{
  return mod(x * {c[0]} + {c[1]}, 1009);
}}

export function step_{i}_1(x: number): number {{
  return leaf_{i}(x) + {call_partner};
}}

export function step_{i}_2(x: number): number {{
  return step_{i}_1(x + {c[3]}) - leaf_{i}(x);
}}

export function step_{i}_3(x: number): number {{
  const value = step_{i}_2(x);
  if (mod(value, 3) === 0) {{
    return step_{i}_1(mod(value, 997));
  }}
  return value;
}}

/** Folds values into a running checksum. */
export class Acc{i} {{
  private _total: number;
  count = 0;

  constructor(seed = 0) {{
    this._total = seed;
  }}

  add(value: number): this {{
    this._total = Acc{i}.mix(this._total, value);
    this.count += 1;
    return this;
  }}

  static mix(total: number, value: number): number {{
    return mod(total * {c[4]} + value, 1000003);
  }}

  static of(values: Iterable<number>): Acc{i} {{
    const acc = new Acc{i}();
    for (const value of values) {{
      acc.add(leaf_{i}(value));
    }}
    return acc;
  }}

  get total(): number {{
    return this._total;
  }}
}}

export const makeScaler_{i} = (factor: number) => {{
  const scale = (x: number): number => mod(leaf_{i}(x) * factor, 10007);
  return scale;
}};

export function range(n: number): number[] {{
  return Array.from({{ length: n }}, (_, k) => k);
}}

export function run_{i}(n: number, variant = 0): number {{
  const acc = new Acc{i}(variant);
  const scale = makeScaler_{i}(variant + {c[5] % 7 + 2});
  for (let x = 0; x < n; x++) {{
    acc.add(step_{i}_3(x) + scale(x));
  }}
  return acc.total;
}}
"""


def test_source(i, n, expected):
    small, v1, v2, acc = expected
    return f"""import {{ describe, expect, test }} from "vitest";
import {{ Acc{i}, range, run_{i} }} from "../src/m{i:02d}";

test("run_{i}", () => {{
  expect(run_{i}({n})).toBe({small});
}});

test.each([
  [1, {v1}],
  [2, {v2}],
])("run_{i} variant %i", (variant, expected) => {{
  expect(run_{i}({n // 2}, variant)).toBe(expected);
}});

describe("Acc{i}", () => {{
  test("of", () => {{
    const acc = Acc{i}.of(range({n}));
    expect([acc.count, acc.total]).toEqual([{n}, {acc}]);
  }});
}});
"""


def python_expected(modules, iterations):
    """The expected values, from the Python suite generated with the same arguments."""
    with tempfile.TemporaryDirectory(prefix="carve-callheavy-py-") as tmp:
        out = Path(tmp) / "suite"
        gen_callheavy.generate(out, modules, iterations)
        sys.path.insert(0, str(out))
        try:
            values = []
            for i in range(modules):
                mod = importlib.import_module(f"callheavy.m{i:02d}")
                run = getattr(mod, f"run_{i}")
                acc = getattr(mod, f"Acc{i}").of(range(iterations))
                values.append((run(iterations), run(iterations // 2, 1), run(iterations // 2, 2), acc.total))
            return values
        finally:
            sys.path.remove(str(out))
            for name in [m for m in sys.modules if m == "callheavy" or m.startswith("callheavy.")]:
                del sys.modules[name]


def generate(out, modules, iterations, node_modules):
    rng = random.Random(gen_callheavy.SEED)
    (out / "src").mkdir(parents=True)
    (out / "tests").mkdir()
    (out / "package.json").write_text(
        '{\n  "name": "callheavy",\n  "version": "0.0.0",\n  "private": true,\n  "type": "module",\n'
        '  "scripts": { "test": "vitest run" }\n}\n'
    )
    (out / "vitest.config.ts").write_text(
        'import { defineConfig } from "vitest/config";\n\n'
        'export default defineConfig({ test: { include: ["tests/**/*.test.ts"] } });\n'
    )
    (out / "tsconfig.json").write_text(
        '{\n  "compilerOptions": { "target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler",'
        ' "strict": true, "noEmit": true, "skipLibCheck": true, "types": [] },\n'
        '  "include": ["src/**/*.ts", "tests/**/*.ts"]\n}\n'
    )
    for i in range(modules):
        partner = (i * 17 + 5) % i if i else None
        c = [rng.randrange(3, 997) for _ in range(8)]  # the draws of gen_callheavy.module_source
        (out / "src" / f"m{i:02d}.ts").write_text(module_source(i, partner, c))
    for i, expected in enumerate(python_expected(modules, iterations)):
        (out / "tests" / f"m{i:02d}.test.ts").write_text(test_source(i, iterations, expected))
    subprocess.run(["cp", "-al", str(node_modules), str(out / "node_modules")], check=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write the suite into (created)")
    parser.add_argument("--modules", type=int, default=50, help="number of modules (4 tests each; default 50)")
    parser.add_argument("--iterations", type=int, default=20000, help="loop length per test (default 20000)")
    parser.add_argument("--node-modules", type=Path, default=LEDGER_MODULES,
                        help="node_modules with vitest to hard-link (default: the ledger fixture's)")
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    args = parser.parse_args(argv)
    if args.modules < 1 or args.iterations < 2:
        parser.error("--modules must be >= 1 and --iterations >= 2")
    if not (args.node_modules / ".bin" / "vitest").exists():
        parser.error(f"{args.node_modules}/.bin/vitest is missing (run scripts/setup, or pass --node-modules)")
    if args.out.exists():
        if not args.force:
            parser.error(f"{args.out} exists; pass --force to replace it")
        shutil.rmtree(args.out)
    generate(args.out, args.modules, args.iterations, args.node_modules)
    print(f"wrote {args.modules} modules and {args.modules * 4} tests to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
