// Command release keeps toolsafe's modules releasable together. It is a
// module of its own so that golang.org/x/mod stays out of the core's go.mod.
//
//	release set ROOT VERSION
//
// sets VERSION in every go.mod's requirement on a published module of the
// repository at ROOT and prints the tags to push. It uses no network.
//
//	release check ROOT
//
// checks that every published module can be fetched alone at the version
// that the cross-requirements name: it builds each one's module zip from
// the working tree, serves them from a file-system module proxy, and in an
// empty module gets each one alone and builds a program importing its
// packages; then, in one more, gets them all together and builds one
// program importing every package of every published module. It also
// checks that every published module requires the core's OpenTelemetry.
//
//	release readme ROOT
//
// compiles every Go block of ROOT's README.md, each completed by the code
// around it in scripts/release/testdata/readme, in one module that requires
// every published module (see readme.go); its test runs it.
//
// Published are the root module and every nested module outside examples/,
// tools/, scripts/ and bench/; all of them are tagged from one commit
// (v0.2.0, mcptools/v0.2.0, ...).
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/semver"
)

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	root, err := filepath.Abs(os.Args[2])
	if err != nil {
		fail(err)
	}
	switch {
	case os.Args[1] == "set" && len(os.Args) == 4:
		err = set(root, os.Args[3])
	case os.Args[1] == "check" && len(os.Args) == 3:
		err = check(root)
	case os.Args[1] == "readme" && len(os.Args) == 3:
		err = checkREADME(root)
	default:
		usage()
	}
	if err != nil {
		fail(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release set ROOT VERSION | release check ROOT | release readme ROOT")
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(1)
}

// set writes version into every requirement on a published in-repo module
// and prints the tags to push.
func set(root, version string) error {
	if !isReleaseVersion(version) {
		return fmt.Errorf("%q is not a release version (vMAJOR.MINOR.PATCH, major 0 or 1)", version)
	}
	mods, err := discover(root)
	if err != nil {
		return err
	}
	current, _ := crossRequirements(mods)
	if current != "" && semver.Compare(version, current) < 0 {
		return fmt.Errorf("%s is older than %s, the version the go.mod files already name", version, current)
	}
	pub, _ := published(mods)
	isPub := map[string]bool{}
	for _, m := range pub {
		isPub[m.Path] = true
	}
	for _, m := range mods {
		changed := false
		for _, r := range m.File.Require {
			if isPub[r.Mod.Path] && r.Mod.Version != version {
				if err := m.File.AddRequire(r.Mod.Path, version); err != nil {
					return fmt.Errorf("%s: %v", m.GoMod, err)
				}
				changed = true
			}
		}
		if !changed {
			continue
		}
		m.File.Cleanup()
		data, err := m.File.Format()
		if err != nil {
			return fmt.Errorf("%s: %v", m.GoMod, err)
		}
		old, err := os.ReadFile(m.GoMod)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, data) {
			if err := os.WriteFile(m.GoMod, data, 0o644); err != nil {
				return err
			}
			fmt.Printf("set %s in %s/go.mod\n", version, m.Dir)
		}
	}
	// Re-read: what is left wrong (a missing replace, a published module
	// requiring an unpublished one) is not for set to guess at.
	if mods, err = discover(root); err != nil {
		return err
	}
	if _, problems := crossRequirements(mods); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "problem:", p)
		}
		return fmt.Errorf("%d problems left in the go.mod files", len(problems))
	}
	_, unpub := published(mods)
	fmt.Printf("\nPublished modules: %s (not published: %s).\n", dirs(pub), dirs(unpub))
	fmt.Println("Next: run the nested modules' go mod tidy -diff and bash scripts/releasecheck.sh, commit, then tag that one commit and push the tags:")
	var tags []string
	for _, m := range pub {
		fmt.Printf("  git tag %s\n", m.Tag(version))
		tags = append(tags, m.Tag(version))
	}
	fmt.Printf("  git push origin")
	for _, t := range tags {
		fmt.Printf(" %s", t)
	}
	fmt.Println()
	return nil
}
