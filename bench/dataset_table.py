#!/usr/bin/env python3
"""Per-language yield and gold sizes of a `carve dataset run` output folder.

    python3 bench/dataset_table.py DIR

Valid Level 1 tasks / candidates tried (from each repository's result.json; rejections of
Level 2 left out), and the gold lines, files and functions (median/mean/max) of the valid
tasks, per language. `carve dataset summary DIR` gives the same over all languages.
"""
import json, sys, pathlib, statistics as st
root = pathlib.Path(sys.argv[1])
rows = {}
for res in sorted(root.glob('repos/*/*/result.json')):
    r = json.loads(res.read_text())
    lang = r.get('language') or '?'
    tasks = [t for t in r.get('tasks', []) if t['instance_id'].endswith('.lv1')]
    rej = [x for x in r.get('rejected', []) if 'level 2' not in json.dumps(x)]
    d = rows.setdefault(lang, {'repos': 0, 'cands': 0, 'tasks': 0, 'lines': [], 'files': [], 'fns': []})
    d['repos'] += 1
    tried = (r.get('candidates') or {}).get('tried')
    d['cands'] += tried if tried is not None else len(tasks) + len(rej)
    d['tasks'] += len(tasks)
    for t in tasks:
        d['lines'].append(t.get('lines', 0)); d['files'].append(t.get('files', 0)); d['fns'].append(t.get('functions', 0))
def m(v): return f"{st.median(v):.0f}/{st.mean(v):.0f}/{max(v)}" if v else "-"
print("language repos valid/candidates yield  lines med/mean/max  files  functions")
for lang, d in sorted(rows.items()):
    y = d['tasks'] / d['cands'] if d['cands'] else 0
    print(f"{lang:10} {d['repos']:5} {d['tasks']:4}/{d['cands']:<4} {y:5.0%}  {m(d['lines']):18} {m(d['files']):10} {m(d['fns'])}")
