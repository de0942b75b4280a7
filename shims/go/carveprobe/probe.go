// Package carveprobe is carve's Go tracing runtime. carve copies it into a shadow copy of
// the module under test (as <module>/internal/carveprobe, next to a generated table.go
// holding the node ids and definition spans) and inserts calls to it into the module's own
// files, on the line of each opening brace so that line numbers do not change:
//
//   - P(n) at the entry of every function, method and function literal (a literal counts
//     as the definition it is written in): records that node n ran in the current test and,
//     on its first hits per test, who called it (from the call stack: the definition whose
//     span holds the caller's line, `<module>PATH` for package-level code, `<external>`
//     for code outside the repository);
//   - T(t, pkg) at the top of every test-file function and literal taking a *testing.T or
//     *testing.F: makes `pkg/t.Name()` the current test until t's cleanup runs (subtests
//     included: a subtest's hits are its own, and its parent's record holds only what the
//     parent ran outside its subtests; carve knows the hierarchy from the ids, so an F2P
//     subtest's code is not kept alive by its parent); Pause/Resume around t.Parallel()
//     hand the process back to the parent;
//   - E(pkg, name) deferred at the top of every example function: pkg/name is current
//     while it runs;
//   - Begin() at the top of TestMain (a generated one when the package has none) and of
//     main(); the function it returns, and Exit (which replaces os.Exit in TestMain),
//     write what is left and the `end` record.
//
// Everything recorded while no test is current (package initialisation, TestMain set-up)
// belongs to the `<import>` pseudo-test. Records follow docs/trace-format.md; one file per
// process, `$CARVE_TRACE_DIR/<pid>-<n>.jsonl`, each record written as it is finished.
// Tracing is off (every probe a no-op check) unless CARVE_TRACE_DIR is set. One current
// test per process: carve runs `go test -p 1 -parallel 1` while tracing.
//
// Written for Go 1.13 and later language versions (no generics), standard library only.
package carveprobe

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

const importTest = "<import>"

// A caller that is not a node: negative codes.
const external = -1

// seen[n] is non-zero once the current test needs nothing more from node n.
var seen [nodeCount]uint32

// P is the entry probe of node n.
func P(n int) {
	if atomic.LoadUint32(&seen[n]) == 0 {
		hit(n)
	}
}

// TB is what T needs of *testing.T and *testing.F.
type TB interface {
	Name() string
	Cleanup(func())
	Failed() bool
	Skipped() bool
}

type record struct {
	id     string
	hits   map[int32]struct{}
	edges  map[[2]int32]struct{}
	dirty  bool
}

func newRecord(id string) *record {
	return &record{id: id, hits: map[int32]struct{}{}, edges: map[[2]int32]struct{}{}}
}

var (
	mu         sync.Mutex
	enabled    bool
	exact      bool
	firstHits  uint32 = 4
	traceDir   string
	role       = "go-test"
	parentTest string
	counts     [nodeCount]uint32
	imports    = newRecord(importTest)
	stack      []*record              // the current test is the last; stack[0] is imports
	open       = map[string]*record{} // tests started and not finished, paused ones included
	finished   = map[string]bool{}
	file       *os.File
	ended      bool
)

func init() {
	traceDir = os.Getenv("CARVE_TRACE_DIR")
	enabled = traceDir != ""
	stack = []*record{imports}
	if !enabled {
		for i := range seen {
			seen[i] = 1
		}
		return
	}
	exact = os.Getenv("CARVE_TRACE_MODE") == "exact"
	if n, err := strconv.Atoi(os.Getenv("CARVE_FIRST_HITS")); err == nil && n >= 1 && n <= 255 {
		firstHits = uint32(n)
	}
	if parent := os.Getenv("CARVE_CURRENT_TEST"); parent != "" {
		role = "subprocess"
		parentTest = parent
	}
}

func hit(n int) {
	caller := callerOf()
	mu.Lock()
	r := stack[len(stack)-1]
	r.hits[int32(n)] = struct{}{}
	r.edges[[2]int32{caller, int32(n)}] = struct{}{}
	r.dirty = true
	if !exact {
		counts[n]++
		if counts[n] >= firstHits {
			atomic.StoreUint32(&seen[n], 1)
		}
	}
	mu.Unlock()
}

