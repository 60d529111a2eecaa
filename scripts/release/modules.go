package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// basePath is the root module's path; a nested module's path is basePath/DIR.
const basePath = "github.com/toolsafe/toolsafe"

// unpublishedDirs hold the modules that are never tagged: the examples and
// the repository's own tools, scripts and benchmarks. Every other module in
// the repository (the root, mcptools, redisstore, and any library module
// added later) is published.
var unpublishedDirs = []string{"examples", "tools", "scripts", "bench"}

// A repoModule is one go.mod of the repository.
type repoModule struct {
	Dir       string // slash-separated, relative to the repository root; "." for the root
	Path      string // the module path
	Published bool
	GoMod     string // absolute path of its go.mod
	File      *modfile.File
}

// Tag is the git tag of this module's version v: "v0.2.0" for the root,
// "mcptools/v0.2.0" for a nested module.
func (m *repoModule) Tag(v string) string {
	if m.Dir == "." {
		return v
	}
	return m.Dir + "/" + v
}

func (m *repoModule) wantPath() string {
	if m.Dir == "." {
		return basePath
	}
	return basePath + "/" + m.Dir
}

func isPublishedDir(dir string) bool {
	for _, u := range unpublishedDirs {
		if dir == u || strings.HasPrefix(dir, u+"/") {
			return false
		}
	}
	return true
}

