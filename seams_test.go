package toolsafe_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stillCrossing lists the nested modules (examples aside) that today import
// the core module's internal/ packages, each with the packages it imports.
// The list may only shrink: a new crossing fails the test, and so does an
// entry that no longer crosses, so it is removed when its module is fixed.
var stillCrossing = map[string][]string{
	"redisstore": {"internal/call"}, // bench/fleet learns which attempts are half-open probes
}

// A nested module is built against the core's published API; reaching into
// the core's internal/ ties it to parts that may change without notice.
func TestNoNestedModuleImportsTheCoreInternals(t *testing.T) {
	crossing := map[string][]string{}  // nested module dir → core internal packages
	owner := func(dir string) string { // the nested module a directory belongs to
		for d := dir; d != "." && d != "/"; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.ToSlash(d)
			}
		}
		return ""
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		mod := owner(path)
		if mod == "" || strings.HasPrefix(mod, "examples/") {
			return nil // the core module, or an example
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files
		}
		for _, imp := range slices.Concat(pkg.Imports, pkg.TestImports, pkg.XTestImports) {
			if r, ok := strings.CutPrefix(imp, module+"/internal/"); ok {
				dep := "internal/" + r
				if !slices.Contains(crossing[mod], dep) {
					crossing[mod] = append(crossing[mod], dep)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for mod, deps := range crossing {
		for _, dep := range deps {
			if !slices.Contains(stillCrossing[mod], dep) {
				t.Errorf("nested module %s imports the core's %s; use the core's public API or the module's own fixtures", mod, dep)
			}
		}
	}
	for mod, deps := range stillCrossing {
		for _, dep := range deps {
			if !slices.Contains(crossing[mod], dep) {
				t.Errorf("nested module %s no longer imports the core's %s: remove it from stillCrossing", mod, dep)
			}
		}
	}
}