// callerOf names the caller of the probed function that called P: the frames above this
// package's own are the probed function, then its caller.
func callerOf() int32 {
	var pcs [16]uintptr
	k := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:k])
	callee := false
	for {
		f, more := frames.Next()
		if f.Function != "" && strings.HasPrefix(f.Function, selfPackage+".") {
			if !more {
				return external
			}
			continue
		}
		if callee {
			return lookup(f.File, f.Line)
		}
		callee = true
		if !more {
			return external
		}
	}
}

// lookup names the code at file:line: the definition whose span holds the line, the
// file's package-level code, or external code.
func lookup(path string, line int) int32 {
	rel, ok := relative(path)
	if !ok {
		return external
	}
	fi, ok := fileIndex[rel]
	if !ok {
		return external
	}
	s := spans[fi]
	// Triples (start, end, node) sorted by start; definitions do not nest in Go.
	i := sort.Search(len(s)/3, func(i int) bool { return s[3*i] > int32(line) }) - 1
	if i >= 0 && s[3*i+1] >= int32(line) {
		return s[3*i+2]
	}
	return int32(-2 - fi)
}

func relative(path string) (string, bool) {
	for _, root := range roots {
		if strings.HasPrefix(path, root+"/") {
			return path[len(root)+1:], true
		}
	}
	// -trimpath: files are named by module path.
	for _, m := range modules {
		if strings.HasPrefix(path, m[0]+"/") {
			rel := path[len(m[0])+1:]
			if m[1] != "" {
				rel = m[1] + "/" + rel
			}
			return rel, true
		}
	}
	return "", false
}

func resetSeen() {
	for i := range seen {
		atomic.StoreUint32(&seen[i], 0)
		counts[i] = 0
	}
}

// T makes pkg/t.Name() the current test until t finishes. A test already started (the
// same t again, or an ancestor passed to a helper) changes nothing.
func T(t TB, pkg string) {
	if !enabled || role == "subprocess" {
		return
	}
	id := pkg + "/" + t.Name()
	mu.Lock()
	defer mu.Unlock()
	if _, ok := open[id]; ok {
		return
	}
	writeImports()
	r := newRecord(id)
	open[id] = r
	stack = append(stack, r)
	switched()
	t.Cleanup(func() { end(t, r) })
}

// E makes pkg/name current for the example function name (an example has no *testing.T
// to mark); the returned function, deferred at the example's entry, ends it when the
// example returns. The record has no outcome: go test decides it afterwards, comparing
// the output.
func E(pkg, name string) func() {
	if !enabled || role == "subprocess" {
		return func() {}
	}
	id := pkg + "/" + name
	mu.Lock()
	defer mu.Unlock()
	if _, ok := open[id]; ok {
		return func() {}
	}
	writeImports()
	r := newRecord(id)
	open[id] = r
	stack = append(stack, r)
	switched()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		remove(r)
		delete(open, id)
		finished[id] = true
		write(testRecord(r, ""))
		switched()
	}
}

// Pause hands the process back to the parent while t waits in t.Parallel().
func Pause(t TB, pkg string) {
	offStack(t, pkg, func(*record) {})
}

// Resume makes t current again when t.Parallel() returns.
func Resume(t TB, pkg string) {
	offStack(t, pkg, func(r *record) {
		writeImports()
		stack = append(stack, r)
	})
}

// offStack takes t's open record off the stack and calls then with it, under the lock,
// before the switch is reported; nothing when t is not traced in this process.
func offStack(t TB, pkg string, then func(r *record)) {
	if !enabled || role == "subprocess" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if r, ok := open[pkg+"/"+t.Name()]; ok {
		remove(r)
		then(r)
		switched()
	}
}

func end(t TB, r *record) {
	outcome := "passed"
	if t.Failed() {
		outcome = "failed"
	} else if t.Skipped() {
		outcome = "skipped"
	}
	mu.Lock()
	defer mu.Unlock()
	remove(r)
	delete(open, r.id)
	finished[r.id] = true
	write(testRecord(r, outcome))
	switched()
}