// discover finds every module of the repository at root: each directory
// with a go.mod, skipping what the go command skips (testdata, vendor and
// names starting with "." or "_").
func discover(root string) ([]*repoModule, error) {
	var mods []*repoModule
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if name != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(p, data, nil)
		if err != nil {
			return err
		}
		if f.Module == nil {
			return fmt.Errorf("%s: no module line", p)
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(rel)
		mods = append(mods, &repoModule{Dir: dir, Path: f.Module.Mod.Path, Published: isPublishedDir(dir), GoMod: p, File: f})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(mods, func(i, j int) bool {
		if (mods[i].Dir == ".") != (mods[j].Dir == ".") {
			return mods[i].Dir == "."
		}
		return mods[i].Dir < mods[j].Dir
	})
	return mods, nil
}

// isReleaseVersion reports whether v can be a tag of these modules: a
// canonical semantic version (a pre-release is fine), not a pseudo-version,
// and v0 or v1, since no module path has a /vN suffix.
func isReleaseVersion(v string) bool {
	if !semver.IsValid(v) || semver.Canonical(v) != v || module.IsPseudoVersion(v) {
		return false
	}
	major := semver.Major(v)
	return major == "v0" || major == "v1"
}

// crossRequirements checks how the modules require each other and returns
// the one version that every requirement on a published in-repo module
// names: the version the modules are to be tagged with. Each problem is a
// sentence saying what is wrong and why it matters.
func crossRequirements(mods []*repoModule) (version string, problems []string) {
	byPath := map[string]*repoModule{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	users := map[string][]string{} // version -> "dir requires path"
	for _, m := range mods {
		if m.Published && m.Path != m.wantPath() {
			problems = append(problems, fmt.Sprintf("%s/go.mod names module %s: a published module in %s must be %s, or its tag %s would not find it",
				m.Dir, m.Path, m.Dir, m.wantPath(), m.Tag("vX.Y.Z")))
		}
		for _, r := range m.File.Require {
			dep, ok := byPath[r.Mod.Path]
			if !ok {
				continue
			}
			if !dep.Published {
				if m.Published {
					problems = append(problems, fmt.Sprintf("%s/go.mod requires %s, which is not published: a user could not fetch it", m.Dir, dep.Path))
				}
				continue
			}
			users[r.Mod.Version] = append(users[r.Mod.Version], m.Dir+" requires "+path.Base(dep.Path))
			if !isReleaseVersion(r.Mod.Version) {
				problems = append(problems, fmt.Sprintf("%s/go.mod requires %s at %s, not a release version: a user's build ignores this module's replace directives and would have to fetch %s@%s, which is never tagged",
					m.Dir, dep.Path, r.Mod.Version, dep.Path, r.Mod.Version))
			}
			if !replacesWithDir(m, dep) {
				want, _ := filepath.Rel(filepath.FromSlash(m.Dir), filepath.FromSlash(dep.Dir))
				problems = append(problems, fmt.Sprintf("%s/go.mod requires %s but has no `replace %s => %s`: inside the repository it would build against the published module, not the working tree",
					m.Dir, dep.Path, dep.Path, filepath.ToSlash(want)))
			}
		}
	}
	var versions []string
	for v := range users {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	switch len(versions) {
	case 0:
		return "", problems
	case 1:
		if isReleaseVersion(versions[0]) {
			return versions[0], problems
		}
		return "", problems
	}
	var b strings.Builder
	for _, v := range versions {
		fmt.Fprintf(&b, "\n    %s: %s", v, strings.Join(users[v], ", "))
	}
	problems = append(problems, "the cross-requirements name different versions; the modules are tagged together, so they must all name the next one (bash scripts/release.sh VERSION sets it):"+b.String())
	return "", problems
}

// replacesWithDir reports whether m replaces dep (every version of it) with
// dep's directory in the repository.
func replacesWithDir(m, dep *repoModule) bool {
	for _, r := range m.File.Replace {
		if r.Old.Path != dep.Path || r.Old.Version != "" || r.New.Version != "" {
			continue
		}
		if path.Clean(path.Join(m.Dir, filepath.ToSlash(r.New.Path))) == dep.Dir {
			return true
		}
	}
	return false
}

func published(mods []*repoModule) (pub, unpub []*repoModule) {
	for _, m := range mods {
		if m.Published {
			pub = append(pub, m)
		} else {
			unpub = append(unpub, m)
		}
	}
	return pub, unpub
}

func dirs(mods []*repoModule) string {
	var s []string
	for _, m := range mods {
		s = append(s, m.Dir)
	}
	return strings.Join(s, ", ")
}

// otelPath is the OpenTelemetry API module; its stable (v1) siblings under
// otelPath/ (trace, metric, sdk, sdk/metric, log from v1.47.0 on, the
// exporters) are released together with it, at one version.
const otelPath = "go.opentelemetry.io/otel"

// otelRequirements checks that every published module requires the
// OpenTelemetry the core (the root module) requires: each of its v1
// OpenTelemetry modules at the core's go.opentelemetry.io/otel version,
// and each OpenTelemetry module the core requires (a v0 one too) at the
// core's version of it. A user's build that imports two modules takes the
// newer of their requirements, so one module at a newer OpenTelemetry
// moves every other to it: redisstore at v1.47.0 pulled in otel/log v1,
// and ADK for Go v2.2.0 (adktools) does not build with it. Each problem is
// a sentence naming the module, the requirement and the core's version.
func otelRequirements(pub []*repoModule) []string {
	var core *repoModule
	for _, m := range pub {
		if m.Dir == "." {
			core = m
		}
	}
	if core == nil {
		return nil
	}
	coreReq := map[string]string{}
	for _, r := range core.File.Require {
		if isOTel(r.Mod.Path) {
			coreReq[r.Mod.Path] = r.Mod.Version
		}
	}
	otel := coreReq[otelPath]
	if otel == "" {
		return nil
	}
	var problems []string
	for _, m := range pub {
		name := m.Dir + "/go.mod"
		if m.Dir == "." {
			name = "go.mod"
		}
		var wrong []string
		for _, r := range m.File.Require {
			p, v := r.Mod.Path, r.Mod.Version
			if !isOTel(p) {
				continue
			}
			want, ok := coreReq[p]
			if !ok && semver.Major(v) == "v1" {
				want, ok = otel, true
			}
			if ok && v != want {
				wrong = append(wrong, fmt.Sprintf("%s %s, not %s", p, v, want))
			}
		}
		if len(wrong) > 0 {
			problems = append(problems, fmt.Sprintf("%s does not require the core's OpenTelemetry %s: it requires %s. Every published module must, or a program importing it beside another builds with the newer one, which that one may not build with (ADK for Go v2.2.0 does not build with otel/log v1): require the core's versions in %s and run go mod tidy there",
				name, otel, strings.Join(wrong, "; "), name))
		}
	}
	return problems
}

// isOTel reports whether p is go.opentelemetry.io/otel or one of the
// modules released with it (not contrib, proto or auto, which have
// versions of their own).
func isOTel(p string) bool { return p == otelPath || strings.HasPrefix(p, otelPath+"/") }
