// Package templates holds the starter pipelines and configuration users
// copy into their repositories. Each template is a directory tree laid out
// as it should sit at the root of a repository (ci-go/.kilroy/ci.dot
// becomes .kilroy/ci.dot); config.yml beside them is a commented
// .kilroy/config.yml showing every section. The files are embedded so the
// binary can hand them out, and tested so that what users copy loads
// without errors or warnings.
package templates

import (
	"embed"
	"io/fs"
	"slices"
)

// files is immutable, so it is safe as package-level state. "all:" keeps
// the .kilroy directories, which a plain directory pattern would skip.
//
//go:embed all:ci-go all:ci-node all:ci-python all:ci-rust all:ci-java all:ci-generic all:agent-fix config.yml
var files embed.FS

// ConfigFile is the path in FS of the sample .kilroy/config.yml.
const ConfigFile = "config.yml"

// FS returns the templates: one directory per template plus ConfigFile.
func FS() fs.FS { return files }

// Names lists the templates, the top-level directories of FS, sorted.
func Names() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic("templates: reading the embedded root: " + err.Error()) // cannot happen: the root is always there
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}
