package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README lists the packages in import order, each importing only
// packages below it (DESIGN §1). The code is held to that list: a package
// that imports one listed above it, or that the list does not name, fails
// here, naming both.
func TestPackagesImportDownward(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool here to list the packages")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "The packages, in import order")
	if !ok {
		t.Fatal("README.md has no list of the packages in import order")
	}
	table, _, _ = strings.Cut(table, "\n\n\n")
	rank := map[string]int{}
	row := 0
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.Contains(cells[1], "`") {
			continue
		}
		for _, f := range strings.Split(cells[1], ",") {
			if name := strings.Trim(strings.TrimSpace(f), "`"); name != "" {
				rank[name] = row
			}
		}
		row++
	}
	const mod = "github.com/kilroy-bot/kilroy-bot/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		if isSupport(pkg) {
			continue
		}
		r, listed := rank[pkg]
		if !listed {
			t.Errorf("package %s is not in README.md's list of packages in import order: add it where it belongs", pkg)
			continue
		}
		for _, imp := range f[1:] {
			dep, ours := strings.CutPrefix(imp, mod)
			if !ours || isSupport(dep) {
				continue
			}
			if d, ok := rank[dep]; ok && d < r {
				t.Errorf("%s imports %s, which README.md lists above it", pkg, dep)
			}
		}
	}
}

// isSupport says whether pkg is test support or a benchmark, which the
// list leaves out.
func isSupport(pkg string) bool {
	for _, p := range []string{"bench/", "deploy", "internal/"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return strings.HasSuffix(pkg, "test")
}
