// Package templatestest holds small projects of each kind the CI
// templates are for, so tests can run a template on a repository of its
// kind: sound, and with one planted failure whose finding the run must
// report as an annotation. The projects need no package registry: none
// has dependencies beyond the toolchain itself.
package templatestest

import "maps"

// Project is a repository's files, the template `init` picks for it, and
// a planted failure.
type Project struct {
	Name     string
	Template string
	Files    map[string]string
	// Tools must be on PATH to run the template; Probe, when set, is a
	// command that must succeed too (a toolchain that is installed but
	// cannot work offline, say).
	Tools []string
	Probe []string
	// Broken replaces files to plant a failure at node FailedNode, with
	// Finding ("path:line") among its findings; "" when the tool's output
	// names no line the findings parser knows.
	Broken     map[string]string
	FailedNode string
	Finding    string
}

// BrokenFiles is Files with Broken applied.
func (p Project) BrokenFiles() map[string]string {
	out := maps.Clone(p.Files)
	maps.Copy(out, p.Broken)
	return out
}

// Projects lists one project per template and, for Node, per lockfile
// kind.
func Projects() []Project {
	return []Project{goProject(), nodeProject("npm-lockfile"), nodeProject("no-lockfile"),
		nodeProject("yarn"), nodeProject("pnpm"), pythonProject(), rustProject(), javaProject(), gradleProject(), genericProject()}
}

// Find is the project called name; it panics when there is none.
func Find(name string) Project {
	for _, p := range Projects() {
		if p.Name == name {
			return p
		}
	}
	panic("templatestest: no project " + name)
}

func goProject() Project {
	const main = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"world\"\n\tfmt.Printf(\"hello, %s\\n\", name)\n}\n"
	return Project{
		Name: "go", Template: "ci-go", Tools: []string{"go"},
		Files: map[string]string{
			"go.mod":        "module example.com/hello\n\ngo 1.22\n",
			"main.go":       main,
			"hello_test.go": "package main\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {}\n",
		},
		Broken:     map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"world\"\n\tfmt.Printf(\"hello, %d\\n\", name)\n}\n"},
		FailedNode: "vet", Finding: "main.go:7",
	}
}
