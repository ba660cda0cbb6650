package policy

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// maxScanDepth is how many directory levels below the root the marker scan
// enters.
const maxScanDepth = 6

// skippedDirs are directories the marker scan never enters: version control
// metadata, installed dependencies, virtualenvs and caches. Their manifests
// describe someone else's code.
func skippedDirs(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules", "bower_components", "vendor",
		".venv", "venv", ".tox", "__pycache__":
		return true
	}
	return false
}

// detectProfiles finds the profiles whose markers occur in fsys and, for
// each, the first marker seen: root files first, then a lexical walk. It
// returns generic when there is none.
func detectProfiles(fsys fs.FS) ([]string, map[string]string, error) {
	markers := map[string]string{}
	note := func(p string, d fs.DirEntry) {
		if d.IsDir() {
			return
		}
		if prof, ok := markerProfile(d.Name()); ok && markers[prof] == "" {
			markers[prof] = p
		}
	}
	root, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("scan repository for profile markers: %w", err)
	}
	for _, d := range root {
		note(d.Name(), d)
	}
	if err := walkMarkers(fsys, markers, note); err != nil {
		return nil, nil, fmt.Errorf("scan repository for profile markers: %w", err)
	}
	if len(markers) == 0 {
		return []string{ProfileGeneric}, nil, nil
	}
	profiles := make([]string, 0, len(markers))
	for p := range markers {
		profiles = append(profiles, p)
	}
	slices.Sort(profiles)
	return profiles, markers, nil
}

// walkMarkers walks the subdirectories of fsys down to maxScanDepth, stopping
// early once every toolchain profile has a marker.
func walkMarkers(fsys fs.FS, markers map[string]string, note func(string, fs.DirEntry)) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		depth := strings.Count(p, "/") + 1
		if d.IsDir() {
			if skippedDirs(d.Name()) || depth > maxScanDepth {
				return fs.SkipDir
			}
			return nil
		}
		if depth > 1 { // root files were seen first
			note(p, d)
		}
		if len(markers) == len(toolchainProfiles()) {
			return fs.SkipAll
		}
		return nil
	})
}
