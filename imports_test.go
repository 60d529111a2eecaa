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

const module = "github.com/toolsafe/toolsafe"

// The packages of the module and which of the module's packages each may
// import: the import graph points one way, from the policies file down
// through the root to middleware, which imports none of its siblings (only
// internal/callkey, the context keys its IdempotencyKey, CallID and
// AttemptNumber read; the errors of toolsafe's layers tell Classify their
// kind themselves, from the packages that make them). approval and run
// import neither each other's internals nor the root, and each keeps its
// own layers (the gate; the run ledger and the loop guard) and their
// errors; the call record and the layers no public package owns are
// internal. The approvals inbox sits on approval alone.
var mayImport = map[string][]string{
	"internal/callkey": {},
	"middleware":       {"internal/callkey"},
	"canonical":        {"middleware"},
	"approval":         {"middleware", "canonical", "internal/call"},
	"internal/call":    {"middleware", "canonical", "internal/callkey"},
	"run":              {"middleware", "canonical", "approval", "internal/call"},
	"internal/layer":   {"middleware", "canonical", "internal/call", "internal/callkey"},
	"policy":           {"middleware", "internal/call", "internal/layer"},
	"fallback":         {"middleware", "approval", "internal/call", "internal/layer"},
	"otelhook":         {"middleware", "canonical", "approval", "run", "policy", "internal/call", "internal/layer", "internal/typednil"},
	"argschema":        {"middleware", "canonical", "internal/call"},
	"inbox":            {"approval"},
	"inbox/webhook":    {"approval", "inbox"},
	".": {"middleware", "canonical", "approval", "run", "policy", "fallback", "otelhook", "argschema",
		"internal/call", "internal/layer", "internal/typednil"},
}

// libraryParts are the internal packages the library's own packages may
// import; unlike the tests' and examples' parts, they import nothing of the
// module.
var libraryParts = []string{"internal/typednil"}

// layerOf says, for a package not in mayImport, what it may import: the
// public packages (any), or it is a program or a test part (examples, cmd,
// bench, scripts, internal, and test, the composed stack's tests), which
// nothing but tests and programs import.
func programOrPart(rel string) bool {
	for _, p := range []string{"examples/", "cmd/", "bench", "scripts/", "internal/", "test/"} {
		if strings.HasPrefix(rel+"/", p) || strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

func TestTheImportGraphPointsOneWay(t *testing.T) {
	imports := map[string][]string{} // package (relative) → module packages it imports
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." {
			base := d.Name()
			if strings.HasPrefix(base, ".") || base == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files
		}
		rel := filepath.ToSlash(path)
		for _, imp := range pkg.Imports {
			if imp == module {
				imports[rel] = append(imports[rel], ".")
			} else if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				imports[rel] = append(imports[rel], r)
			}
		}
		if _, ok := imports[rel]; !ok {
			imports[rel] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, deps := range imports {
		allowed, known := mayImport[pkg]
		for _, dep := range deps {
			switch {
			case programOrPart(dep) && !programOrPart(pkg) && !strings.HasPrefix(dep, "internal/"):
				t.Errorf("%s imports %s: nothing but programs imports a program", pkg, dep)
			case strings.HasPrefix(dep, "examples/") &&
				!(strings.HasPrefix(dep, "examples/internal/") && strings.HasPrefix(pkg, "examples/")):
				t.Errorf("%s imports %s: nothing imports the examples but the examples' own demo services", pkg, dep)
			case known && !slices.Contains(allowed, dep):
				t.Errorf("%s imports %s; it may import only %v", pkg, dep, allowed)
			case slices.Contains(libraryParts, pkg):
				t.Errorf("%s imports %s; a library part imports nothing of the module", pkg, dep)
			case !known && !programOrPart(pkg) && strings.HasPrefix(dep, "internal/") && !slices.Contains(libraryParts, dep):
				t.Errorf("%s, a public package, imports %s", pkg, dep)
			}
		}
		if !known && !programOrPart(pkg) {
			// A public package above the root (the policies file, test
			// kits, adapters) may import the root and everything under it,
			// but nothing imports it from below.
			for lower := range mayImport {
				if slices.Contains(imports[lower], pkg) {
					t.Errorf("%s imports %s, a package above it", lower, pkg)
				}
			}
		}
	}
	if len(imports) < len(mayImport) {
		t.Fatalf("found only %d packages: %v", len(imports), imports)
	}
}