func remove(r *record) {
	for i := len(stack) - 1; i > 0; i-- {
		if stack[i] == r {
			stack = append(stack[:i], stack[i+1:]...)
			return
		}
	}
}

// switched starts the captures afresh for the new current test and tells subprocesses.
func switched() {
	resetSeen()
	current := ""
	if top := stack[len(stack)-1]; top != imports {
		current = top.id
	}
	os.Setenv("CARVE_CURRENT_TEST", current)
}

// Begin marks the end of initialisation (TestMain, main): a subprocess records under its
// parent's test from here on. The returned function writes what is left.
func Begin() func() {
	if enabled && role == "subprocess" {
		mu.Lock()
		writeImports()
		r := newRecord(parentTest)
		open[parentTest] = r
		stack = append(stack, r)
		switched()
		mu.Unlock()
	}
	return Finish
}

// Exit replaces os.Exit in TestMain: it writes what is left first.
func Exit(exit func(int), code int) {
	Finish()
	exit(code)
}

// Main is the TestMain carve generates for a test package without one.
func Main(m interface{ Run() int }, exit func(int)) {
	done := Begin()
	code := m.Run()
	done()
	exit(code)
}

// Finish writes the records still open and the `end` record. Idempotent.
func Finish() {
	if !enabled {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if ended {
		return
	}
	writeImports()
	ids := make([]string, 0, len(open))
	for id := range open {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		write(testRecord(open[id], ""))
		finished[id] = true
	}
	if role == "subprocess" && parentTest != "" {
		// The parent's test is counted by the parent.
		delete(finished, parentTest)
	}
	write(map[string]interface{}{"kind": "end", "tests": len(finished)})
	ended = true
	if file != nil {
		file.Close()
	}
}

func writeImports() {
	if imports.dirty {
		write(testRecord(imports, ""))
		imports.hits = map[int32]struct{}{}
		imports.edges = map[[2]int32]struct{}{}
		imports.dirty = false
	}
}

func name(code int32) string {
	switch {
	case code >= 0:
		return nodeIDs[code]
	case code == external:
		return "<external>"
	default:
		return "<module>" + fileNames[-2-code]
	}
}

type testLine struct {
	Kind    string      `json:"kind"`
	Test    string      `json:"test"`
	Hits    []string    `json:"hits"`
	Edges   [][2]string `json:"edges"`
	Outcome string      `json:"outcome,omitempty"`
}

func testRecord(r *record, outcome string) interface{} {
	hits := make([]string, 0, len(r.hits))
	for n := range r.hits {
		hits = append(hits, nodeIDs[n])
	}
	sort.Strings(hits)
	edges := make([][2]string, 0, len(r.edges))
	for e := range r.edges {
		edges = append(edges, [2]string{name(e[0]), name(e[1])})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i][0] != edges[j][0] {
			return edges[i][0] < edges[j][0]
		}
		return edges[i][1] < edges[j][1]
	})
	return testLine{Kind: "test", Test: r.id, Hits: hits, Edges: edges, Outcome: outcome}
}

// write appends one record, creating the file (and writing its header) first.
func write(rec interface{}) {
	if file == nil && !openFile() {
		return
	}
	file.Write(encode(rec))
}

// encode is one JSON line, `<` and `>` (in `<import>`, `<module>`) as they are.
func encode(rec interface{}) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(rec) != nil {
		return nil
	}
	return buf.Bytes()
}

func openFile() bool {
	if err := os.MkdirAll(traceDir, 0755); err != nil {
		return false
	}
	pid := os.Getpid()
	for n := 0; ; n++ {
		path := filepath.Join(traceDir, strconv.Itoa(pid)+"-"+strconv.Itoa(n)+".jsonl")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0644)
		if err == nil {
			file = f
			break
		}
		if !os.IsExist(err) {
			return false
		}
	}
	mode := "first-hits"
	if exact {
		mode = "exact"
	}
	header := map[string]interface{}{
		"kind": "header", "version": 1, "pid": pid, "go": runtime.Version(), "native": true,
		"mode": mode, "first_hits": firstHits, "role": role, "argv": os.Args, "root": roots[0],
	}
	if parentTest != "" {
		header["parent_test"] = parentTest
	}
	file.Write(encode(header))
	return true
}
